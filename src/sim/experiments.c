/* experiments.c — the named experiments of `convgpu sim --experiment NAME`, one row each: a
 * preset of the simulator's options (parsed before the user's own, so `--seeds 6` or `--svg DIR`
 * beside it win) and, where the per-run CSV is not the point, a report turning the aggregated
 * points into its own CSV. `--experiment list` prints this table. To add one, add a row (and,
 * if it needs one, a report function here). */
#include <math.h>
#include <string.h>

#include "sim.h"

/* The point of `policy` at `containers`, or NULL. */
static const sim_point *point(const sim_point *pts, size_t npts, cg_resume_policy policy,
                              unsigned containers)
{
    for (size_t i = 0; i < npts; i++)
        if (pts[i].policy == policy && pts[i].containers == containers)
            return &pts[i];
    return NULL;
}

/* Issue 21's challenge: does aging-fit finish no later than Best-Fit and keep the average
 * suspended time at or below FIFO's, at every N? One row per N, then a `worst` row with the
 * largest ratios and whether every N met both. */
static int report_challenge(const sim_point *pts, size_t npts, FILE *out)
{
    double worst_fin = 0, worst_susp = 0;
    bool all = true;
    unsigned rows = 0;
    /* Check before printing, so a failure leaves nothing on stdout. */
    for (size_t i = 0; i < npts; i++) {
        if (pts[i].policy != CG_RESUME_AGING_FIT)
            continue;
        if (!point(pts, npts, CG_RESUME_BEST_FIT, pts[i].containers) ||
            !point(pts, npts, CG_RESUME_FIFO, pts[i].containers))
            return -1;
        rows++;
    }
    if (rows == 0)
        return -1;
    fprintf(out, "containers,finished_best_fit_s,finished_aging_fit_s,finished_ratio,"
                 "suspended_fifo_s,suspended_aging_fit_s,suspended_ratio,meets\n");
    for (size_t i = 0; i < npts; i++) {
        if (pts[i].policy != CG_RESUME_AGING_FIT)
            continue;
        unsigned n = pts[i].containers;
        const sim_point *bf = point(pts, npts, CG_RESUME_BEST_FIT, n);
        const sim_point *fifo = point(pts, npts, CG_RESUME_FIFO, n);
        double rf = pts[i].finished / bf->finished;
        double rs = fifo->avg_suspended > 0 ? pts[i].avg_suspended / fifo->avg_suspended
                                            : (pts[i].avg_suspended > 0 ? INFINITY : 1.0);
        bool meets = pts[i].finished <= bf->finished && pts[i].avg_suspended <= fifo->avg_suspended;
        all = all && meets;
        worst_fin = fmax(worst_fin, rf);
        worst_susp = fmax(worst_susp, rs);
        fprintf(out, "%u,%.3f,%.3f,%.4f,%.3f,%.3f,%.4f,%s\n", n, bf->finished, pts[i].finished, rf,
                fifo->avg_suspended, pts[i].avg_suspended, rs, meets ? "yes" : "no");
    }
    fprintf(out, "worst,,,%.4f,,,%.4f,%s\n", worst_fin, worst_susp, all ? "yes" : "no");
    return 0;
}

static const char *const paper_args[] = {"--workload", "paper", "--policy", "all",
                                         "--containers", "4..38", "--seeds", "30", NULL};
static const char *const challenge_args[] = {"--workload", "paper", "--policy",
                                             "fifo,best-fit,aging-fit", "--containers",
                                             "18..38", "--seeds", "100", NULL};

static const char *const fig18_args[] = {"--workload", "alexnet", "--policy", "fifo",
                                         "--urgent-every", "3", "--seeds", "1", NULL};
static const char *const fig18_swap_args[] = {"--workload", "alexnet", "--policy", "fifo",
                                              "--urgent-every", "3", "--seeds", "1",
                                              "--swap-limit", "64GiB", NULL};

const sim_experiment sim_experiments[] = {
    {"convgpu-paper",
     "the ConVGPU paper's Tables IV/V sweep: every policy, N = 4..38, 30 seeds (per-run CSV)",
     paper_args, NULL},
    {"challenge",
     "issue 21: aging-fit against Best-Fit's finished and FIFO's suspended time, N = 18..38",
     challenge_args, report_challenge},
    {"fig18",
     "issue 20, seed 001's Figure 18 setting: CNN containers every 5 s, every 3rd urgent, "
     "suspend only",
     fig18_args, NULL},
    {"fig18-swap", "the same with swap: urgent containers move lower-priority ones out",
     fig18_swap_args, NULL},
};

const size_t sim_nexperiments = sizeof sim_experiments / sizeof *sim_experiments;

const sim_experiment *sim_experiment_find(const char *name)
{
    for (size_t i = 0; name && i < sim_nexperiments; i++)
        if (strcmp(name, sim_experiments[i].name) == 0)
            return &sim_experiments[i];
    return NULL;
}

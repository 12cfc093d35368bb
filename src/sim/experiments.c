/* experiments.c — the named experiments of `convgpu sim --experiment NAME`, one row each: a
 * preset of the simulator's options (parsed before the user's own, so `--seeds 6` or `--svg DIR`
 * beside it win) and, where the per-run CSV is not the point, a report turning the aggregated
 * points into its own CSV. `--experiment list` prints this table. To add one, add a row (and,
 * if it needs one, a report function here). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "oversub.h"
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

/* ---- seed 001's Figures 15 and 16 -------------------------------------------------------- */

/* The point of (workload, share), the first when several policies ran, or NULL. */
static const sim_point *cond(const sim_point *pts, size_t npts, sim_workload w, sim_share sh)
{
    for (size_t i = 0; i < npts; i++)
        if (pts[i].workload == w && pts[i].share == sh)
            return &pts[i];
    return NULL;
}

/* The workloads of the points in order (at most SIM_WORKLOAD__COUNT), each with the three
 * conditions the paper compares; 0 when one lacks them. */
static size_t fig_workloads(const sim_point *pts, size_t npts, sim_workload *ws)
{
    size_t n = 0;
    for (unsigned w = 0; w < SIM_WORKLOAD__COUNT; w++) {
        if (!cond(pts, npts, (sim_workload)w, SIM_SHARE_DEFAULT) &&
            !cond(pts, npts, (sim_workload)w, SIM_SHARE_STATIC) &&
            !cond(pts, npts, (sim_workload)w, SIM_SHARE_ADAPTIVE))
            continue;
        if (!cond(pts, npts, (sim_workload)w, SIM_SHARE_DEFAULT) ||
            !cond(pts, npts, (sim_workload)w, SIM_SHARE_STATIC) ||
            !cond(pts, npts, (sim_workload)w, SIM_SHARE_ADAPTIVE))
            return 0;
        ws[n++] = (sim_workload)w;
    }
    return n;
}

/* The paper's row for a workload: 0 homogeneous, 1 heterogeneous, -1 none. */
static int paper_row(sim_workload w)
{
    return w == SIM_HOMOGENEOUS ? 0 : w == SIM_HETEROGENEOUS ? 1 : -1;
}

/* ",v" with `digits` decimals, or "," alone where there is no value (v < 0). */
static void cell(FILE *out, double v, int digits)
{
    fputc(',', out);
    if (v >= 0 && isfinite(v))
        fprintf(out, "%.*f", digits, v);
}

/* Figure 15: makespan (the last job's end, all jobs arriving from 0) per workload and
 * condition, its ratio to default's and static's, the paper's where it gives them. */
static int report_fig15(const sim_point *pts, size_t npts, FILE *out)
{
    sim_workload ws[SIM_WORKLOAD__COUNT];
    size_t nw = fig_workloads(pts, npts, ws);
    if (nw == 0)
        return -1;
    fprintf(out, "workload,condition,makespan_s,paper_makespan_s,vs_default,vs_static,"
                 "paper_vs_static,avg_turnaround_s\n");
    for (size_t i = 0; i < nw; i++) {
        const sim_point *def = cond(pts, npts, ws[i], SIM_SHARE_DEFAULT);
        const sim_point *st = cond(pts, npts, ws[i], SIM_SHARE_STATIC);
        int row = paper_row(ws[i]);
        for (unsigned sh = 0; sh < SIM_SHARE__COUNT; sh++) {
            const sim_point *q = cond(pts, npts, ws[i], (sim_share)sh);
            if (!q)
                continue;
            double paper = row >= 0 ? sim_fig15_makespan[row][sh] : -1;
            double paper_st = row >= 0 ? sim_fig15_makespan[row][SIM_SHARE_STATIC] : -1;
            fprintf(out, "%s,%s,%.1f", sim_workload_name(ws[i]), sim_share_name((sim_share)sh),
                    q->finished);
            cell(out, paper, 0);
            cell(out, q->finished / def->finished, 4);
            cell(out, q->finished / st->finished, 4);
            cell(out, paper >= 0 && paper_st > 0 ? paper / paper_st : -1, 4);
            fprintf(out, ",%.1f\n", q->avg_turnaround);
        }
    }
    return 0;
}

/* Figure 16: GPU-memory utilisation (the time-average of the jobs' footprints over the
 * capacity), and how far adaptive's exceeds each condition's, beside the paper's. */
static int report_fig16(const sim_point *pts, size_t npts, FILE *out)
{
    sim_workload ws[SIM_WORKLOAD__COUNT];
    size_t nw = fig_workloads(pts, npts, ws);
    if (nw == 0)
        return -1;
    fprintf(out, "workload,condition,mem_util,adaptive_over,paper_adaptive_over,fair_updates\n");
    for (size_t i = 0; i < nw; i++) {
        const sim_point *ad = cond(pts, npts, ws[i], SIM_SHARE_ADAPTIVE);
        int row = paper_row(ws[i]);
        for (unsigned sh = 0; sh < SIM_SHARE__COUNT; sh++) {
            const sim_point *q = cond(pts, npts, ws[i], (sim_share)sh);
            if (!q)
                continue;
            fprintf(out, "%s,%s,%.4f", sim_workload_name(ws[i]), sim_share_name((sim_share)sh),
                    q->mem_footprint);
            cell(out, q->mem_footprint > 0 ? ad->mem_footprint / q->mem_footprint : -1, 4);
            cell(out, row >= 0 ? sim_fig16_adaptive_over[row][sh] : -1, 4);
            fprintf(out, ",%.1f\n", q->fair_updates);
        }
    }
    return 0;
}

/* Bars of one figure: absolute (ours alone) and relative to a reference condition (beside
 * the paper's ratios). fig: 15 or 16. */
static int plot_fig(const sim_point *pts, size_t npts, const char *dir, int fig)
{
    sim_workload ws[SIM_WORKLOAD__COUNT];
    size_t nw = fig_workloads(pts, npts, ws), ns = 0;
    const char *groups[SIM_WORKLOAD__COUNT], *series[SIM_SHARE__COUNT];
    sim_share shs[SIM_SHARE__COUNT];
    if (nw == 0) {
        errno = EINVAL;
        return -1;
    }
    for (unsigned sh = 0; sh < SIM_SHARE__COUNT; sh++)
        if (cond(pts, npts, ws[0], (sim_share)sh)) {
            shs[ns] = (sim_share)sh;
            series[ns++] = sim_share_name((sim_share)sh);
        }
    double abs_v[SIM_WORKLOAD__COUNT * SIM_SHARE__COUNT], rel[SIM_WORKLOAD__COUNT * SIM_SHARE__COUNT],
        paper[SIM_WORKLOAD__COUNT * SIM_SHARE__COUNT];
    sim_share ref = fig == 15 ? SIM_SHARE_STATIC : SIM_SHARE_ADAPTIVE;
    for (size_t g = 0; g < nw; g++) {
        groups[g] = sim_workload_name(ws[g]);
        int row = paper_row(ws[g]);
        const sim_point *r = cond(pts, npts, ws[g], ref);
        for (size_t k = 0; k < ns; k++) {
            const sim_point *q = cond(pts, npts, ws[g], shs[k]);
            double v = !q ? 0 : fig == 15 ? q->finished : 100 * q->mem_footprint;
            double rv = fig == 15 ? r->finished : 100 * r->mem_footprint;
            abs_v[g * ns + k] = v;
            rel[g * ns + k] = rv > 0 ? v / rv : 0;
            double p = -1;
            if (row >= 0 && fig == 15 && sim_fig15_makespan[row][shs[k]] >= 0)
                p = sim_fig15_makespan[row][shs[k]] / sim_fig15_makespan[row][ref];
            else if (row >= 0 && fig == 16 && sim_fig16_adaptive_over[row][shs[k]] > 0)
                p = 1 / sim_fig16_adaptive_over[row][shs[k]];
            paper[g * ns + k] = p;
        }
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/fig%d.svg", dir, fig);
    if (sim_svg_bars(path, fig == 15 ? "Makespan (seed 001, Figure 15)"
                                     : "GPU-memory utilisation (seed 001, Figure 16)",
                     fig == 15 ? "Makespan (s)" : "Footprint / capacity (%)", nw, groups, ns,
                     series, abs_v, NULL) != 0)
        return -1;
    snprintf(path, sizeof path, "%s/fig%d-relative.svg", dir, fig);
    return sim_svg_bars(path, fig == 15 ? "Makespan / static fair share's"
                                        : "Memory utilisation / adaptive's",
                        fig == 15 ? "Ratio to static" : "Ratio to adaptive", nw, groups, ns,
                        series, rel, paper);
}

static int plot_fig15(const sim_point *pts, size_t npts, const char *dir)
{
    return plot_fig(pts, npts, dir, 15);
}

static int plot_fig16(const sim_point *pts, size_t npts, const char *dir)
{
    return plot_fig(pts, npts, dir, 16);
}

static const char *const paper_args[] = {"--workload", "paper", "--policy", "all",
                                         "--containers", "4..38", "--seeds", "30", NULL};
static const char *const challenge_args[] = {"--workload", "paper", "--policy",
                                             "fifo,best-fit,aging-fit", "--containers",
                                             "18..38", "--seeds", "100", NULL};

static const char *const fig1516_args[] = {"--workload", "homogeneous,heterogeneous",
                                           "--fair-share", "all", "--policy", "fifo",
                                           "--containers", "40", "--seeds", "8", NULL};

static const char *const fig18_args[] = {"--workload", "alexnet", "--policy", "fifo",
                                         "--urgent-every", "3", "--seeds", "1", NULL};
static const char *const fig18_swap_args[] = {"--workload", "alexnet", "--policy", "fifo",
                                              "--urgent-every", "3", "--seeds", "1",
                                              "--swap-limit", "64GiB", NULL};

/* A swap budget (2 GiB) below one victim's 2.6 GiB: swap alone cannot preempt; a checkpoint
 * (outside the budget) can. */
static const char *const fig18_budget_args[] = {"--workload", "alexnet", "--policy", "fifo",
                                                "--urgent-every", "3", "--seeds", "1",
                                                "--swap-limit", "2GiB", NULL};
static const char *const fig18_ckpt_args[] = {"--workload", "alexnet", "--policy", "fifo",
                                              "--urgent-every", "3", "--seeds", "1",
                                              "--swap-limit", "2GiB", "--auto-pause", "yes",
                                              NULL};

/* Experiments with an engine of their own take only their own options (exp_opts.c). */
static const char *const no_args[] = {NULL};

const sim_experiment sim_experiments[] = {
    {"convgpu-paper",
     "the ConVGPU paper's Tables IV/V sweep: every policy, N = 4..38, 30 seeds (per-run CSV)",
     paper_args, NULL, NULL, NULL},
    {"challenge",
     "issue 21: aging-fit against Best-Fit's finished and FIFO's suspended time, N = 18..38",
     challenge_args, report_challenge, NULL, NULL},
    {"fig18",
     "issue 20, seed 001's Figure 18 setting: CNN containers every 5 s, every 3rd urgent, "
     "suspend only",
     fig18_args, NULL, NULL, NULL},
    {"fig18-swap", "the same with swap: urgent containers move lower-priority ones out",
     fig18_swap_args, NULL, NULL, NULL},
    {"fig18-budget",
     "issue 38 item 3: fig18-swap with a 2 GiB swap budget, below one victim: swap only",
     fig18_budget_args, NULL, NULL, NULL},
    {"fig18-checkpoint",
     "issue 38 item 3: fig18-budget with the scheduler's choice of back end (a victim swap "
     "cannot move is checkpointed whole, context included, outside the budget)",
     fig18_ckpt_args, NULL, NULL, NULL},
    {"fig15",
     "issue 21, seed 001's Figure 15: makespan under default, none, static and adaptive fair "
     "share, homogeneous and heterogeneous workloads of its application profiles",
     fig1516_args, report_fig15, plot_fig15, NULL},
    {"fig16", "seed 001's Figure 16: GPU-memory utilisation on the same runs", fig1516_args,
     report_fig16, plot_fig16, NULL},
    {"coexec-table4",
     "issue 22, seed 003's Table 4: 2 x LAMMPS, GROMACS, TensorFlow, QMCPACK on 4 x 12 GB, "
     "placed by binpack, standalone, load-balance; utilisation interference; paper beside ours",
     no_args, NULL, NULL, sim_coexec_main},
    {"gsaas-partitions",
     "issue 22, seed 002's Table 3 and Figure 13: a Lublin-Feitelson-like workload on 4 x 8 GB "
     "cut 4x8/8x4/16x2/32x1 GB, gang-started jobs, sharing factors 1X/1.5X/2X",
     no_args, NULL, NULL, sim_part_main},
    {"oversub",
     "issue 37: 64 nodes x 8 GPUs, requests above peaks, promised memory x 1/1.5/2/adaptive, "
     "with and without stepping aside; jobs/h, JCT, utilisation, swap, OOM kills",
     no_args, NULL, NULL, sim_ov_main},
};

const size_t sim_nexperiments = sizeof sim_experiments / sizeof *sim_experiments;

const sim_experiment *sim_experiment_find(const char *name)
{
    for (size_t i = 0; name && i < sim_nexperiments; i++)
        if (strcmp(name, sim_experiments[i].name) == 0)
            return &sim_experiments[i];
    return NULL;
}

/* coexec.c — seed 003's Table 4 on our core: two containers of each of its Table 3
 * applications (LAMMPS 8.3 GB / 23%, GROMACS 0.6 GB / 71%, TensorFlow 3.5 GB / 88%, QMCPACK
 * 5.3 GB / 46.7%) on four 12 GB Titan Xp, all started together, placed by the real core.
 *
 * Order of submission (placement sees one container at a time): load-balance takes the busiest
 * application first (the paper: "from the largest average GPU utilisation"), binpack the largest
 * memory first (the paper: "from the largest memory requirement"); the paper does not say for
 * standalone, and we submit largest memory first as for binpack. Every container asks for its
 * whole memory at start and must be granted at once (the placements all fit).
 *
 * Interference model: on one GPU the running containers' utilisations (each alone, Table 3) add
 * up to U. Up to U = 100% they do not slow each other (the GPU had idle time enough for all);
 * above, the GPU is a processor-sharing server that gives each the same fraction 100/U of the
 * time it asked for, so each progresses at 100/U of its solo speed. When one ends, U drops and
 * the others speed up. That is all the model knows: memory bandwidth, caches, PCIe and the
 * host's six CPU cores, which seed 003 names as the reason utilisation alone cannot predict
 * its results, are not modelled.
 *
 * Solo times: the paper measures none for this input (Section IV.2's 716 s GROMACS alone is a
 * different run: Table 4's GROMACS never takes less than 2072 s). So they are calibrated on the
 * paper's own runs where the model predicts no slowdown: the mean of each application's two
 * standalone times for LAMMPS (with GROMACS, U = 94%), GROMACS (with LAMMPS) and QMCPACK (with
 * QMCPACK, U = 93.4%); TensorFlow never runs below U = 100% in the paper, so its four runs
 * beside LAMMPS (U = 111%) are scaled by 100/111. The standalone row therefore matches the
 * paper's by construction; binpack and load-balance are predictions. */
#include <math.h>
#include <string.h>

#include "sim.h"

#define GB 1000000000.0

const sim_coexec_app sim_coexec_apps[SIM_COEXEC_APPS] = {
    {"LAMMPS", 'L', 8.3, 23.0, (3067.0 + 3009.0) / 2},
    {"GROMACS", 'G', 0.6, 71.0, (2072.0 + 2089.0) / 2},
    {"TensorFlow", 'T', 3.5, 88.0, (85.0 + 85.0 + 83.0 + 83.0) / 4 * 100.0 / 111.0},
    {"QMCPACK", 'Q', 5.3, 46.7, (854.0 + 802.0) / 2},
};

const cg_placement_policy sim_coexec_policies[SIM_COEXEC_POLICIES] = {
    CG_PLACE_BINPACK, CG_PLACE_STANDALONE, CG_PLACE_LOAD_BALANCE};

const double sim_table4_paper[SIM_COEXEC_POLICIES][SIM_COEXEC_JOBS + 1] = {
    {3450, 3449, 2490, 2824, 85, 85, 703, 1294, 3450},
    {3067, 3009, 2072, 2089, 147, 148, 854, 802, 3067},
    {3105, 3111, 2185, 2185, 83, 83, 905, 801, 3111},
};

/* The application key the daemon would hash from a profile key: FNV-1a of the name. */
static uint64_t app_key(const char *name)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *name; name++)
        h = (h ^ (unsigned char)*name) * 0x100000001b3ull;
    return h ? h : 1;
}

static cg_time ns(double t) { return (cg_time)llround(t * 1e9); }

/* Submission order for a placement: indices into the apps, each twice. */
static void submission_order(cg_placement_policy pl, unsigned order[SIM_COEXEC_JOBS])
{
    unsigned idx[SIM_COEXEC_APPS];
    for (unsigned a = 0; a < SIM_COEXEC_APPS; a++)
        idx[a] = a;
    /* Insertion sort, stable: by utilisation for load-balance, else by memory, descending. */
    for (unsigned i = 1; i < SIM_COEXEC_APPS; i++)
        for (unsigned j = i; j > 0; j--) {
            const sim_coexec_app *x = &sim_coexec_apps[idx[j]], *y = &sim_coexec_apps[idx[j - 1]];
            double kx = pl == CG_PLACE_LOAD_BALANCE ? x->util_pct : x->mem_gb;
            double ky = pl == CG_PLACE_LOAD_BALANCE ? y->util_pct : y->mem_gb;
            if (kx <= ky)
                break;
            unsigned t = idx[j];
            idx[j] = idx[j - 1];
            idx[j - 1] = t;
        }
    for (unsigned a = 0; a < SIM_COEXEC_APPS; a++)
        order[2 * a] = order[2 * a + 1] = idx[a];
}

int sim_coexec_run(cg_placement_policy placement, bool check, sim_coexec_result *out)
{
    *out = (sim_coexec_result){0};
    cg_config cfg = {.resume = CG_RESUME_FIFO, .placement = placement};
    cg_core *core = cg_core_new(&cfg);
    cg_cid cid[SIM_COEXEC_JOBS];
    double remaining[SIM_COEXEC_JOBS];
    bool running[SIM_COEXEC_JOBS] = {false};
    unsigned order[SIM_COEXEC_JOBS], copies[SIM_COEXEC_APPS] = {0};
    int rv = -1;
    if (!core)
        return -1;
    for (unsigned g = 0; g < 4; g++)
        if (cg_device_add(core, (cg_bytes)(12 * GB), 0, 0, NULL) != CG_OK)
            goto out;
    submission_order(placement, order);
    for (unsigned k = 0; k < SIM_COEXEC_JOBS; k++) {
        const sim_coexec_app *a = &sim_coexec_apps[order[k]];
        unsigned j = 2 * order[k] + copies[order[k]]++;   /* column: L1 L2 G1 ... */
        cg_bytes mem = (cg_bytes)llround(a->mem_gb * GB);
        cg_container_spec spec = {.device = -1, .limit = mem,
                                  .util_pct = (unsigned)lround(a->util_pct),
                                  .app = app_key(a->name)};
        cg_container_info ci;
        cg_outcome o;
        if (cg_container_create_spec(core, &spec, 0, &cid[j]) != CG_OK ||
            cg_container_get(core, cid[j], 0, &ci) != CG_OK ||
            cg_request(core, cid[j], j + 1, j + 1, mem, 0, &o) != CG_OK || o != CG_GRANTED)
            goto out;
        out->job[j] = (sim_coexec_job){.app = order[k], .copy = copies[order[k]],
                                       .device = ci.device};
        remaining[j] = a->solo_s;
        running[j] = true;
        if (check && (out->violation = cg_core_check(core)) != NULL)
            goto out;
    }
    double t = 0;
    for (unsigned left = SIM_COEXEC_JOBS; left > 0; left--) {
        double util[4] = {0}, rate[SIM_COEXEC_JOBS];
        for (unsigned j = 0; j < SIM_COEXEC_JOBS; j++)
            if (running[j])
                util[out->job[j].device] += sim_coexec_apps[out->job[j].app].util_pct;
        unsigned next = SIM_COEXEC_JOBS;
        for (unsigned j = 0; j < SIM_COEXEC_JOBS; j++) {
            if (!running[j])
                continue;
            double u = util[out->job[j].device];
            rate[j] = u > 100 ? 100 / u : 1;
            if (next == SIM_COEXEC_JOBS || remaining[j] / rate[j] < remaining[next] / rate[next])
                next = j;
        }
        double dt = remaining[next] / rate[next];
        for (unsigned j = 0; j < SIM_COEXEC_JOBS; j++)
            if (running[j])
                remaining[j] = fmax(0, remaining[j] - rate[j] * dt);
        t += dt;
        running[next] = false;
        out->job[next].finished = t;
        cg_bytes mem = (cg_bytes)llround(sim_coexec_apps[out->job[next].app].mem_gb * GB);
        if (cg_release(core, cid[next], next + 1, mem, ns(t)) != CG_OK ||
            cg_process_exit(core, cid[next], next + 1, ns(t)) != CG_OK ||
            cg_container_remove(core, cid[next], ns(t)) != CG_OK)
            goto out;
        if (check && (out->violation = cg_core_check(core)) != NULL)
            goto out;
        out->sum += t;
    }
    out->makespan = t;
    rv = 0;
out:
    cg_core_free(core);
    return rv;
}

/* bench_core.c — benchmarks of the scheduling core and the simulator (not tests; numbers go to
 * docs/BENCHMARKS.md):
 *   1. the paper experiment: 18 sizes x 4 paper policies x 6 seeds (and with aging-fit);
 *   2. 1,000,000 random events over 10,000 live containers, per resume policy;
 *   3. the core's memory per container and per process;
 *   4. the device plugin's preferred allocation (cg_units_prefer) on a node of 8 GPUs x 320
 *      memory units (80 GiB in 256 MiB units), 40 units taken on four of them, IDs shuffled. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "core.h"
#include "sim.h"
#include "units.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint64_t rs = 88172645463325252ull;
static uint64_t rnd(void)
{
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return rs;
}

static int paper_experiment(unsigned npolicies)
{
    double t0 = now_s();
    unsigned runs = 0;
    for (unsigned p = 0; p < npolicies; p++)
        for (unsigned n = 4; n <= 38; n += 2)
            for (unsigned s = 1; s <= 6; s++) {
                sim_params sp = {.workload = SIM_PAPER, .policy = (cg_resume_policy)p,
                                 .placement = CG_PLACE_FIRST_FIT, .ngpus = 1,
                                 .gpu_total = 5 * SIM_GIB, .context = 66 * SIM_MIB, .ps_k = 3.0,
                                 .containers = n, .seed = s, .runtime = SIM_RUNTIME_LINEAR};
                sim_result r;
                if (sim_run(&sp, &r) != 0)
                    return 1;
                runs++;
            }
    printf("paper experiment: %u runs (%u policies x 18 sizes x 6 seeds) in %.3f s\n", runs,
           npolicies, now_s() - t0);
    return 0;
}

/* Keeps `live` containers on 8 devices; each event is a request, a free, a process exit, or a
 * removal followed by a creation. */
static int event_storm(cg_resume_policy policy, unsigned live, unsigned long events)
{
    cg_config cfg = {.resume = policy, .placement = CG_PLACE_LEAST_LOADED, .seed = 1};
    cg_core *core = cg_core_new(&cfg);
    const unsigned ndev = 8;
    for (unsigned i = 0; i < ndev; i++)
        cg_device_add(core, 80ull << 30, 0, 66ull << 20, NULL);
    cg_cid *ids = malloc(live * sizeof *ids);
    for (unsigned i = 0; i < live; i++)
        if (cg_container_create(core, -1, (64 + rnd() % 4032) << 20, 0, &ids[i]) != CG_OK)
            return 1;
    unsigned long suspends = 0;
    double t0 = now_s();
    for (unsigned long e = 0; e < events; e++) {
        unsigned i = (unsigned)(rnd() % live);
        cg_cid c = ids[i];
        cg_pid pid = 1 + rnd() % 2;
        unsigned op = (unsigned)(rnd() % 100);
        cg_time t = e * 1000;
        if (op < 50) {
            cg_outcome o;
            cg_request(core, c, pid, e + 1, (1 + rnd() % 512) << 20, t, &o);
            suspends += o == CG_SUSPENDED;
        } else if (op < 80) {
            cg_process_info pi[4];
            size_t np = cg_container_processes(core, c, pi, 4);
            if (np && pi[0].used)
                cg_release(core, c, pi[0].pid, 1 + rnd() % pi[0].used, t);
        } else if (op < 90) {
            cg_process_exit(core, c, pid, t);
        } else {
            cg_container_remove(core, c, t);
            if (cg_container_create(core, -1, (64 + rnd() % 4032) << 20, t, &ids[i]) != CG_OK)
                return 1;
        }
    }
    double dt = now_s() - t0;
    unsigned nsusp = 0;
    for (unsigned d = 0; d < ndev; d++) {
        cg_device_info di;
        cg_device_get(core, d, &di);
        nsusp += di.nsuspended;
    }
    const char *why = cg_core_check(core);
    printf("events: %-10s %lu events over %u containers in %.3f s (%.0f events/s), "
           "%lu suspensions, %u suspended at end, check: %s\n",
           cg_resume_policy_name(policy), events, live, dt, events / dt, suspends, nsusp,
           why ? why : "ok");
    free(ids);
    cg_core_free(core);
    return why != NULL;
}

static void footprint(void)
{
    cg_core *core = cg_core_new(NULL);
    cg_device_add(core, 2000ull << 30, 0, 66ull << 20, NULL);
    size_t base = cg_core_footprint(core);
    const unsigned n = 10000;
    cg_cid *ids = malloc(n * sizeof *ids);
    for (unsigned i = 0; i < n; i++)
        cg_container_create(core, 0, 128 << 20, 0, &ids[i]);
    size_t with_c = cg_core_footprint(core);
    for (unsigned i = 0; i < n; i++) {
        cg_outcome o;
        cg_request(core, ids[i], 1, i, 1000, 0, &o);
        cg_request(core, ids[i], 2, i + n, 1000, 0, &o);
    }
    size_t with_p = cg_core_footprint(core);
    printf("memory: core %zu B; %.1f B per container (incl. index share); "
           "%.1f B per process\n",
           base, (double)(with_c - base) / n, (double)(with_p - with_c) / (2.0 * n));
    free(ids);
    cg_core_free(core);
}

static void preferred_allocation(void)
{
    static cg_unit avail[8 * 320];
    static size_t out[8 * 320];
    size_t n = 0;
    for (unsigned g = 0; g < 8; g++)
        for (unsigned i = 0; i < 320; i++)
            if (g >= 4 || i < 280)
                avail[n++] = (cg_unit){g, i};
    for (size_t i = n - 1; i > 0; i--) {
        size_t j = (size_t)(rnd() % (i + 1));
        cg_unit t = avail[i];
        avail[i] = avail[j];
        avail[j] = t;
    }
    static const size_t sizes[] = {1, 64, 320, 1000};
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        unsigned reps = 0;
        double t0 = now_s(), t;
        do {
            if (cg_units_prefer(avail, n, NULL, 0, sizes[k], out) != CG_PREFER_OK) {
                printf("units: prefer %zu of %zu failed\n", sizes[k], n);
                return;
            }
            reps++;
            t = now_s();
        } while (t - t0 < 0.5 && reps < 100000);
        printf("units: preferred allocation of %zu of %zu memory units: %.3f ms per call (%u calls)\n",
               sizes[k], n, (t - t0) / reps * 1e3, reps);
    }
}

int main(int argc, char **argv)
{
    unsigned long events = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000000;
    int rc = paper_experiment(4) || paper_experiment(CG_RESUME__COUNT);
    for (unsigned p = 0; p < CG_RESUME__COUNT && !rc; p++)
        rc = event_storm((cg_resume_policy)p, 10000, events);
    footprint();
    preferred_allocation();
    return rc;
}

/* workload.c — the job lists the simulator replays. Each (workload, containers, seed) gives the
 * same jobs for every policy, so policies are compared on identical arrivals. */
#include <math.h>

#include "sim.h"

/* splitmix64, seeded from (seed, containers): the simulator's own generator. */
static uint64_t next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double uniform01(uint64_t *s) { return (double)(next(s) >> 11) * 0x1.0p-53; }

void sim_make_jobs(const sim_params *p, sim_job *jobs)
{
    uint64_t s = p->seed * 0x9e3779b97f4a7c15ull ^ ((uint64_t)p->containers << 32) ^
                 (uint64_t)p->workload;
    double t = 0;
    for (unsigned i = 0; i < p->containers; i++) {
        if (p->workload == SIM_PAPER) {
            /* Table III: nano..xlarge = 128 MiB << k, k uniform in 0..5. The sample program
             * copies its whole allocation in, complements it and copies it out, so its time
             * is a fixed part plus a part proportional to its size; the paper gives the ends
             * (5 s and 45 s): 5.0, 6.3, 8.9, 14.0, 24.4, 45.0 s. */
            unsigned k = (unsigned)(next(&s) % 6);
            cg_bytes limit = (128 * SIM_MIB) << k;
            double work = p->runtime == SIM_RUNTIME_LOG
                              ? 5.0 + 8.0 * k
                              : 5.0 + 40.0 * (double)(limit - 128 * SIM_MIB) /
                                          (double)((4096 - 128) * SIM_MIB);
            jobs[i] = (sim_job){5.0 * i, limit, work, 0};
        } else if (p->workload == SIM_ALEXNET) {
            jobs[i] = (sim_job){5.0 * i, 2662 * SIM_MIB, 60.0, 0};
        } else {
            /* GSaaS-like batch: 1-4 GiB jobs arriving as a Poisson stream. */
            unsigned g = 1 + (unsigned)(next(&s) % 4);
            double work = 60.0 + 540.0 * uniform01(&s);
            jobs[i] = (sim_job){t, g * SIM_GIB, work, 0};
            t += -20.0 * log(1.0 - uniform01(&s));
        }
        jobs[i].priority = p->urgent_every && (i + 1) % p->urgent_every == 0 ? 5 : 0;
    }
}

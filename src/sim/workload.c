/* workload.c — the job lists the simulator replays. Each (workload, containers, seed) gives the
 * same jobs for every policy and every sharing condition, so they are compared on identical
 * arrivals. */
#include <math.h>
#include <string.h>

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

static const char *const workload_names[SIM_WORKLOAD__COUNT] = {
    "paper", "gsaas", "alexnet", "homogeneous", "heterogeneous", "lammps", "gromacs", "qmcpack",
    "cnn-mnist"};

const char *sim_workload_name(sim_workload w)
{
    return (unsigned)w < SIM_WORKLOAD__COUNT ? workload_names[w] : "unknown";
}

bool sim_workload_parse(const char *name, sim_workload *out)
{
    for (unsigned i = 0; name && i < SIM_WORKLOAD__COUNT; i++)
        if (strcmp(name, workload_names[i]) == 0) {
            *out = (sim_workload)i;
            return true;
        }
    return false;
}

bool sim_workload_is_app(sim_workload w) { return w >= SIM_HOMOGENEOUS && w < SIM_WORKLOAD__COUNT; }

/* Seed 001's Section 2.4, one application alone on the GPU (nvidia-smi's "MB" are MiB):
 * LAMMPS uses 1.7 GB for 1180 s, then 8.3 GB until it ends at 1195 s; GROMACS 539 MB for
 * 715 s; QMCPACK 5389 MB for 190 s; CNN-MNIST, TensorFlow limited to 2207 MB, 222 s ("3 min
 * and 42 s"), and unlimited, as under nvidia-docker, 8518 MB for 204 s. */
enum { APP_LAMMPS, APP_GROMACS, APP_QMCPACK, APP_CNN, NAPPS };

typedef struct {
    unsigned nphases;
    sim_phase limited[SIM_MAX_PHASES];     /* under a limit of its peak */
    sim_phase whole[SIM_MAX_PHASES];       /* with the whole GPU (DEFAULT) */
} app_profile;

static const app_profile apps[NAPPS] = {
    [APP_LAMMPS] = {2, {{1741 * SIM_MIB, 1180}, {8499 * SIM_MIB, 15}},
                    {{1741 * SIM_MIB, 1180}, {8499 * SIM_MIB, 15}}},
    [APP_GROMACS] = {1, {{539 * SIM_MIB, 715}}, {{539 * SIM_MIB, 715}}},
    [APP_QMCPACK] = {1, {{5389 * SIM_MIB, 190}}, {{5389 * SIM_MIB, 190}}},
    [APP_CNN] = {1, {{2207 * SIM_MIB, 222}}, {{8518 * SIM_MIB, 204}}},
};

/* The four users submit 40%, 30%, 20% and 10% of the jobs (Eq. 1's job counts differ), one job
 * every SIM_APP_GAP seconds: the stream outruns the GPU, so the queue is what is scheduled. */
#define SIM_APP_USERS 4
#define SIM_APP_GAP 10.0

static void app_job(const sim_params *p, unsigned app, sim_job *j)
{
    const app_profile *a = &apps[app];
    const sim_phase *ph = p->share == SIM_SHARE_DEFAULT ? a->whole : a->limited;
    j->nphases = a->nphases;
    j->work = 0;
    j->limit = 0;
    for (unsigned k = 0; k < a->nphases; k++) {
        j->phase[k] = ph[k];
        j->work += ph[k].work;
        j->limit = ph[k].foot > j->limit ? ph[k].foot : j->limit;
    }
}

cg_bytes sim_workload_largest(sim_workload w)
{
    switch (w) {
    case SIM_PAPER: return 4096 * SIM_MIB;
    case SIM_GSAAS: return 4 * SIM_GIB;
    case SIM_ALEXNET: return 2662 * SIM_MIB;
    default: return 8518 * SIM_MIB;
    }
}

void sim_make_jobs(const sim_params *p, sim_job *jobs)
{
    uint64_t s = p->seed * 0x9e3779b97f4a7c15ull ^ ((uint64_t)p->containers << 32) ^
                 (uint64_t)p->workload;
    double t = 0;
    /* Seed 001's workloads: who runs what. */
    unsigned user_app[SIM_APP_USERS];
    for (unsigned u = 0; u < SIM_APP_USERS; u++) {
        unsigned seed_app = (unsigned)((p->seed + NAPPS - 1) % NAPPS);
        user_app[u] = p->workload == SIM_HOMOGENEOUS ? seed_app
                      : p->workload == SIM_HETEROGENEOUS ? u
                                                          : (unsigned)(p->workload - SIM_LAMMPS);
    }
    if (p->workload == SIM_HETEROGENEOUS)   /* a random pairing (Fisher-Yates) */
        for (unsigned u = SIM_APP_USERS - 1; u > 0; u--) {
            unsigned k = (unsigned)(next(&s) % (u + 1)), x = user_app[u];
            user_app[u] = user_app[k];
            user_app[k] = x;
        }
    for (unsigned i = 0; i < p->containers; i++) {
        if (sim_workload_is_app(p->workload)) {
            double r = uniform01(&s);
            uint32_t user = r < 0.4 ? 0 : r < 0.7 ? 1 : r < 0.9 ? 2 : 3;
            jobs[i] = (sim_job){.arrive = SIM_APP_GAP * i, .tenant = user + 1};
            app_job(p, user_app[user], &jobs[i]);
        } else if (p->workload == SIM_PAPER) {
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
            jobs[i] = (sim_job){.arrive = 5.0 * i, .limit = limit, .work = work};
        } else if (p->workload == SIM_ALEXNET) {
            jobs[i] = (sim_job){.arrive = 5.0 * i, .limit = 2662 * SIM_MIB, .work = 60.0};
        } else {
            /* GSaaS-like batch: 1-4 GiB jobs arriving as a Poisson stream. */
            unsigned g = 1 + (unsigned)(next(&s) % 4);
            double work = 60.0 + 540.0 * uniform01(&s);
            jobs[i] = (sim_job){.arrive = t, .limit = g * SIM_GIB, .work = work};
            t += -20.0 * log(1.0 - uniform01(&s));
        }
        jobs[i].priority = p->urgent_every && (i + 1) % p->urgent_every == 0 ? 5 : 0;
    }
}

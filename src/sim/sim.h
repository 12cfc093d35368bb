/* sim.h — the discrete-event simulator behind `convgpu sim`: workloads, one simulated run over
 * the real scheduling core, and the reports built from many runs. Time in the simulator is in
 * seconds (double); the core is handed nanoseconds. */
#ifndef CONVGPU_SIM_H
#define CONVGPU_SIM_H

#include <stdbool.h>
#include <stdio.h>

#include "core.h"

#define SIM_MIB ((cg_bytes)1 << 20)
#define SIM_GIB ((cg_bytes)1 << 30)

typedef enum { SIM_PAPER, SIM_GSAAS, SIM_ALEXNET } sim_workload;

/* How the paper workload's run time grows with a container's size (docs/SCHEDULING.md,
 * "Simulator"): LINEAR, 5 s at 128 MiB to 45 s at 4096 MiB in proportion to the bytes the
 * sample program copies (the default); LOG, equal steps per doubling (5, 13, ..., 45 s), the
 * model before issue 21, kept to show what it changes. */
typedef enum { SIM_RUNTIME_LINEAR, SIM_RUNTIME_LOG } sim_runtime;

typedef struct {
    double arrive;               /* seconds */
    cg_bytes limit;              /* the container's GPU-memory limit */
    double work;                 /* seconds of GPU work at full speed */
    unsigned priority;           /* 0..9 (see sim_params.urgent_every) */
} sim_job;

typedef struct {
    sim_workload workload;
    cg_resume_policy policy;
    cg_placement_policy placement;
    unsigned ngpus;
    cg_bytes gpu_total;
    cg_bytes context;            /* per-process context charge */
    double ps_k;                 /* processor-sharing concurrency; 0 = no interference */
    unsigned containers;
    uint64_t seed;
    sim_runtime runtime;         /* paper workload only */
    /* Swap (docs/SCHEDULING.md, "Priorities and swap"): the core's host budget (0: no swap)
     * and the speed a move runs at, bytes per second (each move takes bytes / bandwidth). */
    cg_bytes swap_limit;
    double swap_bandwidth;
    /* A job allocates its memory in this many equal steps, each followed by an equal part of
     * its work (0 or 1: one allocation before all the work, the paper's sample program). */
    unsigned steps;
    /* Every urgent_every-th container (the 2nd, 4th, ... for 2) has priority 5, the rest 0
     * (0: all 0). */
    unsigned urgent_every;
} sim_params;

typedef struct {
    double finished;             /* time the last container was removed */
    double avg_suspended, max_suspended;
    double mem_util;             /* time-average of used / capacity over [0, finished] */
    double avg_turnaround;       /* mean of (removed - arrived) */
    double urgent_turnaround;    /* the same over the priority-5 containers (0: none) */
    unsigned swaps;              /* swap-outs the core ordered */
} sim_result;

/* alexnet (seed 001, Figure 18): identical CNN-training containers, one every 5 s, 2.6 GiB each
 * allocated in 4 steps (TensorFlow's allocator grows in chunks), 60 s of work at full speed.
 * paper: Table III types uniformly at random, one every 5 s, work 5 s (nano) .. 45 s (xlarge) as
 * p->runtime says. gsaas: limits 1-4 GiB, Poisson arrivals (mean 20 s), work
 * uniform in [60, 600] s. Deterministic in (workload, containers, seed). */
void sim_make_jobs(const sim_params *p, sim_job *jobs);

/* One run. Returns 0, or -1 when the core fails (out of memory). */
int sim_run(const sim_params *p, sim_result *out);

/* The paper's Tables IV and V (N = 4, 6, ..., 38), for comparison and calibration. */
#define SIM_PAPER_NS 18
extern const double sim_paper_finished[4][SIM_PAPER_NS];
extern const double sim_paper_suspended[4][SIM_PAPER_NS];
/* Index of N in the paper's tables, or -1. */
int sim_paper_col(unsigned n);

/* Aggregates over seeds, one per (policy, placement, N). */
typedef struct {
    cg_resume_policy policy;
    cg_placement_policy placement;
    unsigned containers;
    double finished, avg_suspended, max_suspended, mem_util;   /* means over seeds */
    double avg_turnaround, urgent_turnaround, swaps;            /* means over seeds */
} sim_point;

/* SVG line plot of y(N) per policy (and the paper's values, dashed, when given). Returns 0 or
 * -1 with errno set. */
int sim_svg_write(const char *path, const char *title, const char *ylabel,
                  const sim_point *pts, size_t npts, bool finished, bool with_paper);

/* A named experiment (experiments.c): a preset of `convgpu sim` options, parsed before the
 * user's own, and its CSV: the per-run rows, or `report`'s own table made from the points
 * (which come in (placement, N, policy) order). report returns 0, or -1 when the points lack
 * something it needs (a policy the preset names but the user's options removed). */
typedef struct {
    const char *name;
    const char *summary;
    const char *const *args;     /* NULL-terminated */
    int (*report)(const sim_point *pts, size_t npts, FILE *out);
} sim_experiment;

extern const sim_experiment sim_experiments[];
extern const size_t sim_nexperiments;
/* The experiment of that name, or NULL. */
const sim_experiment *sim_experiment_find(const char *name);

int cg_sim_main(int argc, char **argv);
/* `convgpu sim compute ...` (compute_cli.c): argv[0] is "compute". */
int cg_sim_compute_main(int argc, char **argv);

#endif

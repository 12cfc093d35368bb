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

typedef enum { SIM_PAPER, SIM_GSAAS } sim_workload;

typedef struct {
    double arrive;               /* seconds */
    cg_bytes limit;              /* the container's GPU-memory limit */
    double work;                 /* seconds of GPU work at full speed */
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
} sim_params;

typedef struct {
    double finished;             /* time the last container was removed */
    double avg_suspended, max_suspended;
    double mem_util;             /* time-average of used / capacity over [0, finished] */
} sim_result;

/* paper: Table III types uniformly at random, one every 5 s, work 5 s (nano) .. 45 s (xlarge),
 * +8 s per doubling of size. gsaas: limits 1-4 GiB, Poisson arrivals (mean 20 s), work
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
} sim_point;

/* SVG line plot of y(N) per policy (and the paper's values, dashed, when given). Returns 0 or
 * -1 with errno set. */
int sim_svg_write(const char *path, const char *title, const char *ylabel,
                  const sim_point *pts, size_t npts, bool finished, bool with_paper);

int cg_sim_main(int argc, char **argv);
/* `convgpu sim compute ...` (compute_cli.c): argv[0] is "compute". */
int cg_sim_compute_main(int argc, char **argv);

#endif

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

/* The last six are seed 001's Section 4.2 workloads (workload.c, "application profiles"):
 * four users submitting jobs of the paper's applications. HOMOGENEOUS: every job the same
 * application, the one of seed s being the ((s - 1) mod 4)-th (so seeds 1..4k cover all four);
 * LAMMPS..CNN_MNIST: that application alone; HETEROGENEOUS: each user its own application, the
 * pairing drawn per seed. */
typedef enum {
    SIM_PAPER, SIM_GSAAS, SIM_ALEXNET,
    SIM_HOMOGENEOUS, SIM_HETEROGENEOUS, SIM_LAMMPS, SIM_GROMACS, SIM_QMCPACK, SIM_CNN_MNIST,
    SIM_WORKLOAD__COUNT
} sim_workload;

/* "paper", "gsaas", "alexnet", "homogeneous", "heterogeneous", "lammps", "gromacs", "qmcpack",
 * "cnn-mnist". */
const char *sim_workload_name(sim_workload w);
bool sim_workload_parse(const char *name, sim_workload *out);
/* One of seed 001's application workloads (HOMOGENEOUS .. CNN_MNIST). */
bool sim_workload_is_app(sim_workload w);

/* Seed 001's Section 4.2 conditions (`--fair-share`): DEFAULT is nvidia-docker, where a
 * container sees the whole GPU (its limit is the GPU, its first request takes it all, so jobs
 * run one after another: "carried out in sequential way"); the others limit each container to
 * what its application needs and run the core in fair-share mode none, static or adaptive. */
typedef enum {
    SIM_SHARE_DEFAULT, SIM_SHARE_NONE, SIM_SHARE_STATIC, SIM_SHARE_ADAPTIVE, SIM_SHARE__COUNT
} sim_share;

/* "default", "none", "static", "adaptive". */
const char *sim_share_name(sim_share s);
bool sim_share_parse(const char *name, sim_share *out);

/* How the paper workload's run time grows with a container's size (docs/SCHEDULING.md,
 * "Simulator"): LINEAR, 5 s at 128 MiB to 45 s at 4096 MiB in proportion to the bytes the
 * sample program copies (the default); LOG, equal steps per doubling (5, 13, ..., 45 s), the
 * model before issue 21, kept to show what it changes. */
typedef enum { SIM_RUNTIME_LINEAR, SIM_RUNTIME_LOG } sim_runtime;

/* A phase of an application's run: its memory footprint (what nvidia-smi shows, the context
 * included) and the GPU work done at that footprint, seconds at full speed. */
typedef struct {
    cg_bytes foot;
    double work;
} sim_phase;

#define SIM_MAX_PHASES 2

typedef struct {
    double arrive;               /* seconds */
    cg_bytes limit;              /* the container's GPU-memory limit */
    double work;                 /* seconds of GPU work at full speed */
    unsigned priority;           /* 0..9 (see sim_params.urgent_every) */
    uint32_t tenant;             /* the submitting user (0 outside seed 001's workloads) */
    /* Phases (seed 001's workloads): the job asks for each phase's growth of its footprint, then
     * does that phase's work. 0: `limit` in sim_params.steps equal steps over `work`. */
    unsigned nphases;
    sim_phase phase[SIM_MAX_PHASES];
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
    /* Seed 001's conditions: DEFAULT gives every container the whole GPU; STATIC and ADAPTIVE
     * set the core's fair-share mode; ADAPTIVE hands the core, every fair_interval seconds, the
     * profiles learned from the jobs finished so far (Algorithm 1's periodic step). */
    sim_share share;
    double fair_interval;
    /* Run cg_core_check after every event; a violation fails the run (tests). */
    bool check;
    /* With swap: let a waiting container step aside for one behind it (stepaside.c). Off here,
     * so the paper-workload figures keep the core's swap as it was before the rule. */
    bool step_aside;
    /* The scheduler's choice of back end (victim_backend.c, cg_config.auto_pause): a victim
     * whose swap frees too little is checkpointed whole, its allocations and its context, at
     * these speeds (bytes per second; 0: SIM_CHECKPOINT_OUT_BPS / _IN_BPS). Off: swap only. */
    bool auto_pause;
    double checkpoint_out_bandwidth, checkpoint_in_bandwidth;
} sim_params;

/* Checkpoint speeds against the swap's: docs/BENCHMARKS.md, bench/pause.sh on the emulator,
 * pause 0.19 and resume 1.40 of the device-host copy measured in the same rounds; the sim's
 * swap runs at --swap-bandwidth (12 GB/s by default), so these are those ratios of 12 GB/s. */
#define SIM_CHECKPOINT_OUT_RATIO 0.19
#define SIM_CHECKPOINT_IN_RATIO 1.40

typedef struct {
    double finished;             /* time the last container was removed */
    double avg_suspended, max_suspended;
    double mem_util;             /* time-average of used / capacity over [0, finished] */
    double avg_turnaround;       /* mean of (removed - arrived) */
    double urgent_turnaround;    /* the same over the priority-5 containers (0: none) */
    unsigned swaps;              /* swap-outs the core ordered (checkpoints included) */
    unsigned checkpoints;        /* of which whole checkpoints (sim_params.auto_pause) */
    double moved_gib;            /* bytes moved to the host and back, GiB */
    /* Time-average of the footprints of the jobs on the GPU (what nvidia-smi would show: under
     * DEFAULT a job holds the whole GPU but uses its application's footprint) / capacity. */
    double mem_footprint;
    unsigned fair_updates;       /* cg_fair_share_update calls that carried a profile */
    const char *violation;       /* sim_params.check: cg_core_check's complaint, else NULL */
} sim_result;

/* alexnet (seed 001, Figure 18): identical CNN-training containers, one every 5 s, 2.6 GiB each
 * allocated in 4 steps (TensorFlow's allocator grows in chunks), 60 s of work at full speed.
 * paper: Table III types uniformly at random, one every 5 s, work 5 s (nano) .. 45 s (xlarge) as
 * p->runtime says. gsaas: limits 1-4 GiB, Poisson arrivals (mean 20 s), work
 * uniform in [60, 600] s. Seed 001's workloads: see sim_workload (their CNN-MNIST jobs run
 * unlimited, 8518 MiB for 204 s, under DEFAULT). Deterministic in (workload, containers, seed),
 * the same jobs under every condition. */
void sim_make_jobs(const sim_params *p, sim_job *jobs);
/* The limit of the workload's largest container (its application's peak, under DEFAULT). */
cg_bytes sim_workload_largest(sim_workload w);

/* One run. Returns 0, or -1 when the core fails (out of memory), nothing can happen any more
 * (a deadlock), or sim_params.check finds a violation (out->violation). */
int sim_run(const sim_params *p, sim_result *out);

/* The paper's Tables IV and V (N = 4, 6, ..., 38), for comparison and calibration. */
#define SIM_PAPER_NS 18
extern const double sim_paper_finished[4][SIM_PAPER_NS];
extern const double sim_paper_suspended[4][SIM_PAPER_NS];
/* Index of N in the paper's tables, or -1. */
int sim_paper_col(unsigned n);

/* Seed 001's Figures 15 and 16 as the paper reports them (paper.c): index by sim_share, -1 where
 * the paper gives no number; [0] homogeneous, [1] heterogeneous. Makespan in seconds; memory
 * utilisation as the ratio adaptive / the condition (1.6743 = "67.43% higher"). */
extern const double sim_fig15_makespan[2][SIM_SHARE__COUNT];
extern const double sim_fig16_adaptive_over[2][SIM_SHARE__COUNT];

/* Aggregates over seeds, one per (workload, placement, N, share, policy). */
typedef struct {
    cg_resume_policy policy;
    cg_placement_policy placement;
    unsigned containers;
    double finished, avg_suspended, max_suspended, mem_util;   /* means over seeds */
    double avg_turnaround, urgent_turnaround, swaps;            /* means over seeds */
    sim_workload workload;
    sim_share share;
    double mem_footprint, fair_updates;                         /* means over seeds */
} sim_point;

/* SVG line plot of y(N) per policy (and the paper's values, dashed, when given). Returns 0 or
 * -1 with errno set. */
int sim_svg_write(const char *path, const char *title, const char *ylabel,
                  const sim_point *pts, size_t npts, bool finished, bool with_paper);

/* SVG grouped bars: one group per label, one bar per series (values[group][series]); the
 * paper's value, where it is not negative, as a hollow bar beside each of ours
 * (paper[group][series], NULL for none). Returns 0 or -1 with errno set. */
int sim_svg_bars(const char *path, const char *title, const char *ylabel, size_t ngroups,
                 const char *const *groups, size_t nseries, const char *const *series,
                 const double *values, const double *paper);

/* A named experiment (experiments.c): a preset of `convgpu sim` options, parsed before the
 * user's own, and its CSV: the per-run rows, or `report`'s own table made from the points
 * (which come in (workload, placement, N, share, policy) order). report returns 0, or -1 when
 * the points lack something it needs (a policy the preset names but the user's options
 * removed). `plot`, when given, writes the experiment's own SVGs into a directory for --svg
 * (0, or -1 with errno set). */
typedef struct {
    const char *name;
    const char *summary;
    const char *const *args;     /* NULL-terminated */
    int (*report)(const sim_point *pts, size_t npts, FILE *out);
    int (*plot)(const sim_point *pts, size_t npts, const char *dir);
    /* An experiment with an engine of its own (coexec-table4, gsaas-partitions): given the
     * user's other options (argv[0] kept), it does everything; args, report and plot unused. */
    int (*run)(int argc, char **argv);
} sim_experiment;

extern const sim_experiment sim_experiments[];
extern const size_t sim_nexperiments;
/* The experiment of that name, or NULL. */
const sim_experiment *sim_experiment_find(const char *name);

/* ---- seed 003's Table 4: co-execution under three placements (coexec.c) ----
 * Eight containers, two of each of the paper's Table 3 applications, on four 12 GB GPUs, all
 * started at 0, placed one by one by the real core (binpack, standalone or load-balance) with
 * their utilisation and application key in the spec, and run under the utilisation
 * interference model (coexec.c's opening comment). */
#define SIM_COEXEC_APPS 4
#define SIM_COEXEC_JOBS (2 * SIM_COEXEC_APPS)

typedef struct {
    const char *name;            /* "LAMMPS", ... */
    char tag;                    /* 'L', 'G', 'T', 'Q' (the paper's job names: L1, L2, ...) */
    double mem_gb, util_pct;     /* Table 3 */
    double solo_s;               /* the model's run time alone (coexec.c says how it is set) */
} sim_coexec_app;

extern const sim_coexec_app sim_coexec_apps[SIM_COEXEC_APPS];

typedef struct {
    unsigned app;                /* index into sim_coexec_apps */
    unsigned copy;               /* 1 or 2 */
    unsigned device;
    double finished;             /* seconds from the common start */
} sim_coexec_job;

typedef struct {
    sim_coexec_job job[SIM_COEXEC_JOBS];  /* in the paper's column order: L1 L2 G1 ... Q2 */
    double makespan;             /* the paper's "total": the last job's end */
    double sum;                  /* the jobs' times added up */
    const char *violation;       /* check: cg_core_check's complaint, else NULL */
} sim_coexec_result;

/* The three policies the paper compares, in its row order. */
#define SIM_COEXEC_POLICIES 3
extern const cg_placement_policy sim_coexec_policies[SIM_COEXEC_POLICIES];
/* The paper's Table 4, rows as sim_coexec_policies, columns L1 L2 G1 G2 T1 T2 Q1 Q2, then its
 * total (seconds). */
extern const double sim_table4_paper[SIM_COEXEC_POLICIES][SIM_COEXEC_JOBS + 1];
/* One run; `check` runs cg_core_check after every event. 0, or -1 (core error, a container not
 * granted its memory at once, a violation: out->violation). */
int sim_coexec_run(cg_placement_policy placement, bool check, sim_coexec_result *out);
int sim_coexec_main(int argc, char **argv);

/* ---- seed 002's partition and sharing-factor study (partition.c) ----
 * A Lublin-Feitelson-like workload of jobs, each asking for k single-GPU nodes (1..4) of at
 * most 1 GB for a time, first come first served without backfilling, on four 8 GB GPUs cut
 * into `parts` equal partitions each (4x8, 8x4, 16x2, 32x1 GB). A node is a container of the
 * partition's size placed by the real core; a k-node job starts its k containers together
 * when k partitions are free (gang start, done here), and runs at the pace of its slowest
 * node: 1, or 1/overhead while its GPU runs another container (the sharing factor). */
typedef struct {
    unsigned parts;              /* partitions per GPU: 1, 2, 4 or 8 */
    double overhead;             /* sharing factor, >= 1 */
    unsigned jobs;
    uint64_t seed;
    cg_placement_policy placement;
    bool check;
} sim_part_params;

typedef struct {
    double finished;             /* seconds, the last job's end */
    unsigned max_per_gpu;        /* most containers one GPU ran at once */
    unsigned gang_max;           /* largest job started (nodes) */
    const char *violation;
} sim_part_result;

#define SIM_PART_GPUS 4
#define SIM_PART_CONFIGS 4
extern const unsigned sim_part_configs[SIM_PART_CONFIGS];      /* 1, 2, 4, 8 per GPU */
extern const double sim_part_paper_hours[SIM_PART_CONFIGS];    /* Table 3 */
int sim_part_run(const sim_part_params *p, sim_part_result *out);
int sim_part_main(int argc, char **argv);

/* Options of the experiments with an engine of their own (exp_opts.c): --svg DIR,
 * --format csv (their output is CSV anyway), and where `seeded`, --seeds K and --jobs N.
 * 0, or 2 after one line on stderr. */
typedef struct {
    const char *svg_dir;
    unsigned seeds, jobs;
} sim_exp_opts;
int sim_exp_opts_parse(int argc, char **argv, const char *name, bool seeded, sim_exp_opts *o);
/* Makes dir (it may exist) and writes path = dir/file; 0, or -1 after a line on stderr. */
int sim_exp_svg_path(const char *dir, const char *file, char *path, size_t cap);

int cg_sim_main(int argc, char **argv);
/* `convgpu sim compute ...` (compute_cli.c): argv[0] is "compute". */
int cg_sim_compute_main(int argc, char **argv);

#endif

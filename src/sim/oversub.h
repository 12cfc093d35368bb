/* oversub.h — `convgpu sim --experiment oversub` (oversub.c, oversub_cli.c): N nodes x G GPUs,
 * a cluster scheduler that promises capacity x F per GPU, and one real core per node. */
#ifndef CONVGPU_SIM_OVERSUB_H
#define CONVGPU_SIM_OVERSUB_H

#include "sim.h"

/* PROFILES: seed 001's applications with padded requests; HEAVY: heavy-tailed peaks, padding
 * and run times (oversub.c says exactly). */
typedef enum { SIM_OV_PROFILES, SIM_OV_HEAVY, SIM_OV_DIST__COUNT } sim_ov_dist;
const char *sim_ov_dist_name(sim_ov_dist d);
bool sim_ov_dist_parse(const char *s, sim_ov_dist *out);

typedef struct {
    unsigned nodes, gpus_per_node;
    cg_bytes gpu_total;
    unsigned jobs;
    uint64_t seed;
    sim_ov_dist dist;
    double factor;               /* static F (>= 1) unless adaptive */
    bool adaptive;               /* F from cg_oversub_adaptive over the runs finished so far */
    bool step_aside;             /* the core's step-aside rule (stepaside.c) */
    cg_bytes swap_limit;         /* per node */
    double swap_bandwidth;       /* bytes per second */
    double slowdown;             /* a job beside others on its GPU runs at 1/slowdown */
    double load;                 /* offered memory-time / the cluster's at F = 1 */
    cg_resume_policy policy;
    bool check;                  /* cg_core_check on every node after every event */
    /* The cluster scheduler's choice among the GPUs whose promise holds the job: false, the
     * first; true, the least pressed (src/core/pressure.h, as the k8s extender ranks them:
     * memory not free now and not coverable by the node's swap left, containers waiting,
     * the slowdown of joining others), ties to the first. */
    bool pressure_place;
} sim_ov_params;

typedef struct {
    double makespan, jobs_per_hour, mean_jct, p95_jct;   /* seconds; JCT from arrival */
    double mem_util;             /* time-average of the bytes on the GPUs / their capacity */
    double mean_suspended;       /* per job, the core's total_suspended */
    double bytes_swapped;        /* moved out to the host, all moves */
    unsigned swap_outs, step_asides;
    unsigned backfills;          /* jobs granted while the container that stepped aside for
                                  * them waited out */
    unsigned oom_kills;          /* refused over the limit, or a device above its capacity */
    unsigned max_concurrent;     /* most jobs placed at once */
    double mean_concurrent;
    double factor;               /* F used (adaptive: its mean over the job ends) */
    const char *violation;
} sim_ov_result;

int sim_ov_run(const sim_ov_params *p, sim_ov_result *out);
int sim_ov_main(int argc, char **argv);

#endif

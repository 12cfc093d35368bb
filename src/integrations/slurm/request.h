/* request.h — what a Slurm user asks of convgpu (--gpu-mem, --gpu-compute, --gpu-count), checked
 * where it enters: in srun/sbatch/salloc, so a bad value refuses the job before it is queued, and
 * again in slurmstepd, which must not trust whatever client submitted the job.
 *
 * Both checks are these functions; their messages are what the user reads. */
#ifndef CONVGPU_SLURM_REQUEST_H
#define CONVGPU_SLURM_REQUEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct slurm_gpu_request {
    uint64_t bytes;       /* --gpu-mem; 0: the step asks for nothing and is not touched */
    unsigned compute_pct; /* --gpu-compute, 1..100; 0: the daemon's default */
    unsigned gpus;        /* --gpu-count, 1..SLURM_GPU_COUNT_MAX; 0: not given (one GPU) */
    /* The other rows of the container-option table (src/client/container_options.h) that
     * carry a SPANK name: --gpu-compute-mode, --gpu-priority, --gpu-no-swap, --gpu-exclusive,
     * parsed by the table's parser in the plugin. */
    const char *compute_mode; /* "hard"/"elastic"; NULL: the daemon's default */
    bool has_priority;
    int priority;
    bool no_swap;
    bool exclusive;
};

/* The most GPUs one step asks on one node (the daemon refuses more than the node has). */
#define SLURM_GPU_COUNT_MAX 64

/* --gpu-mem=SIZE: a convgpu size ("512MiB", "1.5GiB", "4096"), not zero. Returns 0, or -1 with
 * a message naming the option and the value in err. */
int slurm_parse_gpu_mem(const char *text, uint64_t *bytes, char *err, size_t errlen);

/* --gpu-compute=PCT: a whole percent of one GPU's time, 1..100 ("30" or "30%"). */
int slurm_parse_gpu_compute(const char *text, unsigned *pct, char *err, size_t errlen);

/* --gpu-count=N: how many GPUs each step has on each node, each with the whole --gpu-mem (and
 * --gpu-compute); a whole number 1..SLURM_GPU_COUNT_MAX. */
int slurm_parse_gpu_count(const char *text, unsigned *gpus, char *err, size_t errlen);

/* The combination: a compute share, its mode, a GPU count, a priority, no-swap or exclusive
 * needs a memory request (only --gpu-mem makes a step a convgpu container). Returns 0, or -1
 * with err. */
int slurm_check_request(const struct slurm_gpu_request *req, char *err, size_t errlen);

/* The container id of a step: "slurm-JOB.STEP", with Slurm's names for its special steps
 * ("batch", "extern", "interactive"). Fits the daemon's 32-character ids. */
void slurm_step_container_id(uint32_t job, uint32_t step, char *buf, size_t len);

#endif

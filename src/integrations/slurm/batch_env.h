/* batch_env.h — how the steps of a batch job find, on the batch node, the container of the
 * job's batch step, so that they run within it instead of registering the job's limit again.
 *
 * `sbatch --gpu-mem=X script` whose script runs `srun prog`: slurmctld counted X on each node,
 * the batch step registered X (slurm-JOB.batch) and its tasks' environment points at it. The
 * srun step on the same node would register another X; instead it runs in the batch step's
 * container, with the environment the daemon gave the batch step. That environment is kept
 * where only root can write it: `<runtime-dir>/slurm/JOB.env` (0600 in a 0700 directory,
 * created by the batch step's slurmstepd after its registration, removed at its end). It is
 * used only while the daemon still has slurm-JOB.batch, so a file that outlived its step (a
 * slurmstepd killed outright) is never followed to a container that no longer exists. */
#ifndef CONVGPU_SLURM_BATCH_ENV_H
#define CONVGPU_SLURM_BATCH_ENV_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

/* Writes env (an object of strings) for job. Returns 0, or -1 with err. */
int batch_env_save(const char *runtime_dir, uint32_t job, json_t *env, char *err, size_t errlen);

/* The saved environment of job (new reference), or NULL when there is none or it is not
 * trustworthy (not a regular file of ours, too large, not an object of strings). */
json_t *batch_env_load(const char *runtime_dir, uint32_t job);

/* Removes job's file; nothing when there is none. */
void batch_env_remove(const char *runtime_dir, uint32_t job);

#endif

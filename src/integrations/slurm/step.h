/* step.h — a Slurm step as a convgpud container, through the node daemon's control API
 * (the client library, convgpu_client.h), the way convgpu-runtime registers an OCI container.
 *
 * One step's life: step_register() in slurmstepd before any task exists (the limit, the job's
 * uid/gid as owner, auto_remove), so the daemon watches the caller, slurmstepd, with a pidfd
 * and removes the container when it goes, however it goes (kill -9 included);
 * step_release() at the step's end is the ordinary, immediate path. */
#ifndef CONVGPU_SLURM_STEP_H
#define CONVGPU_SLURM_STEP_H

#include <jansson.h>
#include <stddef.h>
#include <sys/types.h>

#include "request.h"

/* Registers container `id` with the request (on req->gpus GPUs, each with the whole limit, when
 * more than one) and owner, removed when the calling process (this
 * slurmstepd) exits. A leftover registration of the same id with no processes (a
 * daemon that missed a step's end) is replaced. Returns the daemon's "env" object (new
 * reference: the variables each task needs), or NULL with err; on failure nothing stays
 * registered. */
json_t *step_register(const char *id, const struct slurm_gpu_request *req, uid_t uid, gid_t gid,
                      char *err, size_t errlen);

/* 1 when the daemon has container id, 0 when not (or it cannot be asked). */
int step_exists(const char *id);

/* DELETE the container. Returns 0 when removed or already gone, -1 with err. */
int step_release(const char *id, char *err, size_t errlen);

#endif

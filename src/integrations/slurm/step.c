/* step.c — registration and release of a step's container (step.h), through the client
 * library (convgpu_client.h). */
#include "step.h"

#include <stdio.h>
#include <string.h>

#include "convgpu_client.h"
#include "size.h"

json_t *step_register(const char *id, const struct slurm_gpu_request *req, uid_t uid, gid_t gid,
                      char *err, size_t errlen)
{
    char what[160], size[CG_SIZE_BUFLEN];
    cg_format_size(req->bytes, size, sizeof size);
    if (req->gpus > 1)
        snprintf(what, sizeof what, "cannot give step %s %u GPUs with %s of GPU memory each", id,
                 req->gpus, size);
    else
        snprintf(what, sizeof what, "cannot give step %s %s of GPU memory", id, size);
    /* auto_remove: the daemon watches the caller, this slurmstepd (SO_PEERCRED), with a
     * pidfd, and removes the container when it exits: one request, where reporting the pid
     * afterwards (cgc_start, as the OCI shim must) took a second round trip and write.
     * replace_idle: Slurm does not reuse step ids within a job, so a holder of the id without
     * processes can only be a step whose end the daemon missed. */
    struct cg_client_spec s = {
        .id = id, .gpu_memory = req->bytes, .auto_remove = true, .has_owner = true,
        .uid = uid, .gid = gid, .compute_pct = req->compute_pct, .replace_idle = true,
        /* One GPU is the daemon's default: the request of a one-GPU step stays as it was. */
        .gpus = req->gpus > 1 ? req->gpus : 0, .compute_mode = req->compute_mode,
        .has_priority = req->has_priority, .priority = req->priority, .no_swap = req->no_swap,
        .exclusive = req->exclusive,
    };
    struct cgc_error e;
    json_t *ans = cgc_create(&s, &e);
    if (!ans) {
        cgc_error_format(&e, what, err, errlen);
        return NULL;
    }
    json_t *env = json_object_get(ans, "env");
    if (!json_is_object(env)) {
        char terr[512];
        snprintf(err, errlen, "%s: the daemon's answer has no \"env\"", what);
        json_decref(ans);
        step_release(id, terr, sizeof terr);
        return NULL;
    }
    json_incref(env);
    json_decref(ans);
    return env;
}

int step_exists(const char *id)
{
    struct cgc_error e;
    json_t *c = cgc_inspect(id, &e);
    json_decref(c);
    return c != NULL;
}

int step_release(const char *id, char *err, size_t errlen)
{
    struct cgc_error e;
    if (cgc_remove(id, &e) == 0)
        return 0;
    char what[128];
    snprintf(what, sizeof what, "cannot release step %s", id);
    cgc_error_format(&e, what, err, errlen);
    return -1;
}

/* step.c — registration and release of a step's container (step.h). */
#include "step.h"

#include <stdio.h>
#include <string.h>

#include "http.h"
#include "size.h"

static void api_error(long status, json_t *ans, const char *terr, const char *what, char *err,
                      size_t errlen)
{
    if (status == 0) {
        snprintf(err, errlen, "%s: %s", what, terr);
        return;
    }
    const char *msg = json_string_value(json_object_get(ans, "error"));
    snprintf(err, errlen, "%s: convgpud says: %s (HTTP %ld)", what,
             msg ? msg : "unexpected answer", status);
}

static long post(const char *id, const struct slurm_gpu_request *req, uid_t uid, gid_t gid,
                 json_t **ans, char *terr, size_t tlen)
{
    /* auto_remove: the daemon watches the caller, this slurmstepd (SO_PEERCRED), with a
     * pidfd, and removes the container when it exits: one request, where reporting the pid
     * afterwards (POST .../start, as the OCI shim must) took a second round trip and write. */
    json_t *body = json_pack("{s:I,s:s,s:b,s:I,s:I}", "gpu_memory", (json_int_t)req->bytes, "id",
                             id, "auto_remove", 1, "uid", (json_int_t)uid, "gid",
                             (json_int_t)gid);
    if (body && req->compute_pct)
        json_object_set_new(body, "gpu_compute", json_integer(req->compute_pct));
    /* One GPU is the daemon's default: the request of a one-GPU step stays as it always was. */
    if (body && req->gpus > 1)
        json_object_set_new(body, "gpus", json_integer(req->gpus));
    return cli_request("POST", "/v1/containers", body, ans, terr, tlen);
}

/* A 409 on registration: the id is taken. A leftover without processes is removed so that the
 * step can run (Slurm does not reuse step ids within a job, so it can only be a step whose end
 * the daemon missed); one with processes is a real conflict. Returns 1 when removed. */
static int drop_leftover(const char *id)
{
    char path[128], terr[512];
    snprintf(path, sizeof path, "/v1/containers/%s", id);
    json_t *cur = NULL;
    long st = cli_request("GET", path, NULL, &cur, terr, sizeof terr);
    json_int_t procs = json_integer_value(json_object_get(cur, "processes"));
    json_decref(cur);
    if (st != 200 || procs != 0)
        return 0;
    json_t *del = NULL;
    st = cli_request("DELETE", path, NULL, &del, terr, sizeof terr);
    json_decref(del);
    return st == 200 || st == 404;
}

json_t *step_register(const char *id, const struct slurm_gpu_request *req, uid_t uid, gid_t gid,
                      char *err, size_t errlen)
{
    char terr[512] = "", what[160], size[CG_SIZE_BUFLEN];
    cg_format_size(req->bytes, size, sizeof size);
    if (req->gpus > 1)
        snprintf(what, sizeof what, "cannot give step %s %u GPUs with %s of GPU memory each", id,
                 req->gpus, size);
    else
        snprintf(what, sizeof what, "cannot give step %s %s of GPU memory", id, size);
    json_t *ans = NULL;
    long st = post(id, req, uid, gid, &ans, terr, sizeof terr);
    if (st == 409 && drop_leftover(id)) {
        json_decref(ans);
        ans = NULL;
        st = post(id, req, uid, gid, &ans, terr, sizeof terr);
    }
    if (st != 201) {
        api_error(st, ans, terr, what, err, errlen);
        json_decref(ans);
        return NULL;
    }
    json_t *env = json_object_get(ans, "env");
    if (!json_is_object(env)) {
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
    char path[128], terr[512];
    snprintf(path, sizeof path, "/v1/containers/%s", id);
    json_t *ans = NULL;
    long st = cli_request("GET", path, NULL, &ans, terr, sizeof terr);
    json_decref(ans);
    return st == 200;
}

int step_release(const char *id, char *err, size_t errlen)
{
    char path[128], terr[512] = "", what[128];
    snprintf(path, sizeof path, "/v1/containers/%s", id);
    json_t *ans = NULL;
    long st = cli_request("DELETE", path, NULL, &ans, terr, sizeof terr);
    int rc = 0;
    if (st != 200 && st != 204 && st != 404) {
        snprintf(what, sizeof what, "cannot release step %s", id);
        api_error(st, ans, terr, what, err, errlen);
        rc = -1;
    }
    json_decref(ans);
    return rc;
}

/* control.c — registration, init report and release through the control API client (src/cli/http.c). */
#include "control.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http.h"
#include "profile_key.h"
#include "size.h"

/* The daemon's id for an OCI container id: the id itself, or its first 32 characters when it is
 * longer (Docker's ids have 64), because the daemon's per-container socket path must fit in a
 * UNIX socket address (108 bytes). The full id, when it fits, is the registration's name, so
 * either finds the container in the control API. */
#define DAEMON_ID_MAX 32
static const char *daemon_id(const char *id, char *buf)
{
    snprintf(buf, DAEMON_ID_MAX + 1, "%s", id);
    return buf;
}

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

/* How long the daemon keeps a registration whose init is not reported (start_within): the
 * shim or hook that registered it was killed, or the runtime never created it. The runtime's
 * create (runc's, or NVIDIA's with its hook) is what runs in between; a minute is far above
 * it. CONVGPU_START_WITHIN in the runtime's own environment (1-3600 s) changes it. */
#define START_WITHIN_DEFAULT 60
static long start_within(void)
{
    const char *s = getenv("CONVGPU_START_WITHIN");
    char *end = NULL;
    long v = s && *s >= '0' && *s <= '9' ? strtol(s, &end, 10) : -1;
    return v >= 1 && v <= 3600 && end && !*end ? v : START_WITHIN_DEFAULT;
}

static long post(const char *id, const struct oci_request *req, json_t **ans, char *terr,
                 size_t tlen)
{
    char did[DAEMON_ID_MAX + 1];
    json_t *body = json_pack("{s:s,s:b,s:I}", "id", daemon_id(id, did), "auto_remove", 0,
                             "start_within", (json_int_t)start_within());
    if (body && req->nallocs) { /* Kubernetes: the daemon's records decide (api_alloc.h) */
        json_t *toks = json_array();
        for (unsigned i = 0; toks && i < req->nallocs; i++)
            json_array_append_new(toks, json_string(req->allocs[i]));
        json_object_set_new(body, "allocation", toks);
        if (req->pod && *req->pod)
            json_object_set_new(body, "allocation_pod", json_string(req->pod));
        if (req->tenant[0])
            json_object_set_new(body, "tenant", json_string(req->tenant));
    }
    if (body && req->bytes) /* none: exclusive, the GPU's capacity */
        json_object_set_new(body, "gpu_memory", json_integer((json_int_t)req->bytes));
    if (body && req->exclusive)
        json_object_set_new(body, "exclusive", json_true());
    /* The profile's key (src/daemon/profile.h): one the daemon would refuse is not sent, so
     * an odd image or command name costs the container its profile, not its start. */
    if (body && cg_profile_key_valid(req->image))
        json_object_set_new(body, "image", json_string(req->image));
    if (body && cg_profile_key_valid(req->command))
        json_object_set_new(body, "command", json_string(req->command));
    if (body && strlen(id) > DAEMON_ID_MAX && strlen(id) <= 64)
        json_object_set_new(body, "name", json_string(id));
    if (body && req->device >= 0)
        json_object_set_new(body, "device", json_integer(req->device));
    if (body && req->gpus)
        json_object_set_new(body, "gpus", json_integer(req->gpus));
    if (body && req->ndevices) {
        json_t *devs = json_array();
        for (unsigned i = 0; devs && i < req->ndevices; i++)
            json_array_append_new(devs, json_integer(req->devices[i]));
        json_object_set_new(body, "devices", devs);
    }
    if (body && req->compute_pct)
        json_object_set_new(body, "gpu_compute", json_integer(req->compute_pct));
    if (body && req->has_mode)
        json_object_set_new(body, "compute_mode",
                            json_string(cg_compute_mode_name(req->compute_mode)));
    if (body && req->has_user) {
        json_object_set_new(body, "uid", json_integer(req->uid));
        json_object_set_new(body, "gid", json_integer(req->gid));
    }
    return cli_request("POST", "/v1/containers", body, ans, terr, tlen);
}

json_t *oci_register(const char *id, const struct oci_request *req, char *err, size_t errlen)
{
    char terr[512] = "", what[128], size[CG_SIZE_BUFLEN];
    snprintf(what, sizeof what, "cannot register container %.64s (%s of GPU memory)", id,
             cg_format_size(req->bytes, size, sizeof size));
    json_t *ans = NULL;
    long st = post(id, req, &ans, terr, sizeof terr);
    if (st == 409) {
        /* Registered already: a leftover if nothing runs in it, else a real conflict. */
        json_t *cur = NULL;
        char path[128], did[DAEMON_ID_MAX + 1];
        snprintf(path, sizeof path, "/v1/containers/%s", daemon_id(id, did));
        long gs = cli_request("GET", path, NULL, &cur, terr, sizeof terr);
        json_int_t procs = json_integer_value(json_object_get(cur, "processes"));
        json_decref(cur);
        if (gs == 200 && procs == 0) {
            json_t *del = NULL;
            cli_request("DELETE", path, NULL, &del, terr, sizeof terr);
            json_decref(del);
            json_decref(ans);
            ans = NULL;
            st = post(id, req, &ans, terr, sizeof terr);
        } else if (gs == 200) {
            snprintf(err, errlen, "%s: a container with this id is registered and has %lld "
                                  "running processes",
                     what, (long long)procs);
            json_decref(ans);
            return NULL;
        }
    }
    if (st != 201) {
        api_error(st, ans, terr, what, err, errlen);
        json_decref(ans);
        return NULL;
    }
    if (!json_is_string(json_object_get(ans, "dir")) ||
        !json_is_object(json_object_get(ans, "env"))) {
        snprintf(err, errlen, "%s: the daemon's answer has no \"dir\" or \"env\"", what);
        oci_release(id, terr, sizeof terr);
        json_decref(ans);
        return NULL;
    }
    return ans;
}

int oci_release(const char *id, char *err, size_t errlen)
{
    char path[128], terr[512] = "", what[128], did[DAEMON_ID_MAX + 1];
    snprintf(path, sizeof path, "/v1/containers/%s", daemon_id(id, did));
    snprintf(what, sizeof what, "cannot release container %.64s", id);
    json_t *ans = NULL;
    long st = cli_request("DELETE", path, NULL, &ans, terr, sizeof terr);
    int rc = 0;
    if (st != 200 && st != 204 && st != 404) {
        api_error(st, ans, terr, what, err, errlen);
        rc = -1;
    }
    json_decref(ans);
    return rc;
}

int oci_started(const char *id, long pid, char *err, size_t errlen)
{
    char path[128], did[DAEMON_ID_MAX + 1], terr[512] = "";
    snprintf(path, sizeof path, "/v1/containers/%s/start", daemon_id(id, did));
    json_t *ans = NULL;
    long st = cli_request("POST", path,
                          json_pack("{s:I,s:b}", "pid", (json_int_t)pid, "auto_remove", 1), &ans,
                          terr, sizeof terr);
    int rc = 0;
    if (st == 404) {
        rc = 1;
    } else if (st != 200) {
        char what[128];
        snprintf(what, sizeof what, "cannot report init pid %ld of %.64s", pid, id);
        api_error(st, ans, terr, what, err, errlen);
        rc = -1;
    }
    json_decref(ans);
    return rc;
}

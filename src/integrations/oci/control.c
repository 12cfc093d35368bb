/* control.c — registration, init report and release through the client library (convgpu_client.h). */
#include "control.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convgpu_client.h"
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

json_t *oci_register(const char *id, const struct oci_request *req, char *err, size_t errlen)
{
    char what[128], size[CG_SIZE_BUFLEN], did[DAEMON_ID_MAX + 1];
    snprintf(what, sizeof what, "cannot register container %.64s (%s of GPU memory)", id,
             cg_format_size(req->bytes, size, sizeof size));
    /* A stale registration under the same id without processes (a container that stopped
     * without its poststop hook) is replaced. */
    struct cg_client_spec s = {.id = daemon_id(id, did), .start_within = (unsigned)start_within(),
                               .replace_idle = true};
    if (req->nallocs) { /* Kubernetes: the daemon's records decide (api_alloc.h) */
        s.allocations = (const char *const *)req->allocs;
        s.nallocations = req->nallocs;
        if (req->pod && *req->pod)
            s.allocation_pod = req->pod;
        if (req->tenant[0])
            s.tenant = req->tenant;
    }
    s.gpu_memory = req->bytes; /* none: exclusive, the GPU's capacity */
    s.exclusive = req->exclusive;
    /* The profile's key (src/daemon/profile.h): one the daemon would refuse is not sent, so
     * an odd image or command name costs the container its profile, not its start. */
    if (cg_profile_key_valid(req->image))
        s.image = req->image;
    if (cg_profile_key_valid(req->command))
        s.command = req->command;
    if (strlen(id) > DAEMON_ID_MAX && strlen(id) <= 64)
        s.name = id;
    s.has_device = req->device >= 0;
    s.device = req->device;
    s.gpus = req->gpus;
    s.devices = req->devices;
    s.ndevices = req->ndevices;
    s.compute_pct = req->compute_pct;
    if (req->has_mode)
        s.compute_mode = cg_compute_mode_name(req->compute_mode);
    s.has_priority = req->has_priority;
    s.priority = req->priority;
    s.no_swap = req->no_swap;
    s.has_owner = req->has_user;
    s.uid = req->uid;
    s.gid = req->gid;
    struct cgc_error e;
    json_t *ans = cgc_create(&s, &e);
    if (!ans) {
        cgc_error_format(&e, what, err, errlen);
        return NULL;
    }
    if (!json_is_string(json_object_get(ans, "dir")) ||
        !json_is_object(json_object_get(ans, "env"))) {
        char terr[512];
        snprintf(err, errlen, "%s: the daemon's answer has no \"dir\" or \"env\"", what);
        oci_release(id, terr, sizeof terr);
        json_decref(ans);
        return NULL;
    }
    return ans;
}

int oci_release(const char *id, char *err, size_t errlen)
{
    char what[128], did[DAEMON_ID_MAX + 1];
    struct cgc_error e;
    if (cgc_remove(daemon_id(id, did), &e) == 0)
        return 0;
    snprintf(what, sizeof what, "cannot release container %.64s", id);
    cgc_error_format(&e, what, err, errlen);
    return -1;
}

int oci_started(const char *id, long pid, char *err, size_t errlen)
{
    char did[DAEMON_ID_MAX + 1];
    struct cgc_error e;
    int rc = cgc_start(daemon_id(id, did), pid, true, &e);
    if (rc < 0) {
        char what[128];
        snprintf(what, sizeof what, "cannot report init pid %ld of %.64s", pid, id);
        cgc_error_format(&e, what, err, errlen);
    }
    return rc;
}

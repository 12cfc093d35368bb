/* api_alloc.c — POST /v1/allocations and the claim of allocations by a create (api_alloc.h):
 * who may record one, the token, and how the records of one container combine into its limit,
 * share and GPUs (the rule the OCI shim applied to the plugin's environment before). */
#include "api_alloc.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "daemon.h"
#include "log.h"
#include "oversub.h"
#include "store.h"

static json_t *refuse(unsigned *status, unsigned code, const char *msg)
{
    *status = code;
    return json_pack("{s:s}", "error", msg);
}

json_t *api_alloc_post(struct daemon *d, const char *body, size_t len, bool operator,
                       unsigned *status)
{
    if (!operator)
        return refuse(status, 403, "only root, the daemon's user or an operator (the device "
                                   "plugin) may record an allocation");
    struct alloc_request r;
    char err[256];
    if (api_parse_alloc(body, len, d->ndevices, &r, err, sizeof err) != 0)
        return refuse(status, 400, err);
    if (!d->store)
        return refuse(status, 503, "allocations need the daemon's state.db");
    unsigned char raw[16];
    if (getrandom(raw, sizeof raw, 0) != (ssize_t)sizeof raw)
        return refuse(status, 500, "no randomness for a token");
    struct stored_allocation a = {.kind = (int)r.kind, .bytes = r.bytes, .device = r.device,
                                  .compute = r.compute, .ndevices = r.ndevices,
                                  .created_unix = (int64_t)time(NULL),
                                  .priority = r.has_priority ? (int)r.priority : -1,
                                  .no_swap = r.no_swap, .exclusive = r.exclusive};
    memcpy(a.devices, r.devices, sizeof a.devices);
    for (size_t i = 0; i < sizeof raw; i++)
        snprintf(a.token + 2 * i, 3, "%02x", raw[i]);
    bool full = false;
    int rc = store_alloc_add(d->store, &a, ALLOC_MAX_ROWS, a.created_unix - ALLOC_UNCLAIMED_TTL,
                             &full);
    if (rc != 0)
        return refuse(status, rc == -ENOSPC ? 507 : 503, store_error(d->store));
    if (full)
        return refuse(status, 507, "too many allocations are recorded (4096): unclaimed ones "
                                   "expire after an hour");
    *status = 201;
    return json_pack("{s:s}", "token", a.token);
}

unsigned api_alloc_resolve(struct daemon *d, struct create_request *req, char *msg, size_t len)
{
    struct stored_allocation got[API_MAX_ALLOCATIONS], *mem = NULL, *cmp = NULL, *gpus = NULL;
    int64_t now = (int64_t)time(NULL);
    if (!d->store) {
        snprintf(msg, len, "allocations need the daemon's state.db");
        return 503;
    }
    for (unsigned i = 0; i < req->nallocations; i++) {
        struct stored_allocation *a = &got[i];
        int rc = store_alloc_get(d->store, req->allocations[i], a);
        if (rc < 0) {
            snprintf(msg, len, "cannot read the allocations");
            return 503;
        }
        if (rc == 1 || (!a->claimed_by[0] && a->created_unix < now - ALLOC_UNCLAIMED_TTL)) {
            snprintf(msg, len, "no such allocation: the device plugin records one for each "
                               "resource it allocates (a token it did not give names nothing)");
            return 404;
        }
        if (a->claimed_by[0] && container_find(d, a->claimed_by)) {
            snprintf(msg, len, "the allocation is held by container %s: an allocation is "
                               "claimed once", a->claimed_by);
            return 409;
        }
        if (a->claimed_by[0] && (!req->allocation_pod[0] || strcmp(a->pod, req->allocation_pod))) {
            snprintf(msg, len, "the allocation was claimed by another pod");
            return 409;
        }
        struct stored_allocation **slot = a->kind == ALLOC_MEMORY    ? &mem
                                          : a->kind == ALLOC_COMPUTE ? &cmp
                                          : a->kind == ALLOC_GPUS    ? &gpus
                                                                     : NULL;
        if (!slot || *slot) {
            snprintf(msg, len, "a container holds one allocation of each resource");
            return 400;
        }
        *slot = a;
    }
    if (!mem) {
        snprintf(msg, len, "the container has GPU compute units or slots but no GPU memory "
                           "units: ask for convgpu.io/gpu-memory as well");
        return 400;
    }
    unsigned n = gpus ? gpus->ndevices : 1;
    if (n == 0 || mem->bytes % n || (cmp && cmp->compute % n) || (cmp && cmp->compute / n > 100) ||
        (gpus && n > d->ndevices)) {
        snprintf(msg, len, "the memory (%llu bytes) and compute (%u units) totals do not split "
                           "evenly over the container's %u GPUs, at most 100 units each",
                 (unsigned long long)mem->bytes, cmp ? cmp->compute : 0, n);
        return 400;
    }
    /* A container on one GPU never gets more than a GPU holds, whatever the units add up to:
     * with --oversubscribe a node lists more units than its GPUs have memory, and kubelet may
     * hand one container units of several GPUs. The plugin refuses this where the units are on
     * one GPU (handlers.c); units spread over GPUs are only known to be too many here, where
     * the container's GPU slots are known too. */
    uint64_t largest = 0, promised = 0;
    unsigned largest_at = 0;
    for (unsigned i = 0; i < d->ndevices; i++) {
        cg_device_info di = {0};
        cg_device_get(d->core, i, &di);
        if (di.capacity > largest) {
            largest = di.capacity;
            largest_at = i;
            promised = oversub_promised(d, i);
        }
    }
    if (!gpus && mem->bytes > largest) {
        snprintf(msg, len, "the container asks for %llu MiB of GPU memory on one GPU, more than "
                           "any GPU of this node has (the largest, GPU %u, has %llu MiB%s): a "
                           "GPU's memory units may be shared (convgpud --oversubscribe), but one "
                           "container's stay within one GPU; ask for less, or for convgpu.io/gpu: "
                           "N to spread it over N GPUs",
                 (unsigned long long)(mem->bytes >> 20), largest_at,
                 (unsigned long long)(largest >> 20),
                 promised > largest ? " and lists units for more" : "");
        return 400;
    }
    req->has_limit = true;
    req->limit = mem->bytes / n;
    /* The node operator's options, recorded by the plugin beside the memory (never the pod's). */
    if (mem->priority >= 0)
        req->priority = (unsigned)mem->priority;
    req->no_swap = req->no_swap || mem->no_swap;
    req->exclusive = mem->exclusive;
    req->device = gpus ? -1 : mem->device;
    if (req->device >= (int)d->ndevices) {
        snprintf(msg, len, "the allocation names GPU %d, which this node no longer has",
                 req->device);
        return 409;
    }
    if (cmp) {
        req->has_compute = true;
        req->compute_pct = cmp->compute / n;
    }
    if (gpus) {
        for (unsigned i = 0; i < n; i++) {
            if (gpus->devices[i] >= d->ndevices) {
                snprintf(msg, len, "the allocation names GPU %u, which this node no longer has",
                         gpus->devices[i]);
                return 409;
            }
            req->devices[i] = gpus->devices[i];
        }
        req->gpus = n;
        req->has_devices = true;
    }
    return 0;
}

int api_alloc_claim(struct daemon *d, const struct create_request *req, const char *id,
                    char *msg, size_t len)
{
    for (unsigned i = 0; i < req->nallocations; i++) {
        int rc = store_alloc_claim(d->store, req->allocations[i], id, req->allocation_pod);
        if (rc != 0) {
            snprintf(msg, len, "the allocation's claim could not be saved: %s",
                     store_error(d->store));
            return rc;
        }
    }
    return 0;
}

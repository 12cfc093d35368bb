/* topology.c — reads the GPUs' wiring through NVML once at start (see topology.h). Every call
 * is looked up with dlsym on the NVML the daemon already opened, so an NVML without them (old
 * drivers lack the NVLink remote-PCI call, vGPUs answer NOT_SUPPORTED) costs one log line and
 * leaves the pairs at the core's default, SYSTEM: placement then follows the policy alone. */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "daemon.h"
#include "gpu.h"
#include "log.h"
#include "topology.h"

struct topo_api {
    PFN_nvmlDeviceGetPciInfo_v3 pci;
    PFN_nvmlDeviceGetTopologyCommonAncestor ancestor;
    PFN_nvmlDeviceGetNvLinkState state;
    PFN_nvmlDeviceGetNvLinkRemotePciInfo_v2 remote;
};

static bool level_to_link(nvmlGpuTopologyLevel_t l, cg_link *out)
{
    switch (l) {
    case NVML_TOPOLOGY_INTERNAL: /* two GPUs on one board: nearer than any switch */
    case NVML_TOPOLOGY_SINGLE: *out = CG_LINK_SINGLE; return true;
    case NVML_TOPOLOGY_MULTIPLE: *out = CG_LINK_MULTIPLE; return true;
    case NVML_TOPOLOGY_HOSTBRIDGE: *out = CG_LINK_HOSTBRIDGE; return true;
    case NVML_TOPOLOGY_NODE: *out = CG_LINK_NODE; return true;
    case NVML_TOPOLOGY_SYSTEM: *out = CG_LINK_SYSTEM; return true;
    }
    return false;
}

/* Device i's active NVLinks, counted per peer (by the far end's PCI bus id) into
 * d->devices[i].nvlinks. NOT_SUPPORTED is a link the GPU lacks (every link of a GPU without
 * NVLink); any other error ends the count. */
static void read_nvlinks(struct daemon *d, const struct topo_api *api, nvmlDevice_t *h,
                         char busid[][NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE], unsigned i)
{
    for (unsigned link = 0; link < NVML_NVLINK_MAX_LINKS; link++) {
        nvmlEnableState_t on;
        nvmlReturn_t r = api->state(h[i], link, &on);
        if (r == NVML_ERROR_NOT_SUPPORTED)
            continue; /* a link this GPU lacks; later ones may exist */
        if (r != NVML_SUCCESS)
            break;
        if (on != NVML_FEATURE_ENABLED)
            continue;
        nvmlPciInfo_t far;
        if (api->remote(h[i], link, &far) != NVML_SUCCESS)
            continue;
        for (unsigned j = 0; j < d->ndevices; j++)
            if (j != i && busid[j][0] && strcasecmp(far.busId, busid[j]) == 0 &&
                d->devices[i].nvlinks[j] < UINT8_MAX)
                d->devices[i].nvlinks[j]++;
    }
}

void topology_read(struct daemon *d)
{
    struct nvml *n = d->nvml;
    if (!n || d->ndevices < 2)
        return;
    struct topo_api api;
    *(void **)&api.pci = dlsym(n->h, "nvmlDeviceGetPciInfo_v3");
    *(void **)&api.ancestor = dlsym(n->h, "nvmlDeviceGetTopologyCommonAncestor");
    *(void **)&api.state = dlsym(n->h, "nvmlDeviceGetNvLinkState");
    *(void **)&api.remote = dlsym(n->h, "nvmlDeviceGetNvLinkRemotePciInfo_v2");
    if (!api.pci || !api.ancestor) {
        log_warn("topology: NVML lacks %s; every pair of GPUs counts as SYSTEM",
                 !api.pci ? "nvmlDeviceGetPciInfo_v3" : "nvmlDeviceGetTopologyCommonAncestor");
        return;
    }
    nvmlDevice_t h[CG_MAX_DEVICES];
    char busid[CG_MAX_DEVICES][NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE];
    for (unsigned i = 0; i < d->ndevices; i++) {
        nvmlPciInfo_t pci;
        busid[i][0] = '\0';
        if (n->handle(i, &h[i]) != NVML_SUCCESS) {
            log_warn("topology: no handle for GPU %u; every pair counts as SYSTEM", i);
            return;
        }
        if (api.pci(h[i], &pci) == NVML_SUCCESS)
            snprintf(busid[i], sizeof busid[i], "%s", pci.busId);
        memset(d->devices[i].nvlinks, 0, sizeof d->devices[i].nvlinks);
    }
    for (unsigned i = 0; i < d->ndevices && api.state && api.remote; i++)
        read_nvlinks(d, &api, h, busid, i); /* every bus id known first */
    if (!api.state || !api.remote)
        log_warn("topology: NVML lacks the NVLink calls; NVLinks are not seen");
    bool warned = false;
    unsigned nvlinked = 0;
    for (unsigned a = 0; a < d->ndevices; a++)
        for (unsigned b = a + 1; b < d->ndevices; b++) {
            nvmlGpuTopologyLevel_t l;
            nvmlReturn_t r = api.ancestor(h[a], h[b], &l);
            cg_link link;
            bool known = r == NVML_SUCCESS && level_to_link(l, &link);
            if (!known && !warned) {
                log_warn("topology: NVML cannot say how GPUs %u and %u connect (%s); such pairs "
                         "count as SYSTEM", a, b, r == NVML_SUCCESS ? "unknown level"
                                                                    : n->errstr(r));
                warned = true;
            }
            /* Both ends must see the link: a half-reported NVLink is not trusted. */
            if (d->devices[a].nvlinks[b] && d->devices[b].nvlinks[a]) {
                link = CG_LINK_NVLINK;
                known = true;
                nvlinked++;
            }
            if (known)
                cg_topology_set(d->core, a, b, link);
        }
    log_info("topology: %u GPUs, %u NVLinked pairs", d->ndevices, nvlinked);
}

void topology_json_add(const struct daemon *d, unsigned i, json_t *obj)
{
    json_t *levels = json_object(), *links = json_object();
    for (unsigned j = 0; j < d->ndevices; j++) {
        if (j == i)
            continue;
        char key[16];
        snprintf(key, sizeof key, "%u", j);
        cg_link l = cg_topology_get(d->core, i, j);
        json_object_set_new(levels, key, json_string(cg_link_name(l)));
        if (l == CG_LINK_NVLINK)
            json_object_set_new(links, key, json_integer(d->devices[i].nvlinks[j]));
    }
    json_object_set_new(obj, "topology", levels);
    json_object_set_new(obj, "nvlinks", links);
}

/* nvml_topology.c — the emulated node's wiring, as NVML reports it: the PCIe path between two
 * GPUs (nvmlDeviceGetTopologyCommonAncestor, ...NearestGpus, nvmlSystemGetTopologyGpuSet),
 * peer-to-peer status, and NVLinks (state and the remote end's PCI address). The wiring is the
 * topology file CONVGPU_EMU_TOPOLOGY names (common/topology_file.h), read once at nvmlInit; a
 * file that does not parse, or names a GPU the node lacks, fails nvmlInit with the reason on
 * stderr, as a bad CONVGPU_EMU_DEVICES does. Without a file nothing is known of the wiring: every
 * pair is SYSTEM, peer-to-peer is unsupported and no GPU has NVLink.
 *
 * As a driver: a GPU with NVLink has EMU_NVLINKS links (an A100's 12, more when the file gives
 * it more, up to NVML_NVLINK_MAX_LINKS); its links go to its peers in ascending peer order, as
 * many each as the file says, and the rest are inactive. A GPU without NVLink answers
 * NOT_SUPPORTED to NVLink queries, as a PCIe card does; a link index at or above
 * NVML_NVLINK_MAX_LINKS is an invalid argument, one the GPU does not have is NOT_SUPPORTED.
 * Peer-to-peer over PCIe works up to the NUMA node (NODE) and not across sockets (SYS:
 * CHIPSET_NOT_SUPPORTED); atomics need NVLink. */
#include "nvml_int.h"

#include "topology_file.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EMU_NVLINKS 12u

static cg_topo g_topo; /* written once, at the first nvmlInit, under g_nvml.lock */

int emu_nvml_topology_load(unsigned ndev, char *err, size_t errlen)
{
    const char *path = getenv("CONVGPU_EMU_TOPOLOGY");
    memset(&g_topo, 0, sizeof g_topo);
    for (unsigned a = 0; a < CG_TOPO_MAX_GPUS; a++)
        for (unsigned b = 0; b < CG_TOPO_MAX_GPUS; b++)
            g_topo.path[a][b] = a == b ? 0 : CG_TOPO_SYSTEM;
    if (!path || !*path)
        return 0;
    cg_topo t;
    if (cg_topo_load(path, &t, err, errlen) != 0)
        return -1;
    if (t.ngpus > ndev) {
        snprintf(err, errlen, "%s: names GPU %u, but the emulated node has %u", path,
                 t.ngpus - 1, ndev);
        return -1;
    }
    g_topo = t;
    return 0;
}

static const nvmlGpuTopologyLevel_t levels[] = {
    [CG_TOPO_SINGLE] = NVML_TOPOLOGY_SINGLE,         [CG_TOPO_MULTIPLE] = NVML_TOPOLOGY_MULTIPLE,
    [CG_TOPO_HOSTBRIDGE] = NVML_TOPOLOGY_HOSTBRIDGE, [CG_TOPO_NODE] = NVML_TOPOLOGY_NODE,
    [CG_TOPO_SYSTEM] = NVML_TOPOLOGY_SYSTEM,
};

static nvmlGpuTopologyLevel_t level_of(unsigned a, unsigned b)
{
    return a == b ? NVML_TOPOLOGY_INTERNAL : levels[g_topo.path[a][b]];
}

static bool level_valid(nvmlGpuTopologyLevel_t l)
{
    return l == NVML_TOPOLOGY_INTERNAL || l == NVML_TOPOLOGY_SINGLE ||
           l == NVML_TOPOLOGY_MULTIPLE || l == NVML_TOPOLOGY_HOSTBRIDGE ||
           l == NVML_TOPOLOGY_NODE || l == NVML_TOPOLOGY_SYSTEM;
}

nvmlReturn_t nvmlDeviceGetTopologyCommonAncestor(nvmlDevice_t device1, nvmlDevice_t device2,
                                                 nvmlGpuTopologyLevel_t *pathInfo)
{
    emu_config cfg;
    unsigned a, b;
    nvmlReturn_t rc = emu_nvml_device(device1, &cfg, &a);
    if (rc == NVML_SUCCESS)
        rc = emu_nvml_device(device2, &cfg, &b);
    if (rc != NVML_SUCCESS)
        return rc;
    if (!pathInfo)
        return NVML_ERROR_INVALID_ARGUMENT;
    *pathInfo = level_of(a, b);
    return NVML_SUCCESS;
}

/* Fills up to *count handles of `match` (count 0: only how many there are). */
static nvmlReturn_t put_devices(const bool *match, unsigned ndev, unsigned int *count,
                                nvmlDevice_t *deviceArray)
{
    if (!count || (*count && !deviceArray))
        return NVML_ERROR_INVALID_ARGUMENT;
    unsigned n = 0, room = *count;
    for (unsigned i = 0; i < ndev; i++) {
        if (!match[i])
            continue;
        if (room && n < room)
            deviceArray[n] = &g_nvml.dev[i];
        n++;
    }
    *count = room && room < n ? room : n;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetTopologyNearestGpus(nvmlDevice_t device, nvmlGpuTopologyLevel_t level,
                                              unsigned int *count, nvmlDevice_t *deviceArray)
{
    emu_config cfg;
    unsigned a;
    nvmlReturn_t rc = emu_nvml_device(device, &cfg, &a);
    if (rc != NVML_SUCCESS)
        return rc;
    if (!level_valid(level))
        return NVML_ERROR_INVALID_ARGUMENT;
    bool match[EMU_MAX_DEVICES] = {false};
    for (unsigned b = 0; b < cfg.ndev; b++)
        match[b] = b != a && level_of(a, b) <= level;
    return put_devices(match, cfg.ndev, count, deviceArray);
}

/* The socket of every GPU: GPUs a NODE path (or nearer) joins share one; sockets are numbered
 * by their lowest GPU. Returns how many there are. */
static unsigned sockets(unsigned ndev, unsigned sock[EMU_MAX_DEVICES])
{
    unsigned n = 0;
    for (unsigned a = 0; a < ndev; a++) {
        sock[a] = n;
        for (unsigned b = 0; b < a; b++)
            if (g_topo.path[a][b] <= CG_TOPO_NODE) {
                sock[a] = sock[b];
                break;
            }
        if (sock[a] == n)
            n++;
    }
    return n;
}

nvmlReturn_t nvmlSystemGetTopologyGpuSet(unsigned int cpuNumber, unsigned int *count,
                                         nvmlDevice_t *deviceArray)
{
    emu_config cfg;
    nvmlReturn_t rc = emu_nvml_ready(&cfg);
    if (rc != NVML_SUCCESS)
        return rc;
    /* The host's CPUs split evenly over the sockets, in order. */
    long ncpu = sysconf(_SC_NPROCESSORS_CONF);
    if (ncpu < 1)
        ncpu = 1;
    if (cpuNumber >= (unsigned long)ncpu)
        return NVML_ERROR_INVALID_ARGUMENT;
    unsigned sock[EMU_MAX_DEVICES];
    unsigned nsock = sockets(cfg.ndev, sock);
    unsigned mine = (unsigned)((unsigned long long)cpuNumber * nsock / (unsigned long)ncpu);
    bool match[EMU_MAX_DEVICES] = {false};
    for (unsigned i = 0; i < cfg.ndev; i++)
        match[i] = sock[i] == mine;
    return put_devices(match, cfg.ndev, count, deviceArray);
}

nvmlReturn_t nvmlDeviceGetP2PStatus(nvmlDevice_t device1, nvmlDevice_t device2,
                                    nvmlGpuP2PCapsIndex_t p2pIndex, nvmlGpuP2PStatus_t *p2pStatus)
{
    emu_config cfg;
    unsigned a, b;
    nvmlReturn_t rc = emu_nvml_device(device1, &cfg, &a);
    if (rc == NVML_SUCCESS)
        rc = emu_nvml_device(device2, &cfg, &b);
    if (rc != NVML_SUCCESS)
        return rc;
    if (!p2pStatus || a == b || (unsigned)p2pIndex >= (unsigned)NVML_P2P_CAPS_INDEX_UNKNOWN)
        return NVML_ERROR_INVALID_ARGUMENT;
    bool nvlink = g_topo.nvlinks[a][b] > 0;
    bool pcie = g_topo.path[a][b] <= CG_TOPO_NODE;
    switch (p2pIndex) {
    case NVML_P2P_CAPS_INDEX_NVLINK:
        *p2pStatus = nvlink ? NVML_P2P_STATUS_OK : NVML_P2P_STATUS_NOT_SUPPORTED;
        break;
    case NVML_P2P_CAPS_INDEX_ATOMICS:
        *p2pStatus = nvlink ? NVML_P2P_STATUS_OK : NVML_P2P_STATUS_NOT_SUPPORTED;
        break;
    default:
        *p2pStatus = nvlink || pcie ? NVML_P2P_STATUS_OK : NVML_P2P_STATUS_CHIPSET_NOT_SUPPORTED;
        break;
    }
    return NVML_SUCCESS;
}

/* The peer at the far end of link `link` of GPU a: its index, or -1 when the link is inactive.
 * NVML's errors for a GPU without NVLink, a link index it does not take, or one the GPU lacks. */
static nvmlReturn_t nvlink_peer(nvmlDevice_t device, unsigned link, int *peer)
{
    emu_config cfg;
    unsigned a;
    nvmlReturn_t rc = emu_nvml_device(device, &cfg, &a);
    if (rc != NVML_SUCCESS)
        return rc;
    if (link >= NVML_NVLINK_MAX_LINKS)
        return NVML_ERROR_INVALID_ARGUMENT;
    unsigned used = cg_topo_links_of(&g_topo, a);
    unsigned has = used == 0 ? 0 : used > EMU_NVLINKS ? used : EMU_NVLINKS;
    if (link >= has)
        return NVML_ERROR_NOT_SUPPORTED;
    *peer = -1;
    for (unsigned b = 0, first = 0; b < cfg.ndev; b++) {
        if (link < first + g_topo.nvlinks[a][b]) {
            *peer = (int)b;
            break;
        }
        first += g_topo.nvlinks[a][b];
    }
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t device, unsigned int link,
                                      nvmlEnableState_t *isActive)
{
    int peer;
    nvmlReturn_t rc = nvlink_peer(device, link, &peer);
    if (rc != NVML_SUCCESS)
        return rc;
    if (!isActive)
        return NVML_ERROR_INVALID_ARGUMENT;
    *isActive = peer >= 0 ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t device, unsigned int link,
                                                 nvmlPciInfo_t *pci)
{
    int peer;
    nvmlReturn_t rc = nvlink_peer(device, link, &peer);
    if (rc != NVML_SUCCESS)
        return rc;
    if (!pci)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (peer < 0)
        return NVML_ERROR_NOT_SUPPORTED; /* an inactive link has no far end */
    return nvmlDeviceGetPciInfo_v3(&g_nvml.dev[peer], pci);
}

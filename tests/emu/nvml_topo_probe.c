/* nvml_topo_probe.c — reads a node's GPU topology through libnvidia-ml.so.1 the way real tools
 * do (dlopen, nothing linked but libdl), to check the emulated NVML against a topology file.
 *
 *   nvml_topo_probe matrix   one line per pair a < b: "a b LEVEL NVLINKS", LEVEL the common
 *                            ancestor (single, multiple, hostbridge, node, system), NVLINKS the
 *                            active links of a whose far end is b's PCI bus id
 *   nvml_topo_probe check    the return codes of bad calls, on a node whose GPU 0 has an
 *                            NVLink and whose last GPU has none; prints "ok" or what differed
 * Exit 0 when every call behaved, 1 otherwise. */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "nvml_types.h"

#define API(X)                                                                               \
    X(nvmlInit_v2) X(nvmlShutdown) X(nvmlDeviceGetCount_v2) X(nvmlDeviceGetHandleByIndex_v2) \
    X(nvmlDeviceGetPciInfo_v3) X(nvmlDeviceGetTopologyCommonAncestor)                        \
    X(nvmlDeviceGetTopologyNearestGpus) X(nvmlSystemGetTopologyGpuSet)                       \
    X(nvmlDeviceGetP2PStatus) X(nvmlDeviceGetNvLinkState) X(nvmlDeviceGetNvLinkRemotePciInfo_v2)

#define FIELD(n) PFN_##n n;
static struct { API(FIELD) } nv;
#undef FIELD

static int bad;

#define EXPECT(call, want)                                                                   \
    do {                                                                                     \
        nvmlReturn_t got_ = (call);                                                          \
        if (got_ != (want)) {                                                                \
            printf("line %d: %s returned %d, expected %d\n", __LINE__, #call, (int)got_,     \
                   (int)(want));                                                             \
            bad = 1;                                                                         \
        }                                                                                    \
    } while (0)

static const char *level_name(nvmlGpuTopologyLevel_t l)
{
    switch (l) {
    case NVML_TOPOLOGY_INTERNAL: return "internal";
    case NVML_TOPOLOGY_SINGLE: return "single";
    case NVML_TOPOLOGY_MULTIPLE: return "multiple";
    case NVML_TOPOLOGY_HOSTBRIDGE: return "hostbridge";
    case NVML_TOPOLOGY_NODE: return "node";
    case NVML_TOPOLOGY_SYSTEM: return "system";
    }
    return "?";
}

static unsigned nvlinks_between(nvmlDevice_t a, nvmlDevice_t b)
{
    nvmlPciInfo_t pb, remote;
    if (nv.nvmlDeviceGetPciInfo_v3(b, &pb) != NVML_SUCCESS)
        return 0;
    unsigned n = 0;
    for (unsigned link = 0; link < NVML_NVLINK_MAX_LINKS; link++) {
        nvmlEnableState_t on;
        if (nv.nvmlDeviceGetNvLinkState(a, link, &on) != NVML_SUCCESS || on != NVML_FEATURE_ENABLED)
            continue;
        if (nv.nvmlDeviceGetNvLinkRemotePciInfo_v2(a, link, &remote) == NVML_SUCCESS &&
            strcmp(remote.busId, pb.busId) == 0)
            n++;
    }
    return n;
}

static int matrix(unsigned n, nvmlDevice_t *d)
{
    for (unsigned a = 0; a < n; a++)
        for (unsigned b = a + 1; b < n; b++) {
            nvmlGpuTopologyLevel_t l, back;
            EXPECT(nv.nvmlDeviceGetTopologyCommonAncestor(d[a], d[b], &l), NVML_SUCCESS);
            EXPECT(nv.nvmlDeviceGetTopologyCommonAncestor(d[b], d[a], &back), NVML_SUCCESS);
            if (l != back) {
                printf("%u-%u: the common ancestor is not symmetric\n", a, b);
                bad = 1;
            }
            unsigned links = nvlinks_between(d[a], d[b]);
            if (links != nvlinks_between(d[b], d[a])) {
                printf("%u-%u: NVLinks not symmetric\n", a, b);
                bad = 1;
            }
            nvmlGpuP2PStatus_t st;
            EXPECT(nv.nvmlDeviceGetP2PStatus(d[a], d[b], NVML_P2P_CAPS_INDEX_NVLINK, &st),
                   NVML_SUCCESS);
            if ((st == NVML_P2P_STATUS_OK) != (links > 0)) {
                printf("%u-%u: P2P NVLink status %d with %u links\n", a, b, (int)st, links);
                bad = 1;
            }
            printf("%u %u %s %u\n", a, b, level_name(l), links);
        }
    return bad;
}

static int check(unsigned n, nvmlDevice_t *d)
{
    nvmlGpuTopologyLevel_t l;
    nvmlEnableState_t on;
    nvmlPciInfo_t pci;
    nvmlGpuP2PStatus_t st;
    nvmlDevice_t near[64];
    unsigned count;
    nvmlDevice_t last = d[n - 1], bogus = (nvmlDevice_t)&count;
    EXPECT(nv.nvmlDeviceGetTopologyCommonAncestor(d[0], d[1], NULL), NVML_ERROR_INVALID_ARGUMENT);
    EXPECT(nv.nvmlDeviceGetTopologyCommonAncestor(d[0], bogus, &l), NVML_ERROR_INVALID_ARGUMENT);
    EXPECT(nv.nvmlDeviceGetTopologyCommonAncestor(NULL, d[0], &l), NVML_ERROR_INVALID_ARGUMENT);
    EXPECT(nv.nvmlDeviceGetTopologyCommonAncestor(d[0], d[0], &l), NVML_SUCCESS);
    if (l != NVML_TOPOLOGY_INTERNAL) {
        printf("a GPU with itself: %d, expected INTERNAL\n", (int)l);
        bad = 1;
    }
    /* NVLink: GPU 0 has one, valid links beyond its 12 are NOT_SUPPORTED, 18 and up invalid. */
    EXPECT(nv.nvmlDeviceGetNvLinkState(d[0], 0, &on), NVML_SUCCESS);
    EXPECT(nv.nvmlDeviceGetNvLinkState(d[0], 11, &on), NVML_SUCCESS);
    EXPECT(nv.nvmlDeviceGetNvLinkState(d[0], 12, &on), NVML_ERROR_NOT_SUPPORTED);
    EXPECT(nv.nvmlDeviceGetNvLinkState(d[0], NVML_NVLINK_MAX_LINKS, &on),
           NVML_ERROR_INVALID_ARGUMENT);
    EXPECT(nv.nvmlDeviceGetNvLinkState(d[0], 0, NULL), NVML_ERROR_INVALID_ARGUMENT);
    EXPECT(nv.nvmlDeviceGetNvLinkRemotePciInfo_v2(d[0], 0, NULL), NVML_ERROR_INVALID_ARGUMENT);
    EXPECT(nv.nvmlDeviceGetNvLinkRemotePciInfo_v2(d[0], 11, &pci), NVML_ERROR_NOT_SUPPORTED);
    EXPECT(nv.nvmlDeviceGetNvLinkState(last, 0, &on), NVML_ERROR_NOT_SUPPORTED);
    EXPECT(nv.nvmlDeviceGetNvLinkRemotePciInfo_v2(last, 0, &pci), NVML_ERROR_NOT_SUPPORTED);
    EXPECT(nv.nvmlDeviceGetNvLinkState(bogus, 0, &on), NVML_ERROR_INVALID_ARGUMENT);
    /* P2P: a bad index, a missing out pointer, the same GPU twice. */
    EXPECT(nv.nvmlDeviceGetP2PStatus(d[0], d[1], NVML_P2P_CAPS_INDEX_UNKNOWN, &st),
           NVML_ERROR_INVALID_ARGUMENT);
    EXPECT(nv.nvmlDeviceGetP2PStatus(d[0], d[1], NVML_P2P_CAPS_INDEX_READ, NULL),
           NVML_ERROR_INVALID_ARGUMENT);
    EXPECT(nv.nvmlDeviceGetP2PStatus(d[0], d[0], NVML_P2P_CAPS_INDEX_READ, &st),
           NVML_ERROR_INVALID_ARGUMENT);
    /* Nearest GPUs: a level NVML does not define, a count without an array, the query form. */
    EXPECT(nv.nvmlDeviceGetTopologyNearestGpus(d[0], (nvmlGpuTopologyLevel_t)15, &count, near),
           NVML_ERROR_INVALID_ARGUMENT);
    count = 1;
    EXPECT(nv.nvmlDeviceGetTopologyNearestGpus(d[0], NVML_TOPOLOGY_SYSTEM, &count, NULL),
           NVML_ERROR_INVALID_ARGUMENT);
    count = 0;
    EXPECT(nv.nvmlDeviceGetTopologyNearestGpus(d[0], NVML_TOPOLOGY_SYSTEM, &count, NULL),
           NVML_SUCCESS);
    if (count != n - 1) {
        printf("nearest at SYSTEM: %u GPUs, expected every other (%u)\n", count, n - 1);
        bad = 1;
    }
    count = 64;
    EXPECT(nv.nvmlDeviceGetTopologyNearestGpus(d[0], NVML_TOPOLOGY_SYSTEM, &count, near),
           NVML_SUCCESS);
    for (unsigned i = 0; i < count; i++)
        if (near[i] == d[0]) {
            printf("a GPU is not its own nearest\n");
            bad = 1;
        }
    /* The GPU set of CPU 0 is GPU 0's socket; a CPU the host lacks is invalid. */
    count = 64;
    EXPECT(nv.nvmlSystemGetTopologyGpuSet(0, &count, near), NVML_SUCCESS);
    if (count == 0 || near[0] != d[0]) {
        printf("CPU 0's GPUs: %u, not starting at GPU 0\n", count);
        bad = 1;
    }
    EXPECT(nv.nvmlSystemGetTopologyGpuSet(1u << 30, &count, near), NVML_ERROR_INVALID_ARGUMENT);
    if (!bad)
        printf("ok\n");
    return bad;
}

int main(int argc, char **argv)
{
    if (argc != 2 || (strcmp(argv[1], "matrix") != 0 && strcmp(argv[1], "check") != 0)) {
        fprintf(stderr, "usage: nvml_topo_probe matrix|check\n");
        return 2;
    }
    void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "dlopen libnvidia-ml.so.1: %s\n", dlerror());
        return 1;
    }
#define LOAD(n)                                                                              \
    if (!(*(void **)&nv.n = dlsym(h, #n))) {                                                 \
        fprintf(stderr, "libnvidia-ml.so.1 lacks %s\n", #n);                                 \
        return 1;                                                                            \
    }
    API(LOAD)
#undef LOAD
    nvmlReturn_t rc = nv.nvmlInit_v2();
    if (rc != NVML_SUCCESS) {
        fprintf(stderr, "nvmlInit_v2: %d\n", (int)rc);
        return 1;
    }
    unsigned n = 0;
    nvmlDevice_t d[64];
    if (nv.nvmlDeviceGetCount_v2(&n) != NVML_SUCCESS || n < 2 || n > 64) {
        fprintf(stderr, "need 2 to 64 GPUs, NVML has %u\n", n);
        return 1;
    }
    for (unsigned i = 0; i < n; i++)
        EXPECT(nv.nvmlDeviceGetHandleByIndex_v2(i, &d[i]), NVML_SUCCESS);
    int r = strcmp(argv[1], "matrix") == 0 ? matrix(n, d) : check(n, d);
    nv.nvmlShutdown();
    return r;
}

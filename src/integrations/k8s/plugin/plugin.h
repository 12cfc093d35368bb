/* plugin.h — convgpu-device-plugin: convgpud's GPUs offered to kubelet as counted units.
 *
 * Follow one pod. The plugin serves the kubelet device plugin API (deviceplugin.proto, v1beta1)
 * on one socket per resource in the plugin directory (kubelet wants one endpoint per resource):
 * convgpu-memory.sock for convgpu.io/gpu-memory, convgpu-compute.sock for convgpu.io/gpu-compute,
 * convgpu-gpu.sock for convgpu.io/gpu (GPU slots: how many GPUs a container uses), and registers
 * each with kubelet.sock there. kubelet dials back and keeps ListAndWatch open: the
 * plugin sends the whole list of units (units.h: `gpu0-mem-0`, ...), each Healthy or Unhealthy,
 * and sends it again whenever convgpud's view changes (a poller reads GET /v1/devices). A pod that
 * asks for N units gets, through GetPreferredAllocation, N units on one GPU (least fragmentation,
 * src/core/units.c), and a pod that asks for G slots gets G GPUs that talk fastest (the
 * topology convgpud reports); kubelet then calls Allocate with the IDs it chose. The plugin
 * decides what they grant (the units' bytes and, when they are all on one GPU, that GPU; the
 * compute units; the slots' GPUs), records that with convgpud (POST /v1/allocations, which only
 * root, the daemon's user and operators may call) and answers with the token convgpud returned,
 * one variable per resource: CONVGPU_ALLOCATION, CONVGPU_ALLOCATION_COMPUTE,
 * CONVGPU_ALLOCATION_GPUS. The OCI shim, containerd's RuntimeClass handler in Kubernetes mode,
 * reads only those and registers the container from convgpud's records: a pod writes its own
 * environment, so no limit, device, exclusivity or tenant is ever read from it (issue 35).
 *
 * Invariants:
 * - Allocate validates the IDs against convgpud's devices (as last polled; read afresh before a
 *   refusal) and records one allocation per container with convgpud; kubelet gets the token
 *   only once convgpud has stored it. An invalid request (unknown, foreign or duplicated IDs, two
 *   slots of one GPU, a GPU that is gone, the daemon down or refusing the record) is refused
 *   with a gRPC error and a sentence saying why, and never answered with plain limits. A refused
 *   call records nothing for the container it refuses (an earlier container of the same call
 *   may leave a record no one holds; convgpud drops it unclaimed after an hour). The daemon is
 *   the authority on memory: it admits the container when the shim claims the allocation.
 * - A GPU's units stay listed once seen; they are Unhealthy while the daemon is unreachable or no
 *   longer lists that GPU, Healthy again when it does.
 * - kubelet restarts re-create kubelet.sock (and remove our sockets): on its creation the plugin
 *   serves its endpoints afresh and registers again.
 *
 * The gRPC side is C++ (rpc.cc over Debian's grpc++; the C core of gRPC has no usable server API
 * for a streaming service); it only converts messages and calls the C functions below, which hold
 * every decision.
 */
#ifndef CONVGPU_K8S_PLUGIN_H
#define CONVGPU_K8S_PLUGIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "units.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DP_API_VERSION "v1beta1"
#define DP_RESOURCE_MEMORY "convgpu.io/gpu-memory"
#define DP_RESOURCE_COMPUTE "convgpu.io/gpu-compute"
#define DP_RESOURCE_GPU "convgpu.io/gpu"
#define DP_ENDPOINT_MEMORY "convgpu-memory.sock"
#define DP_ENDPOINT_COMPUTE "convgpu-compute.sock"
#define DP_ENDPOINT_GPU "convgpu-gpu.sock"
/* Allocate's answer, one variable per resource: the token of convgpud's record (the OCI shim's
 * OCI_ENV_ALLOCATION*, src/integrations/oci/spec.h). */
#define DP_ENV_ALLOCATION "CONVGPU_ALLOCATION"
#define DP_ENV_ALLOCATION_COMPUTE "CONVGPU_ALLOCATION_COMPUTE"
#define DP_ENV_ALLOCATION_GPUS "CONVGPU_ALLOCATION_GPUS"
#define DP_TOKEN_LEN 32 /* convgpud's tokens: 128 bits, lowercase hex */
#define DP_KUBELET_SOCKET "kubelet.sock"
#define DP_COMPUTE_UNITS 100u /* 1% each */
#define DP_MAX_GPUS 64
#define DP_DEFAULT_SLOTS 8u /* convgpu.io/gpu slots per GPU */
#define DP_MAX_SLOTS 1000u

/* gRPC status codes the C side answers with (the numbers are gRPC's). */
enum dp_code {
    DP_OK = 0,
    DP_INVALID_ARGUMENT = 3,
    DP_PERMISSION_DENIED = 7,
    DP_RESOURCE_EXHAUSTED = 8,
    DP_FAILED_PRECONDITION = 9,
    DP_INTERNAL = 13,
    DP_UNAVAILABLE = 14,
};

/* ---- convgpud's devices as the plugin last saw them (inventory.c) -------------------------- */
struct dp_gpu {
    unsigned index;
    char uuid[96];
    uint64_t capacity; /* assignable bytes (the daemon's "capacity") */
    /* What the GPU promises (the daemon's "promised": capacity x its sharing factor; the
     * capacity from a daemon before the factor): memory units are advertised from this, while
     * one container's units on one GPU stay within capacity. */
    uint64_t promised;
    bool present;      /* the daemon lists it now */
    /* The links convgpud reports to other GPUs (its "topology"); one not listed is system. */
    size_t nlinks;
    struct dp_link {
        unsigned peer;  /* the other GPU's index */
        unsigned level; /* a cg_link */
    } links[DP_MAX_GPUS];
};

struct dp_inventory {
    bool daemon_up;
    size_t ngpus; /* sorted by index */
    struct dp_gpu gpus[DP_MAX_GPUS];
};

struct dp_config;
/* How many units of a kind a GPU offers. */
unsigned dp_gpu_units(const struct dp_gpu *g, cg_unit_kind kind, const struct dp_config *cfg);
const struct dp_gpu *dp_inventory_find(const struct dp_inventory *inv, unsigned index);
/* The cost of talking between GPUs a and b (cg_link_cost of their reported level; system when
 * unknown). ctx is the inventory: a cg_gpu_cost_fn. */
unsigned dp_gpu_cost(const void *inventory, unsigned a, unsigned b);

/* ---- the plugin's settings and shared state (state.c) -------------------------------------- */
struct dp_config {
    char plugin_dir[256]; /* kubelet's device plugin directory */
    uint64_t unit_bytes;  /* one memory unit */
    unsigned gpu_slots;   /* convgpu.io/gpu IDs per GPU */
    int poll_ms;          /* how often convgpud's devices are read */
    /* The node operator's container options (--priority, --no-swap, --exclusive; the option
     * table's CGC_DOOR_K8S rows): written into every memory record, so that every container
     * whose memory this plugin allocates gets them. Never from the pod: Allocate names no pod,
     * and what a pod's author writes is not read (docs/KUBERNETES.md). */
    bool has_priority;    /* --priority given; else convgpud's default */
    unsigned priority;    /* 0-9 */
    bool no_swap;
    bool exclusive;
};

/* Set once at start, before any thread runs. */
void dp_configure(const struct dp_config *c);
const struct dp_config *dp_config_get(void);

/* The inventory: reads take a copy; a change (anything but an identical snapshot) moves the
 * generation on and wakes dp_wait_change. */
void dp_state_get(struct dp_inventory *out, uint64_t *generation);
/* Reads convgpud's devices now and stores what it finds (GPUs it no longer lists kept, marked
 * absent; all absent when it is unreachable). Returns 0, or -1 with err when unreachable. */
int dp_refresh(struct dp_inventory *out, char *err, size_t errlen);
/* Waits until the generation differs from seen or timeout_ms passes. Returns the generation. */
uint64_t dp_wait_change(uint64_t seen, int timeout_ms);
/* Wakes every waiter (shutdown). */
void dp_wake_all(void);

/* ---- what the RPCs do (handlers.c): C in, C out -------------------------------------------- */
struct dp_device {
    char id[CG_UNIT_ID_MAX];
    bool healthy;
};

/* ListAndWatch: the units of a kind in the inventory. Returns a malloc'ed array (*n entries). */
struct dp_device *dp_list_units(const struct dp_inventory *inv, cg_unit_kind kind, size_t *n);

struct dp_env {
    const char *name;
    char value[DP_TOKEN_LEN + 1];
};
#define DP_MAX_ENVS 1

/* What kubelet's IDs for one container grant, as convgpud records it (POST /v1/allocations). */
struct dp_grant {
    cg_unit_kind kind;
    uint64_t bytes;  /* memory: the units' bytes */
    int device;      /* memory: their GPU when they are all on one, else -1 (convgpud places) */
    unsigned compute; /* compute: the units; the share applies on the memory's GPU(s) */
    size_t ngpus;    /* slots: their GPUs, ascending */
    unsigned gpus[DP_MAX_GPUS];
    bool has_priority; /* memory: the operator's options (dp_config) */
    unsigned priority;
    bool no_swap, exclusive;
};

/* Allocate for one container: validates ids against the inventory (a refusal against a fresh
 * read of convgpud), records the grant with convgpud and fills envs with its token. Returns
 * DP_OK or a code with msg; nothing is answered unless convgpud stored the record. */
int dp_allocate(cg_unit_kind kind, const char *const *ids, size_t nids, struct dp_env *envs,
                size_t *nenvs, char *msg, size_t msglen);
/* The decision on a given inventory: what ids grant (no I/O; unit-tested). */
int dp_allocate_on(const struct dp_inventory *inv, const struct dp_config *cfg, cg_unit_kind kind,
                   const char *const *ids, size_t nids, struct dp_grant *out, char *msg,
                   size_t msglen);
/* The variable a grant's token goes in. */
const char *dp_grant_env(cg_unit_kind kind);
/* POST /v1/allocations' body for a grant ({"gpu_memory": B[, "device": N][, "priority": P]
 * [, "swap": false][, "exclusive": true]}, {"gpu_compute": U} or {"devices": [I, ...]}),
 * written to buf. Returns 0, or -1 when it does not fit. */
int dp_grant_body(const struct dp_grant *g, char *buf, size_t len);
/* Records a grant with convgpud (state.c) and writes its token (DP_TOKEN_LEN hex digits). Returns
 * DP_OK, or a code (dp_code_of_status) with msg carrying convgpud's reason. */
int dp_record(const struct dp_grant *g, char token[DP_TOKEN_LEN + 1], char *msg, size_t msglen);
/* The one map from convgpud's answer to POST /v1/allocations (its HTTP status, 0 when it could
 * not be reached) to the gRPC code kubelet gets. */
int dp_code_of_status(long status);

/* GetPreferredAllocation for one container: writes the chosen ids' positions in avail to out
 * (size entries). Returns DP_OK or a code with msg. dp_prefer reads the poller's inventory
 * (the topology, for slots); dp_prefer_on decides on a given one (no I/O; unit-tested). */
int dp_prefer(cg_unit_kind kind, const char *const *avail, size_t navail,
              const char *const *must, size_t nmust, long size, size_t *out, char *msg,
              size_t msglen);
int dp_prefer_on(const struct dp_inventory *inv, cg_unit_kind kind, const char *const *avail,
                 size_t navail, const char *const *must, size_t nmust, long size, size_t *out,
                 char *msg, size_t msglen);

const char *dp_resource_name(cg_unit_kind kind);

/* ---- the gRPC side (rpc.cc) ---------------------------------------------------------------- */
/* Serves the three endpoints (removing stale sockets first). Returns 0, or -1 with err. */
int dp_rpc_serve(char *err, size_t errlen);
/* Stops serving (open ListAndWatch streams end) and removes the sockets. */
void dp_rpc_stop(void);
/* Registers the three endpoints with kubelet.sock. Returns 0, or -1 with err. */
int dp_rpc_register(char *err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif

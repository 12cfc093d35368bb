/* dra.h — convgpu-dra-driver: convgpud's GPUs offered to Kubernetes through Dynamic Resource
 * Allocation (resource.k8s.io/v1), driver gpu.convgpu.io.
 *
 * Follow one claim. The driver publishes a ResourceSlice for its node (slices.c): one device per
 * GPU, `gpu-<index>`, with its attributes and two capacities, `memory` (bytes) and `compute`
 * (percent), allowMultipleAllocations and a request policy (memory: at least 256 MiB in steps of
 * 256 MiB; compute: 1 to 100 in steps of 1). The memory capacity is what the GPU promises
 * (convgpud's "promised": its memory times `convgpud --oversubscribe`), so the scheduler may hand
 * out more than the GPU has, as far as the operator chose. With --partitions N it publishes instead
 * N fixed partitions per GPU that consume a shared counter set (clusters without consumable
 * capacity). The scheduler allocates a claim (`memory: 2Gi` of gpu-0) and writes it into the
 * claim's status.allocation; kubelet calls NodePrepareResources with the claim's namespace, name
 * and UID (rpc.cc). The driver reads the claim from the API server (k8s_api.h), checks that
 * the UID is the one kubelet named, decodes what was allocated to this driver on this node
 * (claim.c, fuzzed), and turns it into one convgpud container owned by the claim: id
 * `dra-<claim UID>`, the memory limit, the compute share and the GPU, created through the client
 * library by the driver, which runs as root: a pod never reaches the control socket, so nothing
 * a pod writes sets the limit. It writes a CDI spec for the claim (cdi.c) whose one device,
 * `gpu.convgpu.io/claim=<UID>`, mounts that container's directory (its socket) at /run/convgpu,
 * the interposer and an /etc/ld.so.preload that loads it, and answers kubelet with that CDI
 * device ID; the container runtime applies the edits. Every container of every pod that uses the
 * claim joins the same convgpud container (a shared claim is one budget). NodeUnprepareResources
 * removes the container and the spec.
 *
 * Invariants:
 * - Prepare is idempotent: a claim already prepared (its record under the state directory and
 *   its container alive) answers the same CDI ID and creates nothing.
 * - A failed prepare leaves nothing: no container, no spec, no record.
 * - Unprepare of a claim never prepared, or already unprepared, succeeds.
 * - Only results whose driver is gpu.convgpu.io and whose pool is this node's are read.
 */
#ifndef CONVGPU_K8S_DRA_H
#define CONVGPU_K8S_DRA_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "k8s_api.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DRA_DRIVER "gpu.convgpu.io"
#define DRA_CDI_KIND "gpu.convgpu.io/claim"
#define DRA_API_GROUP "resource.k8s.io/v1"
#define DRA_MEMORY_STEP (256ull << 20) /* the request policy's minimum and step */
#define DRA_MAX_GPUS 64
#define DRA_MAX_RESULTS 32
#define DRA_ID_PREFIX "dra-"
#define DRA_UID_MAX 60 /* a container id is at most 64 characters */
#define DRA_MAX_PODS 32 /* the pods of a claim's reservedFor the driver reads */
#define DRA_PRIORITY_ROWS 16

/* ---- pod priority to convgpu priority (priority.c: no I/O) ------------------------------------ */
/* The operator's --priority-map: rows "VALUE:PRIORITY", each a PriorityClass value (a 32-bit
 * integer, as spec.priority is) and the convgpu priority (0-9) that value and those above it up
 * to the next row get. Kept sorted by value, highest first; a higher value never maps to a lower
 * priority (Kubernetes: a higher value is more important). No rows: every claim gets 0. */
struct dra_priority_map {
    size_t n;
    struct {
        int64_t at_least;
        unsigned priority;
    } rows[DRA_PRIORITY_ROWS];
};
/* Parses "1000000000:9,1000:5,0:0". Returns 0, or -1 with err naming the bad row (out is then
 * empty). */
int dra_priority_map_parse(const char *text, struct dra_priority_map *out, char *err,
                           size_t errlen);
/* The convgpu priority of a pod priority: the row with the highest value at most `value`; none
 * (or no rows): 0. */
unsigned dra_priority_of(const struct dra_priority_map *m, int64_t value);
/* Decodes a Pod (v1, JSON) as the API server returns it: its namespace, name and uid must be the
 * ones named (a pod deleted and created again under the same name is another pod), and
 * spec.priority, when present, a 32-bit integer; absent (no Priority admission) is 0. Returns 0
 * with *priority, or -1 with err. */
int dra_pod_priority(json_t *pod, const char *ns, const char *name, const char *uid,
                     int64_t *priority, char *err, size_t errlen);

/* ---- settings (main.c) ----------------------------------------------------------------------- */
struct dra_config {
    char plugin_dir[256];   /* the driver's own directory: dra.sock */
    char registry_dir[256]; /* kubelet's plugins_registry: gpu.convgpu.io-reg.sock */
    char cdi_dir[256];      /* where the per-claim CDI specs go (/var/run/cdi) */
    char state_dir[256];    /* the prepared claims' records */
    char node[254];         /* this node: the pool's name and nodeName */
    unsigned partitions;    /* 0: consumable capacity; N: N fixed partitions per GPU */
    bool publish;           /* publish ResourceSlices (off: another component does) */
    unsigned owner_uid, owner_gid; /* who owns the claim containers' sockets */
    struct dra_priority_map priority_map; /* --priority-map; no rows: priority 0 */
};

/* ---- quantities and the claim (claim.c: no I/O, fuzzed) -------------------------------------- */
/* A Kubernetes quantity ("2Gi", "2147483648", "512Mi", "1G", "30", "1.5Gi", "500m") as a whole
 * number, rounded up (quantities round up, as the API server's do). Returns 0, or -1 for
 * anything else (negative, too large, malformed). */
int dra_quantity_parse(const char *text, uint64_t *out);

/* What one allocation result gives: a whole GPU, a share of one, or a partition of one. */
struct dra_result {
    char request[128];
    char device[64];
    unsigned gpu;         /* the GPU's index, from the device name */
    int partition;        /* -1: the GPU itself */
    bool has_memory, has_compute; /* consumedCapacity carried them */
    uint64_t memory;      /* bytes */
    unsigned compute;     /* percent */
};

struct dra_claim {
    char uid[DRA_UID_MAX + 1];
    char namespace_[64];
    char name[254];
    size_t nresults;
    struct dra_result results[DRA_MAX_RESULTS];
    /* status.reservedFor's pods (resource "pods" of the core group), in the claim's namespace */
    size_t npods;
    bool pods_truncated; /* more than DRA_MAX_PODS */
    struct {
        char name[254];
        char uid[DRA_UID_MAX + 1];
    } pods[DRA_MAX_PODS];
};

/* Decodes a ResourceClaim (resource.k8s.io/v1, JSON) as the API server returns it: metadata's
 * uid must be want_uid, and status.allocation must hold at least one result for DRA_DRIVER in
 * pool `pool`. status.reservedFor's pods are kept (name and uid checked); other consumers are
 * skipped. Others' results are skipped. Device names are gpu-<index> or gpu-<index>-part-<n>.
 * Returns 0, or -1 with err saying what is wrong (nothing of out is then meaningful). */
int dra_claim_decode(json_t *claim, const char *want_uid, const char *pool, struct dra_claim *out,
                     char *err, size_t errlen);
/* The same from text (the fuzzer's entry). */
int dra_claim_decode_text(const char *text, size_t len, const char *want_uid, const char *pool,
                          struct dra_claim *out, char *err, size_t errlen);

/* A claim UID as it may enter a path and a container id: 1-60 of [A-Za-z0-9-]. */
bool dra_uid_valid(const char *uid);

/* ---- the GPUs (inventory.c) ------------------------------------------------------------------ */
struct dra_gpu {
    unsigned index;
    char name[128];
    char uuid[96];
    uint64_t total;    /* its memory */
    uint64_t capacity; /* what convgpud may assign on it */
    uint64_t promised; /* capacity x the oversubscription factor */
};

struct dra_inventory {
    size_t ngpus;
    struct dra_gpu gpus[DRA_MAX_GPUS];
};

/* Decodes GET /v1/devices. Returns 0, or -1 with err. */
int dra_inventory_decode(json_t *devices, struct dra_inventory *out, char *err, size_t errlen);
const struct dra_gpu *dra_inventory_find(const struct dra_inventory *inv, unsigned index);

/* ---- the container a claim becomes (grant.c: no I/O) ----------------------------------------- */
struct dra_grant {
    uint64_t memory;  /* per GPU */
    unsigned compute; /* per GPU; 0: none */
    size_t ngpus;
    unsigned gpus[DRA_MAX_GPUS];
};

/* What a decoded claim grants on this node's GPUs: the results on one GPU add up; results on
 * several GPUs must give each the same amounts (convgpud splits a multi-GPU container evenly).
 * A whole GPU gives what it promises; a partition its share (cfg->partitions). Refused: a GPU this
 * node lacks, no memory at all, more than the GPU promises, compute above 100. */
int dra_grant_of(const struct dra_claim *c, const struct dra_inventory *inv, unsigned partitions,
                 struct dra_grant *out, char *err, size_t errlen);

/* ---- ResourceSlices (slices.c: no I/O) ------------------------------------------------------- */
/* The slices of this node's pool at generation gen: one with the devices, and with partitions a
 * second with the shared counters (a slice holds devices or counters, not both). Returns a JSON
 * array of ResourceSlice objects (new reference), NULL when out of memory. */
json_t *dra_slices(const struct dra_inventory *inv, const char *node, unsigned partitions,
                   long gen);
/* The name of slice i of a node's pool. */
void dra_slice_name(const char *node, size_t i, char *out, size_t len);

/* ---- the CDI spec of a claim (cdi.c) --------------------------------------------------------- */
/* The spec for a prepared claim: created is convgpud's create answer (dir, env: the node's
 * variables and the container's); node_env, when not NULL, more variables under it (/v1/version's
 * "node_env"). Returns a new reference, NULL with err. */
json_t *dra_cdi_spec(const char *uid, json_t *node_env, json_t *created, const char *preload_file,
                     char *err, size_t errlen);
/* The CDI device ID kubelet gets: "gpu.convgpu.io/claim=<uid>". */
void dra_cdi_id(const char *uid, char *out, size_t len);

/* ---- the API server (k8s_api.h; apiserver.c) ------------------------------------------------ */
/* Creates or replaces this node's slices. Returns 0, or -1 with err. */
int dra_publish(const struct k8s_api *api, json_t *slices, char *err, size_t errlen);

/* ---- prepare and unprepare (prepare.c) ------------------------------------------------------- */
void dra_configure(const struct dra_config *cfg, const struct k8s_api *api);
const struct dra_config *dra_config_get(void);

struct dra_prepared {
    char pool[254];
    char device[64];
    char request[128];
    char cdi_id[128];
};
/* Prepares one claim. Returns 0 with *n entries in out (one per result), or -1 with err (the
 * per-claim error kubelet gets). Serialised: one claim at a time. */
int dra_prepare(const char *ns, const char *name, const char *uid, struct dra_prepared *out,
                size_t cap, size_t *n, char *err, size_t errlen);
/* Unprepares one claim. Returns 0, or -1 with err. */
int dra_unprepare(const char *ns, const char *name, const char *uid, char *err, size_t errlen);

/* Reads convgpud's GPUs and, when they changed or force is set, publishes the slices. Returns 0,
 * or -1 with err. */
int dra_refresh_slices(bool force, char *err, size_t errlen);

/* ---- the gRPC side (rpc.cc) ------------------------------------------------------------------ */
/* Serves dra.sock and the registration socket. Returns 0, or -1 with err. */
int dra_rpc_serve(char *err, size_t errlen);
void dra_rpc_stop(void);
/* Whether kubelet reported the registration (and its error when it refused). */
bool dra_rpc_registered(char *err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif

/* api_alloc.h — allocations: how a limit reaches a Kubernetes container only from the party
 * that may set it, the device plugin (issue 35 item 5).
 *
 * Follow one container. kubelet calls the plugin's Allocate once per resource; the plugin
 * records what it allocated with POST /v1/allocations ({"gpu_memory": BYTES, "device": N,
 * and the operator's "priority", "swap": false and "exclusive" the plugin was started with},
 * {"gpu_compute": UNITS} or {"devices": [I, J]}), which only root, the daemon's user and
 * operators may call, and answers kubelet with the token the daemon returned (128 random bits,
 * hex) in CONVGPU_ALLOCATION, CONVGPU_ALLOCATION_COMPUTE or CONVGPU_ALLOCATION_GPUS. The OCI
 * shim, in Kubernetes mode, reads only those variables and creates the container with
 * {"allocation": [TOKENS], "allocation_pod": SANDBOX}: the limit, the share and the GPUs are
 * this file's records, never the bundle's. So a pod's own environment or annotations cannot
 * raise a limit, name a device or make a container exclusive, a guessed token names nothing
 * (404), and a token claimed by a live container, or by another pod, is refused (409).
 *
 * Invariants: rows live in state.db (table allocations); an unclaimed one expires after
 * ALLOC_UNCLAIMED_TTL seconds (kubelet allocates before it pulls the image), at most
 * ALLOC_MAX_ROWS are kept (the plugin is refused beyond, 507); a claimed one stays with its pod:
 * a restart of the container (same pod, the earlier container gone) claims it again. */
#ifndef CONVGPUD_API_ALLOC_H
#define CONVGPUD_API_ALLOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "api_parse.h"
#include "core.h"

enum alloc_kind { ALLOC_MEMORY = 1, ALLOC_COMPUTE = 2, ALLOC_GPUS = 3 };
#define ALLOC_MAX_ROWS 4096
#define ALLOC_UNCLAIMED_TTL 3600
#define ALLOC_MAX_BYTES (1ull << 50)

struct alloc_request {
    enum alloc_kind kind;
    uint64_t bytes;       /* memory */
    int device;           /* memory: -1 when the units are on several GPUs */
    unsigned compute;     /* compute: 1..100 x CG_MAX_DEVICES units */
    unsigned ndevices;    /* slots */
    unsigned devices[CG_MAX_DEVICES];
    /* memory: the node operator's options for the container (the plugin's --priority,
     * --no-swap, --exclusive): "priority" 0-9, "swap": false, "exclusive": true. */
    bool has_priority;
    unsigned priority;
    bool no_swap, exclusive;
};

/* POST /v1/allocations' body: exactly one of the three shapes above, every number bounded
 * (ndevices: this node's GPUs). Pure (no daemon state), fuzzed (fuzz/fuzz_api.c). Returns 0, or
 * -1 with err saying what to send. */
int api_parse_alloc(const char *body, size_t len, unsigned ndevices, struct alloc_request *out,
                    char *err, size_t errlen);

struct daemon;
/* POST /v1/allocations from a caller (operator: root, the daemon's user or an operator).
 * Returns the answer ({"token": T} with 201) and its status in *status; NULL out of memory. */
json_t *api_alloc_post(struct daemon *d, const char *body, size_t len, bool operator,
                       unsigned *status);

/* For a create with "allocation": fills req's limit, device(s), gpus and compute share from
 * the records of req->allocations. Returns 0, or the HTTP status to answer (400, 404, 409,
 * 503) with msg. Changes nothing. */
unsigned api_alloc_resolve(struct daemon *d, struct create_request *req, char *msg, size_t len);
/* Records that container id (of pod) holds req's allocations. Returns 0, or a store error
 * (store.h) with msg. */
int api_alloc_claim(struct daemon *d, const struct create_request *req, const char *id,
                    char *msg, size_t len);

#endif

/* api_parse.h — strict parsing of control-API request bodies into plain structs. Pure
 * functions (no daemon state), so they are fuzzed directly (fuzz/fuzz_api.c). */
#ifndef CONVGPUD_API_PARSE_H
#define CONVGPUD_API_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profile_key.h"
#include "core.h"
#include "tenant.h"

struct create_request {
    bool has_limit;  /* "gpu_memory" given; else the profile or the device decides, or the
                      * daemon refuses (api.c) */
    uint64_t limit;
    char id[65];     /* "" = daemon chooses */
    char name[65];   /* "" = none */
    int device;      /* -1 = placement policy chooses */
    bool auto_remove;
    bool has_owner;  /* uid/gid given: the container's user (root or the daemon's user only) */
    uint32_t uid, gid;
    /* "gpu_compute": an integer 1..100, or null for no compute limit. Absent: the daemon's
     * default-gpu-compute applies. */
    bool has_compute;
    unsigned compute_pct;        /* 0 (null) or 1..100 when has_compute */
    bool has_mode;               /* "compute_mode": "hard" or "elastic" */
    cg_compute_mode compute_mode;
    unsigned priority;           /* "priority": 0..9 (0 when absent) */
    bool no_swap;                /* "swap": false */
    char tenant[33];             /* "tenant": "" = the owner's user (tenant.h) */
    bool exclusive;              /* "exclusive": a whole device (src/core/exclusive.c) */
    bool profile_limit;          /* "profile_limit": take the limit from the profile */
    char image[256];             /* "image": the profile key, when an integration knows it */
    char command[256];           /* "command": its basename is the key when there is no image */
    /* "gpus": 1..the node's GPUs (1 when absent), the limit and share being per GPU; "devices":
     * the GPUs' indexes, distinct, as many as "gpus" (absent: placement chooses; not with
     * "device"). */
    unsigned gpus;
    bool has_devices;
    unsigned devices[CG_MAX_DEVICES];
    bool no_profile;             /* "profile": false: its run is not recorded (a measurement
                                  * that runs it slowed down on purpose); the key still reads */
    /* "start_within": seconds 1..API_START_WITHIN_MAX (0 when absent): removed unless its init
     * is reported (POST .../start) by then; the CDI hook and the OCI shim set it. */
    unsigned start_within;
    /* "allocation": a token (or an array of up to API_MAX_ALLOCATIONS distinct tokens, one per
     * kind of resource) the device plugin's POST /v1/allocations returned (api_alloc.h): the
     * limit, share and GPUs come from the daemon's records, so gpu_memory, gpu_compute,
     * compute_mode, device, devices, gpus, exclusive and profile_limit are refused beside it.
     * "allocation_pod": who claims it (the pod's sandbox id): a claimed allocation may be claimed
     * again only for the same pod, once its earlier container is gone (a restart). */
    unsigned nallocations;
    char allocations[3][33];
    char allocation_pod[65];
};
#define API_START_WITHIN_MAX 3600
#define API_MAX_ALLOCATIONS 3
#define API_ALLOCATION_TOKEN_LEN 32

/* PUT /v1/containers/{id}/limit: any of "gpu_memory" (a size), "gpu_compute" (1..100, or null
 * to remove the share), "compute_mode", at least one. */
struct update_request {
    bool has_limit;
    uint64_t limit;
    bool has_compute;
    unsigned compute_pct;        /* 0: remove the share */
    bool has_mode;
    cg_compute_mode compute_mode;
    bool has_priority;           /* "priority": 0..9 */
    unsigned priority;
};

struct policy_request {
    bool has_resume, has_placement;
    cg_resume_policy resume;
    cg_placement_policy placement;
};

/* A container id or name: 1-64 of [A-Za-z0-9_.-], not starting with '.' or '-' (it becomes a
 * directory name in the runtime directory). */
bool api_valid_name(const char *s);

/* An allocation token: API_ALLOCATION_TOKEN_LEN lowercase hex digits. */
bool api_valid_token(const char *s);

/* A tenant name: 1-32 of [A-Za-z0-9_.-], not starting with '.' or '-'. */
bool api_valid_tenant(const char *s);

/* PUT /v1/tenants/{name}: {"weight": W}, W a whole number 1..CG_TENANT_WEIGHT_MAX. */
/* PUT /v1/tenants/NAME: struct tenant_request (tenant.h, the service's own input). */

/* Each returns 0, or -1 with a message in err saying what to send instead. */
int api_parse_create(const char *body, size_t len, unsigned ndevices, struct create_request *out,
                     char *err, size_t errlen);
int api_parse_update(const char *body, size_t len, struct update_request *out, char *err,
                     size_t errlen);
/* POST /v1/containers/{id}/start: {"pid": N, "auto_remove": BOOL}: the container's init pid
 * (host pid); with auto_remove the container is removed when that process exits. */
struct start_request {
    int pid;
    bool auto_remove;
};
int api_parse_start(const char *body, size_t len, struct start_request *out, char *err,
                    size_t errlen);
/* POST /v1/containers/ID/move: {"device": N}, 0 <= N < ndev. */
int api_parse_move(const char *body, size_t len, unsigned ndev, int *device, char *err,
                   size_t errlen);
int api_parse_policy(const char *body, size_t len, struct policy_request *out, char *err,
                     size_t errlen);
int api_parse_tenant(const char *body, size_t len, struct tenant_request *out, char *err,
                     size_t errlen);

#endif

/* convgpu_client.h — the one header for code that talks to convgpud: the CLI, the OCI shim and
 * its CDI hook, the SPANK plugin, the device plugin. A new integration (Nomad, a DRA driver)
 * includes this, fills a struct cg_client_spec, and touches no file of the daemon.
 *
 * Follow one container through it: the integration fills the spec from its own input (flags,
 * an OCI spec, srun options) and calls cgc_create(), which builds the body of
 * POST /v1/containers (cgc_create_body(), the only place a create body is written), sends it over
 * the control socket of the runtime directory (cli_runtime_dir(): the integration's flag, else
 * $CONVGPU_RUNTIME_DIR, else /run/convgpu) and, when the id is taken by a container with no
 * processes (a leftover whose end the daemon missed), removes it and tries once more. The
 * answer carries "env", which cgc_path_merge() puts in front of the workload's own
 * LD_PRELOAD/LD_LIBRARY_PATH; cgc_start() names the init pid where the caller is not the
 * container's owner; cgc_remove() ends it.
 *
 * Promises: every refusal comes back as a struct cgc_error (the HTTP status, 0 when the daemon
 * was not reached, and the daemon's own "error" text); no cgc_ function prints, exits or
 * keeps state (the runtime directory is the transport's). The interposer never links this (it speaks only the
 * container socket protocol, src/common/proto.h). */
#ifndef CONVGPU_CLIENT_H
#define CONVGPU_CLIENT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "http.h" /* the transport: cli_request, cli_stream, cli_set_runtime_dir, cli_runtime_dir */

#ifdef __cplusplus
extern "C" {
#endif

/* What a container asks for. Zero means "not sent" for every field (the daemon's default), so
 * `struct cg_client_spec s = {0}` plus the fields a door knows is a complete request. */
struct cg_client_spec {
    const char *id;             /* NULL: the daemon picks one */
    const char *name;
    uint64_t gpu_memory;        /* bytes; 0: none given (profile, exclusive, or refused) */
    bool profile_limit;         /* the limit from the command's profile */
    bool exclusive;
    unsigned compute_pct;       /* 1-100; 0: none sent */
    const char *compute_mode;   /* "hard" / "elastic"; NULL: not sent */
    int priority;               /* 0-9 when has_priority */
    bool has_priority;
    bool no_swap;
    const char *tenant;
    long device;                /* a GPU index when has_device */
    bool has_device;
    unsigned gpus;              /* 0: not sent */
    const unsigned *devices;    /* ndevices GPU indexes */
    size_t ndevices;
    const char *image;          /* profile key parts; NULL: not sent */
    const char *command;
    bool no_profile;            /* "profile": false: this run is not recorded */
    bool has_owner;             /* uid/gid: the owner, for root callers registering for users */
    uid_t uid;
    gid_t gid;
    bool auto_remove;           /* removed when the caller (SO_PEERCRED) exits */
    unsigned start_within;      /* seconds the daemon waits for cgc_start(); 0: not sent */
    const char *const *allocations; /* device plugin tokens (Kubernetes) */
    size_t nallocations;
    const char *allocation_pod;
    bool replace_idle;          /* on 409: remove the holder of id if it has no processes, retry */
};

/* A refusal, decoded once. status 0: the daemon was not reached (text says why, naming the
 * runtime directory); otherwise the HTTP status and the daemon's "error" ("" when it gave none). */
struct cgc_error {
    long status;
    char text[512];
    bool local; /* the text is this library's finding (a busy id), not the daemon's words */
};

/* Fills e from one exchange's status, answer and transport error. */
void cgc_error_set(struct cgc_error *e, long status, json_t *answer, const char *transport);
/* "WHAT: convgpud says: TEXT (HTTP N)", "WHAT: TEXT" for a transport or local error: the
 * integrations' form of a refusal (the CLI prints its own, cli_report_error). */
void cgc_error_format(const struct cgc_error *e, const char *what, char *out, size_t len);

/* The body of POST /v1/containers for spec: a new reference, NULL when out of memory. */
json_t *cgc_create_body(const struct cg_client_spec *spec);

/* Creates the container. Returns the daemon's answer (id, dir, env, limit...; a new
 * reference) or NULL with *err. With spec->replace_idle and an id, a 409 whose holder has no
 * processes is removed and the create tried once more; one with processes is a local error. */
json_t *cgc_create(const struct cg_client_spec *spec, struct cgc_error *err);

/* POST /v1/containers/{id}/start {"pid", "auto_remove"}. 0; 1 when there is no such
 * container; -1 with *err. */
int cgc_start(const char *id, long pid, bool auto_remove, struct cgc_error *err);

/* DELETE /v1/containers/{id}. 0 when removed or already gone; -1 with *err. */
int cgc_remove(const char *id, struct cgc_error *err);

/* GET /v1/containers/{id}: the container (new reference), NULL with *err (404: none). */
json_t *cgc_inspect(const char *id, struct cgc_error *err);

/* POST /v1/containers/{id}/pause, .../resume, .../move {"device": N} (docs/PAUSE.md): the
 * container as the daemon answered (new reference; "state" pausing, resuming, ...; the end
 * shows in later cgc_inspect answers: "state" and "pause_error"), or NULL with *err (404: no
 * such container; 409: its state, another model, not free; 501: no checkpoint API). */
json_t *cgc_pause(const char *id, struct cgc_error *err);
json_t *cgc_resume(const char *id, struct cgc_error *err);
json_t *cgc_move(const char *id, unsigned device, struct cgc_error *err);

/* The value a workload gets for LD_PRELOAD or LD_LIBRARY_PATH: first (the daemon's), then what
 * it had (old: NULL or "" for nothing), unless old already starts with first (a step inside a
 * step, a run inside a run: not twice). Returns malloc'd text, NULL when out of memory. */
char *cgc_path_merge(const char *first, const char *old);
/* True for the variables cgc_path_merge() joins; every other variable of "env" replaces. */
bool cgc_path_var(const char *name);

/* How a door reads and writes its workload's environment (its own process's, a Slurm task's). */
struct cgc_env_ops {
    /* *value: the variable's current value, NULL when unset; -1 when it cannot be read. */
    int (*get)(void *ctx, const char *name, const char **value);
    int (*set)(void *ctx, const char *name, const char *value); /* 0, or -1 */
};
enum { CGC_ENV_OK = 0, CGC_ENV_UNREADABLE = -1, CGC_ENV_UNSET = -2, CGC_ENV_NOMEM = -3 };
/* Puts the daemon's "env" (a create answer's) into a workload's environment: the path
 * variables merged (cgc_path_merge), every other one replaced. Returns CGC_ENV_OK, or the first
 * failure with *failed naming its variable. */
int cgc_env_apply(json_t *env, const struct cgc_env_ops *ops, void *ctx, const char **failed);

#ifdef __cplusplus
}
#endif

#endif

/* doctor.h — `convgpu doctor`: the node's convgpu pieces checked together. One check per row of
 * doctor_checks[] (doctor_checks.c); each reads what it needs from the host (under ctx->root, so
 * a test points doctor at a temporary tree) or asks the daemon, and answers one finding: its
 * status, what is wrong, and the command that fixes it. A check about a piece that is not on
 * this node (no Docker, no Slurm) says so and passes. cmd_doctor.c prints the findings (or
 * JSON) and exits 1 when any is broken. */
#ifndef CONVGPU_DOCTOR_H
#define CONVGPU_DOCTOR_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

enum doctor_status { DOCTOR_OK, DOCTOR_ABSENT, DOCTOR_WARN, DOCTOR_BROKEN };

struct doctor_ctx {
    const char *root;   /* host files are read under it ("" : /) */
    bool deep;          /* --deep: the checks that run something real */
    json_t *version;    /* the daemon's GET /v1/version, NULL when not reached */
    json_t *devices;    /* its GET /v1/devices */
    char daemon_error[512];
};

struct doctor_finding {
    enum doctor_status status;
    char what[512]; /* what was found (OK) or what is wrong */
    char fix[512];  /* the command that fixes it; "" when nothing to do */
};

struct doctor_check {
    const char *name; /* "docker", "slurm.plugstack", ... */
    const char *about;
    void (*run)(const struct doctor_ctx *ctx, struct doctor_finding *f);
};

extern const struct doctor_check doctor_checks[];
extern const size_t doctor_ncheck;

/* ctx->root + path into out; returns out. */
const char *doctor_path(const struct doctor_ctx *ctx, const char *path, char *out, size_t len);

#endif

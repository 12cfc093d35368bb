/* fuzz_api.c — libFuzzer harness for the control API's request bodies (create, update, start,
 * policy, tenant, interference). Every input must be accepted into a valid struct or refused
 * with a message. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api_alloc.h"
#include "api_interference.h"
#include "api_parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *body = malloc(size ? size : 1);
    if (!body)
        return 0;
    memcpy(body, data, size);
    char err[256];
    struct create_request cr;
    err[0] = '\0';
    if (api_parse_create(body, size, 4, &cr, err, sizeof err) == 0) {
        if ((cr.tenant[0] && !api_valid_tenant(cr.tenant)) || (cr.has_limit && cr.limit == 0) ||
            (!cr.has_limit && cr.limit) || cr.device < -1 || cr.device >= 4 || strlen(cr.name) > 64 ||
            (cr.has_owner && (cr.uid == UINT32_MAX || cr.gid == UINT32_MAX)) ||
            cr.compute_pct > 100 || (!cr.has_compute && cr.compute_pct) ||
            (cr.has_mode && cr.has_compute && cr.compute_pct == 0) ||
            (cr.has_mode && cr.compute_mode != CG_COMPUTE_HARD &&
             cr.compute_mode != CG_COMPUTE_ELASTIC))
            abort();
    } else if (!err[0]) {
        abort();
    }
    struct alloc_request ar;
    err[0] = '\0';
    if (api_parse_alloc(body, size, 4, &ar, err, sizeof err) == 0) {
        if ((ar.kind == ALLOC_MEMORY && (ar.bytes == 0 || ar.bytes > ALLOC_MAX_BYTES ||
                                         ar.device < -1 || ar.device >= 4)) ||
            (ar.kind == ALLOC_COMPUTE && ar.compute == 0) ||
            (ar.kind == ALLOC_GPUS && (ar.ndevices == 0 || ar.ndevices > 4)) ||
            (ar.kind != ALLOC_MEMORY && ar.kind != ALLOC_COMPUTE && ar.kind != ALLOC_GPUS))
            abort();
    } else if (!err[0]) {
        abort();
    }
    if (api_parse_create(body, size, 4, &cr, err, sizeof err) == 0 &&
        (cr.nallocations > API_MAX_ALLOCATIONS || (cr.nallocations && cr.has_limit) ||
         cr.start_within > API_START_WITHIN_MAX))
        abort();
    struct update_request ur;
    err[0] = '\0';
    if (api_parse_update(body, size, &ur, err, sizeof err) == 0) {
        if ((ur.has_limit && ur.limit == 0) || (!ur.has_limit && ur.limit) ||
            (!ur.has_limit && !ur.has_compute && !ur.has_mode) || ur.compute_pct > 100 ||
            (!ur.has_compute && ur.compute_pct) ||
            (ur.has_mode && ur.has_compute && ur.compute_pct == 0))
            abort();
    } else if (!err[0]) {
        abort();
    }
    struct start_request sr;
    err[0] = '\0';
    if (api_parse_start(body, size, &sr, err, sizeof err) == 0) {
        if (sr.pid <= 0)
            abort();
    } else if (!err[0]) {
        abort();
    }
    int dev = -1;
    err[0] = '\0';
    if (api_parse_move(body, size, 4, &dev, err, sizeof err) == 0) {
        if (dev < 0 || dev >= 4)
            abort();
    } else if (!err[0]) {
        abort();
    }
    struct policy_request pr;
    err[0] = '\0';
    if (api_parse_policy(body, size, &pr, err, sizeof err) == 0) {
        if (!pr.has_resume && !pr.has_placement)
            abort();
    } else if (!err[0]) {
        abort();
    }
    struct tenant_request tr;
    err[0] = '\0';
    if (api_parse_tenant(body, size, &tr, err, sizeof err) == 0) {
        if (tr.weight < 1 || tr.weight > CG_TENANT_WEIGHT_MAX)
            abort();
    } else if (!err[0]) {
        abort();
    }
    static struct interference_row rows[INTERFERENCE_MAX_ROWS];
    size_t nrows = 0;
    err[0] = '\0';
    if (api_parse_interference(body, size, rows, &nrows, err, sizeof err) == 0) {
        if (nrows < 1 || nrows > INTERFERENCE_MAX_ROWS)
            abort();
        for (size_t i = 0; i < nrows; i++)
            if (!cg_profile_key_valid(rows[i].foreground) ||
                !cg_profile_key_valid(rows[i].background) || !(rows[i].slowdown > 0) ||
                !(rows[i].slowdown < INTERFERENCE_SLOWDOWN_MAX) || rows[i].runs < 1 ||
                rows[i].runs > INTERFERENCE_RUNS_MAX)
                abort();
    } else if (!err[0] || nrows != 0) {
        abort();
    }
    free(body);
    return 0;
}

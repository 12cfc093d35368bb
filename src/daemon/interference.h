/* interference.h — measured interference below the API: one row as the store keeps it (store.h)
 * and the control API reads and writes it (api_interference.h, which says how a matrix is
 * measured and sent), and the matrix in memory for the core's interference placement
 * (src/core/place_interference.c; convgpud --placement interference). Here, below the API, so
 * that the store and the placement need nothing of the API's.
 *
 * A row: how much the foreground workload slows down beside the background one, both profile
 * keys.
 *
 * Follow one placement: `convgpu interfere --save` stored rows per tenant; interference_reload()
 * reads every tenant's rows into one sorted table of (hash of the foreground key, hash of the
 * background key) -> the worst slowdown any tenant measured, in thousandths, at start and after
 * each PUT or DELETE of rows; a container created without a device carries its application
 * (profile key) hash (profile_placement_hint), and the core asks interference_slowdown() for
 * each pair with the containers already on a device. The hash is the placement hint's
 * (profile_app_hash), so a container of image "train" and a row naming "train" meet. The
 * table is the daemon's only: the core gets it through the callback and never keeps it.
 *
 * Invariant: the table is never larger than the rows stored (bounded per tenant,
 * INTERFERENCE_MAX_TENANT_ROWS); a failed reload keeps the previous table, and says so. */
#ifndef CONVGPUD_INTERFERENCE_H
#define CONVGPUD_INTERFERENCE_H

#include <stdint.h>

#include "profile_key.h"

#define INTERFERENCE_MAX_ROWS 256          /* per request: 16 workloads, every ordered pair */
#define INTERFERENCE_MAX_TENANT_ROWS 4096  /* per tenant, stored */
#define INTERFERENCE_SLOWDOWN_MAX 1000.0   /* exclusive: a thousandfold slowdown is a typo */
#define INTERFERENCE_RUNS_MAX 1000

struct interference_row {
    char foreground[CG_PROFILE_KEY_MAX + 1];
    char background[CG_PROFILE_KEY_MAX + 1];
    double slowdown;        /* foreground's time beside background over its time alone */
    unsigned runs;          /* rounds the figure is the median of */
    int64_t measured_unix;  /* set by the daemon when stored */
};

struct daemon;

/* Reads every tenant's rows from the store into d's table. Returns 0, or -1 (logged; the old
 * table stays). */
int interference_reload(struct daemon *d);
/* The core's cg_config.slowdown: ctx is the daemon. 0 when the pair was not measured. */
uint32_t interference_slowdown(void *ctx, uint64_t fg, uint64_t bg);
void interference_free(struct daemon *d);

#endif

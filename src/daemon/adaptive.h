/* adaptive.h — Algorithm 1's periodic step in the daemon: what each tenant is running now,
 * looked up in the profiles of past runs, handed to the core's adaptive fair share (seed 001;
 * docs/SCHEDULING.md, "Tenants and fair share").
 *
 * Follow one update: with `convgpud --fair-share adaptive`, every --fair-interval seconds (30 by
 * default), and soon after a container was created or removed (at the loop's next turn, at most
 * once a second), the daemon walks its containers. A container whose job (tenant, profile key) has a profile of at
 * least CG_FAIR_PROFILE_RUNS runs contributes that profile's peak and mean duration to its
 * tenant; a tenant's figures are the means over its contributing containers (each running job
 * counts once, so a tenant running three copies of a job weighs that job three times), its run
 * count the least among them. cg_fair_share_update then re-evaluates every ceiling (Eq. 1): a
 * tenant with no contributing container is weighed by its job count alone (C0 = 1), as the
 * paper does for "the first few executions".
 *
 * The figures each tenant was last given are kept in its record (struct tenant) and shown by
 * GET /v1/tenants ("adaptive"). A profile the store cannot read is skipped (logged); an update
 * the core refuses for memory is retried at the next interval. Nothing here runs in the other
 * modes. */
#ifndef CONVGPUD_ADAPTIVE_H
#define CONVGPUD_ADAPTIVE_H

#include <stdint.h>

struct daemon;

#define ADAPTIVE_INTERVAL_DEFAULT_S 30
#define ADAPTIVE_INTERVAL_MAX_S 86400

/* A container came or went (or a run was recorded): update at the loop's next turn, or a second
 * after the last update when that is later. */
void adaptive_touch(struct daemon *d);
/* From the loop: updates when due; returns the milliseconds until the next update, or -1 when
 * the fair share is not adaptive. */
int adaptive_tick(struct daemon *d);

#endif

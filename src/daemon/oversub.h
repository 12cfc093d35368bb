/* oversub.h — the sharing factor each device advertises (issue 37; docs/SCHEDULING.md,
 * "Sharing factor").
 *
 * Follow one promise: `convgpud --oversubscribe 2` on a 4 GiB GPU publishes "oversubscribe": 2
 * and "promised": 8 GiB in GET /v1/devices; the device plugin advertises 8 GiB of units to
 * kubelet, `convgpu slurm gres-conf` 8192 MiB of gpumem to Slurm. Schedulers then send limits
 * that add up to 8 GiB; the core admits each against the real 4 GiB (a limit above it is still
 * refused) and keeps every assignment banker's-safe, so peaks that collide wait or are swapped.
 *
 * Invariant: the factor is read only by what the node advertises (the devices view, metrics,
 * the integrations that read them); no admission, placement or swap decision reads it.
 *
 * `adaptive` derives each device's factor with cg_oversub_adaptive() from the last
 * OVERSUB_RUNS runs that ended on it (their profile peak against their limit; at start, the
 * restored containers' profile peaks against their limits) and the device's part of
 * --swap-limit, recomputed at start and whenever a run ends. The runs are kept in memory only:
 * a restart starts again from the restored containers' profiles. */
#ifndef CONVGPUD_OVERSUB_H
#define CONVGPUD_OVERSUB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core.h"

#define OVERSUB_RUNS 64 /* runs kept per device for the adaptive rule */

struct daemon;

/* --oversubscribe as given: one factor for every device, factors per device index (devices
 * not named keep 1.0), or adaptive. */
struct oversub_setting {
    bool adaptive;
    double all;              /* every device not in per[] (1.0 when never set) */
    unsigned nper;
    struct { unsigned index; double factor; } per[CG_MAX_DEVICES];
};

/* "2", "1.5", "0=2.0,1=1.5" or "adaptive": factors from CG_OVERSUB_MIN to CG_OVERSUB_MAX,
 * written as decimals (no signs, exponents, hex, inf or nan), each index at most once. Returns
 * 0, or -1 with err (and *out unchanged). */
int oversub_parse(const char *text, struct oversub_setting *out, char *err, size_t errlen);

/* After the devices are known and containers restored: checks that per-device factors name
 * devices this node has, sets each device's factor (adaptive: from the restored containers'
 * profiles) and, adaptive, listens for runs that end. Returns 0, or -1 with err. */
int oversub_start(struct daemon *d, char *err, size_t errlen);

/* The device's factor now, and what it promises: its capacity x factor (cg_oversub_promised). */
double oversub_factor(const struct daemon *d, unsigned device);
uint64_t oversub_promised(const struct daemon *d, unsigned device);
/* "static" or "adaptive". */
const char *oversub_mode(const struct daemon *d);

/* Who waits because of the factor (issue 37 item 6). A container waits while it is suspended,
 * or while it is out (swapped) with requests pending. Its wait is the factor's,
 * "oversubscribed", when its device promises more than its capacity (factor > 1) and its
 * containers' limits add up to more than that capacity: with the factor at 1, kubelet or Slurm
 * would not have sent those limits to this device, so the collision it waits for was promised
 * by the factor. A container on several GPUs queued until all of them have room for it waits
 * "gpus" (gang.c). Any other wait is "memory". NULL: it does not wait. Read by the views only
 * (ps, top, the API, metrics); like the factor itself, never by a decision. */
struct container;
const char *oversub_wait_reason(const struct daemon *d, const struct container *c);
#define OVERSUB_WAIT_FACTOR "oversubscribed"
/* The sum of the limits of the device's containers (each GPU of a gang its own). */
uint64_t oversub_limits(const struct daemon *d, unsigned device);
/* How many of the device's containers wait because of the factor. */
unsigned oversub_waiting(const struct daemon *d, unsigned device);

#endif

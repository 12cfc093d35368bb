/* watchdog.h — the host-side cross-check of cooperative accounting: NVML's per-process GPU
 * memory against the daemon's accounts. Flags processes that use a GPU without being
 * registered (they bypassed the interposer: LD_PRELOAD unset, static linking, raw ioctls) and
 * containers whose processes together use more than their limit beyond a tolerance. Each
 * finding is logged, recorded as an event and counted in the metrics once per episode, and,
 * with --watchdog-kill, the offending processes are killed. */
#ifndef CONVGPUD_WATCHDOG_H
#define CONVGPUD_WATCHDOG_H

#include "daemon.h"

/* Runs a check when one is due (call from the event loop); returns ms until the next one, or
 * -1 when the watchdog is off. */
int watchdog_tick(struct daemon *d);
void watchdog_free(struct daemon *d);
/* Findings so far, by kind: 0 unregistered, 1 over limit. */
uint64_t watchdog_count(struct daemon *d, int kind);

#endif

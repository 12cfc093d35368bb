/* swap.h — the daemon's side of swap (docs/SWAP.md): an order to a container's processes
 * through its ledger, and watching them carry it out.
 *
 * Follow one swap-out: `convgpu swap ID` -> POST /v1/containers/ID/swap-out -> swap_order()
 * sets CG_GATE_SWAPPED in the container's gate (no launch, copy, set or swappable allocation
 * passes from now on), writes order OUT, bumps the epoch and wakes the processes' swap threads.
 * swap_tick(), from the loop, sees every process that has a swap thread report OUT for this
 * epoch; then the container is `swapped`: its quotas are frozen to what the processes still
 * use (container_freeze_sync), so the core's use drops by what left the device. Swap-in writes
 * order IN; the processes charge their slots again through the normal request path, map and
 * copy back and report IN; then the gate bit is cleared and the waiters woken.
 *
 * Invariant: CG_GATE_SWAPPED is set from the order out until every process reported in; the
 * daemon never clears it earlier, whatever the processes claim. */
#ifndef CONVGPUD_SWAP_H
#define CONVGPUD_SWAP_H

#include <stdbool.h>
#include <stddef.h>

struct daemon;
struct container;

enum swap_phase { SWAP_RESIDENT = 0, SWAP_MOVING_OUT, SWAP_OUT, SWAP_MOVING_IN };

/* Orders the container out (`out`) or back in. 0, or -1 with a message (swap not enabled for
 * it, or already there or on the way). */
int swap_order(struct daemon *d, struct container *c, bool out, char *err, size_t errlen);

/* Checks the containers on the move; milliseconds until it wants to run again, or -1. */
int swap_tick(struct daemon *d);

const char *swap_phase_name(enum swap_phase p);

#endif

/* swap.h — the daemon's side of swap (docs/SWAP.md): carrying out the core's orders through the
 * container's ledger, watching the processes carry them out, and reporting back to the core.
 *
 * Follow one swap-out: a request the core cannot grant makes it choose victims (core/swap.c),
 * or the operator asks (`convgpu swap ID` -> POST /v1/containers/ID/swap-out -> swap_request ->
 * cg_swap_order). The core emits SWAP_OUT; the sink calls swap_carry_out(), which sets
 * CG_GATE_SWAPPED in the container's gate (no launch, copy, set or swappable allocation passes
 * from now on), writes order OUT, bumps the epoch and wakes the processes' swap threads.
 * swap_tick(), from the loop, sees every process that has a swap thread report OUT for this
 * epoch; it tells the core what each moved (cg_process_swap_out) and that the move is done
 * (cg_swap_out_done): the container's assignment shrinks and the memory goes to whoever waits.
 * The core orders it back (SWAP_IN) once its assignment holds what is on the host, with that
 * much charged to its processes again; swap_carry_in() raises their quotas by it (so the swap
 * threads' charges take the fast path) and writes order IN; once every process reported IN the
 * gate bit is cleared, the waiters woken and the core told (cg_swap_in_done).
 *
 * Invariant: CG_GATE_SWAPPED is set from the order out until every process reported in; the
 * daemon never clears it earlier, whatever the processes claim. */
#ifndef CONVGPUD_SWAP_H
#define CONVGPUD_SWAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core.h"

struct daemon;
struct container;

enum swap_phase { SWAP_RESIDENT = 0, SWAP_MOVING_OUT, SWAP_OUT, SWAP_MOVING_IN };

/* A container's part of swap (struct container's `swap`): where its memory is, since when the
 * current move runs, and what moved. Written by swap.c alone, but for `found` (set when the
 * container's ledger is opened again after a restart, container.c); read by decide.c (no
 * freeze while it moves), the API and /metrics. */
struct swap_state {
    enum swap_phase phase;
    uint64_t since;              /* monotonic ns: the current order */
    uint64_t polled;             /* monotonic ns: swap_tick last read its reports */
    uint64_t swapped;            /* the processes' claims, bounded by the limit (display) */
    uint64_t out_ns, in_ns;      /* how long the last moves took */
    uint64_t out_total, in_total; /* bytes moved, since creation */
    uint64_t time_ns;            /* spent moving, since creation */
    bool in_due;                 /* the core ordered it in; swap_flush carries it out */
    bool found;                  /* restored with the swap gate bit set (swap_restore) */
};

/* An order through the API: out, held until ordered in (hold OPERATOR for root, the daemon's
 * user and operators; TENANT for anyone else, bounded by the hold pool: core.h, cg_swap_hold),
 * or back in (hold NONE). Stored first: 0 once state.db has it and it is carried out; else
 * nothing changed and err says why: 409 (the core refuses: state, budget, hold pool), or
 * -ENOSPC / -EIO (state.db did not take it: 507 / 503). */
int swap_request(struct daemon *d, struct container *c, cg_hold hold, char *err, size_t errlen);

/* From the core's decision sink (no core calls): SWAP_OUT is carried out at once; SWAP_IN
 * marks the container with what comes back (bytes), and swap_flush (after the core call
 * returned) carries it out. */
void swap_carry_out(struct daemon *d, struct container *c);
void swap_mark_in(struct container *c, uint64_t bytes);
void swap_flush(struct daemon *d);

/* A restarted daemon found the swap gate bit in a container's ledger (its processes' accounts
 * already restored from their slots, which hold only what is on the device). Out, with every
 * process reported: the core is told what each has on the host and the container stays out
 * (held as it was, and by whom, from state.db). Moving either way: it is brought back in
 * through the normal request path (its processes charge again, waiting for memory like any
 * request).
 * Either way nothing is charged twice and nothing is lost. */
void swap_restore(struct daemon *d, struct container *c, cg_hold held);

/* A process of c reported its part of the move (its SWAPPED notice): looks at c's move now.
 * Anything else (c not moving, a notice a process sends uninvited) changes nothing. */
void swap_notice(struct daemon *d, struct container *c);

/* A request of `c` waits: if its processes keep freed memory for reuse (ledger.h), wake their
 * swap threads, which drop it (and so send FREED notices) when they see the waiters. */
void swap_wake_kept(struct container *c);

/* Checks the containers on the move; milliseconds until it wants to run again, or -1. The
 * processes' notices end a move at once; this poll (SWAP_POLL_MS, swap.c) only bounds the wait
 * when a notice was lost (an interposer's socket gone, a full buffer). */
int swap_tick(struct daemon *d);

const char *swap_phase_name(enum swap_phase p);

/* swap_carry_out, swap_mark_in, swap_flush and swap_wake_kept, for decide.c (daemon.h). */
extern const struct decide_swap_ops swap_for_decide;

/* Page-locked host memory c's processes keep between moves (within its pin budget). */
uint64_t swap_pinned_bytes(const struct container *c);

#endif

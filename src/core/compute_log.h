/* compute_log.h — what a compute gate did lately: the instants it opened and closed, so that the
 * controller (compute.c) can tell, for a span it has not measured yet, how long the container
 * could launch (its gate open) and how long it was held (gated).
 *
 * Why it matters: device time is measured late (NVML's samples cover ~1/6 s and appear after
 * it), and the gate may have opened and closed several times in that unmeasured span. Predicting
 * the span from the gate's state *now* overcharged a container that had just been closed and
 * undercharged one that had just been opened, so the credit swung by the lag times the rate, and
 * hard 25/75 windows swung by 5-10 points with long kernels. Knowing the open time also splits a
 * container's idle time in two: time it was gated (the controller's doing) and time it was open
 * and used nothing (its own host code: a synchronising loop turning around). Its rate while open
 * is what it would use if opened, whatever its share.
 *
 * Pure: the caller passes every instant. Invariants: `at` strictly increasing, n <= CG_GATE_LOG;
 * the state before at[0] is `open0`. Transitions older than the caller's oldest question are
 * folded into open0 (cg_gate_log_forget); when the log is full the oldest is folded likewise, so
 * an answer about the distant past may be coarse, never out of range. */
#ifndef CONVGPU_CORE_COMPUTE_LOG_H
#define CONVGPU_CORE_COMPUTE_LOG_H

#include "core.h"

#include <stdbool.h>
#include <stdint.h>

#define CG_GATE_LOG 32

typedef struct {
    cg_time at[CG_GATE_LOG];   /* instants the gate changed, oldest first */
    uint32_t open_bits;        /* bit k: open from at[k] on */
    uint8_t n;
    bool open0;                /* the state before at[0] (always, when n == 0) */
} cg_gate_log;

/* A log whose gate has been `open` since forever. */
cg_gate_log cg_gate_log_init(bool open);

/* The gate is `open` from `now` on (no entry when it does not change; `now` before the last
 * entry is taken as the last entry's instant). */
void cg_gate_log_set(cg_gate_log *l, cg_time now, bool open);

/* Nanoseconds the gate was open within [a, b) (0 when b <= a). */
cg_time cg_gate_log_open_ns(const cg_gate_log *l, cg_time a, cg_time b);

/* Drops what happened before `t` (its state at `t` is kept). */
void cg_gate_log_forget(cg_gate_log *l, cg_time t);

/* NULL or what is wrong (tests). */
const char *cg_gate_log_check(const cg_gate_log *l);

#endif

/* compute.h — compute shares turned into gates: which containers may launch work right now.
 *
 * Follow one kernel launch: the interposer reads its container's gate word in the ledger (open:
 * launch at once, no system call; closed: wait in the launching thread until it opens). The
 * daemon, every step (tens of milliseconds), measures each container's device time through NVML's
 * per-process utilisation, hands shares and measurements to cg_compute_step(), and writes the
 * gates it returns into the ledgers. Everything that decides lives here, pure (no clock, no I/O,
 * no globals), so the simulator drives the same code with simulated device time.
 *
 * The rule is a credit of device time per container with a share s (percent of one GPU):
 *
 *     credit += s/100 * elapsed - busy          (busy = device time it used meanwhile)
 *
 * A HARD container's gate is open while its credit is >= 0: over any long window it used at
 * most s% of the device (plus the bounded credit it may bank, `burst_ns`), whatever its kernels'
 * lengths, streams, threads or processes, because the credit counts measured time, not launches.
 * Debt is carried up to `debt_ns`, so an overshoot (work queued before a gate closed, a late
 * measurement) is paid back rather than forgotten.
 *
 * An ELASTIC container is also open while its credit is >= 0, and beyond that on spare time: when
 * no limited container of its device that wants time (it is waiting at its gate, or it used the
 * device in its last measured interval) deserves it more: one within its share (credit >= 0),
 * or an elastic one less in debt. So contending elastic containers even out their credits, and
 * even credits mean exact shares. Debt run up on spare time that nobody had reserved (the shares
 * of the containers wanting the device sum below 100) is forgiven down to -burst_ns (idle time
 * is free; it is not paid back later), so when a container below its share starts, the elastic
 * ones above theirs close at the next step and pay back at most burst_ns. `elastic_cap_pct` keeps an elastic container below that much of the
 * device even when it is alone (GaiaGPU's cap; 100 = none).
 *
 * Measurements arrive late (NVML samples cover about 1/6 s). Between the last measured instant
 * and now the controller predicts from the gate's own history (compute_log.h): the time the
 * gate was open in that span, times the container's rate while open (its device time over its
 * open time in the last measured span). Gated time is not charged (the controller's doing);
 * open time unused lowers the rate (the container's own host code). The prediction is replaced
 * by the measurement when it arrives, so it only sharpens the gate and never biases the
 * account.
 *
 * Containers without a share (0) are never gated; they are measured so that utilisation can be
 * shown, and their work competes for the device like any other process's.
 */
#ifndef CONVGPU_CORE_COMPUTE_H
#define CONVGPU_CORE_COMPUTE_H

#include "core.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CG_COMPUTE_BURST_NS_DEFAULT 50000000ull   /* 50 ms of credit may be banked */
#define CG_COMPUTE_DEBT_NS_DEFAULT  2000000000ull /* 2 s of debt is carried (hard shares) */

typedef struct {
    cg_time burst_ns;          /* 0: the default */
    cg_time debt_ns;           /* 0: the default */
    unsigned elastic_cap_pct;  /* 0 or 100: no cap; else 1..99 */
    void *(*mem_alloc)(void *ctx, size_t size); /* NULL: malloc/free (tests inject failures) */
    void (*mem_free)(void *ctx, void *p);
    void *mem_ctx;
} cg_compute_params;

typedef struct cg_compute cg_compute;

/* NULL params: defaults. NULL when out of memory or a parameter is out of range. */
cg_compute *cg_compute_new(const cg_compute_params *params);
void cg_compute_free(cg_compute *cc);

typedef struct {
    uint64_t key;              /* the caller's name for the container, unique (cid) */
    unsigned device;
    unsigned share_pct;        /* 0: no compute limit; else 1..100 */
    cg_compute_mode mode;
    cg_time busy_total_ns;     /* device time used, cumulative, measured up to measured_until */
    cg_time measured_until;    /* 0: nothing measured yet */
    bool waiting;              /* launches of this container wait at its gate now */
} cg_compute_input;

typedef struct {
    uint64_t key;
    bool open;
    bool spare;                /* open only on spare time (elastic, credit < 0) */
    int64_t credit_ns;         /* the estimate at `now` */
    uint32_t util_permille;    /* busy share of its last measured interval, 0..1000 */
} cg_compute_gate;

/* One control step at `now`: out[i] is the gate for in[i]. Containers absent from `in` are
 * forgotten (a later input with their key starts afresh). Inputs are validated: a duplicate key,
 * a share above 100, an unknown mode, `now` before an earlier step's, or a measurement later than
 * `now` give CG_ERR_INVALID and change nothing; CG_ERR_NOMEM changes nothing. Measurements are
 * the measurer's claims: device time beyond the elapsed time is clamped to it, and a cumulative
 * figure or a measured instant that goes back is taken as a new baseline (the measurer
 * restarted). */
cg_status cg_compute_step(cg_compute *cc, cg_time now, const cg_compute_input *in, size_t n,
                          cg_compute_gate *out);

/* Invariant check for tests: NULL or a description of the violation. */
const char *cg_compute_check(const cg_compute *cc);

#endif

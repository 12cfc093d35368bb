/* gates.h — the daemon's half of compute shares: every step it measures each container's
 * device time through NVML's per-process utilisation, asks the core's controller
 * (src/core/compute.h) for the gates, and writes them into the ledgers (src/common/ledger.h).
 *
 * Follow one throttled launch: a container over its share has its gate closed here; its next
 * cuLaunchKernel waits in the launching thread (src/interpose/gate.c) until a later step finds
 * its credit back and opens the gate, waking the waiters. */
#ifndef CONVGPUD_GATES_H
#define CONVGPUD_GATES_H

#include <stdbool.h>
#include <stdint.h>

struct daemon;

/* A container's part of compute shares (struct container's `compute`): what its kernels cost
 * and waited, filled every step here from NVML (device time) and the ledger's gate counters
 * (claims, shown only); shown by the API, the CLI and /metrics (zeros where NVML has no
 * per-process utilisation). Its share itself is the core's (cg_container_info). */
struct compute_state {
    uint64_t busy_ns;            /* device time its processes used */
    uint32_t util_permille;      /* its share of the device's time in the last window, 1/1000 */
    uint64_t throttled_ns;       /* time its launches waited for budget */
    uint64_t throttled_launches; /* launches that waited */
    bool over_reported;          /* ran deep past a hard share: reported */
};

/* The controller's period. 25 ms: in the model (`convgpu sim compute --step-ms`) a gate that
 * acts twice as often holds 1-s windows closer in most of bench/compute.sh's matrix (25/75 with
 * 64 x 20 ms per sync: 4.5 -> 2.5 points; the 30/70 mix 3.2 -> 1.0), for one NVML
 * per-process query per device and step. */
#define COMPUTE_STEP_NS 25000000ull
/* A closed gate opens by itself this long after the step that closed it, unless renewed: a
 * daemon that stops cannot freeze its containers' launches. */
#define COMPUTE_GATE_LEASE_NS (4 * COMPUTE_STEP_NS)

/* Milliseconds until the next step is due (for the event loop's timeout), running the step when
 * it is due; -1 when compute control is off (no NVML, or NVML without per-process utilisation). */
int compute_tick(struct daemon *d);
/* Whether the daemon measures containers' device time (NVML has per-process utilisation), so
 * their compute.busy_ns means something (profile.c). */
bool compute_measuring(struct daemon *d);
/* Opens every gate (the daemon is stopping: nothing may stay closed behind it). */
void compute_stop(struct daemon *d);

#endif

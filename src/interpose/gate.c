/* gate.c — waiting at a closed compute gate (gate.h). */
#include "gate.h"

#include <errno.h>
#include <linux/futex.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* The longest single wait: the gate is re-read at least this often, so a gate whose deadline
 * passes, or a wake that was missed, costs at most this much. */
#define GATE_RECHECK_NS 100000000ull

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void cg_gate_wait(struct cg_session *s)
{
    struct cg_ledger_compute *g = &s->ledger->compute;
    uint64_t t0 = mono_ns(), now = t0;
    bool waited = false;
    atomic_fetch_add_explicit(&s->slot->gate_waiting, 1, memory_order_relaxed);
    while (atomic_load_explicit(&g->gate, memory_order_acquire) != CG_GATE_OPEN) {
        uint64_t until = atomic_load_explicit(&g->closed_until, memory_order_relaxed);
        if (now >= until)
            break; /* the daemon stopped renewing it: open */
        uint64_t left = until - now < GATE_RECHECK_NS ? until - now : GATE_RECHECK_NS;
        struct timespec ts = {(time_t)(left / 1000000000ull), (long)(left % 1000000000ull)};
        /* A shared (not private) futex: the daemon wakes it through its own mapping. */
        syscall(SYS_futex, (uint32_t *)&g->gate, FUTEX_WAIT, CG_GATE_CLOSED, &ts, NULL, 0);
        waited = true;
        now = mono_ns();
    }
    atomic_fetch_sub_explicit(&s->slot->gate_waiting, 1, memory_order_relaxed);
    if (waited) {
        atomic_fetch_add_explicit(&g->throttled_ns, now - t0, memory_order_relaxed);
        atomic_fetch_add_explicit(&g->throttled_launches, 1, memory_order_relaxed);
    }
}

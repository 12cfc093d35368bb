/* swap.c — ordering a container's processes out to host memory and back (swap.h). */
#include "swap.h"
#include "api.h"
#include "daemon.h"
#include "log.h"

#include <limits.h>
#include <linux/futex.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

/* While a container moves, its processes' reports are read this often. */
#define SWAP_POLL_MS 10

const char *swap_phase_name(enum swap_phase p)
{
    switch (p) {
    case SWAP_MOVING_OUT: return "swapping-out";
    case SWAP_OUT: return "out";
    case SWAP_MOVING_IN: return "swapping-in";
    default: return "in";
    }
}

static void wake(_Atomic uint32_t *w)
{
    syscall(SYS_futex, (uint32_t *)w, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

int swap_order(struct daemon *d, struct container *c, bool out, char *err, size_t errlen)
{
    struct cg_ledger *l = c->ledger;
    if (!l || atomic_load(&l->swap.enabled) != 1) {
        snprintf(err, errlen, "container %s does not swap (convgpud --swap yes)", c->id);
        return -1;
    }
    enum swap_phase want = out ? SWAP_MOVING_OUT : SWAP_MOVING_IN;
    enum swap_phase now = (enum swap_phase)c->swap_phase;
    if ((out && now != SWAP_RESIDENT) || (!out && now != SWAP_OUT)) {
        snprintf(err, errlen, "container %s is %s", c->id, swap_phase_name(now));
        return -1;
    }
    if (out) /* first: from here on nothing touches the memory that is about to leave */
        atomic_fetch_or(&l->compute.gate, CG_GATE_SWAPPED);
    atomic_store(&l->swap.order, out ? CG_SWAP_OUT : CG_SWAP_IN);
    atomic_fetch_add(&l->swap.epoch, 1);
    wake(&l->swap.epoch);
    c->swap_phase = want;
    c->swap_since = loop_now_ns();
    log_info("container %s: swap-%s ordered", c->id, out ? "out" : "in");
    api_watchdog_event(d, out ? "swap-out" : "swap-in", c, 0, 0);
    return 0;
}

/* Whether every process with a swap thread reported `state` for the current order, and what
 * they say they moved. */
static bool all_reported(struct container *c, uint32_t state, uint64_t *moved)
{
    struct cg_ledger *l = c->ledger;
    uint32_t epoch = atomic_load(&l->swap.epoch);
    *moved = 0;
    for (struct proc *p = c->procs; p; p = p->next) {
        if (!p->welcomed || p->slot >= CG_LEDGER_SLOTS)
            continue;
        struct cg_ledger_swap_slot *s = &l->swap_slots[p->slot];
        if (!atomic_load(&s->ready))
            continue; /* nothing swappable in it */
        if (atomic_load(&s->state) != state || atomic_load(&s->done) != epoch)
            return false;
        uint64_t b = atomic_load(&s->out_bytes);
        *moved += b < c->limit ? b : c->limit; /* a claim: shown, never more than the limit */
    }
    return true;
}

static void progress(struct daemon *d, struct container *c)
{
    uint64_t moved, took = loop_now_ns() - c->swap_since;
    if (c->swap_phase == SWAP_MOVING_OUT && all_reported(c, CG_SWAPST_OUT, &moved)) {
        /* The processes lowered their use: the core learns it when their quotas are frozen. */
        container_freeze_sync(d, c);
        c->swap_phase = SWAP_OUT;
        c->swapped_bytes = moved < c->limit ? moved : c->limit;
        c->swap_out_ns = took;
        log_info("container %s: swapped out, %llu bytes in %.3f s", c->id,
                 (unsigned long long)c->swapped_bytes, (double)took / 1e9);
        api_watchdog_event(d, "swapped-out", c, 0, c->swapped_bytes);
    } else if (c->swap_phase == SWAP_MOVING_IN && all_reported(c, CG_SWAPST_IN, &moved)) {
        c->swap_phase = SWAP_RESIDENT;
        c->swap_in_ns = took;
        atomic_fetch_and(&c->ledger->compute.gate, ~CG_GATE_SWAPPED);
        wake(&c->ledger->compute.gate);
        log_info("container %s: swapped in, %llu bytes in %.3f s", c->id,
                 (unsigned long long)c->swapped_bytes, (double)took / 1e9);
        api_watchdog_event(d, "swapped-in", c, 0, c->swapped_bytes);
        c->swapped_bytes = 0;
    }
}

int swap_tick(struct daemon *d)
{
    int next = -1;
    for (struct container *c = d->containers; c; c = c->next) {
        if (c->swap_phase != SWAP_MOVING_OUT && c->swap_phase != SWAP_MOVING_IN)
            continue;
        progress(d, c);
        if (c->swap_phase == SWAP_MOVING_OUT || c->swap_phase == SWAP_MOVING_IN)
            next = SWAP_POLL_MS;
    }
    return next;
}

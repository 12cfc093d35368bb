/* swap.c — carrying out the core's swap orders through a container's ledger (swap.h). */
#include "swap.h"
#include "daemon.h"
#include "notice.h"
#include "log.h"
#include "size.h"
#include "store.h"

#include <limits.h>
#include <stdbool.h>
#include <linux/futex.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

/* While a container moves, its processes' reports are read this often even without a notice:
 * the notices (swap_notice) end a move at once, so the poll only bounds a lost one's delay.
 * Tests set it long (CONVGPUD_TEST_SWAP_POLL_MS) to show that the notices do the work. */
#define SWAP_POLL_MS 100

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

static bool swaps(const struct container *c)
{
    return c->ledger && atomic_load(&c->ledger->swap.enabled) == 1;
}

/* Writes the order into the ledger and wakes the processes' swap threads. */
static void order(struct daemon *d, struct container *c, bool out)
{
    struct cg_ledger *l = c->ledger;
    if (out) /* first: from here on nothing touches the memory that is about to leave */
        atomic_fetch_or(&l->compute.gate, CG_GATE_SWAPPED);
    atomic_store(&l->swap.order, out ? CG_SWAP_OUT : CG_SWAP_IN);
    atomic_fetch_add(&l->swap.epoch, 1);
    wake(&l->swap.epoch);
    c->swap.phase = out ? SWAP_MOVING_OUT : SWAP_MOVING_IN;
    c->swap.since = loop_now_ns();
    log_info("container %s: swap-%s ordered", c->ident.id, out ? "out" : "in");
    notice_finding(d, out ? "swap-out" : "swap-in", c, 0, 0);
}

/* The refusal's words for a hold the core would not take (409). */
static void refusal(struct daemon *d, struct container *c, cg_hold hold, cg_status st, char *err,
                    size_t errlen)
{
    char b1[CG_SIZE_BUFLEN], b2[CG_SIZE_BUFLEN], b3[CG_SIZE_BUFLEN], b4[CG_SIZE_BUFLEN],
        b5[CG_SIZE_BUFLEN], b6[CG_SIZE_BUFLEN];
    cg_container_info ci = {0};
    cg_container_get(d->core, c->cid, loop_now_ns(), &ci);
    cg_hold_room room = {0};
    if (st == CG_ERR_STATE) {
        snprintf(err, errlen, "container %s is %s", c->ident.id, swap_phase_name(c->swap.phase));
    } else if (st == CG_ERR_SWAP_BUDGET && hold == CG_HOLD_TENANT &&
               cg_swap_hold_check(d->core, c->cid, CG_HOLD_OPERATOR) == CG_OK &&
               cg_swap_hold_room(d->core, ci.tenant, &room) == CG_OK) {
        /* Within the budget: the hold pool refused it. */
        snprintf(err, errlen,
                 "holding container %s out (%s) would take the swap holds of users "
                 "who are not operators over swap-hold-share: its tenant may hold "
                 "%s (%s held now), all such tenants together %s (%s held now); the "
                 "rest of --swap-limit is kept for preemption",
                 c->ident.id, cg_format_size(ci.assigned, b1, sizeof b1),
                 cg_format_size(room.share, b2, sizeof b2),
                 cg_format_size(room.tenant_held, b3, sizeof b3),
                 cg_format_size(room.pool, b4, sizeof b4),
                 cg_format_size(room.pool_held, b5, sizeof b5));
    } else if (st == CG_ERR_SWAP_BUDGET) {
        snprintf(err, errlen,
                 "swapping container %s out would take the host memory held by "
                 "swap above --swap-limit %s (%s held now)",
                 c->ident.id, cg_format_size(d->opt.swap_limit, b6, sizeof b6),
                 cg_format_size(cg_swap_host_bytes(d->core), b2, sizeof b2));
    } else {
        snprintf(err, errlen, "container %s: %s", c->ident.id, cg_status_str(st));
    }
}

int swap_request(struct daemon *d, struct container *c, cg_hold hold, char *err, size_t errlen)
{
    if (!swaps(c)) {
        snprintf(err, errlen, "container %s does not swap (%s)", c->ident.id,
                 c->no_swap ? "created with swap off" : "convgpud --swap yes turns it on");
        return 409;
    }
    decide_freeze(d, c);
    cg_status st = cg_swap_hold_check(d->core, c->cid, hold);
    if (st != CG_OK) {
        refusal(d, c, hold, st, err, errlen);
        return 409;
    }
    /* Stored, then done: a hold is kept across a restart, so it is acknowledged only once
     * state.db holds it (an order in likewise, or a restart would hold it out again). */
    if (d->store) {
        struct stored_container row;
        store_row_of(c, &row);
        row.swap_held = hold;
        int rc = store_put_row(d->store, &row);
        if (rc != 0) {
            snprintf(err, errlen,
                     "container %s: the swap order was not carried out: the state "
                     "could not be saved (%s)",
                     c->ident.id, store_error(d->store));
            return rc;
        }
    }
    st = cg_swap_hold(d->core, c->cid, hold, loop_now_ns());
    if (st != CG_OK) { /* checked just above, with nothing in between: not expected */
        refusal(d, c, hold, st, err, errlen);
        if (d->store && store_put_container(d->store, c) != 0)
            log_error("container %s: state.db says it is %sheld, which it is not: %s", c->ident.id,
                      hold ? "" : "not ", store_error(d->store));
        return 409;
    }
    c->decide.dirty = true;
    decide_flush(d);
    return 0;
}

void swap_carry_out(struct daemon *d, struct container *c)
{
    if (!swaps(c)) {
        log_error("container %s: the core ordered a swap-out, but it does not swap", c->ident.id);
        return;
    }
    order(d, c, true);
}

void swap_mark_in(struct container *c, uint64_t bytes)
{
    c->swap.swapped = bytes;
    c->swap.in_due = true;
}

/* The core has charged the processes again with what comes back: their quotas follow, so the
 * swap threads' charges pass on the fast path; then the order. */
static void carry_in(struct daemon *d, struct container *c)
{
    size_t n = cg_container_processes(d->core, c->cid, NULL, 0);
    cg_process_info *all = n ? calloc(n, sizeof *all) : NULL;
    if (n && !all) {
        log_error("container %s: out of memory; its processes charge again through requests",
                  c->ident.id);
    } else if (all) {
        n = cg_container_processes(d->core, c->cid, all, n);
        for (struct proc *p = c->procs; p; p = p->next) {
            if (!p->welcomed || !p->known_to_core || p->slot >= CG_LEDGER_SLOTS)
                continue;
            for (size_t i = 0; i < n; i++) {
                uint64_t pages = all[i].used / CG_LEDGER_PAGE;
                if (all[i].pid == p->key && pages > c->rec->slots[p->slot].quota)
                    slot_set_quota(c, p->slot, pages);
            }
        }
        free(all);
    }
    order(d, c, false);
    if (d->crash_swap_in_ordered && --d->crash_swap_in_ordered == 0)
        _exit(99); /* fault injection: quotas raised and ordered in, nobody reported */
}

void swap_flush(struct daemon *d)
{
    for (struct container *c = d->containers; c; c = c->next)
        if (c->swap.in_due) {
            c->swap.in_due = false;
            carry_in(d, c);
        }
}

/* Whether every process with a swap thread reported `state` for the current order. */
static bool all_reported(struct container *c, uint32_t state)
{
    struct cg_ledger *l = c->ledger;
    uint32_t epoch = atomic_load(&l->swap.epoch);
    for (struct proc *p = c->procs; p; p = p->next) {
        if (!p->welcomed || p->slot >= CG_LEDGER_SLOTS)
            continue;
        struct cg_ledger_swap_slot *s = &l->swap_slots[p->slot];
        if (!atomic_load(&s->ready))
            continue; /* nothing swappable in it */
        if (atomic_load(&s->state) != state || atomic_load(&s->done) != epoch)
            return false;
    }
    return true;
}

/* Each process's report to the core: what it moved, in whole pages, never more than the core
 * knows it uses (the report is a claim; the slot it lowered is frozen right after). */
static uint64_t report_out(struct daemon *d, struct container *c)
{
    uint64_t total = 0, now = loop_now_ns();
    size_t n = cg_container_processes(d->core, c->cid, NULL, 0);
    cg_process_info *all = n ? calloc(n, sizeof *all) : NULL;
    if (!all)
        return 0; /* nothing reported: the core keeps them charged as used (safe side) */
    n = cg_container_processes(d->core, c->cid, all, n);
    for (struct proc *p = c->procs; p; p = p->next) {
        if (!p->welcomed || !p->known_to_core || p->slot >= CG_LEDGER_SLOTS)
            continue;
        struct cg_ledger_swap_slot *s = &c->ledger->swap_slots[p->slot];
        if (!atomic_load(&s->ready))
            continue;
        uint64_t bytes = atomic_load(&s->out_bytes) / CG_LEDGER_PAGE * CG_LEDGER_PAGE, used = 0;
        for (size_t i = 0; i < n; i++)
            if (all[i].pid == p->key)
                used = all[i].used;
        if (bytes > used)
            bytes = used;
        if (bytes && cg_process_swap_out(d->core, c->cid, p->key, bytes, now) == CG_OK)
            total += bytes;
    }
    free(all);
    return total;
}

static void bring_back_in(struct container *c)
{
    struct cg_ledger *l = c->ledger;
    log_warn("container %s: a swap was under way when the daemon stopped; bringing it back in",
             c->ident.id);
    atomic_store(&l->swap.order, CG_SWAP_IN);
    atomic_fetch_add(&l->swap.epoch, 1);
    wake(&l->swap.epoch);
    c->swap.phase = SWAP_MOVING_IN;
    c->swap.since = loop_now_ns();
}

void swap_restore(struct daemon *d, struct container *c, cg_hold held)
{
    struct cg_ledger *l = c->ledger;
    c->swap.found = false;
    if (c->no_swap || atomic_load(&l->swap.order) != CG_SWAP_OUT || !all_reported(c, CG_SWAPST_OUT)) {
        bring_back_in(c);
        return;
    }
    uint64_t total = 0;
    for (struct proc *p = c->procs; p; p = p->next) {
        if (!p->welcomed || !p->known_to_core || p->slot >= CG_LEDGER_SLOTS)
            continue;
        struct cg_ledger_swap_slot *s = &l->swap_slots[p->slot];
        if (!atomic_load(&s->ready))
            continue;
        uint64_t bytes = atomic_load(&s->out_bytes) / CG_LEDGER_PAGE * CG_LEDGER_PAGE;
        /* A claim: bounded by the limit in the core. One refused charges again through the
         * normal path when the container comes back. */
        if (bytes && cg_process_restore_swapped(d->core, c->cid, p->key, bytes) == CG_OK)
            total += bytes;
        else if (bytes)
            log_warn("container %s: pid %d claims %llu bytes on the host, beyond its limit; not "
                     "counted",
                     c->ident.id, (int)p->pid, (unsigned long long)bytes);
    }
    c->swap.phase = SWAP_OUT;
    c->swap.swapped = total;
    if (cg_swap_restore_hold(d->core, c->cid, CG_SWAPPED_OUT, held, loop_now_ns()) != CG_OK) {
        log_error("container %s: cannot restore it as swapped out; bringing it back in",
                  c->ident.id);
        bring_back_in(c);
        return;
    }
    log_info("container %s: restored swapped out (%llu bytes on the host%s)", c->ident.id,
             (unsigned long long)total,
             held == CG_HOLD_TENANT ? ", held by its tenant"
             : held                 ? ", held by the operator"
                                    : "");
    swap_flush(d); /* the core may have ordered it in at once */
}

/* on_notice: a process's SWAPPED notice brought us here, not the poll (said in the log, which
 * the tests read). */
static void progress(struct daemon *d, struct container *c, bool on_notice)
{
    const char *seen = on_notice ? "on its processes' notices" : "seen by the poll";
    uint64_t took = loop_now_ns() - c->swap.since;
    cg_container_info ci = {0};
    cg_container_get(d->core, c->cid, loop_now_ns(), &ci);
    if (c->swap.phase == SWAP_MOVING_OUT && all_reported(c, CG_SWAPST_OUT)) {
        uint64_t moved = ci.residency == CG_MOVING_OUT ? report_out(d, c) : 0;
        if (d->crash_swap_reported && --d->crash_swap_reported == 0)
            _exit(99); /* fault injection: reported to the core, the move not ended */
        c->swap.phase = SWAP_OUT;
        decide_freeze(d, c); /* the slots the processes lowered: quota := use */
        c->swap.swapped = moved;
        c->swap.out_ns = took;
        c->swap.time_ns += took;
        c->swap.out_total += moved;
        log_info("container %s: swapped out, %llu bytes in %.3f s (%s)", c->ident.id,
                 (unsigned long long)moved, (double)took / 1e9, seen);
        notice_finding(d, "swapped-out", c, 0, moved);
        if (ci.residency == CG_MOVING_OUT)
            cg_swap_out_done(d->core, c->cid, loop_now_ns());
        c->decide.dirty = true;
        decide_flush(d);
    } else if (c->swap.phase == SWAP_MOVING_IN && all_reported(c, CG_SWAPST_IN)) {
        c->swap.phase = SWAP_RESIDENT;
        c->swap.in_ns = took;
        c->swap.time_ns += took;
        c->swap.in_total += c->swap.swapped;
        atomic_fetch_and(&c->ledger->compute.gate, ~CG_GATE_SWAPPED);
        wake(&c->ledger->compute.gate);
        log_info("container %s: swapped in, %llu bytes in %.3f s (%s)", c->ident.id,
                 (unsigned long long)c->swap.swapped, (double)took / 1e9, seen);
        notice_finding(d, "swapped-in", c, 0, c->swap.swapped);
        c->swap.swapped = 0;
        if (ci.residency == CG_MOVING_IN)
            cg_swap_in_done(d->core, c->cid, loop_now_ns());
        decide_freeze(d, c);
        c->decide.dirty = true;
        decide_flush(d);
    }
}

void swap_wake_kept(struct container *c)
{
    if (!swaps(c) || c->swap.phase != SWAP_RESIDENT)
        return;
    struct cg_ledger *l = c->ledger;
    for (struct proc *p = c->procs; p; p = p->next) {
        if (!p->welcomed || p->slot >= CG_LEDGER_SLOTS ||
            !atomic_load(&l->swap_slots[p->slot].kept_pages) ||
            !cg_ledger_used(atomic_load(&l->slots[p->slot].word)))
            continue; /* a claim: what keeps nothing in use keeps nothing */
        /* A new epoch with the same order: no move, only a look at the waiters. */
        log_debug("container %s: a request waits and pid %d keeps freed memory: waking it",
                  c->ident.id, (int)p->pid);
        atomic_fetch_add(&l->swap.epoch, 1);
        wake(&l->swap.epoch);
        return;
    }
}

void swap_notice(struct daemon *d, struct container *c)
{
    if (c && (c->swap.phase == SWAP_MOVING_OUT || c->swap.phase == SWAP_MOVING_IN))
        progress(d, c, true);
}

/* Page-locked spares (ledger.h, docs/SWAP.md "Page-locked copies"): what --swap-limit leaves
 * beside the swapped-out containers is shared among the containers that swap, in proportion
 * to their limits (each at most its limit). So swap's host memory plus every kept lock stays
 * within the limit: when swap needs more, the budgets shrink and the processes over theirs are
 * woken to unlock (a new epoch, no new order). A container with no process left keeps nothing. */
static void pin_budgets(struct daemon *d)
{
    uint64_t limit = d->opt.swap_limit, host = cg_swap_host_bytes(d->core);
    uint64_t room = host < limit ? limit - host : 0, sum = 0;
    for (struct container *c = d->containers; c; c = c->next)
        if (swaps(c))
            sum += c->limit;
    for (struct container *c = d->containers; c; c = c->next) {
        if (!swaps(c))
            continue;
        struct cg_ledger_swap *w = &c->ledger->swap;
        uint64_t budget = sum ? (uint64_t)((unsigned __int128)room * c->limit / sum) : 0;
        if (budget > c->limit)
            budget = c->limit;
        bool live = false;
        for (struct proc *p = c->procs; p && !live; p = p->next)
            live = p->welcomed && p->slot < CG_LEDGER_SLOTS &&
                   atomic_load(&c->ledger->swap_slots[p->slot].ready);
        if (!live)
            atomic_store(&w->pinned, 0); /* the claims of processes gone */
        uint64_t old = atomic_load(&w->pin_budget);
        /* Its own move is counted in swap's host memory while it lasts: those are the very
         * copies it may keep locked after a swap-in, so its budget waits for the move's end. */
        if (budget == old || (c->swap.phase != SWAP_RESIDENT && old))
            continue;
        atomic_store(&w->pin_budget, budget);
        if (budget < old && atomic_load(&w->pinned) > budget && c->swap.phase == SWAP_RESIDENT) {
            atomic_fetch_add(&w->epoch, 1);
            wake(&w->epoch);
        }
    }
}

uint64_t swap_pinned_bytes(const struct container *c)
{
    if (!swaps(c))
        return 0;
    uint64_t pinned = atomic_load(&c->ledger->swap.pinned);
    uint64_t budget = atomic_load(&c->ledger->swap.pin_budget);
    return pinned < budget ? pinned : budget; /* a claim, bounded by what was given */
}

int swap_tick(struct daemon *d)
{
    if (d->opt.swap)
        pin_budgets(d);
    uint64_t now = loop_now_ns();
    uint64_t poll_ns = (uint64_t)(d->swap_poll_ms ? d->swap_poll_ms : SWAP_POLL_MS) * 1000000u;
    int next = -1;
    for (struct container *c = d->containers; c; c = c->next) {
        if (c->swap.phase != SWAP_MOVING_OUT && c->swap.phase != SWAP_MOVING_IN)
            continue;
        /* The loop runs this on every wake-up; the reports are read once per interval only,
         * so that the notices, not whatever else woke the loop, end a move. */
        uint64_t last = c->swap.polled > c->swap.since ? c->swap.polled : c->swap.since;
        if (now - last >= poll_ns) {
            progress(d, c, false);
            c->swap.polled = last = now;
        }
        if (c->swap.phase == SWAP_MOVING_OUT || c->swap.phase == SWAP_MOVING_IN) {
            uint64_t left_ms = (last + poll_ns - now + 999999u) / 1000000u;
            int ms = left_ms > INT_MAX ? INT_MAX : (int)left_ms;
            if (next < 0 || ms < next)
                next = ms;
        }
    }
    return next;
}

const struct decide_swap_ops swap_for_decide = {
    .carry_out = swap_carry_out,
    .mark_in = swap_mark_in,
    .flush = swap_flush,
    .wake_kept = swap_wake_kept,
};

/* decide.c — where a request meets the scheduling core: build the request, let the core decide,
 * and act on its decision events (charge the ledger slot and reply, keep it waiting, or refuse).
 * The sink runs inside core calls, so it only touches ledger words, replies and logs; it never
 * calls back into the core. Quota hand-outs happen after the core call returns. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "daemon.h"
#include "notice.h"
#include "log.h"
#include "proto.h"
#include "size.h"

void decide_freeze(struct daemon *d, struct container *c)
{
    /* While a container moves, its slots are the swap's: moving out, the processes lower them
     * before the core hears what moved (swap.c reports it, then freezes); moving in, their
     * quotas hold what the core charged them again until their swap threads take it. */
    if (c->swap.phase == SWAP_MOVING_OUT || c->swap.phase == SWAP_MOVING_IN)
        return;
    /* A paused container's slots keep what its processes have on the host (pause.h). */
    if (c->pause.phase != PAUSE_NONE)
        return;
    uint64_t now = loop_now_ns();
    for (struct proc *p = c->procs; p; p = p->next) {
        if (!p->welcomed)
            continue;
        uint64_t w = atomic_load(&c->ledger->slots[p->slot].word);
        /* Frozen and unchanged since (the core's use is the quota): nothing to write or tell.
         * A container's processes are many and most are idle; this keeps a sync cheap. */
        if (cg_ledger_quota(w) == cg_ledger_used(w) &&
            cg_ledger_quota(w) == c->rec->slots[p->slot].quota)
            continue;
        uint64_t used = slot_freeze(c, p->slot);
        if (p->known_to_core) {
            cg_status st = cg_process_set_use(d->core, c->cid, p->key, used, now);
            if (st != CG_OK)
                log_warn("container %s: pid %d: cannot sync use: %s", c->ident.id, (int)p->pid,
                         cg_status_str(st));
        }
    }
}

void decide_hand_out(struct daemon *d, struct container *c, struct proc *favored)
{
    cg_container_info ci;
    if (cg_container_get(d->core, c->cid, loop_now_ns(), &ci) != CG_OK)
        return;
    atomic_store(&c->ledger->assigned, ci.assigned);
    atomic_store(&c->ledger->limit, ci.limit);
    atomic_store(&c->ledger->compute.share_pct, ci.compute_pct); /* a change, at once (gate.h) */
    unsigned npending = pending_count(c);
    atomic_store(&c->ledger->waiters, npending);
    /* Slack counts as use in the core; a container with waiters must show its true use or a
     * pending request could look over its limit. */
    if (npending) {
        d->swap_ops->wake_kept(c);
        return;
    }
    /* A container being paused, paused or being restored gets no slack (pause.h). */
    if (c->pause.phase != PAUSE_NONE)
        return;
    if (!favored || !favored->known_to_core || !favored->welcomed) {
        favored = NULL;
        for (struct proc *p = c->procs; p && !favored; p = p->next)
            if (p->known_to_core && p->welcomed)
                favored = p;
    }
    if (!favored)
        return;
    uint64_t quota_pages = 0;
    for (struct proc *p = c->procs; p; p = p->next)
        if (p->welcomed)
            quota_pages += c->rec->slots[p->slot].quota;
    uint64_t assigned_pages = ci.assigned / CG_LEDGER_PAGE;
    if (quota_pages >= assigned_pages)
        return;
    uint64_t slack = assigned_pages - quota_pages;
    uint64_t old = c->rec->slots[favored->slot].quota, nq = old + slack;
    if (nq > CG_LEDGER_MAX_PAGES)
        nq = CG_LEDGER_MAX_PAGES;
    slot_set_quota(c, favored->slot, nq);
    cg_status st = cg_process_set_use(d->core, c->cid, favored->key, nq * CG_LEDGER_PAGE,
                                      loop_now_ns());
    if (st != CG_OK) {
        /* Undo: the core would not take it, so the process must not have it. */
        log_warn("container %s: quota hand-out refused by core: %s", c->ident.id,
                 cg_status_str(st));
        slot_set_quota(c, favored->slot, old);
    }
}

/* Sends the queued replies; the grants they answer need no notes any more (ledger.h). */
static void send_outbox(struct daemon *d)
{
    unsigned n = d->noutbox;
    d->noutbox = 0;
    for (unsigned i = 0; i < n; i++) {
        struct reply *r = &d->outbox[i];
        if (r->p && r->p->fd >= 0 && proc_reply_alloc(r->p, r->msg_id, r->status) != 0)
            shutdown(r->p->fd, SHUT_RDWR); /* the hang-up path drops it */
    }
    /* Only once every reply is out: a process's notes may cover a grant answered later in the
     * outbox than another reply to the same process. */
    for (unsigned i = 0; i < n; i++) {
        struct proc *p = d->outbox[i].p;
        if (p && p->fd >= 0 && p->welcomed)
            p->c->rec->slots[p->slot].noted = 0;
    }
}

static void queue_reply(struct daemon *d, struct proc *p, uint64_t msg_id, uint32_t status)
{
    if (d->noutbox == sizeof d->outbox / sizeof d->outbox[0])
        send_outbox(d); /* full (hundreds of grants in one decision): send what is queued */
    d->outbox[d->noutbox++] = (struct reply){p, msg_id, status};
}

/* The grant is charged to both halves of the slot: the process does not charge it again, and
 * quota stays equal to the core's view of the process's use. It is noted in the daemon's record
 * first, then recorded as granted, then charged to the ledger, so a daemon that dies at any
 * point leaves its successor enough to tell (restore.c): quota still quota_before -> the charge
 * never happened; otherwise it did, and the ledger is brought level if it had not followed.
 * The re-sent request is then answered from the note without a second charge. */
static void charge_slot(struct daemon *d, struct proc *p, uint64_t msg_id, uint64_t bytes)
{
    uint64_t pages;
    if (!cg_ledger_pages(bytes, &pages))
        pages = CG_LEDGER_MAX_PAGES;
    struct cg_record_slot *r = &p->c->rec->slots[p->slot];
    uint32_t n = r->noted < CG_LEDGER_NOTES ? r->noted : CG_LEDGER_NOTES;
    if (n >= CG_LEDGER_NOTES && p->fd >= 0) {
        send_outbox(d); /* answers this process's earlier grants and frees their notes */
        n = r->noted < CG_LEDGER_NOTES ? r->noted : CG_LEDGER_NOTES;
    }
    if (n >= CG_LEDGER_NOTES) { /* not connected: keep the newest notes */
        memmove(&r->notes[0], &r->notes[1], sizeof r->notes[0] * (CG_LEDGER_NOTES - 1));
        n = CG_LEDGER_NOTES - 1;
    }
    uint64_t before = r->quota, after = before + pages;
    if (after > CG_LEDGER_MAX_PAGES)
        after = CG_LEDGER_MAX_PAGES;
    r->notes[n] = (struct cg_ledger_grant){msg_id, (uint32_t)before, (uint32_t)(after - before)};
    atomic_signal_fence(memory_order_seq_cst);
    r->noted = n + 1; /* the note is whole before the charge can happen */
    atomic_signal_fence(memory_order_seq_cst);
    if (d->crash_before_charge && --d->crash_before_charge == 0)
        _exit(99); /* fault injection: noted, not charged, not answered */
    r->quota = (uint32_t)after;
    atomic_signal_fence(memory_order_seq_cst);
    slot_charge(p->c, p->slot, after - before);
    if (d->crash_after_charge && --d->crash_after_charge == 0)
        _exit(99); /* fault injection: charged, noted, not answered */
    r->notes[n].quota_before = CG_LEDGER_CHARGED; /* no longer needs telling apart */
}

void decide_sink(void *ctx, const cg_event *ev)
{
    struct daemon *d = ctx;
    struct container *c = container_by_cid(d, ev->cid);
    if (!c && d->creating &&
        (ev->kind == CG_EV_ADMIT || ev->kind == CG_EV_ASSIGN || ev->kind == CG_EV_COMPUTE)) {
        c = d->creating;
        c->cid = ev->cid;
    }
    char b[CG_SIZE_BUFLEN];
    const char *cname = c ? c->ident.id : "?";
    struct proc *p = NULL;

    switch (ev->kind) {
    case CG_EV_GRANT:
    case CG_EV_RESUME: {
        if (ev->req == 0) {
            /* A use the daemon reported (quota hand-out or sync), not a request. */
            log_debug("use container %s: +%s", cname, cg_format_size(ev->bytes, b, sizeof b));
            break;
        }
        struct pending *r = c ? pending_take(c, ev->req) : NULL;
        p = r ? r->proc : NULL;
        if (r)
            notice_request_answered(d, c, ev->now - r->since);
        /* Charge whenever the core did, so quota keeps equal to the core's use even for a
         * process that is disconnected right now; only a connected one can be answered. */
        if (p && p->welcomed) {
            charge_slot(d, p, r->msg_id, ev->bytes);
            if (p->fd >= 0) {
                queue_reply(d, p, r->msg_id, CG_ALLOC_GRANTED);
                c->decide.favored = p;
            }
        }
        if (ev->kind == CG_EV_RESUME && r)
            log_info("resume container %s pid %d: %s granted after %.3fs (%s)", cname,
                     p ? (int)p->pid : 0, cg_format_size(ev->bytes, b, sizeof b),
                     (double)(ev->now - r->since) / 1e9, cg_reason_str(ev->reason));
        else
            log_debug("grant container %s pid %d: %s (%s)", cname, p ? (int)p->pid : 0,
                      cg_format_size(ev->bytes, b, sizeof b), cg_reason_str(ev->reason));
        free(r);
        break;
    }
    case CG_EV_REJECT: {
        struct pending *r = c ? pending_take(c, ev->req) : NULL;
        p = r ? r->proc : NULL;
        if (r)
            notice_request_answered(d, c, ev->now - r->since);
        if (p && p->fd >= 0)
            queue_reply(d, p, r->msg_id,
                        ev->reason == CG_WHY_OVER_LIMIT ? CG_ALLOC_OVER_LIMIT : CG_ALLOC_CANCELLED);
        log_info("reject container %s pid %d: %s (%s)", cname, p ? (int)p->pid : 0,
                 cg_format_size(ev->bytes, b, sizeof b), cg_reason_str(ev->reason));
        free(r);
        break;
    }
    case CG_EV_SUSPEND: {
        struct pending *r = c ? pending_find(c, ev->req) : NULL;
        p = r ? r->proc : NULL;
        log_info("suspend container %s pid %d: %s (%s)", cname, p ? (int)p->pid : 0,
                 cg_format_size(ev->bytes, b, sizeof b), cg_reason_str(ev->reason));
        break;
    }
    case CG_EV_LIMIT:
        if (c)
            c->limit = ev->bytes;
        log_info("limit container %s: now %s", cname, cg_format_size(ev->bytes, b, sizeof b));
        break;
    case CG_EV_COMPUTE:
        if (ev->compute_pct)
            log_info("compute container %s: share %u%% (%s)", cname, ev->compute_pct,
                     cg_compute_mode_name(ev->compute_mode));
        else
            log_info("compute container %s: no compute limit", cname);
        break;
    case CG_EV_SWAP_OUT:
        log_info("swap-out container %s: up to %s (%s)", cname,
                 cg_format_size(ev->bytes, b, sizeof b), cg_reason_str(ev->reason));
        if (c)
            d->swap_ops->carry_out(d, c);
        break;
    case CG_EV_SWAP_IN:
        log_info("swap-in container %s: %s (%s)", cname, cg_format_size(ev->bytes, b, sizeof b),
                 cg_reason_str(ev->reason));
        if (c)
            d->swap_ops->mark_in(c, ev->bytes);
        break;
    case CG_EV_PRIORITY:
        log_info("priority container %s: %llu", cname, (unsigned long long)ev->bytes);
        break;
    case CG_EV_ADMIT:
    case CG_EV_ASSIGN:
    case CG_EV_UNASSIGN:
    case CG_EV_RELEASE:
    case CG_EV_REMOVE:
        log_debug("%s container %s: %s (%s)", cg_event_kind_name(ev->kind), cname,
                  cg_format_size(ev->bytes, b, sizeof b), cg_reason_str(ev->reason));
        break;
    }
    if (c)
        c->decide.dirty = true;
    notice_core_event(d, c, p, ev);
}

void decide_flush(struct daemon *d)
{
    /* Swap-ins first: they raise quotas by what the core charged again, which a hand-out
     * must not take for slack. */
    d->swap_ops->flush(d);
    /* A hand-out tells the core the new use, which can decide more: repeat until quiet. */
    for (int round = 0; round < 8; round++) {
        bool any = false;
        for (struct container *c = d->containers; c; c = c->next) {
            if (!c->decide.dirty)
                continue;
            c->decide.dirty = false;
            any = true;
            decide_hand_out(d, c, c->decide.favored);
            c->decide.favored = NULL;
        }
        if (!any)
            break;
    }
    send_outbox(d);
}

/* How long a request waits for its siblings to drop the memory they keep (see decide_alloc):
 * they drop it within one wake-up of their swap threads, so this bounds only one that never
 * does (stopped, or not our interposer); past it the core decides with the memory counted. */
#define KEPT_HOLD_NS (10 * 1000000000ull)

/* Puts a waiting request to the core; its decision events answer it (decide_sink). */
static void ask_core(struct daemon *d, struct container *c, struct pending *r)
{
    struct proc *p = r->proc;
    uint64_t req = r->req, msg_id = r->msg_id;
    decide_freeze(d, c);
    p->known_to_core = true; /* the core registers the process at its first request */
    cg_outcome outcome;
    cg_status st = cg_request(d->core, c->cid, p->key, req, r->bytes, r->since, &outcome);
    if (st != CG_OK) {
        struct pending *left = pending_take(c, req);
        log_warn("container %s: pid %d: request refused by core: %s", c->ident.id, (int)p->pid,
                 cg_status_str(st));
        if (left) {
            queue_reply(d, p, msg_id, CG_ALLOC_INVALID);
            free(left);
        }
    }
    /* A first request rejected as over the limit leaves the process unknown to the core. */
    if (st != CG_OK || outcome == CG_REJECTED) {
        bool known = false;
        size_t n = cg_container_processes(d->core, c->cid, NULL, 0);
        cg_process_info *all = n ? calloc(n, sizeof *all) : NULL;
        if (all) {
            n = cg_container_processes(d->core, c->cid, all, n);
            for (size_t i = 0; i < n; i++)
                if (all[i].pid == p->key)
                    known = true;
            free(all);
        }
        p->known_to_core = known;
    }
}

void decide_alloc(struct daemon *d, struct proc *p, uint64_t msg_id, uint64_t bytes)
{
    struct container *c = p->c;
    /* A request granted and charged by a daemon that died before answering it: answer it now,
     * and charge nothing again. */
    struct cg_record_slot *s = &c->rec->slots[p->slot];
    uint32_t noted = s->noted < CG_LEDGER_NOTES ? s->noted : CG_LEDGER_NOTES;
    for (uint32_t i = 0; i < noted; i++) {
        if (s->notes[i].id != msg_id)
            continue;
        memmove(&s->notes[i], &s->notes[i + 1], sizeof s->notes[0] * (CG_LEDGER_NOTES - 1 - i));
        s->noted = noted - 1;
        log_info("container %s: pid %d: request %llu was granted before the daemon restarted; "
                 "answered again, not charged again",
                 c->ident.id, (int)p->pid, (unsigned long long)msg_id);
        if (proc_reply_alloc(p, msg_id, CG_ALLOC_GRANTED) != 0)
            shutdown(p->fd, SHUT_RDWR);
        return;
    }
    uint64_t pages;
    if (!cg_ledger_pages(bytes, &pages) || pages * CG_LEDGER_PAGE > c->limit) {
        /* Bigger than the limit can ever be: no need to bother the core. A client that does
         * not read its answers is cut off like any other (the hang-up path drops it). */
        if (proc_reply_alloc(p, msg_id, CG_ALLOC_OVER_LIMIT) != 0)
            shutdown(p->fd, SHUT_RDWR);
        return;
    }
    /* A container's waiting requests are bounded (daemon.h): beyond that the request is refused
     * at once, which an honest process sees as out of memory, and it keeps its connection. */
    if (pending_count(c) >= MAX_PENDING_PER_CONTAINER) {
        uint64_t now = loop_now_ns();
        if (now - c->decide.last_bound_warning >= 1000000000ull) {
            c->decide.last_bound_warning = now;
            log_warn("container %s: %u requests already waiting; refusing more (pid %d)",
                     c->ident.id, pending_count(c), (int)p->pid);
        }
        if (proc_reply_alloc(p, msg_id, CG_ALLOC_CANCELLED) != 0)
            shutdown(p->fd, SHUT_RDWR);
        return;
    }
    struct pending *r = pending_add(c, p, ++d->next_req, msg_id, pages * CG_LEDGER_PAGE,
                                    loop_now_ns());
    if (!r) {
        if (proc_reply_alloc(p, msg_id, CG_ALLOC_INVALID) != 0)
            shutdown(p->fd, SHUT_RDWR);
        return;
    }
    /* Its siblings' kept memory counts as their use, so the core could find the request over
     * the limit or the device full for memory that is only waiting to be reused: it waits
     * here until they drop it (they do once they see a waiter; rebalance wakes them). */
    if (c->ledger && cg_ledger_kept_bytes(c->ledger) != 0) {
        r->held_until = r->since + KEPT_HOLD_NS;
        c->decide.held = true;
        log_debug("container %s: pid %d's request waits for memory its processes keep", c->ident.id,
                  (int)p->pid);
    } else {
        ask_core(d, c, r);
    }
    c->decide.dirty = true;
    decide_flush(d);
}

void decide_release_held(struct daemon *d, struct container *c)
{
    if (!c->decide.held)
        return; /* the usual case: nothing held, nothing to walk */
    uint64_t now = loop_now_ns();
    bool dropped = !c->ledger || cg_ledger_kept_bytes(c->ledger) == 0;
    /* The ids first: a core call may answer, and free, any of the container's requests. */
    uint64_t *due = calloc(pending_count(c), sizeof *due);
    size_t ndue = 0;
    bool still = false;
    for (struct pending *r = c->pending.head; r; r = r->next) {
        if (!r->held_until)
            continue;
        if ((!dropped && now < r->held_until) || !due)
            still = true; /* not due yet (or no memory to list it: the next look) */
        else
            due[ndue++] = r->req;
    }
    c->decide.held = still;
    for (size_t i = 0; i < ndue; i++) {
        struct pending *r = pending_find(c, due[i]);
        if (!r)
            continue;
        if (!dropped)
            log_warn("container %s: pid %d still keeps freed memory after %d s; asking the "
                     "core anyway",
                     c->ident.id, (int)r->proc->pid, (int)(KEPT_HOLD_NS / 1000000000u));
        r->held_until = 0;
        ask_core(d, c, r);
    }
    free(due);
    if (ndue) {
        c->decide.dirty = true;
        decide_flush(d);
    }
}

/* A FREED notice only says "re-decide": notices in one round, however many, cost one. */
static void redecide(void *ctx)
{
    struct container *c = ctx;
    if (!pending_count(c))
        return;
    decide_release_held(c->d, c);
    decide_freeze(c->d, c);
    c->decide.dirty = true;
    decide_flush(c->d);
}

void decide_freed(struct daemon *d, struct proc *p)
{
    struct container *c = p->c;
    if (!pending_count(c))
        return;
    loop_defer(d->loop, &c->decide.redecide, redecide, c);
}

/* A FREED notice can be lost: the process's connection died with a restarted daemon and it has
 * asked the new one for nothing since (a free goes through its ledger alone, and so does its
 * notice's attempt), or its socket buffer was full. A waiter must not depend on it. While a
 * container has waiters its slots are frozen (quota == use: the last decision synced them, and
 * a grant charges both halves), so a slot whose use fell below its quota shows a free nobody
 * was told of. Reading them costs a load per process, once per interval, and only where a
 * request waits. */
#define FREED_POLL_MS 100

static bool slots_moved(const struct container *c)
{
    for (const struct proc *p = c->procs; p; p = p->next) {
        if (!p->welcomed || p->slot >= CG_LEDGER_SLOTS)
            continue;
        uint64_t w = atomic_load(&c->ledger->slots[p->slot].word);
        if (cg_ledger_used(w) != cg_ledger_quota(w) ||
            cg_ledger_quota(w) != c->rec->slots[p->slot].quota)
            return true;
    }
    return false;
}

int decide_tick(struct daemon *d)
{
    const uint64_t poll_ns = FREED_POLL_MS * 1000000ull;
    uint64_t now = loop_now_ns();
    if (now < d->freed_poll_due)
        return (int)((d->freed_poll_due - now + 999999u) / 1000000u);
    d->freed_poll_due = now + poll_ns;
    bool waiting = false;
    for (struct container *c = d->containers; c; c = c->next) {
        if (!pending_count(c) || c->swap.phase == SWAP_MOVING_OUT ||
            c->swap.phase == SWAP_MOVING_IN)
            continue;
        waiting = true;
        /* Again: a wake-up can be lost between a free's look at the waiters and its keeping. */
        d->swap_ops->wake_kept(c);
        decide_release_held(d, c);
        if (slots_moved(c)) {
            log_debug("container %s: a free without a notice: re-deciding its waiters",
                      c->ident.id);
            loop_defer(d->loop, &c->decide.redecide, redecide, c);
        }
    }
    /* With nothing waiting the loop need not wake for this: a request that waits later is looked
     * at on the first wake-up after the interval. */
    return waiting ? FREED_POLL_MS : -1;
}

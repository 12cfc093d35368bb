/* core.c — the scheduling core's operations: devices, containers, requests, limits, and the
 * resume procedure that runs whenever free memory grows.
 *
 * Every operation first validates and secures all the memory it will need, and only then
 * changes state and emits events, so an error (CG_ERR_NOMEM included) leaves nothing changed.
 * Two invariants carry the deadlock-freedom argument of docs/SCHEDULING.md:
 *   S: every device is banker's-safe (safety.h) after every operation;
 *   P: every pending request is live: A < U + size <= L (drain_own restores it after any change
 *      of U, A or L), and no suspended container could be given its whole need safely
 *      (suspension only happens when the shortfall cannot be, and the resume pass offers each
 *      suspended container the largest safe amount whenever free memory grows).
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "safety.h"
#include "waitq.h"

/* ---- memory ------------------------------------------------------------------------------ */

void *cg_mem_alloc(cg_core *core, size_t size)
{
    void *p = core->cfg.mem_alloc ? core->cfg.mem_alloc(core->cfg.mem_ctx, size) : malloc(size);
    if (p)
        core->bytes_held += size;
    return p;
}

void cg_mem_free(cg_core *core, void *p, size_t size)
{
    if (!p)
        return;
    core->bytes_held -= size;
    if (core->cfg.mem_free)
        core->cfg.mem_free(core->cfg.mem_ctx, p);
    else
        free(p);
}

uint64_t cg_rng_below(uint64_t *state, uint64_t n)
{
    /* Rejection sampling: draws in the incomplete last block would favour small values. */
    uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t x;
    do
        x = cg_rng_next(state);
    while (x >= limit);
    return x % n;
}

/* ---- lifecycle --------------------------------------------------------------------------- */

cg_core *cg_core_new(const cg_config *cfg)
{
    cg_config c = cfg ? *cfg : (cg_config){0};
    if ((unsigned)c.resume >= CG_RESUME__COUNT || (unsigned)c.placement >= CG_PLACE__COUNT)
        return NULL;
    if (!c.mem_alloc != !c.mem_free)
        return NULL;
    cg_core *core = c.mem_alloc ? c.mem_alloc(c.mem_ctx, sizeof *core) : malloc(sizeof *core);
    if (!core)
        return NULL;
    memset(core, 0, sizeof *core);
    core->cfg = c;
    core->resume = cg_resume_table[c.resume];
    core->place = cg_place_table[c.placement];
    core->next_cid = 1;
    core->rng = c.seed;
    core->bytes_held = sizeof *core;
    return core;
}

static void free_container(cg_core *core, cg_container *c)
{
    for (cg_pending *r = c->phead, *n; r; r = n) {
        n = r->next;
        cg_mem_free(core, r, sizeof *r);
    }
    for (cg_process *p = c->procs, *n; p; p = n) {
        n = p->next;
        cg_mem_free(core, p, sizeof *p);
    }
    cg_mem_free(core, c, sizeof *c);
}

void cg_core_free(cg_core *core)
{
    if (!core)
        return;
    for (cg_container *c = core->head, *n; c; c = n) {
        n = c->next;
        free_container(core, c);
    }
    cg_hash_release(core, &core->by_cid);
    cg_hash_release(core, &core->by_pid);
    cg_hash_release(core, &core->by_req);
    cg_fair_release(core);
    if (core->cfg.mem_free)
        core->cfg.mem_free(core->cfg.mem_ctx, core);
    else
        free(core);
}

/* ---- small helpers ----------------------------------------------------------------------- */

static void emit(cg_core *core, cg_event_kind kind, cg_reason why, const cg_container *c,
                 cg_pid pid, cg_reqid req, cg_bytes bytes, cg_time now)
{
    if (!core->cfg.sink)
        return;
    cg_event ev = {.kind = kind, .reason = why, .cid = c->cid, .device = c->dev, .pid = pid,
                   .req = req, .bytes = bytes, .now = now};
    core->cfg.sink(core->cfg.sink_ctx, &ev);
}

void cg_emit(cg_core *core, cg_event_kind kind, cg_reason why, const cg_container *c, cg_pid pid,
             cg_reqid req, cg_bytes bytes, cg_time now)
{
    emit(core, kind, why, c, pid, req, bytes, now);
}

static cg_container *find(const cg_core *core, cg_cid cid)
{
    return cid == CG_CID_NONE ? NULL : cg_hash_get(&core->by_cid, cid, 0);
}

static cg_process *find_proc(const cg_core *core, const cg_container *c, cg_pid pid)
{
    return cg_hash_get(&core->by_pid, c->cid, pid);
}

static void set_assigned(cg_device *d, cg_container *c, cg_bytes a)
{
    cg_safety_remove(d, c);
    d->assigned = d->assigned - c->assigned + a;
    c->assigned = a;
    cg_safety_insert(d, c);
}

static void set_limit(cg_device *d, cg_container *c, cg_bytes l)
{
    cg_safety_remove(d, c);
    c->limit = l;
    cg_safety_insert(d, c);
}

void cg_assign_more(cg_core *core, cg_container *c, cg_bytes g, cg_reason why, cg_time now)
{
    set_assigned(&core->dev[c->dev], c, c->assigned + g);
    emit(core, CG_EV_ASSIGN, why, c, 0, 0, g, now);
}

void cg_assign_less(cg_core *core, cg_container *c, cg_bytes a, cg_reason why, cg_time now)
{
    cg_bytes less = c->assigned - a;
    set_assigned(&core->dev[c->dev], c, a);
    if (less)
        emit(core, CG_EV_UNASSIGN, why, c, 0, 0, less, now);
}

/* Would container c with limit l and assignment a (device free adjusted) be safe? */
static bool safe_if(cg_device *d, cg_container *c, cg_bytes l, cg_bytes a)
{
    cg_bytes free = dev_free(d) + c->assigned - a;
    cg_safety_remove(d, c);
    bool ok = cg_safety_probe(d, c->cid, l - a, a, free);
    cg_safety_insert(d, c);
    return ok;
}

static cg_time elapsed(cg_time from, cg_time to) { return to > from ? to - from : 0; }

static void suspend_begin(cg_device *d, cg_container *c, cg_time now)
{
    c->waiting = true;
    c->suspended_since = now;
    c->sprev = d->stail;
    c->snext = NULL;
    if (d->stail)
        d->stail->snext = c;
    else
        d->shead = c;
    d->stail = c;
    d->nsuspended++;
    d->nwait_prio[c->priority]++;
}

static void suspend_end(cg_device *d, cg_container *c, cg_time now)
{
    c->total_suspended += elapsed(c->suspended_since, now);
    c->served_at = now;   /* a borrower of a lender's memory from now (stepaside.c) */
    if (c->sprev)
        c->sprev->snext = c->snext;
    else
        d->shead = c->snext;
    if (c->snext)
        c->snext->sprev = c->sprev;
    else
        d->stail = c->sprev;
    c->sprev = c->snext = NULL;
    c->waiting = false;
    d->nsuspended--;
    d->nwait_prio[c->priority]--;
}

void cg_wait_update(cg_core *core, cg_container *c, cg_time now)
{
    bool want = ctr_waits(c);
    if (want && !c->waiting)
        suspend_begin(&core->dev[c->dev], c, now);
    else if (!want && c->waiting)
        suspend_end(&core->dev[c->dev], c, now);
}

static void wait_link(cg_device *d, cg_container *c)
{
    c->wprev = d->wtail;
    c->wnext = NULL;
    if (d->wtail)
        d->wtail->wnext = c;
    else
        d->whead = c;
    d->wtail = c;
}

static void wait_unlink(cg_device *d, cg_container *c)
{
    if (c->wprev)
        c->wprev->wnext = c->wnext;
    else
        d->whead = c->wnext;
    if (c->wnext)
        c->wnext->wprev = c->wprev;
    else
        d->wtail = c->wprev;
    c->wprev = c->wnext = NULL;
    c->limit_waiting = 0;
}

/* Forgets a pending request (granted, rejected or cancelled); ends the suspension with the
 * last one. */
static void req_drop(cg_core *core, cg_container *c, cg_pending *r, cg_time now)
{
    cg_waitq_remove(c, r);
    cg_hash_del(&core->by_req, c->cid, r->req);
    r->proc->npending--;
    if (r->charges)
        r->proc->charge_pending = false;
    c->npending--;
    c->pending_bytes -= r->bytes;
    cg_mem_free(core, r, sizeof *r);
    cg_wait_update(core, c, now);
}

void cg_reject_pending(cg_core *core, cg_container *c, cg_reason why, cg_time now)
{
    while (c->phead) {
        cg_pending *r = c->phead;
        emit(core, CG_EV_REJECT, why, c, r->proc->pid, r->req, r->bytes, now);
        req_drop(core, c, r, now);
    }
}

static void charge(cg_core *core, cg_container *c, cg_process *p, cg_bytes bytes, bool charges)
{
    p->used += bytes;
    if (charges)
        p->charged = true;
    c->used += bytes;
    core->dev[c->dev].used += bytes;
}

/* Restores P for one container after its U, A or L changed: grants, in arrival order, the
 * pending requests that now fit in A, then rejects those that can no longer fit in L. Two
 * passes, because a grant raises U and can push an earlier request over the limit. A grant only
 * shrinks the room left, so each search goes on after the request it last found; with nothing to
 * do (the usual case) each pass is one comparison (waitq.h). */
static void drain_own(cg_core *core, cg_container *c, cg_reason why, cg_time now)
{
    cg_pending *r;
    uint64_t after = 0;
    /* Out, with room now for what is on the host (its use or what the host holds shrank): it
     * is ordered in first, which drains it. */
    if (c->swap == CG_SWAPPED_OUT)
        cg_swap_in_if_room(core, c, now);
    /* A container out, or on its way out, grants nothing: the room is for what comes back. */
    while (!ctr_frozen(c) && c->used < c->assigned &&
           (r = cg_waitq_first_fit(c, after, c->assigned - c->used))) {
        after = r->seq;
        charge(core, c, r->proc, r->bytes, r->charges);
        emit(core, CG_EV_RESUME, why, c, r->proc->pid, r->req, r->bytes, now);
        req_drop(core, c, r, now);
    }
    after = 0;
    while ((r = cg_waitq_first_over(c, after, c->limit - ctr_charged(c)))) {
        after = r->seq;
        emit(core, CG_EV_REJECT, CG_WHY_OVER_LIMIT, c, r->proc->pid, r->req, r->bytes, now);
        req_drop(core, c, r, now);
    }
}

void cg_drain_own(cg_core *core, cg_container *c, cg_reason why, cg_time now)
{
    drain_own(core, c, why, now);
}

static void reschedule(cg_core *core, unsigned dev, cg_time now);
void cg_reschedule(cg_core *core, unsigned dev, cg_time now) { reschedule(core, dev, now); }

/* ---- the resume procedure ---------------------------------------------------------------- */

/* One waiting container, picked by the policy, is offered the largest safe amount up to its
 * whole need ("assign until A = L"); its pending requests that now fit are granted, or, when it
 * is out, it is ordered in once its assignment holds what is on the host. */
static void offer(cg_core *core, cg_container *c, cg_time now)
{
    if (c->queued)
        return;   /* its gang takes memory on all its devices at once, or none (gang.c) */
    cg_device *d = &core->dev[c->dev];
    cg_bytes need = ctr_need(c), free = dev_free(d);
    cg_bytes g = cg_safety_largest(d, c, cg_fair_cap(core, c, need < free ? need : free));
    if (g) {
        set_assigned(d, c, c->assigned + g);
        emit(core, CG_EV_ASSIGN, CG_WHY_POLICY, c, 0, 0, g, now);
    }
    if (g || c->swap == CG_SWAPPED_OUT)
        drain_own(core, c, CG_WHY_POLICY, now);
}

/* Runs after free memory grew or a need shrank. The waiting containers are offered memory class
 * by class (priority.c), the policy ordering each class, each container once. One pass
 * suffices: memory given to one container never enlarges the safe amount of another
 * (docs/SCHEDULING.md, Lemma 2). Then waiting limit raises that have become safe are applied,
 * in arrival order. */
static void reschedule(cg_core *core, unsigned dev, cg_time now)
{
    cg_device *d = &core->dev[dev];
    bool again;
    do {
        /* Tenants' ceilings first (fairshare.c): one that grew may let someone resume, and a
         * raised limit may grow one, hence another pass after limit raises. */
        cg_fair_recompute(core, dev);
        cg_gang_admit_queued(core, dev, now);    /* gangs first: they need every GPU at once */
        cg_resume_round(core, dev, now, offer);
        again = false;
        for (cg_container *w = d->whead, *n; w; w = n) {
            n = w->wnext;
            cg_bytes target = w->limit_waiting;
            if (safe_if(d, w, target, w->assigned)) {
                wait_unlink(d, w);
                set_limit(d, w, target);
                emit(core, CG_EV_LIMIT, CG_WHY_LIMIT_CHANGED, w, 0, 0, target, now);
                again = cg_fair_on(core);
            }
        }
    } while (again);
    cg_step_aside_reclaim(core, dev, now);
}

/* ---- devices and policies ---------------------------------------------------------------- */

cg_status cg_device_add(cg_core *core, cg_bytes total, cg_bytes reserve, cg_bytes context_charge,
                        unsigned *index_out)
{
    /* Sizes stay far below 2^62 so the safety index's signed sums cannot overflow. */
    const cg_bytes max = (cg_bytes)1 << 62;
    if (!core || core->ncontainers || total > max || reserve >= total || context_charge > total)
        return CG_ERR_INVALID;
    if (core->ndev >= CG_MAX_DEVICES)
        return CG_ERR_NO_DEVICE;
    cg_device *d = &core->dev[core->ndev];
    memset(d, 0, sizeof *d);
    d->total = total;
    d->reserve = reserve;
    d->capacity = total - reserve;
    d->context_charge = context_charge;
    if (index_out)
        *index_out = core->ndev;
    core->ndev++;
    return CG_OK;
}

cg_status cg_device_set_context_charge(cg_core *core, unsigned device, cg_bytes charge)
{
    if (device >= core->ndev)
        return CG_ERR_NO_DEVICE;
    if (charge > core->dev[device].total)
        return CG_ERR_INVALID;
    core->dev[device].context_charge = charge;
    return CG_OK;
}

cg_status cg_set_resume_policy(cg_core *core, cg_resume_policy p, cg_time now)
{
    if ((unsigned)p >= CG_RESUME__COUNT)
        return CG_ERR_INVALID;
    core->cfg.resume = p;
    core->resume = cg_resume_table[p];
    for (unsigned i = 0; i < core->ndev; i++)
        reschedule(core, i, now);
    return CG_OK;
}

cg_status cg_set_placement_policy(cg_core *core, cg_placement_policy p)
{
    if ((unsigned)p >= CG_PLACE__COUNT)
        return CG_ERR_INVALID;
    core->cfg.placement = p;
    core->place = cg_place_table[p];
    return CG_OK;
}

cg_resume_policy cg_get_resume_policy(const cg_core *core) { return core->cfg.resume; }
cg_placement_policy cg_get_placement_policy(const cg_core *core) { return core->cfg.placement; }

/* ---- containers -------------------------------------------------------------------------- */

/* A device for a new container, or a negative status. */
static int place(const cg_core *core, const cg_container_spec *spec, unsigned hard)
{
    cg_bytes limit = spec->limit;
    int i = core->place->pick(core, spec, hard);
    if (i >= 0)
        return i;
    /* No device has the whole limit free: wait where the most is free (lowest index on ties),
     * among the devices that can hold the limit and admit the hard share. */
    bool big_enough = false;
    for (unsigned j = 0; j < core->ndev; j++) {
        const cg_device *d = &core->dev[j];
        big_enough |= d->capacity >= limit;
        if (d->capacity >= limit && dev_admits(d, hard) && d->exclusive == CG_CID_NONE &&
            (i < 0 || dev_free(d) > dev_free(&core->dev[i])))
            i = (int)j;
    }
    return i >= 0           ? i
           : big_enough     ? -(int)cg_exclusive_why_unplaced(core, limit, hard)
                            : -(int)CG_ERR_TOO_LARGE;
}

/* Creation and restore share everything but the initial assignment: the largest safe amount
 * up to min(L, free) for a new container, exactly `want` for a restored one, the whole limit for
 * a gang member (or nothing: CG_ERR_NOT_FREE), and for a trial the same answer with nothing
 * kept (gang.c asks every device before it creates on any). */
cg_status cg_create(cg_core *core, const cg_container_spec *spec, cg_time now,
                    enum cg_create_kind kind, cg_bytes want, cg_cid *cid_out)
{
    bool exact = kind == CG_CREATE_RESTORE;
    bool whole = kind == CG_CREATE_RESERVE || kind == CG_CREATE_TRIAL;
    bool queue = kind == CG_CREATE_QUEUE;
    int device = spec->device;
    cg_bytes limit = spec->limit;
    if (core->ndev && (device < 0 || (unsigned)device < core->ndev)) {
        cg_status st = cg_exclusive_admit(core, spec, &device, &limit);
        if (st != CG_OK)
            return st;
    }
    if (limit == 0 || (exact && want > limit) || !share_valid(spec->compute_pct, spec->compute_mode) ||
        spec->priority > CG_PRIORITY_MAX || spec->util_pct > CG_COMPUTE_PCT_MAX)
        return CG_ERR_INVALID;
    if (core->ndev == 0 || (device >= 0 && (unsigned)device >= core->ndev))
        return CG_ERR_NO_DEVICE;
    if (core->next_cid == UINT32_MAX)
        return CG_ERR_NOMEM;
    unsigned hard = spec->compute_mode == CG_COMPUTE_HARD ? spec->compute_pct : 0;
    int di = device;
    if (di >= 0) {
        if (limit > core->dev[di].capacity)
            return CG_ERR_TOO_LARGE;
        if (!dev_admits(&core->dev[di], hard))
            return CG_ERR_NO_COMPUTE;
    } else if ((di = place(core, spec, hard)) < 0) {
        return (cg_status)-di;
    }
    cg_device *d = &core->dev[di];
    if (cg_fair_on(core) && !cg_fair_reserve(core, core->ncontainers + 1))
        return CG_ERR_NOMEM;
    cg_container *c = cg_mem_alloc(core, sizeof *c);
    if (!c)
        return CG_ERR_NOMEM;
    if (!cg_hash_reserve(core, &core->by_cid, 1)) {
        cg_mem_free(core, c, sizeof *c);
        return CG_ERR_NOMEM;
    }
    memset(c, 0, sizeof *c);
    c->cid = core->next_cid++;
    c->dev = (unsigned)di;
    c->limit = limit;
    c->tenant = spec->tenant;
    c->created_at = now;
    c->priority = spec->priority;
    c->no_swap = spec->no_swap;
    c->util_pct = spec->util_pct;
    c->app = spec->app;
    c->prev = core->tail;
    if (core->tail)
        core->tail->next = c;
    else
        core->head = c;
    core->tail = c;
    core->ncontainers++;
    d->ncontainers++;
    cg_hash_put(&core->by_cid, c->cid, 0, c);
    /* With A = 0 the new container can always go last in the safe order (L <= C), so this
     * insertion keeps S; then it gets the largest safe amount up to min(L, free). */
    cg_safety_insert(d, c);
    cg_bytes free = dev_free(d);
    cg_bytes cap = limit < free ? limit : free;
    if (!exact) {
        cg_fair_recompute(core, (unsigned)di);   /* the newcomer shrinks the others' shares */
        cap = cg_fair_cap(core, c, cap);
    }
    cg_bytes g = queue ? 0 : cg_safety_largest(d, c, exact && want < cap ? want : cap);
    if ((exact && g != want) || (whole && (g != limit || kind == CG_CREATE_TRIAL))) {
        /* Not restorable as recorded, not wholly assignable, or only a trial: undo the
         * insertion (and the newcomer's effect on its tenants' shares); nothing else changed. */
        cg_safety_remove(d, c);
        core->tail = c->prev;
        if (c->prev)
            c->prev->next = NULL;
        else
            core->head = NULL;
        core->ncontainers--;
        d->ncontainers--;
        cg_hash_del(&core->by_cid, c->cid, 0);
        cg_mem_free(core, c, sizeof *c);
        core->next_cid--;
        if (!exact)
            cg_fair_recompute(core, (unsigned)di);
        return exact ? CG_ERR_INVALID : g != limit ? CG_ERR_NOT_FREE : CG_OK;
    }
    if (whole) {
        c->reserved = true;
        c->no_swap = true;
    }
    if (queue) {
        c->queued = true;
        c->no_swap = true;
        core->nqueued++;
    }
    if (g)
        set_assigned(d, c, g);
    cg_exclusive_attach(core, c, spec->exclusive);
    emit(core, CG_EV_ADMIT, CG_WHY_NONE, c, 0, 0, limit, now);
    if (g)
        emit(core, CG_EV_ASSIGN, CG_WHY_NONE, c, 0, 0, g, now);
    cg_share_set(core, c, spec->compute_pct, spec->compute_mode, now); /* admitted above */
    if (cid_out)
        *cid_out = c->cid;
    if (cg_fair_on(core))
        reschedule(core, (unsigned)di, now);      /* its limit may have grown its tenant's ceiling */
    return CG_OK;
}

cg_status cg_container_create_spec(cg_core *core, const cg_container_spec *spec, cg_time now,
                                   cg_cid *cid_out)
{
    if (!spec)
        return CG_ERR_INVALID;
    return cg_create(core, spec, now, CG_CREATE_NEW, 0, cid_out);
}

cg_status cg_container_create(cg_core *core, int device, cg_bytes limit, cg_time now,
                              cg_cid *cid_out)
{
    cg_container_spec spec = {.device = device, .limit = limit};
    return cg_create(core, &spec, now, CG_CREATE_NEW, 0, cid_out);
}

cg_status cg_container_restore(cg_core *core, unsigned device, cg_bytes limit, cg_bytes assigned,
                               cg_time created_at, cg_cid *cid_out)
{
    cg_container_spec spec = {.device = (int)device, .limit = limit};
    return cg_container_restore_spec(core, &spec, assigned, created_at, cid_out);
}

cg_status cg_container_restore_spec(cg_core *core, const cg_container_spec *spec,
                                    cg_bytes assigned, cg_time created_at, cg_cid *cid_out)
{
    if (!spec || spec->device < 0 || (unsigned)spec->device >= core->ndev)
        return CG_ERR_NO_DEVICE;
    return cg_create(core, spec, created_at, CG_CREATE_RESTORE, assigned, cid_out);
}

cg_status cg_container_remove(cg_core *core, cg_cid cid, cg_time now)
{
    cg_container *c = find(core, cid);
    if (!c)
        return CG_ERR_NOT_FOUND;
    cg_device *d = &core->dev[c->dev];
    if (c->queued)
        core->nqueued--;
    while (c->phead) {
        cg_pending *r = c->phead;
        emit(core, CG_EV_REJECT, CG_WHY_REMOVED, c, r->proc->pid, r->req, r->bytes, now);
        req_drop(core, c, r, now);
    }
    for (cg_process *p = c->procs, *n; p; p = n) {
        n = p->next;
        if (p->used)
            emit(core, CG_EV_RELEASE, CG_WHY_REMOVED, c, p->pid, 0, p->used, now);
        c->used -= p->used;
        d->used -= p->used;
        cg_swap_forget_process(core, c, p);
        cg_hash_del(&core->by_pid, c->cid, p->pid);
        cg_mem_free(core, p, sizeof *p);
    }
    c->procs = NULL;
    c->nprocs = 0;
    cg_swap_forget_container(core, c);
    if (c->waiting)
        suspend_end(d, c, now);
    if (c->limit_waiting)
        wait_unlink(d, c);
    if (c->assigned)
        emit(core, CG_EV_UNASSIGN, CG_WHY_REMOVED, c, 0, 0, c->assigned, now);
    cg_safety_remove(d, c);
    cg_share_detach(core, c);
    cg_exclusive_detach(core, c);
    d->assigned -= c->assigned;
    d->ncontainers--;
    if (c->prev)
        c->prev->next = c->next;
    else
        core->head = c->next;
    if (c->next)
        c->next->prev = c->prev;
    else
        core->tail = c->prev;
    core->ncontainers--;
    cg_hash_del(&core->by_cid, c->cid, 0);
    emit(core, CG_EV_REMOVE, CG_WHY_REMOVED, c, 0, 0, 0, now);
    unsigned dev = c->dev;
    free_container(core, c);
    reschedule(core, dev, now);
    return CG_OK;
}

/* A gang member's limit moves with its assignment (A = L, gang.c): a raise takes the difference
 * from free memory at once, within its tenant's ceiling, or nothing changes; a lowering returns
 * it. Either keeps the device safe: the member's need stays 0. */
static cg_status set_reserved_limit(cg_core *core, cg_container *c, cg_bytes limit, cg_time now)
{
    cg_device *d = &core->dev[c->dev];
    cg_bytes old = c->limit;
    if (limit == old)
        return CG_OK;
    if (limit > old) {
        if (dev_free(d) < limit - old)
            return CG_ERR_NOT_FREE;
        set_limit(d, c, limit);
        cg_fair_recompute(core, c->dev);
        if (cg_fair_cap(core, c, limit) < limit) {
            set_limit(d, c, old);
            cg_fair_recompute(core, c->dev);
            return CG_ERR_NOT_FREE;
        }
        set_assigned(d, c, limit);
        emit(core, CG_EV_LIMIT, CG_WHY_LIMIT_CHANGED, c, 0, 0, limit, now);
        emit(core, CG_EV_ASSIGN, CG_WHY_LIMIT_CHANGED, c, 0, 0, limit - old, now);
        return CG_OK;
    }
    cg_safety_remove(d, c);
    c->limit = limit;
    c->assigned = limit;
    d->assigned -= old - limit;
    cg_safety_insert(d, c);
    emit(core, CG_EV_LIMIT, CG_WHY_LIMIT_CHANGED, c, 0, 0, limit, now);
    emit(core, CG_EV_UNASSIGN, CG_WHY_LIMIT_CHANGED, c, 0, 0, old - limit, now);
    reschedule(core, c->dev, now);
    return CG_OK;
}

cg_status cg_container_set_limit(cg_core *core, cg_cid cid, cg_bytes limit, cg_time now,
                                 bool *pending_out)
{
    cg_container *c = find(core, cid);
    if (!c)
        return CG_ERR_NOT_FOUND;
    cg_device *d = &core->dev[c->dev];
    if (limit == 0)
        return CG_ERR_INVALID;
    if (c->queued || c->expired)
        return CG_ERR_STATE;   /* its gang is admitted with the limits it queued with */
    if (limit > d->capacity)
        return CG_ERR_TOO_LARGE;
    if (limit < ctr_charged(c))
        return CG_ERR_BELOW_USE;
    if (pending_out)
        *pending_out = false;
    if (c->reserved)
        return set_reserved_limit(core, c, limit, now);
    if (c->limit_waiting)
        wait_unlink(d, c);      /* a later set_limit replaces a waiting one */
    if (limit > c->limit) {
        if (!safe_if(d, c, limit, c->assigned)) {
            c->limit_waiting = limit;
            wait_link(d, c);
            if (pending_out)
                *pending_out = true;
            return CG_OK;
        }
        set_limit(d, c, limit);
        emit(core, CG_EV_LIMIT, CG_WHY_LIMIT_CHANGED, c, 0, 0, limit, now);
        if (cg_fair_on(core))
            reschedule(core, c->dev, now);        /* the tenant's ceiling may have grown */
        return CG_OK;
    }
    if (limit == c->limit)
        return CG_OK;
    /* Lowering: return the assignment above the new limit, drop pending requests that can no
     * longer fit, and, since a need shrank (and free memory may have grown), reschedule. */
    cg_bytes excess = c->assigned > limit ? c->assigned - limit : 0;
    cg_safety_remove(d, c);
    c->limit = limit;
    c->assigned -= excess;
    d->assigned -= excess;
    cg_safety_insert(d, c);
    emit(core, CG_EV_LIMIT, CG_WHY_LIMIT_CHANGED, c, 0, 0, limit, now);
    if (excess)
        emit(core, CG_EV_UNASSIGN, CG_WHY_LIMIT_CHANGED, c, 0, 0, excess, now);
    drain_own(core, c, CG_WHY_FITS_ASSIGNMENT, now);
    reschedule(core, c->dev, now);
    return CG_OK;
}

/* ---- requests and processes -------------------------------------------------------------- */

/* Creates and indexes a process; room in by_pid must have been reserved. */
static void proc_link(cg_core *core, cg_container *c, cg_process *p, cg_pid pid)
{
    memset(p, 0, sizeof *p);
    p->pid = pid;
    p->next = c->procs;
    if (c->procs)
        c->procs->prev = p;
    c->procs = p;
    c->nprocs++;
    cg_hash_put(&core->by_pid, c->cid, pid, p);
}

cg_status cg_request(cg_core *core, cg_cid cid, cg_pid pid, cg_reqid req, cg_bytes bytes,
                     cg_time now, cg_outcome *outcome)
{
    cg_container *c = find(core, cid);
    if (!c)
        return CG_ERR_NOT_FOUND;
    if (bytes == 0)
        return CG_ERR_INVALID;
    if (cg_hash_get(&core->by_req, cid, req))
        return CG_ERR_EXISTS;
    cg_device *d = &core->dev[c->dev];
    cg_process *p = find_proc(core, c, pid);
    bool charges = !p || (!p->charged && !p->charge_pending);
    cg_bytes ctx = charges ? d->context_charge : 0;

    /* A gang given up after waiting (cg_gang_expire) is never admitted: no at once. */
    if (c->expired) {
        emit(core, CG_EV_REJECT, CG_WHY_GANG_EXPIRED, c, pid, req, bytes, now);
        if (outcome)
            *outcome = CG_REJECTED;
        return CG_OK;
    }
    /* Over the limit (what is on the host counts): fails at once, whatever the free memory. */
    cg_bytes room = c->limit - ctr_charged(c);
    if (bytes > room || ctx > room - bytes) {
        emit(core, CG_EV_REJECT, CG_WHY_OVER_LIMIT, c, pid, req, bytes + ctx, now);
        if (outcome)
            *outcome = CG_REJECTED;
        return CG_OK;
    }
    cg_bytes total = bytes + ctx;
    cg_bytes shortfall = c->used + total > c->assigned ? c->used + total - c->assigned : 0;
    cg_reason why = CG_WHY_FITS_ASSIGNMENT;
    if (c->queued) {
        why = CG_WHY_GANG;      /* granted when its whole gang is admitted (gang.c) */
    } else if (c->swap == CG_SWAPPED_OUT || (shortfall && c->swap == CG_MOVING_OUT)) {
        why = CG_WHY_SWAPPED;   /* granted when it is back in */
    } else if (shortfall) {
        if (shortfall > dev_free(d))
            why = CG_WHY_NO_FREE;
        else if (!safe_if(d, c, c->limit, c->assigned + shortfall))
            why = CG_WHY_UNSAFE;
        else if (cg_fair_cap(core, c, shortfall) < shortfall)
            why = CG_WHY_FAIR_SHARE;
        else
            why = CG_WHY_RAISED;
    }
    bool suspend = why == CG_WHY_NO_FREE || why == CG_WHY_UNSAFE || why == CG_WHY_SWAPPED ||
                   why == CG_WHY_FAIR_SHARE || why == CG_WHY_GANG;

    /* Secure memory before changing anything. */
    cg_process *np = NULL;
    cg_pending *r = NULL;
    if (!p && (!(np = cg_mem_alloc(core, sizeof *np)) || !cg_hash_reserve(core, &core->by_pid, 1)))
        goto nomem;
    if (suspend && (!(r = cg_mem_alloc(core, sizeof *r)) || !cg_hash_reserve(core, &core->by_req, 1)))
        goto nomem;
    if (np) {
        proc_link(core, c, np, pid);
        p = np;
    }

    if (suspend) {
        *r = (cg_pending){.req = req, .bytes = total, .charges = ctx > 0, .proc = p};
        cg_waitq_push(c, r);
        cg_hash_put(&core->by_req, cid, req, r);
        p->npending++;
        if (ctx)
            p->charge_pending = true;
        c->npending++;
        cg_wait_update(core, c, now);
        c->pending_bytes += total;
        emit(core, CG_EV_SUSPEND, why, c, pid, req, total, now);
        if (outcome)
            *outcome = CG_SUSPENDED;
        if (why == CG_WHY_NO_FREE)
            cg_swap_consider(core, c->dev, now);
        return CG_OK;
    }
    if (shortfall) {
        set_assigned(d, c, c->assigned + shortfall);
        c->served_at = now;
        emit(core, CG_EV_ASSIGN, CG_WHY_RAISED, c, pid, req, shortfall, now);
    }
    charge(core, c, p, total, ctx > 0);
    emit(core, CG_EV_GRANT, why, c, pid, req, total, now);
    if (outcome)
        *outcome = CG_GRANTED;
    drain_own(core, c, CG_WHY_FITS_ASSIGNMENT, now);   /* U grew: some pending may be over L */
    return CG_OK;

nomem:
    cg_mem_free(core, np, sizeof *np);
    cg_mem_free(core, r, sizeof *r);
    return CG_ERR_NOMEM;
}

cg_status cg_request_cancel(cg_core *core, cg_cid cid, cg_reqid req, cg_time now)
{
    cg_container *c = find(core, cid);
    if (!c)
        return CG_ERR_NOT_FOUND;
    cg_pending *r = cg_hash_get(&core->by_req, cid, req);
    if (!r)
        return CG_ERR_NOT_FOUND;
    req_drop(core, c, r, now);
    return CG_OK;
}

cg_status cg_release(cg_core *core, cg_cid cid, cg_pid pid, cg_bytes bytes, cg_time now)
{
    cg_container *c = find(core, cid);
    if (!c)
        return CG_ERR_NOT_FOUND;
    cg_process *p = find_proc(core, c, pid);
    if (!p)
        return CG_ERR_NOT_FOUND;
    if (bytes == 0 || bytes > p->used)
        return CG_ERR_INVALID;
    p->used -= bytes;
    c->used -= bytes;
    core->dev[c->dev].used -= bytes;
    emit(core, CG_EV_RELEASE, CG_WHY_FREE, c, pid, 0, bytes, now);
    drain_own(core, c, CG_WHY_FITS_ASSIGNMENT, now);
    return CG_OK;
}

cg_status cg_process_set_use(cg_core *core, cg_cid cid, cg_pid pid, cg_bytes use, cg_time now)
{
    cg_container *c = find(core, cid);
    if (!c)
        return CG_ERR_NOT_FOUND;
    cg_process *p = find_proc(core, c, pid);
    cg_bytes old = p ? p->used : 0;
    if (use > old && (use - old > c->assigned - c->used || use - old > c->limit - ctr_charged(c)))
        return CG_ERR_INVALID;
    if (!p) {
        cg_process *np = cg_mem_alloc(core, sizeof *np);
        if (!np || !cg_hash_reserve(core, &core->by_pid, 1)) {
            cg_mem_free(core, np, sizeof *np);
            return CG_ERR_NOMEM;
        }
        proc_link(core, c, np, pid);
        p = np;
        p->charged = true;      /* an absolute use includes whatever context it has */
    }
    cg_device *d = &core->dev[c->dev];
    if (use > old) {
        charge(core, c, p, use - old, false);
        emit(core, CG_EV_GRANT, CG_WHY_FITS_ASSIGNMENT, c, pid, 0, use - old, now);
        drain_own(core, c, CG_WHY_FITS_ASSIGNMENT, now);
    } else if (use < old) {
        p->used = use;
        c->used -= old - use;
        d->used -= old - use;
        emit(core, CG_EV_RELEASE, CG_WHY_FREE, c, pid, 0, old - use, now);
        drain_own(core, c, CG_WHY_FITS_ASSIGNMENT, now);
    }
    return CG_OK;
}

cg_status cg_process_exit(cg_core *core, cg_cid cid, cg_pid pid, cg_time now)
{
    cg_container *c = find(core, cid);
    if (!c)
        return CG_ERR_NOT_FOUND;
    cg_process *p = find_proc(core, c, pid);
    if (!p)
        return CG_ERR_NOT_FOUND;
    cg_device *d = &core->dev[c->dev];
    while (p->phead) {
        cg_pending *r = p->phead;
        emit(core, CG_EV_REJECT, CG_WHY_PROCESS_EXIT, c, pid, r->req, r->bytes, now);
        req_drop(core, c, r, now);
    }
    if (p->used)
        emit(core, CG_EV_RELEASE, CG_WHY_PROCESS_EXIT, c, pid, 0, p->used, now);
    c->used -= p->used;
    d->used -= p->used;
    if (p->prev)
        p->prev->next = p->next;
    else
        c->procs = p->next;
    if (p->next)
        p->next->prev = p->prev;
    c->nprocs--;
    cg_swap_forget_process(core, c, p);
    cg_hash_del(&core->by_pid, c->cid, pid);
    cg_mem_free(core, p, sizeof *p);
    drain_own(core, c, CG_WHY_FITS_ASSIGNMENT, now); /* also brings it in when out with room */
    return CG_OK;
}

/* ---- views ------------------------------------------------------------------------------- */

unsigned cg_device_count(const cg_core *core) { return core->ndev; }

cg_status cg_device_get(const cg_core *core, unsigned device, cg_device_info *out)
{
    if (device >= core->ndev)
        return CG_ERR_NO_DEVICE;
    const cg_device *d = &core->dev[device];
    *out = (cg_device_info){d->total, d->reserve, d->capacity, d->assigned, d->used,
                            dev_free(d), d->context_charge, d->ncontainers, d->nsuspended,
                            d->hard_pct, d->swap_incoming, d->exclusive};
    return CG_OK;
}

cg_status cg_container_get(const cg_core *core, cg_cid cid, cg_time now, cg_container_info *out)
{
    const cg_container *c = find(core, cid);
    if (!c)
        return CG_ERR_NOT_FOUND;
    bool susp = c->waiting;
    *out = (cg_container_info){
        .cid = c->cid,
        .device = c->dev,
        .limit = c->limit,
        .assigned = c->assigned,
        .used = c->used,
        .state = susp ? CG_STATE_SUSPENDED : CG_STATE_RUNNING,
        .created_at = c->created_at,
        .suspended_since = susp ? c->suspended_since : 0,
        .total_suspended = c->total_suspended + (susp ? elapsed(c->suspended_since, now) : 0),
        .nprocesses = c->nprocs,
        .npending = c->npending,
        .pending_bytes = c->pending_bytes,
        .limit_waiting = c->limit_waiting,
        .compute_pct = c->compute_pct,
        .compute_mode = c->compute_mode,
        .priority = c->priority,
        .no_swap = c->no_swap,
        .swap_held = c->held,
        .residency = c->swap,
        .swapped = c->swapped,
        .tenant = c->tenant,
        .exclusive = c->exclusive,
        .gang = c->gang,
        .reserved = c->reserved,
        .queued = c->queued,
        .expired = c->expired,
        .util_pct = c->util_pct,
        .app = c->app,
    };
    return CG_OK;
}

cg_cid cg_container_next(const cg_core *core, cg_cid after)
{
    if (after == CG_CID_NONE)
        return core->head ? core->head->cid : CG_CID_NONE;
    const cg_container *c = find(core, after);
    return c && c->next ? c->next->cid : CG_CID_NONE;
}

size_t cg_container_processes(const cg_core *core, cg_cid cid, cg_process_info *out, size_t cap)
{
    const cg_container *c = find(core, cid);
    if (!c)
        return 0;
    size_t n = 0;
    for (const cg_process *p = c->procs; p; p = p->next, n++)
        if (n < cap)
            out[n] = (cg_process_info){p->pid, p->used, p->npending, p->swapped};
    return n;
}

size_t cg_core_footprint(const cg_core *core) { return core->bytes_held; }

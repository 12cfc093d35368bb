/* swap.c — the core's side of swap: which containers leave the device for host memory, when
 * they come back, and the books (host budget, memory on its way back to the free pool).
 *
 * The mechanism (the interposer moving bytes, docs/SWAP.md) reports through the daemon; here a
 * swap is four states (core.h): RESIDENT -> MOVING_OUT (ordered; the processes copy and report
 * what each moved) -> OUT (the assignment shrank to what stayed on the device; the container
 * waits like a suspended one) -> MOVING_IN (ordered once its assignment holds what is on the
 * host; that much is charged to its processes again at once) -> RESIDENT.
 *
 * Safety (docs/SCHEDULING.md, "Swap"): shrinking an assignment never makes a safe state unsafe
 * (the container's need grows by what free memory grows by, so the old safe order still
 * works); bringing a container back goes through the resume pass's safe offer. Deadlock
 * freedom: an OUT container is a waiting container whose need is L - A, offered memory by the
 * same pass as the others.
 *
 * Victims, for the most urgent waiting container R (highest class, then longest waiting) whose
 * first request cannot be granted from the free memory plus what is already on its way:
 *   eligible: on R's device, resident, swap allowed, not back from a swap for less than an
 *   aging step (no ping-pong), something to free (assignment beyond the context charges);
 *   a suspended container may go for R when its priority is <= R's class, a running one only
 *   when its priority is < R's class;
 *   order: suspended before running, lower priority first, then the largest assignment (fewest
 *   moves), then the youngest (least work held up);
 *   taken greedily while the host budget allows, and only if together they free enough: a swap
 *   that cannot let R run only moves memory around. */
#include <stdlib.h>

#include "internal.h"

static cg_container *find(const cg_core *core, cg_cid cid)
{
    return cid == CG_CID_NONE ? NULL : cg_hash_get(&core->by_cid, cid, 0);
}

/* The container `cid` when it is in state `want`: CG_OK, else NOT_FOUND or STATE. */
static cg_status find_in(const cg_core *core, cg_cid cid, cg_residency want, cg_container **c)
{
    *c = find(core, cid);
    return !*c ? CG_ERR_NOT_FOUND : (*c)->swap != want ? CG_ERR_STATE : CG_OK;
}

static cg_bytes context_charges(const cg_core *core, const cg_container *c)
{
    return (cg_bytes)c->nprocs * core->dev[c->dev].context_charge;
}

/* What moving c out is expected to free on the device: all but its context charges. */
static cg_bytes expected_free(const cg_core *core, const cg_container *c)
{
    cg_bytes ctx = context_charges(core, c);
    return c->assigned > ctx ? c->assigned - ctx : 0;
}

/* Whether `more` fits the budget beside what swap holds now, less `exempt`: the host memory
 * of tenants' holds for preemption and operators' orders (held swaps, below), 0 for a tenant's
 * own hold. */
static bool budget_allows(const cg_core *core, cg_bytes exempt, cg_bytes more)
{
    cg_bytes limit = core->cfg.swap_limit, host = core->swap_host - exempt - cg_pause_host(core);
    return host <= limit && more <= limit - host;
}

void cg_swap_order_out(cg_core *core, cg_container *c, cg_reason why, cg_reqid req, bool whole,
                       cg_time now)
{
    cg_device *d = &core->dev[c->dev];
    ctr_set_swap(core, c, CG_MOVING_OUT);
    c->swap_reserved = c->assigned;
    c->swap_expect = whole ? c->assigned : expected_free(core, c);
    core->swap_host += c->swap_reserved;
    d->swap_incoming += c->swap_expect;
    cg_emit(core, CG_EV_SWAP_OUT, why, c, 0, req, c->assigned, now);
}

/* ---- held swaps --------------------------------------------------------------------------
 * A hold keeps a container's memory on the host for as long as the one who ordered it likes.
 * An operator's hold takes the budget like any swap. A tenant's hold of its own container
 * (issue 42: one tenant held 440 MiB of a 512 MiB budget, and nobody could be swapped for
 * anyone any more) is admitted only within the budget, within the hold pool (cfg.swap_hold_pct
 * of the budget, all tenants' holds together) and within its tenant's part of the pool (the
 * pool x its weight / the weights of the tenants with a container on the node, itself
 * included); and the scheduler's victims and operators' orders do not count it: they see the
 * budget as if no tenant held anything, so a tenant's hold never stops a preemption. The host
 * memory swap takes may then exceed the budget by what tenants hold, never by more than the
 * pool. A tenant's hold counts from its order until the container is back in (hold_tenant),
 * also after it was ordered in: it waits for the device like any container out, and its host
 * memory must not fall on the budget the others were promised meanwhile. */

/* pct percent of b, without overflow (b < 2^64, pct <= 100). */
static cg_bytes pct_of(cg_bytes b, unsigned pct)
{
    return b / 100 * pct + b % 100 * pct / 100;
}

/* What a tenant's hold takes of the pool: what it reserved while moving out, then what is
 * on the host. */
static cg_bytes hold_bytes(const cg_container *c)
{
    if (!c->hold_tenant)
        return 0;
    return c->swap == CG_SWAPPED_OUT ? c->swapped : c->swap_reserved;
}

static cg_bytes tenant_holds(const cg_core *core)
{
    cg_bytes sum = 0;
    for (const cg_container *c = core->head; c; c = c->next)
        sum += hold_bytes(c);
    return sum;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

cg_status cg_swap_hold_room(cg_core *core, uint32_t tenant, cg_hold_room *out)
{
    *out = (cg_hold_room){.pool = pct_of(core->cfg.swap_limit, core->cfg.swap_hold_pct)};
    size_t n = 0;
    for (cg_container *c = core->head; c; c = c->next) {
        cg_bytes h = hold_bytes(c);
        out->pool_held += h;
        if (c->tenant == tenant)
            out->tenant_held += h;
        n++;
    }
    /* The tenants present, each once: their weights divide the pool. A tenant with no
     * container here asks for nothing, and is counted as present (its part if it came). */
    uint32_t *ids = cg_mem_alloc(core, (n + 1) * sizeof *ids);
    if (!ids)
        return CG_ERR_NOMEM;
    size_t k = 0;
    for (cg_container *c = core->head; c; c = c->next)
        ids[k++] = c->tenant;
    ids[k++] = tenant;
    qsort(ids, k, sizeof *ids, cmp_u32);
    cg_bytes weights = 0;
    for (size_t i = 0; i < k; i++)
        if (i == 0 || ids[i] != ids[i - 1])
            weights += cg_tenant_weight(core, ids[i]);
    cg_mem_free(core, ids, (n + 1) * sizeof *ids);
    cg_bytes w = cg_tenant_weight(core, tenant);
    /* pool x w / weights, in two parts: (pool % weights) x w < weights x w stays small. */
    out->share = out->pool / weights * w + out->pool % weights * w / weights;
    return CG_OK;
}

cg_status cg_swap_hold_check(cg_core *core, cg_cid cid, cg_hold hold)
{
    cg_container *c = find(core, cid);
    if (!c)
        return CG_ERR_NOT_FOUND;
    if (hold == CG_HOLD_NONE)
        return c->swap != CG_SWAPPED_OUT ? CG_ERR_STATE : CG_OK;
    if (c->swap != CG_RESIDENT)
        return CG_ERR_STATE;
    if (core->cfg.swap_limit == 0 || c->no_swap)
        return CG_ERR_NO_SWAP;
    if (!budget_allows(core, hold == CG_HOLD_TENANT ? 0 : tenant_holds(core), c->assigned))
        return CG_ERR_SWAP_BUDGET;
    if (hold == CG_HOLD_TENANT) {
        cg_hold_room room;
        cg_status st = cg_swap_hold_room(core, c->tenant, &room);
        if (st != CG_OK)
            return st;
        if (room.pool_held > room.pool || c->assigned > room.pool - room.pool_held ||
            room.tenant_held > room.share || c->assigned > room.share - room.tenant_held)
            return CG_ERR_SWAP_BUDGET;
    }
    return CG_OK;
}

cg_status cg_swap_hold(cg_core *core, cg_cid cid, cg_hold hold, cg_time now)
{
    cg_status st = cg_swap_hold_check(core, cid, hold);
    if (st != CG_OK)
        return st;
    cg_container *c = find(core, cid);
    if (hold == CG_HOLD_NONE) {
        c->held = false; /* a tenant's still counts until it is back in */
        cg_wait_update(core, c, now);
        cg_reschedule(core, c->dev, now);
        return CG_OK;
    }
    c->held = true;
    c->hold_tenant = hold == CG_HOLD_TENANT;
    cg_swap_order_out(core, c, CG_WHY_OPERATOR, 0, false, now);
    return CG_OK;
}

cg_hold cg_swap_hold_of(const cg_core *core, cg_cid cid)
{
    const cg_container *c = find(core, cid);
    return !c || !c->held ? CG_HOLD_NONE : c->hold_tenant ? CG_HOLD_TENANT : CG_HOLD_OPERATOR;
}

cg_status cg_swap_order(cg_core *core, cg_cid cid, bool out, cg_time now)
{
    return cg_swap_hold(core, cid, out ? CG_HOLD_OPERATOR : CG_HOLD_NONE, now);
}

cg_status cg_container_set_no_swap(cg_core *core, cg_cid cid, bool no_swap)
{
    cg_container *c;
    cg_status st = find_in(core, cid, CG_RESIDENT, &c);
    if (st != CG_OK)
        return st;
    if (c->reserved && !no_swap)
        return CG_ERR_STATE;   /* a gang member stays on its device (gang.c) */
    c->no_swap = no_swap;
    return CG_OK;
}

cg_status cg_process_swap_out(cg_core *core, cg_cid cid, cg_pid pid, cg_bytes bytes, cg_time now)
{
    (void)now;
    cg_container *c = find(core, cid);
    if (!c)
        return CG_ERR_NOT_FOUND;
    cg_process *p = cg_hash_get(&core->by_pid, cid, pid);
    if (!p)
        return CG_ERR_NOT_FOUND;
    if (c->swap != CG_MOVING_OUT)
        return CG_ERR_STATE;
    if (bytes > p->used || bytes > c->swap_reserved - c->swapped)
        return CG_ERR_INVALID;
    /* Use moves to the host: U + S, what the limit sees, does not change, and no pending
     * request is granted from the room this opens (the container is frozen). */
    p->used -= bytes;
    p->swapped += bytes;
    c->used -= bytes;
    c->swapped += bytes;
    core->dev[c->dev].used -= bytes;
    return CG_OK;
}

cg_status cg_swap_out_done(cg_core *core, cg_cid cid, cg_time now)
{
    cg_container *c;
    cg_status st = find_in(core, cid, CG_MOVING_OUT, &c);
    if (st != CG_OK)
        return st;
    cg_device *d = &core->dev[c->dev];
    core->swap_host = core->swap_host - c->swap_reserved + c->swapped;
    d->swap_incoming -= c->swap_expect;
    c->swap_reserved = c->swap_expect = 0;
    ctr_set_swap(core, c, CG_SWAPPED_OUT);
    cg_assign_less(core, c, c->used, CG_WHY_SWAPPED, now);
    cg_wait_update(core, c, now);
    cg_reschedule(core, c->dev, now);
    cg_swap_consider(core, c->dev, now);
    return CG_OK;
}

void cg_swap_in_if_room(cg_core *core, cg_container *c, cg_time now)
{
    if (c->swap != CG_SWAPPED_OUT || c->held || c->assigned - c->used < c->swapped)
        return;
    cg_bytes back = c->swapped;
    c->lending = false;
    for (cg_process *p = c->procs; p; p = p->next) {
        p->used += p->swapped;
        p->swapped = 0;
    }
    c->used += back;
    core->dev[c->dev].used += back;
    c->swapped = 0;
    c->swap_reserved = back;   /* the host copies live until the processes report */
    ctr_set_swap(core, c, CG_MOVING_IN);
    cg_emit(core, CG_EV_SWAP_IN, CG_WHY_POLICY, c, 0, 0, back, now);
    cg_drain_own(core, c, CG_WHY_POLICY, now);   /* its waiting requests may fit now */
    cg_wait_update(core, c, now);
}

cg_status cg_swap_in_done(cg_core *core, cg_cid cid, cg_time now)
{
    cg_container *c;
    cg_status st = find_in(core, cid, CG_MOVING_IN, &c);
    if (st != CG_OK)
        return st;
    core->swap_host -= c->swap_reserved;
    c->swap_reserved = 0;
    ctr_set_swap(core, c, CG_RESIDENT);
    c->hold_tenant = false;
    if (c->paused) {   /* restored (cg_pause_in_done, or the scheduler's own checkpoint) */
        c->paused = false;
        core->npaused--;
    }
    c->returned = true;
    c->resident_since = now;
    cg_drain_own(core, c, CG_WHY_FITS_ASSIGNMENT, now);
    return CG_OK;
}

void cg_swap_forget_process(cg_core *core, cg_container *c, cg_process *p)
{
    if (!p->swapped)
        return;
    /* The host copy went with the process. While moving out, the budget holds the whole
     * reservation until the move ends; once out, it holds exactly what is there. */
    if (c->swap == CG_SWAPPED_OUT)
        core->swap_host -= p->swapped;
    c->swapped -= p->swapped;
    p->swapped = 0;
}

void cg_swap_forget_container(cg_core *core, cg_container *c)
{
    cg_device *d = &core->dev[c->dev];
    if (c->swap == CG_MOVING_OUT) {
        d->swap_incoming -= c->swap_expect;
        core->swap_host -= c->swap_reserved;
    } else if (c->swap == CG_MOVING_IN) {
        core->swap_host -= c->swap_reserved;
    } else if (c->swap == CG_SWAPPED_OUT) {
        core->swap_host -= c->swapped;
    }
    c->swap_reserved = c->swap_expect = 0;
    c->swapped = 0;
    ctr_set_swap(core, c, CG_RESIDENT);
    c->held = c->hold_tenant = false;
    if (c->paused) {
        c->paused = false;
        core->npaused--;
    }
}

/* ---- victims ----------------------------------------------------------------------------- */

typedef struct {
    cg_container *c;
    cg_bytes frees;      /* what a swap frees: all but its context charges */
    bool suspended;
    bool checkpoint;     /* the back end chosen for it (victim_backend.c) */
} candidate;

static int victim_order(const void *a, const void *b)
{
    const candidate *x = a, *y = b;
    if (x->suspended != y->suspended)
        return x->suspended ? -1 : 1;
    if (x->c->priority != y->c->priority)
        return x->c->priority < y->c->priority ? -1 : 1;
    if (x->frees != y->frees)
        return x->frees > y->frees ? -1 : 1;
    return x->c->cid > y->c->cid ? -1 : 1;
}

/* The waiting container a swap would be for: highest class, then longest waiting, then
 * oldest; only resident ones with a request (an out one waits for memory, not for victims),
 * and lenders due to take their memory back (stepaside.c). */
static cg_container *most_urgent(const cg_core *core, const cg_device *d, unsigned top,
                                 cg_time now, unsigned *cls_out)
{
    cg_container *best = NULL;
    unsigned best_cls = 0;
    for (cg_container *c = d->shead; c; c = c->snext) {
        bool due = c->swap == CG_SWAPPED_OUT && !c->held && cg_step_aside_due(core, c, now);
        if (!due && (c->npending == 0 || (c->swap != CG_RESIDENT && c->swap != CG_MOVING_IN)))
            continue;
        if (c->queued)
            continue;   /* waits for its gang's devices, which victims here would not give */
        unsigned cls = cg_class(core, c, top, now);
        if (!best || cls > best_cls ||
            (cls == best_cls && (c->suspended_since < best->suspended_since ||
                                 (c->suspended_since == best->suspended_since && c->cid < best->cid)))) {
            best = c;
            best_cls = cls;
        }
    }
    *cls_out = best_cls;
    return best;
}

/* The scheduler's checkpoint of a victim: a pause of the whole container that nobody holds,
 * so the resume pass brings it back as soon as it is safe (pause.c, docs/PAUSE.md). */
static void order_checkpoint(cg_core *core, cg_container *c, cg_reqid req, cg_time now)
{
    c->paused = true;
    core->npaused++;
    c->held = false;
    c->hold_tenant = false;
    cg_swap_order_out(core, c, CG_WHY_VICTIM, req, true, now);
}

void cg_swap_consider(cg_core *core, unsigned dev, cg_time now)
{
    if (core->cfg.swap_limit == 0 && !core->cfg.auto_pause)
        return;
    cg_device *d = &core->dev[dev];
    unsigned cls, top = cg_top_priority(d);
    cg_container *r = most_urgent(core, d, top, now, &cls);
    if (!r)
        return;
    /* What R lacks: for its first request, and, when it is out, for what is on the host. */
    cg_pending *first = r->phead;
    cg_bytes total = ctr_charged(r) + (first ? first->bytes : 0);
    if (total <= r->assigned)
        return;
    cg_bytes want = total - r->assigned;
    cg_bytes have = dev_free(d) + d->swap_incoming;
    if (have >= want)
        return;   /* enough is free or on its way (a suspension for safety is not helped) */
    cg_bytes need = want - have;
    bool due = r->swap == CG_SWAPPED_OUT;   /* only a due lender is picked while out */

    candidate *v = cg_mem_alloc(core, (d->ncontainers ? d->ncontainers : 1) * sizeof *v);
    if (!v)
        return;   /* no swap this time; nothing changed */
    size_t n = 0;
    for (cg_container *c = core->head; c; c = c->next) {
        if (c->dev != dev || c == r || c->swap != CG_RESIDENT || c->no_swap)
            continue;
        if (c->returned && now - c->resident_since < aging_step(core))
            continue;
        cg_bytes frees = expected_free(core, c);
        bool suspended = c->npending > 0;
        /* A due lender's borrowers go for it even at its own priority: it lent them the
         * memory (stepaside.c). */
        bool lent = due && c->priority <= cls && cg_step_aside_borrower(r, c);
        bool movable = frees > 0 || (core->cfg.auto_pause && c->assigned > 0);
        if (!movable || (!lent && (suspended ? c->priority > cls : c->priority >= cls)))
            continue;
        v[n++] = (candidate){c, frees, suspended, false};
    }
    qsort(v, n, sizeof *v, victim_order);
    cg_bytes got = 0, host = 0, exempt = tenant_holds(core);
    size_t k = 0;
    for (size_t i = 0; i < n && got < need; i++) {
        /* Swap or checkpoint for this victim (victim_backend.c): a checkpoint's host copy is
         * the processes' own, outside the swap budget, like an operator's pause. */
        cg_backend_case bc = {
            .allocations = v[i].frees,
            .contexts = context_charges(core, v[i].c),
            .need = need - got,
            .can_swap = core->cfg.swap_limit > 0 &&
                        budget_allows(core, exempt, host + v[i].c->assigned),
            .can_checkpoint = core->cfg.auto_pause,
        };
        cg_backend_choice ch = cg_victim_backend(&bc);
        if (ch.backend == CG_BACKEND_NONE)
            continue;
        v[i].checkpoint = ch.backend == CG_BACKEND_CHECKPOINT;
        if (v[i].checkpoint)
            got += v[i].c->assigned;   /* everything leaves, whatever the charges say */
        else {
            host += v[i].c->assigned;
            got += v[i].frees;
        }
        v[k++] = v[i];
    }
    cg_reqid req = first ? first->req : 0;
    if (got >= need) {
        for (size_t i = 0; i < k; i++) {
            if (v[i].checkpoint)
                order_checkpoint(core, v[i].c, req, now);
            else
                cg_swap_order_out(core, v[i].c, CG_WHY_VICTIM, req, false, now);
        }
    } else if (!due) {
        /* No victims let R run: R may step aside for a container behind it (stepaside.c). */
        cg_container *b = cg_step_aside_for(core, r, cls, top, have, now);
        if (b && budget_allows(core, exempt, r->assigned)) {
            r->lending = true;
            r->lent_at = now;
            cg_swap_order_out(core, r, CG_WHY_STEP_ASIDE, b->phead->req, false, now);
        }
    }
    cg_mem_free(core, v, (d->ncontainers ? d->ncontainers : 1) * sizeof *v);
}

/* ---- restart ----------------------------------------------------------------------------- */

cg_status cg_process_restore_swapped(cg_core *core, cg_cid cid, cg_pid pid, cg_bytes bytes)
{
    cg_container *c = find(core, cid);
    if (!c)
        return CG_ERR_NOT_FOUND;
    cg_process *p = cg_hash_get(&core->by_pid, cid, pid);
    if (!p)
        return CG_ERR_NOT_FOUND;
    if (c->swap != CG_RESIDENT || bytes > c->limit - ctr_charged(c))
        return CG_ERR_INVALID;
    p->swapped += bytes;
    c->swapped += bytes;
    return CG_OK;
}

cg_status cg_swap_restore(cg_core *core, cg_cid cid, cg_residency state, bool held, cg_time now)
{
    return cg_swap_restore_hold(core, cid, state, held ? CG_HOLD_OPERATOR : CG_HOLD_NONE, now);
}

cg_status cg_swap_restore_hold(cg_core *core, cg_cid cid, cg_residency state, cg_hold hold,
                               cg_time now)
{
    bool held = hold != CG_HOLD_NONE;
    cg_container *c;
    cg_status st = find_in(core, cid, CG_RESIDENT, &c);
    if (st != CG_OK)
        return st;
    switch (state) {
    case CG_RESIDENT:
        return c->swapped ? CG_ERR_INVALID : CG_OK;
    case CG_SWAPPED_OUT:
        /* What is on the host was restored with cg_process_restore_swapped; the assignment
         * was recorded after it shrank. */
        if (c->no_swap)
            return CG_ERR_NO_SWAP;
        ctr_set_swap(core, c, CG_SWAPPED_OUT);
        c->held = held;
        c->hold_tenant = hold == CG_HOLD_TENANT;
        core->swap_host += c->swapped;
        cg_wait_update(core, c, now);
        cg_reschedule(core, c->dev, now);
        return CG_OK;
    case CG_MOVING_OUT:
        /* The processes go on copying; they report to the new daemon. */
        if (c->no_swap || c->swapped)
            return CG_ERR_INVALID;
        c->held = held;
        c->hold_tenant = hold == CG_HOLD_TENANT;
        cg_swap_order_out(core, c, held ? CG_WHY_OPERATOR : CG_WHY_VICTIM, 0, false, now);
        return CG_OK;
    case CG_MOVING_IN:
        /* The use was restored charged again; the host copies are still there. */
        if (c->swapped)
            return CG_ERR_INVALID;
        ctr_set_swap(core, c, CG_MOVING_IN);
        return CG_OK;
    }
    return CG_ERR_INVALID;
}

cg_bytes cg_swap_host_bytes(const cg_core *core) { return core->swap_host; }

const char *cg_residency_name(cg_residency s)
{
    switch (s) {
    case CG_RESIDENT: return "in";
    case CG_MOVING_OUT: return "swapping-out";
    case CG_SWAPPED_OUT: return "out";
    case CG_MOVING_IN: return "swapping-in";
    }
    return "?";
}

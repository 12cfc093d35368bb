/* check.c — cg_core_check(), the O(n log n) oracle: recomputes every derived quantity from the
 * containers themselves and checks safety by sorting, independently of the incremental index.
 * It allocates with plain malloc (not the injectable allocator) so fault-injection tests can
 * still check the state after every failed call. */
#include <stdlib.h>

#include "internal.h"
#include "safety.h"
#include "waitq.h"

typedef cg_claim claim;

/* A gang member (gang.c) is queued (holds nothing, uses nothing, its requests wait) or
 * reserved (holds its whole limit, never waits), like every other member of its gang; it never
 * leaves its device, and no two members of one gang share a device. */
static const char *check_gang_member(const cg_container *c)
{
    if ((c->gang != CG_CID_NONE) != (c->reserved || c->queued || c->expired) ||
        (c->reserved + c->queued + c->expired) > 1)
        return "a gang member that is not reserved, queued or expired, or the reverse";
    for (const cg_container *o = c->next; o && c->gang != CG_CID_NONE; o = o->next)
        if (o->gang == c->gang && (o->queued != c->queued || o->expired != c->expired))
            return "a gang partly admitted or partly given up";
    if (c->expired) {
        if (c->assigned || c->used || c->swapped || c->npending || c->waiting ||
            c->limit_waiting || c->swap != CG_RESIDENT)
            return "a given-up gang member holds, uses or waits for memory";
        return NULL;
    }
    if (c->queued) {
        if (c->assigned || c->used || c->swapped || !c->no_swap || c->swap != CG_RESIDENT ||
            c->limit_waiting)
            return "a queued gang member holds or uses memory, or may be swapped";
        return NULL;
    }
    if (!c->reserved)
        return NULL;
    if (c->assigned != c->limit)
        return "a gang member's assignment is not its limit";
    if (c->waiting || c->npending || c->limit_waiting)
        return "a gang member waits";
    if (!c->no_swap || c->swap != CG_RESIDENT)
        return "a gang member may be swapped";
    for (const cg_container *o = c->next; o; o = o->next)
        if (o->gang == c->gang && o->dev == c->dev)
            return "two members of one gang on one device";
    return NULL;
}

/* Whether every member of the queued gang could take its whole limit now: free, within its
 * tenant's ceiling, and its device safe with it (the textbook test). */
static bool fair_allows_whole(const cg_core *core, const cg_container *s,
                              struct cg_fair_claim *fb);
static bool gang_admissible(const cg_core *core, cg_cid gang, claim *buf,
                            struct cg_fair_claim *fb)
{
    for (const cg_container *s = core->head; s; s = s->next) {
        if (s->gang != gang)
            continue;
        const cg_device *d = &core->dev[s->dev];
        cg_bytes free = d->capacity - d->assigned;
        if (s->limit > free || !fair_allows_whole(core, s, fb))
            return false;
        size_t m = 0;
        for (const cg_container *c = core->head; c; c = c->next)
            if (c->dev == s->dev)
                buf[m++] = c == s ? (claim){0, c->limit} : (claim){c->limit - c->assigned, c->assigned};
        if (!cg_claims_safe(buf, m, free - s->limit))
            return false;
    }
    return true;
}

static const char *check_container(const cg_core *core, const cg_container *c)
{
    const cg_device *d = &core->dev[c->dev];
    if (cg_hash_get(&core->by_cid, c->cid, 0) != c)
        return "container missing from the cid index";
    if (c->limit == 0 || c->limit > d->capacity)
        return "limit out of range";
    if (c->assigned > c->limit)
        return "assignment above limit";
    if (c->used > c->assigned)
        return "use above assignment";
    if (c->limit_waiting && c->limit_waiting <= c->limit)
        return "waiting limit raise is not a raise";
    if (c->util_pct > CG_COMPUTE_PCT_MAX)
        return "application utilisation above 100%";
    if (c->compute_pct > CG_COMPUTE_PCT_MAX ||
        (c->compute_mode != CG_COMPUTE_ELASTIC && c->compute_mode != CG_COMPUTE_HARD))
        return "compute share out of range";
    if (c->compute_pct == 0 && c->compute_mode != CG_COMPUTE_ELASTIC)
        return "no compute share, yet a hard one";
    if (c->exclusive != (d->exclusive == c->cid))
        return "exclusive container and its device disagree";
    if (c->priority > CG_PRIORITY_MAX)
        return "priority out of range";
    if (c->used + c->swapped > c->limit)
        return "use and swapped bytes above the limit";
    if ((c->swap == CG_RESIDENT || c->swap == CG_MOVING_IN) && c->swapped)
        return "bytes on the host of a container that is in";
    if (c->held && c->swap != CG_SWAPPED_OUT && c->swap != CG_MOVING_OUT)
        return "held in, yet not out";
    if (c->no_swap && c->swap != CG_RESIDENT && !c->paused)
        return "a no-swap container is swapped";
    if (c->paused && c->swap == CG_RESIDENT)
        return "a paused container is in";
    if (c->swap == CG_MOVING_OUT && c->swapped > c->swap_reserved)
        return "moved out more than reserved";
    if (c->swap != CG_MOVING_OUT && c->swap_expect)
        return "expected free bytes outside a swap-out";
    if (c->lending && ((c->swap != CG_MOVING_OUT && c->swap != CG_SWAPPED_OUT) || c->held))
        return "a container that stepped aside is in, or held";
    if (c->waiting != ctr_waits(c))
        return "waiting flag differs from requests and swap state";
    cg_bytes used = 0, swapped = 0;
    unsigned nprocs = 0;
    for (const cg_process *p = c->procs; p; p = p->next, nprocs++) {
        if (cg_hash_get(&core->by_pid, c->cid, p->pid) != p)
            return "process missing from the pid index";
        if (p->next && p->next->prev != p)
            return "process list broken";
        used += p->used;
        swapped += p->swapped;
    }
    if (used != c->used || nprocs != c->nprocs)
        return "container use differs from its processes";
    if (swapped != c->swapped)
        return "container swapped bytes differ from its processes";
    cg_bytes pending = 0;
    unsigned npending = 0;
    for (const cg_pending *r = c->phead; r; r = r->next, npending++) {
        if (cg_hash_get(&core->by_req, c->cid, r->req) != r)
            return "request missing from the request index";
        if (!ctr_frozen(c) && c->used + r->bytes <= c->assigned)
            return "pending request fits its assignment";
        if (r->bytes > c->limit - c->used - c->swapped)
            return "pending request over the limit";
        pending += r->bytes;
    }
    if (npending != c->npending || pending != c->pending_bytes)
        return "pending count or bytes wrong";
    for (const cg_process *p = c->procs; p; p = p->next) {
        unsigned k = 0;
        bool carries = false;
        for (const cg_pending *r = c->phead; r; r = r->next)
            if (r->proc == p) {
                k++;
                carries |= r->charges;
            }
        if (k != p->npending || carries != p->charge_pending)
            return "process pending count wrong";
        k = 0;
        for (const cg_pending *r = p->phead; r; r = r->pnext, k++)
            if (r->proc != p || (r->pnext && r->pnext->pprev != r))
                return "process's request list broken";
        if (k != p->npending)
            return "process's request list wrong";
    }
    const char *e = cg_waitq_verify(c);
    if (e)
        return e;
    return NULL;
}

/* Fair share: every ceiling is what a recompute would give now (fairshare.c's invariant), and
 * each tenant's containers can all finish under it; so no tenant is above its ceiling, and one
 * is above its share only by the largest limit or the floor it held when the share shrank. */
static const char *check_fair(const cg_core *core, unsigned i, struct cg_fair_claim *fb)
{
    for (const cg_container *c = core->head; c; c = c->next) {
        if (c->dev != i)
            continue;
        cg_bytes share, ceil = cg_fair_ceiling_of(core, c->tenant, i, fb, &share);
        if (ceil != c->fair_ceiling || share != c->fair_share)
            return "tenant ceiling differs from a recompute";
        if (cg_fair_floor(core, c->tenant, i, NULL, 0, fb) > ceil)
            return "tenant above its fair-share ceiling";
    }
    return NULL;
}

/* Whether the fair share would let suspended container s have its whole need. */
static bool fair_allows_whole(const cg_core *core, const cg_container *s,
                              struct cg_fair_claim *fb)
{
    return !cg_fair_on(core) ||
           cg_fair_floor(core, s->tenant, s->dev, s, s->limit - s->assigned, fb) <= s->fair_ceiling;
}

static const char *check_device(const cg_core *core, unsigned i, claim *buf,
                                struct cg_fair_claim *fb)
{
    const cg_device *d = &core->dev[i];
    cg_bytes assigned = 0, used = 0, incoming = 0;
    unsigned n = 0, nsusp = 0, nvisible = 0, nwait = 0, hard = 0, nswap = 0;
    unsigned by_prio[CG_PRIORITY_MAX + 1] = {0};
    bool holder = false;
    for (const cg_container *c = core->head; c; c = c->next) {
        if (c->dev != i)
            continue;
        holder |= c->cid == d->exclusive;
        hard += c->compute_mode == CG_COMPUTE_HARD ? c->compute_pct : 0;
        assigned += c->assigned;
        used += c->used;
        buf[n++] = (claim){c->limit - c->assigned, c->assigned};
        nsusp += ctr_waits(c);
        nvisible += ctr_waits(c) && !ctr_hidden(c);
        nswap += c->swap != CG_RESIDENT;
        if (c->waiting && c->priority <= CG_PRIORITY_MAX)
            by_prio[c->priority]++;
        nwait += c->limit_waiting > 0;
        incoming += c->swap_expect;
        if (c->swap == CG_SWAPPED_OUT && !c->held && c->assigned - c->used >= c->swapped)
            return "an out container has room for what is on the host but was not ordered in";
    }
    if (d->capacity != d->total - d->reserve)
        return "capacity != total - reserve";
    if (assigned != d->assigned || used != d->used)
        return "device sums differ from its containers";
    if (assigned > d->capacity)
        return "assignments exceed capacity";
    if (hard != d->hard_pct)
        return "device hard share differs from its containers";
    if (hard > CG_COMPUTE_PCT_MAX)
        return "hard compute shares on a device exceed 100%";
    if (n != d->ncontainers || nsusp != d->nsuspended)
        return "device container counts wrong";
    if (nswap != d->nswap_state)
        return "device's count of containers out or moving is wrong";
    for (unsigned p = 0; p <= CG_PRIORITY_MAX; p++)
        if (by_prio[p] != d->nwait_prio[p])
            return "device's waiting containers by priority are counted wrong";
    if (incoming != d->swap_incoming)
        return "device's incoming swap bytes differ from its containers";
    if (d->exclusive != CG_CID_NONE && (n != 1 || !holder))
        return "an exclusive container shares its device, or is not on it";
    unsigned k = 0;
    for (const cg_container *c = d->shead; c; c = c->snext, k++)
        if (!ctr_waits(c) || !c->waiting || c->dev != i || (c->snext && c->snext->sprev != c))
            return "suspended list broken";
    if (k != nsusp)
        return "suspended list length wrong";
    k = 0;
    for (const cg_container *c = d->whead; c; c = c->wnext, k++)
        if (!c->limit_waiting || c->dev != i || (c->wnext && c->wnext->wprev != c))
            return "waiting-raise list broken";
    if (k != nwait)
        return "waiting-raise list length wrong";
    unsigned indexed;
    const char *e = cg_safety_verify(d, &indexed);
    if (e)
        return e;
    if (indexed != n)
        return "safety index size wrong";
    bool ok = cg_claims_safe(buf, n, d->capacity - assigned);
    if (!ok)
        return "device unsafe";
    if (ok != cg_safety_ok(d))
        return "safety index disagrees with the oracle";
    if (n > 0 && nvisible == n)
        return "every container on a device is suspended";
    if (cg_fair_on(core) && (e = check_fair(core, i, fb)))
        return e;
    /* No queued gang with a member here could be admitted whole right now (gang.c). */
    for (const cg_container *g = core->head; g; g = g->next) {
        if (!g->queued || g->cid != g->gang || !gang_admissible(core, g->gang, buf, fb))
            continue;
        return "a queued gang could be admitted but was not";
    }
    /* No suspended container could safely be given its whole need right now. */
    for (const cg_container *s = d->shead; s; s = s->snext) {
        if (ctr_hidden(s))
            continue;
        cg_bytes need = s->limit - s->assigned, free = d->capacity - assigned;
        if (need > free || !fair_allows_whole(core, s, fb))
            continue;
        size_t m = 0;
        for (const cg_container *c = core->head; c; c = c->next)
            if (c->dev == i)
                buf[m++] = c == s ? (claim){0, c->limit} : (claim){c->limit - c->assigned, c->assigned};
        if (cg_claims_safe(buf, m, free - need))
            return "a suspended container could be resumed but was not";
    }
    return NULL;
}

const char *cg_core_check(const cg_core *core)
{
    unsigned n = 0;
    for (const cg_container *c = core->head; c; c = c->next, n++) {
        if (c->dev >= core->ndev)
            return "container on a missing device";
        if (c->next && (c->next->prev != c || c->next->cid <= c->cid))
            return "creation list broken or out of order";
        const char *e = check_container(core, c);
        if (e)
            return e;
        if ((e = check_gang_member(c)))
            return e;
    }
    if (n != core->ncontainers || core->by_cid.len != n)
        return "container count wrong";
    unsigned nq = 0;
    for (const cg_container *c = core->head; c; c = c->next)
        nq += c->queued;
    if (nq != core->nqueued)
        return "queued gang members counted wrong";
    size_t nproc = 0, nreq = 0;
    for (const cg_container *c = core->head; c; c = c->next) {
        nproc += c->nprocs;
        nreq += c->npending;
    }
    if (core->by_pid.len != nproc || core->by_req.len != nreq)
        return "index sizes differ from the lists";
    cg_bytes host = 0, tenants = 0, paused = 0;
    unsigned npaused = 0;
    for (const cg_container *c = core->head; c; c = c->next) {
        cg_bytes h = c->swap == CG_SWAPPED_OUT ? c->swapped : c->swap_reserved;
        host += h;
        tenants += c->hold_tenant ? h : 0;
        paused += c->paused ? h : 0;
        npaused += c->paused;
        if (c->hold_tenant && c->swap == CG_RESIDENT)
            return "a tenant's hold counted for a container that is in";
    }
    if (host != core->swap_host)
        return "host bytes of swap differ from the containers'";
    if (npaused != core->npaused)
        return "paused containers miscounted";
    /* Tenants' holds do not count against preemption (swap.c, held swaps), nor do pauses. */
    if (core->cfg.swap_limit && host - tenants - paused > core->cfg.swap_limit)
        return "swap holds more host memory than its budget";
    claim *buf = malloc((n ? n : 1) * sizeof *buf);
    struct cg_fair_claim *fb = malloc((n ? n : 1) * sizeof *fb);
    const char *e = buf && fb ? NULL : "check: out of memory";
    if (cg_fair_on(core) && core->fair_cap < n)
        e = "fair-share scratch smaller than the containers";
    for (unsigned i = 0; i < core->ndev && !e; i++)
        e = check_device(core, i, buf, fb);
    free(buf);
    free(fb);
    return e;
}

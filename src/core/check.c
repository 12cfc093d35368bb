/* check.c — cg_core_check(), the O(n log n) oracle: recomputes every derived quantity from the
 * containers themselves and checks safety by sorting, independently of the incremental index.
 * It allocates with plain malloc (not the injectable allocator) so fault-injection tests can
 * still check the state after every failed call. */
#include <stdlib.h>

#include "internal.h"
#include "safety.h"
#include "waitq.h"

typedef struct {
    cg_bytes need, assigned;
} claim;

static int by_need(const void *a, const void *b)
{
    cg_bytes x = ((const claim *)a)->need, y = ((const claim *)b)->need;
    return (x > y) - (x < y);
}

/* The textbook test: ascending need, each need within free + the assignments before it. */
static bool safe(claim *v, size_t n, cg_bytes free)
{
    qsort(v, n, sizeof *v, by_need);
    cg_bytes avail = free;
    for (size_t i = 0; i < n; i++) {
        if (v[i].need > avail)
            return false;
        avail += v[i].assigned;
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
    if (c->compute_pct > CG_COMPUTE_PCT_MAX ||
        (c->compute_mode != CG_COMPUTE_ELASTIC && c->compute_mode != CG_COMPUTE_HARD))
        return "compute share out of range";
    if (c->compute_pct == 0 && c->compute_mode != CG_COMPUTE_ELASTIC)
        return "no compute share, yet a hard one";
    if (c->exclusive != (d->exclusive == c->cid))
        return "exclusive container and its device disagree";
    cg_bytes used = 0;
    unsigned nprocs = 0;
    for (const cg_process *p = c->procs; p; p = p->next, nprocs++) {
        if (cg_hash_get(&core->by_pid, c->cid, p->pid) != p)
            return "process missing from the pid index";
        if (p->next && p->next->prev != p)
            return "process list broken";
        used += p->used;
    }
    if (used != c->used || nprocs != c->nprocs)
        return "container use differs from its processes";
    cg_bytes pending = 0;
    unsigned npending = 0;
    for (const cg_pending *r = c->phead; r; r = r->next, npending++) {
        if (cg_hash_get(&core->by_req, c->cid, r->req) != r)
            return "request missing from the request index";
        if (c->used + r->bytes <= c->assigned)
            return "pending request fits its assignment";
        if (r->bytes > c->limit - c->used)
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

static const char *check_device(const cg_core *core, unsigned i, claim *buf)
{
    const cg_device *d = &core->dev[i];
    cg_bytes assigned = 0, used = 0;
    unsigned n = 0, nsusp = 0, nwait = 0, hard = 0;
    bool holder = false;
    for (const cg_container *c = core->head; c; c = c->next) {
        if (c->dev != i)
            continue;
        holder |= c->cid == d->exclusive;
        hard += c->compute_mode == CG_COMPUTE_HARD ? c->compute_pct : 0;
        assigned += c->assigned;
        used += c->used;
        buf[n++] = (claim){c->limit - c->assigned, c->assigned};
        nsusp += c->npending > 0;
        nwait += c->limit_waiting > 0;
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
    if (d->exclusive != CG_CID_NONE && (n != 1 || !holder))
        return "an exclusive container shares its device, or is not on it";
    unsigned k = 0;
    for (const cg_container *c = d->shead; c; c = c->snext, k++)
        if (c->npending == 0 || c->dev != i || (c->snext && c->snext->sprev != c))
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
    bool ok = safe(buf, n, d->capacity - assigned);
    if (!ok)
        return "device unsafe";
    if (ok != cg_safety_ok(d))
        return "safety index disagrees with the oracle";
    if (n > 0 && nsusp == n)
        return "every container on a device is suspended";
    /* No suspended container could safely be given its whole need right now. */
    for (const cg_container *s = d->shead; s; s = s->snext) {
        cg_bytes need = s->limit - s->assigned, free = d->capacity - assigned;
        if (need > free)
            continue;
        size_t m = 0;
        for (const cg_container *c = core->head; c; c = c->next)
            if (c->dev == i)
                buf[m++] = c == s ? (claim){0, c->limit} : (claim){c->limit - c->assigned, c->assigned};
        if (safe(buf, m, free - need))
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
    }
    if (n != core->ncontainers || core->by_cid.len != n)
        return "container count wrong";
    size_t nproc = 0, nreq = 0;
    for (const cg_container *c = core->head; c; c = c->next) {
        nproc += c->nprocs;
        nreq += c->npending;
    }
    if (core->by_pid.len != nproc || core->by_req.len != nreq)
        return "index sizes differ from the lists";
    claim *buf = malloc((n ? n : 1) * sizeof *buf);
    if (!buf)
        return "check: out of memory";
    const char *e = NULL;
    for (unsigned i = 0; i < core->ndev && !e; i++)
        e = check_device(core, i, buf);
    free(buf);
    return e;
}

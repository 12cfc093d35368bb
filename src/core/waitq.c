/* waitq.c — the suspended-request queue behind waitq.h: a doubly linked arrival list, a list per
 * process, and the core's treap (treap.h) keyed by arrival number with the least and greatest
 * size per subtree. */
#include "waitq.h"

#include <stddef.h>

static uint64_t prio_of(cg_cid cid, uint64_t seq)
{
    uint64_t s = seq * 0xd1b54a32d192ed03ull ^ (uint64_t)cid * 0x9e3779b97f4a7c15ull;
    return cg_rng_next(&s);
}

/* The request a node of the index is; NULL for none. */
static inline cg_pending *req_of(const cg_treap *n)
{
    return n ? (cg_pending *)((const char *)n - offsetof(cg_pending, tnode)) : NULL;
}

static void absorb(cg_pending *t, const cg_pending *child)
{
    if (!child)
        return;
    if (child->tmin < t->tmin)
        t->tmin = child->tmin;
    if (child->tmax > t->tmax)
        t->tmax = child->tmax;
}

static bool less(const cg_treap *a, const cg_treap *b) { return req_of(a)->seq < req_of(b)->seq; }

static void pull(cg_treap *n)
{
    cg_pending *t = req_of(n);
    t->tmin = t->tmax = t->bytes;
    absorb(t, req_of(n->l));
    absorb(t, req_of(n->r));
}

CG_TREAP_DEFINE(index, less, pull)

void cg_waitq_push(cg_container *c, cg_pending *r)
{
    r->seq = ++c->pseq;
    r->tnode = (cg_treap){.prio = prio_of(c->cid, r->seq)};
    pull(&r->tnode);
    c->proot = index_merge(c->proot, &r->tnode); /* the newest: greatest key */
    r->prev = c->ptail;
    r->next = NULL;
    if (c->ptail)
        c->ptail->next = r;
    else
        c->phead = r;
    c->ptail = r;
    cg_process *p = r->proc;
    r->pprev = p->ptail;
    r->pnext = NULL;
    if (p->ptail)
        p->ptail->pnext = r;
    else
        p->phead = r;
    p->ptail = r;
}

void cg_waitq_remove(cg_container *c, cg_pending *r)
{
    c->proot = index_erase(c->proot, &r->tnode);
    if (r->prev)
        r->prev->next = r->next;
    else
        c->phead = r->next;
    if (r->next)
        r->next->prev = r->prev;
    else
        c->ptail = r->prev;
    cg_process *p = r->proc;
    if (r->pprev)
        r->pprev->pnext = r->pnext;
    else
        p->phead = r->pnext;
    if (r->pnext)
        r->pnext->pprev = r->pprev;
    else
        p->ptail = r->pprev;
    r->tnode.l = r->tnode.r = NULL;
    r->prev = r->next = r->pprev = r->pnext = NULL;
}

/* The leftmost node of t with seq > after and bytes <= room (fit) or > room (!fit). A subtree
 * whose least (greatest) size rules it out is skipped whole, so the descent visits O(depth)
 * subtrees: those on the path to `after` and one path down to the answer. */
static cg_pending *first(cg_pending *t, uint64_t after, cg_bytes room, bool fit)
{
    while (t) {
        if (fit ? t->tmin > room : t->tmax <= room)
            return NULL;
        if (t->seq <= after) {
            t = req_of(t->tnode.r);
            continue;
        }
        cg_pending *x = first(req_of(t->tnode.l), after, room, fit);
        if (x)
            return x;
        if (fit ? t->bytes <= room : t->bytes > room)
            return t;
        t = req_of(t->tnode.r);
    }
    return NULL;
}

cg_pending *cg_waitq_first_fit(const cg_container *c, uint64_t after, cg_bytes room)
{
    return first(req_of(c->proot), after, room, true);
}

cg_pending *cg_waitq_first_over(const cg_container *c, uint64_t after, cg_bytes room)
{
    return first(req_of(c->proot), after, room, false);
}

/* In-order walk of the index against the arrival list, *at advancing along the list, and each
 * node's sizes against its children's (the heap order is treap.c's to check). */
static const char *verify(const cg_pending *t, const cg_pending **at)
{
    if (!t)
        return NULL;
    const char *e = verify(req_of(t->tnode.l), at);
    if (e)
        return e;
    if (*at != t)
        return "wait queue index: order differs from the arrival list";
    *at = t->next;
    cg_pending copy = *t;
    pull(&copy.tnode);
    if (copy.tmin != t->tmin || copy.tmax != t->tmax)
        return "wait queue index: sizes stale";
    return verify(req_of(t->tnode.r), at);
}

const char *cg_waitq_verify(const cg_container *c)
{
    for (const cg_pending *r = c->phead; r; r = r->next) {
        if (r->next && (r->next->prev != r || r->next->seq <= r->seq))
            return "wait queue: arrival list broken";
        bool listed = false;
        for (const cg_pending *q = r->proc->phead; q && !listed; q = q->pnext)
            listed = q == r;
        if (!listed)
            return "wait queue: request missing from its process's list";
    }
    unsigned n;
    switch (index_verify(c->proot, &n)) {
    case CG_TREAP_KEY_ORDER: return "wait queue index: order differs from the arrival list";
    case CG_TREAP_HEAP_ORDER: return "wait queue index: heap order broken";
    case CG_TREAP_OK: break;
    }
    const cg_pending *at = c->phead;
    const char *e = verify(req_of(c->proot), &at);
    if (!e && at)
        return "wait queue index: requests missing";
    return e;
}

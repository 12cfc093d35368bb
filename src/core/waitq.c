/* waitq.c — the suspended-request queue behind waitq.h: a doubly linked arrival list, a list per
 * process, and a treap keyed by arrival number with the least and greatest size per subtree. */
#include "waitq.h"

static uint64_t prio_of(cg_cid cid, uint64_t seq)
{
    uint64_t s = seq * 0xd1b54a32d192ed03ull ^ (uint64_t)cid * 0x9e3779b97f4a7c15ull;
    return cg_rng_next(&s);
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

static void pull(cg_pending *t)
{
    t->tmin = t->tmax = t->bytes;
    absorb(t, t->tl);
    absorb(t, t->tr);
}

/* Every arrival number in l is below every one in r. */
static cg_pending *merge(cg_pending *l, cg_pending *r)
{
    if (!l)
        return r;
    if (!r)
        return l;
    if (l->prio > r->prio) {
        l->tr = merge(l->tr, r);
        pull(l);
        return l;
    }
    r->tl = merge(l, r->tl);
    pull(r);
    return r;
}

static cg_pending *erase(cg_pending *t, const cg_pending *n)
{
    if (t == n)
        return merge(t->tl, t->tr);
    if (n->seq < t->seq)
        t->tl = erase(t->tl, n);
    else
        t->tr = erase(t->tr, n);
    pull(t);
    return t;
}

void cg_waitq_push(cg_container *c, cg_pending *r)
{
    r->seq = ++c->pseq;
    r->prio = prio_of(c->cid, r->seq);
    r->tl = r->tr = NULL;
    pull(r);
    c->proot = merge(c->proot, r); /* the newest has the greatest key */
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
    c->proot = erase(c->proot, r);
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
    r->tl = r->tr = r->prev = r->next = r->pprev = r->pnext = NULL;
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
            t = t->tr;
            continue;
        }
        cg_pending *x = first(t->tl, after, room, fit);
        if (x)
            return x;
        if (fit ? t->bytes <= room : t->bytes > room)
            return t;
        t = t->tr;
    }
    return NULL;
}

cg_pending *cg_waitq_first_fit(const cg_container *c, uint64_t after, cg_bytes room)
{
    return first(c->proot, after, room, true);
}

cg_pending *cg_waitq_first_over(const cg_container *c, uint64_t after, cg_bytes room)
{
    return first(c->proot, after, room, false);
}

/* In-order walk of the index against the arrival list; *at advances along the list. */
static const char *verify(const cg_pending *t, const cg_pending **at, const cg_pending *parent)
{
    if (!t)
        return NULL;
    if (parent && t->prio > parent->prio)
        return "wait queue index: heap order broken";
    const char *e = verify(t->tl, at, t);
    if (e)
        return e;
    if (*at != t)
        return "wait queue index: order differs from the arrival list";
    *at = t->next;
    cg_pending copy = *t;
    pull(&copy);
    if (copy.tmin != t->tmin || copy.tmax != t->tmax)
        return "wait queue index: sizes stale";
    return verify(t->tr, at, t);
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
    const cg_pending *at = c->phead;
    const char *e = verify(c->proot, &at, NULL);
    if (!e && at)
        return "wait queue index: requests missing";
    return e;
}

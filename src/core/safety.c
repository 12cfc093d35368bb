/* safety.c — the index behind safety.h, on the core's treap (treap.h): keyed by (need, cid),
 * each subtree summarised by its sum of assignments and its worst need. Priorities are a hash of
 * the cid, so the shape is deterministic (no randomness, no clock) yet balanced in expectation. */
#include "safety.h"

#include <stddef.h>
#include <stdlib.h>

static uint64_t prio_of(cg_cid cid)
{
    uint64_t s = (uint64_t)cid * 0xd1b54a32d192ed03ull;
    return cg_rng_next(&s);
}

static bool key_less(cg_bytes n1, cg_cid c1, cg_bytes n2, cg_cid c2)
{
    return n1 < n2 || (n1 == n2 && c1 < c2);
}

static inline int64_t imax(int64_t a, int64_t b) { return a > b ? a : b; }

/* The container a node of the index is; NULL for none. */
static inline cg_container *ctr_of(const cg_treap *n)
{
    return n ? (cg_container *)((const char *)n - offsetof(cg_container, tnode)) : NULL;
}
static inline cg_container *left(const cg_container *t) { return ctr_of(t->tnode.l); }
static inline cg_container *right(const cg_container *t) { return ctr_of(t->tnode.r); }

static bool less(const cg_treap *a, const cg_treap *b)
{
    const cg_container *x = ctr_of(a), *y = ctr_of(b);
    return key_less(x->tneed, x->cid, y->tneed, y->cid);
}

static void pull(cg_treap *n)
{
    cg_container *t = ctr_of(n), *tl = left(t), *tr = right(t);
    int64_t lsum = tl ? tl->tsum : 0;
    int64_t a = (int64_t)t->tassigned;
    int64_t m = (int64_t)t->tneed - lsum;
    if (tl)
        m = imax(m, tl->tmax);
    if (tr)
        m = imax(m, tr->tmax - lsum - a);
    t->tmax = m;
    t->tsum = lsum + a + (tr ? tr->tsum : 0);
}

CG_TREAP_DEFINE(index, less, pull)

void cg_safety_insert(cg_device *d, cg_container *c)
{
    c->tnode = (cg_treap){.prio = prio_of(c->cid)};
    c->tneed = ctr_need(c);
    c->tassigned = c->assigned;
    pull(&c->tnode);
    d->root = index_insert(d->root, &c->tnode);
}

void cg_safety_remove(cg_device *d, cg_container *c)
{
    d->root = index_erase(d->root, &c->tnode);
    c->tnode.l = c->tnode.r = NULL;
}

bool cg_safety_probe(const cg_device *d, cg_cid x, cg_bytes need, cg_bytes assigned,
                     cg_bytes free)
{
    /* worst = max over every container y of need_y - (assignments before y), with x placed at
     * its key; `off` is the sum of assignments left of the current subtree (x excluded). */
    int64_t worst = INT64_MIN, off = 0, ax = (int64_t)assigned;
    for (const cg_container *t = ctr_of(d->root); t;) {
        const cg_container *tl = left(t), *tr = right(t);
        int64_t lsum = tl ? tl->tsum : 0;
        if (key_less(t->tneed, t->cid, need, x)) {
            if (tl)
                worst = imax(worst, tl->tmax - off);
            worst = imax(worst, (int64_t)t->tneed - off - lsum);
            off += lsum + (int64_t)t->tassigned;
            t = tr;
        } else {
            int64_t base = off + lsum;
            worst = imax(worst, (int64_t)t->tneed - base - ax);
            if (tr)
                worst = imax(worst, tr->tmax - base - (int64_t)t->tassigned - ax);
            t = tl;
        }
    }
    worst = imax(worst, (int64_t)need - off);
    return worst <= (int64_t)free;
}

cg_bytes cg_safety_largest(cg_device *d, cg_container *c, cg_bytes cap)
{
    if (cap == 0)
        return 0;
    cg_bytes need = ctr_need(c), free = dev_free(d);
    cg_safety_remove(d, c);
    cg_bytes lo = 0, hi = cap;
    if (cg_safety_probe(d, c->cid, need - cap, c->assigned + cap, free - cap)) {
        lo = cap;
    } else {
        /* Invariant: lo is safe, hi is not. */
        while (hi - lo > 1) {
            cg_bytes mid = lo + (hi - lo) / 2;
            if (cg_safety_probe(d, c->cid, need - mid, c->assigned + mid, free - mid))
                lo = mid;
            else
                hi = mid;
        }
    }
    cg_safety_insert(d, c);
    return lo;
}

bool cg_safety_ok(const cg_device *d)
{
    return !d->root || ctr_of(d->root)->tmax <= (int64_t)dev_free(d);
}

/* The values each node was indexed with and its summary, against the container and its
 * children (the key and heap orders are treap.c's to check). */
static const char *verify_values(const cg_container *t)
{
    if (!t)
        return NULL;
    if (t->tneed != ctr_need(t) || t->tassigned != t->assigned)
        return "safety index: node values stale";
    const char *e = verify_values(left(t));
    if (!e)
        e = verify_values(right(t));
    if (e)
        return e;
    cg_container copy = *t;
    pull(&copy.tnode);
    if (copy.tsum != t->tsum || copy.tmax != t->tmax)
        return "safety index: augmentation stale";
    return NULL;
}

const char *cg_safety_verify(const cg_device *d, unsigned *count)
{
    switch (index_verify(d->root, count)) {
    case CG_TREAP_KEY_ORDER: return "safety index: key order broken";
    case CG_TREAP_HEAP_ORDER: return "safety index: heap order broken";
    case CG_TREAP_OK: break;
    }
    return verify_values(ctr_of(d->root));
}

static int claim_by_need(const void *a, const void *b)
{
    cg_bytes x = ((const cg_claim *)a)->need, y = ((const cg_claim *)b)->need;
    return (x > y) - (x < y);
}

bool cg_claims_safe(cg_claim *v, size_t n, cg_bytes free)
{
    qsort(v, n, sizeof *v, claim_by_need);
    cg_bytes avail = free;
    for (size_t i = 0; i < n; i++) {
        if (v[i].need > avail)
            return false;
        avail += v[i].assigned;
    }
    return true;
}

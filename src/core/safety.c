/* safety.c — the treap behind safety.h. Priorities are a hash of the cid, so the shape is
 * deterministic (no randomness, no clock) yet balanced in expectation. */
#include "safety.h"

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

static void pull(cg_container *t)
{
    int64_t lsum = t->tl ? t->tl->tsum : 0;
    int64_t a = (int64_t)t->tassigned;
    int64_t m = (int64_t)t->tneed - lsum;
    if (t->tl)
        m = imax(m, t->tl->tmax);
    if (t->tr)
        m = imax(m, t->tr->tmax - lsum - a);
    t->tmax = m;
    t->tsum = lsum + a + (t->tr ? t->tr->tsum : 0);
}

/* Splits t into keys < (need, cid) and the rest. */
static void split(cg_container *t, cg_bytes need, cg_cid cid, cg_container **l, cg_container **r)
{
    if (!t) {
        *l = *r = NULL;
    } else if (key_less(t->tneed, t->cid, need, cid)) {
        split(t->tr, need, cid, &t->tr, r);
        pull(t);
        *l = t;
    } else {
        split(t->tl, need, cid, l, &t->tl);
        pull(t);
        *r = t;
    }
}

static cg_container *merge(cg_container *l, cg_container *r)
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

static cg_container *insert(cg_container *t, cg_container *n)
{
    if (!t)
        return n;
    if (n->prio > t->prio) {
        split(t, n->tneed, n->cid, &n->tl, &n->tr);
        pull(n);
        return n;
    }
    if (key_less(n->tneed, n->cid, t->tneed, t->cid))
        t->tl = insert(t->tl, n);
    else
        t->tr = insert(t->tr, n);
    pull(t);
    return t;
}

static cg_container *erase(cg_container *t, cg_container *n)
{
    if (t == n)
        return merge(t->tl, t->tr);
    if (key_less(n->tneed, n->cid, t->tneed, t->cid))
        t->tl = erase(t->tl, n);
    else
        t->tr = erase(t->tr, n);
    pull(t);
    return t;
}

void cg_safety_insert(cg_device *d, cg_container *c)
{
    c->tl = c->tr = NULL;
    c->prio = prio_of(c->cid);
    c->tneed = ctr_need(c);
    c->tassigned = c->assigned;
    pull(c);
    d->root = insert(d->root, c);
}

void cg_safety_remove(cg_device *d, cg_container *c)
{
    d->root = erase(d->root, c);
    c->tl = c->tr = NULL;
}

bool cg_safety_probe(const cg_device *d, cg_cid x, cg_bytes need, cg_bytes assigned,
                     cg_bytes free)
{
    /* worst = max over every container y of need_y - (assignments before y), with x placed at
     * its key; `off` is the sum of assignments left of the current subtree (x excluded). */
    int64_t worst = INT64_MIN, off = 0, ax = (int64_t)assigned;
    for (const cg_container *t = d->root; t;) {
        int64_t lsum = t->tl ? t->tl->tsum : 0;
        if (key_less(t->tneed, t->cid, need, x)) {
            if (t->tl)
                worst = imax(worst, t->tl->tmax - off);
            worst = imax(worst, (int64_t)t->tneed - off - lsum);
            off += lsum + (int64_t)t->tassigned;
            t = t->tr;
        } else {
            int64_t base = off + lsum;
            worst = imax(worst, (int64_t)t->tneed - base - ax);
            if (t->tr)
                worst = imax(worst, t->tr->tmax - base - (int64_t)t->tassigned - ax);
            t = t->tl;
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
    return !d->root || d->root->tmax <= (int64_t)dev_free(d);
}

static const char *verify(const cg_container *t, const cg_container *lo, const cg_container *hi,
                          unsigned *count)
{
    if (!t)
        return NULL;
    (*count)++;
    if (t->tneed != ctr_need(t) || t->tassigned != t->assigned)
        return "safety index: node values stale";
    if ((lo && !key_less(lo->tneed, lo->cid, t->tneed, t->cid)) ||
        (hi && !key_less(t->tneed, t->cid, hi->tneed, hi->cid)))
        return "safety index: key order broken";
    if ((t->tl && t->tl->prio > t->prio) || (t->tr && t->tr->prio > t->prio))
        return "safety index: heap order broken";
    const char *e = verify(t->tl, lo, t, count);
    if (!e)
        e = verify(t->tr, t, hi, count);
    if (e)
        return e;
    cg_container copy = *t;
    pull(&copy);
    if (copy.tsum != t->tsum || copy.tmax != t->tmax)
        return "safety index: augmentation stale";
    return NULL;
}

const char *cg_safety_verify(const cg_device *d, unsigned *count)
{
    *count = 0;
    return verify(d->root, NULL, NULL, count);
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

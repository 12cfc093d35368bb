/* treap.h — the core's one treap: an intrusive binary search tree whose nodes also form a heap
 * on a priority, with a summary ("augmentation") per subtree that its user recomputes in pull.
 *
 * Two indexes use it: the safety index (safety.c: keyed by (need, cid), each subtree carrying
 * its sum of assignments and its worst need) and a container's wait queue (waitq.c: keyed by
 * arrival number, each subtree carrying its least and greatest size). Each embeds a cg_treap in
 * its node, gives its key order and its summary, and asks its own questions by walking l and r
 * itself; the shape-changing operations (split, merge, insert, erase) and the check of the two
 * orders are written here once.
 *
 * CG_TREAP_DEFINE(name, less, pull) writes them as static functions name_merge, name_insert,
 * name_erase and name_verify that call the user's less and pull directly: both indexes sit on
 * the core's hottest paths (every assignment change, every wait). Measured with callgrind on
 * `bench_core 50000`: through a table of function pointers the index code took 228M
 * instructions where the two hand-written treaps took 160M; generated, 171M; generated and with
 * the node first in its struct (a node is then its container or request at no cost), 161M.
 *
 * Invariants (name_verify): in-order keys ascend by less; no child's priority is above its
 * parent's; every node's summary is what pull makes of it and its children (the user checks
 * that one, knowing what a summary is). Priorities are the user's (a hash: no randomness or
 * clock, balanced in expectation), so the same operations always give the same shape. Pure: no
 * allocation, no I/O. */
#ifndef CONVGPU_CORE_TREAP_H
#define CONVGPU_CORE_TREAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct cg_treap {
    struct cg_treap *l, *r;
    uint64_t prio;
} cg_treap;

/* A user may need only some of them (the wait queue never inserts in the middle). */
#define CG_TREAP_FN_ static inline __attribute__((unused))

typedef enum { CG_TREAP_OK, CG_TREAP_KEY_ORDER, CG_TREAP_HEAP_ORDER } cg_treap_fault;

/* less: bool (const cg_treap *a, const cg_treap *b), a's key below b's (keys are distinct);
 * pull: void (cg_treap *n), n's summary from n and its children (either may be NULL).
 *   name_merge(l, r)    every key of l below every key of r: their union's root
 *   name_insert(t, n)   n (prio set, l and r NULL, pulled) added to t: the new root
 *   name_erase(t, n)    n, which is in t, taken out: the new root (n's links left as they were)
 *   name_verify(t, &count)  the key and heap orders; count gets the number of nodes */
#define CG_TREAP_DEFINE(name, less, pull)                                                      \
    /* Splits t into the keys below n's and the rest. */                                           \
    CG_TREAP_FN_ void name##_split(cg_treap *t, const cg_treap *n, cg_treap **l, cg_treap **r)     \
    {                                                                                              \
        if (!t) {                                                                                  \
            *l = *r = NULL;                                                                        \
        } else if (less(t, n)) {                                                                   \
            name##_split(t->r, n, &t->r, r);                                                       \
            pull(t);                                                                               \
            *l = t;                                                                                \
        } else {                                                                                   \
            name##_split(t->l, n, l, &t->l);                                                       \
            pull(t);                                                                               \
            *r = t;                                                                                \
        }                                                                                          \
    }                                                                                              \
                                                                                                   \
    CG_TREAP_FN_ cg_treap *name##_merge(cg_treap *l, cg_treap *r)                                  \
    {                                                                                              \
        if (!l)                                                                                    \
            return r;                                                                              \
        if (!r)                                                                                    \
            return l;                                                                              \
        if (l->prio > r->prio) {                                                                   \
            l->r = name##_merge(l->r, r);                                                          \
            pull(l);                                                                               \
            return l;                                                                              \
        }                                                                                          \
        r->l = name##_merge(l, r->l);                                                              \
        pull(r);                                                                                   \
        return r;                                                                                  \
    }                                                                                              \
                                                                                                   \
    CG_TREAP_FN_ cg_treap *name##_insert(cg_treap *t, cg_treap *n)                                 \
    {                                                                                              \
        if (!t)                                                                                    \
            return n;                                                                              \
        if (n->prio > t->prio) {                                                                   \
            name##_split(t, n, &n->l, &n->r);                                                      \
            pull(n);                                                                               \
            return n;                                                                              \
        }                                                                                          \
        if (less(n, t))                                                                            \
            t->l = name##_insert(t->l, n);                                                         \
        else                                                                                       \
            t->r = name##_insert(t->r, n);                                                         \
        pull(t);                                                                                   \
        return t;                                                                                  \
    }                                                                                              \
                                                                                                   \
    CG_TREAP_FN_ cg_treap *name##_erase(cg_treap *t, const cg_treap *n)                            \
    {                                                                                              \
        if (t == n)                                                                                \
            return name##_merge(t->l, t->r);                                                       \
        if (less(n, t))                                                                            \
            t->l = name##_erase(t->l, n);                                                          \
        else                                                                                       \
            t->r = name##_erase(t->r, n);                                                          \
        pull(t);                                                                                   \
        return t;                                                                                  \
    }                                                                                              \
                                                                                                   \
    CG_TREAP_FN_ cg_treap_fault name##_verify_(const cg_treap *t, const cg_treap *lo,              \
                                         const cg_treap *hi, unsigned *count)                      \
    {                                                                                              \
        if (!t)                                                                                    \
            return CG_TREAP_OK;                                                                    \
        (*count)++;                                                                                \
        if ((lo && !less(lo, t)) || (hi && !less(t, hi)))                                          \
            return CG_TREAP_KEY_ORDER;                                                             \
        if ((t->l && t->l->prio > t->prio) || (t->r && t->r->prio > t->prio))                      \
            return CG_TREAP_HEAP_ORDER;                                                            \
        cg_treap_fault e = name##_verify_(t->l, lo, t, count);                                     \
        return e ? e : name##_verify_(t->r, t, hi, count);                                         \
    }                                                                                              \
                                                                                                   \
    CG_TREAP_FN_ cg_treap_fault name##_verify(const cg_treap *t, unsigned *count)                  \
    {                                                                                              \
        *count = 0;                                                                                \
        return name##_verify_(t, NULL, NULL, count);                                               \
    }

#endif

/* safety.h — the banker's-algorithm index of one device, kept incrementally.
 *
 * A device is safe (maximum claim = limit L) iff, taking its containers in ascending order of
 * need = L - A, every need is at most free + the assignments of those before it. Ascending need
 * is an optimal order (finishing a container only ever adds to free), so safety is the single
 * inequality  max_i (need_i - prefixA_i) <= free.  The index is a treap keyed by (need, cid)
 * whose nodes carry the sum of assignments and that maximum for their subtree; a what-if query
 * ("would this container, with these values, leave the device safe?") is one O(log n) descent
 * that changes nothing.
 */
#ifndef CONVGPU_CORE_SAFETY_H
#define CONVGPU_CORE_SAFETY_H

#include "internal.h"

/* The textbook test, without the index: claims in ascending need, each need within free plus
 * the assignments of those before it. Sorts v. Used by the invariant check (check.c), which must
 * not trust the index it checks, and by what-ifs over several containers at once (stepaside.c). */
typedef struct {
    cg_bytes need, assigned;
} cg_claim;
bool cg_claims_safe(cg_claim *v, size_t n, cg_bytes free);

void cg_safety_insert(cg_device *d, cg_container *c);   /* uses c->limit, c->assigned */
void cg_safety_remove(cg_device *d, cg_container *c);

/* Safe if container x (not in the index) had need `need` and assignment `assigned`, and the
 * device had `free` bytes free? */
bool cg_safety_probe(const cg_device *d, cg_cid x, cg_bytes need, cg_bytes assigned,
                     cg_bytes free);

/* Largest g <= cap such that giving g more bytes to container c (in the index) leaves the
 * device safe; the current state must be safe. Safety is monotone in g (a smaller gift is never
 * less safe), so this is a binary search over what-if queries. */
cg_bytes cg_safety_largest(cg_device *d, cg_container *c, cg_bytes cap);

/* Is the device, as indexed, safe? */
bool cg_safety_ok(const cg_device *d);

/* Recomputes the index from scratch and compares (tests): NULL or a violation. */
const char *cg_safety_verify(const cg_device *d, unsigned *count);

#endif

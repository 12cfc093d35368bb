/* waitq.h — a container's suspended requests: the arrival-ordered list, each process's own
 * list, and an index for the questions drain_own asks after every change of use, assignment or
 * limit.
 *
 * drain_own grants, in arrival order, every waiting request that fits what is left of the
 * assignment, then rejects every one that no longer fits the limit. Walking the whole queue for
 * that made every free, grant or use sync of a container cost its number of waiting requests,
 * and a sync of many processes that product. The index is a treap over the same requests keyed
 * by arrival number, whose nodes carry the smallest and largest size in their subtree: "the
 * first request after X that fits in N bytes" and "the first one bigger than N" are one O(log n)
 * descent, and the usual answer, "none", is one comparison at the root. Each process links its
 * own requests, so its exit touches only those. Priorities are a hash of (cid, arrival number):
 * the shape is deterministic and balanced in expectation, and the core's random stream (the
 * random policy's) is left alone.
 */
#ifndef CONVGPU_CORE_WAITQ_H
#define CONVGPU_CORE_WAITQ_H

#include "internal.h"

/* Appends r (req, bytes, charges and proc set) to c's queue and to its process's list. */
void cg_waitq_push(cg_container *c, cg_pending *r);
/* Unlinks r from the queue, the index and its process's list. */
void cg_waitq_remove(cg_container *c, cg_pending *r);
/* The first request in arrival order after arrival number `after` (0: from the start) whose
 * size is at most `room`; NULL when none. */
cg_pending *cg_waitq_first_fit(const cg_container *c, uint64_t after, cg_bytes room);
/* The first request after `after` whose size is above `room`; NULL when none. */
cg_pending *cg_waitq_first_over(const cg_container *c, uint64_t after, cg_bytes room);
/* Recomputes the index and the process lists from the queue (tests): NULL or a violation. */
const char *cg_waitq_verify(const cg_container *c);

#endif

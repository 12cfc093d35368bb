/* pool.h — charging memory pools (stream-ordered allocation) by what they really reserve.
 *
 * A pool keeps freed memory for reuse and grows in chunks, so the bytes a pool holds are what
 * the GPU loses. When the driver reports CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, a pool is charged
 * its reserved memory (trued up after every alloc, free and trim); otherwise each allocation is
 * charged on its own. Pools are passed as void * (CUmemoryPool) so this header needs no CUDA. */
#ifndef CONVGPU_IP_POOL_H
#define CONVGPU_IP_POOL_H

#include <stdbool.h>
#include <stdint.h>

/* The pool cuMemAllocAsync uses now (the current device's), or NULL. */
void *cg_pool_current(void);
/* True when `pool` is charged by its reserved memory. */
bool cg_pool_by_reserve(void *pool);
/* Adds `extra` (already charged for this pool, to member m) to its account, then trues the
 * account up to the pool's reserved memory (m does not matter when extra is 0). -1 when the
 * pool grew beyond what could be charged. */
int cg_pool_settle(void *pool, unsigned m, uint64_t extra);
/* Returns freed reserved memory of every pool to the account (never charges, never blocks). */
void cg_pool_shrink_all(void);
/* The pool was destroyed: return its whole charge. */
void cg_pool_forget(void *pool);

void cg_pool_fork_prepare(void);
void cg_pool_fork_parent(void);
void cg_pool_fork_child(void);

#endif

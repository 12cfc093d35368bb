/* swap.h — this process's swappable allocations and the thread that moves them (docs/SWAP.md).
 *
 * Follow one allocation: in a container whose ledger says swap is enabled, cuMemAlloc_v2 is
 * charged as always, then served by a VMM reservation with device memory mapped into it
 * (cg_swap_alloc); the application gets the reservation's address. On the daemon's order
 * (ledger.h, "Swap") the swap thread waits until no hooked call is in flight and the device
 * work is done, copies every such allocation to host memory, unmaps and releases its device
 * memory and lowers the slot's use; the reservation stays, so the address stays the
 * application's. Coming back, it charges the slot again, maps new device memory at the same
 * address and copies the data back. Freed, its memory is kept, mapped and charged, for the next
 * allocation of the same size (cg_swap_reuse), or released as any free's, its reservation then
 * serving the next allocation of the same size (swap.c, the two caches).
 *
 * Invariants: a record is resident (device memory mapped, no host copy) or out (host copy, no
 * device memory), never both nor neither outside the swap thread's critical section; while any
 * record is out the container's gate carries CG_GATE_SWAPPED, so no hooked call that could
 * touch device memory reaches the driver; a call counted in flight (cg_swap_enter) has read the
 * gate after counting itself, so the swap thread, which sets the gate bit before it reads the
 * count, never misses one. */
#ifndef CONVGPU_IP_SWAP_H
#define CONVGPU_IP_SWAP_H

#include "cuda_types.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* Set once this process has made a swappable allocation (its swap thread runs): from then on
 * gated calls count themselves in flight. Reset in a fork child. */
extern _Atomic int cg_swap_armed;
/* Hooked calls between their gate check and the driver's return. */
extern _Atomic uint64_t cg_swap_inflight;

/* Whether allocations of this process are to be made swappable now (session open and the
 * container's ledger says so). */
bool cg_swap_wanted(void);

/* Serves an allocation of `bytes` from memory a free kept (charged already: *charged is what
 * its slot holds for it): CUDA_SUCCESS with *dptr and *id as cg_swap_alloc's. Otherwise
 * CUDA_ERROR_NOT_FOUND, having dropped whatever was kept: the caller charges and allocates. */
CUresult cg_swap_reuse(CUdeviceptr *dptr, size_t bytes, uint64_t *charged, uint64_t *id);

/* Serves an allocation of `bytes` (already charged `charged`) from VMM. On success *dptr is the
 * address and *id the record to keep with the allocation (alloctab's `swap`). The driver's
 * error otherwise; nothing is left behind. */
CUresult cg_swap_alloc(CUdeviceptr *dptr, size_t bytes, uint64_t charged, uint64_t *id);

/* Frees a swappable allocation: waits for the device's work (as cuMemFree does). With a
 * non-NULL kept_it, when no request of the container waits and no swap is ordered, keeps it
 * mapped for reuse: *kept_it = true and the caller must not uncharge it (its charge stays in
 * the slot until it is reused or dropped). Otherwise unmaps, releases, and keeps the
 * reservation for the next allocation of its size (a bounded cache, swap.c) or gives it back. */
CUresult cg_swap_free(uint64_t id, bool *kept_it);

/* Drops the memory this process keeps (unmaps, releases, uncharges it); `why` goes to the debug
 * log. True if there was some. Cheap when there is none (one load). */
bool cg_swap_drop_kept(const char *why);

void cg_swap_fork_prepare(void);
void cg_swap_fork_parent(void);
void cg_swap_fork_child(void);

#endif

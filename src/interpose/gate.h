/* gate.h — the gate at every kernel launch (hook_launch.c) and, in a container that swaps, at
 * every call that may touch device memory: the container's calls pass while its gate in the
 * ledger is open, and wait in the calling thread while it is closed (src/common/ledger.h,
 * struct cg_ledger_compute: the daemon's compute controller, src/core/compute.h, or a swap,
 * docs/SWAP.md).
 *
 * Cost: unconfigured, one load (cg_enabled); configured and open, one more load of the gate
 * word. No system call, no lock, nothing held across the wait: a process that dies while waiting
 * leaves nothing behind but its slot's waiting count, which the daemon clears with the slot. */
#ifndef CONVGPU_IP_GATE_H
#define CONVGPU_IP_GATE_H

#include "client.h"
#include "config.h"
#include "hooks.h"
#include "swap.h"

/* What passing the gate left to undo after the driver call. */
struct cg_gate_ticket {
    struct cg_ledger *l;    /* NULL: not under convgpu, or no session yet: nothing to limit */
    bool counted;           /* counted in cg_swap_inflight */
};

/* The slow path: waits while the gate has any of the `bits` (compute: until its deadline; swap:
 * until the bit is cleared), leaving the in-flight count while it waits when `counted`. */
void cg_gate_wait(struct cg_session *s, bool counted, uint32_t bits);

/* Before a call that may touch device memory (a launch, an allocation, a free): passes the
 * gate, waiting while it is closed. In a process with swappable memory the call counts itself
 * in flight *before* it reads the gate (swap.h says why), until cg_gate_leave. */
static inline struct cg_gate_ticket cg_gate_pass(void)
{
    struct cg_gate_ticket t = {NULL, false};
    if (CG_LIKELY(!cg_enabled()))
        return t;
    struct cg_session s;
    if (!cg_session_get(&s))
        return t; /* no session yet: nothing was ever limited in this process */
    t.l = s.ledger;
    if (CG_UNLIKELY(atomic_load_explicit(&cg_swap_armed, memory_order_relaxed))) {
        atomic_fetch_add_explicit(&cg_swap_inflight, 1, memory_order_seq_cst);
        t.counted = true;
    }
    if (CG_UNLIKELY(atomic_load_explicit(&s.ledger->compute.gate, memory_order_seq_cst) !=
                    CG_GATE_OPEN))
        cg_gate_wait(&s, t.counted, CG_GATE_CLOSED | CG_GATE_SWAPPED | CG_GATE_PAUSED);
    return t;
}

/* Before a copy or a set: only a swap holds it (the compute gate is for launches), and only
 * in a process that has swappable memory. */
static inline struct cg_gate_ticket cg_gate_pass_memory(void)
{
    struct cg_gate_ticket t = {NULL, false};
    if (CG_LIKELY(!atomic_load_explicit(&cg_swap_armed, memory_order_relaxed)))
        return t;
    struct cg_session s;
    atomic_fetch_add_explicit(&cg_swap_inflight, 1, memory_order_seq_cst);
    t.counted = true;
    if (cg_session_get(&s)) {
        t.l = s.ledger;
        if (atomic_load_explicit(&s.ledger->compute.gate, memory_order_seq_cst) &
            CG_GATE_SWAPPED)
            cg_gate_wait(&s, true, CG_GATE_SWAPPED);
    }
    return t;
}

/* After the driver returned. */
static inline void cg_gate_leave(struct cg_gate_ticket t)
{
    if (CG_UNLIKELY(t.counted))
        atomic_fetch_sub_explicit(&cg_swap_inflight, 1, memory_order_release);
}

/* Frees a swappable allocation behind the gate (a free may not run while its memory is out). */
static inline CUresult cg_swap_free_gated(uint64_t id, bool *kept_it)
{
    struct cg_gate_ticket t = cg_gate_pass();
    CUresult r = cg_swap_free(id, kept_it);
    cg_gate_leave(t);
    return r;
}

/* After a launch in a container with a share: bounds this thread's launched, unfinished work
 * (gate.c says why and how). `ptsz`: the launch used the per-thread default stream variant. */
void cg_gate_runahead(CUstream s, int ptsz);
/* Before a launch: where this thread's launches are very long (gate.c), waits for its previous
 * one. Threads of this process that launched such work lately: while none has, a launch pays
 * one load of this count and no call (a call and a thread-local lookup on every launch cost
 * +20-50 ns in bench/compute.sh's launch cost). */
extern _Atomic unsigned cg_gate_long_threads;
void cg_gate_before_launch(void);

/* Before a launch: the run-ahead bound's wait, then the gate. */
static inline struct cg_gate_ticket cg_gate_pass_launch(void)
{
    if (CG_UNLIKELY(atomic_load_explicit(&cg_gate_long_threads, memory_order_relaxed) != 0))
        cg_gate_before_launch();
    return cg_gate_pass();
}

/* After a launch, with what cg_gate_pass returned. A share of 100 never closes its gate (its
 * credit cannot fall below zero), so its launches need no run-ahead bound: a compute-bound
 * program at 100 keeps its queue as deep as it likes, as without a share. */
static inline void cg_gate_launched(struct cg_gate_ticket t, CUresult r, CUstream s, int ptsz)
{
    cg_gate_leave(t);
    struct cg_ledger *l = t.l;
    if (!l || r != CUDA_SUCCESS)
        return;
    uint32_t share = atomic_load_explicit(&l->compute.share_pct, memory_order_relaxed);
    if (share != 0 && share < 100)
        cg_gate_runahead(s, ptsz);
}

#endif

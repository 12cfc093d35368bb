/* gate.h — the compute gate at every kernel launch (hook_launch.c): the container's launches
 * pass while its gate in the ledger is open, and wait in the launching thread while it is closed
 * (src/common/ledger.h, struct cg_ledger_compute; the daemon decides, src/core/compute.h).
 *
 * Cost: unconfigured, one load (cg_enabled); configured and open, one more load of the gate
 * word. No system call, no lock, nothing held across the wait: a process that dies while waiting
 * leaves nothing behind but its slot's waiting count, which the daemon clears with the slot. */
#ifndef CONVGPU_IP_GATE_H
#define CONVGPU_IP_GATE_H

#include "client.h"
#include "config.h"
#include "hooks.h"

/* The slow path: waits while the gate is closed and its deadline lies ahead. */
void cg_gate_wait(struct cg_session *s);

/* Before a launch: passes the gate, waiting while it is closed. Returns the container's ledger
 * for cg_gate_launched (NULL: not under convgpu, or no session yet, so nothing to limit). */
static inline struct cg_ledger *cg_gate_pass(void)
{
    if (CG_LIKELY(!cg_enabled()))
        return NULL;
    struct cg_session s;
    if (!cg_session_get(&s))
        return NULL; /* no session yet: nothing was ever limited in this process */
    if (CG_UNLIKELY(atomic_load_explicit(&s.ledger->compute.gate, memory_order_acquire) !=
                    CG_GATE_OPEN))
        cg_gate_wait(&s);
    return s.ledger;
}

/* After a launch in a container with a share: bounds this thread's launched, unfinished work
 * (gate.c says why and how). `ptsz`: the launch used the per-thread default stream variant. */
void cg_gate_runahead(CUstream s, int ptsz);

/* After a launch, with what cg_gate_pass returned. A share of 100 never closes its gate (its
 * credit cannot fall below zero), so its launches need no run-ahead bound: a compute-bound
 * program at 100 keeps its queue as deep as it likes, as without a share. */
static inline void cg_gate_launched(struct cg_ledger *l, CUresult r, CUstream s, int ptsz)
{
    if (!l || r != CUDA_SUCCESS)
        return;
    uint32_t share = atomic_load_explicit(&l->compute.share_pct, memory_order_relaxed);
    if (share != 0 && share < 100)
        cg_gate_runahead(s, ptsz);
}

#endif

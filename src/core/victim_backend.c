/* victim_backend.c — swap or checkpoint for one victim (docs/SCHEDULING.md "Swap or
 * checkpoint", issue 38 item 3). The scheduler has picked a victim and knows what is still
 * lacking; this says which back end moves it out:
 *
 *   swap        frees the victim's allocations and moves exactly those to the host; its
 *               contexts stay on the device and its processes keep running their host code.
 *   checkpoint  frees the allocations AND the contexts (518 MiB a process on an H200 with
 *               CUDA 13) and moves both; the processes stop until they are restored.
 *
 * For one victim a checkpoint never moves less than a swap (it moves a superset), so the
 * least-moved choice that frees enough is: swap when the allocations cover the need; else a
 * checkpoint when allocations and contexts together cover it (one stopped victim instead of a
 * second one disturbed); else, neither being enough, swap (a running process is worth keeping)
 * unless swap frees nothing or may not run, where a checkpoint frees what it can.
 *
 * Invariants (tests/core/test_victim_backend.c): the choice is a back end the case allows;
 * frees <= moves; SWAP frees exactly the allocations, CHECKPOINT allocations + contexts;
 * CHECKPOINT is chosen over an allowed, non-empty swap only when the swap does not free the
 * need and the checkpoint does; NONE only when no allowed back end frees anything.
 * Pure: no I/O, no clock, no globals. */
#include "core.h"

static cg_backend_choice make(cg_backend b, cg_bytes frees, cg_bytes moves)
{
    return (cg_backend_choice){.backend = b, .frees = frees, .moves = moves};
}

cg_backend_choice cg_victim_backend(const cg_backend_case *in)
{
    cg_bytes swap_frees = in->can_swap ? in->allocations : 0;
    /* A checkpoint's total, saturated (the inputs are bytes the caller counted). */
    cg_bytes whole = in->allocations + in->contexts;
    if (whole < in->allocations)
        whole = UINT64_MAX;
    cg_bytes ckpt_frees = in->can_checkpoint ? whole : 0;

    if (swap_frees > 0 && swap_frees >= in->need)
        return make(CG_BACKEND_SWAP, swap_frees, swap_frees);
    if (ckpt_frees > 0 && ckpt_frees >= in->need)
        return make(CG_BACKEND_CHECKPOINT, ckpt_frees, ckpt_frees);
    if (swap_frees > 0)
        return make(CG_BACKEND_SWAP, swap_frees, swap_frees);
    if (ckpt_frees > 0)
        return make(CG_BACKEND_CHECKPOINT, ckpt_frees, ckpt_frees);
    return make(CG_BACKEND_NONE, 0, 0);
}

const char *cg_backend_name(cg_backend b)
{
    switch (b) {
    case CG_BACKEND_NONE: return "none";
    case CG_BACKEND_SWAP: return "swap";
    case CG_BACKEND_CHECKPOINT: return "checkpoint";
    }
    return "?";
}

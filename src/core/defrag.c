/* defrag.c — one move to make room (issue 38 item 2, docs/SCHEDULING.md "Moving a container to
 * make room"). A request fits on no GPU of the node; moving one running container to another
 * GPU of the same model would free enough on its GPU. This picks that move, the fewest bytes
 * moved first (a move is a checkpoint and a restore of everything the container holds).
 *
 * Invariants (tests/core/test_defrag.c): a move is found only when no device takes the request
 * now and the caller's bound allows one; it goes between two different devices of one model;
 * the target can take the container's whole assignment now (the caller reserves it there first,
 * as cg_pause_move does, or does nothing); its source then has room for the request; and no
 * other single move that does all that moves fewer bytes. Pure: no I/O, no clock, no globals. */
#include "core.h"

/* The fewest-bytes move of a container on `source` (ndev: any device) after which its device
 * takes the request. */
static cg_defrag_move pick(const cg_defrag_device *devs, size_t ndev,
                           const cg_defrag_container *cs, size_t nc, cg_bytes request,
                           size_t source)
{
    cg_defrag_move best = {0};
    for (size_t i = 0; i < nc; i++) {
        const cg_defrag_container *c = &cs[i];
        if (!c->movable || c->holds == 0 || c->device >= ndev ||
            (source < ndev && c->device != source))
            continue;
        const cg_defrag_device *from = &devs[c->device];
        /* Room on the source once it has left (free + holds, without overflow). */
        if (from->free < request && c->holds < request - from->free)
            continue;
        if (best.found && c->holds >= best.moves)
            continue;   /* not fewer bytes; the lower index already won a tie */
        unsigned to = (unsigned)ndev;
        for (size_t t = 0; t < ndev; t++) {
            if (t == c->device || devs[t].model != from->model || devs[t].free < c->holds)
                continue;
            if (to == ndev || devs[t].free > devs[to].free)
                to = (unsigned)t;
        }
        if (to == ndev)
            continue;
        best = (cg_defrag_move){.found = true, .container = i, .from = c->device, .to = to,
                                .moves = c->holds};
    }
    return best;
}

cg_defrag_move cg_defrag_pick(const cg_defrag_device *devs, size_t ndev,
                              const cg_defrag_container *cs, size_t nc, cg_bytes request,
                              unsigned moves_left)
{
    cg_defrag_move none = {0};
    if (moves_left == 0 || request == 0)
        return none;
    for (size_t d = 0; d < ndev; d++)
        if (devs[d].free >= request)
            return none;   /* it fits without a move */
    return pick(devs, ndev, cs, nc, request, ndev);
}

cg_defrag_move cg_defrag_pick_on(const cg_defrag_device *devs, size_t ndev,
                                 const cg_defrag_container *cs, size_t nc, cg_bytes request,
                                 unsigned device, unsigned moves_left)
{
    cg_defrag_move none = {0};
    if (moves_left == 0 || request == 0 || device >= ndev || devs[device].free >= request)
        return none;
    return pick(devs, ndev, cs, nc, request, device);
}

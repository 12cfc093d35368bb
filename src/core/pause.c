/* pause.c — whole-container pause, resume and move: the books of the driver's checkpoint
 * (docs/PAUSE.md). The daemon checkpoints every process of the container through the driver;
 * here a pause is a swap-out of everything (swap.c's states, held by the operator):
 *
 *   cg_pause          RESIDENT -> MOVING_OUT, held, `paused`; the whole assignment is expected
 *                     to leave (contexts too: a checkpointed process has none on the device).
 *   (the daemon)      cg_process_swap_out for each process with all of its use, then
 *                     cg_swap_out_done: OUT, the assignment shrinks to 0 and the memory goes to
 *                     whoever waits. The limit stays.
 *   cg_pause_resume   ends the hold: the container comes back through the resume pass's safe
 *                     offer like any OUT container (banker's-safe), which emits SWAP_IN once its
 *                     assignment holds what is on the host (at once when free memory allows).
 *   cg_pause_move     OUT and held only: the container leaves its device's books for dev's,
 *                     reserving there at once all it had (refused, with nothing changed, when
 *                     that is not free and safe), then comes back as above, on dev.
 *   cg_pause_in_done  every process restored: RESIDENT, no longer paused.
 *
 * Invariants: a paused container is never RESIDENT (check.c); its host bytes are in swap_host
 * but outside the swap budget (cg_pause_host): the copies live in the processes themselves and
 * are there because the operator asked, so they never stop a swap, and swap never stops them.
 * A pause needs neither swap on nor swap allowed for the container; a gang member (whose
 * assignment is its limit, gang.c) and an exclusive holder of a device are not moved. */
#include "internal.h"
#include "safety.h"

static cg_container *find(const cg_core *core, cg_cid cid)
{
    return cid == CG_CID_NONE ? NULL : cg_hash_get(&core->by_cid, cid, 0);
}

cg_bytes cg_pause_host(const cg_core *core)
{
    if (!core->npaused)
        return 0;
    cg_bytes sum = 0;
    for (const cg_container *c = core->head; c; c = c->next)
        if (c->paused)
            sum += c->swap == CG_SWAPPED_OUT ? c->swapped : c->swap_reserved;
    return sum;
}

cg_status cg_pause(cg_core *core, cg_cid cid, cg_time now)
{
    cg_container *c = find(core, cid);
    if (!c)
        return CG_ERR_NOT_FOUND;
    if (c->swap != CG_RESIDENT || c->reserved)
        return CG_ERR_STATE;
    c->paused = true;
    core->npaused++;
    c->held = true;
    c->hold_tenant = false;
    cg_swap_order_out(core, c, CG_WHY_OPERATOR, 0, true, now);
    return CG_OK;
}

bool cg_paused(const cg_core *core, cg_cid cid)
{
    const cg_container *c = find(core, cid);
    return c && c->paused;
}

cg_status cg_pause_resume(cg_core *core, cg_cid cid, cg_time now)
{
    cg_container *c = find(core, cid);
    if (!c)
        return CG_ERR_NOT_FOUND;
    if (!c->paused || c->swap != CG_SWAPPED_OUT)
        return CG_ERR_STATE;
    if (!c->held)
        return CG_OK; /* already on its way back */
    c->held = false;
    cg_wait_update(core, c, now);
    cg_reschedule(core, c->dev, now);
    return CG_OK;
}

cg_status cg_pause_move_check(const cg_core *core, cg_cid cid, unsigned dev)
{
    const cg_container *c = find(core, cid);
    if (!c)
        return CG_ERR_NOT_FOUND;
    if (dev >= core->ndev)
        return CG_ERR_NO_DEVICE;
    if (!c->paused || c->swap != CG_SWAPPED_OUT || !c->held || c->npending || c->waiting ||
        c->limit_waiting || c->reserved || dev == c->dev)
        return CG_ERR_STATE;
    const cg_device *to = &core->dev[dev];
    if (c->exclusive || to->exclusive != CG_CID_NONE)
        return CG_ERR_EXCLUSIVE;
    if (c->limit > to->capacity)
        return CG_ERR_TOO_LARGE;
    if (!dev_admits(to, ctr_hard(c)))
        return CG_ERR_NO_COMPUTE;
    if (dev_free(to) < c->swapped)
        return CG_ERR_NOT_FREE;
    return CG_OK;
}

/* Takes c off its device's books (it is OUT, held, waits for nothing). */
static void detach(cg_core *core, cg_container *c)
{
    cg_device *d = &core->dev[c->dev];
    cg_safety_remove(d, c);
    d->assigned -= c->assigned;
    d->hard_pct -= ctr_hard(c);
    d->ncontainers--;
    d->nswap_state--;
}

static void attach(cg_core *core, cg_container *c, unsigned dev)
{
    cg_device *d = &core->dev[dev];
    c->dev = dev;
    d->assigned += c->assigned;
    d->hard_pct += ctr_hard(c);
    d->ncontainers++;
    d->nswap_state++;
    cg_safety_insert(d, c);
}

cg_status cg_pause_move(cg_core *core, cg_cid cid, unsigned dev, cg_time now)
{
    cg_status st = cg_pause_move_check(core, cid, dev);
    if (st != CG_OK)
        return st;
    cg_container *c = find(core, cid);
    unsigned from = c->dev;
    cg_bytes had = c->assigned, want = c->swapped;
    detach(core, c);
    c->assigned = 0;
    attach(core, c, dev);
    if (cg_fair_on(core)) {
        cg_fair_recompute(core, from);
        cg_fair_recompute(core, dev);
    }
    cg_device *d = &core->dev[dev];
    cg_bytes cap = want < dev_free(d) ? want : dev_free(d);
    if (cg_fair_on(core))
        cap = cg_fair_cap(core, c, cap);
    if (cg_safety_largest(d, c, cap) < want) {
        /* Not safe there now: back where it was, as it was. */
        detach(core, c);
        c->assigned = had;
        attach(core, c, from);
        if (cg_fair_on(core)) {
            cg_fair_recompute(core, dev);
            cg_fair_recompute(core, from);
        }
        return CG_ERR_NOT_FREE;
    }
    if (had)
        cg_emit(core, CG_EV_UNASSIGN, CG_WHY_OPERATOR, c, 0, 0, had, now);
    cg_safety_remove(d, c);
    c->assigned = want;
    d->assigned += want;
    cg_safety_insert(d, c);
    if (want)
        cg_emit(core, CG_EV_ASSIGN, CG_WHY_OPERATOR, c, 0, 0, want, now);
    c->held = false;
    cg_reschedule(core, from, now);
    cg_wait_update(core, c, now);
    cg_swap_in_if_room(core, c, now);
    return CG_OK;
}

cg_status cg_pause_in_done(cg_core *core, cg_cid cid, cg_time now)
{
    cg_container *c = find(core, cid);
    if (!c)
        return CG_ERR_NOT_FOUND;
    if (!c->paused)
        return CG_ERR_STATE;
    return cg_swap_in_done(core, cid, now);   /* which ends the pause */
}

cg_status cg_pause_restore(cg_core *core, cg_cid cid, cg_time now)
{
    cg_container *c = find(core, cid);
    if (!c)
        return CG_ERR_NOT_FOUND;
    if (c->swap != CG_RESIDENT || c->paused || c->reserved)
        return CG_ERR_STATE;
    /* What is on the host came back with cg_process_restore_swapped; whatever assignment was
     * recorded is given back: a paused container holds nothing on the device. */
    c->paused = true;
    core->npaused++;
    ctr_set_swap(core, c, CG_SWAPPED_OUT);
    c->held = true;
    c->hold_tenant = false;
    core->swap_host += c->swapped;
    if (c->assigned > c->used)
        cg_assign_less(core, c, c->used, CG_WHY_SWAPPED, now);
    cg_wait_update(core, c, now);
    cg_reschedule(core, c->dev, now);
    return CG_OK;
}

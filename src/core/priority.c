/* priority.c — priorities: the order in which waiting containers are offered memory.
 *
 * A resume round goes class by class, highest first; inside a class the resume policy orders
 * (policy_*.c), so with equal priorities a round is exactly the policy's pass. Within a class,
 * containers waiting with requests go before containers that are out and want back in: the
 * memory a swap freed goes to the request it was freed for, not straight back to the container
 * that left (docs/SCHEDULING.md, "Priorities" and "Swap").
 *
 * Aging: a waiting container's class is its priority plus one per aging step waited, capped at
 * the highest priority waiting on the device. The cap keeps equal priorities in one class
 * (so aging never overrides the policy among equals) while a container of priority p reaches
 * the top after (top - p) steps however many higher-priority containers keep arriving. */
#include "internal.h"

unsigned cg_top_priority(const cg_device *d)
{
    if (d->nswap_state == 0) { /* none hidden: the counts say it */
        for (unsigned p = CG_PRIORITY_MAX; p > 0; p--)
            if (d->nwait_prio[p])
                return p;
        return 0;
    }
    unsigned top = 0;
    for (const cg_container *c = d->shead; c; c = c->snext)
        if (!ctr_hidden(c) && c->priority > top)
            top = c->priority;
    return top;
}

unsigned cg_class(const cg_core *core, const cg_container *c, unsigned top, cg_time now)
{
    if (c->priority >= top)
        return c->priority;
    cg_time waited = c->waiting && now > c->suspended_since ? now - c->suspended_since : 0;
    cg_time steps = waited / aging_step(core);
    return steps >= top - c->priority ? top : c->priority + (unsigned)steps;
}

/* The group a waiting container is offered memory in: higher first. A lender due to take its
 * memory back (stepaside.c) goes first in its class. */
static unsigned group(const cg_core *core, const cg_container *c, unsigned top, cg_time now)
{
    unsigned in_class = cg_step_aside_due(core, c, now) ? 2 : c->swap == CG_SWAPPED_OUT ? 0 : 1;
    return cg_class(core, c, top, now) * 3 + in_class;
}

void cg_resume_round(cg_core *core, unsigned dev, cg_time now,
                     void (*offer)(cg_core *, cg_container *, cg_time))
{
    cg_device *d = &core->dev[dev];
    uint64_t round = ++core->round;
    unsigned top = cg_top_priority(d);
    if (d->nswap_state == 0 && d->nwait_prio[top] == d->nsuspended) {
        /* One class, nothing out or moving: the round is the policy's pass alone. */
        uint64_t pass = ++core->pass;
        cg_container *c;
        while (dev_free(d) > 0 && (c = core->resume->pick(core, d, dev_free(d), pass, now))) {
            c->pass = pass;
            c->round = round;
            offer(core, c, now);
        }
        return;
    }
    /* An out container whose assignment already holds what is on the host (its processes'
     * host copies shrank when one exited) comes back without needing free memory. */
    for (cg_container *c = d->shead, *n; c; c = n) {
        n = c->snext;
        if (c->swap == CG_SWAPPED_OUT && !c->held)
            cg_swap_in_if_room(core, c, now);
    }
    while (dev_free(d) > 0) {
        bool any = false;
        unsigned best = 0;
        for (const cg_container *c = d->shead; c; c = c->snext) {
            if (ctr_hidden(c) || c->round == round)
                continue;
            unsigned g = group(core, c, top, now);
            if (!any || g > best)
                best = g;
            any = true;
        }
        if (!any)
            break;
        /* The policy sees only this group: the others are marked as already considered. */
        uint64_t pass = ++core->pass;
        for (cg_container *c = d->shead; c; c = c->snext)
            if (ctr_hidden(c) || c->round == round || group(core, c, top, now) != best)
                c->pass = pass;
        cg_container *c;
        while (dev_free(d) > 0 && (c = core->resume->pick(core, d, dev_free(d), pass, now))) {
            c->pass = pass;
            c->round = round;
            offer(core, c, now);
        }
        for (cg_container *w = d->shead; w; w = w->snext)
            if (!ctr_hidden(w) && w->round != round && group(core, w, top, now) == best)
                w->round = round;
    }
}

cg_status cg_container_set_priority(cg_core *core, cg_cid cid, unsigned priority, cg_time now)
{
    cg_container *c = cid == CG_CID_NONE ? NULL : cg_hash_get(&core->by_cid, cid, 0);
    if (!c)
        return CG_ERR_NOT_FOUND;
    if (priority > CG_PRIORITY_MAX)
        return CG_ERR_INVALID;
    if (priority == c->priority)
        return CG_OK;
    if (c->waiting) {
        core->dev[c->dev].nwait_prio[c->priority]--;
        core->dev[c->dev].nwait_prio[priority]++;
    }
    c->priority = priority;
    cg_emit(core, CG_EV_PRIORITY, CG_WHY_NONE, c, 0, 0, priority, now);
    cg_reschedule(core, c->dev, now);
    return CG_OK;
}

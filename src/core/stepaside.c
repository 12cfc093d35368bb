/* stepaside.c — seed 001's promise: a container whose request is declined moves its own memory
 * to the host and waits, so that the next container that fits can run.
 *
 * Without this rule, a waiting container keeps its assignment, and swap only ever serves the
 * device's most urgent waiting container R (swap.c): when R itself cannot be served, a
 * container behind R that would fit in what R holds waits too. The path of one step aside:
 *
 *   R's request suspends (or a move ends); swap.c's victim search for R comes up short;
 *   cg_step_aside_for finds B, the longest-waiting container of R's class behind R whose first
 *   request would be granted, safely and within its tenant's ceiling, once R's assignment
 *   (less its context charges) is free; swap.c orders R out (SWAP_OUT, reason STEP_ASIDE,
 *   req = B's request) and R is *lending* from then (lent_at); the move ends, R's assignment
 *   shrinks, and the resume pass offers the memory to the containers waiting with requests
 *   before the ones waiting out (priority.c), so B's class goes first, in the policy's order.
 *
 * The bound (the backfill rule): R is passed over for at most T = step_aside_bound (default one
 * aging step). Once now >= lent_at + T, R is *due*: the resume pass offers it memory before
 * every other container of its class (priority.c), and the victim search serves R with
 * borrowers as victims — containers of R's device that got memory since lent_at (created,
 * resumed or raised since), even running ones of equal priority, which otherwise never go for
 * each other. So from lent_at + T on, nothing handed out since R stepped aside stands between R
 * and its memory beyond the moves that give it back: R then waits only for the memory it would
 * have waited for had it kept its assignment (held by containers that held it before lent_at).
 * EASY backfilling uses run-time estimates to the same end; the core has none (profiles live in
 * the daemon), so the lender takes its memory back instead of trusting a guess.
 *
 * Safety is swap's (docs/SCHEDULING.md, "Priorities and swap"): stepping aside is a swap-out of
 * a waiting container (Lemma 3: lowering an assignment keeps a safe state safe), the lender is an
 * out container offered memory by the same pass, and a borrower moved out for it is an ordinary
 * victim. The check below only decides whether to move; the pass decides who gets memory. */
#include <stdlib.h>

#include "internal.h"
#include "safety.h"

typedef cg_claim claim;

/* What stepping aside frees: R's assignment beyond its processes' context charges. */
static cg_bytes frees_of(const cg_core *core, const cg_container *r)
{
    cg_bytes ctx = (cg_bytes)r->nprocs * core->dev[r->dev].context_charge;
    return r->assigned > ctx ? r->assigned - ctx : 0;
}

static cg_time bound(const cg_core *core)
{
    return core->cfg.step_aside_bound ? core->cfg.step_aside_bound : aging_step(core);
}

bool cg_step_aside_due(const cg_core *core, const cg_container *r, cg_time now)
{
    return r->lending && now >= r->lent_at && now - r->lent_at >= bound(core);
}

bool cg_step_aside_borrower(const cg_container *r, const cg_container *c)
{
    if (!r->lending || c == r || c->dev != r->dev)
        return false;
    cg_time since = c->created_at > c->served_at ? c->created_at : c->served_at;
    return since >= r->lent_at;
}

/* Whether the device would be safe with R out (its assignment down by what it frees), every
 * container moving out already out, and B given `give`: the textbook test by ascending need.
 * false when the scratch cannot be had (then nobody moves). */
static bool safe_after(cg_core *core, const cg_container *r, const cg_container *b, cg_bytes give)
{
    const cg_device *d = &core->dev[r->dev];
    size_t cap = d->ncontainers ? d->ncontainers : 1;
    claim *v = cg_mem_alloc(core, cap * sizeof *v);
    if (!v)
        return false;
    cg_bytes assigned = 0;
    size_t n = 0;
    for (const cg_container *c = core->head; c; c = c->next) {
        if (c->dev != r->dev)
            continue;
        cg_bytes a = c->assigned;
        if (c == r)
            a -= frees_of(core, r);
        else if (c->swap == CG_MOVING_OUT)
            a -= c->swap_expect <= a ? c->swap_expect : a;
        if (c == b)
            a += give;
        assigned += a;
        v[n++] = (claim){c->limit - a, a};
    }
    bool ok = assigned <= d->capacity && cg_claims_safe(v, n, d->capacity - assigned);
    cg_mem_free(core, v, cap * sizeof *v);
    return ok;
}

cg_container *cg_step_aside_for(cg_core *core, cg_container *r, unsigned cls, unsigned top,
                                cg_bytes have, cg_time now)
{
    if (!cg_step_aside_on(core) || r->swap != CG_RESIDENT || r->no_swap || r->npending == 0)
        return NULL;
    if (r->returned && now - r->resident_since < aging_step(core))
        return NULL;   /* just back: no ping-pong */
    /* Something must go to the host: a lender with nothing there would be ordered straight
     * back in (its assignment holds its nothing) and offered memory beside B, which makes the
     * move an empty round trip under a policy that serves R first. */
    cg_bytes frees = frees_of(core, r);
    cg_bytes ctx = (cg_bytes)r->nprocs * core->dev[r->dev].context_charge;
    if (frees == 0 || r->used <= ctx)
        return NULL;
    const cg_device *d = &core->dev[r->dev];
    for (cg_container *b = d->shead; b; b = b->snext) {
        if (b == r || b->npending == 0 || b->swap != CG_RESIDENT || ctr_hidden(b))
            continue;
        /* Of R's class: a lower one would be offered memory after R, which would just take
         * its memory back. */
        if (cg_class(core, b, top, now) != cls)
            continue;
        cg_bytes want = b->used + b->phead->bytes - b->assigned;
        if (want > have + frees || want > ctr_need(b))
            continue;
        if (cg_fair_cap(core, b, want) < want || !safe_after(core, r, b, want))
            continue;
        return b;
    }
    return NULL;
}

void cg_step_aside_reclaim(cg_core *core, unsigned dev, cg_time now)
{
    if (!cg_step_aside_on(core))
        return;
    for (const cg_container *c = core->dev[dev].shead; c; c = c->snext)
        if (c->swap == CG_SWAPPED_OUT && !c->held && cg_step_aside_due(core, c, now)) {
            cg_swap_consider(core, dev, now);
            return;
        }
}

/* policy_best_fit.c — Best-Fit (the paper's BF): the container whose shortfall L - A is closest
 * to, but not above, the free memory; if no shortfall fits, the smallest one. Ties go to the
 * oldest container, so the choice never depends on list order. */
#include "internal.h"

static bool better(const cg_container *a, const cg_container *b, cg_bytes free)
{
    if (!b)
        return true;
    cg_bytes sa = ctr_need(a), sb = ctr_need(b);
    bool fa = sa <= free, fb = sb <= free;
    if (fa != fb)
        return fa;
    if (sa != sb)
        return fa ? sa > sb : sa < sb;
    return a->cid < b->cid;
}

static cg_container *pick(cg_core *core, cg_device *dev, cg_bytes free, uint64_t pass, cg_time now)
{
    (void)core, (void)now;
    cg_container *best = NULL;
    for (cg_container *c = dev->shead; c; c = c->snext)
        if (c->pass != pass && better(c, best, free))
            best = c;
    return best;
}

const struct cg_resume_ops cg_resume_best_fit = {"best-fit", pick};

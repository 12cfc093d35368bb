/* policy_aging_fit.c — ours (placeholder until tuned with the simulator): the oldest container
 * whose shortfall fits in free memory; if none fits, the oldest. */
#include "internal.h"

static cg_container *pick(cg_core *core, cg_device *dev, cg_bytes free, uint64_t pass, cg_time now)
{
    (void)core, (void)now;
    cg_container *fit = NULL, *old = NULL;
    for (cg_container *c = dev->shead; c; c = c->snext) {
        if (c->pass == pass)
            continue;
        if (!old || c->cid < old->cid)
            old = c;
        if (ctr_need(c) <= free && (!fit || c->cid < fit->cid))
            fit = c;
    }
    return fit ? fit : old;
}

const struct cg_resume_ops cg_resume_aging_fit = {"aging-fit", pick};

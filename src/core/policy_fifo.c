/* policy_fifo.c — FIFO (the paper's): the oldest-created suspended container. Cids grow with
 * creation, so the smallest cid is the oldest. O(k) in suspended containers. */
#include "internal.h"

static cg_container *pick(cg_core *core, cg_device *dev, cg_bytes free, uint64_t pass, cg_time now)
{
    (void)core, (void)free, (void)now;
    cg_container *best = NULL;
    for (cg_container *c = dev->shead; c; c = c->snext)
        if (c->pass != pass && (!best || c->cid < best->cid))
            best = c;
    return best;
}

const struct cg_resume_ops cg_resume_fifo = {"fifo", pick};

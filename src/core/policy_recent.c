/* policy_recent.c — Recent-Use (the paper's RU): the most recently suspended container. The
 * device keeps its suspended containers in suspension order, so this walks from the tail. */
#include "internal.h"

static cg_container *pick(cg_core *core, cg_device *dev, cg_bytes free, uint64_t pass, cg_time now)
{
    (void)core, (void)free, (void)now;
    for (cg_container *c = dev->stail; c; c = c->sprev)
        if (c->pass != pass)
            return c;
    return NULL;
}

const struct cg_resume_ops cg_resume_recent = {"recent", pick};

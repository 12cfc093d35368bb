/* policy_random.c — Random (the paper's Rand): uniform among the suspended containers not yet
 * considered, by reservoir sampling over one scan with the core's seeded generator, so the same
 * seed and the same events give the same choices. */
#include "internal.h"

static cg_container *pick(cg_core *core, cg_device *dev, cg_bytes free, uint64_t pass, cg_time now)
{
    (void)free, (void)now;
    cg_container *chosen = NULL;
    uint64_t seen = 0;
    for (cg_container *c = dev->shead; c; c = c->snext)
        if (c->pass != pass && cg_rng_below(&core->rng, ++seen) == 0)
            chosen = c;
    return chosen;
}

const struct cg_resume_ops cg_resume_random = {"random", pick};

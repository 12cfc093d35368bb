/* place_first_fit.c — first-fit (GSaaS's default): the lowest-numbered device whose free
 * memory holds the whole limit. */
#include "internal.h"

static int pick(const cg_core *core, cg_bytes limit)
{
    for (unsigned i = 0; i < core->ndev; i++)
        if (dev_free(&core->dev[i]) >= limit)
            return (int)i;
    return -1;
}

const struct cg_place_ops cg_place_first_fit = {"first-fit", pick};

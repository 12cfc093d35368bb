/* place_first_fit.c — first-fit (GSaaS's default): the lowest-numbered device whose free
 * memory holds the whole limit and whose hard share left holds the container's hard share. */
#include "internal.h"

static int pick(const cg_core *core, const cg_container_spec *spec, unsigned hard)
{
    cg_bytes limit = spec->limit;
    for (unsigned i = 0; i < core->ndev; i++)
        if (dev_fits(&core->dev[i], limit, hard))
            return (int)i;
    return -1;
}

const struct cg_place_ops cg_place_first_fit = {"first-fit", pick};

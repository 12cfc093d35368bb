/* place_least_loaded.c — least-loaded (GSaaS Algorithm 1): the device with the most free
 * memory, if that holds the limit; ties go to the lowest index. */
#include "internal.h"

static int pick(const cg_core *core, cg_bytes limit)
{
    int best = -1;
    for (unsigned i = 0; i < core->ndev; i++)
        if (best < 0 || dev_free(&core->dev[i]) > dev_free(&core->dev[best]))
            best = (int)i;
    return best >= 0 && dev_free(&core->dev[best]) >= limit ? best : -1;
}

const struct cg_place_ops cg_place_least_loaded = {"least-loaded", pick};

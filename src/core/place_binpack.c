/* place_binpack.c — bin-packing (seed 003): the fullest device that still holds the limit, so
 * large holes stay open for large containers. Ties go to the lowest index. */
#include "internal.h"

static int pick(const cg_core *core, cg_bytes limit)
{
    int best = -1;
    for (unsigned i = 0; i < core->ndev; i++) {
        cg_bytes f = dev_free(&core->dev[i]);
        if (f >= limit && (best < 0 || f < dev_free(&core->dev[best])))
            best = (int)i;
    }
    return best;
}

const struct cg_place_ops cg_place_binpack = {"binpack", pick};

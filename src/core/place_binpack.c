/* place_binpack.c — bin-packing (seed 003), with compute: the fullest device (least room,
 * dev_room: memory and hard share left weighed together) that still fits the container's limit
 * and hard share, so large holes of either stay open for large containers. Ties go to the
 * lowest index. */
#include "internal.h"

static int pick(const cg_core *core, const cg_container_spec *spec, unsigned hard)
{
    cg_bytes limit = spec->limit;
    int best = -1;
    for (unsigned i = 0; i < core->ndev; i++)
        if (dev_fits(&core->dev[i], limit, hard) &&
            (best < 0 || dev_room(&core->dev[i]) < dev_room(&core->dev[best])))
            best = (int)i;
    return best;
}

const struct cg_place_ops cg_place_binpack = {"binpack", pick};

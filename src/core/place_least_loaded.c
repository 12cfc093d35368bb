/* place_least_loaded.c — least-loaded (GSaaS Algorithm 1, with compute): among the devices that
 * fit the container (free memory for its limit, hard share left for its hard share), the one
 * with the most room — the smaller of free memory and capacity scaled by the hard share left
 * (dev_room) — so neither a device short of memory nor one whose time is promised away is
 * preferred. Without hard shares, room is free memory: the device with the most of it. Ties go
 * to the lowest index. */
#include "internal.h"

static int pick(const cg_core *core, const cg_container_spec *spec, unsigned hard)
{
    cg_bytes limit = spec->limit;
    int best = -1;
    for (unsigned i = 0; i < core->ndev; i++)
        if (dev_fits(&core->dev[i], limit, hard) &&
            (best < 0 || dev_room(&core->dev[i]) > dev_room(&core->dev[best])))
            best = (int)i;
    return best;
}

const struct cg_place_ops cg_place_least_loaded = {"least-loaded", pick};

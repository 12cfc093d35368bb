/* place_load.c — what load-balance and standalone placement (seed 003) know of a device: the
 * summed utilisation of its containers, each counted as cg_container_load says (internal.h),
 * and the choice of the least-loaded device among those that fit. The sums are taken afresh at
 * each placement (one walk over the containers), so nothing has to be kept in step with
 * creation, removal or restore. */
#include "internal.h"

unsigned cg_container_load(const cg_container *c)
{
    if (c->util_pct)
        return c->util_pct;
    return c->compute_mode == CG_COMPUTE_HARD ? c->compute_pct : 0;
}

void cg_place_loads(const cg_core *core, unsigned sums[CG_MAX_DEVICES])
{
    for (unsigned i = 0; i < core->ndev; i++)
        sums[i] = 0;
    /* At most CG_MAX_DEVICES x UINT32_MAX containers x 100: no overflow in practice, and the
     * sum saturates rather than wrap should it ever come close. */
    for (const cg_container *c = core->head; c; c = c->next) {
        unsigned load = cg_container_load(c);
        sums[c->dev] = sums[c->dev] > UINT32_MAX - load ? UINT32_MAX : sums[c->dev] + load;
    }
}

int cg_place_least_load(const cg_core *core, const unsigned sums[CG_MAX_DEVICES], cg_bytes limit,
                        unsigned hard)
{
    int best = -1;
    for (unsigned i = 0; i < core->ndev; i++) {
        const cg_device *d = &core->dev[i];
        if (!dev_fits(d, limit, hard))
            continue;
        if (best < 0 || sums[i] < sums[best] ||
            (sums[i] == sums[best] && dev_room(d) > dev_room(&core->dev[best])))
            best = (int)i;
    }
    return best;
}

/* place_interference.c — interference (seed 003, "measured interference"; issue 37 item 3): a
 * container whose application is known (spec->app != 0) joins the fitting device where it is
 * slowed, or slows others, least, by the matrix `convgpu interfere --save` stored
 * (cg_config.slowdown). A device's cost is the worst slowdown over its containers c of the pair
 * either way round, max(s(app, c.app), s(c.app, app)); an unmeasured pair costs nothing (1000),
 * so an empty device costs nothing, and a device of unmeasured neighbours is as good as an
 * empty one: the matrix only ever steers away from what was measured to hurt. Ties go by
 * load-balance's rule (least summed utilisation, then most room, then lowest index), which is
 * also the whole rule for a container of unknown application or when no matrix is given.
 * Memory stays a hard limit (dev_fits), as in every placement. */
#include "internal.h"

static uint32_t pair(const cg_core *core, uint64_t a, uint64_t b)
{
    uint32_t s = core->cfg.slowdown(core->cfg.slowdown_ctx, a, b);
    return s > 1000 ? s : 1000;
}

static int pick(const cg_core *core, const cg_container_spec *spec, unsigned hard)
{
    unsigned sums[CG_MAX_DEVICES];
    cg_place_loads(core, sums);
    if (!spec->app || !core->cfg.slowdown)
        return cg_place_least_load(core, sums, spec->limit, hard);
    uint32_t cost[CG_MAX_DEVICES];
    for (unsigned i = 0; i < core->ndev; i++)
        cost[i] = 1000;
    for (const cg_container *c = core->head; c; c = c->next) {
        if (!c->app)
            continue;
        uint32_t s = pair(core, spec->app, c->app), t = pair(core, c->app, spec->app);
        if (s < t)
            s = t;
        if (s > cost[c->dev])
            cost[c->dev] = s;
    }
    int best = -1;
    for (unsigned i = 0; i < core->ndev; i++) {
        const cg_device *d = &core->dev[i];
        if (!dev_fits(d, spec->limit, hard))
            continue;
        if (best < 0 || cost[i] < cost[best] ||
            (cost[i] == cost[best] &&
             (sums[i] < sums[best] ||
              (sums[i] == sums[best] && dev_room(d) > dev_room(&core->dev[best])))))
            best = (int)i;
    }
    return best;
}

const struct cg_place_ops cg_place_interference = {"interference", pick};

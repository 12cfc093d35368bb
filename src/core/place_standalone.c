/* place_standalone.c — standalone (seed 003, Figure 4(b): "group applications that demand the
 * same resource"): containers of one application together. For a container whose application
 * is known (spec->app != 0), in this order:
 *   1. a fitting device whose containers all run this application, the one with most of them
 *      (ties: most room, then lowest index);
 *   2. else a fitting empty device (most room, then lowest index), so the application starts a
 *      group of its own;
 *   3. else the least-loaded fitting device, by summed utilisation as load-balance chooses.
 * A container of unknown application (app 0) goes by step 3 alone. Memory stays a hard limit:
 * two containers of one application that do not fit one device together are placed apart (seed
 * 003's two 8.3 GB LAMMPS on 12 GB GPUs). */
#include "internal.h"

static int pick(const cg_core *core, const cg_container_spec *spec, unsigned hard)
{
    unsigned sums[CG_MAX_DEVICES];
    if (spec->app) {
        unsigned same[CG_MAX_DEVICES] = {0};
        for (const cg_container *c = core->head; c; c = c->next)
            same[c->dev] += c->app == spec->app;
        int group = -1, empty = -1;
        for (unsigned i = 0; i < core->ndev; i++) {
            const cg_device *d = &core->dev[i];
            if (!dev_fits(d, spec->limit, hard))
                continue;
            if (d->ncontainers == 0) {
                if (empty < 0 || dev_room(d) > dev_room(&core->dev[empty]))
                    empty = (int)i;
            } else if (same[i] == d->ncontainers &&
                       (group < 0 || same[i] > same[group] ||
                        (same[i] == same[group] && dev_room(d) > dev_room(&core->dev[group])))) {
                group = (int)i;
            }
        }
        if (group >= 0)
            return group;
        if (empty >= 0)
            return empty;
    }
    cg_place_loads(core, sums);
    return cg_place_least_load(core, sums, spec->limit, hard);
}

const struct cg_place_ops cg_place_standalone = {"standalone", pick};

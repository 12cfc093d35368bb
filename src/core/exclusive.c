/* exclusive.c — exclusive containers: one container that holds a whole device (GSaaS's
 * exclusive mode, issue 21 item 4).
 *
 * Follow one: `convgpu run --exclusive -- CMD` reaches the daemon, which creates the container
 * with cg_container_create_spec and spec.exclusive set. cg_exclusive_admit finds it a device
 * with no container at all — the one it named (CG_ERR_BUSY when that has containers), or among
 * the empty devices that can hold its limit the one the placement policy would take — and, when
 * no limit was given, makes the device's capacity its limit. From then on the device records its
 * holder: dev_fits refuses it to placement, a named device held so refuses a new container
 * (CG_ERR_EXCLUSIVE), and the holder's removal frees the device again.
 *
 * Invariant (checked by cg_core_check): a device's `exclusive` names a live container of that
 * device marked exclusive, it is then the device's only container, and no container is marked
 * exclusive without its device naming it.
 *
 * What an exclusive container is not: it is still bound by its limit and the banker's rule like
 * any other (alone on its device, it can always be given its whole limit, so it never waits).
 */
#include "internal.h"

/* The empty device the placement policy would choose for `limit`: on an empty device free
 * memory and room are the capacity, so first-fit takes the lowest index, least-loaded (and
 * load-balance and standalone, whose loads are all 0 there) the largest device and binpack the
 * smallest that holds the limit. -1 when none is empty and big
 * enough; *busy says whether a big enough device exists at all. */
static int pick_empty(const cg_core *core, cg_bytes limit, bool *busy)
{
    int best = -1;
    *busy = false;
    for (unsigned i = 0; i < core->ndev; i++) {
        const cg_device *d = &core->dev[i];
        if (d->capacity < limit)
            continue;
        if (d->ncontainers > 0) {
            *busy = true;
            continue;
        }
        if (best < 0)
            best = (int)i;
        else if ((core->cfg.placement == CG_PLACE_LEAST_LOADED ||
                  core->cfg.placement == CG_PLACE_LOAD_BALANCE ||
                  core->cfg.placement == CG_PLACE_STANDALONE) &&
                 d->capacity > core->dev[best].capacity)
            best = (int)i;
        else if (core->cfg.placement == CG_PLACE_BINPACK && d->capacity < core->dev[best].capacity)
            best = (int)i;
    }
    return best;
}

cg_status cg_exclusive_admit(const cg_core *core, const cg_container_spec *spec, int *device,
                             cg_bytes *limit)
{
    if (!spec->exclusive) {
        if (*device >= 0 && core->dev[*device].exclusive != CG_CID_NONE)
            return CG_ERR_EXCLUSIVE;
        return CG_OK;
    }
    int di = *device;
    if (di >= 0) {
        if (*limit > core->dev[di].capacity)
            return CG_ERR_TOO_LARGE;
        if (core->dev[di].ncontainers > 0)
            return CG_ERR_BUSY;
    } else {
        bool busy;
        di = pick_empty(core, *limit, &busy);
        if (di < 0)
            return busy ? CG_ERR_BUSY : CG_ERR_TOO_LARGE;
    }
    *device = di;
    if (*limit == 0)
        *limit = core->dev[di].capacity;
    return CG_OK;
}

cg_status cg_exclusive_why_unplaced(const cg_core *core, cg_bytes limit, unsigned hard)
{
    for (unsigned i = 0; i < core->ndev; i++) {
        const cg_device *d = &core->dev[i];
        if (d->capacity >= limit && dev_admits(d, hard) && d->exclusive == CG_CID_NONE)
            return CG_ERR_NO_COMPUTE;
    }
    /* Every device big enough is held exclusively or has no hard share left: name the
     * exclusive holders when there are any, since they are why the others are out of reach. */
    for (unsigned i = 0; i < core->ndev; i++)
        if (core->dev[i].capacity >= limit && core->dev[i].exclusive != CG_CID_NONE)
            return CG_ERR_EXCLUSIVE;
    return CG_ERR_NO_COMPUTE;
}

void cg_exclusive_attach(cg_core *core, cg_container *c, bool exclusive)
{
    c->exclusive = exclusive;
    if (exclusive)
        core->dev[c->dev].exclusive = c->cid;
}

void cg_exclusive_detach(cg_core *core, const cg_container *c)
{
    if (core->dev[c->dev].exclusive == c->cid)
        core->dev[c->dev].exclusive = CG_CID_NONE;
}

cg_status cg_container_restore_exclusive(cg_core *core, cg_cid cid)
{
    cg_container *c = cid == CG_CID_NONE ? NULL : cg_hash_get(&core->by_cid, cid, 0);
    if (!c)
        return CG_ERR_NOT_FOUND;
    if (core->dev[c->dev].ncontainers > 1)
        return CG_ERR_BUSY;
    cg_exclusive_attach(core, c, true);
    return CG_OK;
}

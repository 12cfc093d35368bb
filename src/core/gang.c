/* gang.c — a container on several devices: one reserved member per device, created all or
 * nothing (core.h, "containers on several devices", has the safety argument).
 *
 * Every device is asked first (a trial creation that keeps nothing), so a gang that cannot be
 * admitted leaves no trace and emits nothing; only the core's own allocator failing part way
 * makes members that have to be removed again. */
#include "internal.h"

static bool devices_valid(const cg_core *core, const unsigned *devices, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        if (devices[i] >= core->ndev)
            return false;
        for (unsigned j = 0; j < i; j++)
            if (devices[j] == devices[i])
                return false;
    }
    return true;
}

cg_status cg_gang_create(cg_core *core, const cg_container_spec *spec, unsigned n,
                         const unsigned *devices, cg_time now, cg_cid *cids_out)
{
    if (!spec || !cids_out || n == 0 || n > CG_MAX_DEVICES || spec->limit == 0 ||
        spec->priority > CG_PRIORITY_MAX || spec->util_pct > CG_COMPUTE_PCT_MAX)
        return CG_ERR_INVALID;
    unsigned chosen[CG_MAX_DEVICES];
    if (n > core->ndev)
        return CG_ERR_NO_DEVICE;
    if (!devices) {
        /* Where the GPUs talk fastest, among those with the limit free now (topology.c). */
        cg_status st = cg_place_devices(core, spec, n, chosen);
        if (st != CG_OK)
            return st == CG_ERR_NO_DEVICE ? CG_ERR_NOT_FREE : st;
        devices = chosen;
    }
    if (!devices_valid(core, devices, n))
        return CG_ERR_NO_DEVICE;
    cg_container_spec member = *spec;
    for (unsigned i = 0; i < n; i++) {
        member.device = (int)devices[i];
        cg_status st = cg_create(core, &member, now, CG_CREATE_TRIAL, 0, NULL);
        if (st != CG_OK)
            return st;
    }
    for (unsigned i = 0; i < n; i++) {
        member.device = (int)devices[i];
        cg_status st = cg_create(core, &member, now, CG_CREATE_RESERVE, 0, &cids_out[i]);
        if (st != CG_OK) {
            /* Only the allocator can fail here: every device said yes a moment ago and the
             * members sit on distinct devices, so none changed another's answer. */
            while (i-- > 0)
                cg_container_remove(core, cids_out[i], now);
            return st;
        }
    }
    for (unsigned i = 0; i < n; i++)
        cg_find(core, cids_out[i])->gang = cids_out[0];
    return CG_OK;
}

cg_status cg_gang_restore(cg_core *core, const cg_cid *cids, unsigned n)
{
    if (!cids || n == 0 || n > CG_MAX_DEVICES)
        return CG_ERR_INVALID;
    for (unsigned i = 0; i < n; i++) {
        const cg_container *c = cg_find(core, cids[i]);
        if (!c || c->gang != CG_CID_NONE || c->assigned != c->limit || c->swap != CG_RESIDENT ||
            c->waiting)
            return CG_ERR_INVALID;
        for (unsigned j = 0; j < i; j++)
            if (cids[j] == cids[i] || cg_find(core, cids[j])->dev == c->dev)
                return CG_ERR_INVALID;
    }
    for (unsigned i = 0; i < n; i++) {
        cg_container *c = cg_find(core, cids[i]);
        c->gang = cids[0];
        c->reserved = true;
        c->no_swap = true;
    }
    return CG_OK;
}

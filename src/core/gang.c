/* gang.c — a container on several devices: one reserved member per device, created all or
 * nothing (core.h, "containers on several devices", has the safety argument).
 *
 * Every device is asked first (a trial creation that keeps nothing), so a gang that cannot be
 * admitted leaves no trace and emits nothing; only the core's own allocator failing part way
 * makes members that have to be removed again.
 *
 * A gang that only lacks free memory now may wait instead (cg_gang_create_or_queue): its
 * members are created QUEUED, with nothing assigned, and the gang is admitted later all at once.
 * Follow one: members on devices 0 and 1, A = 0; a process asks on device 0: the request waits
 * (CG_WHY_GANG); memory returns on device 1, reschedule(1) runs cg_gang_admit_queued before the
 * device's resume round: device 0 still lacks the limit, nothing changes; memory returns on
 * device 0, reschedule(0): both devices can take L safely now, so both members get A = L in
 * one step (no event in between), become reserved, and their waiting requests are granted.
 * Why it cannot deadlock (docs/SCHEDULING.md, "Several GPUs that wait"): a queued member holds
 * nothing, so it goes last in its device's safe order and never makes a device unsafe, and no
 * waiter holds what another waiter needs. */
#include "internal.h"
#include "safety.h"

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

/* The n queued members of the gang whose first member is `gang`, in creation order. */
static unsigned members_of(cg_core *core, cg_cid gang, cg_container **out)
{
    unsigned n = 0;
    for (cg_container *c = core->head; c && n < CG_MAX_DEVICES; c = c->next)
        if (c->gang == gang)
            out[n++] = c;
    return n;
}

/* Whether member m can take its whole limit on its device now: free, safe, within its tenant's
 * ceiling. Members sit on distinct devices, so one's answer does not change another's. */
static bool can_take_whole(cg_core *core, cg_container *m)
{
    cg_device *d = &core->dev[m->dev];
    return dev_free(d) >= m->limit && cg_fair_cap(core, m, m->limit) == m->limit &&
           cg_safety_largest(d, m, m->limit) == m->limit;
}

/* Admits a queued gang if every member can take its whole limit now: all at once, or not. */
static bool admit(cg_core *core, cg_cid gang, cg_time now)
{
    cg_container *m[CG_MAX_DEVICES];
    unsigned n = members_of(core, gang, m);
    for (unsigned i = 0; i < n; i++)
        if (!m[i]->queued || !can_take_whole(core, m[i]))
            return false;
    for (unsigned i = 0; i < n; i++) {
        m[i]->queued = false;
        m[i]->reserved = true;
        core->nqueued--;
        cg_assign_more(core, m[i], m[i]->limit, CG_WHY_POLICY, now);
    }
    for (unsigned i = 0; i < n; i++) {
        m[i]->served_at = now;
        cg_drain_own(core, m[i], CG_WHY_POLICY, now);   /* its waiting requests fit now */
    }
    return true;
}

void cg_gang_admit_queued(cg_core *core, unsigned dev, cg_time now)
{
    if (core->nqueued == 0)
        return;   /* the common case: one counter, not a walk of every container */
    for (cg_container *c = core->head; c; c = c->next) {
        if (!c->queued || c->cid != c->gang)
            continue;   /* one try per gang, at its first member */
        bool here = false;
        cg_container *m[CG_MAX_DEVICES];
        unsigned n = members_of(core, c->gang, m);
        for (unsigned i = 0; i < n && !here; i++)
            here = m[i]->dev == dev;
        if (here)
            admit(core, c->gang, now);
    }
}

/* The n devices that could hold spec's limit with the most free memory now (ties: lower index),
 * ascending; false when fewer than n could ever hold it. */
static bool queue_devices(const cg_core *core, const cg_container_spec *spec, unsigned n,
                          unsigned *out)
{
    unsigned hard = spec->compute_mode == CG_COMPUTE_HARD ? spec->compute_pct : 0, m = 0;
    unsigned pick[CG_MAX_DEVICES];
    for (unsigned i = 0; i < core->ndev; i++) {
        const cg_device *d = &core->dev[i];
        if (d->capacity < spec->limit || !dev_admits(d, hard) || d->exclusive != CG_CID_NONE)
            continue;
        unsigned at = m++;
        while (at > 0 && dev_free(&core->dev[pick[at - 1]]) < dev_free(d)) {
            pick[at] = pick[at - 1];
            at--;
        }
        pick[at] = i;
    }
    if (m < n)
        return false;
    for (unsigned i = 0; i < n; i++) { /* the first n, ascending */
        unsigned v = pick[i], j = i;
        while (j > 0 && out[j - 1] > v) {
            out[j] = out[j - 1];
            j--;
        }
        out[j] = v;
    }
    return true;
}

cg_status cg_gang_create_or_queue(cg_core *core, const cg_container_spec *spec, unsigned n,
                                  const unsigned *devices, cg_time now, cg_cid *cids_out,
                                  bool *queued)
{
    if (queued)
        *queued = false;
    cg_status st = cg_gang_create(core, spec, n, devices, now, cids_out);
    if (st != CG_ERR_NOT_FREE || spec->exclusive)
        return st;
    unsigned chosen[CG_MAX_DEVICES];
    if (!devices) {
        if (!queue_devices(core, spec, n, chosen))
            return CG_ERR_NOT_FREE;
        devices = chosen;
    }
    if (!devices_valid(core, devices, n))
        return CG_ERR_NO_DEVICE;
    cg_container_spec member = *spec;
    for (unsigned i = 0; i < n; i++) {
        member.device = (int)devices[i];
        st = cg_create(core, &member, now, CG_CREATE_QUEUE, 0, &cids_out[i]);
        if (st != CG_OK) {
            /* cg_gang_create's trial passed every other rule; only the allocator fails here. */
            while (i-- > 0)
                cg_container_remove(core, cids_out[i], now);
            return st;
        }
    }
    for (unsigned i = 0; i < n; i++)
        cg_find(core, cids_out[i])->gang = cids_out[0];
    if (queued)
        *queued = true;
    /* Nothing freed in between, but a device's safety may have allowed it already where only
     * the tenants' shares differed: try once. */
    admit(core, cids_out[0], now);
    if (queued)
        *queued = cg_find(core, cids_out[0])->queued;
    return CG_OK;
}

unsigned cg_gang_expire(cg_core *core, cg_time now, cg_time max_wait, cg_cid *expired_out,
                        unsigned cap, cg_time *next_due)
{
    unsigned given_up = 0;
    cg_time due_min = 0;
    if (core->nqueued == 0 || max_wait == 0) {
        if (next_due)
            *next_due = core->nqueued && max_wait ? now : 0;
        return 0;
    }
    for (cg_container *c = core->head; c; c = c->next) {
        if (!c->queued || c->cid != c->gang)
            continue;   /* once per gang, at its first member (created first: the oldest) */
        cg_time due = c->created_at + max_wait;
        if (due > now) {
            if (!due_min || due < due_min)
                due_min = due;
            continue;
        }
        cg_container *m[CG_MAX_DEVICES];
        unsigned n = members_of(core, c->gang, m);
        /* Out of the queue first, so that no rejection below can admit it meanwhile. */
        for (unsigned i = 0; i < n; i++) {
            m[i]->queued = false;
            m[i]->expired = true;
            core->nqueued--;
        }
        for (unsigned i = 0; i < n; i++)
            cg_reject_pending(core, m[i], CG_WHY_GANG_EXPIRED, now);
        if (given_up < cap && expired_out)
            expired_out[given_up] = c->gang;
        given_up++;
    }
    if (next_due)
        *next_due = due_min;
    return given_up;
}

cg_status cg_gang_restore(cg_core *core, const cg_cid *cids, unsigned n)
{
    if (!cids || n == 0 || n > CG_MAX_DEVICES)
        return CG_ERR_INVALID;
    unsigned nqueued = 0;
    for (unsigned i = 0; i < n; i++) {
        const cg_container *c = cg_find(core, cids[i]);
        bool whole = c && c->assigned == c->limit, none = c && c->assigned == 0 && c->used == 0;
        if (!c || c->gang != CG_CID_NONE || !(whole || none) || c->swap != CG_RESIDENT ||
            c->waiting)
            return CG_ERR_INVALID;
        nqueued += none && !whole;
        for (unsigned j = 0; j < i; j++)
            if (cids[j] == cids[i] || cg_find(core, cids[j])->dev == c->dev)
                return CG_ERR_INVALID;
    }
    if (nqueued != 0 && nqueued != n)
        return CG_ERR_INVALID;   /* all or nothing, as it was admitted */
    for (unsigned i = 0; i < n; i++) {
        cg_container *c = cg_find(core, cids[i]);
        c->gang = cids[0];
        c->reserved = nqueued == 0;
        c->queued = nqueued != 0;
        c->no_swap = true;
    }
    core->nqueued += nqueued;
    if (nqueued)
        admit(core, cids[0], 0);
    return CG_OK;
}

/* gang.c — containers on several GPUs in the daemon: one leader (the container users see) and a
 * member container per further GPU, admitted together by the core (cg_gang_create: each member
 * holds its whole limit from the start; core.h has why), changed together and removed together.
 *
 * Follow `convgpu run --gpus 2 --gpu-memory 4GiB`: the API asks for 2 GPUs; the core picks them
 * (or takes the ones named) and reserves 4 GiB on each (or, when they lack it now, queues the
 * container holding nothing, and reserves on every GPU at once when they all have it: its
 * processes' requests wait until then, as a single GPU's would); the leader is created on the first with
 * the usual socket container.sock, member 1 on the second with container.1.sock in the leader's
 * directory; CUDA_VISIBLE_DEVICES lists both GPUs in that order, so CUDA ordinal k is member k,
 * and the interposer charges an allocation on ordinal k through socket k (WELCOME says how many
 * there are). Each member is stored as its own row naming its leader, so a restart restores them
 * one by one like any container and links them again here (gang_relink). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "gang.h"
#include "log.h"
#include "size.h"

static int refusal(struct daemon *d, const cg_container_spec *spec, unsigned n, cg_status st,
                   char *err, size_t errlen)
{
    char b[CG_SIZE_BUFLEN];
    cg_format_size(spec->limit, b, sizeof b);
    switch (st) {
    case CG_ERR_NOT_FREE:
        snprintf(err, errlen, "%u GPUs with %s free each are not available now (a container on "
                              "several GPUs takes its whole limit on each when it starts)", n, b);
        return -EBUSY;
    case CG_ERR_NO_DEVICE:
        snprintf(err, errlen, "%u GPUs asked for: this node has %u%s", n, d->ndevices,
                 n <= d->ndevices ? ", or a GPU was named twice or does not exist" : "");
        return -ENODEV;
    case CG_ERR_TOO_LARGE:
        snprintf(err, errlen, "limit %s per GPU is above the GPUs' capacity", b);
        return -EINVAL;
    case CG_ERR_NO_COMPUTE:
        snprintf(err, errlen, "hard compute share %u%% does not fit on %u GPUs: the hard shares "
                              "on one GPU sum to at most 100%%", spec->compute_pct, n);
        return -EBUSY;
    case CG_ERR_BUSY:
    case CG_ERR_EXCLUSIVE:
        snprintf(err, errlen, "%u GPUs free of exclusive containers%s are not available now", n,
                 spec->exclusive ? " and of any other container" : "");
        return -EBUSY;
    case CG_ERR_NOMEM:
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    default:
        snprintf(err, errlen, "cannot create the container: %s", cg_status_str(st));
        return -EINVAL;
    }
}

int gang_create(struct daemon *d, const char *id, const char *name, const char *profile_key,
                const cg_container_spec *spec, unsigned n, const unsigned *devices, uid_t uid,
                gid_t gid, pid_t owner, bool auto_remove, struct container **out, char *err,
                size_t errlen)
{
    if (n == 0 || n > CG_MAX_DEVICES) {
        snprintf(err, errlen, "gpus must be 1-%u", d->ndevices);
        return -EINVAL;
    }
    if (n == 1 && !devices)
        return container_create(d, id, name, profile_key, spec, uid, gid, owner, auto_remove,
                                NULL, NULL, out, err, errlen);
    if (n > d->ndevices) {
        snprintf(err, errlen, "%u GPUs asked for: this node has %u", n, d->ndevices);
        return -ENODEV;
    }
    if (spec->limit == 0 && !spec->exclusive) {
        snprintf(err, errlen, "gpu memory limit must be greater than zero");
        return -EINVAL;
    }
    int rc = container_names_check(d, id, name, err, errlen);
    if (rc != 0)
        return rc;
    cg_cid cids[CG_MAX_DEVICES];
    struct container **members = calloc(n, sizeof *members);
    if (!members) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    cg_container_spec member_spec = *spec;
    member_spec.no_swap = true;
    /* One that lacks free memory now waits, queued, holding nothing, and is admitted on every
     * GPU at once when they all have room (cg_gang_create_or_queue); its processes' requests
     * wait until then. */
    bool queued = false;
    cg_status st = cg_gang_create_or_queue(d->core, &member_spec, n, devices, loop_now_ns(), cids,
                                           &queued);
    if (st != CG_OK) {
        free(members);
        return refusal(d, spec, n, st, err, errlen);
    }
    struct container_member m = {.leader = NULL, .index = 0, .cid = cids[0]};
    cg_container_info ci;
    cg_container_get(d->core, cids[0], loop_now_ns(), &ci);
    member_spec.device = (int)ci.device;
    rc = container_create(d, id, name, profile_key, &member_spec, uid, gid, owner, auto_remove,
                          NULL, &m, &members[0], err, errlen);
    if (rc != 0) { /* container_create let go of member 0; the others are the core's alone */
        for (unsigned k = 1; k < n; k++)
            cg_container_remove(d->core, cids[k], loop_now_ns());
        free(members);
        return rc;
    }
    struct container *leader = members[0];
    leader->gang.members = members;
    for (unsigned k = 1; k < n; k++) {
        cg_container_get(d->core, cids[k], loop_now_ns(), &ci);
        member_spec.device = (int)ci.device;
        m = (struct container_member){.leader = leader, .index = k, .cid = cids[k]};
        rc = container_create(d, NULL, "", "", &member_spec, uid, gid, 0, false, NULL, &m,
                              &members[k], err, errlen);
        if (rc != 0) {
            for (unsigned j = k + 1; j < n; j++)
                cg_container_remove(d->core, cids[j], loop_now_ns());
            leader->gang.nmembers = k; /* the removal below takes the members made so far */
            container_remove(d, leader, "its gang could not be completed");
            return rc;
        }
        leader->gang.nmembers = k + 1;
    }
    if (queued) {
        char b[CG_SIZE_BUFLEN];
        log_info("container %s: queued for %u GPUs with %s free each; admitted on all of them at "
                 "once when they have it",
                 leader->ident.id, n, cg_format_size(spec->limit, b, sizeof b));
    }
    *out = leader;
    return 0;
}

int gang_tick(struct daemon *d)
{
    if (!d->opt.gang_wait_max)
        return -1;
    uint64_t now = loop_now_ns(), bound = (uint64_t)d->opt.gang_wait_max * 1000000000ull;
    cg_cid gone[16];
    cg_time due = 0;
    unsigned n = cg_gang_expire(d->core, now, bound, gone, 16, &due);
    if (n)
        decide_flush(d); /* the refusals' replies go out now, not at the next decision */
    for (unsigned i = 0; i < n && i < 16; i++) {
        struct container *c = container_by_cid(d, gone[i]);
        cg_container_info ci = {0};
        char b[CG_SIZE_BUFLEN];
        if (c && cg_container_get(d->core, gone[i], now, &ci) == CG_OK)
            log_warn("container %s: its %u GPUs did not all have %s free within %u s "
                     "(gang-wait-max): its waiting allocations are refused, it reserves "
                     "nothing and will not be admitted; remove it and create it again to wait "
                     "anew",
                     c->ident.id, c->gang.nmembers ? c->gang.nmembers : 1,
                     cg_format_size(ci.limit, b, sizeof b), d->opt.gang_wait_max);
    }
    if (n > 16)
        log_warn("%u more gangs given up after waiting (gang-wait-max)", n - 16);
    if (!due)
        return -1;
    return due <= now ? 0 : (int)((due - now + 999999u) / 1000000u);
}

int gang_restore_member(struct daemon *d, struct container *c, const char *leader_id,
                        unsigned index)
{
    struct container *leader = container_find(d, leader_id);
    if (!leader || leader->gang.leader || index == 0 || index >= CG_MAX_DEVICES)
        return -1;
    if (!leader->gang.members) {
        leader->gang.members = calloc(CG_MAX_DEVICES, sizeof *leader->gang.members);
        if (!leader->gang.members)
            return -1;
        leader->gang.members[0] = leader;
    }
    if (leader->gang.members[index])
        return -1;
    leader->gang.members[index] = c;
    c->gang.leader = leader;
    c->gang.member_index = index;
    return 0;
}

void gang_relink(struct daemon *d)
{
    for (struct container *c = d->containers; c; c = c->next) {
        if (c->gang.leader || !c->gang.members)
            continue;
        /* Members lost with their rows leave gaps: the rest close up, in their order. */
        unsigned n = 0;
        cg_cid cids[CG_MAX_DEVICES];
        for (unsigned k = 0; k < CG_MAX_DEVICES; k++)
            if (c->gang.members[k]) {
                c->gang.members[n] = c->gang.members[k];
                cids[n++] = c->gang.members[k]->cid;
            }
        c->gang.nmembers = n;
        if (n < 2)
            continue;
        if (cg_gang_restore(d->core, cids, n) != CG_OK)
            log_error("container %s: its %u GPUs could not be linked again (an edited state.db, "
                      "or a record that lost an assignment): they are scheduled one by one",
                      c->ident.id, n);
        else
            log_info("container %s: restored on %u GPUs", c->ident.id, n);
    }
}

/* The change each member takes, and back again when a later one refuses. */
int gang_update(struct daemon *d, struct container *c, const struct container_change *ch,
                bool *pending, char *err, size_t errlen)
{
    if (c->gang.nmembers < 2)
        return container_update(d, c, ch, pending, err, errlen);
    struct container_change undo[CG_MAX_DEVICES];
    for (unsigned k = 0; k < c->gang.nmembers; k++) {
        struct container *m = c->gang.members[k];
        cg_container_info ci = {0};
        cg_container_get(d->core, m->cid, loop_now_ns(), &ci);
        undo[k] = (struct container_change){
            .has_limit = ch->has_limit, .limit = ci.limit,
            .has_compute = ch->has_compute, .compute_pct = ci.compute_pct,
            .compute_mode = ci.compute_mode,
            .has_priority = ch->has_priority, .priority = ci.priority};
        bool member_pending = false;
        int rc = container_update(d, m, ch, &member_pending, err, errlen);
        if (rc == 0 && !member_pending)
            continue;
        if (rc == 0) /* a member's raise never waits (core.h); refuse one that would */
            snprintf(err, errlen, "the raise is not free now on GPU %u", m->device);
        else {
            size_t len = strlen(err);
            snprintf(err + len, errlen - len, " (GPU %u of the container's %u)", m->device,
                     c->gang.nmembers);
        }
        for (unsigned j = 0; j <= k; j++) {
            char ignored[256];
            bool p2;
            if (j < k || rc == 0)
                container_update(d, c->gang.members[j], &undo[j], &p2, ignored, sizeof ignored);
        }
        return rc ? rc : -EBUSY;
    }
    if (pending)
        *pending = false;
    return 0;
}

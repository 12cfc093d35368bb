/* gang.h — containers on several GPUs (gang.c): creation, changes and restart. */
#ifndef CONVGPUD_GANG_H
#define CONVGPUD_GANG_H

#include <stdbool.h>
#include <sys/types.h>

#include "core.h"

struct daemon;
struct container;
struct container_change;

/* A container's place in a gang (struct container's `gang`). The container the user sees is the
 * LEADER, its member 0; member k (1..n-1) is a container of its own on another device, with its
 * own cid, record, ledger and socket (container.<k>.sock in the leader's directory), created,
 * changed and removed only through the leader. A container on one GPU has nmembers 1 and
 * members[0] itself. */
struct gang_membership {
    struct container *leader;          /* NULL for a leader */
    unsigned member_index;             /* k; 0 for a leader */
    unsigned nmembers;                 /* a leader's: 1..CG_MAX_DEVICES */
    struct container **members;        /* a leader's, nmembers of them, [0] = itself */
};

/* Creates a container on n GPUs (`devices`: the ones named, in order; NULL: the core chooses),
 * with spec's limit and compute share on each; n == 1 without devices is container_create.
 * Returns 0 with *out the leader, or container_create's errors plus -EBUSY when the memory is
 * not free on n GPUs now and -ENODEV when the node has fewer GPUs (or one is named twice). */
int gang_create(struct daemon *d, const char *id, const char *name, const char *profile_key,
                const cg_container_spec *spec, unsigned n, const unsigned *devices, uid_t uid,
                gid_t gid, pid_t owner, bool auto_remove, struct container **out, char *err,
                size_t errlen);
/* Applies a change to every member, or to none: a member that refuses undoes the others. */
int gang_update(struct daemon *d, struct container *c, const struct container_change *ch,
                bool *pending, char *err, size_t errlen);
/* Restart: container c, just restored from a row naming leader_id and index, joins its leader
 * (restored before it: rows come back in creation order). -1 when there is no such leader or
 * the place is taken; the caller then removes c. */
int gang_restore_member(struct daemon *d, struct container *c, const char *leader_id,
                        unsigned index);
/* Gives up the gangs that have waited queued longer than --gang-wait-max (cg_gang_expire):
 * their waiting allocations are refused, they hold nothing and are never admitted; each is
 * logged with the reason and shown as state "expired" until it is removed. Returns the
 * milliseconds until the next gang is due, or -1 (none queued, or no bound). */
int gang_tick(struct daemon *d);
/* Restart, after every row: links each restored gang in the core again. */
void gang_relink(struct daemon *d);

#endif

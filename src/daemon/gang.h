/* gang.h — containers on several GPUs (gang.c): creation, changes and restart. */
#ifndef CONVGPUD_GANG_H
#define CONVGPUD_GANG_H

#include <stdbool.h>
#include <sys/types.h>

#include "core.h"

struct daemon;
struct container;
struct container_change;

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

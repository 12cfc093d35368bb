/* tenant.h — the daemon's tenants: names, the core's tenant ids, weights that survive restarts.
 *
 * Follow one container: its creator asks the control API for it; the tenant is the name the
 * request gives (only root or the daemon's user may give one other than its own user name), or
 * else the user name of the container's owner (uid-N when that uid has no name). tenant_intern
 * turns the name into the core's id (cg_container_spec.tenant); the name is stored with the
 * container (state.db), so a restart puts it back in the same tenant. Weights are set through
 * PUT /v1/tenants/NAME (root or the daemon's user), stored first as the setting
 * "tenant_weight/NAME", then given to the core (cg_tenant_set_weight), which moves the
 * fair-share ceilings (docs/SCHEDULING.md, "Tenants and fair share").
 *
 * Names: 1-32 of [A-Za-z0-9_.-], not starting with '.' or '-'. Ids are the daemon's own,
 * handed out from 1 in order of first sight and never reused while it runs; they are not stored.
 */
#ifndef CONVGPUD_TENANT_H
#define CONVGPUD_TENANT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core.h"

#define TENANT_NAME_MAX 32

struct daemon;

struct tenant {
    char name[TENANT_NAME_MAX + 1];
    uint32_t id;
    unsigned weight;
    /* Allowances an operator gave (PUT /v1/tenants/NAME), for callers bound per user: the
     * highest priority they may give the tenant's containers (-1: the node's
     * user-max-priority) and whether they may make them exclusive. */
    int max_priority;
    bool may_exclusive;
    cg_tenant_profile adaptive;    /* what the adaptive fair share was last given (runs 0: none) */
};

struct tenants {
    struct tenant *v;
    size_t n, cap;
};

bool tenant_name_valid(const char *name);
/* The tenant of a user: its name when valid as a tenant name, else "uid-N". */
void tenant_of_uid(uid_t uid, char out[TENANT_NAME_MAX + 1]);
const struct tenant *tenant_find(const struct daemon *d, const char *name);
const struct tenant *tenant_by_id(const struct daemon *d, uint32_t id);
/* The tenant's id, adding it (weight 1) when new. -EINVAL (bad name) or -ENOMEM. */
int tenant_intern(struct daemon *d, const char *name, uint32_t *id);
/* A change of a tenant (PUT /v1/tenants/NAME, parsed by api_parse_tenant): any of its
 * fair-share weight and its allowances (what its own users may ask for beyond the node's
 * defaults: docs/SECURITY.md). */
struct tenant_request {
    bool has_weight;
    unsigned weight;
    bool has_max_priority;
    int max_priority;      /* 0..9, or -1 (null): the node's user-max-priority again */
    bool has_exclusive;
    bool exclusive;        /* its users may create exclusive containers */
};
/* Validates, stores (every field in one transaction), applies what req has. 0, or -EINVAL (bad
 * name or weight), -ENOMEM, or the store's -ENOSPC/-EIO; nothing changed on error; err says
 * why. */
int tenant_set(struct daemon *d, const char *name, const struct tenant_request *req, char *err,
               size_t errlen);
/* The highest priority a caller bound per user may give a container of tenant `name`. */
unsigned tenant_priority_ceiling(const struct daemon *d, const char *name);
/* Whether such a caller may make a container of tenant `name` exclusive. */
bool tenant_may_exclusive(const struct daemon *d, const char *name);
/* Brings back the stored weights at start. */
void tenant_load(struct daemon *d);
void tenant_free(struct daemon *d);

#endif

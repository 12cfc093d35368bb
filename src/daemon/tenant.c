/* tenant.c — tenant names, ids and stored weights (tenant.h). */
#include "tenant.h"

#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "names.h"
#include "daemon.h"
#include "log.h"

#define WEIGHT_KEY "tenant_weight/"
#define MAX_PRIORITY_KEY "tenant_max_priority/"
#define EXCLUSIVE_KEY "tenant_exclusive/"

bool tenant_name_valid(const char *s) { return name_valid_tenant(s); }

void tenant_of_uid(uid_t uid, char out[TENANT_NAME_MAX + 1])
{
    struct passwd pw, *pwp = NULL;
    char buf[4096];
    if (getpwuid_r(uid, &pw, buf, sizeof buf, &pwp) == 0 && pwp && tenant_name_valid(pw.pw_name))
        snprintf(out, TENANT_NAME_MAX + 1, "%s", pw.pw_name);
    else
        snprintf(out, TENANT_NAME_MAX + 1, "uid-%u", (unsigned)uid);
}

const struct tenant *tenant_find(const struct daemon *d, const char *name)
{
    for (size_t i = 0; i < d->tenants.n; i++)
        if (strcmp(d->tenants.v[i].name, name) == 0)
            return &d->tenants.v[i];
    return NULL;
}

const struct tenant *tenant_by_id(const struct daemon *d, uint32_t id)
{
    /* Ids are handed out in order from 1: the id is the index + 1. */
    return id >= 1 && id <= d->tenants.n ? &d->tenants.v[id - 1] : NULL;
}

int tenant_intern(struct daemon *d, const char *name, uint32_t *id)
{
    if (!tenant_name_valid(name))
        return -EINVAL;
    const struct tenant *t = tenant_find(d, name);
    if (!t) {
        struct tenants *ts = &d->tenants;
        if (ts->n == ts->cap) {
            size_t cap = ts->cap ? ts->cap * 2 : 16;
            struct tenant *v = realloc(ts->v, cap * sizeof *v);
            if (!v)
                return -ENOMEM;
            ts->v = v;
            ts->cap = cap;
        }
        struct tenant *nt = &ts->v[ts->n];
        *nt = (struct tenant){.id = (uint32_t)ts->n + 1, .weight = 1, .max_priority = -1};
        snprintf(nt->name, sizeof nt->name, "%s", name);
        ts->n++;
        t = nt;
    }
    *id = t->id;
    return 0;
}

/* Hands the weight to the core: quotas frozen first, so that containers it resumes are
 * decided on exact use (as a policy change is, api.c). */
static void apply_weight(struct daemon *d, uint32_t id, unsigned weight)
{
    for (struct container *c = d->containers; c; c = c->next)
        decide_freeze(d, c);
    cg_tenant_set_weight(d->core, id, weight, loop_now_ns());
    for (struct container *c = d->containers; c; c = c->next)
        c->decide.dirty = true;
    decide_flush(d);
}

int tenant_set(struct daemon *d, const char *name, const struct tenant_request *req, char *err,
               size_t errlen)
{
    if (!tenant_name_valid(name)) {
        snprintf(err, errlen, "invalid tenant name (1-%d of [A-Za-z0-9_.-], not starting with "
                              "'.' or '-')", TENANT_NAME_MAX);
        return -EINVAL;
    }
    if (req->has_weight && (req->weight < 1 || req->weight > CG_TENANT_WEIGHT_MAX)) {
        snprintf(err, errlen, "weight %u: a tenant's weight is a whole number from 1 to %d",
                 req->weight, CG_TENANT_WEIGHT_MAX);
        return -EINVAL;
    }
    if (req->has_max_priority && (req->max_priority < -1 || req->max_priority > (int)CG_PRIORITY_MAX)) {
        snprintf(err, errlen, "max_priority %d: 0 to %d, or none", req->max_priority,
                 CG_PRIORITY_MAX);
        return -EINVAL;
    }
    bool known = tenant_find(d, name) != NULL;
    uint32_t id;
    if (tenant_intern(d, name, &id) != 0) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    if (d->store) {
        char keys[3][sizeof MAX_PRIORITY_KEY + TENANT_NAME_MAX], vals[3][24];
        const char *kp[3], *vp[3];
        size_t n = 0;
        if (req->has_weight) {
            snprintf(keys[n], sizeof keys[n], WEIGHT_KEY "%s", name);
            snprintf(vals[n], sizeof vals[n], "%u", req->weight);
            n++;
        }
        if (req->has_max_priority) {
            snprintf(keys[n], sizeof keys[n], MAX_PRIORITY_KEY "%s", name);
            snprintf(vals[n], sizeof vals[n], "%d", req->max_priority);
            n++;
        }
        if (req->has_exclusive) {
            snprintf(keys[n], sizeof keys[n], EXCLUSIVE_KEY "%s", name);
            snprintf(vals[n], sizeof vals[n], "%s", req->exclusive ? "yes" : "no");
            n++;
        }
        for (size_t i = 0; i < n; i++) {
            kp[i] = keys[i];
            vp[i] = vals[i];
        }
        int rc = n ? store_set_many(d->store, kp, vp, n) : 0;
        if (rc != 0) {
            /* A tenant added just now for this change is not kept: nothing changed. */
            if (!known)
                d->tenants.n--;
            snprintf(err, errlen, "tenant not changed: the state could not be saved (%s)",
                     store_error(d->store));
            return rc;
        }
    }
    struct tenant *t = &d->tenants.v[id - 1];
    if (req->has_max_priority)
        t->max_priority = req->max_priority;
    if (req->has_exclusive)
        t->may_exclusive = req->exclusive;
    if (req->has_weight) {
        t->weight = req->weight;
        apply_weight(d, id, req->weight);
    }
    log_info("tenant %s: weight %u, max priority %d, exclusive %s", name, t->weight,
             t->max_priority, t->may_exclusive ? "allowed" : "not allowed");
    return 0;
}

unsigned tenant_priority_ceiling(const struct daemon *d, const char *name)
{
    const struct tenant *t = tenant_find(d, name);
    return t && t->max_priority >= 0 ? (unsigned)t->max_priority : d->opt.user_max_priority;
}

bool tenant_may_exclusive(const struct daemon *d, const char *name)
{
    const struct tenant *t = tenant_find(d, name);
    return t && t->may_exclusive;
}

/* One stored setting of a tenant (prefix + name = value); an unreadable one is ignored with a
 * warning, as a weight always was. */
static int load_one(void *ctx, const char *key, const char *value)
{
    struct daemon *d = ctx;
    bool weight = strncmp(key, WEIGHT_KEY, strlen(WEIGHT_KEY)) == 0;
    bool prio = strncmp(key, MAX_PRIORITY_KEY, strlen(MAX_PRIORITY_KEY)) == 0;
    const char *name = key + strlen(weight ? WEIGHT_KEY : prio ? MAX_PRIORITY_KEY : EXCLUSIVE_KEY);
    char *end;
    errno = 0;
    long long v = strtoll(value, &end, 10);
    uint32_t id;
    bool ok = weight ? !errno && !*end && v >= 1 && v <= CG_TENANT_WEIGHT_MAX
              : prio ? !errno && !*end && v >= -1 && v <= CG_PRIORITY_MAX
                     : strcmp(value, "yes") == 0 || strcmp(value, "no") == 0;
    if (!ok || tenant_intern(d, name, &id) != 0) {
        log_warn("store: tenant setting %s = '%s' unreadable; ignored", key, value);
        return 0;
    }
    struct tenant *t = &d->tenants.v[id - 1];
    if (weight) {
        t->weight = (unsigned)v;
        cg_tenant_set_weight(d->core, id, (unsigned)v, loop_now_ns());
    } else if (prio) {
        t->max_priority = (int)v;
    } else {
        t->may_exclusive = strcmp(value, "yes") == 0;
    }
    return 0;
}

void tenant_load(struct daemon *d)
{
    static const char *const prefixes[] = {WEIGHT_KEY, MAX_PRIORITY_KEY, EXCLUSIVE_KEY};
    for (size_t i = 0; d->store && i < 3; i++)
        if (store_each_setting(d->store, prefixes[i], load_one, d) != 0)
            log_warn("store: cannot read the tenants' settings: %s", store_error(d->store));
}

void tenant_free(struct daemon *d)
{
    free(d->tenants.v);
    d->tenants = (struct tenants){0};
}

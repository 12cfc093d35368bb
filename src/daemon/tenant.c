/* tenant.c — tenant names, ids and stored weights (tenant.h). */
#include "tenant.h"

#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_parse.h"
#include "daemon.h"
#include "log.h"

#define WEIGHT_KEY "tenant_weight/"

bool tenant_name_valid(const char *s) { return api_valid_tenant(s); }

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
        *nt = (struct tenant){.id = (uint32_t)ts->n + 1, .weight = 1};
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
        container_freeze_sync(d, c);
    cg_tenant_set_weight(d->core, id, weight, loop_now_ns());
    for (struct container *c = d->containers; c; c = c->next)
        c->dirty = true;
    decide_flush(d);
}

int tenant_set_weight(struct daemon *d, const char *name, long long weight, char *err,
                      size_t errlen)
{
    if (!tenant_name_valid(name)) {
        snprintf(err, errlen, "invalid tenant name (1-%d of [A-Za-z0-9_.-], not starting with "
                              "'.' or '-')", TENANT_NAME_MAX);
        return -EINVAL;
    }
    if (weight < 1 || weight > CG_TENANT_WEIGHT_MAX) {
        snprintf(err, errlen, "weight %lld: a tenant's weight is a whole number from 1 to %d",
                 weight, CG_TENANT_WEIGHT_MAX);
        return -EINVAL;
    }
    bool known = tenant_find(d, name) != NULL;
    uint32_t id;
    if (tenant_intern(d, name, &id) != 0) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    if (d->store) {
        char key[sizeof WEIGHT_KEY + TENANT_NAME_MAX], val[24];
        snprintf(key, sizeof key, WEIGHT_KEY "%s", name);
        snprintf(val, sizeof val, "%lld", weight);
        int rc = store_set(d->store, key, val);
        if (rc != 0) {
            /* A tenant added just now for this change is not kept: nothing changed. */
            if (!known)
                d->tenants.n--;
            snprintf(err, errlen, "weight not changed: the state could not be saved (%s)",
                     store_error(d->store));
            return rc;
        }
    }
    d->tenants.v[id - 1].weight = (unsigned)weight;
    apply_weight(d, id, (unsigned)weight);
    log_info("tenant %s: weight %lld", name, weight);
    return 0;
}

static int load_one(void *ctx, const char *key, const char *value)
{
    struct daemon *d = ctx;
    const char *name = key + strlen(WEIGHT_KEY);
    char *end;
    errno = 0;
    long long w = strtoll(value, &end, 10);
    uint32_t id;
    if (errno || *end || w < 1 || w > CG_TENANT_WEIGHT_MAX || tenant_intern(d, name, &id) != 0) {
        log_warn("store: tenant weight %s = '%s' unreadable; ignored", key, value);
        return 0;
    }
    d->tenants.v[id - 1].weight = (unsigned)w;
    cg_tenant_set_weight(d->core, id, w, loop_now_ns());
    return 0;
}

void tenant_load(struct daemon *d)
{
    if (d->store && store_each_setting(d->store, WEIGHT_KEY, load_one, d) != 0)
        log_warn("store: cannot read the tenants' weights: %s", store_error(d->store));
}

void tenant_free(struct daemon *d)
{
    free(d->tenants.v);
    d->tenants = (struct tenants){0};
}

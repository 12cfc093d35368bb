/* adaptive.c — the profiles of running jobs, per tenant, for the adaptive fair share
 * (adaptive.h). */
#include "adaptive.h"

#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "log.h"
#include "profile.h"
#include "store.h"

/* One tenant's running jobs with a usable profile, summed. */
struct sum {
    double peak, duration_s;
    unsigned jobs;
    uint64_t least_runs;
};

/* A burst of starts (a job array, a restart restoring every container) costs one update a
 * second, not one per container: each update reads every running container's profile. */
#define MIN_GAP_NS 1000000000ull

void adaptive_touch(struct daemon *d)
{
    uint64_t soonest = d->adaptive_last + MIN_GAP_NS;
    if (d->adaptive_last == 0 || soonest < d->adaptive_due)
        d->adaptive_due = d->adaptive_last == 0 ? 0 : soonest;
}

/* The figures of tenant t, when they changed since the last update: logged once. */
static void note(struct tenant *t, const cg_tenant_profile *p)
{
    bool had = t->adaptive.runs != 0, has = p != NULL;
    if (had == has && (!has || (t->adaptive.runs == p->runs &&
                                t->adaptive.peak_bytes == p->peak_bytes &&
                                t->adaptive.duration_s == p->duration_s)))
        return;
    if (has) {
        log_info("adaptive fair share: tenant %s weighed by its running jobs' profiles "
                 "(mean peak %.0f MiB, mean run %.1f s, at least %u runs each)", t->name,
                 p->peak_bytes / 1048576.0, p->duration_s, p->runs);
        t->adaptive = *p;
    } else {
        log_info("adaptive fair share: tenant %s has no profiled running job; weighed by its "
                 "job count", t->name);
        t->adaptive = (cg_tenant_profile){0};
    }
}

static void update(struct daemon *d)
{
    size_t nt = d->tenants.n;
    if (nt == 0)
        return;
    struct sum *sums = calloc(nt, sizeof *sums);
    cg_tenant_profile *out = calloc(nt, sizeof *out);
    if (!sums || !out) {
        log_warn("adaptive fair share: out of memory; the update is retried");
        goto done;
    }
    for (struct container *c = d->containers; c; c = c->next) {
        const struct tenant *t = tenant_find(d, c->ident.tenant);
        if (!t || !c->profile.key[0] || !d->store)
            continue;
        struct profile p;
        int rc = store_profile_get(d->store, c->ident.tenant, c->profile.key, &p);
        if (rc < 0) {
            log_warn("adaptive fair share: cannot read profile %s/%s: %s", c->ident.tenant,
                     c->profile.key, store_error(d->store));
            continue;
        }
        if (rc != 0 || p.runs < CG_FAIR_PROFILE_RUNS || p.peak == 0 || !(p.duration_s > 0))
            continue; /* not enough known: the paper's "first few executions" */
        struct sum *s = &sums[t->id - 1];
        s->peak += (double)p.peak;
        s->duration_s += p.duration_s;
        s->least_runs = s->jobs == 0 || p.runs < s->least_runs ? p.runs : s->least_runs;
        s->jobs++;
    }
    size_t n = 0;
    for (size_t i = 0; i < nt; i++) {
        if (sums[i].jobs == 0)
            continue;
        out[n++] = (cg_tenant_profile){
            .tenant = d->tenants.v[i].id,
            .runs = sums[i].least_runs > UINT32_MAX ? UINT32_MAX : (unsigned)sums[i].least_runs,
            .peak_bytes = sums[i].peak / sums[i].jobs,
            .duration_s = sums[i].duration_s / sums[i].jobs,
        };
    }
    cg_status st = cg_fair_share_update(d->core, loop_now_ns(), out, n);
    if (st != CG_OK) {
        log_warn("adaptive fair share: the update was refused (%s); retried at the next "
                 "interval", cg_status_str(st));
        goto done;
    }
    for (size_t i = 0, k = 0; i < nt; i++) {
        bool has = k < n && out[k].tenant == d->tenants.v[i].id;
        note(&d->tenants.v[i], has ? &out[k] : NULL);
        k += has;
    }
    /* Ceilings that grew resumed containers inside the core: send their replies. */
    decide_flush(d);
done:
    free(sums);
    free(out);
}

int adaptive_tick(struct daemon *d)
{
    if (cg_get_fair_share(d->core) != CG_FAIR_ADAPTIVE)
        return -1;
    uint64_t now = loop_now_ns();
    uint64_t every = d->opt.fair_interval_ns ? d->opt.fair_interval_ns
                                             : ADAPTIVE_INTERVAL_DEFAULT_S * 1000000000ull;
    if (now >= d->adaptive_due) {
        update(d);
        d->adaptive_last = now;
        d->adaptive_due = now + every;
    }
    uint64_t left = d->adaptive_due > now ? d->adaptive_due - now : 0;
    return (int)(left / 1000000) + 1;
}

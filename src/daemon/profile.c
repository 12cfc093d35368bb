/* profile.c — learning a job's peak memory, duration and utilisation from its past runs (see
 * profile.h). The rows live in state.db (store.c); this file decides what a run is and what a
 * profile's limit is. */
#include "profile.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "adaptive.h"
#include "daemon.h"
#include "gates.h"
#include "log.h"
#include "size.h"
#include "store.h"

bool profile_margin_parse(const char *text, unsigned *pct)
{
    return cg_pct_parse(text, PROFILE_MARGIN_MAX_PCT, pct);
}

void profile_key_of(const char *image, const char *command, char *out, size_t len)
{
    if (image && *image) {
        snprintf(out, len, "%s", image);
        return;
    }
    const char *base = command ? strrchr(command, '/') : NULL;
    snprintf(out, len, "%s", base ? base + 1 : command ? command : "");
}

void profile_sample(struct daemon *d)
{
    for (struct container *c = d->containers; c; c = c->next)
        if (c->rec)
            container_used_bytes(c); /* notes the reading */
}

int profile_record(struct daemon *d, struct container *c)
{
    if (!d->store || !c->rec || !c->profile.key[0])
        return 0;
    container_used_bytes(c); /* the last reading */
    if (c->rec->peak == 0) {
        log_debug("container %s: never used the GPU; no profile run recorded", c->ident.id);
        return 0;
    }
    uint64_t now = loop_now_ns();
    struct profile_run run = {
        .peak = c->rec->peak,
        .duration_ns = now > c->ident.created_mono ? now - c->ident.created_mono : 0,
        .util_known = compute_measuring(d),
        .ended_unix = (int64_t)time(NULL),
    };
    /* Device time was counted from profile_since (creation, or this daemon's start for a
     * container it restored), so the mean is over that span, not the whole run. */
    uint64_t span = now > c->profile.since ? now - c->profile.since : 0;
    if (run.util_known && span > 0) {
        uint64_t pm = c->compute.busy_ns >= span ? 1000 : c->compute.busy_ns * 1000 / span;
        run.util_permille = (uint32_t)pm;
    }
    snprintf(run.tenant, sizeof run.tenant, "%s", c->ident.tenant); /* the container's tenant */
    snprintf(run.key, sizeof run.key, "%s", c->profile.key);
    unsigned evicted = 0;
    int rc = store_profile_add(d->store, &run, d->opt.profile_max_keys, d->opt.profile_max_bytes,
                               &evicted);
    char b1[CG_SIZE_BUFLEN];
    if (rc == 0 && evicted)
        adaptive_touch(d); /* a running job may have lost the profile it was weighed by */
    if (rc != 0)
        log_error("container %s: its run (peak %s) is not in profile %s/%s: %s", c->ident.id,
                  cg_format_size(run.peak, b1, sizeof b1), run.tenant, run.key,
                  store_error(d->store));
    else
        log_info("container %s: profile %s/%s: run recorded (peak %s, %.1f s, utilisation %s)",
                 c->ident.id, run.tenant, run.key, cg_format_size(run.peak, b1, sizeof b1),
                 (double)run.duration_ns / 1e9, run.util_known ? "measured" : "unknown");
    return rc;
}

int profile_get(struct daemon *d, const char *tenant, const char *key, uint64_t *peak,
                double *duration_s, double *utilization)
{
    struct profile p;
    int rc = d->store ? store_profile_get(d->store, tenant, key, &p) : 1;
    if (rc != 0)
        return rc;
    if (peak)
        *peak = p.peak;
    if (duration_s)
        *duration_s = p.duration_s;
    if (utilization)
        *utilization = p.utilization;
    return 0;
}

uint64_t profile_app_hash(const char *key)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a: the same key, the same application */
    for (const unsigned char *p = (const unsigned char *)key; *p; p++)
        h = (h ^ *p) * 1099511628211ull;
    return h ? h : 1;
}

void profile_placement_hint(struct daemon *d, const char *tenant, const char *key,
                            unsigned *util_pct, uint64_t *app)
{
    *util_pct = 0;
    *app = 0;
    if (!key || !key[0])
        return;
    *app = profile_app_hash(key);
    double u = 0;
    if (profile_get(d, tenant, key, NULL, NULL, &u) == 0 && u > 0) {
        long pct = (long)(u * 100.0 + 0.5);
        *util_pct = pct < 1 ? 1 : pct > 100 ? 100 : (unsigned)pct;
    }
}

int profile_limit(struct daemon *d, const char *tenant, const char *key, unsigned margin_pct,
                  uint64_t capacity, uint64_t *limit, uint64_t *peak)
{
    uint64_t p = 0;
    int rc = profile_get(d, tenant, key, &p, NULL, NULL);
    if (rc != 0 || p == 0)
        return rc < 0 ? -1 : 1;
    /* peak < 2^62 (a device's size) and margin <= 100: no overflow. */
    const uint64_t mib = 1ull << 20;
    uint64_t l = p + (p / 100 * margin_pct + (p % 100) * margin_pct / 100);
    l = (l + mib - 1) / mib * mib;
    *limit = l < capacity ? l : capacity;
    *peak = p;
    return 0;
}

/* oversub.c — the sharing factor each device advertises (oversub.h). */
#include "oversub.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "log.h"
#include "size.h"
#include "swap.h"

/* The runs the adaptive rule reads, per device: a ring of the last OVERSUB_RUNS. */
struct oversub_runs {
    cg_oversub_run runs[CG_MAX_DEVICES][OVERSUB_RUNS];
    unsigned n[CG_MAX_DEVICES], next[CG_MAX_DEVICES];
};

/* A factor as a plain decimal ("2", "1.5"): strtod alone would take "inf", "0x2", "+2", "2e0". */
static bool parse_factor(const char *s, size_t len, double *out)
{
    char buf[32];
    if (len == 0 || len >= sizeof buf)
        return false;
    unsigned dots = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '.')
            dots++;
        else if (s[i] < '0' || s[i] > '9')
            return false;
    }
    if (dots > 1 || s[0] == '.' || s[len - 1] == '.')
        return false;
    memcpy(buf, s, len);
    buf[len] = '\0';
    char *end;
    errno = 0;
    double v = strtod(buf, &end);
    if (errno || *end || !(v >= CG_OVERSUB_MIN && v <= CG_OVERSUB_MAX))
        return false;
    *out = v;
    return true;
}

int oversub_parse(const char *text, struct oversub_setting *out, char *err, size_t errlen)
{
    struct oversub_setting s = {.all = 1.0};
    if (strcmp(text, "adaptive") == 0) {
        s.adaptive = true;
        *out = s;
        return 0;
    }
    if (!strchr(text, '=')) {
        if (!parse_factor(text, strlen(text), &s.all))
            goto bad;
        *out = s;
        return 0;
    }
    for (const char *p = text;;) {
        const char *comma = strchr(p, ','), *eq = strchr(p, '=');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (!eq || eq >= p + len || eq == p || s.nper == CG_MAX_DEVICES)
            goto bad;
        unsigned long idx = 0;
        for (const char *q = p; q < eq; q++) {
            if (*q < '0' || *q > '9' || idx >= CG_MAX_DEVICES)
                goto bad;
            idx = idx * 10 + (unsigned long)(*q - '0');
        }
        if (idx >= CG_MAX_DEVICES)
            goto bad;
        double f;
        if (!parse_factor(eq + 1, len - (size_t)(eq + 1 - p), &f))
            goto bad;
        for (unsigned k = 0; k < s.nper; k++)
            if (s.per[k].index == idx) {
                snprintf(err, errlen, "oversubscribe names GPU %lu twice in '%s'", idx, text);
                return -1;
            }
        s.per[s.nper].index = (unsigned)idx;
        s.per[s.nper].factor = f;
        s.nper++;
        if (!comma)
            break;
        p = comma + 1;
    }
    *out = s;
    return 0;
bad:
    snprintf(err, errlen, "oversubscribe takes a sharing factor from %.1f to %.1f (e.g. 2 or "
                          "1.5), factors per GPU (0=2,1=1.5), or adaptive; not '%s'",
             CG_OVERSUB_MIN, CG_OVERSUB_MAX, text);
    return -1;
}

static uint64_t capacity_of(const struct daemon *d, unsigned device)
{
    cg_device_info di = {0};
    cg_device_get(d->core, device, &di);
    return di.capacity;
}

/* The device's part of the swap budget: --swap-limit is the node's, shared by its devices. */
static uint64_t swap_share(const struct daemon *d)
{
    return d->opt.swap && d->ndevices ? d->opt.swap_limit / d->ndevices : 0;
}

static void recompute(struct daemon *d, unsigned device, const char *why)
{
    const struct oversub_runs *r = d->oversub_runs;
    double f = cg_oversub_adaptive(r->runs[device], r->n[device], capacity_of(d, device),
                                   swap_share(d), &cg_oversub_defaults);
    if (f != d->devices[device].oversub)
        log_info("device %u: sharing factor %.2f (adaptive, %u runs; %s)", device, f,
                 r->n[device], why);
    d->devices[device].oversub = f;
}

static void add_run(struct daemon *d, unsigned device, uint64_t peak, uint64_t limit)
{
    struct oversub_runs *r = d->oversub_runs;
    if (device >= d->ndevices || peak == 0 || limit == 0)
        return;
    r->runs[device][r->next[device]] = (cg_oversub_run){.peak = peak, .limit = limit};
    r->next[device] = (r->next[device] + 1) % OVERSUB_RUNS;
    if (r->n[device] < OVERSUB_RUNS)
        r->n[device]++;
}

/* A run that ends teaches its device: the peak the daemon recorded against its limit (the
 * same runs profiles keep: a key, and a peak). */
static void on_notice(struct daemon *d, const struct notice *n, void *ctx)
{
    (void)ctx;
    struct container *c = n->c;
    if (n->kind != NOTICE_CONTAINER_REMOVED || !c || !c->rec || !c->profile.key[0])
        return;
    add_run(d, c->device, c->rec->peak, c->limit);
    if (c->device < d->ndevices)
        recompute(d, c->device, "a run ended");
}

int oversub_start(struct daemon *d, char *err, size_t errlen)
{
    const struct oversub_setting *s = &d->opt.oversub;
    for (unsigned k = 0; k < s->nper; k++)
        if (s->per[k].index >= d->ndevices) {
            snprintf(err, errlen, "--oversubscribe names GPU %u, but this node has %u GPU%s",
                     s->per[k].index, d->ndevices, d->ndevices == 1 ? "" : "s");
            return -1;
        }
    for (unsigned i = 0; i < d->ndevices; i++)
        d->devices[i].oversub = s->all >= CG_OVERSUB_MIN ? s->all : 1.0;
    for (unsigned k = 0; k < s->nper; k++)
        d->devices[s->per[k].index].oversub = s->per[k].factor;
    if (!s->adaptive) {
        for (unsigned i = 0; i < d->ndevices; i++)
            if (d->devices[i].oversub != 1.0)
                log_info("device %u: sharing factor %.2f: promises %.0f MiB of %.0f MiB", i,
                         d->devices[i].oversub, (double)oversub_promised(d, i) / 1048576.0,
                         (double)capacity_of(d, i) / 1048576.0);
        return 0;
    }
    d->oversub_runs = calloc(1, sizeof *d->oversub_runs);
    if (!d->oversub_runs) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    /* Restored containers: their profile's peak (the highest of its last runs) against the
     * limit they hold now. */
    for (struct container *c = d->containers; c; c = c->next) {
        uint64_t peak = 0;
        if (c->profile.key[0] &&
            profile_get(d, c->ident.tenant, c->profile.key, &peak, NULL, NULL) == 0)
            add_run(d, c->device, peak, c->limit);
    }
    for (unsigned i = 0; i < d->ndevices; i++) {
        d->devices[i].oversub = 0; /* so the first value is logged */
        recompute(d, i, "at start");
    }
    if (notice_listen(d, on_notice, NULL) != 0) {
        snprintf(err, errlen, "adaptive oversubscribe: no room for another notice listener");
        return -1;
    }
    return 0;
}

double oversub_factor(const struct daemon *d, unsigned device)
{
    double f = device < d->ndevices ? d->devices[device].oversub : 1.0;
    return f >= CG_OVERSUB_MIN ? f : 1.0;
}

uint64_t oversub_promised(const struct daemon *d, unsigned device)
{
    return cg_oversub_promised(capacity_of(d, device), oversub_factor(d, device));
}

const char *oversub_mode(const struct daemon *d)
{
    return d->opt.oversub.adaptive ? "adaptive" : "static";
}

uint64_t oversub_limits(const struct daemon *d, unsigned device)
{
    uint64_t sum = 0;
    for (const struct container *c = d->containers; c; c = c->next) {
        if (c->device != device)
            continue;
        cg_container_info ci = {0};
        cg_container_get(d->core, c->cid, 0, &ci);
        sum = sum + ci.limit < sum ? UINT64_MAX : sum + ci.limit;
    }
    return sum;
}

const char *oversub_wait_reason(const struct daemon *d, const struct container *c)
{
    cg_container_info ci = {0};
    if (cg_container_get(d->core, c->cid, 0, &ci) != CG_OK)
        return NULL;
    if (ci.queued)
        return "gpus";   /* its GPUs lack room for its whole limit on every one at once */
    bool waits = ci.state == CG_STATE_SUSPENDED || (c->swap.phase == SWAP_OUT && ci.npending > 0);
    if (!waits)
        return NULL;
    uint64_t cap = capacity_of(d, c->device);
    return oversub_promised(d, c->device) > cap && oversub_limits(d, c->device) > cap
               ? OVERSUB_WAIT_FACTOR
               : "memory";
}

unsigned oversub_waiting(const struct daemon *d, unsigned device)
{
    unsigned n = 0;
    for (const struct container *c = d->containers; c; c = c->next) {
        const char *why = c->device == device ? oversub_wait_reason(d, c) : NULL;
        n += why && strcmp(why, OVERSUB_WAIT_FACTOR) == 0;
    }
    return n;
}

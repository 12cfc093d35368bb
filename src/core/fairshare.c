/* fairshare.c — tenants, weights and the fair-share ceilings (static, and seed 001's adaptive
 * Algorithm 1 with Eq. 1).
 *
 * Follow one raise: container x of tenant T asks for g more bytes on device d. The core first
 * asks its own questions (free memory, banker's safety of d); then cg_fair_cap asks ours: would
 * T's containers on d, with x given g, still all be able to finish under T's ceiling? T's
 * containers are a small banker's system of their own whose capacity is the ceiling; the least
 * total that lets them finish in ascending-need order is their FLOOR:
 *
 *     floor_T = max_i (L_i + sum of A_j over the containers after i in ascending need)
 *
 * (>= sum A_T). The raise happens only when floor_T(after) <= ceiling_T. The ceiling is
 *
 *     ceiling_T = max(share_T, largest L_i of T on d, floor_T when the ceiling was computed)
 *
 * so a tenant's own admitted claims can always be met: the container of least need on d is the
 * first of its tenant's order too, and giving it its whole need leaves the floor unchanged, so
 * the core's argument that someone can always run (docs/SCHEDULING.md) carries over. A tenant
 * over its share (it got there before a newcomer shrank the share) keeps what it holds and may
 * finish the containers it has started, but its floor cannot grow: new containers of it wait.
 *
 * Invariant (checked by cg_core_check): every container's fair_ceiling equals
 * cg_fair_ceiling_of() recomputed now. It holds because ceilings are recomputed whenever a
 * share, a largest limit or an assignment going DOWN could change them (the resume pass starts
 * with a recompute; every removal and lowering runs it), and between recomputes assignments only
 * go up, under which the floor never shrinks (docs/SCHEDULING.md, "Tenants and fair share").
 *
 * Cost: nothing in mode none. Otherwise a recompute is O(n log n) in containers on the device,
 * and a raise O(N + 64 k log k) (N containers in all, k of the tenant on the device).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

typedef struct cg_fair_claim claim;

/* ---- names ------------------------------------------------------------------------------- */

static const char *const mode_names[CG_FAIR__COUNT] = {"none", "static", "adaptive"};

const char *cg_fair_mode_name(cg_fair_mode m)
{
    return (unsigned)m < CG_FAIR__COUNT ? mode_names[m] : "unknown";
}

bool cg_fair_mode_parse(const char *name, cg_fair_mode *out)
{
    for (unsigned i = 0; name && i < CG_FAIR__COUNT; i++)
        if (strcmp(name, mode_names[i]) == 0) {
            *out = (cg_fair_mode)i;
            return true;
        }
    return false;
}

/* ---- tenant records ---------------------------------------------------------------------- */

static const cg_tenant *tenant_rec(const cg_core *core, uint32_t id)
{
    return cg_hash_get(&core->by_tenant, id, 0);
}

unsigned cg_tenant_weight(const cg_core *core, uint32_t tenant)
{
    const cg_tenant *t = tenant_rec(core, tenant);
    return t ? t->weight : 1;
}

/* The tenant's record, created (weight 1, no profile: the same as none) when missing. */
static cg_tenant *tenant_get_or_add(cg_core *core, uint32_t id)
{
    cg_tenant *t = cg_hash_get(&core->by_tenant, id, 0);
    if (t)
        return t;
    if (!cg_hash_reserve(core, &core->by_tenant, 1) || !(t = cg_mem_alloc(core, sizeof *t)))
        return NULL;
    *t = (cg_tenant){.id = id, .weight = 1};
    cg_hash_put(&core->by_tenant, id, 0, t);
    return t;
}

void cg_fair_release(cg_core *core)
{
    for (size_t i = 0; i < core->by_tenant.cap; i++)
        if (core->by_tenant.slots[i].val)
            cg_mem_free(core, core->by_tenant.slots[i].val, sizeof(cg_tenant));
    cg_hash_release(core, &core->by_tenant);
    cg_mem_free(core, core->fair_buf, core->fair_cap * sizeof *core->fair_buf);
    core->fair_buf = NULL;
    core->fair_cap = 0;
}

bool cg_fair_reserve(cg_core *core, size_t n)
{
    if (n <= core->fair_cap)
        return true;
    size_t cap = core->fair_cap ? core->fair_cap : 16;
    while (cap < n)
        cap *= 2;
    claim *b = cg_mem_alloc(core, cap * sizeof *b);
    if (!b)
        return false;
    cg_mem_free(core, core->fair_buf, core->fair_cap * sizeof *core->fair_buf);
    core->fair_buf = b;
    core->fair_cap = cap;
    return true;
}

/* ---- the arithmetic ---------------------------------------------------------------------- */

static int by_tenant_need(const void *a, const void *b)
{
    const claim *x = a, *y = b;
    if (x->tenant != y->tenant)
        return x->tenant < y->tenant ? -1 : 1;
    return (x->need > y->need) - (x->need < y->need);
}

/* The containers on `dev` (of `tenant` only, unless all), x given `gift` more. */
static size_t collect(const cg_core *core, unsigned dev, bool all, uint32_t tenant,
                      const cg_container *x, cg_bytes gift, claim *buf)
{
    size_t n = 0;
    for (cg_container *c = core->head; c; c = c->next) {
        if (c->dev != dev || (!all && c->tenant != tenant))
            continue;
        cg_bytes a = c->assigned + (c == x ? gift : 0);
        buf[n++] = (claim){.tenant = c->tenant, .need = c->limit - a, .assigned = a,
                           .limit = c->limit, .c = c};
    }
    if (n > 1)   /* the scratch is NULL while there are no containers */
        qsort(buf, n, sizeof *buf, by_tenant_need);
    return n;
}

/* Floor of one tenant's claims, sorted by ascending need: max_i (L_i + A after i). */
static cg_bytes floor_of(const claim *v, size_t n)
{
    cg_bytes after = 0, floor = 0;
    for (size_t i = n; i-- > 0;) {
        if (v[i].limit + after > floor)
            floor = v[i].limit + after;
        after += v[i].assigned;
    }
    return floor;
}

static bool profiled(const cg_tenant *t) { return t && t->profile.runs >= CG_FAIR_PROFILE_RUNS; }

/* capacity x part / whole without overflow (part <= whole). */
static cg_bytes scale(cg_bytes capacity, uint64_t part, uint64_t whole)
{
    return capacity / whole * part + capacity % whole * part / whole;
}

/* Fills share and ceiling of every claim of buf[0..n) (one device, sorted by tenant and need). */
static void compute_device(const cg_core *core, unsigned dev, claim *buf, size_t n)
{
    cg_bytes cap = core->dev[dev].capacity;
    /* Pass 1: totals over the groups (the active tenants). */
    uint64_t wsum = 0, gsum = 0;
    double psum = 0, tsum = 0;
    for (size_t i = 0, j; i < n; i = j) {
        for (j = i; j < n && buf[j].tenant == buf[i].tenant; j++)
            ;
        const cg_tenant *t = tenant_rec(core, buf[i].tenant);
        wsum += t ? t->weight : 1;
        gsum += j - i;
        if (profiled(t)) {
            psum += t->profile.peak_bytes;
            tsum += t->profile.duration_s;
        }
    }
    bool adaptive = core->fair == CG_FAIR_ADAPTIVE;
    /* Eq. 1 for each group i: C0 g_i/sum g + C1 p_i/sum p + C2 t_i/sum t, with C0 = 1 and the
     * others 0 for a group without enough profiled runs (so with no profile anywhere the
     * shares follow the job counts, the paper's "first few executions"), else all 1/m (m = 3);
     * then weighted.
     * Pass 2 sums the weighted Set_i, pass 3 hands out the shares and ceilings. */
    double wset_sum = 0;
    for (int pass = 2; pass <= 3; pass++)
        for (size_t i = 0, j; i < n; i = j) {
            for (j = i; j < n && buf[j].tenant == buf[i].tenant; j++)
                ;
            const cg_tenant *t = tenant_rec(core, buf[i].tenant);
            unsigned w = t ? t->weight : 1;
            cg_bytes s;
            if (adaptive) {
                double set = (double)(j - i) / (double)gsum;
                if (profiled(t))
                    set = (set + t->profile.peak_bytes / psum + t->profile.duration_s / tsum) / 3;
                if (pass == 2) {
                    wset_sum += w * set;
                    continue;
                }
                double f = (double)cap * (w * set / wset_sum);
                s = f >= (double)cap ? cap : (cg_bytes)f;
            } else {
                if (pass == 2)
                    continue;
                s = scale(cap, w, wsum);
            }
            cg_bytes ceil = s;
            for (size_t k = i; k < j; k++)
                ceil = buf[k].limit > ceil ? buf[k].limit : ceil;
            cg_bytes fl = floor_of(buf + i, j - i);
            ceil = fl > ceil ? fl : ceil;
            for (size_t k = i; k < j; k++) {
                buf[k].share = s;
                buf[k].ceiling = ceil;
            }
        }
}

void cg_fair_recompute(cg_core *core, unsigned dev)
{
    if (!cg_fair_on(core))
        return;
    claim *buf = core->fair_buf;
    size_t n = collect(core, dev, true, 0, NULL, 0, buf);
    compute_device(core, dev, buf, n);
    for (size_t i = 0; i < n; i++) {
        buf[i].c->fair_share = buf[i].share;
        buf[i].c->fair_ceiling = buf[i].ceiling;
    }
}

cg_bytes cg_fair_ceiling_of(const cg_core *core, uint32_t tenant, unsigned dev, claim *buf,
                            cg_bytes *share_out)
{
    size_t n = collect(core, dev, true, 0, NULL, 0, buf);
    compute_device(core, dev, buf, n);
    for (size_t i = 0; i < n; i++)
        if (buf[i].tenant == tenant) {
            *share_out = buf[i].share;
            return buf[i].ceiling;
        }
    *share_out = 0;
    return 0;
}

cg_bytes cg_fair_floor(const cg_core *core, uint32_t tenant, unsigned dev, const cg_container *x,
                       cg_bytes gift, claim *buf)
{
    return floor_of(buf, collect(core, dev, false, tenant, x, gift, buf));
}

cg_bytes cg_fair_cap(cg_core *core, const cg_container *c, cg_bytes want)
{
    if (!cg_fair_on(core) || want == 0)
        return want;
    claim *buf = core->fair_buf;
    cg_bytes ceil = c->fair_ceiling;
    if (cg_fair_floor(core, c->tenant, c->dev, c, want, buf) <= ceil)
        return want;
    /* The floor only grows with the gift (docs/SCHEDULING.md), so the allowed gifts are an
     * interval [0, g]: binary search for g. */
    cg_bytes lo = 0, hi = want;   /* lo allowed (the state is safe), hi not */
    while (hi - lo > 1) {
        cg_bytes mid = lo + (hi - lo) / 2;
        if (cg_fair_floor(core, c->tenant, c->dev, c, mid, buf) <= ceil)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* ---- settings ---------------------------------------------------------------------------- */

/* After ceilings may have grown anywhere: recompute and resume, device by device. */
static void reschedule_all(cg_core *core, cg_time now)
{
    for (unsigned i = 0; i < core->ndev; i++)
        cg_reschedule(core, i, now);
}

cg_status cg_set_fair_share(cg_core *core, cg_fair_mode mode, cg_time now)
{
    if (!core || (unsigned)mode >= CG_FAIR__COUNT)
        return CG_ERR_INVALID;
    if (mode != CG_FAIR_NONE && !cg_fair_reserve(core, core->ncontainers))
        return CG_ERR_NOMEM;
    if (mode == core->fair)
        return CG_OK;
    core->fair = mode;
    reschedule_all(core, now);
    return CG_OK;
}

cg_fair_mode cg_get_fair_share(const cg_core *core) { return core->fair; }

cg_status cg_tenant_set_weight(cg_core *core, uint32_t tenant, long long weight, cg_time now)
{
    if (!core || weight < 1 || weight > CG_TENANT_WEIGHT_MAX)
        return CG_ERR_INVALID;
    cg_tenant *t = tenant_get_or_add(core, tenant);
    if (!t)
        return CG_ERR_NOMEM;
    if (t->weight == (unsigned)weight)
        return CG_OK;
    t->weight = (unsigned)weight;
    if (cg_fair_on(core))
        reschedule_all(core, now);
    return CG_OK;
}

static bool figure_ok(double x) { return isfinite(x) && x > 0; }

cg_status cg_fair_share_update(cg_core *core, cg_time now, const cg_tenant_profile *profiles,
                               size_t n)
{
    if (!core || (n && !profiles))
        return CG_ERR_INVALID;
    for (size_t i = 0; i < n; i++) {
        if (!figure_ok(profiles[i].peak_bytes) || !figure_ok(profiles[i].duration_s))
            return CG_ERR_INVALID;
        for (size_t j = 0; j < i; j++)
            if (profiles[j].tenant == profiles[i].tenant)
                return CG_ERR_INVALID;
    }
    /* A record added here and then left unused (a later allocation failed) reads as no record:
     * weight 1, no profile; so a failure changes nothing that can be seen. */
    for (size_t i = 0; i < n; i++)
        if (!tenant_get_or_add(core, profiles[i].tenant))
            return CG_ERR_NOMEM;
    for (size_t i = 0; i < core->by_tenant.cap; i++) {
        cg_tenant *t = core->by_tenant.slots[i].val;
        if (t)
            t->profile = (cg_tenant_profile){.tenant = t->id};
    }
    for (size_t i = 0; i < n; i++) {
        cg_tenant *t = cg_hash_get(&core->by_tenant, profiles[i].tenant, 0);
        t->profile = profiles[i];
    }
    if (core->fair == CG_FAIR_ADAPTIVE)
        reschedule_all(core, now);
    return CG_OK;
}

/* ---- views ------------------------------------------------------------------------------- */

cg_status cg_tenant_get(const cg_core *core, uint32_t tenant, unsigned device, cg_tenant_info *out)
{
    if (device >= core->ndev)
        return CG_ERR_NO_DEVICE;
    *out = (cg_tenant_info){.tenant = tenant, .weight = cg_tenant_weight(core, tenant)};
    for (const cg_container *c = core->head; c; c = c->next) {
        if (c->dev != device || c->tenant != tenant)
            continue;
        out->ncontainers++;
        out->nsuspended += c->npending > 0;
        out->assigned += c->assigned;
        out->used += c->used;
        out->share = cg_fair_on(core) ? c->fair_share : core->dev[device].capacity;
        out->ceiling = cg_fair_on(core) ? c->fair_ceiling : core->dev[device].capacity;
    }
    return CG_OK;
}

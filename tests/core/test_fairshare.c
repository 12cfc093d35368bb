/* test_fairshare.c — tenants and fair share in the core (src/core/fairshare.c): static ceilings
 * and what they hold back, weights moving them, a tenant over its share when another arrives,
 * the deadlock a plain "over-share tenants get nothing more" rule would cause, the largest-limit
 * rule, seed 001's Eq. 1 (adaptive), bad input, mode none deciding exactly as without tenants,
 * injected allocation failures; then a property test: random operations with 1-4 tenants, random
 * modes, weights and profiles, cg_core_check() after every one (every ceiling equals a recompute,
 * no tenant above it, no device all suspended), and a drain in which only running containers
 * finish, which must empty every device (no deadlock).
 *
 * CONVGPU_FAIRPROP_EVENTS scales the property test (default 60000 operations). */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core_test.h"
#include "core.h"

typedef struct {
    cg_event last_suspend;
    unsigned nresume, nsuspend_fair;
    uint64_t hash;
} recorder;

static void record(void *ctx, const cg_event *ev)
{
    recorder *r = ctx;
    if (ev->kind == CG_EV_SUSPEND) {
        r->last_suspend = *ev;
        r->nsuspend_fair += ev->reason == CG_WHY_FAIR_SHARE;
    }
    r->nresume += ev->kind == CG_EV_RESUME;
    const unsigned char *b = (const unsigned char *)ev;
    for (size_t i = 0; i < sizeof *ev; i++)
        r->hash = (r->hash ^ b[i]) * 0x100000001b3ull;
}

static cg_core *mk(recorder *rec, cg_bytes cap, cg_fair_mode mode)
{
    cg_config cfg = {.sink = record, .sink_ctx = rec};
    cg_core *core = cg_core_new(&cfg);
    CHECK(core && cg_device_add(core, cap, 0, 0, NULL) == CG_OK, "core");
    CHECK(cg_set_fair_share(core, mode, 0) == CG_OK, "mode");
    return core;
}

static cg_cid mk_ctr(cg_core *core, uint32_t tenant, cg_bytes limit)
{
    cg_container_spec spec = {.device = 0, .limit = limit, .tenant = tenant};
    cg_cid cid = CG_CID_NONE;
    cg_status st = cg_container_create_spec(core, &spec, 0, &cid);
    CHECK(st == CG_OK, "create: %s", cg_status_str(st));
    return cid;
}

static cg_outcome req(cg_core *core, cg_cid cid, cg_reqid id, cg_bytes b)
{
    cg_outcome o = CG_REJECTED;
    CHECK(cg_request(core, cid, cid, id, b, 0, &o) == CG_OK, "request");
    return o;
}

static cg_tenant_info tinfo(const cg_core *core, uint32_t tenant)
{
    cg_tenant_info ti = {0};
    CHECK(cg_tenant_get(core, tenant, 0, &ti) == CG_OK, "tenant get");
    return ti;
}

/* Two tenants of weight 1 on 100: tenant 1's second container waits at its ceiling (50) while
 * tenant 2 runs and 30 lie free; a weight of 3 lifts tenant 1's ceiling to 75 and it resumes. */
static void test_static_ceiling_and_weight(void)
{
    recorder rec = {0};
    cg_core *core = mk(&rec, 100, CG_FAIR_STATIC);
    cg_cid b1 = mk_ctr(core, 2, 20);
    cg_cid a1 = mk_ctr(core, 1, 40), a2 = mk_ctr(core, 1, 40);
    CHECK(tinfo(core, 1).share == 50 && tinfo(core, 2).share == 50, "shares %" PRIu64,
          tinfo(core, 1).share);
    /* Creation: a1 40; a2 only 10, as 40 + 10 is all tenant 1 may need to finish in any order. */
    CHECK(info(core, a1).assigned == 40 && info(core, a2).assigned == 10, "a2 assigned %" PRIu64,
          info(core, a2).assigned);
    CHECK(req(core, b1, 1, 20) == CG_GRANTED, "b1");
    CHECK(req(core, a1, 2, 40) == CG_GRANTED, "a1");
    CHECK(req(core, a2, 3, 20) == CG_SUSPENDED, "a2 waits at the ceiling");
    CHECK(rec.last_suspend.reason == CG_WHY_FAIR_SHARE, "reason %s",
          cg_reason_str(rec.last_suspend.reason));
    cg_device_info di;
    cg_device_get(core, 0, &di);
    CHECK(di.free == 30, "30 free, yet a2 waits: free %" PRIu64, di.free);
    CHECK(tinfo(core, 1).assigned == 50 && tinfo(core, 1).nsuspended == 1, "tenant 1");
    CHECK_CORE(core);
    CHECK(cg_tenant_set_weight(core, 1, 3, 0) == CG_OK, "weight");
    CHECK(tinfo(core, 1).share == 75 && tinfo(core, 2).share == 25, "shares 75/25");
    CHECK(info(core, a2).state == CG_STATE_RUNNING && info(core, a2).used == 20, "a2 resumed");
    CHECK(cg_tenant_set_weight(core, 1, 1, 0) == CG_OK, "weight back");
    CHECK(tinfo(core, 1).ceiling == 75, "over its share of 50: keeps its 75 (%" PRIu64 ")",
          tinfo(core, 1).ceiling);
    CHECK(cg_container_remove(core, b1, 0) == CG_OK, "remove b1");
    CHECK(tinfo(core, 1).ceiling == 100, "alone: the whole device");
    CHECK_CORE(core);
    cg_core_free(core);
}

/* Tenant 1 holds 60 alone; tenant 2 arrives (shares 50/50): tenant 1 keeps its 60, but a new
 * container of it gets nothing, even with 10 free, until its first one leaves. */
static void test_over_share_keeps_what_it_holds(void)
{
    recorder rec = {0};
    cg_core *core = mk(&rec, 100, CG_FAIR_STATIC);
    cg_cid a1 = mk_ctr(core, 1, 60);
    CHECK(req(core, a1, 1, 60) == CG_GRANTED, "a1");
    cg_cid b1 = mk_ctr(core, 2, 30);
    CHECK(info(core, b1).assigned == 30, "b1 gets its limit");
    cg_cid a3 = mk_ctr(core, 1, 10);
    CHECK(info(core, a3).assigned == 0, "a3 gets nothing: its tenant is over its share");
    CHECK(tinfo(core, 1).share == 50 && tinfo(core, 1).ceiling == 60, "ceiling %" PRIu64,
          tinfo(core, 1).ceiling);
    CHECK(req(core, a3, 2, 5) == CG_SUSPENDED && rec.last_suspend.reason == CG_WHY_FAIR_SHARE,
          "a3 waits");
    CHECK_CORE(core);
    CHECK(cg_container_remove(core, a1, 0) == CG_OK, "a1 leaves");
    CHECK(info(core, a3).state == CG_STATE_RUNNING && info(core, a3).used == 5, "a3 resumed");
    CHECK_CORE(core);
    cg_core_free(core);
}

/* The deadlock a rule of "an over-share tenant is granted nothing more" would cause: tenant 1's
 * c1 and c2 (L 40) hold and use 30 each and each must get 10 more to finish; tenant 2 arrives
 * (shares 50/50) and takes 30 of the 40 free. Under the plain rule tenant 1 (60 > 50) gets
 * nothing, u cannot get its 50: all three wait for ever. The floor rule lets c1 finish. */
static void test_over_share_may_finish(void)
{
    recorder rec = {0};
    cg_core *core = mk(&rec, 100, CG_FAIR_STATIC);
    cg_cid c1 = mk_ctr(core, 1, 30), c2 = mk_ctr(core, 1, 30);
    CHECK(req(core, c1, 1, 30) == CG_GRANTED && req(core, c2, 2, 30) == CG_GRANTED, "30 each");
    bool waits = true;
    CHECK(cg_container_set_limit(core, c1, 40, 0, &waits) == CG_OK && !waits, "c1 to 40");
    CHECK(cg_container_set_limit(core, c2, 40, 0, &waits) == CG_OK && !waits, "c2 to 40");
    cg_cid u = mk_ctr(core, 2, 50);
    CHECK(info(core, u).assigned == 30, "u assigned %" PRIu64, info(core, u).assigned);
    CHECK(tinfo(core, 1).share == 50 && tinfo(core, 1).ceiling == 70, "ceiling %" PRIu64,
          tinfo(core, 1).ceiling);
    CHECK(req(core, c1, 3, 10) == CG_GRANTED, "c1 may finish though over its share");
    CHECK(req(core, c2, 4, 10) == CG_SUSPENDED, "c2 waits for memory");
    CHECK(req(core, u, 5, 50) == CG_SUSPENDED, "u waits for memory");
    CHECK_CORE(core);
    CHECK(cg_container_remove(core, c1, 0) == CG_OK, "c1 leaves");
    CHECK(info(core, c2).state == CG_STATE_RUNNING, "c2 resumed");
    CHECK(info(core, u).state == CG_STATE_RUNNING, "u resumed");
    CHECK_CORE(core);
    cg_core_free(core);
}

/* A tenant of weight 1 beside one of weight 9 has a share of 10, yet its container of limit 40
 * can run to its limit: the ceiling is at least the largest limit. */
static void test_ceiling_at_least_largest_limit(void)
{
    recorder rec = {0};
    cg_core *core = mk(&rec, 100, CG_FAIR_STATIC);
    CHECK(cg_tenant_set_weight(core, 2, 9, 0) == CG_OK, "weight");
    cg_cid b = mk_ctr(core, 2, 50);
    cg_cid a = mk_ctr(core, 1, 40);
    CHECK(tinfo(core, 1).share == 10 && tinfo(core, 1).ceiling == 40, "share %" PRIu64
          " ceiling %" PRIu64, tinfo(core, 1).share, tinfo(core, 1).ceiling);
    CHECK(req(core, a, 1, 40) == CG_GRANTED, "a to its limit");
    CHECK(req(core, b, 2, 50) == CG_GRANTED, "b");
    cg_cid a2 = mk_ctr(core, 1, 40);
    CHECK(info(core, a2).assigned == 0 && req(core, a2, 3, 1) == CG_SUSPENDED, "a2 waits");
    CHECK_CORE(core);
    cg_core_free(core);
}

/* Eq. 1: with profiles of 3+ runs, Set_i = (g_i/sum g + peak_i/sum peak + t_i/sum t) / 3;
 * without, the job count alone (C0 = 1: seed 001's "first few executions"). */
static void test_adaptive(void)
{
    recorder rec = {0};
    cg_core *core = mk(&rec, 1200, CG_FAIR_ADAPTIVE);
    mk_ctr(core, 1, 100);
    mk_ctr(core, 2, 100);
    mk_ctr(core, 2, 100);
    CHECK(tinfo(core, 1).share == 400 && tinfo(core, 2).share == 800,
          "no profiles: by job count, 1 and 2 jobs %" PRIu64, tinfo(core, 1).share);
    cg_tenant_profile p[2] = {{.tenant = 1, .runs = 5, .peak_bytes = 3, .duration_s = 1},
                              {.tenant = 2, .runs = 5, .peak_bytes = 1, .duration_s = 1}};
    CHECK(cg_fair_share_update(core, 0, p, 2) == CG_OK, "update");
    /* Set_1 = (1/3 + 3/4 + 1/2)/3 = 19/36, Set_2 = (2/3 + 1/4 + 1/2)/3 = 17/36. */
    CHECK(tinfo(core, 1).share == 633 && tinfo(core, 2).share == 566, "eq1 %" PRIu64 " %" PRIu64,
          tinfo(core, 1).share, tinfo(core, 2).share);
    /* Tenant 2 with too few runs: job counts alone for it (C0 = 1), 1/3 each for tenant 1. */
    p[1].runs = 2;
    CHECK(cg_fair_share_update(core, 0, p, 2) == CG_OK, "update");
    /* Set_1 = (1/3 + 1 + 1)/3 = 7/9, Set_2 = 2/3: shares 1200 x 21/39 and 18/39. */
    CHECK(tinfo(core, 1).share == 646 && tinfo(core, 2).share == 553, "eq1 partial %" PRIu64,
          tinfo(core, 1).share);
    CHECK(cg_tenant_set_weight(core, 2, 2, 0) == CG_OK, "weight");
    /* Weighted: 7/9 against 2 x 2/3 = 4/3: 1200 x 7/19 = 442. */
    CHECK(tinfo(core, 1).share == 442, "weighted %" PRIu64, tinfo(core, 1).share);
    CHECK(cg_fair_share_update(core, 0, NULL, 0) == CG_OK, "forget");
    /* Job counts again, weighted: 1 x 1/3 against 2 x 2/3: 1200 x 1/5. */
    CHECK(tinfo(core, 1).share == 240, "job counts again, weights 1:2 %" PRIu64,
          tinfo(core, 1).share);
    CHECK_CORE(core);
    cg_core_free(core);
}

static void test_bad_input(void)
{
    recorder rec = {0};
    cg_core *core = mk(&rec, 100, CG_FAIR_STATIC);
    cg_cid a = mk_ctr(core, 1, 10);
    CHECK(cg_tenant_set_weight(core, 1, 4, 0) == CG_OK, "weight 4");
    uint64_t h = rec.hash;
    long long bad[] = {0, -1, -4, CG_TENANT_WEIGHT_MAX + 1LL, (long long)1 << 40};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        CHECK(cg_tenant_set_weight(core, 1, bad[i], 0) == CG_ERR_INVALID, "weight %lld", bad[i]);
    CHECK(cg_tenant_weight(core, 1) == 4 && cg_tenant_weight(core, 7) == 1, "weights unchanged");
    CHECK(cg_set_fair_share(core, CG_FAIR__COUNT, 0) == CG_ERR_INVALID, "mode");
    CHECK(cg_set_fair_share(core, (cg_fair_mode)-1, 0) == CG_ERR_INVALID, "mode -1");
    CHECK(cg_get_fair_share(core) == CG_FAIR_STATIC, "mode unchanged");
    cg_tenant_profile p[2] = {{.tenant = 1, .runs = 5, .peak_bytes = 1, .duration_s = 1},
                              {.tenant = 1, .runs = 5, .peak_bytes = 1, .duration_s = 1}};
    CHECK(cg_fair_share_update(core, 0, p, 2) == CG_ERR_INVALID, "tenant twice");
    p[1].tenant = 2;
    double badfig[] = {0, -1, NAN, INFINITY};
    for (size_t i = 0; i < 4; i++) {
        p[1].peak_bytes = badfig[i];
        CHECK(cg_fair_share_update(core, 0, p, 2) == CG_ERR_INVALID, "peak %g", badfig[i]);
        p[1].peak_bytes = 1;
        p[1].duration_s = badfig[i];
        CHECK(cg_fair_share_update(core, 0, p, 2) == CG_ERR_INVALID, "duration %g", badfig[i]);
        p[1].duration_s = 1;
    }
    CHECK(cg_fair_share_update(core, 0, NULL, 1) == CG_ERR_INVALID, "NULL with n");
    CHECK(rec.hash == h, "no event from bad input");
    cg_tenant_info ti;
    CHECK(cg_tenant_get(core, 1, 1, &ti) == CG_ERR_NO_DEVICE, "device");
    cg_fair_mode m;
    CHECK(cg_fair_mode_parse("static", &m) && m == CG_FAIR_STATIC, "parse");
    CHECK(!cg_fair_mode_parse("Static", &m) && !cg_fair_mode_parse("", &m) &&
              !cg_fair_mode_parse(NULL, &m), "parse bad");
    CHECK(strcmp(cg_fair_mode_name(CG_FAIR_ADAPTIVE), "adaptive") == 0, "name");
    CHECK(strcmp(cg_reason_str(CG_WHY_FAIR_SHARE), "unknown") != 0, "reason name");
    (void)a;
    CHECK_CORE(core);
    cg_core_free(core);
}

/* ---- a random workload, used by the equivalence and property tests ----------------------- */

typedef struct {
    uint64_t s;
} rng;

static uint64_t rnd(rng *r, uint64_t n)
{
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return (z ^ (z >> 31)) % n;
}

#define MAXC 48

typedef struct {
    cg_core *core;
    cg_cid live[MAXC];
    unsigned nlive, ndev, ntenants;
    uint64_t reqid;
    bool tenants;          /* give containers tenants (else all tenant 0) */
    bool fair_ops;         /* change modes, weights, profiles */
} world;

/* One random operation; returns false when cg_core_check fails. */
static void step(world *w, rng *r, cg_time now)
{
    cg_core *core = w->core;
    unsigned op = (unsigned)rnd(r, 100);
    if ((op < 18 || w->nlive == 0) && w->nlive < MAXC) {
        cg_container_spec spec = {.device = rnd(r, 4) == 0 ? -1 : (int)rnd(r, w->ndev),
                                  .limit = 1 + rnd(r, 60),
                                  .tenant = (uint32_t)rnd(r, w->ntenants)};
        if (!w->tenants)
            spec.tenant = 0;     /* the same draws either way: the same operations */
        cg_cid cid;
        if (cg_container_create_spec(core, &spec, now, &cid) == CG_OK)
            w->live[w->nlive++] = cid;
        return;
    }
    cg_cid cid = w->live[rnd(r, w->nlive)];
    cg_container_info ci;
    if (cg_container_get(core, cid, now, &ci) != CG_OK)
        return;
    if (op < 60) {
        cg_request(core, cid, 1 + rnd(r, 3), ++w->reqid, 1 + rnd(r, 25), now, NULL);
    } else if (op < 70) {
        cg_process_info pi[4];
        size_t n = cg_container_processes(core, cid, pi, 4);
        if (n)
            cg_process_exit(core, cid, pi[rnd(r, n < 4 ? n : 4)].pid, now);
    } else if (op < 76) {
        cg_process_info pi[4];
        size_t n = cg_container_processes(core, cid, pi, 4);
        if (n && pi[0].used)
            cg_release(core, cid, pi[0].pid, 1 + rnd(r, pi[0].used), now);
    } else if (op < 86) {
        if (ci.npending == 0 || rnd(r, 3) == 0) {
            cg_container_remove(core, cid, now);
            for (unsigned i = 0; i < w->nlive; i++)
                if (w->live[i] == cid)
                    w->live[i] = w->live[--w->nlive];
        }
    } else if (op < 92) {
        cg_container_set_limit(core, cid, 1 + rnd(r, 70), now, NULL);
    } else if (w->fair_ops) {
        if (op < 94) {
            cg_set_fair_share(core, (cg_fair_mode)rnd(r, CG_FAIR__COUNT), now);
        } else if (op < 97) {
            cg_tenant_set_weight(core, (uint32_t)rnd(r, w->ntenants), (long long)rnd(r, 6), now);
        } else {
            cg_tenant_profile p[4];
            size_t n = 0;
            for (uint32_t t = 0; t < w->ntenants; t++)
                if (rnd(r, 3))
                    p[n++] = (cg_tenant_profile){.tenant = t, .runs = (unsigned)rnd(r, 6),
                                                 .peak_bytes = 1 + (double)rnd(r, 50),
                                                 .duration_s = 1 + (double)rnd(r, 500)};
            cg_fair_share_update(core, now, p, n);
        }
    }
}

static cg_core *mk_world(world *w, recorder *rec, rng *r, unsigned ndev)
{
    cg_config cfg = {.resume = (cg_resume_policy)rnd(r, CG_RESUME__COUNT), .seed = r->s,
                     .sink = record, .sink_ctx = rec};
    w->core = cg_core_new(&cfg);
    w->ndev = ndev;
    for (unsigned i = 0; i < ndev; i++)
        cg_device_add(w->core, 100, 0, rnd(r, 3), NULL);
    return w->core;
}

/* Mode none decides exactly as the core without tenants: the same event stream. */
static void test_none_is_unchanged(void)
{
    for (uint64_t seed = 1; seed <= 20; seed++) {
        uint64_t hashes[2];
        for (int with = 0; with < 2; with++) {
            recorder rec = {0};
            rng r = {seed};
            world w = {.ntenants = 4, .tenants = with};
            mk_world(&w, &rec, &r, 2);
            rng ops = {seed * 7};
            for (int i = 0; i < 2000; i++)
                step(&w, &ops, (cg_time)i);
            hashes[with] = rec.hash;
            cg_core_free(w.core);
        }
        CHECK(hashes[0] == hashes[1], "seed %" PRIu64 ": tenants changed mode none", seed);
    }
}

/* Every allocation of creation, a weight, a mode and an update fails once: CG_ERR_NOMEM and
 * nothing changed. */
static size_t fs_fail_at, fs_nallocs;
static void *fail_alloc(void *ctx, size_t n)
{
    (void)ctx;
    return ++fs_nallocs == fs_fail_at ? NULL : malloc(n);
}
static void plain_free(void *ctx, void *p)
{
    (void)ctx;
    free(p);
}

static void test_fault_injection(void)
{
    unsigned nomem = 0;
    for (fs_fail_at = 1; fs_fail_at < 80; fs_fail_at++) {
        recorder rec = {0};
        fs_nallocs = 0;
        cg_config cfg = {.sink = record, .sink_ctx = &rec, .mem_alloc = fail_alloc,
                         .mem_free = plain_free};
        cg_core *core = cg_core_new(&cfg);
        if (!core)
            continue;
        cg_device_add(core, 100, 0, 0, NULL);
        for (int i = 0; i < 40; i++) {
            uint64_t h = rec.hash;
            unsigned n = 0;
            for (cg_cid c = cg_container_next(core, 0); c; c = cg_container_next(core, c))
                n++;
            cg_fair_mode mode = cg_get_fair_share(core);
            unsigned wt = cg_tenant_weight(core, 3);
            cg_status st;
            cg_container_spec spec = {.device = 0, .limit = 5, .tenant = (uint32_t)i % 3};
            cg_tenant_profile p = {.tenant = 3, .runs = 4, .peak_bytes = 1, .duration_s = 1};
            switch (i % 4) {
            case 0: st = cg_set_fair_share(core, CG_FAIR_STATIC + (i / 4) % 2, 0); break;
            case 1: st = cg_container_create_spec(core, &spec, 0, NULL); break;
            case 2: st = cg_tenant_set_weight(core, 3, 2 + i, 0); break;
            default: st = cg_fair_share_update(core, 0, &p, 1); break;
            }
            if (st == CG_ERR_NOMEM) {
                nomem++;
                unsigned m = 0;
                for (cg_cid c = cg_container_next(core, 0); c; c = cg_container_next(core, c))
                    m++;
                CHECK(m == n && rec.hash == h && cg_get_fair_share(core) == mode &&
                          cg_tenant_weight(core, 3) == wt, "NOMEM changed something (%zu)",
                      fs_fail_at);
            }
            CHECK_CORE(core);
        }
        cg_core_free(core);
    }
    CHECK(nomem > 5, "allocation failures seen: %u", nomem);
}

/* ---- the property test ------------------------------------------------------------------- */

static void test_property(void)
{
    const char *env = getenv("CONVGPU_FAIRPROP_EVENTS");
    long total = env ? atol(env) : 60000;
    long done = 0;
    unsigned long fair_suspends = 0, drained = 0;
    for (uint64_t seed = 1; done < total; seed++) {
        recorder rec = {0};
        rng r = {seed * 1000003};
        world w = {.ntenants = 1 + (unsigned)rnd(&r, 4), .tenants = true, .fair_ops = true};
        mk_world(&w, &rec, &r, 1 + (unsigned)rnd(&r, 2));
        cg_set_fair_share(w.core, (cg_fair_mode)(1 + rnd(&r, 2)), 0);
        cg_time now = 0;
        for (int i = 0; i < 400 && done < total; i++, done++) {
            step(&w, &r, ++now);
            const char *why = cg_core_check(w.core);
            if (why) {
                CHECK(why == NULL, "seed %" PRIu64 " op %d: %s", seed, i, why);
                done = total;
                break;
            }
        }
        /* Drain: only containers with nothing pending finish (their processes keep what they
         * hold until then); every device must empty. Each finish lets the waiting progress:
         * a suspended container's pending requests are granted or, once it runs, it finishes. */
        for (unsigned guard = 0; w.nlive && guard < 10 * MAXC; guard++) {
            unsigned k = w.nlive;
            for (unsigned i = 0; i < w.nlive; i++) {
                cg_container_info ci;
                cg_container_get(w.core, w.live[i], now, &ci);
                if (ci.npending == 0) {
                    k = i;
                    break;
                }
            }
            if (k == w.nlive) {
                CHECK(false, "seed %" PRIu64 ": deadlock, %u containers all suspended", seed,
                      w.nlive);
                break;
            }
            cg_container_remove(w.core, w.live[k], ++now);
            w.live[k] = w.live[--w.nlive];
            const char *why = cg_core_check(w.core);
            CHECK(why == NULL, "seed %" PRIu64 " drain: %s", seed, why);
        }
        drained += w.nlive == 0;
        for (unsigned i = 0; i < w.ndev; i++) {
            cg_device_info di;
            cg_device_get(w.core, i, &di);
            CHECK(w.nlive || (di.assigned == 0 && di.used == 0), "device %u not empty", i);
        }
        fair_suspends += rec.nsuspend_fair;
        cg_core_free(w.core);
    }
    printf("fair-share property: %ld operations, %lu fair-share suspensions, %lu episodes drained\n",
           done, fair_suspends, drained);
    CHECK(fair_suspends > 50, "the ceilings should bind often: %lu", fair_suspends);
}

int main(void)
{
    test_static_ceiling_and_weight();
    test_over_share_keeps_what_it_holds();
    test_over_share_may_finish();
    test_ceiling_at_least_largest_limit();
    test_adaptive();
    test_bad_input();
    test_none_is_unchanged();
    test_fault_injection();
    test_property();
    if (failures) {
        fprintf(stderr, "%d failure(s)\n", failures);
        return 1;
    }
    printf("fair-share tests passed\n");
    return 0;
}

/* test_gang.c — containers on several devices (gang.c): all-or-nothing admission with the whole
 * limit on each device, refusals that emit nothing and change nothing, requests that never
 * suspend, limit changes that move the assignment with the limit, no swap, fair share, restore,
 * injected allocation failures, and a random mix of gangs and overcommitted single containers
 * that always drains (no cycle of waits across devices). cg_core_check after every step. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "core_test.h"

static unsigned nevents, nsuspends;
static void count(void *ctx, const cg_event *ev)
{
    (void)ctx;
    nevents++;
    nsuspends += ev->kind == CG_EV_SUSPEND;
}

static cg_core *mk(unsigned ndev, cg_bytes cap, cg_bytes swap_limit)
{
    cg_config cfg = {.sink = count, .mem_alloc = test_alloc, .mem_free = test_free,
                     .swap_limit = swap_limit};
    cg_core *core = cg_core_new(&cfg);
    for (unsigned i = 0; i < ndev; i++)
        CHECK(cg_device_add(core, cap, 0, 0, NULL) == CG_OK, "device %u", i);
    return core;
}

static cg_device_info dev(const cg_core *core, unsigned i)
{
    cg_device_info di = {0};
    cg_device_get(core, i, &di);
    return di;
}

/* What must not change across a refusal: every device's numbers. */
static void snapshot(const cg_core *core, cg_device_info *out)
{
    for (unsigned i = 0; i < cg_device_count(core); i++)
        out[i] = dev(core, i);
}
static bool same(const cg_core *core, const cg_device_info *was)
{
    for (unsigned i = 0; i < cg_device_count(core); i++) {
        cg_device_info now = dev(core, i);
        if (now.assigned != was[i].assigned || now.used != was[i].used ||
            now.ncontainers != was[i].ncontainers || now.compute_hard_pct != was[i].compute_hard_pct)
            return false;
    }
    return true;
}

static void test_admission(void)
{
    cg_core *core = mk(3, 100, 0);
    cg_container_spec spec = {.device = -1, .limit = 40, .compute_pct = 30,
                              .compute_mode = CG_COMPUTE_HARD, .priority = 2};
    const unsigned on[] = {2, 0};
    cg_cid m[2];
    CHECK(cg_gang_create(core, &spec, 2, on, 0, m) == CG_OK, "a gang on devices 2 and 0");
    for (unsigned i = 0; i < 2; i++) {
        cg_container_info ci = info(core, m[i]);
        CHECK(ci.device == on[i] && ci.limit == 40 && ci.assigned == 40 && ci.reserved &&
                  ci.gang == m[0] && ci.no_swap && ci.compute_pct == 30 && ci.priority == 2,
              "member %u: device %u limit %llu assigned %llu gang %u", i, ci.device,
              (unsigned long long)ci.limit, (unsigned long long)ci.assigned, ci.gang);
    }
    CHECK(dev(core, 1).assigned == 0 && dev(core, 1).ncontainers == 0, "device 1 untouched");
    CHECK(dev(core, 0).compute_hard_pct == 30, "the share is per device");
    CHECK_CORE(core);

    /* Requests within the limit are granted from the assignment, never suspended. */
    cg_outcome o;
    CHECK(cg_request(core, m[0], 7, 1, 40, 0, &o) == CG_OK && o == CG_GRANTED, "whole limit");
    CHECK(cg_request(core, m[0], 7, 2, 1, 0, &o) == CG_OK && o == CG_REJECTED, "over: refused");
    CHECK(cg_release(core, m[0], 7, 40, 0) == CG_OK, "released");
    CHECK(info(core, m[0]).assigned == 40, "the assignment stays with the member");
    CHECK_CORE(core);

    /* Refusals: nothing changes, nothing is emitted. */
    cg_device_info was[3];
    snapshot(core, was);
    unsigned ev = nevents;
    cg_cid x[3];
    const unsigned dup[] = {1, 1}, far[] = {1, 3}, all3[] = {0, 1, 2};
    CHECK(cg_gang_create(core, &spec, 2, dup, 0, x) == CG_ERR_NO_DEVICE, "a device twice");
    CHECK(cg_gang_create(core, &spec, 2, far, 0, x) == CG_ERR_NO_DEVICE, "no device 3");
    CHECK(cg_gang_create(core, &spec, 4, all3, 0, x) == CG_ERR_NO_DEVICE, "more than the node");
    CHECK(cg_gang_create(core, &spec, 0, all3, 0, x) == CG_ERR_INVALID, "zero devices");
    cg_container_spec big = spec;
    big.limit = 101;
    CHECK(cg_gang_create(core, &big, 2, far, 0, x) == CG_ERR_NO_DEVICE, "bad index first");
    const unsigned d12[] = {1, 2};
    CHECK(cg_gang_create(core, &big, 2, d12, 0, x) == CG_ERR_TOO_LARGE, "above capacity");
    big.limit = 70; /* fits device 1, not device 2 (40 held there) */
    CHECK(cg_gang_create(core, &big, 2, d12, 0, x) == CG_ERR_NOT_FREE, "not free on one");
    cg_container_spec hard = spec;
    hard.compute_pct = 80;
    CHECK(cg_gang_create(core, &hard, 3, all3, 0, x) == CG_ERR_NO_COMPUTE, "shares over 100");
    cg_container_spec zero = spec;
    zero.limit = 0;
    CHECK(cg_gang_create(core, &zero, 2, d12, 0, x) == CG_ERR_INVALID, "no limit");
    CHECK(nevents == ev, "refusals emitted %u events", nevents - ev);
    CHECK(same(core, was), "refusals changed a device");
    CHECK_CORE(core);

    /* A single container's cid after refusals: trials consume none. */
    cg_cid s;
    CHECK(cg_container_create(core, 1, 10, 0, &s) == CG_OK && s == m[1] + 1,
          "next cid %u after %u", s, m[1]);
    CHECK(cg_container_remove(core, m[0], 0) == CG_OK && cg_container_remove(core, m[1], 0) == CG_OK,
          "members removed one by one");
    CHECK(dev(core, 0).assigned == 0 && dev(core, 2).assigned == 0, "their memory is free");
    CHECK_CORE(core);
    cg_core_free(core);
}

/* No devices named: the ones that fit, by the placement policy's preference (all links equal
 * here, so topology does not decide; cg_place_devices lists them in index order). */
static void test_placement(void)
{
    static const struct { cg_placement_policy p; unsigned a, b; } want[] = {
        {CG_PLACE_FIRST_FIT, 0, 1}, {CG_PLACE_LEAST_LOADED, 0, 2}, {CG_PLACE_BINPACK, 0, 1}};
    for (unsigned i = 0; i < 3; i++) {
        cg_core *core = mk(3, 100, 0);
        cg_set_placement_policy(core, want[i].p);
        cg_cid s, m[3];
        cg_outcome o;
        CHECK(cg_container_create(core, 1, 50, 0, &s) == CG_OK, "a single on 1");
        CHECK(cg_request(core, s, 1, 1, 50, 0, &o) == CG_OK && o == CG_GRANTED, "holding 50");
        cg_container_spec spec = {.device = -1, .limit = 30};
        CHECK(cg_gang_create(core, &spec, 2, NULL, 0, m) == CG_OK, "placed");
        CHECK(info(core, m[0]).device == want[i].a && info(core, m[1]).device == want[i].b,
              "%s: devices %u,%u", cg_placement_policy_name(want[i].p), info(core, m[0]).device,
              info(core, m[1]).device);
        spec.limit = 80; /* at most one device has 80 free now */
        unsigned ev = nevents;
        CHECK(cg_gang_create(core, &spec, 2, NULL, 0, m) == CG_ERR_NOT_FREE, "not free on 2");
        spec.limit = 101;
        CHECK(cg_gang_create(core, &spec, 2, NULL, 0, m) == CG_ERR_TOO_LARGE, "too large");
        CHECK(nevents == ev, "refusals emit nothing");
        CHECK_CORE(core);
        cg_core_free(core);
    }
}

static void test_limits_and_swap(void)
{
    cg_core *core = mk(2, 100, 1000);
    cg_container_spec spec = {.device = -1, .limit = 30};
    const unsigned on[] = {0, 1};
    cg_cid m[2], s;
    CHECK(cg_gang_create(core, &spec, 2, on, 0, m) == CG_OK, "gang");
    CHECK(cg_container_create(core, 1, 60, 0, &s) == CG_OK, "a single beside it on 1");
    cg_outcome o;
    CHECK(cg_request(core, s, 9, 1, 60, 0, &o) == CG_OK && o == CG_GRANTED, "single fills 60");
    CHECK(cg_container_set_limit(core, m[0], 50, 0, NULL) == CG_OK, "raise where free");
    CHECK(info(core, m[0]).limit == 50 && info(core, m[0]).assigned == 50, "A follows L up");
    unsigned ev = nevents;
    CHECK(cg_container_set_limit(core, m[1], 50, 0, NULL) == CG_ERR_NOT_FREE, "not free on 1");
    CHECK(nevents == ev && info(core, m[1]).limit == 30 && info(core, m[1]).assigned == 30,
          "a refused raise changes nothing");
    CHECK(cg_container_set_limit(core, m[1], 10, 0, NULL) == CG_OK, "lowering");
    CHECK(info(core, m[1]).limit == 10 && info(core, m[1]).assigned == 10, "A follows L down");
    CHECK(cg_container_set_no_swap(core, m[0], false) == CG_ERR_STATE, "members stay in");
    CHECK(cg_swap_order(core, m[0], true, 0) == CG_ERR_NO_SWAP, "the operator cannot swap one");
    CHECK_CORE(core);
    cg_core_free(core);
}

static void test_fair_share(void)
{
    cg_core *core = mk(2, 100, 0);
    CHECK(cg_set_fair_share(core, CG_FAIR_STATIC, 0) == CG_OK, "static fair share");
    cg_container_spec t1 = {.device = 0, .limit = 50, .tenant = 1};
    cg_container_spec t2 = {.device = 0, .limit = 10, .tenant = 2};
    cg_cid a, b, m[2];
    CHECK(cg_container_create_spec(core, &t1, 0, &a) == CG_OK, "tenant 1 on 0");
    CHECK(cg_container_create_spec(core, &t2, 0, &b) == CG_OK, "tenant 2 on 0");
    cg_outcome o;
    CHECK(cg_request(core, a, 1, 1, 50, 0, &o) == CG_OK && o == CG_GRANTED, "tenant 1 holds 50");
    cg_container_spec g = {.device = -1, .limit = 40, .tenant = 1};
    const unsigned on[] = {0, 1};
    cg_device_info was[2];
    snapshot(core, was);
    unsigned ev = nevents;
    CHECK(cg_gang_create(core, &g, 2, on, 0, m) == CG_ERR_NOT_FREE,
          "40 more would take tenant 1 over its ceiling on device 0");
    CHECK(nevents == ev && same(core, was), "refused without a trace");
    CHECK_CORE(core);
    g.tenant = 2;
    CHECK(cg_gang_create(core, &g, 2, on, 0, m) == CG_OK, "tenant 2 has the room");
    CHECK_CORE(core);
    cg_core_free(core);
}

static void test_restore(void)
{
    cg_core *core = mk(3, 100, 0);
    cg_container_spec spec = {.device = 0, .limit = 20};
    cg_cid m[3], s;
    for (unsigned i = 0; i < 3; i++) {
        spec.device = (int)i;
        CHECK(cg_container_restore_spec(core, &spec, 20, i, &m[i]) == CG_OK, "member %u", i);
    }
    spec.device = 0;
    CHECK(cg_container_restore_spec(core, &spec, 5, 9, &s) == CG_OK, "a partly assigned one");
    const cg_cid partly[] = {m[0], s}, twice[] = {m[0], m[0]}, unknown[] = {m[0], 999};
    const cg_cid shared_dev[] = {m[0], m[1], m[2], s};
    CHECK(cg_gang_restore(core, partly, 2) == CG_ERR_INVALID, "assignment below the limit");
    CHECK(cg_gang_restore(core, twice, 2) == CG_ERR_INVALID, "a member twice");
    CHECK(cg_gang_restore(core, unknown, 2) == CG_ERR_INVALID, "an unknown member");
    CHECK(cg_gang_restore(core, shared_dev, 4) == CG_ERR_INVALID, "two on one device");
    CHECK(!info(core, m[0]).reserved && info(core, m[0]).gang == CG_CID_NONE, "nothing linked");
    CHECK(cg_gang_restore(core, m, 3) == CG_OK, "re-linked");
    for (unsigned i = 0; i < 3; i++)
        CHECK(info(core, m[i]).gang == m[0] && info(core, m[i]).reserved, "member %u", i);
    CHECK(cg_gang_restore(core, m, 3) == CG_ERR_INVALID, "already in a gang");
    CHECK_CORE(core);
    cg_core_free(core);
}

/* Every allocation the core makes during a gang's creation fails in turn: the call says NOMEM
 * and the devices are as they were. */
static void test_alloc_failures(void)
{
    for (int k = 0;; k++) {
        cg_core *core = mk(3, 100, 0);
        cg_cid s;
        CHECK(cg_container_create(core, 1, 30, 0, &s) == CG_OK, "a single");
        cg_device_info was[3];
        snapshot(core, was);
        cg_container_spec spec = {.device = -1, .limit = 40};
        const unsigned on[] = {0, 1, 2};
        cg_cid m[3];
        nalloc = 0;
        fail_at = k;
        cg_status st = cg_gang_create(core, &spec, 3, on, 0, m);
        fail_at = -1;
        CHECK_CORE(core);
        if (st == CG_OK) {
            cg_core_free(core);
            CHECK(k > 0, "no allocation at all?");
            break;
        }
        CHECK(st == CG_ERR_NOMEM, "failure %d: %s", k, cg_status_str(st));
        CHECK(same(core, was), "failure %d left a trace", k);
        cg_core_free(core);
    }
}

/* Random gangs and overcommitted singles on 3 devices; whatever happens, once every process
 * releases, nothing waits. A gang member never suspends. */
static uint64_t rnd_state = 88172645463325252ull;
static unsigned rnd(unsigned n)
{
    rnd_state ^= rnd_state << 13;
    rnd_state ^= rnd_state >> 7;
    rnd_state ^= rnd_state << 17;
    return (unsigned)(rnd_state % n);
}

static void test_random_drain(void)
{
    for (int round = 0; round < 200; round++) {
        cg_core *core = mk(3, 100, 0);
        cg_cid live[64];
        unsigned nlive = 0;
        cg_reqid req = 1;
        for (int step = 0; step < 60; step++) {
            unsigned what = rnd(4);
            if (what == 0 && nlive + 3 <= 64) {
                unsigned n = 2 + rnd(2), devs[3] = {0, 1, 2};
                for (unsigned i = 0; i < 3; i++) {
                    unsigned j = rnd(3), t = devs[i];
                    devs[i] = devs[j];
                    devs[j] = t;
                }
                cg_container_spec spec = {.device = -1, .limit = 5 + rnd(40)};
                cg_cid m[3];
                if (cg_gang_create(core, &spec, n, devs, 0, m) == CG_OK)
                    for (unsigned i = 0; i < n; i++)
                        live[nlive++] = m[i];
            } else if (what == 1 && nlive < 64) {
                cg_cid s;
                if (cg_container_create(core, (int)rnd(3), 10 + rnd(90), 0, &s) == CG_OK)
                    live[nlive++] = s;
            } else if (nlive) {
                cg_cid c = live[rnd(nlive)];
                cg_container_info ci = info(core, c);
                cg_outcome o;
                unsigned before = nsuspends;
                cg_request(core, c, 1 + rnd(3), req++, 1 + rnd(30), 0, &o);
                if (ci.reserved)
                    CHECK(nsuspends == before, "a gang member suspended");
            }
            CHECK_CORE(core);
        }
        /* Every process ends: whatever waited has run and ended too. */
        for (unsigned i = 0; i < nlive; i++)
            for (cg_pid p = 1; p <= 3; p++)
                cg_process_exit(core, live[i], p, 0);
        for (unsigned i = 0; i < nlive; i++)
            for (cg_pid p = 1; p <= 3; p++)
                cg_process_exit(core, live[i], p, 0);
        for (unsigned d = 0; d < 3; d++)
            CHECK(dev(core, d).nsuspended == 0, "round %d: device %u still waits", round, d);
        CHECK_CORE(core);
        cg_core_free(core);
    }
}

int main(void)
{
    test_admission();
    test_placement();
    test_limits_and_swap();
    test_fair_share();
    test_restore();
    test_alloc_failures();
    test_random_drain();
    if (failures)
        fprintf(stderr, "test_gang: %d failures\n", failures);
    return failures != 0;
}

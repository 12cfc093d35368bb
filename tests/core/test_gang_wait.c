/* test_gang_wait.c — containers on several devices that wait instead of being refused
 * (cg_gang_create_or_queue; docs/SCHEDULING.md, "Several GPUs that wait"):
 *   - by hand: a gang that lacks memory is queued, holds nothing, its requests wait (CG_WHY_GANG);
 *     memory returning on one of its devices admits nothing, on the last one admits every member
 *     at once and grants the waiting request; what could never fit is still refused; a queued
 *     gang's limit cannot change; a restart restores a queued gang queued;
 *   - two gangs on the same two devices in opposite orders, each device half held by a single
 *     container: neither holds anything while it waits, and both run in turn;
 *   - a property test: 400 random walks of single containers, gangs (some queued) and requests,
 *     swap on in half of them, cg_core_check after every step (every device banker's-safe, every
 *     gang wholly queued or wholly admitted, no queued gang left that could be admitted); then
 *     the drain: processes end and containers leave, gangs only once admitted; a queued gang
 *     left when nothing else holds memory would be a deadlock;
 *   - the bound on a queued gang's wait (cg_gang_expire, convgpud --gang-wait-max): before it
 *     nothing changes; at it every waiting request of every member is rejected
 *     (CG_WHY_GANG_EXPIRED), the gang holds nothing and is never admitted when memory returns,
 *     later requests are rejected at once; the property walks give up gangs at random too. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "core_test.h"

static unsigned nresumes, ngang_waits, nexpired_rejects;
static void count(void *ctx, const cg_event *ev)
{
    (void)ctx;
    nresumes += ev->kind == CG_EV_RESUME;
    nexpired_rejects += ev->kind == CG_EV_REJECT && ev->reason == CG_WHY_GANG_EXPIRED;
    ngang_waits += ev->kind == CG_EV_SUSPEND && ev->reason == CG_WHY_GANG;
}

static cg_core *mk(unsigned ndev, cg_bytes cap, cg_bytes swap_limit)
{
    cg_config cfg = {.sink = count, .swap_limit = swap_limit};
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

static void test_by_hand(void)
{
    cg_core *core = mk(3, 100, 0);
    cg_cid a, b;
    cg_outcome o;
    /* Singles hold 70 on device 0 and 80 on device 1. */
    CHECK(cg_container_create(core, 0, 70, 0, &a) == CG_OK, "single on 0");
    CHECK(cg_container_create(core, 1, 80, 0, &b) == CG_OK, "single on 1");
    CHECK(cg_request(core, a, 1, 1, 70, 0, &o) == CG_OK && o == CG_GRANTED, "a holds 70");
    CHECK(cg_request(core, b, 1, 2, 80, 0, &o) == CG_OK && o == CG_GRANTED, "b holds 80");
    cg_container_spec spec = {.device = -1, .limit = 50};
    const unsigned on[] = {0, 1};
    cg_cid m[2];
    CHECK(cg_gang_create(core, &spec, 2, on, 0, m) == CG_ERR_NOT_FREE, "plain create refuses");
    bool queued = false;
    CHECK(cg_gang_create_or_queue(core, &spec, 2, on, 1, m, &queued) == CG_OK && queued,
          "queued instead");
    for (unsigned i = 0; i < 2; i++) {
        cg_container_info ci = info(core, m[i]);
        CHECK(ci.queued && !ci.reserved && ci.assigned == 0 && ci.gang == m[0] && ci.no_swap &&
                  ci.device == on[i],
              "member %u queued with nothing assigned", i);
    }
    CHECK(dev(core, 0).assigned == 70 && dev(core, 1).assigned == 80, "nothing taken");
    CHECK_CORE(core);
    CHECK(cg_container_set_limit(core, m[1], 40, 1, NULL) == CG_ERR_STATE,
          "a queued member's limit does not change");
    /* A request of the first member waits for the gang. */
    unsigned gw = ngang_waits;
    CHECK(cg_request(core, m[0], 7, 3, 20, 2, &o) == CG_OK && o == CG_SUSPENDED, "waits");
    CHECK(ngang_waits == gw + 1, "... because of its gang");
    CHECK_CORE(core);
    /* Device 1 frees (b leaves): device 0 still lacks 50, nothing is admitted. */
    CHECK(cg_container_remove(core, b, 3) == CG_OK, "b leaves");
    CHECK(info(core, m[0]).queued && info(core, m[1]).assigned == 0,
          "one device free is not enough: still queued, nothing held on device 1");
    CHECK_CORE(core);
    /* Device 0 frees: both members get their whole limit at once, the request is granted. */
    unsigned rs = nresumes;
    CHECK(cg_release(core, a, 1, 30, 4) == CG_OK, "a frees 30");
    CHECK(cg_container_set_limit(core, a, 50, 4, NULL) == CG_OK, "a's limit down to 50");
    for (unsigned i = 0; i < 2; i++) {
        cg_container_info ci = info(core, m[i]);
        CHECK(!ci.queued && ci.reserved && ci.assigned == 50, "member %u admitted: %llu", i,
              (unsigned long long)ci.assigned);
    }
    CHECK(nresumes == rs + 1 && info(core, m[0]).used == 20, "the waiting request granted");
    CHECK_CORE(core);
    /* What could never fit is refused, not queued. */
    cg_container_spec big = {.device = -1, .limit = 101};
    cg_cid mb[2];
    CHECK(cg_gang_create_or_queue(core, &big, 2, NULL, 5, mb, &queued) == CG_ERR_TOO_LARGE &&
              !queued,
          "a limit above every capacity: refused");
    CHECK(cg_gang_create_or_queue(core, &spec, 4, NULL, 5, mb, &queued) == CG_ERR_NO_DEVICE,
          "more devices than the node has: refused");
    cg_core_free(core);

    /* Devices not named: the two that could hold it with the most free memory. */
    core = mk(3, 100, 0);
    CHECK(cg_container_create(core, 0, 90, 0, &a) == CG_OK, "single on 0");
    CHECK(cg_request(core, a, 1, 1, 90, 0, &o) == CG_OK && o == CG_GRANTED, "a holds 90");
    CHECK(cg_container_create(core, 1, 60, 0, &b) == CG_OK, "single on 1");
    CHECK(cg_request(core, b, 1, 2, 60, 0, &o) == CG_OK && o == CG_GRANTED, "b holds 60");
    cg_container_spec s70 = {.device = -1, .limit = 70};
    CHECK(cg_gang_create_or_queue(core, &s70, 2, NULL, 1, m, &queued) == CG_OK && queued,
          "queued on placement's choice");
    CHECK(info(core, m[0]).device == 1 && info(core, m[1]).device == 2,
          "devices 1 and 2 (device 0 has least free)");
    CHECK_CORE(core);
    cg_core_free(core);

    /* Restore: a gang recorded with nothing assigned comes back queued. */
    core = mk(2, 100, 0);
    cg_cid r[2], h;
    CHECK(cg_container_create(core, 0, 90, 0, &h) == CG_OK, "holder");
    CHECK(cg_request(core, h, 1, 1, 90, 0, &o) == CG_OK, "holder holds 90");
    cg_container_spec s40 = {.device = 0, .limit = 40};
    CHECK(cg_container_restore_spec(core, &s40, 0, 0, &r[0]) == CG_OK, "member 0 restored");
    s40.device = 1;
    CHECK(cg_container_restore_spec(core, &s40, 0, 0, &r[1]) == CG_OK, "member 1 restored");
    CHECK(cg_gang_restore(core, r, 2) == CG_OK && info(core, r[0]).queued &&
              info(core, r[1]).queued,
          "restored queued");
    CHECK_CORE(core);
    CHECK(cg_container_remove(core, h, 1) == CG_OK && !info(core, r[0]).queued &&
              info(core, r[1]).assigned == 40,
          "admitted when the holder's memory returns");
    CHECK_CORE(core);
    cg_core_free(core);
}

static void test_expire(void)
{
    cg_core *core = mk(2, 100, 0);
    cg_cid h0, h1, m[2];
    cg_outcome o;
    CHECK(cg_container_create(core, 0, 80, 0, &h0) == CG_OK && cg_container_create(core, 1, 80, 0, &h1) == CG_OK,
          "singles on 0 and 1");
    CHECK(cg_request(core, h0, 1, 1, 80, 0, &o) == CG_OK && cg_request(core, h1, 1, 2, 80, 0, &o) == CG_OK,
          "they hold 80 each");
    cg_container_spec spec = {.device = -1, .limit = 50};
    bool queued = false;
    CHECK(cg_gang_create_or_queue(core, &spec, 2, NULL, 1000, m, &queued) == CG_OK && queued,
          "a gang of 2 x 50 queued at t=1000");
    CHECK(cg_request(core, m[0], 7, 3, 20, 1001, &o) == CG_OK && o == CG_SUSPENDED, "member 0 waits");
    CHECK(cg_request(core, m[1], 8, 4, 30, 1002, &o) == CG_OK && o == CG_SUSPENDED, "member 1 waits");
    cg_time due = 0;
    cg_cid gone[4];
    CHECK(cg_gang_expire(core, 1500, 0, gone, 4, &due) == 0 && due == 0, "no bound: nothing, no due");
    CHECK(cg_gang_expire(core, 1500, 1000, gone, 4, &due) == 0 && due == 2000,
          "before the bound: nothing given up, due at 2000 (%llu)", (unsigned long long)due);
    CHECK(info(core, m[0]).queued && info(core, m[0]).npending == 1, "still queued, still waiting");
    CHECK_CORE(core);
    unsigned before = nexpired_rejects;
    CHECK(cg_gang_expire(core, 2000, 1000, gone, 4, &due) == 1 && gone[0] == m[0] && due == 0,
          "at the bound: the gang given up, nothing left queued");
    CHECK(nexpired_rejects == before + 2, "both waiting requests rejected (%u)",
          nexpired_rejects - before);
    for (unsigned i = 0; i < 2; i++) {
        cg_container_info ci = info(core, m[i]);
        CHECK(ci.expired && !ci.queued && !ci.reserved && ci.assigned == 0 && ci.used == 0 &&
                  ci.npending == 0,
              "member %u: given up, holds and waits for nothing", i);
    }
    CHECK(dev(core, 0).assigned == 80 && dev(core, 1).assigned == 80, "nothing reserved");
    CHECK_CORE(core);
    CHECK(cg_container_remove(core, h0, 2100) == CG_OK && cg_container_remove(core, h1, 2100) == CG_OK,
          "the holders leave");
    CHECK(dev(core, 0).assigned == 0 && dev(core, 1).assigned == 0 && info(core, m[0]).expired,
          "memory returns: the given-up gang is not admitted, nothing is reserved for it");
    CHECK(cg_request(core, m[0], 7, 5, 10, 2200, &o) == CG_OK && o == CG_REJECTED &&
              nexpired_rejects == before + 3,
          "a later request: rejected at once, with the same reason");
    CHECK(cg_container_set_limit(core, m[1], 40, 2200, NULL) == CG_ERR_STATE,
          "a given-up member's limit does not change");
    CHECK(cg_gang_expire(core, 9000, 1000, gone, 4, &due) == 0, "given up once");
    CHECK_CORE(core);
    CHECK(cg_container_remove(core, m[0], 2300) == CG_OK && cg_container_remove(core, m[1], 2300) == CG_OK,
          "removed");
    /* A new gang now fits and is admitted at once; the bound does not touch it. */
    CHECK(cg_gang_create_or_queue(core, &spec, 2, NULL, 2400, m, &queued) == CG_OK && !queued,
          "a new gang admitted at once");
    CHECK(cg_gang_expire(core, 99999, 1000, gone, 4, &due) == 0 && info(core, m[0]).reserved,
          "an admitted gang is never given up");
    CHECK_CORE(core);
    cg_core_free(core);
}

/* Two gangs, devices {0,1} and {1,0}, each device half held: the textbook cycle if a gang could
 * hold one device while waiting for the other. */
static void test_two_gangs(void)
{
    cg_core *core = mk(2, 100, 0);
    cg_cid s0, s1, g[2], k[2];
    cg_outcome o;
    CHECK(cg_container_create(core, 0, 60, 0, &s0) == CG_OK, "single on 0");
    CHECK(cg_container_create(core, 1, 60, 0, &s1) == CG_OK, "single on 1");
    CHECK(cg_request(core, s0, 1, 1, 60, 0, &o) == CG_OK && cg_request(core, s1, 1, 2, 60, 0, &o) == CG_OK,
          "singles hold 60 each");
    cg_container_spec spec = {.device = -1, .limit = 70};
    const unsigned ab[] = {0, 1}, ba[] = {1, 0};
    bool q1, q2;
    CHECK(cg_gang_create_or_queue(core, &spec, 2, ab, 1, g, &q1) == CG_OK && q1, "gang G queued");
    CHECK(cg_gang_create_or_queue(core, &spec, 2, ba, 2, k, &q2) == CG_OK && q2, "gang K queued");
    CHECK(cg_request(core, g[0], 5, 3, 10, 3, &o) == CG_OK && o == CG_SUSPENDED, "G waits");
    CHECK(cg_request(core, k[0], 6, 4, 10, 3, &o) == CG_OK && o == CG_SUSPENDED, "K waits");
    CHECK(dev(core, 0).assigned == 60 && dev(core, 1).assigned == 60,
          "neither gang holds anything while it waits");
    CHECK_CORE(core);
    /* Singles leave device 1 first, then device 0: G (older) is admitted, K still waits. */
    CHECK(cg_container_remove(core, s1, 4) == CG_OK, "s1 leaves");
    CHECK(info(core, g[0]).queued && info(core, k[0]).queued, "one device is not enough");
    CHECK(cg_container_remove(core, s0, 5) == CG_OK, "s0 leaves");
    CHECK(!info(core, g[0]).queued && info(core, g[1]).assigned == 70, "G admitted first");
    CHECK(info(core, k[0]).queued && info(core, k[1]).assigned == 0, "K waits, holding nothing");
    CHECK_CORE(core);
    /* G ends: K runs. */
    cg_container_remove(core, g[0], 6);
    cg_container_remove(core, g[1], 6);
    CHECK(!info(core, k[0]).queued && info(core, k[0]).used == 10, "K admitted, its request granted");
    CHECK_CORE(core);
    cg_core_free(core);
}

static uint64_t rnd_state = 0x9e3779b97f4a7c15ull;
static unsigned rnd(unsigned n)
{
    rnd_state ^= rnd_state << 13;
    rnd_state ^= rnd_state >> 7;
    rnd_state ^= rnd_state << 17;
    return (unsigned)(rnd_state % n);
}

#define MAXC 96

/* Every gang wholly queued or wholly admitted (cg_core_check checks it too; here through the
 * public view only). */
static void check_all_or_nothing(const cg_core *core, const cg_cid *live, unsigned n, int walk)
{
    for (unsigned i = 0; i < n; i++) {
        cg_container_info ci = info(core, live[i]);
        if (ci.gang == CG_CID_NONE)
            continue;
        cg_container_info lead = {0};
        if (cg_container_get(core, ci.gang, 0, &lead) != CG_OK)
            continue;   /* the drain removes an admitted gang's members one by one */
        CHECK(ci.queued == lead.queued, "walk %d: gang %u partly admitted", walk, ci.gang);
        CHECK(ci.expired == lead.expired, "walk %d: gang %u partly given up", walk, ci.gang);
        CHECK(ci.queued || ci.expired ? ci.assigned == 0 : ci.assigned == ci.limit,
              "walk %d: member %u holds %llu of %llu (queued %d)", walk, live[i],
              (unsigned long long)ci.assigned, (unsigned long long)ci.limit, ci.queued);
    }
}

static void remove_at(cg_cid *live, unsigned *n, cg_cid c)
{
    for (unsigned i = 0; i < *n; i++)
        if (live[i] == c) {
            live[i] = live[--*n];
            return;
        }
}

static void test_property(void)
{
    unsigned queued_total = 0, admitted_later = 0, expired_total = 0;
    for (int walk = 0; walk < 400; walk++) {
        unsigned ndev = 2 + rnd(3);
        bool swap = walk % 2;
        cg_core *core = mk(ndev, 100, swap ? 150 : 0);
        cg_cid live[MAXC];
        unsigned nlive = 0;
        cg_reqid req = 1;
        cg_time now = 0;
        for (int step = 0; step < 80; step++, now += 1000) {
            unsigned what = rnd(6);
            if (what == 0 && nlive + 4 <= MAXC) {
                unsigned n = 2 + rnd(ndev - 1), devs[4] = {0, 1, 2, 3};
                for (unsigned i = 0; i < ndev; i++) {
                    unsigned j = rnd(ndev), t = devs[i];
                    devs[i] = devs[j];
                    devs[j] = t;
                }
                cg_container_spec spec = {.device = -1, .limit = 10 + rnd(60)};
                cg_cid m[4];
                bool q = false;
                if (cg_gang_create_or_queue(core, &spec, n, rnd(2) ? devs : NULL, now, m, &q) ==
                    CG_OK) {
                    for (unsigned i = 0; i < n; i++)
                        live[nlive++] = m[i];
                    queued_total += q;
                }
            } else if (what == 1 && nlive < MAXC) {
                cg_cid s;
                cg_container_spec spec = {.device = (int)rnd(ndev), .limit = 10 + rnd(90),
                                          .priority = rnd(3)};
                if (cg_container_create_spec(core, &spec, now, &s) == CG_OK)
                    live[nlive++] = s;
            } else if (what == 2 && nlive) {
                /* A process ends, or (a single) leaves. */
                cg_cid c = live[rnd(nlive)];
                cg_container_info ci = info(core, c);
                if (ci.gang == CG_CID_NONE && rnd(3) == 0) {
                    cg_container_remove(core, c, now);
                    remove_at(live, &nlive, c);
                } else {
                    cg_process_exit(core, c, 1 + rnd(3), now);
                }
            } else if (what == 3 && rnd(4) == 0) {
                cg_time due;
                expired_total += cg_gang_expire(core, now, 1000 * (1 + rnd(20)), NULL, 0, &due);
            } else if (nlive) {
                cg_cid c = live[rnd(nlive)];
                cg_outcome o;
                cg_request(core, c, 1 + rnd(3), req++, 1 + rnd(30), now, &o);
            }
            if (swap)
                finish_some_moves(core, live, (int)nlive, now, false);
            CHECK_CORE(core);
            check_all_or_nothing(core, live, nlive, walk);
        }
        /* The drain: every process ends, singles leave, gangs leave once admitted. A gang still
         * queued when no other container is left would be one waiting on nothing: a deadlock. */
        for (int round = 0; nlive && round < 200; round++, now += 1000) {
            for (unsigned i = 0; i < nlive; i++)
                for (cg_pid p = 1; p <= 3; p++)
                    cg_process_exit(core, live[i], p, now);
            if (swap)
                finish_some_moves(core, live, (int)nlive, now, false);
            for (unsigned i = 0; i < nlive;) {
                cg_container_info ci = info(core, live[i]);
                if (ci.queued || ci.residency != CG_RESIDENT) {
                    i++;
                    continue;
                }
                admitted_later += ci.gang == live[i] && ci.gang != CG_CID_NONE;
                cg_container_remove(core, live[i], now);
                live[i] = live[--nlive];
            }
            CHECK_CORE(core);
            check_all_or_nothing(core, live, nlive, walk);
        }
        CHECK(nlive == 0, "walk %d: %u containers never left (a queued gang that never ran?)",
              walk, nlive);
        cg_core_free(core);
    }
    CHECK(queued_total > 100, "the walks queued only %u gangs", queued_total);
    CHECK(expired_total > 10, "the walks gave up only %u gangs", expired_total);
    printf("core.gang_wait: %u gangs queued in the walks, %u of them given up after waiting; "
           "every one admitted or given up, and drained\n", queued_total, expired_total);
    (void)admitted_later;
}

int main(void)
{
    test_by_hand();
    test_expire();
    test_two_gangs();
    test_property();
    if (failures)
        fprintf(stderr, "test_gang_wait: %d failures\n", failures);
    return failures != 0;
}

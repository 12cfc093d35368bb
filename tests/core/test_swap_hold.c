/* test_swap_hold.c — held swaps (core/swap.c, cg_swap_hold; issue 42 item 2): a tenant's holds
 * of its own containers take at most the hold pool (swap_hold_pct of the budget) and its
 * tenant's weighted part of it; what they cannot take stays for preemption, so a tenant holding
 * all it may never stops the scheduler's victims or an operator's order for someone else. The
 * operator's hold is bounded by the budget only; ending a hold, a removal and a restart keep
 * the pool's books; an allocation failure changes nothing. */
#include <inttypes.h>
#include <stdlib.h>

#include "core_test.h"
#include "core.h"

#define MiB (1ull << 20)

static unsigned victims; /* swap-outs the scheduler ordered for someone's request */

static void record(void *ctx, const cg_event *ev)
{
    (void)ctx;
    victims += ev->kind == CG_EV_SWAP_OUT && ev->reason == CG_WHY_VICTIM;
}

static cg_core *mk(cg_bytes cap, cg_bytes swap_limit, unsigned hold_pct)
{
    cg_config cfg = {.resume = CG_RESUME_FIFO, .seed = 7, .sink = record,
                     .mem_alloc = test_alloc, .mem_free = test_free, .swap_limit = swap_limit,
                     .swap_hold_pct = hold_pct};
    cg_core *core = cg_core_new(&cfg);
    CHECK(core && cg_device_add(core, cap, 0, 0, NULL) == CG_OK, "core");
    victims = 0;
    return core;
}

/* A container of `tenant` (priority prio) whose process 1 uses its whole limit (a hold takes
 * the assignment, which is the limit once granted). */
static cg_cid running(cg_core *core, uint32_t tenant, cg_bytes used, unsigned prio)
{
    cg_bytes limit = used;
    static cg_reqid req = 1;
    cg_container_spec s = {.device = 0, .limit = limit, .priority = prio, .tenant = tenant};
    cg_cid cid = CG_CID_NONE;
    cg_outcome o = CG_REJECTED;
    CHECK(cg_container_create_spec(core, &s, 0, &cid) == CG_OK, "create");
    CHECK(cg_request(core, cid, 1, req++, used, 0, &o) == CG_OK && o == CG_GRANTED, "granted");
    return cid;
}

static void moved_out(cg_core *core, cg_cid cid, cg_bytes bytes)
{
    CHECK(cg_process_swap_out(core, cid, 1, bytes, 1) == CG_OK, "moved %u", cid);
    CHECK(cg_swap_out_done(core, cid, 1) == CG_OK, "out %u", cid);
}

/* The reported case, scaled: a 512 MiB budget, a tenant's 440 MiB container. Its hold is
 * refused (the pool is half the budget); the operator's order on another container and a
 * priority-9 request's preemption go through. */
static void test_reported_case(void)
{
    cg_core *core = mk(1024 * MiB, 512 * MiB, 50);
    cg_cid mine = running(core, 1, 440 * MiB, 0);
    CHECK(cg_swap_hold(core, mine, CG_HOLD_TENANT, 1) == CG_ERR_SWAP_BUDGET,
          "440 MiB of a 256 MiB pool: refused");
    CHECK(info(core, mine).residency == CG_RESIDENT && !info(core, mine).swap_held,
          "nothing changed");
    cg_hold_room room;
    CHECK(cg_swap_hold_room(core, 1, &room) == CG_OK && room.pool == 256 * MiB &&
              room.share == 256 * MiB && room.pool_held == 0,
          "alone, the tenant's part is the whole pool");
    cg_cid small = running(core, 1, 200 * MiB, 0);
    CHECK(cg_swap_hold(core, small, CG_HOLD_TENANT, 1) == CG_OK, "200 MiB fits the pool");
    CHECK(cg_swap_hold_of(core, small) == CG_HOLD_TENANT, "held by its tenant");
    moved_out(core, small, 200 * MiB);
    CHECK_CORE(core);
    /* Another tenant's low-priority job runs; its priority-9 job asks for more than is free. */
    cg_cid low = running(core, 2, 300 * MiB, 0);
    CHECK(info(core, low).residency == CG_RESIDENT, "low runs");
    cg_container_spec s = {.device = 0, .limit = 512 * MiB, .priority = 9, .tenant = 2};
    cg_cid urgent = CG_CID_NONE;
    cg_outcome o = CG_GRANTED;
    CHECK(cg_container_create_spec(core, &s, 2, &urgent) == CG_OK, "urgent");
    CHECK(cg_request(core, urgent, 2, 99, 400 * MiB, 2, &o) == CG_OK && o == CG_SUSPENDED,
          "urgent waits");
    /* The largest victim, 440 MiB: more than the 312 MiB the hold leaves of the budget. */
    CHECK(victims == 1 && info(core, mine).residency == CG_MOVING_OUT,
          "the tenant's hold does not stop the preemption (%u victims)", victims);
    CHECK(cg_swap_host_bytes(core) == 640 * MiB, "over the budget by what the tenant holds");
    CHECK_CORE(core);
    cg_core_free(core);

    /* Root's own order on another tenant's container, with the tenant holding its whole part. */
    core = mk(1024 * MiB, 512 * MiB, 50);
    cg_cid held = running(core, 1, 256 * MiB, 0);
    CHECK(cg_swap_hold(core, held, CG_HOLD_TENANT, 1) == CG_OK, "the whole pool");
    cg_cid other = running(core, 2, 256 * MiB, 0);
    CHECK(cg_swap_hold(core, other, CG_HOLD_OPERATOR, 1) == CG_OK,
          "the operator's order still has the other half");
    CHECK(cg_swap_hold_of(core, other) == CG_HOLD_OPERATOR, "held by the operator");
    CHECK_CORE(core);
    cg_core_free(core);
}

/* Each tenant's part of the pool follows the weights of the tenants present; the pool bounds
 * all tenants together; an operator's hold is bounded by the budget only; a hold counts until
 * its container is back in. */
static void test_shares(void)
{
    cg_core *core = mk(64ull * 1024 * MiB, 8192 * MiB, 50); /* pool 4096 MiB */
    CHECK(cg_tenant_set_weight(core, 2, 3, 0) == CG_OK, "weight 3");
    cg_cid a1 = running(core, 1, 2048 * MiB, 0);
    cg_cid a2 = running(core, 1, 1024 * MiB, 0);
    cg_cid b1 = running(core, 2, 3072 * MiB, 0);
    cg_cid b2 = running(core, 2, 1024 * MiB, 0);
    cg_hold_room r1, r2;
    CHECK(cg_swap_hold_room(core, 1, &r1) == CG_OK && r1.share == 1024 * MiB, "1 of 4: 1 GiB");
    CHECK(cg_swap_hold_room(core, 2, &r2) == CG_OK && r2.share == 3072 * MiB, "3 of 4: 3 GiB");
    CHECK(cg_swap_hold_check(core, a1, CG_HOLD_TENANT) == CG_ERR_SWAP_BUDGET, "2 GiB > 1 GiB");
    CHECK(cg_swap_hold(core, a2, CG_HOLD_TENANT, 1) == CG_OK, "1 GiB = its part");
    CHECK(cg_swap_hold(core, b1, CG_HOLD_TENANT, 1) == CG_OK, "3 GiB = its part");
    CHECK(cg_swap_hold(core, b2, CG_HOLD_TENANT, 1) == CG_ERR_SWAP_BUDGET, "beyond its part");
    CHECK(cg_swap_hold_room(core, 2, &r2) == CG_OK && r2.pool_held == 4096 * MiB &&
              r2.tenant_held == 3072 * MiB,
          "the pool's books: reservations while moving out");
    CHECK(cg_swap_hold(core, a1, CG_HOLD_OPERATOR, 1) == CG_OK, "the operator: budget only");
    CHECK(cg_swap_host_bytes(core) == 6144 * MiB, "6 GiB of the 8 taken");
    moved_out(core, a2, 1000 * MiB);
    CHECK(cg_swap_hold_room(core, 1, &r1) == CG_OK && r1.tenant_held == 1000 * MiB,
          "once out, what is on the host");
    /* In ends the hold and its part of the pool. */
    CHECK(cg_swap_hold(core, a2, CG_HOLD_NONE, 2) == CG_OK, "in");
    CHECK(cg_swap_hold_of(core, a2) == CG_HOLD_NONE, "not held");
    CHECK(cg_swap_hold_room(core, 1, &r1) == CG_OK && r1.tenant_held == 1000 * MiB,
          "counted while it moves in");
    CHECK(cg_swap_in_done(core, a2, 2) == CG_OK, "back in");
    CHECK(cg_swap_hold_room(core, 1, &r1) == CG_OK && r1.tenant_held == 0 &&
              r1.pool_held == 3072 * MiB,
          "its part back");
    CHECK_CORE(core);
    /* A removal too. */
    CHECK(cg_container_remove(core, b1, 3) == CG_OK, "remove b1 while moving out");
    CHECK(cg_swap_hold_room(core, 2, &r2) == CG_OK && r2.pool_held == 0, "pool empty");
    CHECK(cg_swap_hold(core, b2, CG_HOLD_TENANT, 4) == CG_OK, "now b2 fits");
    CHECK_CORE(core);
    cg_core_free(core);
}

/* A tenant alone may take the whole pool; one that arrives later finds it full, but the
 * budget beyond the pool is still preemption's, for that tenant's jobs too. */
static void test_pool_full(void)
{
    cg_core *core = mk(700 * MiB, 512 * MiB, 50);
    cg_cid mine = running(core, 1, 256 * MiB, 0);
    CHECK(cg_swap_hold(core, mine, CG_HOLD_TENANT, 1) == CG_OK, "alone: the whole pool");
    moved_out(core, mine, 256 * MiB);
    cg_cid late = running(core, 2, 200 * MiB, 0);
    cg_hold_room r;
    CHECK(cg_swap_hold_room(core, 2, &r) == CG_OK && r.share == 128 * MiB, "its part: half");
    CHECK(cg_swap_hold(core, late, CG_HOLD_TENANT, 2) == CG_ERR_SWAP_BUDGET, "the pool is full");
    cg_cid low = running(core, 2, 240 * MiB, 0); /* with late: 440 of 700 */
    cg_container_spec s = {.device = 0, .limit = 512 * MiB, .priority = 9, .tenant = 3};
    cg_cid urgent = CG_CID_NONE;
    cg_outcome o = CG_GRANTED;
    CHECK(cg_container_create_spec(core, &s, 3, &urgent) == CG_OK, "urgent");
    CHECK(cg_request(core, urgent, 3, 77, 400 * MiB, 3, &o) == CG_OK && o == CG_SUSPENDED,
          "urgent waits");
    CHECK(victims == 1 && info(core, low).residency == CG_MOVING_OUT, "preempted");
    moved_out(core, low, 240 * MiB);
    CHECK(cg_swap_host_bytes(core) == 496 * MiB, "496 MiB on the host");
    /* Ordered in with no room on the device, the tenant's container waits out; its host memory
     * still does not count against preemption (CHECK_CORE: the budget less tenants' holds). */
    CHECK(cg_swap_hold(core, mine, CG_HOLD_NONE, 4) == CG_OK, "the tenant orders it in");
    CHECK(info(core, mine).residency == CG_SWAPPED_OUT, "waits for the device");
    CHECK(cg_swap_hold_room(core, 1, &r) == CG_OK && r.tenant_held == 256 * MiB,
          "still counted as its tenant's");
    CHECK_CORE(core);
    cg_core_free(core);
}

/* swap_hold_pct 0: tenants may not hold, operators still may; a restart restores a tenant's
 * hold as one (it counts in the pool); an allocation failure changes nothing. */
static void test_off_restore_nomem(void)
{
    cg_core *core = mk(1024 * MiB, 512 * MiB, 0);
    cg_cid a = running(core, 1, 64 * MiB, 0);
    CHECK(cg_swap_hold(core, a, CG_HOLD_TENANT, 1) == CG_ERR_SWAP_BUDGET, "no pool");
    CHECK(cg_swap_hold(core, a, CG_HOLD_OPERATOR, 1) == CG_OK, "the operator may");
    CHECK(cg_swap_hold(core, a, CG_HOLD_TENANT, 1) == CG_ERR_STATE, "not twice");
    CHECK(cg_swap_hold_check(core, 999, CG_HOLD_NONE) == CG_ERR_NOT_FOUND, "unknown");
    cg_core_free(core);

    core = mk(1024 * MiB, 512 * MiB, 50);
    cg_container_spec s = {.device = 0, .limit = 512 * MiB, .tenant = 1};
    cg_cid r = CG_CID_NONE;
    CHECK(cg_container_restore_spec(core, &s, 0, 0, &r) == CG_OK, "restored");
    CHECK(cg_process_set_use(core, r, 1, 0, 0) == CG_OK, "its process");
    CHECK(cg_process_restore_swapped(core, r, 1, 200 * MiB) == CG_OK, "200 MiB on the host");
    CHECK(cg_swap_restore_hold(core, r, CG_SWAPPED_OUT, CG_HOLD_TENANT, 1) == CG_OK, "held");
    CHECK(cg_swap_hold_of(core, r) == CG_HOLD_TENANT, "by its tenant");
    cg_hold_room room;
    CHECK(cg_swap_hold_room(core, 1, &room) == CG_OK && room.tenant_held == 200 * MiB,
          "in the pool");
    cg_cid b = running(core, 1, 100 * MiB, 0);
    CHECK(cg_swap_hold(core, b, CG_HOLD_TENANT, 2) == CG_ERR_SWAP_BUDGET, "200 + 100 > 256");
    cg_cid c = running(core, 1, 16 * MiB, 0);
    nalloc = 0;
    fail_at = 0;
    CHECK(cg_swap_hold(core, c, CG_HOLD_TENANT, 3) == CG_ERR_NOMEM, "allocation failure");
    fail_at = -1;
    CHECK(info(core, c).residency == CG_RESIDENT && cg_swap_hold_of(core, c) == CG_HOLD_NONE,
          "nothing changed");
    CHECK(cg_swap_hold(core, c, CG_HOLD_TENANT, 3) == CG_OK, "then it fits");
    CHECK_CORE(core);
    cg_core_free(core);
}

int main(void)
{
    test_reported_case();
    test_shares();
    test_pool_full();
    test_off_restore_nomem();
    if (failures)
        fprintf(stderr, "%d failure(s)\n", failures);
    return failures != 0;
}

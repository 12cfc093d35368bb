/* test_swap.c — the core's swap policy and priorities (swap.c, priority.c): which containers are
 * ordered out and for whom, the host budget, the operator's hold, no-swap, requests of a container
 * that is out, a process dying while out, priority classes and aging, the ping-pong guard,
 * injected allocation failures; then random operations with every invariant checked after each
 * step and everything drained at the end (no deadlock, nothing left on the host). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "core_test.h"
#include "core.h"

#define GiB (1ull << 30)
#define SEC 1000000000ull

typedef struct {
    cg_event ev[512];
    unsigned n;
} recorder;

static unsigned long victims_seen, swap_ins_seen; /* over the random runs: they did swap */

static void record(void *ctx, const cg_event *ev)
{
    recorder *r = ctx;
    victims_seen += ev->kind == CG_EV_SWAP_OUT && ev->reason == CG_WHY_VICTIM;
    swap_ins_seen += ev->kind == CG_EV_SWAP_IN;
    if (r->n < 512)
        r->ev[r->n++] = *ev;
}

static int count(const recorder *r, cg_event_kind kind, cg_cid cid)
{
    int k = 0;
    for (unsigned i = 0; i < r->n; i++)
        k += r->ev[i].kind == kind && (cid == CG_CID_NONE || r->ev[i].cid == cid);
    return k;
}

static const cg_event *last(const recorder *r, cg_event_kind kind, cg_cid cid)
{
    for (unsigned i = r->n; i-- > 0;)
        if (r->ev[i].kind == kind && r->ev[i].cid == cid)
            return &r->ev[i];
    return NULL;
}

static cg_core *mk_ctx(recorder *rec, cg_resume_policy pol, cg_bytes cap, cg_bytes swap_limit,
                       cg_bytes context, bool auto_pause)
{
    cg_config cfg = {.resume = pol, .seed = 7, .sink = record, .sink_ctx = rec,
                     .mem_alloc = test_alloc, .mem_free = test_free, .swap_limit = swap_limit,
                     .aging_step = 60 * SEC, .auto_pause = auto_pause};
    cg_core *core = cg_core_new(&cfg);
    CHECK(core && cg_device_add(core, cap, 0, context, NULL) == CG_OK, "core");
    return core;
}

static cg_core *mk(recorder *rec, cg_resume_policy pol, cg_bytes cap, cg_bytes swap_limit)
{
    return mk_ctx(rec, pol, cap, swap_limit, 0, false);
}

static uint32_t next_tenant; /* the random runs spread containers over tenants */

static cg_cid make(cg_core *core, cg_bytes limit, unsigned prio, bool no_swap, cg_time now)
{
    cg_container_spec s = {.device = 0, .limit = limit, .priority = prio, .no_swap = no_swap,
                           .tenant = next_tenant};
    cg_cid cid = CG_CID_NONE;
    CHECK(cg_container_create_spec(core, &s, now, &cid) == CG_OK, "create");
    return cid;
}

static cg_outcome ask(cg_core *core, cg_cid cid, cg_pid pid, cg_reqid id, cg_bytes b, cg_time now)
{
    cg_outcome o = CG_REJECTED;
    CHECK(cg_request(core, cid, pid, id, b, now, &o) == CG_OK, "request %" PRIu64, id);
    return o;
}

/* a (priority pa, no_swap as given) holds 6 of 10 GiB; b (priority pb) asks for 6: it waits. */
static void contend(cg_core *core, unsigned pa, bool a_no_swap, unsigned pb, cg_cid *a, cg_cid *b)
{
    *a = make(core, 6 * GiB, pa, a_no_swap, 0);
    *b = make(core, 6 * GiB, pb, false, 1);
    CHECK(ask(core, *a, 1, 1, 6 * GiB, 1) == CG_GRANTED, "a granted");
    CHECK(ask(core, *b, 2, 2, 6 * GiB, 2) == CG_SUSPENDED, "b waits");
}

/* The mechanism's report: the process moved all it uses. */
static void move_out(cg_core *core, cg_cid cid, cg_pid pid, cg_bytes bytes, cg_time now)
{
    CHECK(cg_process_swap_out(core, cid, pid, bytes, now) == CG_OK, "swap out %u", cid);
    CHECK(cg_swap_out_done(core, cid, now) == CG_OK, "out done %u", cid);
}

/* A higher priority request swaps out a running lower-priority container; it gets the memory,
 * the victim waits out and comes back when the memory returns. */
static void test_priority_victim(void)
{
    recorder r = {0};
    cg_core *core = mk(&r, CG_RESUME_FIFO, 10 * GiB, 64 * GiB);
    cg_cid a, b;
    contend(core, 0, false, 5, &a, &b);
    const cg_event *o = last(&r, CG_EV_SWAP_OUT, a);
    CHECK(o && o->reason == CG_WHY_VICTIM && o->req == 2, "a ordered out for b's request");
    CHECK(info(core, a).residency == CG_MOVING_OUT, "a moving out");
    CHECK(cg_swap_host_bytes(core) == 6 * GiB, "budget reserves a's assignment");
    CHECK_CORE(core);
    /* Nothing is granted from a moving container's assignment while it moves. */
    CHECK(ask(core, a, 1, 3, 1 * GiB, 3) == CG_REJECTED, "a over its limit");
    move_out(core, a, 1, 6 * GiB, 4);
    CHECK_CORE(core);
    CHECK(last(&r, CG_EV_RESUME, b) && last(&r, CG_EV_RESUME, b)->req == 2, "b resumed");
    cg_container_info ai = info(core, a);
    CHECK(ai.residency == CG_SWAPPED_OUT && ai.swapped == 6 * GiB && ai.used == 0 &&
              ai.assigned == 4 * GiB && ai.state == CG_STATE_SUSPENDED && !ai.swap_held,
          "a out and waiting, offered the 4 GiB left");
    CHECK(cg_swap_host_bytes(core) == 6 * GiB, "host holds a's bytes");
    /* b leaves: a comes back with its use charged again. */
    CHECK(cg_container_remove(core, b, 5) == CG_OK, "remove b");
    const cg_event *in = last(&r, CG_EV_SWAP_IN, a);
    CHECK(in && in->bytes == 6 * GiB, "a ordered in with 6 GiB");
    ai = info(core, a);
    CHECK(ai.residency == CG_MOVING_IN && ai.used == 6 * GiB && ai.swapped == 0, "a moving in");
    CHECK_CORE(core);
    CHECK(cg_swap_in_done(core, a, 6) == CG_OK, "in done");
    CHECK(info(core, a).residency == CG_RESIDENT && cg_swap_host_bytes(core) == 0, "a in");
    CHECK(cg_swap_in_done(core, a, 6) == CG_ERR_STATE, "in done twice");
    CHECK_CORE(core);
    cg_core_free(core);
}

/* Equal priority: a running container is never a victim; nothing moves. */
static void test_equal_running_not_victim(void)
{
    recorder r = {0};
    cg_core *core = mk(&r, CG_RESUME_FIFO, 10 * GiB, 64 * GiB);
    cg_cid a, b;
    contend(core, 3, false, 3, &a, &b);
    CHECK(count(&r, CG_EV_SWAP_OUT, CG_CID_NONE) == 0, "no swap between equals that run");
    CHECK_CORE(core);
    cg_core_free(core);
}

/* Suspended containers go before running ones: the suspended one's partial assignment is enough,
 * so the running one stays. */
static void test_suspended_first(void)
{
    recorder r = {0};
    cg_core *core = mk(&r, CG_RESUME_FIFO, 10 * GiB, 64 * GiB);
    cg_cid a = make(core, 4 * GiB, 0, false, 0);
    CHECK(ask(core, a, 1, 1, 4 * GiB, 1) == CG_GRANTED, "a");
    cg_cid c = make(core, 8 * GiB, 0, false, 2);
    CHECK(info(core, c).assigned == 6 * GiB, "c partly assigned");
    CHECK(ask(core, c, 3, 3, 8 * GiB, 3) == CG_SUSPENDED, "c waits");
    CHECK(count(&r, CG_EV_SWAP_OUT, CG_CID_NONE) == 0, "c's own wait swaps nobody of its class");
    cg_cid b = make(core, 6 * GiB, 5, false, 4);
    CHECK(ask(core, b, 2, 2, 6 * GiB, 5) == CG_SUSPENDED, "b waits");
    CHECK(count(&r, CG_EV_SWAP_OUT, c) == 1 && count(&r, CG_EV_SWAP_OUT, a) == 0,
          "the suspended container goes, the running one stays");
    CHECK(cg_swap_out_done(core, c, 6) == CG_OK, "c out (nothing in use moved)");
    CHECK(last(&r, CG_EV_RESUME, b) != NULL, "b resumed from c's assignment");
    CHECK_CORE(core);
    cg_core_free(core);
}

/* The host budget bounds what may go out; no-swap containers never go. */
static void test_budget_and_no_swap(void)
{
    recorder r = {0};
    cg_core *core = mk(&r, CG_RESUME_FIFO, 10 * GiB, 4 * GiB);
    cg_cid a, b;
    contend(core, 0, false, 5, &a, &b);
    CHECK(count(&r, CG_EV_SWAP_OUT, CG_CID_NONE) == 0, "6 GiB do not fit a 4 GiB budget");
    CHECK(cg_swap_order(core, a, true, 3) == CG_ERR_SWAP_BUDGET, "operator refused too");
    CHECK_CORE(core);
    cg_core_free(core);

    recorder r2 = {0};
    core = mk(&r2, CG_RESUME_FIFO, 10 * GiB, 64 * GiB);
    a = make(core, 6 * GiB, 0, true, 0);
    b = make(core, 6 * GiB, 5, false, 1);
    CHECK(ask(core, a, 1, 1, 6 * GiB, 1) == CG_GRANTED, "a");
    CHECK(ask(core, b, 2, 2, 6 * GiB, 2) == CG_SUSPENDED, "b");
    CHECK(count(&r2, CG_EV_SWAP_OUT, CG_CID_NONE) == 0, "no-swap is not a victim");
    CHECK(cg_swap_order(core, a, true, 3) == CG_ERR_NO_SWAP, "nor the operator's");
    cg_core_free(core);

    recorder r3 = {0};
    core = mk(&r3, CG_RESUME_FIFO, 10 * GiB, 0);
    a = make(core, 6 * GiB, 0, false, 0);
    CHECK(cg_swap_order(core, a, true, 1) == CG_ERR_NO_SWAP, "swap off: refused");
    cg_core_free(core);
}

/* The operator's order: held out even with free memory; back on the order in; state errors. */
static void test_operator_hold(void)
{
    recorder r = {0};
    cg_core *core = mk(&r, CG_RESUME_BEST_FIT, 10 * GiB, 64 * GiB);
    cg_cid a = make(core, 4 * GiB, 0, false, 0);
    CHECK(ask(core, a, 1, 1, 3 * GiB, 1) == CG_GRANTED, "a");
    CHECK(cg_swap_order(core, a, false, 2) == CG_ERR_STATE, "in while in");
    CHECK(cg_swap_order(core, 999, true, 2) == CG_ERR_NOT_FOUND, "unknown");
    CHECK(cg_swap_order(core, a, true, 2) == CG_OK, "out");
    CHECK(cg_swap_order(core, a, true, 2) == CG_ERR_STATE, "out twice");
    CHECK(cg_swap_out_done(core, 999, 2) == CG_ERR_NOT_FOUND, "done unknown");
    CHECK(cg_process_swap_out(core, a, 1, 5 * GiB, 3) == CG_ERR_INVALID, "more than it uses");
    move_out(core, a, 1, 3 * GiB, 3);
    cg_container_info ai = info(core, a);
    CHECK(ai.swap_held && ai.residency == CG_SWAPPED_OUT && ai.state == CG_STATE_RUNNING,
          "held out, not waiting for memory");
    CHECK(count(&r, CG_EV_SWAP_IN, a) == 0, "not back by itself with 10 GiB free");
    /* A request while out waits (and is not charged to free memory) until it is back. */
    CHECK(ask(core, a, 1, 4, 1 * GiB, 4) == CG_SUSPENDED, "request while out waits");
    CHECK(ask(core, a, 1, 5, 1 * GiB, 4) == CG_SUSPENDED, "3 on the host + 1 <= 4: waits too");
    CHECK(ask(core, a, 1, 6, 2 * GiB, 4) == CG_REJECTED, "3 on the host + 2 > 4");
    CHECK(count(&r, CG_EV_SWAP_IN, a) == 0, "still held");
    CHECK_CORE(core);
    CHECK(cg_swap_order(core, a, false, 5) == CG_OK, "in");
    CHECK(count(&r, CG_EV_SWAP_IN, a) == 1, "ordered in at once");
    CHECK(last(&r, CG_EV_RESUME, a) && last(&r, CG_EV_RESUME, a)->req == 4, "its request granted");
    CHECK(last(&r, CG_EV_REJECT, a) && last(&r, CG_EV_REJECT, a)->req == 5 &&
              last(&r, CG_EV_REJECT, a)->reason == CG_WHY_OVER_LIMIT,
          "the second is over the limit once the first is granted");
    CHECK(cg_swap_in_done(core, a, 6) == CG_OK, "in done");
    ai = info(core, a);
    CHECK(ai.used == 4 * GiB && !ai.swap_held && ai.residency == CG_RESIDENT, "back, 3+1 GiB");
    CHECK(cg_container_set_limit(core, a, 3 * GiB, 7, NULL) == CG_ERR_BELOW_USE, "below use");
    CHECK_CORE(core);
    cg_core_free(core);
}

/* A process that dies while out takes its host copy with it; the container comes back empty. */
static void test_exit_while_out(void)
{
    recorder r = {0};
    cg_core *core = mk(&r, CG_RESUME_FIFO, 10 * GiB, 64 * GiB);
    cg_cid a, b;
    contend(core, 0, false, 5, &a, &b);
    move_out(core, a, 1, 6 * GiB, 3);
    CHECK(cg_swap_host_bytes(core) == 6 * GiB, "on the host");
    CHECK(cg_process_exit(core, a, 1, 4) == CG_OK, "a's process dies");
    CHECK(cg_swap_host_bytes(core) == 0, "host copy gone with it");
    CHECK(last(&r, CG_EV_SWAP_IN, a) && last(&r, CG_EV_SWAP_IN, a)->bytes == 0,
          "comes back with nothing to bring");
    CHECK(cg_swap_in_done(core, a, 5) == CG_OK, "in");
    CHECK_CORE(core);
    /* Removal while moving out returns the reservation. */
    CHECK(cg_container_remove(core, b, 6) == CG_OK, "remove b");
    cg_cid c = make(core, 2 * GiB, 0, false, 6);
    CHECK(ask(core, c, 3, 3, 2 * GiB, 6) == CG_GRANTED, "c");
    CHECK(cg_swap_order(core, c, true, 7) == CG_OK, "c out");
    CHECK(cg_swap_host_bytes(core) == 2 * GiB, "reserved");
    CHECK(cg_container_remove(core, c, 8) == CG_OK, "remove while moving");
    CHECK(cg_swap_host_bytes(core) == 0, "reservation returned");
    CHECK_CORE(core);
    cg_core_free(core);
}

/* Priorities order the resume; aging lifts a long waiter into the top class. */
static void test_priority_and_aging(void)
{
    for (int aged = 0; aged < 2; aged++) {
        recorder r = {0};
        cg_core *core = mk(&r, CG_RESUME_FIFO, 10 * GiB, 0);
        cg_cid a = make(core, 10 * GiB, 0, false, 0);
        CHECK(ask(core, a, 1, 1, 10 * GiB, 0) == CG_GRANTED, "a");
        cg_cid b = make(core, 8 * GiB, 0, false, 1), c = make(core, 8 * GiB, 9, false, 2);
        CHECK(ask(core, b, 2, 2, 8 * GiB, 1 * SEC) == CG_SUSPENDED, "b");
        CHECK(ask(core, c, 3, 3, 8 * GiB, 2 * SEC) == CG_SUSPENDED, "c");
        /* Not aged: c (priority 9) first. Aged 9 steps: b reaches class 9, FIFO takes the older. */
        cg_time t = aged ? 1 * SEC + 9 * 60 * SEC : 3 * SEC;
        CHECK(cg_process_exit(core, a, 1, t) == CG_OK, "a exits");
        cg_container_remove(core, a, t);
        const cg_event *rb = last(&r, CG_EV_RESUME, b), *rc = last(&r, CG_EV_RESUME, c);
        CHECK(aged ? (rb && !rc) : (rc && !rb), "%s: %s first", aged ? "aged" : "fresh",
              aged ? "b" : "c");
        CHECK_CORE(core);
        cg_core_free(core);
    }
    recorder r = {0};
    cg_core *core = mk(&r, CG_RESUME_FIFO, 10 * GiB, 0);
    cg_cid a = make(core, 1 * GiB, 0, false, 0);
    CHECK(cg_container_set_priority(core, a, 10, 1) == CG_ERR_INVALID, "10 refused");
    CHECK(cg_container_set_priority(core, 77, 1, 1) == CG_ERR_NOT_FOUND, "unknown");
    CHECK(cg_container_set_priority(core, a, 4, 1) == CG_OK && info(core, a).priority == 4, "4");
    CHECK(last(&r, CG_EV_PRIORITY, a) && last(&r, CG_EV_PRIORITY, a)->bytes == 4, "event");
    cg_container_spec bad = {.device = 0, .limit = GiB, .priority = 10};
    CHECK(cg_container_create_spec(core, &bad, 1, NULL) == CG_ERR_INVALID, "create priority 10");
    cg_core_free(core);
}

/* A container just back from a swap is not swapped out again for a running victim's sake
 * within an aging step (no ping-pong). */
static void test_no_ping_pong(void)
{
    recorder r = {0};
    cg_core *core = mk(&r, CG_RESUME_FIFO, 10 * GiB, 64 * GiB);
    cg_cid a = make(core, 6 * GiB, 0, false, 0);
    CHECK(ask(core, a, 1, 1, 6 * GiB, 0) == CG_GRANTED, "a");
    CHECK(cg_swap_order(core, a, true, 1) == CG_OK, "out");
    move_out(core, a, 1, 6 * GiB, 2);
    CHECK(cg_swap_order(core, a, false, 3) == CG_OK, "in");
    CHECK(cg_swap_in_done(core, a, 4) == CG_OK, "in done");
    cg_cid b = make(core, 6 * GiB, 9, false, 5);
    CHECK(ask(core, b, 2, 2, 6 * GiB, 10 * SEC) == CG_SUSPENDED, "b");
    CHECK(count(&r, CG_EV_SWAP_OUT, a) == 1, "a protected right after coming back");
    cg_cid c = make(core, 6 * GiB, 9, false, 5);
    CHECK(ask(core, c, 3, 3, 6 * GiB, 4 + 61 * SEC) == CG_SUSPENDED, "c");
    CHECK(count(&r, CG_EV_SWAP_OUT, a) == 2, "after an aging step it may go again");
    CHECK_CORE(core);
    cg_core_free(core);
}

/* Every allocation of a request that would swap fails in turn: the request still gets its
 * answer, and no half-made order is left. */
static void test_alloc_failures(void)
{
    for (int k = 0; k < 12; k++) {
        recorder r = {0};
        fail_at = -1;
        cg_core *core = mk(&r, CG_RESUME_FIFO, 10 * GiB, 64 * GiB);
        cg_cid a = make(core, 6 * GiB, 0, false, 0), b = make(core, 6 * GiB, 5, false, 1);
        CHECK(ask(core, a, 1, 1, 6 * GiB, 1) == CG_GRANTED, "a");
        nalloc = 0;
        fail_at = k;
        cg_outcome o = CG_REJECTED;
        cg_status st = cg_request(core, b, 2, 2, 6 * GiB, 2, &o);
        fail_at = -1;
        CHECK(st == CG_OK || st == CG_ERR_NOMEM, "status %s", cg_status_str(st));
        if (st == CG_OK)
            CHECK(o == CG_SUSPENDED, "b waits");
        int outs = count(&r, CG_EV_SWAP_OUT, a);
        CHECK(outs <= 1 && (outs == 0 || info(core, a).residency == CG_MOVING_OUT),
              "order and state agree (k=%d)", k);
        CHECK_CORE(core);
        cg_core_free(core);
    }
}

/* Random operations, invariants after each; then everything drains. */
/* Over the runs with automatic pause: victims the scheduler checkpointed. */
static unsigned long auto_pauses;

static void test_random(unsigned seed, bool auto_pause)
{
    recorder r = {0};
    srand(seed);
    cg_resume_policy pol = (cg_resume_policy)(seed % CG_RESUME__COUNT);
    /* With automatic pause: a 512 MiB context a process, so checkpoints free more than swaps. */
    cg_core *core = mk_ctx(&r, pol, 16 * GiB, 8 * GiB + (seed % 3) * 8 * GiB,
                           auto_pause ? 512ull << 20 : 0, auto_pause);
    /* Every other seed with a static fair share over three tenants (issue 21): swap, priorities
     * and ceilings together keep every invariant and still drain. */
    bool fair = seed % 2 == 0;
    if (fair) {
        CHECK(cg_set_fair_share(core, CG_FAIR_STATIC, 0) == CG_OK, "fair share");
        CHECK(cg_tenant_set_weight(core, 2, 3, 0) == CG_OK, "weight");
    }
    enum { N = 8 };
    cg_cid ids[N] = {0};
    cg_time now = 0;
    cg_reqid next_req = 1;
    for (int step = 0; step < 3000; step++) {
        now += (cg_time)(rand() % 5) * SEC;
        int i = rand() % N;
        cg_pid pid = (cg_pid)(i * 10 + rand() % 2 + 1);
        int op = rand() % 10;
        r.n = 0;
        if (!ids[i]) {
            next_tenant = fair ? (uint32_t)(i % 3) : 0;
            ids[i] = make(core, (cg_bytes)(1 + rand() % 12) * GiB, (unsigned)(rand() % 10),
                          rand() % 5 == 0, now);
        } else if (op < 4) {
            cg_outcome o;
            cg_request(core, ids[i], pid, next_req++, (cg_bytes)(1 + rand() % 4) * GiB, now, &o);
        } else if (op == 4) {
            cg_process_exit(core, ids[i], pid, now);
        } else if (op == 5) {
            cg_swap_order(core, ids[i], rand() % 2, now);
        } else if (op == 6 && rand() % 4 == 0) {
            cg_container_remove(core, ids[i], now);
            ids[i] = 0;
        } else if (op == 7) {
            cg_container_set_priority(core, ids[i], (unsigned)(rand() % 10), now);
        }
        for (unsigned e = 0; e < r.n; e++)
            if (r.ev[e].kind == CG_EV_SWAP_OUT && r.ev[e].reason == CG_WHY_VICTIM &&
                cg_paused(core, r.ev[e].cid))
                auto_pauses++;
        CHECK(auto_pause || !cg_paused(core, ids[i]), "seed %u: paused with auto_pause off", seed);
        /* The mechanism: every container moving finishes its move now and then. */
        finish_some_moves(core, ids, N, now, true);
        const char *why = cg_core_check(core);
        CHECK(!why, "seed %u step %d: %s", seed, step, why ? why : "");
        if (why)
            break;
    }
    /* Drain: holds end, moves finish, processes exit; then nothing waits or is on the host. */
    for (int round = 0; round < 8; round++)
        for (int j = 0; j < N; j++) {
            if (!ids[j])
                continue;
            cg_container_info ci = info(core, ids[j]);
            if (ci.residency == CG_MOVING_OUT)
                cg_swap_out_done(core, ids[j], now);
            else if (ci.residency == CG_MOVING_IN)
                cg_swap_in_done(core, ids[j], now);
            else if (ci.residency == CG_SWAPPED_OUT && ci.swap_held)
                cg_swap_order(core, ids[j], false, now);
        }
    for (int j = 0; j < N; j++)
        if (ids[j])
            for (cg_pid p = (cg_pid)(j * 10 + 1); p <= (cg_pid)(j * 10 + 2); p++)
                cg_process_exit(core, ids[j], p, now);
    for (int round = 0; round < 8; round++)
        for (int j = 0; j < N; j++)
            if (ids[j] && info(core, ids[j]).residency == CG_MOVING_IN)
                cg_swap_in_done(core, ids[j], now);
    for (int j = 0; j < N; j++) {
        if (!ids[j])
            continue;
        cg_container_info ci = info(core, ids[j]);
        CHECK(ci.residency == CG_RESIDENT && ci.npending == 0 && ci.used == 0,
              "seed %u: container %u drained (%s, %u pending)", seed, ids[j],
              cg_residency_name(ci.residency), ci.npending);
    }
    CHECK(cg_swap_host_bytes(core) == 0, "seed %u: host empty", seed);
    CHECK_CORE(core);
    cg_core_free(core);
}

int main(void)
{
    test_priority_victim();
    test_equal_running_not_victim();
    test_suspended_first();
    test_budget_and_no_swap();
    test_operator_hold();
    test_exit_while_out();
    test_priority_and_aging();
    test_no_ping_pong();
    test_alloc_failures();
    victims_seen = swap_ins_seen = 0;
    for (unsigned s = 1; s <= 40; s++)
        test_random(s, false);
    /* The same walks with automatic pause on (victim_backend.c): every invariant still holds,
     * everything still drains, and the scheduler did checkpoint some victims. */
    for (unsigned s = 1; s <= 40; s++)
        test_random(s, true);
    fprintf(stderr, "random runs with automatic pause: %lu victims checkpointed\n", auto_pauses);
    CHECK(auto_pauses > 10, "the random runs exercised automatic pause (%lu)", auto_pauses);
    fprintf(stderr, "random runs: %lu victims ordered out, %lu swap-ins\n", victims_seen,
            swap_ins_seen);
    CHECK(victims_seen > 100 && swap_ins_seen > 100, "the random runs exercised swap");
    if (failures)
        fprintf(stderr, "%d failure(s)\n", failures);
    return failures != 0;
}

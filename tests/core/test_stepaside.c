/* test_stepaside.c — seed 001's "a declined container steps aside" (src/core/stepaside.c):
 * a waiting container that cannot be served is swapped out so that one behind it runs; after
 * the bound it takes back what was handed out since; the rule stays off without swap, when
 * turned off, and for a container of a lower class; then random operations with every
 * invariant checked after each step, the rule and its reclaim asserted to have fired, and
 * everything drained at the end. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "core_test.h"
#include "core.h"

#define GiB (1ull << 30)
#define SEC 1000000000ull
#define BOUND (60 * SEC)

typedef struct {
    cg_event ev[512];
    unsigned n;
} recorder;

/* Over the random runs: request id -> container, and who is lending now. */
#define MAXREQ 8192
static cg_cid req_owner[MAXREQ];
static bool lending_now[64];
static unsigned long step_asides, reclaims, lender_ins;

static void record(void *ctx, const cg_event *ev)
{
    recorder *r = ctx;
    if (ev->kind == CG_EV_SWAP_OUT && ev->reason == CG_WHY_STEP_ASIDE && ev->cid < 64) {
        step_asides++;
        lending_now[ev->cid] = true;
    }
    if (ev->kind == CG_EV_SWAP_OUT && ev->reason == CG_WHY_VICTIM && ev->req < MAXREQ &&
        req_owner[ev->req] < 64 && lending_now[req_owner[ev->req]])
        reclaims++;
    if (ev->kind == CG_EV_SWAP_IN && ev->cid < 64 && lending_now[ev->cid]) {
        lender_ins++;
        lending_now[ev->cid] = false;
    }
    if (ev->kind == CG_EV_REMOVE && ev->cid < 64)
        lending_now[ev->cid] = false;
    if (r->n < 512)
        r->ev[r->n++] = *ev;
}

static const cg_event *last(const recorder *r, cg_event_kind kind, cg_cid cid)
{
    for (unsigned i = r->n; i-- > 0;)
        if (r->ev[i].kind == kind && r->ev[i].cid == cid)
            return &r->ev[i];
    return NULL;
}

static int count(const recorder *r, cg_event_kind kind)
{
    int k = 0;
    for (unsigned i = 0; i < r->n; i++)
        k += r->ev[i].kind == kind;
    return k;
}

static cg_core *mk(recorder *rec, cg_resume_policy pol, cg_bytes swap_limit, bool off)
{
    cg_config cfg = {.resume = pol, .seed = 7, .sink = record, .sink_ctx = rec,
                     .mem_alloc = test_alloc, .mem_free = test_free, .swap_limit = swap_limit,
                     .aging_step = 600 * SEC, .step_aside_bound = BOUND, .no_step_aside = off};
    cg_core *core = cg_core_new(&cfg);
    CHECK(core && cg_device_add(core, 10 * GiB, 0, 0, NULL) == CG_OK, "core");
    return core;
}

static cg_cid make(cg_core *core, cg_bytes limit, unsigned prio, cg_time now)
{
    cg_container_spec s = {.device = 0, .limit = limit, .priority = prio};
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

static void move_out(cg_core *core, cg_cid cid, cg_pid pid, cg_bytes bytes, cg_time now)
{
    if (bytes)
        CHECK(cg_process_swap_out(core, cid, pid, bytes, now) == CG_OK, "swap out %u", cid);
    CHECK(cg_swap_out_done(core, cid, now) == CG_OK, "out done %u", cid);
}

/* Seed 001's Figure 14 on one 10 GiB device: x runs with 4; r holds 6 and is declined 2 more;
 * b arrives asking for 5, which r holds. r steps aside, b runs; r waits out. */
static void scene(cg_core *core, recorder *rec, unsigned prio_b, cg_cid *x, cg_cid *r, cg_cid *b)
{
    *x = make(core, 4 * GiB, 0, 0);
    CHECK(ask(core, *x, 1, 1, 4 * GiB, 0) == CG_GRANTED, "x runs");
    *r = make(core, 8 * GiB, 0, 1);
    CHECK(info(core, *r).assigned == 6 * GiB, "r holds 6");
    CHECK(ask(core, *r, 2, 2, 6 * GiB, 1) == CG_GRANTED, "r uses 6");
    CHECK(ask(core, *r, 2, 3, 2 * GiB, 2) == CG_SUSPENDED, "r declined 2 more");
    CHECK(count(rec, CG_EV_SWAP_OUT) == 0, "nobody to step aside for yet");
    *b = make(core, 5 * GiB, prio_b, 3);
    CHECK(ask(core, *b, 3, 4, 5 * GiB, 3) == CG_SUSPENDED, "b waits first");
    CHECK_CORE(core);
}

static void test_steps_aside_and_takes_back(void)
{
    recorder rec = {0};
    cg_core *core = mk(&rec, CG_RESUME_FIFO, 64 * GiB, false);
    cg_cid x, r, b;
    scene(core, &rec, 0, &x, &r, &b);
    const cg_event *o = last(&rec, CG_EV_SWAP_OUT, r);
    CHECK(o && o->reason == CG_WHY_STEP_ASIDE && o->req == 4, "r steps aside for b's request");
    CHECK(info(core, r).residency == CG_MOVING_OUT, "r moving out");
    move_out(core, r, 2, 6 * GiB, 4);
    CHECK_CORE(core);
    const cg_event *res = last(&rec, CG_EV_RESUME, b);
    CHECK(res && res->req == 4, "b runs on what r held");
    cg_container_info ri = info(core, r);
    CHECK(ri.residency == CG_SWAPPED_OUT && ri.swapped == 6 * GiB && ri.npending == 1 &&
              ri.state == CG_STATE_SUSPENDED,
          "r waits out with its request");
    /* Before the bound: x leaves, r gets the 4 GiB (it is the only one waiting) but not b's. */
    unsigned before = rec.n;
    CHECK(cg_container_remove(core, x, 10 * SEC) == CG_OK, "x leaves");
    CHECK_CORE(core);
    CHECK(info(core, r).assigned == 5 * GiB && info(core, r).residency == CG_SWAPPED_OUT,
          "r offered the free 4, still out");
    for (unsigned i = before; i < rec.n; i++)
        CHECK(rec.ev[i].kind != CG_EV_SWAP_OUT, "before the bound, b keeps its memory");
    /* A decision after the bound: r takes its memory back from b, its borrower. */
    cg_cid d = make(core, 1 * GiB, 0, 20 * SEC + BOUND);
    CHECK(ask(core, d, 4, 5, 1 * GiB, 20 * SEC + BOUND) == CG_SUSPENDED, "d waits");
    o = last(&rec, CG_EV_SWAP_OUT, b);
    CHECK(o && o->reason == CG_WHY_VICTIM && o->req == 3, "b moved out for r's request");
    move_out(core, b, 3, 5 * GiB, 21 * SEC + BOUND);
    CHECK_CORE(core);
    const cg_event *in = last(&rec, CG_EV_SWAP_IN, r);
    CHECK(in && in->bytes == 6 * GiB, "r ordered back in");
    CHECK(cg_swap_in_done(core, r, 22 * SEC + BOUND) == CG_OK, "r in");
    res = last(&rec, CG_EV_RESUME, r);
    CHECK(res && res->req == 3, "r's declined request granted");
    /* d, newer and in the group of requests, was served from what was left after r. */
    const cg_event *dres = last(&rec, CG_EV_RESUME, d);
    CHECK(dres && in && dres > in, "d served after r was given its memory");
    CHECK_CORE(core);
    /* r finishes: b comes back. */
    CHECK(cg_container_remove(core, r, 23 * SEC + BOUND) == CG_OK, "r leaves");
    CHECK(last(&rec, CG_EV_SWAP_IN, b) != NULL, "b ordered back in");
    CHECK_CORE(core);
    cg_core_free(core);
}

/* The rule is off without swap, when turned off, and for a container of a lower class. */
static void test_not_applied(void)
{
    struct {
        cg_bytes swap;
        bool off;
        unsigned prio_b;
        const char *what;
    } cases[] = {
        {0, false, 0, "swap off"},
        {64 * GiB, true, 0, "rule turned off"},
        {64 * GiB, false, 0, "budget too small"},
    };
    cases[2].swap = 5 * GiB; /* r's 6 GiB does not fit the host budget */
    for (unsigned k = 0; k < sizeof cases / sizeof *cases; k++) {
        recorder rec = {0};
        cg_core *core = mk(&rec, CG_RESUME_FIFO, cases[k].swap, cases[k].off);
        cg_cid x, r, b;
        scene(core, &rec, cases[k].prio_b, &x, &r, &b);
        CHECK(count(&rec, CG_EV_SWAP_OUT) == 0, "%s: nobody moves", cases[k].what);
        CHECK(info(core, b).state == CG_STATE_SUSPENDED, "%s: b waits", cases[k].what);
        cg_core_free(core);
    }
    /* r of priority 5 (its class above b's 0): b would be offered memory after r, so r keeps
     * its memory. */
    recorder rec = {0};
    cg_core *core = mk(&rec, CG_RESUME_FIFO, 64 * GiB, false);
    cg_cid x = make(core, 4 * GiB, 5, 0);   /* of r's priority: never a victim for r */
    CHECK(ask(core, x, 1, 1, 4 * GiB, 0) == CG_GRANTED, "x");
    cg_cid r = make(core, 8 * GiB, 5, 1);
    CHECK(ask(core, r, 2, 2, 6 * GiB, 1) == CG_GRANTED, "r");
    CHECK(ask(core, r, 2, 3, 2 * GiB, 2) == CG_SUSPENDED, "r waits");
    cg_cid b = make(core, 5 * GiB, 0, 3);
    CHECK(ask(core, b, 3, 4, 5 * GiB, 3) == CG_SUSPENDED, "b waits");
    CHECK(count(&rec, CG_EV_SWAP_OUT) == 0, "lower class: r keeps its memory");
    CHECK_CORE(core);
    cg_core_free(core);
}

/* Every allocation of the request that makes r step aside fails in turn: the request still gets
 * its answer, and no half-made order is left. */
static void test_alloc_failures(void)
{
    for (int k = 0; k < 12; k++) {
        recorder rec = {0};
        fail_at = -1;
        cg_core *core = mk(&rec, CG_RESUME_FIFO, 64 * GiB, false);
        cg_cid x = make(core, 4 * GiB, 0, 0);
        CHECK(ask(core, x, 1, 1, 4 * GiB, 0) == CG_GRANTED, "x");
        cg_cid r = make(core, 8 * GiB, 0, 1);
        CHECK(ask(core, r, 2, 2, 6 * GiB, 1) == CG_GRANTED, "r");
        CHECK(ask(core, r, 2, 3, 2 * GiB, 2) == CG_SUSPENDED, "r waits");
        cg_cid b = make(core, 5 * GiB, 0, 3);
        nalloc = 0;
        fail_at = k;
        cg_outcome o = CG_REJECTED;
        cg_status st = cg_request(core, b, 3, 4, 5 * GiB, 3, &o);
        fail_at = -1;
        CHECK(st == CG_OK || st == CG_ERR_NOMEM, "status %s", cg_status_str(st));
        int outs = count(&rec, CG_EV_SWAP_OUT);
        CHECK(outs <= 1 && (outs == 0 || info(core, r).residency == CG_MOVING_OUT),
              "order and state agree (k=%d)", k);
        CHECK_CORE(core);
        cg_core_free(core);
    }
}

/* Random operations with equal priorities mostly (where the rule applies), time running past
 * the bound; invariants after every step; then everything drains. */
static void test_random(unsigned seed)
{
    recorder rec = {0};
    srand(seed);
    cg_resume_policy pol = (cg_resume_policy)(seed % CG_RESUME__COUNT);
    cg_core *core = mk(&rec, pol, 8 * GiB + (seed % 3) * 8 * GiB, false);
    if (seed % 4 == 0)
        CHECK(cg_set_fair_share(core, CG_FAIR_STATIC, 0) == CG_OK, "fair share");
    enum { N = 8 };
    cg_cid ids[N] = {0};
    cg_time now = 0;
    cg_reqid next_req = 1;
    memset(lending_now, 0, sizeof lending_now);
    for (int step = 0; step < 3000 && next_req < MAXREQ; step++) {
        now += (cg_time)(rand() % 8) * SEC;
        int i = rand() % N;
        cg_pid pid = (cg_pid)(i * 10 + rand() % 2 + 1);
        int op = rand() % 12;
        rec.n = 0;
        if (!ids[i]) {
            cg_container_spec s = {.device = 0, .limit = (cg_bytes)(1 + rand() % 8) * GiB,
                                   .priority = rand() % 8 == 0 ? 3u : 0u,
                                   .no_swap = rand() % 8 == 0, .tenant = (uint32_t)(i % 3)};
            CHECK(cg_container_create_spec(core, &s, now, &ids[i]) == CG_OK, "create");
        } else if (op < 5) {
            cg_outcome o;
            req_owner[next_req] = ids[i];
            cg_request(core, ids[i], pid, next_req++, (cg_bytes)(1 + rand() % 3) * GiB, now, &o);
        } else if (op == 5) {
            cg_process_exit(core, ids[i], pid, now);
        } else if (op == 6 && rand() % 3 == 0) {
            cg_container_remove(core, ids[i], now);
            ids[i] = 0;
        } else if (op == 7 && rand() % 4 == 0) {
            cg_swap_order(core, ids[i], rand() % 2, now);
        } else if (op == 8) {
            cg_process_info ps[4];
            size_t np = cg_container_processes(core, ids[i], ps, 4);
            if (np && ps[0].used)
                cg_release(core, ids[i], ps[0].pid, ps[0].used, now);
        }
        finish_some_moves(core, ids, N, now, false);
        const char *why = cg_core_check(core);
        CHECK(!why, "seed %u step %d: %s", seed, step, why ? why : "");
        if (why)
            break;
    }
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
    test_steps_aside_and_takes_back();
    test_not_applied();
    test_alloc_failures();
    step_asides = reclaims = lender_ins = 0;
    for (unsigned s = 1; s <= 40; s++)
        test_random(s);
    fprintf(stderr, "random runs: %lu step-asides, %lu borrowers moved out for a due lender, "
                    "%lu lenders back in\n", step_asides, reclaims, lender_ins);
    CHECK(step_asides > 50, "the random runs stepped aside");
    CHECK(reclaims > 5, "the random runs reached the bound and took memory back");
    CHECK(lender_ins > 20, "lenders came back");
    if (failures)
        fprintf(stderr, "%d failure(s)\n", failures);
    return failures != 0;
}

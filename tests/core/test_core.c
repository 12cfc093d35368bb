/* test_core.c — focused tests of the scheduling core: the paper's Figure 3 under every policy,
 * the deadlock the paper's plain partial assignment allows, limits, context charges, placement,
 * compute shares (admission, placement weighing compute), names, every error path (state and
 * event stream unchanged), determinism, and injected allocation failures at every allocation of
 * every operation. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core_test.h" /* CHECK (check.h), CHECK_CORE, info */

/* ---- event recorder ---------------------------------------------------------------------- */

typedef struct {
    cg_event ev[256];
    unsigned n;
    uint64_t hash;
} recorder;

static void record(void *ctx, const cg_event *ev)
{
    recorder *r = ctx;
    if (r->n < 256)
        r->ev[r->n] = *ev;
    r->n++;
    const unsigned char *b = (const unsigned char *)ev;
    for (size_t i = 0; i < sizeof *ev; i++)
        r->hash = (r->hash ^ b[i]) * 0x100000001b3ull;
}

/* Index of the first event of `kind` for `cid`, or -1. */
static int find_ev(const recorder *r, cg_event_kind kind, cg_cid cid)
{
    for (unsigned i = 0; i < r->n && i < 256; i++)
        if (r->ev[i].kind == kind && r->ev[i].cid == cid)
            return (int)i;
    return -1;
}

static cg_core *mk(cg_resume_policy p, recorder *rec, cg_bytes cap, cg_bytes ctx)
{
    cg_config cfg = {.resume = p, .seed = 42, .sink = record, .sink_ctx = rec};
    cg_core *core = cg_core_new(&cfg);
    CHECK(core && cg_device_add(core, cap, 0, ctx, NULL) == CG_OK);
    return core;
}

static cg_outcome req(cg_core *core, cg_cid cid, cg_pid pid, cg_reqid id, cg_bytes b)
{
    cg_outcome o = CG_REJECTED;
    CHECK(cg_request(core, cid, pid, id, b, 0, &o) == CG_OK);
    return o;
}

/* ---- Figure 3 ---------------------------------------------------------------------------- */

/* Capacity 10. A (L=3) and B (L=4) run; C (L=5) is created with a partial assignment of 3 and
 * runs within it; C asks for 4 and is suspended; D (L=4) gets nothing and is suspended asking
 * for 3. B terminates: 4 bytes free, C's shortfall is 2, D's is 4. Returns the container that
 * resumed (C or D); the other must still be suspended. */
static char figure3(cg_resume_policy p)
{
    recorder rec = {0};
    cg_core *core = mk(p, &rec, 10, 0);
    cg_cid a, b, c, d;
    CHECK(cg_container_create(core, 0, 3, 0, &a) == CG_OK);
    CHECK(cg_container_create(core, 0, 4, 0, &b) == CG_OK);
    CHECK(req(core, a, 1, 1, 3) == CG_GRANTED && req(core, b, 2, 2, 4) == CG_GRANTED);
    CHECK(cg_container_create(core, 0, 5, 0, &c) == CG_OK);
    CHECK(info(core, c).assigned == 3);                         /* 3b: partial assignment */
    CHECK(req(core, c, 3, 3, 2) == CG_GRANTED);                 /* within its assignment */
    CHECK(req(core, c, 3, 4, 2) == CG_SUSPENDED);               /* 3c */
    CHECK(cg_container_create(core, 0, 4, 0, &d) == CG_OK && info(core, d).assigned == 0);
    CHECK(req(core, d, 4, 5, 3) == CG_SUSPENDED);
    CHECK_CORE(core);
    rec.n = 0;
    CHECK(cg_container_remove(core, b, 0) == CG_OK);            /* 3d */
    CHECK_CORE(core);
    bool c_run = info(core, c).state == CG_STATE_RUNNING;
    bool d_run = info(core, d).state == CG_STATE_RUNNING;
    CHECK(c_run != d_run);
    char who = c_run ? 'C' : 'D';
    /* The resumed one reached A = L; its RESUME event carries the request id. */
    CHECK(c_run ? info(core, c).assigned == 5 : info(core, d).assigned == 4);
    CHECK(find_ev(&rec, CG_EV_RESUME, c_run ? c : d) >= 0);
    cg_core_free(core);
    return who;
}

static void test_figure3(void)
{
    CHECK(figure3(CG_RESUME_FIFO) == 'C');       /* oldest created; D then gets the rest (2) */
    CHECK(figure3(CG_RESUME_BEST_FIT) == 'D');   /* shortfall 4 is closest to free 4 */
    CHECK(figure3(CG_RESUME_RECENT) == 'D');     /* suspended last */
    CHECK(figure3(CG_RESUME_AGING_FIT) == 'C');
    char r = figure3(CG_RESUME_RANDOM);
    CHECK(r == 'C' || r == 'D');
    /* FIFO, as in the paper's 3d: D keeps the remaining 2 bytes and stays suspended. */
    recorder rec = {0};
    cg_core *core = mk(CG_RESUME_FIFO, &rec, 10, 0);
    cg_cid a, b, c, d;
    cg_container_create(core, 0, 3, 0, &a);
    cg_container_create(core, 0, 4, 0, &b);
    req(core, a, 1, 1, 3), req(core, b, 2, 2, 4);
    cg_container_create(core, 0, 5, 0, &c);
    req(core, c, 3, 3, 2), req(core, c, 3, 4, 2);
    cg_container_create(core, 0, 4, 0, &d);
    req(core, d, 4, 5, 3);
    cg_container_remove(core, b, 0);
    CHECK(info(core, d).assigned == 2 && info(core, d).state == CG_STATE_SUSPENDED);
    cg_core_free(core);
}

/* ---- the deadlock the paper's A = min(L, free) allows ------------------------------------ */

/* Capacity 10. W (L=5) holds 5; X (L=8) is created: the paper would give min(8, 5) = 5. W goes;
 * Y (L=8) is created: the paper would give min(8, 5) = 5, leaving X and Y each 3 short with
 * nothing free: both suspend forever. Banker-safe creation gives Y only 2, so X can finish. */
static void test_deadlock_avoided(void)
{
    recorder rec = {0};
    cg_core *core = mk(CG_RESUME_FIFO, &rec, 10, 0);
    cg_cid w, x, y;
    cg_container_create(core, 0, 5, 0, &w);
    req(core, w, 1, 1, 5);
    cg_container_create(core, 0, 8, 0, &x);
    CHECK(info(core, x).assigned == 5);
    cg_container_remove(core, w, 0);
    cg_container_create(core, 0, 8, 0, &y);
    CHECK(info(core, y).assigned == 2);
    CHECK(req(core, x, 2, 2, 8) == CG_GRANTED);   /* raised by 3 from the 3 still free */
    CHECK(req(core, y, 3, 3, 8) == CG_SUSPENDED);
    CHECK_CORE(core);
    CHECK(cg_process_exit(core, x, 2, 0) == CG_OK && cg_container_remove(core, x, 0) == CG_OK);
    CHECK(info(core, y).state == CG_STATE_RUNNING && info(core, y).used == 8);
    CHECK_CORE(core);
    cg_core_free(core);
}

/* A restarted daemon re-creates containers with their recorded assignment; anything that would
 * not fit or would be unsafe is refused and changes nothing. */
static void test_restore(void)
{
    recorder rec = {0};
    cg_core *core = mk(CG_RESUME_FIFO, &rec, 10, 0);
    cg_cid a, b, bad;
    CHECK(cg_container_restore(core, 0, 8, 3, 5, &a) == CG_OK && info(core, a).assigned == 3);
    CHECK(cg_container_restore(core, 0, 4, 4, 6, &b) == CG_OK && info(core, b).assigned == 4);
    CHECK(cg_process_set_use(core, a, 1, 3, 7) == CG_OK && info(core, a).used == 3);
    size_t nev = rec.n;
    /* free is 3; a needs 5 more. */
    CHECK(cg_container_restore(core, 0, 5, 4, 8, &bad) == CG_ERR_INVALID);   /* over free */
    CHECK(cg_container_restore(core, 0, 2, 3, 8, &bad) == CG_ERR_INVALID);   /* over limit */
    CHECK(cg_container_restore(core, 1, 2, 1, 8, &bad) == CG_ERR_NO_DEVICE);
    CHECK(cg_container_restore(core, 0, 10, 3, 8, &bad) == CG_ERR_INVALID);  /* unsafe: needs 7 */
    CHECK(rec.n == nev);
    CHECK(cg_container_next(core, b) == CG_CID_NONE);
    CHECK_CORE(core);
    /* FIFO order survives: a (created first) resumes before a later container. */
    cg_cid c;
    CHECK(cg_container_create(core, 0, 2, 9, &c) == CG_OK);
    CHECK(info(core, c).assigned == 2);
    CHECK(req(core, a, 1, 1, 5) == CG_SUSPENDED);
    CHECK(req(core, c, 2, 2, 2) == CG_GRANTED);
    CHECK(cg_container_remove(core, b, 10) == CG_OK);
    CHECK(info(core, a).state == CG_STATE_RUNNING && info(core, a).used == 8);
    CHECK_CORE(core);
    cg_core_free(core);
}

/* ---- requests, context charge, limits ---------------------------------------------------- */

static void test_requests_and_context(void)
{
    recorder rec = {0};
    cg_core *core = mk(CG_RESUME_FIFO, &rec, 1000, 66);
    cg_cid c;
    CHECK(cg_container_create(core, 0, 200, 0, &c) == CG_OK);
    CHECK(req(core, c, 7, 1, 100) == CG_GRANTED && info(core, c).used == 166);
    CHECK(rec.ev[rec.n - 1].kind == CG_EV_GRANT && rec.ev[rec.n - 1].bytes == 166);
    CHECK(req(core, c, 7, 2, 34) == CG_GRANTED && info(core, c).used == 200);
    CHECK(req(core, c, 7, 3, 1) == CG_REJECTED);                 /* over the limit */
    CHECK(rec.ev[rec.n - 1].reason == CG_WHY_OVER_LIMIT);
    CHECK(req(core, c, 8, 4, 1) == CG_REJECTED);                 /* a new pid: 1 + 66 */
    CHECK(cg_release(core, c, 7, 100, 0) == CG_OK && info(core, c).used == 100);
    cg_process_info pi[4];
    CHECK(cg_container_processes(core, c, pi, 4) == 1 && pi[0].pid == 7 && pi[0].used == 100);
    CHECK(cg_process_exit(core, c, 7, 0) == CG_OK && info(core, c).used == 0);
    CHECK(info(core, c).assigned == 200);                        /* A stays with the container */
    CHECK_CORE(core);
    cg_core_free(core);
}

static void test_limits(void)
{
    recorder rec = {0};
    cg_core *core = mk(CG_RESUME_FIFO, &rec, 10, 0);
    cg_cid a, b;
    bool pend = true;
    cg_container_create(core, 0, 6, 0, &a);
    req(core, a, 1, 1, 4);
    CHECK(cg_container_set_limit(core, a, 3, 0, &pend) == CG_ERR_BELOW_USE);
    CHECK(info(core, a).limit == 6);
    CHECK(cg_container_set_limit(core, a, 5, 0, &pend) == CG_OK && !pend);
    CHECK(info(core, a).limit == 5 && info(core, a).assigned == 5);
    CHECK(rec.ev[rec.n - 1].kind == CG_EV_UNASSIGN && rec.ev[rec.n - 1].bytes == 1);
    /* b (L=6) gets 5 and uses them; raising a to 10 is then unsafe (b needs 1, 0 free). */
    cg_container_create(core, 0, 6, 0, &b);
    CHECK(info(core, b).assigned == 5);
    req(core, b, 2, 2, 5);
    CHECK(cg_container_set_limit(core, a, 10, 0, &pend) == CG_OK && pend);
    CHECK(info(core, a).limit == 5 && info(core, a).limit_waiting == 10);
    CHECK_CORE(core);
    CHECK(cg_container_set_limit(core, a, 11, 0, &pend) == CG_ERR_TOO_LARGE);
    CHECK(info(core, a).limit_waiting == 10);
    rec.n = 0;
    CHECK(cg_container_remove(core, b, 0) == CG_OK);            /* now safe: applied */
    CHECK(info(core, a).limit == 10 && info(core, a).limit_waiting == 0);
    CHECK(find_ev(&rec, CG_EV_LIMIT, a) >= 0);
    /* A later set_limit replaces a waiting one. */
    CHECK(cg_container_set_limit(core, a, 6, 0, &pend) == CG_OK && !pend);
    CHECK(req(core, a, 1, 9, 2) == CG_GRANTED && info(core, a).assigned == 6);
    cg_container_create(core, 0, 5, 0, &b);
    req(core, b, 2, 3, 4);
    CHECK(cg_container_set_limit(core, a, 10, 0, &pend) == CG_OK && pend);
    CHECK(cg_container_set_limit(core, a, 7, 0, &pend) == CG_OK && pend);   /* still unsafe */
    CHECK(info(core, a).limit_waiting == 7);
    CHECK(cg_container_set_limit(core, a, 6, 0, &pend) == CG_OK && !pend);  /* withdrawn */
    CHECK(info(core, a).limit == 6 && info(core, a).limit_waiting == 0);
    CHECK_CORE(core);
    cg_core_free(core);

    /* Lowering a suspended container's limit rejects what can no longer fit and resumes others
     * with what it returns. */
    rec.n = 0;
    core = mk(CG_RESUME_FIFO, &rec, 10, 0);
    cg_cid c, d;
    cg_container_create(core, 0, 6, 0, &c);
    req(core, c, 1, 1, 6);
    cg_container_create(core, 0, 8, 0, &d);
    CHECK(info(core, d).assigned == 4);
    req(core, d, 2, 2, 3);
    CHECK(req(core, d, 2, 3, 4) == CG_SUSPENDED);
    CHECK(cg_container_set_limit(core, d, 6, 0, &pend) == CG_OK);
    CHECK(info(core, d).state == CG_STATE_RUNNING && info(core, d).used == 3);
    CHECK(rec.ev[rec.n - 1].kind == CG_EV_REJECT && rec.ev[rec.n - 1].reason == CG_WHY_OVER_LIMIT);
    CHECK(cg_container_set_limit(core, d, 3, 0, &pend) == CG_OK && info(core, d).assigned == 3);
    CHECK_CORE(core);
    cg_core_free(core);
}

/* ---- placement --------------------------------------------------------------------------- */

static void test_placement(void)
{
    static const struct { cg_placement_policy p; unsigned want; } cases[] = {
        {CG_PLACE_FIRST_FIT, 0}, {CG_PLACE_LEAST_LOADED, 2}, {CG_PLACE_BINPACK, 1}};
    for (unsigned i = 0; i < 3; i++) {
        cg_config cfg = {.placement = cases[i].p};
        cg_core *core = cg_core_new(&cfg);
        cg_device_add(core, 100, 0, 0, NULL);
        cg_device_add(core, 100, 0, 0, NULL);
        cg_device_add(core, 100, 0, 0, NULL);
        cg_cid x;
        cg_container_create(core, 0, 50, 0, &x);    /* dev0: 50 free */
        cg_container_create(core, 1, 70, 0, &x);    /* dev1: 30 free */
        cg_container_create(core, 2, 10, 0, &x);    /* dev2: 90 free */
        CHECK(cg_container_create(core, -1, 20, 0, &x) == CG_OK);
        CHECK(info(core, x).device == cases[i].want);
        /* Nothing holds 95 free: it waits on the device with the most free memory. */
        CHECK(cg_container_create(core, -1, 95, 0, &x) == CG_OK && info(core, x).device == 2);
        CHECK(cg_container_create(core, -1, 101, 0, &x) == CG_ERR_TOO_LARGE);
        CHECK_CORE(core);
        cg_core_free(core);
    }
}

/* ---- compute shares ---------------------------------------------------------------------- */

static void digest(const cg_core *core, char *buf, size_t len);

static cg_cid mk_share(cg_core *core, int dev, cg_bytes limit, unsigned pct, cg_compute_mode m,
                       cg_status want)
{
    cg_container_spec spec = {.device = dev, .limit = limit, .compute_pct = pct,
                              .compute_mode = m};
    cg_cid cid = CG_CID_NONE;
    cg_status st = cg_container_create_spec(core, &spec, 0, &cid);
    if (st != want) {
        fprintf(stderr, "create_spec(dev %d, limit %" PRIu64 ", %u%% %s): got %s, want %s\n", dev,
                limit, pct, cg_compute_mode_name(m), cg_status_str(st), cg_status_str(want));
        failures++;
    }
    return cid;
}

static unsigned hard_on(const cg_core *core, unsigned dev)
{
    cg_device_info di = {0};
    CHECK(cg_device_get(core, dev, &di) == CG_OK);
    return di.compute_hard_pct;
}

/* Hard shares on a device sum to at most 100; elastic ones are admitted against nothing; a
 * refusal changes nothing and says nothing; every change is one COMPUTE event. */
static void test_compute_admission(void)
{
    recorder rec = {0};
    cg_core *core = mk(CG_RESUME_FIFO, &rec, 100, 0);
    cg_cid a = mk_share(core, 0, 10, 30, CG_COMPUTE_HARD, CG_OK);
    int ev = find_ev(&rec, CG_EV_COMPUTE, a);
    CHECK(ev > find_ev(&rec, CG_EV_ADMIT, a) && rec.ev[ev].compute_pct == 30 &&
          rec.ev[ev].compute_mode == CG_COMPUTE_HARD && rec.ev[ev].bytes == 0);
    cg_cid b = mk_share(core, 0, 10, 70, CG_COMPUTE_HARD, CG_OK);
    CHECK(hard_on(core, 0) == 100);
    cg_cid e = mk_share(core, 0, 10, 100, CG_COMPUTE_ELASTIC, CG_OK);   /* elastic: not admitted */
    cg_cid n = mk_share(core, 0, 10, 0, CG_COMPUTE_HARD, CG_OK);        /* no share: elastic */
    CHECK(find_ev(&rec, CG_EV_COMPUTE, n) < 0);
    CHECK(info(core, n).compute_pct == 0 && info(core, n).compute_mode == CG_COMPUTE_ELASTIC);
    CHECK(info(core, e).compute_pct == 100 && info(core, e).compute_mode == CG_COMPUTE_ELASTIC);
    CHECK(hard_on(core, 0) == 100);
    CHECK_CORE(core);

    /* Full: every refusal leaves the state and the event stream as they were. */
    char before[4096], after[4096];
    digest(core, before, sizeof before);
    unsigned n0 = rec.n;
    mk_share(core, 0, 10, 1, CG_COMPUTE_HARD, CG_ERR_NO_COMPUTE);
    mk_share(core, -1, 10, 1, CG_COMPUTE_HARD, CG_ERR_NO_COMPUTE);
    mk_share(core, 0, 10, 101, CG_COMPUTE_ELASTIC, CG_ERR_INVALID);
    mk_share(core, 0, 10, 10, (cg_compute_mode)7, CG_ERR_INVALID);
    CHECK(cg_container_set_compute(core, a, 31, CG_COMPUTE_HARD, 0) == CG_ERR_NO_COMPUTE);
    CHECK(cg_container_compute_check(core, a, 31, CG_COMPUTE_HARD) == CG_ERR_NO_COMPUTE);
    CHECK(cg_container_set_compute(core, e, 1, CG_COMPUTE_HARD, 0) == CG_ERR_NO_COMPUTE);
    CHECK(cg_container_set_compute(core, n, 5, CG_COMPUTE_HARD, 0) == CG_ERR_NO_COMPUTE);
    CHECK(cg_container_set_compute(core, a, 101, CG_COMPUTE_ELASTIC, 0) == CG_ERR_INVALID);
    CHECK(cg_container_set_compute(core, a, 30, (cg_compute_mode)2, 0) == CG_ERR_INVALID);
    CHECK(cg_container_set_compute(core, 77, 30, CG_COMPUTE_HARD, 0) == CG_ERR_NOT_FOUND);
    CHECK(cg_container_compute_check(core, CG_CID_NONE, 1, CG_COMPUTE_HARD) == CG_ERR_NOT_FOUND);
    CHECK(cg_container_set_compute(core, a, 30, CG_COMPUTE_HARD, 0) == CG_OK);   /* unchanged */
    digest(core, after, sizeof after);
    CHECK(strcmp(before, after) == 0);
    CHECK(rec.n == n0);

    /* Room made by lowering one share (or making it elastic) is there for another at once. */
    CHECK(cg_container_compute_check(core, b, 60, CG_COMPUTE_HARD) == CG_OK);
    CHECK(cg_container_set_compute(core, b, 60, CG_COMPUTE_HARD, 5) == CG_OK);
    CHECK(rec.n == n0 + 1 && rec.ev[n0].kind == CG_EV_COMPUTE && rec.ev[n0].cid == b &&
          rec.ev[n0].compute_pct == 60 && rec.ev[n0].now == 5);
    CHECK(cg_container_set_compute(core, a, 40, CG_COMPUTE_HARD, 0) == CG_OK);
    CHECK(hard_on(core, 0) == 100);
    CHECK(cg_container_set_compute(core, b, 60, CG_COMPUTE_ELASTIC, 0) == CG_OK);
    CHECK(hard_on(core, 0) == 40);
    CHECK(cg_container_set_compute(core, e, 60, CG_COMPUTE_HARD, 0) == CG_OK);
    CHECK(cg_container_set_compute(core, a, 0, CG_COMPUTE_HARD, 0) == CG_OK);   /* share removed */
    CHECK(info(core, a).compute_pct == 0 && info(core, a).compute_mode == CG_COMPUTE_ELASTIC);
    CHECK(hard_on(core, 0) == 60);
    CHECK_CORE(core);
    /* Removal gives the hard share back. */
    CHECK(cg_container_remove(core, e, 0) == CG_OK && hard_on(core, 0) == 0);
    mk_share(core, 0, 10, 100, CG_COMPUTE_HARD, CG_OK);
    CHECK_CORE(core);
    /* A restored container comes back without a share; the daemon sets it again. */
    cg_cid r;
    CHECK(cg_container_restore(core, 0, 5, 0, 0, &r) == CG_OK && info(core, r).compute_pct == 0);
    CHECK(cg_container_set_compute(core, r, 20, CG_COMPUTE_ELASTIC, 0) == CG_OK);
    CHECK_CORE(core);
    cg_core_free(core);
}

/* Placement weighs compute as well as memory: it considers only devices that admit the hard
 * share, and compares devices by room = min(free memory, capacity x hard share left). */
static void test_compute_placement(void)
{
    /* Three devices of 100. dev0: 90 free, hard 90 (room 10); dev1: 50 free, hard 0 (room 50);
     * dev2: 80 free, hard 40 (room 60). Memory alone would say: least-loaded dev0, binpack
     * dev1. */
    static const struct { cg_placement_policy p; unsigned elastic, hard20; } cases[] = {
        {CG_PLACE_FIRST_FIT, 0, 1}, {CG_PLACE_LEAST_LOADED, 2, 2}, {CG_PLACE_BINPACK, 0, 1}};
    for (unsigned i = 0; i < 3; i++) {
        recorder rec = {0};
        cg_config cfg = {.placement = cases[i].p, .sink = record, .sink_ctx = &rec};
        cg_core *core = cg_core_new(&cfg);
        for (unsigned k = 0; k < 3; k++)
            cg_device_add(core, 100, 0, 0, NULL);
        mk_share(core, 0, 10, 90, CG_COMPUTE_HARD, CG_OK);
        mk_share(core, 1, 50, 100, CG_COMPUTE_ELASTIC, CG_OK);
        mk_share(core, 2, 20, 40, CG_COMPUTE_HARD, CG_OK);
        char before[4096], after[4096];
        digest(core, before, sizeof before);
        cg_cid x = mk_share(core, -1, 20, 0, CG_COMPUTE_ELASTIC, CG_OK);
        CHECK(info(core, x).device == cases[i].elastic);
        CHECK(cg_container_remove(core, x, 0) == CG_OK);
        x = mk_share(core, -1, 20, 60, CG_COMPUTE_ELASTIC, CG_OK);   /* elastic: weighed as none */
        CHECK(info(core, x).device == cases[i].elastic);
        CHECK(cg_container_remove(core, x, 0) == CG_OK);
        x = mk_share(core, -1, 20, 20, CG_COMPUTE_HARD, CG_OK);
        CHECK(info(core, x).device == cases[i].hard20);
        CHECK(cg_container_remove(core, x, 0) == CG_OK);
        /* No device has 95 free: it waits where the most is free among those admitting it. */
        x = mk_share(core, -1, 95, 10, CG_COMPUTE_HARD, CG_OK);
        CHECK(info(core, x).device == 0);
        CHECK(cg_container_remove(core, x, 0) == CG_OK);
        x = mk_share(core, -1, 95, 11, CG_COMPUTE_HARD, CG_OK);
        CHECK(info(core, x).device == 2);
        CHECK(cg_container_remove(core, x, 0) == CG_OK);
        /* dev1 is the only one with 61 left; nothing has 101 of memory or of time. */
        x = mk_share(core, -1, 10, 61, CG_COMPUTE_HARD, CG_OK);
        CHECK(info(core, x).device == 1);
        CHECK(cg_container_remove(core, x, 0) == CG_OK);
        digest(core, after, sizeof after);
        CHECK(strcmp(before, after) == 0);
        unsigned n0 = rec.n;
        mk_share(core, 1, 10, 101, CG_COMPUTE_HARD, CG_ERR_INVALID);
        mk_share(core, -1, 101, 10, CG_COMPUTE_HARD, CG_ERR_TOO_LARGE);
        mk_share(core, 1, 101, 10, CG_COMPUTE_HARD, CG_ERR_TOO_LARGE);
        mk_share(core, 1, 10, 10, CG_COMPUTE_HARD, CG_OK);
        n0 = rec.n;
        digest(core, before, sizeof before);
        mk_share(core, -1, 10, 91, CG_COMPUTE_HARD, CG_ERR_NO_COMPUTE);
        mk_share(core, 0, 10, 11, CG_COMPUTE_HARD, CG_ERR_NO_COMPUTE);
        digest(core, after, sizeof after);
        CHECK(strcmp(before, after) == 0 && rec.n == n0);
        CHECK_CORE(core);
        cg_core_free(core);
    }
}

static void test_names(void)
{
    for (unsigned i = 0; i < CG_RESUME__COUNT; i++) {
        cg_resume_policy p;
        CHECK(cg_resume_policy_parse(cg_resume_policy_name((cg_resume_policy)i), &p) && p == i);
    }
    for (unsigned i = 0; i < CG_PLACE__COUNT; i++) {
        cg_placement_policy p;
        CHECK(cg_placement_policy_parse(cg_placement_policy_name((cg_placement_policy)i), &p) &&
              p == i);
    }
    cg_resume_policy p;
    cg_placement_policy q;
    CHECK(cg_resume_policy_parse("best-fit", &p) && p == CG_RESUME_BEST_FIT);
    CHECK(!cg_resume_policy_parse("bestfit", &p) && !cg_resume_policy_parse(NULL, &p));
    CHECK(cg_placement_policy_parse("binpack", &q) && q == CG_PLACE_BINPACK);
    CHECK(!cg_placement_policy_parse("worst-fit", &q));
    CHECK(strcmp(cg_status_str(CG_ERR_BELOW_USE), "limit below current use") == 0);
    CHECK(*cg_event_kind_name(CG_EV_RESUME) && *cg_reason_str(CG_WHY_UNSAFE));
    CHECK(strcmp(cg_event_kind_name(CG_EV_COMPUTE), "compute") == 0);
    CHECK(strstr(cg_status_str(CG_ERR_NO_COMPUTE), "compute") != NULL);
    cg_compute_mode m;
    CHECK(cg_compute_mode_parse("hard", &m) && m == CG_COMPUTE_HARD);
    CHECK(cg_compute_mode_parse("elastic", &m) && m == CG_COMPUTE_ELASTIC);
    CHECK(strcmp(cg_compute_mode_name(CG_COMPUTE_HARD), "hard") == 0 &&
          strcmp(cg_compute_mode_name(CG_COMPUTE_ELASTIC), "elastic") == 0);
    CHECK(!cg_compute_mode_parse("Hard", &m) && !cg_compute_mode_parse("", &m) &&
          !cg_compute_mode_parse(NULL, &m));
    static const struct { const char *text; unsigned want; } pcts[] = {
        {"1", 1}, {"30", 30}, {"100", 100}, {"007", 7}, {"30%", 30}, {"0", 0}, {"101", 0},
        {"-5", 0}, {"30.5", 0}, {"abc", 0}, {"", 0}, {"+30", 0}, {" 30", 0}, {"30 ", 0},
        {"%", 0}, {"30%%", 0}, {"1e2", 0}, {"99999999999999999999", 0}, {"0x10", 0}};
    for (size_t i = 0; i < sizeof pcts / sizeof *pcts; i++) {
        unsigned v = 12345;
        bool ok = cg_compute_pct_parse(pcts[i].text, &v);
        if (ok != (pcts[i].want != 0) || (ok && v != pcts[i].want) || (!ok && v != 12345)) {
            fprintf(stderr, "FAIL cg_compute_pct_parse(\"%s\")\n", pcts[i].text);
            failures++;
        }
    }
    unsigned v;
    CHECK(!cg_compute_pct_parse(NULL, &v));
}

/* ---- error paths: nothing changes, nothing is emitted ------------------------------------ */

/* A printable digest of everything observable. */
static void digest(const cg_core *core, char *buf, size_t len)
{
    size_t o = 0;
    for (unsigned i = 0; i < cg_device_count(core); i++) {
        cg_device_info d;
        cg_device_get(core, i, &d);
        o += (size_t)snprintf(buf + o, len - o, "D%u %" PRIu64 " %" PRIu64 " %" PRIu64 " %u %u %u;",
                              i, d.assigned, d.used, d.context_charge, d.ncontainers,
                              d.nsuspended, d.compute_hard_pct);
    }
    for (cg_cid c = cg_container_next(core, CG_CID_NONE); c && o < len;
         c = cg_container_next(core, c)) {
        cg_container_info ci;
        cg_container_get(core, c, 0, &ci);
        o += (size_t)snprintf(buf + o, len - o, "C%u %" PRIu64 " %" PRIu64 " %" PRIu64 " %d %u %u %" PRIu64 " %" PRIu64 " %u%c;",
                              c, ci.limit, ci.assigned, ci.used, (int)ci.state, ci.nprocesses,
                              ci.npending, ci.pending_bytes, ci.limit_waiting, ci.compute_pct,
                              ci.compute_mode == CG_COMPUTE_HARD ? 'h' : 'e');
        cg_process_info pi[8];
        size_t n = cg_container_processes(core, c, pi, 8);
        for (size_t k = 0; k < n && k < 8 && o < len; k++)
            o += (size_t)snprintf(buf + o, len - o, "p%" PRIu64 " %" PRIu64 " %u;", pi[k].pid,
                                  pi[k].used, pi[k].npending);
    }
    o += (size_t)snprintf(buf + o, len - o, "R%d P%d", (int)cg_get_resume_policy(core),
                          (int)cg_get_placement_policy(core));
}

static void test_errors(void)
{
    recorder rec = {0};
    cg_core *core = mk(CG_RESUME_FIFO, &rec, 10, 1);
    cg_cid a, b;
    cg_container_create(core, 0, 6, 0, &a);
    cg_container_create(core, 0, 6, 0, &b);
    req(core, a, 1, 1, 3);
    req(core, b, 2, 2, 5);                       /* suspended: b has 4, needs 6 */
    char before[4096], after[4096];
    digest(core, before, sizeof before);
    unsigned n0 = rec.n;
    bool pend;
    cg_outcome o;
    cg_cid x = 99;
    struct { cg_status got, want; } cases[] = {
        {cg_container_create(core, 0, 0, 0, &x), CG_ERR_INVALID},
        {cg_container_create(core, 1, 5, 0, &x), CG_ERR_NO_DEVICE},
        {cg_container_create(core, 0, 11, 0, &x), CG_ERR_TOO_LARGE},
        {cg_container_create(core, -1, 11, 0, &x), CG_ERR_TOO_LARGE},
        {cg_container_remove(core, 77, 0), CG_ERR_NOT_FOUND},
        {cg_container_remove(core, CG_CID_NONE, 0), CG_ERR_NOT_FOUND},
        {cg_container_set_limit(core, 77, 5, 0, &pend), CG_ERR_NOT_FOUND},
        {cg_container_set_limit(core, a, 0, 0, &pend), CG_ERR_INVALID},
        {cg_container_set_limit(core, a, 11, 0, &pend), CG_ERR_TOO_LARGE},
        {cg_container_set_limit(core, a, 3, 0, &pend), CG_ERR_BELOW_USE},
        {cg_request(core, 77, 1, 9, 1, 0, &o), CG_ERR_NOT_FOUND},
        {cg_request(core, a, 1, 9, 0, 0, &o), CG_ERR_INVALID},
        {cg_request(core, b, 2, 2, 1, 0, &o), CG_ERR_EXISTS},
        {cg_request_cancel(core, a, 2, 0), CG_ERR_NOT_FOUND},
        {cg_request_cancel(core, 77, 2, 0), CG_ERR_NOT_FOUND},
        {cg_release(core, a, 1, 5, 0), CG_ERR_INVALID},
        {cg_release(core, a, 1, 0, 0), CG_ERR_INVALID},
        {cg_release(core, a, 9, 1, 0), CG_ERR_NOT_FOUND},
        {cg_release(core, 77, 1, 1, 0), CG_ERR_NOT_FOUND},
        {cg_process_set_use(core, a, 1, 7, 0), CG_ERR_INVALID},
        {cg_process_set_use(core, 77, 1, 1, 0), CG_ERR_NOT_FOUND},
        {cg_process_exit(core, a, 9, 0), CG_ERR_NOT_FOUND},
        {cg_process_exit(core, 77, 1, 0), CG_ERR_NOT_FOUND},
        {cg_device_add(core, 10, 0, 0, NULL), CG_ERR_INVALID},
        {cg_device_set_context_charge(core, 3, 1), CG_ERR_NO_DEVICE},
        {cg_device_set_context_charge(core, 0, 11), CG_ERR_INVALID},
        {cg_set_resume_policy(core, CG_RESUME__COUNT, 0), CG_ERR_INVALID},
        {cg_set_placement_policy(core, CG_PLACE__COUNT), CG_ERR_INVALID},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        if (cases[i].got != cases[i].want) {
            fprintf(stderr, "FAIL error case %zu: got %s, want %s\n", i,
                    cg_status_str(cases[i].got), cg_status_str(cases[i].want));
            failures++;
        }
    CHECK(x == 99);
    cg_device_info di;
    cg_container_info ci;
    CHECK(cg_device_get(core, 1, &di) == CG_ERR_NO_DEVICE);
    CHECK(cg_container_get(core, 77, 0, &ci) == CG_ERR_NOT_FOUND);
    CHECK(cg_container_processes(core, 77, NULL, 0) == 0);
    digest(core, after, sizeof after);
    CHECK(strcmp(before, after) == 0);
    CHECK(rec.n == n0);
    CHECK_CORE(core);
    /* Invalid configurations. */
    cg_config bad = {.resume = CG_RESUME__COUNT};
    CHECK(cg_core_new(&bad) == NULL);
    cg_core *empty = cg_core_new(NULL);
    CHECK(cg_container_create(empty, -1, 1, 0, &x) == CG_ERR_NO_DEVICE);
    CHECK(cg_device_add(empty, 10, 10, 0, NULL) == CG_ERR_INVALID);
    cg_core_free(empty);
    cg_core_free(core);
}

/* ---- determinism ------------------------------------------------------------------------- */

static uint64_t scripted(cg_resume_policy p, uint64_t seed)
{
    recorder rec = {0};
    cg_config cfg = {.resume = p, .seed = seed, .sink = record, .sink_ctx = &rec};
    cg_core *core = cg_core_new(&cfg);
    cg_device_add(core, 100, 0, 3, NULL);
    cg_cid ids[40];
    for (unsigned i = 0; i < 40; i++) {
        cg_container_create(core, 0, 10 + (i * 37) % 60, i, &ids[i]);
        cg_outcome o;
        cg_request(core, ids[i], i, i, 5 + (i * 11) % 50, i, &o);
        if (i >= 5 && i % 2)
            cg_container_remove(core, ids[i - 5], i);
    }
    cg_core_free(core);
    return rec.hash;
}

static void test_determinism(void)
{
    for (unsigned p = 0; p < CG_RESUME__COUNT; p++)
        CHECK(scripted((cg_resume_policy)p, 7) == scripted((cg_resume_policy)p, 7));
    /* The random policy does depend on the seed (some pair of seeds must differ). */
    bool differs = false;
    for (uint64_t s = 1; s < 10 && !differs; s++)
        differs = scripted(CG_RESUME_RANDOM, s) != scripted(CG_RESUME_RANDOM, s + 100);
    CHECK(differs);
}

/* ---- injected allocation failures -------------------------------------------------------- */

typedef struct {
    long countdown;          /* fail when it reaches 0; negative: never */
    unsigned long failed;
} faulty;

static void *f_alloc(void *ctx, size_t size)
{
    faulty *f = ctx;
    if (f->countdown >= 0 && f->countdown-- == 0) {
        f->failed++;
        return NULL;
    }
    return malloc(size);
}

static void f_free(void *ctx, void *p)
{
    (void)ctx;
    free(p);
}

/* Runs a random workload; each operation is first tried with the allocator failing at its 1st,
 * 2nd, ... allocation until it gets through. Every CG_ERR_NOMEM must leave the digest, the
 * event stream and the invariants untouched. */
static void test_fault_injection(void)
{
    faulty f = {.countdown = -1};
    recorder rec = {0};
    cg_config cfg = {.resume = CG_RESUME_BEST_FIT, .sink = record, .sink_ctx = &rec,
                     .mem_alloc = f_alloc, .mem_free = f_free, .mem_ctx = &f};
    f.countdown = 0;
    CHECK(cg_core_new(&cfg) == NULL);            /* the core itself */
    f.countdown = -1;
    cg_core *core = cg_core_new(&cfg);
    cg_device_add(core, 1000, 0, 7, NULL);
    cg_device_add(core, 500, 0, 7, NULL);
    static char before[1 << 16], after[1 << 16];
    uint64_t s = 12345;
    cg_cid live[200];
    unsigned nlive = 0, nomem = 0;
    for (unsigned step = 0; step < 3000; step++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        unsigned op = (unsigned)(s >> 33) % 10;
        uint64_t r = s >> 20;
        cg_cid cid = nlive ? live[r % nlive] : 0;
        for (long k = 0;; k++) {
            digest(core, before, sizeof before);
            unsigned n0 = rec.n;
            f.countdown = k;
            cg_status st;
            cg_outcome o;
            cg_cid nc = 0;
            bool removing = true;
            cg_container_spec spec = {.device = -1, .limit = 1 + r % 400,
                                      .compute_pct = (unsigned)(r >> 12) % 60,
                                      .compute_mode = (r >> 18) & 1 ? CG_COMPUTE_HARD
                                                                   : CG_COMPUTE_ELASTIC};
            if (op < 3 || !nlive)
                st = nlive < 200 ? cg_container_create_spec(core, &spec, step, &nc) : CG_OK;
            else if (op == 9 && (r >> 19) & 1) {
                st = cg_container_set_compute(core, cid, spec.compute_pct, spec.compute_mode, step);
                removing = false;
            } else if (op < 7)
                st = cg_request(core, cid, r % 5, step, 1 + (r >> 8) % 150, step, &o);
            else if (op < 8)
                st = cg_process_set_use(core, cid, 10 + r % 3, 0, step);
            else
                st = cg_container_remove(core, cid, step);
            f.countdown = -1;
            if (st == CG_ERR_NOMEM) {
                nomem++;
                digest(core, after, sizeof after);
                CHECK(strcmp(before, after) == 0);
                CHECK(rec.n == n0);
                CHECK_CORE(core);
                continue;
            }
            if (st == CG_OK && nc)
                live[nlive++] = nc;
            if (st == CG_OK && removing && op >= 8 && nlive && !(op < 3))
                for (unsigned i = 0; i < nlive; i++)
                    if (live[i] == cid) {
                        live[i] = live[--nlive];
                        break;
                    }
            break;
        }
        CHECK_CORE(core);
    }
    CHECK(nomem > 100);
    size_t held = cg_core_footprint(core);
    CHECK(held > 0);
    cg_core_free(core);
    printf("fault injection: %u allocation failures, each left the state unchanged\n", nomem);
    fflush(stdout);
}

int main(void)
{
    test_figure3();
    test_deadlock_avoided();
    test_restore();
    test_requests_and_context();
    test_limits();
    test_placement();
    test_compute_admission();
    test_compute_placement();
    test_names();
    test_errors();
    test_determinism();
    test_fault_injection();
    if (failures) {
        fprintf(stderr, "%d failure(s)\n", failures);
        return 1;
    }
    printf("core unit tests passed\n");
    return 0;
}

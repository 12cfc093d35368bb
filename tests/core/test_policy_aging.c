/* test_policy_aging.c — aging-fit's choices on hand-built states (one device of 1000 bytes, no
 * context charge): the larger of two that fit goes first; 256 s of waiting is worth a whole
 * device of size, so an older, smaller container overtakes once its extra wait exceeds the
 * size gap; when nothing fits, the smallest shortfall is offered the free memory (a partial
 * assignment) and nobody resumes. Each state is also run under FIFO or Best-Fit where that
 * shows the choice is aging-fit's own and not the state's only possible outcome. */
#include <string.h>

#include "../common/check.h"
#include "core.h"

#define SEC 1000000000ull

typedef struct {
    cg_cid resumed[8];
    unsigned nresumed;
} trace;

static void sink(void *ctx, const cg_event *ev)
{
    trace *t = ctx;
    if (ev->kind == CG_EV_RESUME && t->nresumed < 8)
        t->resumed[t->nresumed++] = ev->cid;
}

static cg_core *device(cg_resume_policy p, trace *t)
{
    memset(t, 0, sizeof *t);
    cg_config cfg = {.resume = p, .sink = sink, .sink_ctx = t};
    cg_core *core = cg_core_new(&cfg);
    CHECK(core && cg_device_add(core, 1000, 0, 0, NULL) == CG_OK, "device");
    return core;
}

/* A container of `limit` created at `at` s that asks for all of it at once (pid = req = cid). */
static cg_cid asking(cg_core *core, cg_bytes limit, double at, cg_outcome expect)
{
    cg_cid cid = CG_CID_NONE;
    cg_outcome o = CG_REJECTED;
    cg_time now = (cg_time)(at * SEC);
    CHECK(cg_container_create(core, 0, limit, now, &cid) == CG_OK, "create %llu",
          (unsigned long long)limit);
    CHECK(cg_request(core, cid, cid, cid, limit, now, &o) == CG_OK && o == expect,
          "request of %llu: outcome %d, expected %d", (unsigned long long)limit, (int)o,
          (int)expect);
    return cid;
}

/* Full device; S1 (600) asks at t1, S2 (700) at t2; the holder leaves at t3: who resumes? */
static cg_cid first_resumed(cg_resume_policy p, double t1, double t2, double t3, cg_cid *s1,
                            cg_cid *s2)
{
    trace t;
    cg_core *core = device(p, &t);
    cg_cid holder = asking(core, 1000, 0, CG_GRANTED);
    *s1 = asking(core, 600, t1, CG_SUSPENDED);
    *s2 = asking(core, 700, t2, CG_SUSPENDED);
    CHECK(cg_container_remove(core, holder, (cg_time)(t3 * SEC)) == CG_OK, "remove");
    CHECK(cg_core_check(core) == NULL, "invariants: %s", cg_core_check(core));
    CHECK(t.nresumed == 1, "one resumes (the other gets the 300 left, partly): %u", t.nresumed);
    cg_cid who = t.nresumed ? t.resumed[0] : CG_CID_NONE;
    cg_core_free(core);
    return who;
}

int main(void)
{
    cg_cid s1, s2;
    /* Size first: 0.7 beats 0.6 + 1 s / 256 s. FIFO takes the older, smaller one. */
    CHECK(first_resumed(CG_RESUME_AGING_FIT, 1, 2, 3, &s1, &s2) == s2, "aging-fit: larger first");
    CHECK(first_resumed(CG_RESUME_FIFO, 1, 2, 3, &s1, &s2) == s1, "fifo: older first");
    /* Aging: at t3 = 40 s, S1 (from 0 s) scores 0.6 + 40/256 = 0.756; S2 from 30 s scores
     * 0.7 + 10/256 = 0.739 (S1 wins), S2 from 20 s scores 0.7 + 20/256 = 0.778 (S2 wins). */
    CHECK(first_resumed(CG_RESUME_AGING_FIT, 0, 30, 40, &s1, &s2) == s1,
          "aging-fit: 30 s more waiting outweighs 100 bytes of 1000");
    CHECK(first_resumed(CG_RESUME_AGING_FIT, 0, 20, 40, &s1, &s2) == s2,
          "aging-fit: 20 s more waiting does not");

    /* Nothing fits: two holders of 500; S1 (900) and S2 (800) wait with nothing assigned; one
     * holder leaves, 500 free. The smallest shortfall (S2) is offered it, nobody resumes. */
    cg_resume_policy both[] = {CG_RESUME_AGING_FIT, CG_RESUME_BEST_FIT};
    for (unsigned i = 0; i < 2; i++) {
        trace t;
        cg_core *core = device(both[i], &t);
        cg_cid h1 = asking(core, 500, 0, CG_GRANTED);
        asking(core, 500, 0, CG_GRANTED);
        cg_cid big = asking(core, 900, 1, CG_SUSPENDED);
        cg_cid small = asking(core, 800, 2, CG_SUSPENDED);
        CHECK(cg_container_remove(core, h1, 3 * SEC) == CG_OK, "remove");
        cg_container_info ib, is;
        CHECK(cg_container_get(core, big, 3 * SEC, &ib) == CG_OK &&
                  cg_container_get(core, small, 3 * SEC, &is) == CG_OK, "get");
        CHECK(t.nresumed == 0, "%s: nobody fits, nobody resumes", cg_resume_policy_name(both[i]));
        CHECK(is.assigned == 500 && ib.assigned == 0,
              "%s: the smallest shortfall takes the free 500 (got %llu, the other %llu)",
              cg_resume_policy_name(both[i]), (unsigned long long)is.assigned,
              (unsigned long long)ib.assigned);
        CHECK(cg_core_check(core) == NULL, "invariants: %s", cg_core_check(core));
        cg_core_free(core);
    }
    if (failures)
        return 1;
    printf("aging-fit policy tests passed\n");
    return 0;
}

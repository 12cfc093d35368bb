/* test_defrag.c — one move to make room (src/core/defrag.c): a table of node layouts (two H200s
 * and an A100, requests that fit, fit after a move, or never), then 20,000 random layouts
 * checked against the rule's invariants and against every single move tried by hand: a move is
 * found exactly when one exists and the request fits nowhere now, between two devices of one
 * model, the target able to take the whole container, the source then able to take the
 * request, with the fewest bytes moved. */
#include <inttypes.h>
#include <stdlib.h>

#include "check.h"
#include "core.h"

#define GiB (1ull << 30)
enum { H200 = 1, A100 = 2 };

static bool valid(const cg_defrag_device *devs, size_t ndev, const cg_defrag_container *c,
                  unsigned to, cg_bytes request)
{
    if (!c->movable || c->holds == 0 || c->device >= ndev || to >= ndev || to == c->device)
        return false;
    const cg_defrag_device *from = &devs[c->device];
    return devs[to].model == from->model && devs[to].free >= c->holds &&
           (from->free >= request || c->holds >= request - from->free);
}

static void invariants(const cg_defrag_device *devs, size_t ndev, const cg_defrag_container *cs,
                       size_t nc, cg_bytes request, unsigned left, cg_defrag_move m)
{
    bool fits_now = false;
    for (size_t d = 0; d < ndev; d++)
        fits_now |= devs[d].free >= request;
    cg_bytes fewest = UINT64_MAX;
    for (size_t i = 0; i < nc; i++)
        for (unsigned t = 0; t < ndev; t++)
            if (valid(devs, ndev, &cs[i], t, request) && cs[i].holds < fewest)
                fewest = cs[i].holds;
    bool possible = left > 0 && request > 0 && !fits_now && fewest != UINT64_MAX;
    CHECK(m.found == possible, "found %d, a move possible %d", m.found, possible);
    if (!m.found)
        return;
    CHECK(m.container < nc && m.from == cs[m.container].device, "the container and its device");
    CHECK(valid(devs, ndev, &cs[m.container], m.to, request), "a valid move");
    CHECK(m.moves == cs[m.container].holds && m.moves == fewest,
          "fewest bytes: %" PRIu64 " moved, %" PRIu64 " possible", m.moves, fewest);
}

int main(void)
{
    /* Two H200s of 139 GiB and an A100 of 80 GiB, what each could take now. */
    cg_defrag_device devs[] = {{H200, 30 * GiB}, {H200, 60 * GiB}, {A100, 70 * GiB}};
    cg_defrag_container cs[] = {
        {0, 50 * GiB, true},   /* 0: on H200 #0 */
        {0, 40 * GiB, true},   /* 1: on H200 #0, smaller */
        {1, 20 * GiB, true},   /* 2: on H200 #1 */
        {0, 45 * GiB, false},  /* 3: on H200 #0, a gang member */
        {2, 10 * GiB, true},   /* 4: on the A100 */
    };
    cg_defrag_move m = cg_defrag_pick(devs, 3, cs, 5, 60 * GiB, 1);
    CHECK(!m.found, "60 GiB fits on H200 #1 now: no move");
    m = cg_defrag_pick(devs, 3, cs, 5, 75 * GiB, 1);
    CHECK(m.found && m.container == 2 && m.from == 1 && m.to == 0 && m.moves == 20 * GiB,
          "75 GiB: container 2 (20 GiB) to H200 #0 frees 80 on #1 (got %zu %u->%u)",
          m.container, m.from, m.to);
    invariants(devs, 3, cs, 5, 75 * GiB, 1, m);
    m = cg_defrag_pick(devs, 3, cs, 5, 75 * GiB, 0);
    CHECK(!m.found, "the operator's bound spent: no move");
    m = cg_defrag_pick(devs, 3, cs, 5, 100 * GiB, 1);
    CHECK(!m.found, "100 GiB: no single move makes room (the gang member stays)");
    invariants(devs, 3, cs, 5, 100 * GiB, 1, m);
    m = cg_defrag_pick(devs, 3, cs, 5, 85 * GiB, 1);
    CHECK(!m.found, "the A100's 10 GiB cannot go to an H200 (another model)");
    invariants(devs, 3, cs, 5, 85 * GiB, 1, m);

    /* Bound to one device: H200 #0 (30 GiB free) for 35 GiB. Room on #1 does not count; the
     * smaller of #0's movable containers (40 GiB) goes to #1 (60 free). */
    m = cg_defrag_pick_on(devs, 3, cs, 5, 35 * GiB, 0, 1);
    CHECK(m.found && m.container == 1 && m.from == 0 && m.to == 1 && m.moves == 40 * GiB,
          "35 GiB on H200 #0: container 1 to #1 (got %d %zu %u->%u)", m.found, m.container,
          m.from, m.to);
    m = cg_defrag_pick_on(devs, 3, cs, 5, 25 * GiB, 0, 1);
    CHECK(!m.found, "25 GiB fits on H200 #0 now: no move");
    m = cg_defrag_pick_on(devs, 3, cs, 5, 35 * GiB, 0, 0);
    CHECK(!m.found, "bound to one device, the operator's bound spent: no move");
    m = cg_defrag_pick_on(devs, 3, cs, 5, 75 * GiB, 2, 1);
    CHECK(!m.found, "on the A100 only an A100 could take its container: none");
    m = cg_defrag_pick_on(devs, 3, cs, 5, 35 * GiB, 7, 1);
    CHECK(!m.found, "no such device: no move");

    srand(38);
    unsigned long found = 0, none = 0;
    for (int run = 0; run < 20000; run++) {
        cg_defrag_device d[5];
        cg_defrag_container c[8];
        size_t nd = 1 + (size_t)(rand() % 5), nc = (size_t)(rand() % 9);
        for (size_t i = 0; i < nd; i++)
            d[i] = (cg_defrag_device){(uint32_t)(rand() % 2), (cg_bytes)(rand() % 9) * GiB};
        for (size_t i = 0; i < nc; i++)
            c[i] = (cg_defrag_container){(unsigned)(rand() % (int)(nd + 1)),
                                         (cg_bytes)(rand() % 9) * GiB, rand() % 4 != 0};
        cg_bytes request = (cg_bytes)(rand() % 12) * GiB;
        unsigned left = (unsigned)(rand() % 3);
        m = cg_defrag_pick(d, nd, c, nc, request, left);
        invariants(d, nd, c, nc, request, left, m);
        unsigned on = (unsigned)(rand() % (int)nd);
        cg_defrag_move mo = cg_defrag_pick_on(d, nd, c, nc, request, on, left);
        if (mo.found) {
            CHECK(left > 0 && d[on].free < request && mo.from == on &&
                      c[mo.container].device == on &&
                      valid(d, nd, &c[mo.container], mo.to, request),
                  "a move bound to device %u: from it, valid", on);
            /* fewest bytes among the moves off that device */
            for (size_t i = 0; i < nc; i++)
                for (size_t t = 0; t < nd; t++)
                    if (c[i].device == on && c[i].movable && c[i].holds &&
                        valid(d, nd, &c[i], (unsigned)t, request))
                        CHECK(c[i].holds >= mo.moves, "bound: fewest bytes");
        } else if (left > 0 && request > 0 && d[on].free < request) {
            for (size_t i = 0; i < nc; i++)
                for (size_t t = 0; t < nd; t++)
                    CHECK(!(c[i].device == on && c[i].movable && c[i].holds &&
                            valid(d, nd, &c[i], (unsigned)t, request)),
                          "bound: none only when no move off device %u makes room", on);
        }
        found += m.found;
        none += !m.found;
    }
    CHECK(found > 500 && none > 500, "the random layouts reach both answers (%lu, %lu)", found,
          none);
    printf("defrag: 20000 random layouts, %lu moves, %lu none: %s\n", found, none,
           failures ? "FAIL" : "ok");
    return failures != 0;
}

/* test_pressure.c — the pressure rule (src/core/pressure.c) and how cluster_fit.c ranks by it:
 * a table of GPUs with the penalty and parts the rule in pressure.h gives each, by hand; then
 * 100000 random GPUs, each worsened in one input at a time, for the bound and monotonicity;
 * then nodes: of two GPUs with equal units the pressed one loses, a pressed node scores below
 * the same node unpressed, and a GPU with no published pressure ranks as it always did. */
#include <stdio.h>
#include <stdlib.h>

#include "cluster_fit.h"
#include "pressure.h"

#include "../common/check.h"

#define GiB (1ull << 30)

struct row {
    const char *what;
    cg_gpu_pressure p;
    uint64_t need;
    cg_pressure_parts parts; /* expected */
    uint32_t penalty;        /* expected */
};

static const struct row rows[] = {
    {"nothing published", {.known = false, .free_bytes = 0, .waiting = 9, .compute_load_pct = 100},
     4 * GiB, {0, 0, 0, 0}, 0},
    {"idle GPU, the need fits", {.known = true, .capacity_bytes = 16 * GiB, .free_bytes = 16 * GiB},
     4 * GiB, {0, 0, 0, 0}, 0},
    {"half the need is not free, swap covers it",
     {.known = true, .capacity_bytes = 16 * GiB, .free_bytes = 2 * GiB, .swap_left_bytes = 8 * GiB},
     4 * GiB, {250, 0, 0, 0}, 100},
    {"half the need is not free, no swap",
     {.known = true, .capacity_bytes = 16 * GiB, .free_bytes = 2 * GiB},
     4 * GiB, {500, 0, 0, 0}, 200},
    {"nothing free, swap covers a quarter",
     {.known = true, .capacity_bytes = 16 * GiB, .free_bytes = 0, .swap_left_bytes = 1 * GiB},
     4 * GiB, {875, 0, 0, 0}, 350},
    {"two waiting, the oldest for 150 s",
     {.known = true, .capacity_bytes = 16 * GiB, .free_bytes = 16 * GiB, .waiting = 2,
      .waited_s = 150},
     4 * GiB, {0, 900, 0, 0}, 270},
    {"a long queue caps at 1000",
     {.known = true, .capacity_bytes = 16 * GiB, .free_bytes = 16 * GiB, .waiting = 40,
      .waited_s = 100000},
     4 * GiB, {0, 1000, 0, 0}, 300},
    {"a wait with nobody waiting counts nothing",
     {.known = true, .capacity_bytes = 16 * GiB, .free_bytes = 16 * GiB, .waited_s = 500},
     4 * GiB, {0, 0, 0, 0}, 0},
    {"busy at 70 %", {.known = true, .capacity_bytes = 16 * GiB, .free_bytes = 16 * GiB,
                      .compute_load_pct = 70},
     4 * GiB, {0, 0, 700, 0}, 70},
    {"a load above 100 % is 100 %", {.known = true, .capacity_bytes = 16 * GiB,
                                     .free_bytes = 16 * GiB, .compute_load_pct = 250},
     4 * GiB, {0, 0, 1000, 0}, 100},
    {"measured 1.3x beside its residents", {.known = true, .capacity_bytes = 16 * GiB,
                                            .free_bytes = 16 * GiB, .slowdown_milli = 1300},
     4 * GiB, {0, 0, 0, 300}, 60},
    {"3x caps at 1000", {.known = true, .capacity_bytes = 16 * GiB, .free_bytes = 16 * GiB,
                         .slowdown_milli = 3000},
     4 * GiB, {0, 0, 0, 1000}, 200},
    {"a speed-up is no penalty", {.known = true, .capacity_bytes = 16 * GiB,
                                  .free_bytes = 16 * GiB, .slowdown_milli = 900},
     4 * GiB, {0, 0, 0, 0}, 0},
    {"everything at its worst",
     {.known = true, .capacity_bytes = 16 * GiB, .free_bytes = 0, .waiting = 5, .waited_s = 300,
      .compute_load_pct = 100, .slowdown_milli = 2000},
     4 * GiB, {1000, 1000, 1000, 1000}, 1000},
    {"a pod that needs no memory", {.known = true, .capacity_bytes = 16 * GiB, .free_bytes = 0},
     0, {0, 0, 0, 0}, 0},
    {"absurd bytes do not overflow",
     {.known = true, .capacity_bytes = UINT64_MAX, .free_bytes = 1, .swap_left_bytes = 0},
     UINT64_MAX, {1000, 0, 0, 0}, 400}, /* scaled down first: rounds to all */
};

static void test_table(void)
{
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const struct row *r = &rows[i];
        cg_pressure_need n = {.bytes = r->need};
        cg_pressure_parts got;
        uint32_t pen = cg_pressure_penalty(&r->p, &n, &got);
        CHECK(pen == r->penalty, "%s: penalty %u, expected %u", r->what, pen, r->penalty);
        CHECK(got.memory == r->parts.memory && got.waiting == r->parts.waiting &&
                  got.compute == r->parts.compute && got.interference == r->parts.interference,
              "%s: parts %u/%u/%u/%u, expected %u/%u/%u/%u", r->what, got.memory, got.waiting,
              got.compute, got.interference, r->parts.memory, r->parts.waiting, r->parts.compute,
              r->parts.interference);
    }
    CHECK(cg_pressure_penalty(NULL, NULL, NULL) == 0, "no pressure at all costs nothing");
}

static uint64_t rnd64(void)
{
    return ((uint64_t)(unsigned)rand() << 33) ^ ((uint64_t)(unsigned)rand() << 11) ^
           (uint64_t)(unsigned)rand();
}

/* Bounded, and never lower when one input worsens. */
static void test_monotone(void)
{
    srand(37);
    for (int k = 0; k < 100000; k++) {
        cg_gpu_pressure p = {.known = true, .capacity_bytes = 16 * GiB,
                             .free_bytes = rnd64() % (17 * GiB), .waiting = (unsigned)(rand() % 8),
                             .waited_s = (uint64_t)(rand() % 600),
                             .swap_left_bytes = rand() % 3 ? rnd64() % (8 * GiB) : 0,
                             .compute_load_pct = (unsigned)(rand() % 101),
                             .slowdown_milli = rand() % 2 ? 0 : 500 + (uint32_t)(rand() % 2500)};
        cg_pressure_need n = {.bytes = rand() % 5 ? rnd64() % (16 * GiB) : 0};
        uint32_t base = cg_pressure_penalty(&p, &n, NULL);
        CHECK(base <= CG_PRESSURE_MAX, "penalty %u above the maximum", base);
        cg_gpu_pressure w[6];
        for (int j = 0; j < 6; j++)
            w[j] = p;
        w[0].free_bytes = p.free_bytes / 2;
        w[1].waiting = p.waiting + 1;
        w[2].waited_s = p.waited_s + 1 + (uint64_t)(rand() % 100);
        w[3].swap_left_bytes = p.swap_left_bytes / 3;
        w[4].compute_load_pct = p.compute_load_pct < 100 ? p.compute_load_pct + 1 : 100;
        w[5].slowdown_milli = p.slowdown_milli + 1 + (uint32_t)(rand() % 500);
        for (int j = 0; j < 6; j++) {
            uint32_t worse = cg_pressure_penalty(&w[j], &n, NULL);
            CHECK(worse >= base, "case %d, input %d worsened: penalty %u fell below %u", k, j,
                  worse, base);
        }
    }
}

static cg_cluster_gpu gpu(unsigned index, uint32_t mt, uint32_t mf, cg_gpu_pressure p)
{
    return (cg_cluster_gpu){.index = index, .memory = {mt, mf}, .compute = {100, 100},
                            .pressure = p, .unit_bytes = 256ull << 20};
}

static void test_ranking(void)
{
    const cg_gpu_pressure calm = {.known = true, .capacity_bytes = 16 * GiB,
                                  .free_bytes = 16 * GiB};
    const cg_gpu_pressure queue = {.known = true, .capacity_bytes = 16 * GiB, .free_bytes = 0,
                                   .waiting = 3, .waited_s = 200};
    cg_cluster_request one = {.memory_units = 8, .compute_units = 0, .gpus = 1};
    for (int pol = 0; pol < 2; pol++) {
        cg_cluster_policy policy = pol ? CG_CLUSTER_SPREAD : CG_CLUSTER_BINPACK;
        /* Equal units; the pressed GPU is listed first and still loses. */
        cg_cluster_gpu two[] = {gpu(0, 128, 64, queue), gpu(1, 128, 64, calm)};
        cg_cluster_fit_result r;
        cg_cluster_fit(two, 2, &one, policy, &r);
        CHECK(r.status == CG_FIT_OK && r.gpu[0] == 1, "%s: chose GPU position %zu, not the calm one",
              cg_cluster_policy_name(policy), r.gpu[0]);
        /* The same node: pressed scores below calm; unpublished scores as calm (no penalty). */
        cg_cluster_gpu pressed[] = {gpu(0, 128, 64, queue)}, quiet[] = {gpu(0, 128, 64, calm)},
                       bare[] = {gpu(0, 128, 64, (cg_gpu_pressure){0})};
        cg_cluster_fit_result rp, rq, rb;
        cg_cluster_fit(pressed, 1, &one, policy, &rp);
        cg_cluster_fit(quiet, 1, &one, policy, &rq);
        cg_cluster_fit(bare, 1, &one, policy, &rb);
        CHECK(rp.status == CG_FIT_OK && rp.score < rq.score, "%s: pressed %d, calm %d",
              cg_cluster_policy_name(policy), rp.score, rq.score);
        CHECK(rb.score == rq.score, "%s: unpublished %d, calm %d", cg_cluster_policy_name(policy),
              rb.score, rq.score);
        /* Pressure never decides whether a node fits, only how it ranks. */
        cg_cluster_gpu full[] = {gpu(0, 128, 4, calm)};
        cg_cluster_fit(full, 1, &one, policy, &r);
        CHECK(r.status == CG_FIT_NO_ROOM, "%s: pressure changed the fit", cg_cluster_policy_name(policy));
    }
    /* Binpack still prefers the fuller of two calm GPUs; pressure on the fuller one turns it. */
    cg_cluster_gpu fuller_calm[] = {gpu(0, 128, 64, calm), gpu(1, 128, 16, calm)};
    cg_cluster_gpu fuller_pressed[] = {gpu(0, 128, 64, calm), gpu(1, 128, 16, queue)};
    cg_cluster_fit_result a, b;
    cg_cluster_fit(fuller_calm, 2, &one, CG_CLUSTER_BINPACK, &a);
    cg_cluster_fit(fuller_pressed, 2, &one, CG_CLUSTER_BINPACK, &b);
    CHECK(a.gpu[0] == 1, "binpack without pressure takes the fuller GPU, took %zu", a.gpu[0]);
    CHECK(b.gpu[0] == 0, "binpack with a queue on the fuller GPU takes the other, took %zu",
          b.gpu[0]);
    /* Interference: of two calm GPUs, the one whose residents slow this pod's app loses. */
    cg_gpu_pressure slow = calm;
    slow.slowdown_milli = 1800;
    cg_cluster_gpu intf[] = {gpu(0, 128, 64, slow), gpu(1, 128, 64, calm)};
    cg_cluster_request two_gpus = {.memory_units = 8, .gpus = 1};
    cg_cluster_fit(intf, 2, &two_gpus, CG_CLUSTER_BINPACK, &a);
    CHECK(a.gpu[0] == 1, "interference: chose position %zu", a.gpu[0]);
}

int main(void)
{
    test_table();
    test_monotone();
    test_ranking();
    if (failures)
        fprintf(stderr, "%d failure(s)\n", failures);
    else
        printf("core.pressure: ok\n");
    return failures != 0;
}

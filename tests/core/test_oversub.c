/* test_oversub.c — the sharing factor's adaptive rule and the promised bytes (src/core/oversub.c):
 * worked values of the rule as docs/SCHEDULING.md states it, the evidence threshold, which runs
 * count, the quantile, the swap term, the clamp, and over random runs that F stays in bounds, is
 * order-independent, never rises when a peak does and never falls when the swap budget grows. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "core.h"

#define GiB (1ull << 30)
#define MiB (1ull << 20)

static int near(double a, double b)
{
    return fabs(a - b) < 1e-9;
}

/* n runs of limit 1 GiB each at ratio r of it. */
static void fill_runs(cg_oversub_run *runs, size_t n, double r)
{
    for (size_t i = 0; i < n; i++)
        runs[i] = (cg_oversub_run){.peak = (cg_bytes)(r * (double)GiB), .limit = GiB};
}

static void test_worked_values(void)
{
    const cg_oversub_params *p = &cg_oversub_defaults;
    cg_oversub_run runs[16];
    fill_runs(runs, 16, 0.5);
    /* p90 = 0.5, fill = 0.55, no swap: 1 / 0.55. */
    double f = cg_oversub_adaptive(runs, 16, 4 * GiB, 0, p);
    CHECK(near(f, 1.0 / 0.55), "half-full runs: %f, want %f", f, 1.0 / 0.55);
    /* The swap term: a budget of the whole capacity counts half of it. */
    fill_runs(runs, 16, 0.8);
    f = cg_oversub_adaptive(runs, 16, 4 * GiB, 4 * GiB, p);
    CHECK(near(f, 1.5 / 0.88), "80%% runs with a capacity of swap: %f, want %f", f, 1.5 / 0.88);
    /* A budget beyond the capacity counts as the capacity. */
    double g = cg_oversub_adaptive(runs, 16, 4 * GiB, 64 * GiB, p);
    CHECK(near(g, f), "swap beyond capacity: %f, want %f", g, f);
    /* Runs at their limits: nothing to promise beyond the device. */
    fill_runs(runs, 16, 1.0);
    f = cg_oversub_adaptive(runs, 16, 4 * GiB, 0, p);
    CHECK(near(f, 1.0), "full runs: %f", f);
    /* Runs far below their limits: the ceiling. */
    fill_runs(runs, 16, 0.1);
    f = cg_oversub_adaptive(runs, 16, 4 * GiB, 0, p);
    CHECK(near(f, 2.0), "tiny runs: %f, want the ceiling 2.0", f);
    /* A peak above its limit (a context charge, a sample late) counts as the limit. */
    for (size_t i = 0; i < 16; i++)
        runs[i] = (cg_oversub_run){.peak = 3 * GiB, .limit = GiB};
    f = cg_oversub_adaptive(runs, 16, 4 * GiB, 0, p);
    CHECK(near(f, 1.0), "peaks above limits: %f", f);
}

static void test_evidence(void)
{
    const cg_oversub_params *p = &cg_oversub_defaults;
    cg_oversub_run runs[16];
    fill_runs(runs, 16, 0.25);
    double f = cg_oversub_adaptive(runs, p->min_runs - 1, 4 * GiB, 0, p);
    CHECK(near(f, 1.0), "%u runs (below min_runs): %f", p->min_runs - 1, f);
    f = cg_oversub_adaptive(runs, p->min_runs, 4 * GiB, 0, p);
    CHECK(f > 1.0, "%u runs: %f, want above the floor", p->min_runs, f);
    /* Runs without a peak or a limit teach nothing and do not count toward min_runs. */
    runs[0].peak = 0;
    runs[1].limit = 0;
    f = cg_oversub_adaptive(runs, p->min_runs, 4 * GiB, 0, p);
    CHECK(near(f, 1.0), "two of %u runs unusable: %f", p->min_runs, f);
    CHECK(near(cg_oversub_adaptive(runs, 16, 0, 0, p), 1.0), "capacity 0");
    CHECK(near(cg_oversub_adaptive(NULL, 16, 4 * GiB, 0, p), 1.0), "no runs");
    CHECK(near(cg_oversub_adaptive(runs, 16, 4 * GiB, 0, NULL), 1.0), "no params");
    /* Other bounds are honoured. */
    cg_oversub_params wide = *p;
    wide.min_factor = 1.2;
    wide.max_factor = 3.0;
    fill_runs(runs, 16, 1.0);
    CHECK(near(cg_oversub_adaptive(runs, 16, 4 * GiB, 0, &wide), 1.2), "floor 1.2");
    fill_runs(runs, 16, 0.1);
    CHECK(near(cg_oversub_adaptive(runs, 16, 4 * GiB, 0, &wide), 3.0), "ceiling 3.0");
}

static void test_quantile(void)
{
    const cg_oversub_params *p = &cg_oversub_defaults;
    cg_oversub_run runs[10];
    /* Nine runs at 0.3 and one at 1.0: p90 (rank 9 of 10) is 0.3, the outlier is absorbed. */
    fill_runs(runs, 10, 0.3);
    runs[4].peak = GiB;
    double f = cg_oversub_adaptive(runs, 10, 4 * GiB, 0, p);
    CHECK(near(f, 2.0), "one outlier in ten: %f, want 2.0 (1/0.33 clamped)", f);
    /* Two at 1.0: p90 is 1.0. */
    runs[7].peak = GiB;
    f = cg_oversub_adaptive(runs, 10, 4 * GiB, 0, p);
    CHECK(near(f, 1.0), "two outliers in ten: %f, want 1.0", f);
}

static cg_bytes rnd_bytes(cg_bytes max)
{
    return ((cg_bytes)rand() << 31 ^ (cg_bytes)rand()) % max;
}

static void test_properties(void)
{
    const cg_oversub_params *p = &cg_oversub_defaults;
    srand(37);
    for (int round = 0; round < 2000; round++) {
        size_t n = (size_t)(rand() % 40);
        cg_oversub_run runs[40], shuffled[40];
        for (size_t i = 0; i < n; i++)
            runs[i] = (cg_oversub_run){.peak = rnd_bytes(8 * GiB), .limit = rnd_bytes(8 * GiB)};
        cg_bytes cap = 1 + rnd_bytes(16 * GiB), swap = rnd_bytes(32 * GiB);
        double f = cg_oversub_adaptive(runs, n, cap, swap, p);
        CHECK(f >= p->min_factor && f <= p->max_factor, "round %d: %f out of bounds", round, f);
        size_t rot = n ? (size_t)rand() % n : 0;
        for (size_t i = 0; i < n; i++) /* reversed and rotated */
            shuffled[i] = runs[(n - 1 - i + rot) % n];
        double g = cg_oversub_adaptive(shuffled, n, cap, swap, p);
        CHECK(near(f, g), "round %d: order changed F (%f, %f)", round, f, g);
        if (n > 0) {
            size_t k = (size_t)rand() % n;
            runs[k].peak += rnd_bytes(4 * GiB);
            double up = cg_oversub_adaptive(runs, n, cap, swap, p);
            CHECK(up <= f + 1e-12, "round %d: a higher peak raised F (%f -> %f)", round, f, up);
            double more = cg_oversub_adaptive(runs, n, cap, swap + rnd_bytes(8 * GiB), p);
            CHECK(more >= up - 1e-12, "round %d: more swap lowered F (%f -> %f)", round, up,
                  more);
        }
    }
}

static void test_promised(void)
{
    CHECK(cg_oversub_promised(4 * GiB, 1.0) == 4 * GiB, "F 1.0");
    CHECK(cg_oversub_promised(4 * GiB, 2.0) == 8 * GiB, "F 2.0: %llu",
          (unsigned long long)cg_oversub_promised(4 * GiB, 2.0));
    /* F 1.0 keeps a capacity that is not whole MiB as it is: today's behaviour, unchanged. */
    CHECK(cg_oversub_promised(4 * GiB + 12345, 1.0) == 4 * GiB + 12345, "F 1.0, odd capacity");
    cg_bytes b = cg_oversub_promised(1000 * MiB + 123, 1.5);
    CHECK(b == 1500 * MiB, "F 1.5 of 1000 MiB + 123: %llu, want whole MiB", (unsigned long long)b);
    CHECK(cg_oversub_promised(4 * GiB, 0.5) == 4 * GiB, "F below 1 promises the capacity");
    CHECK(cg_oversub_promised(4 * GiB, NAN) == 4 * GiB, "F NaN promises the capacity");
    CHECK(cg_oversub_promised(4 * GiB, 100.0) == 16 * GiB, "F above CG_OVERSUB_MAX is clamped");
}

int main(void)
{
    test_worked_values();
    test_evidence();
    test_quantile();
    test_properties();
    test_promised();
    if (failures)
        fprintf(stderr, "test_oversub: %d failure(s)\n", failures);
    else
        printf("test_oversub: ok\n");
    return failures != 0;
}

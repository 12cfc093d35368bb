/* test_cluster_fit.c — the scheduler extender's decisions (src/core/cluster_fit.c): each
 * invariant of cluster_fit.h, for pods on one GPU and on N GPUs, on hand-made nodes and on
 * 200000 random ones checked against a plain model (enough GPUs with both kinds free; the best
 * N found by trying every set of N GPUs, compared in doubles). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster_fit.h"

#include "../common/check.h"

static cg_cluster_gpu gpu(unsigned index, uint32_t mt, uint32_t mf, uint32_t ct, uint32_t cf)
{
    return (cg_cluster_gpu){.index = index, .memory = {mt, mf}, .compute = {ct, cf}};
}

/* A pod asking `gpus` GPUs for mem and cmp units each. */
static cg_cluster_fit_result fitn(const cg_cluster_gpu *g, size_t n, uint32_t mem, uint32_t cmp,
                                  unsigned gpus, cg_cluster_policy p)
{
    cg_cluster_request r = {mem, cmp, gpus};
    cg_cluster_fit_result out;
    cg_cluster_fit(g, n, &r, p, &out);
    return out;
}

static cg_cluster_fit_result fit(const cg_cluster_gpu *g, size_t n, uint32_t mem, uint32_t cmp,
                                 cg_cluster_policy p)
{
    return fitn(g, n, mem, cmp, 1, p);
}

static void test_examples(void)
{
    /* Issue #18: two half-full GPUs (8 of 16 units free each) and a pod of 12 units. The stock
     * scheduler sees 16 free on the node and admits it; no GPU can hold it. */
    cg_cluster_gpu half[] = {gpu(0, 16, 8, 100, 100), gpu(1, 16, 8, 100, 100)};
    cg_cluster_fit_result r = fit(half, 2, 12, 0, CG_CLUSTER_BINPACK);
    CHECK(r.status == CG_FIT_NO_ROOM, "status %d", r.status);
    CHECK(fit(half, 2, 17, 0, CG_CLUSTER_BINPACK).status == CG_FIT_TOO_LARGE, "17 > 16");
    CHECK(fit(half, 2, 8, 0, CG_CLUSTER_BINPACK).status == CG_FIT_OK, "8 fits");
    /* Memory fits on GPU 0, compute only on GPU 1: one GPU must hold both. */
    cg_cluster_gpu split[] = {gpu(0, 16, 16, 100, 10), gpu(1, 16, 2, 100, 100)};
    CHECK(fit(split, 2, 4, 50, CG_CLUSTER_SPREAD).status == CG_FIT_NO_ROOM, "split");
    CHECK(fit(split, 2, 4, 10, CG_CLUSTER_SPREAD).status == CG_FIT_OK, "compute 10 fits gpu0");

    /* binpack: the fullest GPU that fits; the pod filling it exactly scores the maximum. */
    cg_cluster_gpu mixed[] = {gpu(0, 16, 16, 100, 100), gpu(1, 16, 4, 100, 100),
                              gpu(2, 16, 6, 100, 100)};
    r = fit(mixed, 3, 4, 0, CG_CLUSTER_BINPACK);
    CHECK(r.status == CG_FIT_OK && r.gpu[0] == 1 && r.score == 10, "gpu %zu score %d", r.gpu[0],
          r.score);
    r = fit(mixed, 3, 4, 0, CG_CLUSTER_SPREAD);
    CHECK(r.status == CG_FIT_OK && r.gpu[0] == 0 && r.score == 8, "gpu %zu score %d (12/16)",
          r.gpu[0], r.score);
    r = fit(mixed, 3, 5, 0, CG_CLUSTER_BINPACK); /* gpu1 too small: gpu2 leaves 1/16 */
    CHECK(r.status == CG_FIT_OK && r.gpu[0] == 2 && r.score == 9, "gpu %zu score %d", r.gpu[0],
          r.score);
    /* Both kinds count when both are asked for: gpu0 leaves 0 memory and 100% compute (1/2
     * left), gpu1 leaves 1/4 memory and 1/4 compute (1/4 left): binpack takes gpu1. */
    cg_cluster_gpu both[] = {gpu(0, 8, 4, 100, 100), gpu(1, 16, 8, 100, 30)};
    r = fit(both, 2, 4, 5, CG_CLUSTER_BINPACK);
    CHECK(r.status == CG_FIT_OK && r.gpu[0] == 1, "gpu %zu", r.gpu[0]);
    /* Ties go to the GPU listed first, under both policies. */
    cg_cluster_gpu same[] = {gpu(3, 16, 8, 100, 100), gpu(1, 16, 8, 100, 100)};
    CHECK(fit(same, 2, 2, 0, CG_CLUSTER_BINPACK).gpu[0] == 0, "tie binpack");
    CHECK(fit(same, 2, 2, 0, CG_CLUSTER_SPREAD).gpu[0] == 0, "tie spread");

    /* No request: no GPU needed, neutral score, even on a node without GPUs. */
    r = fit(NULL, 0, 0, 0, CG_CLUSTER_BINPACK);
    CHECK(r.status == CG_FIT_OK && r.ngpus == 0 && r.score == 0, "empty request");
    CHECK(fit(NULL, 0, 1, 0, CG_CLUSTER_BINPACK).status == CG_FIT_NO_GPU, "no gpu");
    /* A GPU whose description breaks its bounds makes the whole node invalid. */
    cg_cluster_gpu bad[] = {gpu(0, 16, 16, 100, 100), gpu(1, 4, 5, 100, 100)};
    CHECK(fit(bad, 2, 1, 0, CG_CLUSTER_BINPACK).status == CG_FIT_INVALID, "free > total");
    cg_cluster_gpu huge[] = {gpu(0, CG_CLUSTER_MAX_UNITS + 1, 1, 100, 100)};
    CHECK(fit(huge, 1, 1, 0, CG_CLUSTER_BINPACK).status == CG_FIT_INVALID, "total too large");
    CHECK(fit(half, CG_CLUSTER_MAX_GPUS + 1, 1, 0, CG_CLUSTER_BINPACK).status == CG_FIT_INVALID,
          "too many gpus");
    /* The largest GPU the bounds allow, filled to one unit short: arithmetic stays exact. */
    cg_cluster_gpu big[] = {gpu(0, CG_CLUSTER_MAX_UNITS, CG_CLUSTER_MAX_UNITS,
                                CG_CLUSTER_MAX_UNITS, CG_CLUSTER_MAX_UNITS)};
    r = fit(big, 1, CG_CLUSTER_MAX_UNITS - 1, CG_CLUSTER_MAX_UNITS, CG_CLUSTER_BINPACK);
    CHECK(r.status == CG_FIT_OK && r.score == 10, "score %d", r.score);

    cg_cluster_policy p;
    CHECK(cg_cluster_policy_parse("spread", &p) == 0 && p == CG_CLUSTER_SPREAD, "parse spread");
    CHECK(cg_cluster_policy_parse("binpack", &p) == 0 && p == CG_CLUSTER_BINPACK, "parse");
    CHECK(cg_cluster_policy_parse("Binpack", &p) == -1, "parse is exact");
    CHECK(strcmp(cg_cluster_policy_name(CG_CLUSTER_SPREAD), "spread") == 0, "name");
}

/* Pods on several GPUs (cg_cluster_request.gpus = N > 1), hand-made nodes. */
static void test_gangs(void)
{
    /* Fits on exactly N: two GPUs have 8 free, the third 2; a pod of 2 x 8 takes the two. */
    cg_cluster_gpu three[] = {gpu(0, 16, 8, 100, 100), gpu(1, 16, 2, 100, 100),
                              gpu(2, 16, 8, 100, 100)};
    cg_cluster_fit_result r = fitn(three, 3, 8, 0, 2, CG_CLUSTER_BINPACK);
    CHECK(r.status == CG_FIT_OK && r.ngpus == 2 && r.gpu[0] == 0 && r.gpu[1] == 2 &&
              r.score == 10,
          "status %d ngpus %u gpus %zu %zu score %d", r.status, r.ngpus, r.gpu[0], r.gpu[1],
          r.score);
    r = fitn(three, 3, 8, 0, 2, CG_CLUSTER_SPREAD);
    CHECK(r.status == CG_FIT_OK && r.gpu[0] == 0 && r.gpu[1] == 2 && r.score == 0,
          "spread: gpus %zu %zu score %d", r.gpu[0], r.gpu[1], r.score);
    /* ... and not on three: only N - 1 more hold it now, though all three are large enough. */
    r = fitn(three, 3, 8, 0, 3, CG_CLUSTER_BINPACK);
    CHECK(r.status == CG_FIT_NO_ROOM && r.ngpus == 0 && r.score == 0 &&
              r.gpus_free_enough == 2 && r.gpus_large_enough == 3,
          "status %d counts %u %u", r.status, r.gpus_free_enough, r.gpus_large_enough);
    /* N - 1 fit now: NO_ROOM, since the node has N GPUs that large. */
    cg_cluster_gpu one_free[] = {gpu(0, 16, 8, 100, 100), gpu(1, 16, 4, 100, 100)};
    r = fitn(one_free, 2, 6, 0, 2, CG_CLUSTER_SPREAD);
    CHECK(r.status == CG_FIT_NO_ROOM && r.gpus_free_enough == 1 && r.gpus_large_enough == 2,
          "status %d counts %u %u", r.status, r.gpus_free_enough, r.gpus_large_enough);
    /* Compute counts per GPU too: memory on both, compute free on one only. */
    cg_cluster_gpu busy[] = {gpu(0, 16, 16, 100, 100), gpu(1, 16, 16, 100, 20)};
    CHECK(fitn(busy, 2, 4, 50, 2, CG_CLUSTER_BINPACK).status == CG_FIT_NO_ROOM, "compute");
    CHECK(fitn(busy, 2, 4, 20, 2, CG_CLUSTER_BINPACK).status == CG_FIT_OK, "compute 20 fits");
    /* Fewer than N GPUs on the node, or fewer than N that large: TOO_LARGE (freeing nothing
     * helps), even when the node's GPUs have units to spare. */
    cg_cluster_gpu single[] = {gpu(0, 16, 16, 100, 100)};
    r = fitn(single, 1, 1, 0, 2, CG_CLUSTER_BINPACK);
    CHECK(r.status == CG_FIT_TOO_LARGE && r.gpus_large_enough == 1, "status %d", r.status);
    CHECK(fitn(three, 3, 1, 0, 4, CG_CLUSTER_SPREAD).status == CG_FIT_TOO_LARGE, "3 GPUs < 4");
    cg_cluster_gpu small[] = {gpu(0, 16, 0, 100, 100), gpu(1, 4, 4, 100, 100)};
    r = fitn(small, 2, 8, 0, 2, CG_CLUSTER_BINPACK);
    CHECK(r.status == CG_FIT_TOO_LARGE && r.gpus_free_enough == 0 && r.gpus_large_enough == 1,
          "status %d counts %u %u", r.status, r.gpus_free_enough, r.gpus_large_enough);
    cg_cluster_gpu small_compute[] = {gpu(0, 16, 16, 100, 100), gpu(1, 16, 16, 30, 30)};
    CHECK(fitn(small_compute, 2, 1, 40, 2, CG_CLUSTER_BINPACK).status == CG_FIT_TOO_LARGE,
          "one GPU has only 30 compute units in all");
    /* More GPUs than any node may have: TOO_LARGE, never a write past gpu[]. */
    cg_cluster_gpu many[CG_CLUSTER_MAX_GPUS];
    for (unsigned i = 0; i < CG_CLUSTER_MAX_GPUS; i++)
        many[i] = gpu(i, CG_CLUSTER_MAX_UNITS, CG_CLUSTER_MAX_UNITS, CG_CLUSTER_MAX_UNITS,
                      CG_CLUSTER_MAX_UNITS);
    r = fitn(many, CG_CLUSTER_MAX_GPUS, 1, 0, CG_CLUSTER_MAX_GPUS + 1, CG_CLUSTER_BINPACK);
    CHECK(r.status == CG_FIT_TOO_LARGE && r.ngpus == 0, "65 GPUs: status %d", r.status);
    r = fitn(many, CG_CLUSTER_MAX_GPUS, 1, 0, 4000000000u, CG_CLUSTER_SPREAD);
    CHECK(r.status == CG_FIT_TOO_LARGE, "4e9 GPUs: status %d", r.status);
    /* All 64, filled to one unit short: the sums stay exact, the scores in bounds. */
    r = fitn(many, CG_CLUSTER_MAX_GPUS, CG_CLUSTER_MAX_UNITS - 1, CG_CLUSTER_MAX_UNITS,
             CG_CLUSTER_MAX_GPUS, CG_CLUSTER_BINPACK);
    CHECK(r.status == CG_FIT_OK && r.ngpus == CG_CLUSTER_MAX_GPUS && r.score == 10,
          "64 nearly full: score %d", r.score);
    for (unsigned k = 0; k < CG_CLUSTER_MAX_GPUS; k++)
        CHECK(r.gpu[k] == k, "all equal: listed order, gpu[%u] = %zu", k, r.gpu[k]);
    r = fitn(many, CG_CLUSTER_MAX_GPUS, 1, 0, CG_CLUSTER_MAX_GPUS, CG_CLUSTER_SPREAD);
    CHECK(r.status == CG_FIT_OK && r.score == 10, "64 nearly empty, spread: score %d", r.score);
    r = fitn(many, CG_CLUSTER_MAX_GPUS, 1, 0, CG_CLUSTER_MAX_GPUS, CG_CLUSTER_BINPACK);
    CHECK(r.status == CG_FIT_OK && r.score == 0, "64 nearly empty, binpack: score %d", r.score);

    /* binpack and spread pick different sets. Left after 4 units: 12, 2, 8, 0 (of 16). */
    cg_cluster_gpu four[] = {gpu(0, 16, 16, 100, 100), gpu(1, 16, 6, 100, 100),
                             gpu(2, 16, 12, 100, 100), gpu(3, 16, 4, 100, 100)};
    r = fitn(four, 4, 4, 0, 2, CG_CLUSTER_BINPACK);
    /* mean left (0 + 2/16) / 2 = 1/16: round(10 x 15/16) = 9 */
    CHECK(r.status == CG_FIT_OK && r.gpu[0] == 3 && r.gpu[1] == 1 && r.score == 9,
          "binpack: gpus %zu %zu score %d", r.gpu[0], r.gpu[1], r.score);
    r = fitn(four, 4, 4, 0, 2, CG_CLUSTER_SPREAD);
    /* mean left (12/16 + 8/16) / 2 = 10/16: round(6.25) = 6 */
    CHECK(r.status == CG_FIT_OK && r.gpu[0] == 0 && r.gpu[1] == 2 && r.score == 6,
          "spread: gpus %zu %zu score %d", r.gpu[0], r.gpu[1], r.score);
    /* The mean is rounded: lefts 1/16 and 2/16 average 3/32, round(10 x 29/32) =
     * round(9.0625) = 9; halves round up: lefts 0 and 1/10 average 1/20, 9.5 -> 10. */
    cg_cluster_gpu halves[] = {gpu(0, 16, 5, 100, 100), gpu(1, 16, 6, 100, 100)};
    CHECK(fitn(halves, 2, 4, 0, 2, CG_CLUSTER_BINPACK).score == 9, "3/32");
    cg_cluster_gpu tenth[] = {gpu(0, 10, 4, 100, 100), gpu(1, 10, 5, 100, 100)};
    r = fitn(tenth, 2, 4, 0, 2, CG_CLUSTER_BINPACK);
    CHECK(r.score == 10, "mean 1/20 under binpack: 9.5 rounds up to %d", r.score);
    CHECK(fitn(tenth, 2, 4, 0, 2, CG_CLUSTER_SPREAD).score == 1, "0.5 rounds up to 1");

    /* Ties go to the GPUs listed first; a tie at the boundary of the N too. */
    cg_cluster_gpu same[] = {gpu(5, 16, 8, 100, 100), gpu(2, 16, 8, 100, 100),
                             gpu(7, 16, 8, 100, 100)};
    for (int p = 0; p < 2; p++) {
        r = fitn(same, 3, 2, 0, 2, (cg_cluster_policy)p);
        CHECK(r.gpu[0] == 0 && r.gpu[1] == 1, "policy %d: tie: %zu %zu", p, r.gpu[0], r.gpu[1]);
    }
    cg_cluster_gpu edge[] = {gpu(0, 16, 16, 100, 100), gpu(1, 16, 8, 100, 100),
                             gpu(2, 16, 8, 100, 100), gpu(3, 16, 8, 100, 100)};
    r = fitn(edge, 4, 2, 0, 2, CG_CLUSTER_SPREAD); /* the empty one, then the first of three */
    CHECK(r.gpu[0] == 0 && r.gpu[1] == 1, "spread edge tie: %zu %zu", r.gpu[0], r.gpu[1]);
    r = fitn(edge, 4, 2, 0, 3, CG_CLUSTER_BINPACK); /* the three equals, in their order */
    CHECK(r.gpu[0] == 1 && r.gpu[1] == 2 && r.gpu[2] == 3, "binpack edge tie: %zu %zu %zu",
          r.gpu[0], r.gpu[1], r.gpu[2]);

    /* No GPU: NO_GPU whatever N; an empty request needs none whatever N; units on 0 GPUs are a
     * request no caller means: INVALID. */
    CHECK(fitn(NULL, 0, 1, 0, 2, CG_CLUSTER_BINPACK).status == CG_FIT_NO_GPU, "no gpu, N 2");
    r = fitn(three, 3, 0, 0, 2, CG_CLUSTER_BINPACK);
    CHECK(r.status == CG_FIT_OK && r.ngpus == 0 && r.score == 0, "empty request, N 2");
    CHECK(fitn(three, 3, 1, 0, 0, CG_CLUSTER_BINPACK).status == CG_FIT_INVALID, "N 0");

    /* The reasons name the count when the pod asks for several GPUs; one GPU reads as ever. */
    CHECK(strcmp(cg_cluster_fit_reason(CG_FIT_NO_ROOM, 1), "no single GPU has that much free") ==
              0, "one GPU");
    CHECK(strstr(cg_cluster_fit_reason(CG_FIT_NO_ROOM, 2), "not enough GPUs") != NULL, "N");
    CHECK(strstr(cg_cluster_fit_reason(CG_FIT_TOO_LARGE, 1), "no GPU of the node") != NULL, "1");
    CHECK(strstr(cg_cluster_fit_reason(CG_FIT_TOO_LARGE, 3), "not enough of the node's GPUs") !=
              NULL, "N");
}

/* ---- random nodes against the model ------------------------------------------------------- */

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint32_t rnd(uint32_t n) /* 0..n-1 */
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng % n);
}

/* What gpu g has left after r, as a fraction of the GPU (averaged over the kinds asked). */
static void left_exact(const cg_cluster_gpu *g, const cg_cluster_request *r, double *frac)
{
    double sum = 0;
    int kinds = 0;
    if (r->memory_units) {
        sum += (double)(g->memory.free - r->memory_units) / g->memory.total;
        kinds++;
    }
    if (r->compute_units) {
        sum += (double)(g->compute.free - r->compute_units) / g->compute.total;
        kinds++;
    }
    *frac = sum / kinds;
}

static int model_fits(const cg_cluster_gpu *g, const cg_cluster_request *r, int now)
{
    return (now ? g->memory.free : g->memory.total) >= r->memory_units &&
           (now ? g->compute.free : g->compute.total) >= r->compute_units;
}

static void random_node(cg_cluster_gpu *g, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        /* Small totals make ties and exact fills frequent; some GPUs are large. */
        uint32_t mt = rnd(4) ? 1 + rnd(32) : 1 + rnd(CG_CLUSTER_MAX_UNITS);
        uint32_t ct = rnd(4) ? 100 : rnd(101);
        g[i] = gpu((unsigned)i, mt, rnd(mt + 1), ct, rnd(2) && ct ? rnd(ct + 1) : ct);
    }
}

/* The same GPU description (the tie rule's "identical"). */
static int same_gpu(const cg_cluster_gpu *a, const cg_cluster_gpu *b)
{
    return memcmp(&a->memory, &b->memory, sizeof a->memory) == 0 &&
           memcmp(&a->compute, &b->compute, sizeof a->compute) == 0;
}

/* The model's best: of every set of `want` GPUs that all hold r now, the least (binpack) or most
 * (spread) summed left-over. Returns 0 when no such set exists. Tries all 2^n sets, so it
 * shares nothing with the core's sort. */
static int model_best_sum(const cg_cluster_gpu *g, size_t n, const cg_cluster_request *r,
                          unsigned want, cg_cluster_policy p, double *best)
{
    int found = 0;
    for (unsigned mask = 0; mask < (1u << n); mask++) {
        unsigned members = 0;
        for (unsigned m = mask; m; m &= m - 1)
            members++;
        if (members != want)
            continue;
        double sum = 0, left;
        int all_hold = 1;
        for (size_t i = 0; i < n && all_hold; i++)
            if (mask >> i & 1) {
                all_hold = model_fits(&g[i], r, 1);
                if (all_hold) {
                    left_exact(&g[i], r, &left);
                    sum += left;
                }
            }
        if (all_hold && (!found || (p == CG_CLUSTER_BINPACK ? sum < *best : sum > *best))) {
            *best = sum;
            found = 1;
        }
    }
    return found;
}

/* Kept results for the monotonicity check across nodes (test_random_monotone). */
enum { MONO_SAMPLES = 3000 };
static struct {
    double mean_left;
    int score;
} mono[2][MONO_SAMPLES];
static size_t nmono[2];

/* How many GPUs a random pod asks for: mostly 1 (the case of every pod so far) or a few, at
 * times more than the node has, now and then more than any node may have. */
static unsigned random_gpus(unsigned maxn)
{
    if (rnd(2))
        return 1;
    if (rnd(10) == 0)
        return rnd(2) ? CG_CLUSTER_MAX_GPUS : CG_CLUSTER_MAX_GPUS + 1 + rnd(1000);
    return 2 + rnd(maxn);
}

static void test_random(void)
{
    enum { ROUNDS = 200000, MAXN = 8 };
    unsigned kept_on_several = 0, failed_on_several = 0; /* the model is exercised for N > 1 */
    for (int round = 0; round < ROUNDS; round++) {
        cg_cluster_gpu g[MAXN], shuffled[MAXN];
        size_t n = rnd(MAXN + 1);
        random_node(g, n);
        cg_cluster_request r = {rnd(4) ? rnd(40) : rnd(CG_CLUSTER_MAX_UNITS), rnd(3) ? 0 : rnd(120),
                                random_gpus(MAXN)};
        if (r.gpus > 1 && rnd(3)) { /* smaller amounts, so that N GPUs often hold them */
            r.memory_units = rnd(10);
            r.compute_units = rnd(2) ? 0 : rnd(50);
        }
        cg_cluster_policy p = rnd(2) ? CG_CLUSTER_SPREAD : CG_CLUSTER_BINPACK;
        cg_cluster_fit_result out, again, perm;
        cg_cluster_fit(g, n, &r, p, &out);
        cg_cluster_fit(g, n, &r, p, &again);
        CHECK(memcmp(&out, &again, sizeof out) == 0, "round %d: not deterministic", round);

        int empty = r.memory_units == 0 && r.compute_units == 0;
        unsigned fit_now = 0, fit_ever = 0;
        for (size_t i = 0; i < n; i++) {
            fit_now += (unsigned)model_fits(&g[i], &r, 1);
            fit_ever += (unsigned)model_fits(&g[i], &r, 0);
        }
        if (empty) {
            CHECK(out.status == CG_FIT_OK && out.ngpus == 0 && out.score == 0, "round %d", round);
            continue;
        }
        /* Kept exactly when N GPUs hold both kinds; the reason says whether freeing helps. */
        int fits = fit_now >= r.gpus;
        if (r.gpus > 1 && fits)
            kept_on_several++;
        else if (r.gpus > 1)
            failed_on_several++;
        CHECK((out.status == CG_FIT_OK) == fits, "round %d: status %d, model %d (%u of %zu "
              "GPUs hold it, %u wanted)", round, out.status, fits, fit_now, n, r.gpus);
        if (n > 0)
            CHECK(out.gpus_free_enough == fit_now && out.gpus_large_enough == fit_ever,
                  "round %d: counts %u %u, model %u %u", round, out.gpus_free_enough,
                  out.gpus_large_enough, fit_now, fit_ever);
        if (!fits) {
            cg_fit_status want = n == 0               ? CG_FIT_NO_GPU
                                 : fit_ever >= r.gpus ? CG_FIT_NO_ROOM
                                                      : CG_FIT_TOO_LARGE;
            CHECK(out.status == want, "round %d: status %d, want %d", round, out.status, want);
            CHECK(out.ngpus == 0 && out.score == 0, "round %d: a failed node has no score", round);
            continue;
        }
        CHECK(out.ngpus == r.gpus, "round %d: %u GPUs chosen, %u asked", round, out.ngpus, r.gpus);
        CHECK(out.score >= 0 && out.score <= CG_CLUSTER_MAX_SCORE, "round %d: score %d", round,
              out.score);
        int chosen[MAXN] = {0};
        double chosen_sum = 0, left_k, left_prev = 0;
        for (unsigned k = 0; k < out.ngpus && k < MAXN; k++) {
            size_t c = out.gpu[k];
            CHECK(c < n && !chosen[c], "round %d: gpu[%u] = %zu (n %zu, twice?)", round, k, c, n);
            if (c >= n || chosen[c])
                break;
            chosen[c] = 1;
            CHECK(model_fits(&g[c], &r, 1), "round %d: chosen GPU %zu does not hold the pod",
                  round, c);
            left_exact(&g[c], &r, &left_k);
            chosen_sum += left_k;
            /* Best first: each chosen GPU is at least as good as the next. */
            if (k > 0)
                CHECK((p == CG_CLUSTER_BINPACK ? left_prev - left_k : left_k - left_prev) <= 2e-6,
                      "round %d: gpu[%u] is better than gpu[%u]", round, k, k - 1);
            left_prev = left_k;
        }
        /* The chosen set is as good as the best set of N (within the millionths the core
         * resolves per GPU). */
        double best = 0;
        CHECK(model_best_sum(g, n, &r, r.gpus, p, &best), "round %d: the model finds no set",
              round);
        double worse = p == CG_CLUSTER_BINPACK ? chosen_sum - best : best - chosen_sum;
        CHECK(worse <= 2e-6 * r.gpus + 1e-9, "round %d: the chosen GPUs are worse than the best "
              "%u by %g", round, r.gpus, worse);
        /* No GPU left out is better than one chosen, and none left out is identical to one
         * chosen and listed before it (a tie goes to the GPU listed first). */
        for (size_t i = 0; i < n; i++) {
            if (chosen[i] || !model_fits(&g[i], &r, 1))
                continue;
            double li, lc;
            left_exact(&g[i], &r, &li);
            for (unsigned k = 0; k < out.ngpus; k++) {
                left_exact(&g[out.gpu[k]], &r, &lc);
                double better = p == CG_CLUSTER_BINPACK ? lc - li : li - lc;
                CHECK(better <= 2e-6, "round %d: gpu %zu left out is better than %zu by %g",
                      round, i, out.gpu[k], better);
                CHECK(i > out.gpu[k] || !same_gpu(&g[i], &g[out.gpu[k]]),
                      "round %d: gpu %zu, the same as %zu, is listed first", round, i,
                      out.gpu[k]);
            }
        }
        /* The score is the best set's mean left-over on 0..10, rounded (reversed for
         * binpack). */
        double mean = best / r.gpus;
        double want = (p == CG_CLUSTER_BINPACK ? 1 - mean : mean) * CG_CLUSTER_MAX_SCORE;
        CHECK(out.score >= (int)(want - 0.5 - 1e-4) && out.score <= (int)(want + 0.5 + 1e-4),
              "round %d: score %d for %g", round, out.score, want);
        if (nmono[p] < MONO_SAMPLES) {
            mono[p][nmono[p]].mean_left = mean;
            mono[p][nmono[p]++].score = out.score;
        }
        /* The GPUs' order matters only through ties: status and score do not change. */
        memcpy(shuffled, g, n * sizeof g[0]);
        for (size_t i = n; i > 1; i--) {
            size_t j = rnd((uint32_t)i);
            cg_cluster_gpu t = shuffled[i - 1];
            shuffled[i - 1] = shuffled[j];
            shuffled[j] = t;
        }
        cg_cluster_fit(shuffled, n, &r, p, &perm);
        CHECK(perm.status == out.status && perm.score == out.score, "round %d: order changed "
              "score %d -> %d", round, out.score, perm.score);
    }
    printf("random nodes: pods on several GPUs kept on %u, failed on %u\n", kept_on_several,
           failed_on_several);
    CHECK(kept_on_several > ROUNDS / 20 && failed_on_several > ROUNDS / 20, "too few");
}

/* Across the random nodes kept above, whatever their pods (one GPU or several): a node whose
 * chosen GPUs have less left on average never scores lower under binpack, nor higher under
 * spread. Means closer than the core resolves (millionths per GPU) are not compared. */
static void test_random_monotone(void)
{
    for (int p = 0; p < 2; p++) {
        CHECK(nmono[p] == MONO_SAMPLES, "only %zu samples for policy %d", nmono[p], p);
        for (size_t i = 0; i < nmono[p]; i++)
            for (size_t j = 0; j < nmono[p]; j++) {
                if (mono[p][i].mean_left >= mono[p][j].mean_left - 1e-5)
                    continue;
                int si = mono[p][i].score, sj = mono[p][j].score;
                CHECK(p == CG_CLUSTER_BINPACK ? si >= sj : si <= sj,
                      "policy %d: left %g scores %d, left %g scores %d", p, mono[p][i].mean_left,
                      si, mono[p][j].mean_left, sj);
            }
    }
}

/* Scores are monotone in what is left: across nodes, a GPU left fuller never scores lower under
 * binpack nor higher under spread. */
static void test_monotone(void)
{
    for (uint32_t total = 1; total <= 40; total++)
        for (uint32_t want = 1; want <= total; want++) {
            int prev_b = CG_CLUSTER_MAX_SCORE + 1, prev_s = -1;
            for (uint32_t free = want; free <= total; free++) {
                cg_cluster_gpu g = gpu(0, total, free, 100, 100);
                int b = fit(&g, 1, want, 0, CG_CLUSTER_BINPACK).score;
                int s = fit(&g, 1, want, 0, CG_CLUSTER_SPREAD).score;
                CHECK(b <= prev_b && s >= prev_s, "total %u want %u free %u: %d %d", total, want,
                      free, b, s);
                CHECK(free != want || b == CG_CLUSTER_MAX_SCORE, "exact fill scores the maximum");
                CHECK(free != want || s == 0, "exact fill scores 0 under spread");
                prev_b = b;
                prev_s = s;
            }
        }
}

/* The same for N GPUs. A node of N equal GPUs: the more each has left, the lower the binpack
 * score and the higher the spread one. Then one GPU of a node of N + 1 gains free units while
 * the others stay: spread never scores lower (its N emptiest can only get emptier); binpack
 * never higher while that GPU holds the pod (its N fullest can only get less full). */
static void test_monotone_gangs(void)
{
    for (unsigned n = 2; n <= 4; n++)
        for (uint32_t total = 1; total <= 24; total++)
            for (uint32_t want = 1; want <= total; want++) {
                cg_cluster_gpu g[5];
                int prev_b = CG_CLUSTER_MAX_SCORE + 1, prev_s = -1;
                for (uint32_t free = want; free <= total; free++) {
                    for (unsigned i = 0; i < n; i++)
                        g[i] = gpu(i, total, free, 100, 100);
                    int b = fitn(g, n, want, 0, n, CG_CLUSTER_BINPACK).score;
                    int s = fitn(g, n, want, 0, n, CG_CLUSTER_SPREAD).score;
                    CHECK(b <= prev_b && s >= prev_s, "n %u total %u want %u free %u: %d %d", n,
                          total, want, free, b, s);
                    CHECK(free != want || (b == CG_CLUSTER_MAX_SCORE && s == 0),
                          "n %u: exact fill scores %d and %d", n, b, s);
                    prev_b = b;
                    prev_s = s;
                }
                /* GPU 0 grows; GPUs 1..n hold fixed amounts, the first of them as much as
                 * it has room for, the others a little more each. */
                prev_b = CG_CLUSTER_MAX_SCORE + 1;
                prev_s = -1;
                for (uint32_t free = want; free <= total; free++) {
                    g[0] = gpu(0, total, free, 100, 100);
                    for (unsigned i = 1; i <= n; i++)
                        g[i] = gpu(i, total, want + (total - want) * (i - 1) / n, 100, 100);
                    cg_cluster_fit_result b = fitn(g, n + 1, want, 0, n, CG_CLUSTER_BINPACK);
                    cg_cluster_fit_result s = fitn(g, n + 1, want, 0, n, CG_CLUSTER_SPREAD);
                    CHECK(b.status == CG_FIT_OK && s.status == CG_FIT_OK, "fits");
                    CHECK(b.score <= prev_b && s.score >= prev_s,
                          "n %u total %u want %u gpu0 free %u: %d %d", n, total, want, free,
                          b.score, s.score);
                    prev_b = b.score;
                    prev_s = s.score;
                }
            }
}

int main(void)
{
    test_examples();
    test_gangs();
    test_random();
    test_random_monotone();
    test_monotone();
    test_monotone_gangs();
    if (failures) {
        fprintf(stderr, "%d failure(s)\n", failures);
        return 1;
    }
    printf("cluster_fit: all checks passed\n");
    return 0;
}

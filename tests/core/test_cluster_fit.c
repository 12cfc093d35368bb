/* test_cluster_fit.c — the scheduler extender's decisions (src/core/cluster_fit.c): each
 * invariant of cluster_fit.h, on hand-made nodes and on 200000 random ones checked against a
 * plain model (any GPU with both kinds free; the best by exact rational comparison). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster_fit.h"

#include "../common/check.h"

static cg_cluster_gpu gpu(unsigned index, uint32_t mt, uint32_t mf, uint32_t ct, uint32_t cf)
{
    return (cg_cluster_gpu){index, {mt, mf}, {ct, cf}};
}

static cg_cluster_fit_result fit(const cg_cluster_gpu *g, size_t n, uint32_t mem, uint32_t cmp,
                                 cg_cluster_policy p)
{
    cg_cluster_request r = {mem, cmp, 1};
    cg_cluster_fit_result out;
    cg_cluster_fit(g, n, &r, p, &out);
    return out;
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
    cg_cluster_request two = {1, 0, 2};
    cg_cluster_fit_result o;
    CHECK(cg_cluster_fit(half, 2, &two, CG_CLUSTER_BINPACK, &o) == CG_FIT_UNSUPPORTED, "gpus 2");
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

static void test_random(void)
{
    enum { ROUNDS = 200000, MAXN = 8 };
    for (int round = 0; round < ROUNDS; round++) {
        cg_cluster_gpu g[MAXN], shuffled[MAXN];
        size_t n = rnd(MAXN + 1);
        random_node(g, n);
        cg_cluster_request r = {rnd(4) ? rnd(40) : rnd(CG_CLUSTER_MAX_UNITS), rnd(3) ? 0 : rnd(120),
                                1};
        cg_cluster_policy p = rnd(2) ? CG_CLUSTER_SPREAD : CG_CLUSTER_BINPACK;
        cg_cluster_fit_result out, again, perm;
        cg_cluster_fit(g, n, &r, p, &out);
        cg_cluster_fit(g, n, &r, p, &again);
        CHECK(memcmp(&out, &again, sizeof out) == 0, "round %d: not deterministic", round);

        int empty = r.memory_units == 0 && r.compute_units == 0;
        int fits_now = 0, fits_ever = 0;
        for (size_t i = 0; i < n; i++) {
            fits_now |= model_fits(&g[i], &r, 1);
            fits_ever |= model_fits(&g[i], &r, 0);
        }
        if (empty) {
            CHECK(out.status == CG_FIT_OK && out.ngpus == 0 && out.score == 0, "round %d", round);
            continue;
        }
        /* Kept exactly when some GPU holds both kinds; the reason says whether freeing helps. */
        CHECK((out.status == CG_FIT_OK) == fits_now, "round %d: status %d, model %d", round,
              out.status, fits_now);
        if (!fits_now) {
            cg_fit_status want = n == 0 ? CG_FIT_NO_GPU
                                 : fits_ever ? CG_FIT_NO_ROOM : CG_FIT_TOO_LARGE;
            CHECK(out.status == want, "round %d: status %d, want %d", round, out.status, want);
            CHECK(out.ngpus == 0 && out.score == 0, "round %d: a failed node has no score", round);
            continue;
        }
        CHECK(out.ngpus == 1 && out.gpu[0] < n, "round %d", round);
        CHECK(out.score >= 0 && out.score <= CG_CLUSTER_MAX_SCORE, "round %d: score %d", round,
              out.score);
        const cg_cluster_gpu *chosen = &g[out.gpu[0]];
        CHECK(model_fits(chosen, &r, 1), "round %d: the chosen GPU does not hold the pod", round);
        /* The chosen GPU is the best by the policy (within the millionths the core resolves),
         * and no GPU before it is as good. */
        double lc, li;
        left_exact(chosen, &r, &lc);
        for (size_t i = 0; i < n; i++) {
            if (!model_fits(&g[i], &r, 1))
                continue;
            left_exact(&g[i], &r, &li);
            double better = p == CG_CLUSTER_BINPACK ? lc - li : li - lc;
            CHECK(better <= 2e-6, "round %d: gpu %zu is better than %zu by %g", round, i,
                  out.gpu[0], better);
            /* An identical GPU listed earlier would have been the tie's winner. */
            if (i < out.gpu[0])
                CHECK(memcmp(&g[i].memory, &chosen->memory, sizeof chosen->memory) != 0 ||
                          memcmp(&g[i].compute, &chosen->compute, sizeof chosen->compute) != 0,
                      "round %d: gpu %zu, the same as %zu, is listed first", round, i, out.gpu[0]);
        }
        /* The score is the left-over fraction on 0..10, rounded (reversed for binpack). */
        double want = (p == CG_CLUSTER_BINPACK ? 1 - lc : lc) * CG_CLUSTER_MAX_SCORE;
        CHECK(out.score >= (int)(want - 0.5 - 1e-4) && out.score <= (int)(want + 0.5 + 1e-4),
              "round %d: score %d for %g", round, out.score, want);
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

int main(void)
{
    test_examples();
    test_random();
    test_monotone();
    if (failures) {
        fprintf(stderr, "%d failure(s)\n", failures);
        return 1;
    }
    printf("cluster_fit: all checks passed\n");
    return 0;
}

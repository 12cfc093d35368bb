/* closest.c — the n of m ranked candidates whose pairs cost least together (closest.h). */
#include "closest.h"

#include <stdbool.h>
#include <stdint.h>

/* C(m, n), or `cap + 1` once it exceeds cap. */
static uint64_t choose_capped(unsigned m, unsigned n, uint64_t cap)
{
    if (n > m)
        return 0;
    if (n > m - n)
        n = m - n;
    uint64_t c = 1;
    for (unsigned i = 1; i <= n; i++) {
        c = c * (m - n + i) / i; /* exact: c * (m-n+i) is a multiple of i here */
        if (c > cap)
            return cap + 1;
    }
    return c;
}

static unsigned long long set_cost(const unsigned *set, unsigned n, cg_pair_cost_fn cost,
                                   const void *ctx)
{
    unsigned long long sum = 0;
    for (unsigned i = 0; i < n; i++)
        for (unsigned j = i + 1; j < n; j++)
            sum += cost(ctx, set[i], set[j]);
    return sum;
}

/* The fixed candidates plus every (n - nfixed)-subset of the others, in lexicographic order of
 * positions, so the first set with the least cost is also the one whose members come earliest
 * in the ranking. */
static void search_exhaustive(const unsigned *rank, unsigned m, unsigned nfixed, unsigned n,
                              cg_pair_cost_fn cost, const void *ctx, unsigned *best)
{
    unsigned set[CG_CLOSEST_MAX], pos[CG_CLOSEST_MAX];
    unsigned free_n = n - nfixed, free_m = m - nfixed;
    unsigned long long best_cost = ~0ull;
    for (unsigned i = 0; i < nfixed; i++)
        set[i] = rank[i];
    for (unsigned i = 0; i < free_n; i++)
        pos[i] = i;
    for (;;) {
        for (unsigned i = 0; i < free_n; i++)
            set[nfixed + i] = rank[nfixed + pos[i]];
        unsigned long long c = set_cost(set, n, cost, ctx);
        if (c < best_cost) {
            best_cost = c;
            for (unsigned i = 0; i < n; i++)
                best[i] = set[i];
        }
        /* Next combination: the rightmost position that can still move right. */
        int k = (int)free_n - 1;
        while (k >= 0 && pos[k] == free_m - free_n + (unsigned)k)
            k--;
        if (k < 0)
            return;
        pos[k]++;
        for (unsigned i = (unsigned)k + 1; i < free_n; i++)
            pos[i] = pos[i - 1] + 1;
    }
}

/* Too many subsets to try: from each candidate as a seed (in ranking order; only the fixed set
 * when there is one), add the candidate that adds the least cost to those taken so far (ties:
 * the earlier ranked), until n; keep the cheapest set over all seeds (ties: the earlier seed).
 * O(m^2 n^2) cost lookups: about 4 million for 64 candidates choose 32. Not always optimal: a
 * cheap pair the seed does not lead to can be missed, which the exhaustive search never does. */
static void search_greedy(const unsigned *rank, unsigned m, unsigned nfixed, unsigned n,
                          cg_pair_cost_fn cost, const void *ctx, unsigned *best)
{
    unsigned long long best_cost = ~0ull;
    unsigned seeds = nfixed ? 1 : m;
    for (unsigned s = 0; s < seeds; s++) {
        unsigned set[CG_CLOSEST_MAX], k = 0;
        bool taken[CG_CLOSEST_MAX] = {false};
        if (nfixed) {
            for (; k < nfixed; k++) {
                set[k] = rank[k];
                taken[k] = true;
            }
        } else {
            set[k++] = rank[s];
            taken[s] = true;
        }
        for (; k < n; k++) {
            unsigned pick = m;
            unsigned long long pick_add = ~0ull;
            for (unsigned c = 0; c < m; c++) {
                if (taken[c])
                    continue;
                unsigned long long add = 0;
                for (unsigned i = 0; i < k; i++)
                    add += cost(ctx, set[i], rank[c]);
                if (add < pick_add) {
                    pick_add = add;
                    pick = c;
                }
            }
            taken[pick] = true;
            set[k] = rank[pick];
        }
        unsigned long long c = set_cost(set, n, cost, ctx);
        if (c < best_cost) {
            best_cost = c;
            for (unsigned i = 0; i < n; i++)
                best[i] = set[i];
        }
    }
}

void cg_closest_set(const unsigned *rank, unsigned m, unsigned nfixed, unsigned n,
                    cg_pair_cost_fn cost, const void *ctx, unsigned *out)
{
    if (choose_capped(m - nfixed, n - nfixed, CG_CLOSEST_EXHAUSTIVE_MAX) <=
        CG_CLOSEST_EXHAUSTIVE_MAX)
        search_exhaustive(rank, m, nfixed, n, cost, ctx, out);
    else
        search_greedy(rank, m, nfixed, n, cost, ctx, out);
}

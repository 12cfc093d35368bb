/* oversub.c — the sharing factor: how much more memory a device may promise than it has
 * (issue 37; docs/SCHEDULING.md, "Sharing factor").
 *
 * Why a factor is safe at all: what is promised only decides what kubelet or Slurm send to the
 * node. The core still admits each container against the device's real capacity (L <= C), keeps
 * every assignment banker's-safe and every tenant under its ceiling, so a promise the device
 * cannot keep at some moment makes a container wait (or be swapped), never fail.
 *
 * Why this rule: containers rarely sit at their limits together. If a run's peak is at most q of
 * its limit, limits adding up to C / q have peaks that fit in C; q is taken high (p90) and
 * padded (the margin) so that suspension stays rare rather than merely survivable. Host memory
 * that swap may use holds part of the excess, so it raises F, but only by a share of it: a move
 * costs time, and the budget is the node's, shared with held swaps. The clamp keeps F within
 * what seed 002 measured (1x-2x) however optimistic the runs look. */
#include <stdlib.h>

#include "core.h"

const cg_oversub_params cg_oversub_defaults = {
    .min_factor = 1.0,
    .max_factor = 2.0,
    .min_runs = 8,
    .quantile_pct = 90,
    .margin_pct = 10,
    .swap_pct = 50,
};

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double clamp(double v, double lo, double hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

double cg_oversub_adaptive(const cg_oversub_run *runs, size_t n, cg_bytes capacity,
                           cg_bytes swap_budget, const cg_oversub_params *p)
{
    if (!p)
        return CG_OVERSUB_MIN;
    double lo = p->min_factor, hi = p->max_factor >= p->min_factor ? p->max_factor : lo;
    if (capacity == 0 || !runs || n < p->min_runs || n == 0)
        return lo;
    double *r = malloc(n * sizeof *r);
    if (!r)
        return lo;
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (runs[i].peak == 0 || runs[i].limit == 0)
            continue;
        double x = (double)runs[i].peak / (double)runs[i].limit;
        r[m++] = x > 1.0 ? 1.0 : x;
    }
    if (m < p->min_runs || m == 0) {
        free(r);
        return lo;
    }
    qsort(r, m, sizeof *r, cmp_double);
    unsigned qp = p->quantile_pct > 100 ? 100 : p->quantile_pct;
    /* Nearest rank: the smallest ratio at least qp% of the runs do not exceed. */
    size_t rank = ((size_t)qp * m + 99) / 100;
    double q = r[rank == 0 ? 0 : rank - 1];
    free(r);
    double fill = q * (1.0 + (double)p->margin_pct / 100.0);
    if (fill > 1.0)
        fill = 1.0;
    cg_bytes swap = swap_budget < capacity ? swap_budget : capacity;
    double s = (double)(p->swap_pct > 100 ? 100 : p->swap_pct) / 100.0 * (double)swap /
               (double)capacity;
    /* fill > 0: every kept run has peak > 0, so q > 0. */
    return clamp((1.0 + s) / fill, lo, hi);
}

cg_bytes cg_oversub_promised(cg_bytes capacity, double factor)
{
    if (!(factor > 1.0))
        return capacity;
    if (factor > CG_OVERSUB_MAX)
        factor = CG_OVERSUB_MAX;
    double v = (double)capacity * factor;
    cg_bytes b = v >= 18446744073709549568.0 ? UINT64_MAX : (cg_bytes)v;
    b &= ~(((cg_bytes)1 << 20) - 1);
    return b > capacity ? b : capacity;
}

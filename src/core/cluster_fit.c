/* cluster_fit.c — one node, one pod: do N GPUs of the node hold the pod's per-GPU units, which
 * ones, and the node's score under binpack or spread (the contract is in cluster_fit.h).
 *
 * "Left over" is measured as a fraction of the GPU, in millionths, averaged over the kinds of
 * units the pod asks for: a pod that asks for no compute does not make a GPU with compute to
 * spare look fuller or emptier. Millionths keep every comparison in integers (no rounding that
 * could differ between machines) while resolving any real difference in units, since a GPU has
 * at most CG_CLUSTER_MAX_UNITS of either kind. */
#include "cluster_fit.h"

#include <string.h>

#define PPM 1000000u

static int valid(const cg_cluster_gpu *g)
{
    return g->memory.total <= CG_CLUSTER_MAX_UNITS && g->compute.total <= CG_CLUSTER_MAX_UNITS &&
           g->memory.free <= g->memory.total && g->compute.free <= g->compute.total;
}

static int holds(const cg_units *u, uint32_t want, int now)
{
    return (now ? u->free : u->total) >= want;
}

/* What the GPU has left after the pod, in millionths of the GPU (see the file comment). */
static uint32_t left_ppm(const cg_cluster_gpu *g, const cg_cluster_request *r)
{
    uint64_t sum = 0;
    unsigned kinds = 0;
    if (r->memory_units) {
        sum += (uint64_t)(g->memory.free - r->memory_units) * PPM / g->memory.total;
        kinds++;
    }
    if (r->compute_units) {
        sum += (uint64_t)(g->compute.free - r->compute_units) * PPM / g->compute.total;
        kinds++;
    }
    return (uint32_t)(sum / kinds);
}

/* The chosen GPUs' goodness, summed (each 0..PPM) over ngpus GPUs, as a score
 * 0..CG_CLUSTER_MAX_SCORE: round(10 x sum / (ngpus x PPM)), halves up (cluster_fit.h).
 * sum <= CG_CLUSTER_MAX_GPUS x PPM, so nothing overflows. */
static int scale(uint64_t sum, unsigned ngpus)
{
    uint64_t whole = (uint64_t)ngpus * PPM;
    return (int)((sum * CG_CLUSTER_MAX_SCORE + whole / 2) / whole);
}

/* A GPU that holds the request now, with its goodness (cluster_fit.h) in millionths. */
struct candidate {
    size_t pos;
    uint32_t good;
};

/* The GPU's goodness for the pod: binpack 1 - left-over, spread the left-over, scaled down by
 * its pressure penalty (pressure.h). At most PPM. */
static uint32_t goodness(const cg_cluster_gpu *g, const cg_cluster_request *r,
                         cg_cluster_policy policy)
{
    uint32_t left = left_ppm(g, r);
    uint64_t good = policy == CG_CLUSTER_BINPACK ? PPM - left : left;
    cg_pressure_need need = {.bytes = g->unit_bytes && r->memory_units <= UINT64_MAX / g->unit_bytes
                                          ? (uint64_t)r->memory_units * g->unit_bytes
                                          : 0};
    uint32_t penalty = cg_pressure_penalty(&g->pressure, &need, NULL);
    return (uint32_t)(good * (CG_PRESSURE_MAX - penalty) / CG_PRESSURE_MAX);
}

/* Whether a is a better pick than b; strict, so that equals keep their order. */
static int better(const struct candidate *a, const struct candidate *b)
{
    return a->good > b->good;
}

cg_fit_status cg_cluster_fit(const cg_cluster_gpu *gpus, size_t n, const cg_cluster_request *req,
                             cg_cluster_policy policy, cg_cluster_fit_result *out)
{
    memset(out, 0, sizeof *out);
    if (n > CG_CLUSTER_MAX_GPUS)
        return out->status = CG_FIT_INVALID;
    for (size_t i = 0; i < n; i++)
        if (!valid(&gpus[i]))
            return out->status = CG_FIT_INVALID;
    if (req->memory_units == 0 && req->compute_units == 0)
        return out->status = CG_FIT_OK; /* needs no GPU: every node is as good as another */
    if (req->gpus == 0)
        return out->status = CG_FIT_INVALID; /* units, but on no GPU: no caller means that */
    if (n == 0)
        return out->status = CG_FIT_NO_GPU;

    /* Candidates in the order listed, then a stable insertion sort by the policy: the first N
     * are the best N, ties kept in the order listed. At most CG_CLUSTER_MAX_GPUS of them. */
    struct candidate cand[CG_CLUSTER_MAX_GPUS];
    size_t ncand = 0;
    for (size_t i = 0; i < n; i++) {
        const cg_cluster_gpu *g = &gpus[i];
        if (holds(&g->memory, req->memory_units, 0) && holds(&g->compute, req->compute_units, 0))
            out->gpus_large_enough++;
        if (!holds(&g->memory, req->memory_units, 1) || !holds(&g->compute, req->compute_units, 1))
            continue;
        struct candidate c = {i, goodness(g, req, policy)};
        size_t at = ncand++;
        for (; at > 0 && better(&c, &cand[at - 1]); at--)
            cand[at] = cand[at - 1];
        cand[at] = c;
    }
    out->gpus_free_enough = (unsigned)ncand;
    /* req->gpus may exceed any node's GPUs (CG_CLUSTER_MAX_GPUS): large_enough < gpus then. */
    if (ncand < req->gpus) {
        out->status = out->gpus_large_enough >= req->gpus ? CG_FIT_NO_ROOM : CG_FIT_TOO_LARGE;
        return out->status;
    }
    uint64_t sum = 0;
    for (unsigned k = 0; k < req->gpus; k++) {
        out->gpu[k] = cand[k].pos;
        sum += cand[k].good;
    }
    out->ngpus = req->gpus;
    out->score = scale(sum, req->gpus);
    return out->status = CG_FIT_OK;
}

const char *cg_cluster_policy_name(cg_cluster_policy p)
{
    return p == CG_CLUSTER_SPREAD ? "spread" : "binpack";
}

int cg_cluster_policy_parse(const char *s, cg_cluster_policy *out)
{
    if (strcmp(s, "binpack") == 0)
        *out = CG_CLUSTER_BINPACK;
    else if (strcmp(s, "spread") == 0)
        *out = CG_CLUSTER_SPREAD;
    else
        return -1;
    return 0;
}

const char *cg_cluster_fit_reason(cg_fit_status s, unsigned gpus)
{
    switch (s) {
    case CG_FIT_OK: return "fits";
    case CG_FIT_NO_GPU: return "the node has no GPU";
    case CG_FIT_NO_ROOM:
        return gpus > 1 ? "not enough GPUs have that much free" : "no single GPU has that much free";
    case CG_FIT_TOO_LARGE:
        return gpus > 1 ? "not enough of the node's GPUs are that large"
                        : "no GPU of the node is that large";
    case CG_FIT_INVALID: return "the node's GPU description or the request is inconsistent";
    }
    return "unknown";
}

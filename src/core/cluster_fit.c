/* cluster_fit.c — one node, one pod: does a GPU of the node hold the pod's units, which one, and
 * the node's score under binpack or spread (the contract is in cluster_fit.h).
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

/* left (0..PPM) as a score 0..CG_CLUSTER_MAX_SCORE, rounded half up. */
static int scale(uint32_t ppm)
{
    return (int)(((uint64_t)ppm * CG_CLUSTER_MAX_SCORE + PPM / 2) / PPM);
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
    if (req->gpus != 1)
        return out->status = CG_FIT_UNSUPPORTED;
    if (n == 0)
        return out->status = CG_FIT_NO_GPU;

    int large_enough = 0;
    size_t best = n;
    uint32_t best_left = 0;
    for (size_t i = 0; i < n; i++) {
        const cg_cluster_gpu *g = &gpus[i];
        if (holds(&g->memory, req->memory_units, 0) && holds(&g->compute, req->compute_units, 0))
            large_enough = 1;
        if (!holds(&g->memory, req->memory_units, 1) || !holds(&g->compute, req->compute_units, 1))
            continue;
        uint32_t left = left_ppm(g, req);
        /* Strict comparisons: a tie keeps the GPU listed first. */
        if (best == n || (policy == CG_CLUSTER_BINPACK ? left < best_left : left > best_left)) {
            best = i;
            best_left = left;
        }
    }
    if (best == n)
        return out->status = large_enough ? CG_FIT_NO_ROOM : CG_FIT_TOO_LARGE;
    out->ngpus = 1;
    out->gpu[0] = best;
    out->score = policy == CG_CLUSTER_BINPACK ? scale(PPM - best_left) : scale(best_left);
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

const char *cg_cluster_fit_reason(cg_fit_status s)
{
    switch (s) {
    case CG_FIT_OK: return "fits";
    case CG_FIT_NO_GPU: return "the node has no GPU";
    case CG_FIT_NO_ROOM: return "no single GPU has that much free";
    case CG_FIT_TOO_LARGE: return "no GPU of the node is that large";
    case CG_FIT_UNSUPPORTED: return "requests for several GPUs are not supported yet";
    case CG_FIT_INVALID: return "the node's GPU description is inconsistent";
    }
    return "unknown";
}

/* cluster_fit.h — which nodes of a Kubernetes cluster can hold a pod's GPU units, and how good
 * each one is: the decisions of the scheduler extender (src/integrations/k8s/extender), pure.
 *
 * Follow one pod: kube-scheduler asks the extender to filter its candidate nodes and then to
 * rank those left. For each node the extender reads the node's per-GPU free units (the
 * `convgpu.io/gpus` annotation that `convgpu k8s publish` keeps up to date) and the pod's
 * request (convgpu.io/gpu-memory and convgpu.io/gpu-compute units), and calls cg_cluster_fit().
 * The stock scheduler only counts a node's units summed over its GPUs, so it would admit a pod
 * on a node with two half-full GPUs that fits on neither; the device plugin hands a container
 * the units of ONE GPU, or of N distinct GPUs each holding the same amounts, so per-GPU free
 * units are the check that matters.
 *
 * A pod asks for N GPUs (cg_cluster_request.gpus; N > 1 when one container asks for
 * convgpu.io/gpu: N, the extender's pod.h) with the amounts per GPU. The node's annotation
 * carries no topology, so any N GPUs that fit are as good as any other N here: NVLink/PCIe
 * distance is left to the device plugin's GetPreferredAllocation and convgpud on the node.
 *
 * Invariants (tests/core/test_cluster_fit.c checks each, for N = 1 and N > 1):
 *   - fits only if N distinct GPUs each have free >= the per-GPU request in memory AND in
 *     compute; a node that does not fit gets no score and is never kept;
 *   - the chosen GPUs are the best fit: a GPU's goodness is, under binpack, how little it has
 *     left over after the pod (1 - its left-over), under spread how much (its left-over),
 *     scaled by (1 - its pressure penalty) (pressure.h; no pressure published: unscaled, so
 *     binpack takes the N fitting GPUs with the least left over, spread the N with the most);
 *     the N best, ties to the GPU listed first, so the answer depends on the GPUs' order only
 *     through ties; gpu[0..N) lists them best first;
 *   - score in 0..CG_CLUSTER_MAX_SCORE (kube-scheduler's MaxExtenderPriority), integer arithmetic
 *     only, so the same input always gives the same score on every machine. It comes from the
 *     chosen GPUs' mean goodness G (each GPU's in millionths, see cluster_fit.c): round(10 x G),
 *     halves rounded up. Without pressure, G is binpack's 1 - L and spread's L, L the chosen
 *     GPUs' mean left-over; pressure only lowers it, so a pressed node never outscores the
 *     same node unpressed;
 *   - binpack: the less the chosen GPUs have left after the pod (L), the higher the score (a node
 *     whose N chosen GPUs the pod fills exactly scores the maximum); spread: the reverse;
 *   - the reason a node does not fit tells whether freeing units on it could ever help
 *     (NO_ROOM: at least N GPUs are large enough) or not (TOO_LARGE: fewer than N GPUs of the
 *     node have total >= the per-GPU request in both kinds, which includes a node with fewer
 *     than N GPUs and any N > CG_CLUSTER_MAX_GPUS, more than a node may have), which the
 *     extender maps to kube-scheduler's FailedNodes and FailedAndUnresolvableNodes. A node
 *     with no GPU at all is NO_GPU whatever N. */
#ifndef CONVGPU_CORE_CLUSTER_FIT_H
#define CONVGPU_CORE_CLUSTER_FIT_H

#include <stddef.h>
#include <stdint.h>

#include "pressure.h"

#define CG_CLUSTER_MAX_SCORE 10     /* kube-scheduler's extenderv1.MaxExtenderPriority */
#define CG_CLUSTER_MAX_GPUS 64      /* GPUs per node the extender accepts */
#define CG_CLUSTER_MAX_UNITS 1000000u /* a GPU's units of either kind: bounds the arithmetic */

typedef struct {
    uint32_t total, free; /* free <= total <= CG_CLUSTER_MAX_UNITS */
} cg_units;

/* One GPU of a node, as the node's annotation describes it. */
typedef struct {
    unsigned index; /* convgpud's device index (the `gpu<INDEX>-...` device IDs) */
    cg_units memory, compute;
    /* Live state (pressure.h), zero when the node publishes none: a GPU's goodness under the
     * policy is scaled by (1000 - penalty) / 1000 for the pod's need, its memory units x
     * unit_bytes. */
    cg_gpu_pressure pressure;
    uint64_t unit_bytes;
} cg_cluster_gpu;

/* What one pod asks for, per GPU. A request of 0 memory and 0 compute units needs no GPU (and
 * gpus is then not looked at); any other request needs gpus >= 1. */
typedef struct {
    uint32_t memory_units, compute_units;
    unsigned gpus; /* how many distinct GPUs, each holding the amounts above */
} cg_cluster_request;

typedef enum { CG_CLUSTER_BINPACK = 0, CG_CLUSTER_SPREAD } cg_cluster_policy;

typedef enum {
    CG_FIT_OK = 0,
    CG_FIT_NO_GPU,      /* the node has no GPU at all */
    CG_FIT_NO_ROOM,     /* N GPUs are large enough, but fewer than N have that much free now */
    CG_FIT_TOO_LARGE,   /* fewer than N GPUs of the node are that large, however much is freed */
    CG_FIT_INVALID,     /* the GPUs' description breaks its own bounds (free > total, more than
                         * CG_CLUSTER_MAX_GPUS GPUs), or the request asks for units on 0 GPUs */
} cg_fit_status;

typedef struct {
    cg_fit_status status;
    unsigned ngpus;                      /* GPUs chosen: the request's N, 0 when it needs none */
    size_t gpu[CG_CLUSTER_MAX_GPUS];     /* their positions in the array given, best first */
    int score;                           /* 0..CG_CLUSTER_MAX_SCORE when status == CG_FIT_OK */
    /* How many of the node's GPUs have the per-GPU request free now, and how many could ever
     * hold it (total >= request): the numbers behind NO_ROOM and TOO_LARGE, for the reasons
     * the extender gives. Both 0 when the request needs no GPU or the input is invalid. */
    unsigned gpus_free_enough, gpus_large_enough;
} cg_cluster_fit_result;

/* Decides whether the node whose GPUs are gpus[0..n) can hold req, on which GPU(s), and scores
 * it under policy. Returns out->status. */
cg_fit_status cg_cluster_fit(const cg_cluster_gpu *gpus, size_t n, const cg_cluster_request *req,
                             cg_cluster_policy policy, cg_cluster_fit_result *out);

/* "binpack" / "spread"; parse returns -1 for anything else. */
const char *cg_cluster_policy_name(cg_cluster_policy p);
int cg_cluster_policy_parse(const char *s, cg_cluster_policy *out);
/* A short sentence for each status for a request of gpus GPUs ("no single GPU has that much
 * free", "not enough GPUs have that much free", ...). */
const char *cg_cluster_fit_reason(cg_fit_status s, unsigned gpus);

#endif

/* cluster_fit.h — which nodes of a Kubernetes cluster can hold a pod's GPU units, and how good
 * each one is: the decisions of the scheduler extender (src/integrations/k8s/extender), pure.
 *
 * Follow one pod: kube-scheduler asks the extender to filter its candidate nodes and then to
 * rank those left. For each node the extender reads the node's per-GPU free units (the
 * `convgpu.io/gpus` annotation that `convgpu k8s publish` keeps up to date) and the pod's
 * request (convgpu.io/gpu-memory and convgpu.io/gpu-compute units), and calls cg_cluster_fit().
 * The stock scheduler only counts a node's units summed over its GPUs, so it would admit a pod
 * on a node with two half-full GPUs that fits on neither; the device plugin hands a container
 * units of ONE GPU, so this is the check that matters.
 *
 * Invariants (tests/core/test_cluster_fit.c checks each):
 *   - fits only if some GPU has free >= request in memory AND in compute; a node that does not
 *     fit gets no score and is never kept;
 *   - the chosen GPU is the best fit (binpack: least left over; spread: most left over), ties to
 *     the GPU listed first, so the answer depends on the GPUs' order only through ties;
 *   - score in 0..CG_CLUSTER_MAX_SCORE (kube-scheduler's MaxExtenderPriority), integer arithmetic
 *     only, so the same input always gives the same score on every machine;
 *   - binpack: the less the chosen GPU has left after the pod, the higher the score (a node the
 *     pod fills exactly scores the maximum); spread: the reverse;
 *   - the reason a node does not fit tells whether freeing units on it could ever help
 *     (NO_ROOM) or not (TOO_LARGE: no GPU of the node is that large), which the extender maps to
 *     kube-scheduler's FailedNodes and FailedAndUnresolvableNodes.
 *
 * Requests for several GPUs (gpus > 1) have their place in the API (cg_cluster_request.gpus,
 * cg_cluster_fit.gpu[]) but are refused (CG_FIT_UNSUPPORTED) until the device plugin hands out
 * units of several GPUs to one container. */
#ifndef CONVGPU_CORE_CLUSTER_FIT_H
#define CONVGPU_CORE_CLUSTER_FIT_H

#include <stddef.h>
#include <stdint.h>

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
} cg_cluster_gpu;

/* What one pod asks for, per GPU. A request of 0 memory and 0 compute units needs no GPU. */
typedef struct {
    uint32_t memory_units, compute_units;
    unsigned gpus; /* how many GPUs, each holding the amounts above; only 1 for now */
} cg_cluster_request;

typedef enum { CG_CLUSTER_BINPACK = 0, CG_CLUSTER_SPREAD } cg_cluster_policy;

typedef enum {
    CG_FIT_OK = 0,
    CG_FIT_NO_GPU,      /* the node has no GPU at all */
    CG_FIT_NO_ROOM,     /* some GPU is large enough, but none has that much free now */
    CG_FIT_TOO_LARGE,   /* no GPU of the node is that large, however much is freed */
    CG_FIT_UNSUPPORTED, /* gpus != 1 */
    CG_FIT_INVALID,     /* the GPUs' description breaks its own bounds (free > total, ...) */
} cg_fit_status;

typedef struct {
    cg_fit_status status;
    unsigned ngpus;                      /* GPUs chosen (0 when the request needs none) */
    size_t gpu[CG_CLUSTER_MAX_GPUS];     /* their positions in the array given */
    int score;                           /* 0..CG_CLUSTER_MAX_SCORE when status == CG_FIT_OK */
} cg_cluster_fit_result;

/* Decides whether the node whose GPUs are gpus[0..n) can hold req, on which GPU(s), and scores
 * it under policy. Returns out->status. */
cg_fit_status cg_cluster_fit(const cg_cluster_gpu *gpus, size_t n, const cg_cluster_request *req,
                             cg_cluster_policy policy, cg_cluster_fit_result *out);

/* "binpack" / "spread"; parse returns -1 for anything else. */
const char *cg_cluster_policy_name(cg_cluster_policy p);
int cg_cluster_policy_parse(const char *s, cg_cluster_policy *out);
/* A short sentence for each status ("no GPU has that much free", ...). */
const char *cg_cluster_fit_reason(cg_fit_status s);

#endif

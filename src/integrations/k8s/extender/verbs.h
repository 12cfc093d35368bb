/* verbs.h — the extender's answers to kube-scheduler, from decoded requests (args.h); pure: the
 * decisions are the core's (cluster_fit.h), these only shape them into kube-scheduler's types.
 *
 *   filter      ExtenderFilterResult {"Nodes": v1.NodeList of the kept nodes (or "NodeNames"
 *               when the request named them), "FailedNodes": {name: reason},
 *               "FailedAndUnresolvableNodes": {name: reason}, "Error": ""}
 *   prioritize  HostPriorityList [{"Host": name, "Score": 0..10}], in the request's order
 *   bind        ExtenderBindingResult {"Error": "..."}: this extender does not bind (the pod's
 *               GPU is chosen on the node by the device plugin, not here; docs/KUBERNETES.md)
 *
 * A pod that asks for no convgpu units keeps every node and scores 0 everywhere. Scores rank by
 * units scaled down by each GPU's published pressure for this pod (its need, its convgpu.io/app
 * against the node's interference weights: pressure.h); pressure never fails a node. Otherwise a
 * node is kept only when cg_cluster_fit says it fits (N GPUs, N from the pod: pod.h); the
 * others are failed with a reason that names the numbers: unresolvable when preempting pods on
 * the node could not help (no or a bad annotation, fewer than N GPUs that large, only node names
 * given), plain failed otherwise (fewer than N GPUs have it free now). For N = 1 the reason gives
 * the most free on any GPU; for N > 1 how many GPUs have the per-GPU amounts free and how many
 * are that large. A pod the extender cannot read, or whose convgpu.io/gpu breaks pod.h's rule,
 * never gets here: args.c refuses the request (400). */
#ifndef CONVGPU_K8S_EXT_VERBS_H
#define CONVGPU_K8S_EXT_VERBS_H

#include <jansson.h>

#include "args.h"
#include "cluster_fit.h"

json_t *k8s_filter(const struct k8s_args *a, cg_cluster_policy policy);
json_t *k8s_prioritize(const struct k8s_args *a, cg_cluster_policy policy);
json_t *k8s_bind(const struct k8s_binding *b);

#endif

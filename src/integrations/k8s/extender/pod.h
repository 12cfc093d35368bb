/* pod.h — a pod's convgpu units, read from its spec (a v1.Pod as kube-scheduler sends it) the
 * way kube-scheduler itself sums a pod's requests, so that the extender and the scheduler agree
 * on what the pod asks for.
 *
 * Per container, a resource's request is resources.requests[R], else resources.limits[R] (the
 * API server defaults requests to limits for extended resources), else 0. The pod asks for
 *
 *     max( sum over containers + sum over restartable init containers ("sidecars"),
 *          max over init containers of (its own + the sidecars started before it) )
 *
 * for each resource separately (resourcehelper.PodRequests). Quantities are whole numbers
 * (extended resources must be): a JSON integer or a string of digits with an optional decimal
 * (k, M, G, T, P, E) or binary (Ki ... Ei) suffix; sums saturate at UINT32_MAX, which no GPU
 * holds, so an absurd request fails every node instead of wrapping round.
 *
 * Several GPUs: a container that asks for convgpu.io/gpu: N gets N distinct GPUs of one node,
 * each holding M/N memory and C/N compute units, where M and C are its convgpu.io/gpu-memory and
 * convgpu.io/gpu-compute (kubelet counts a pod's units as totals, so they are totals over the N
 * GPUs). The request is then
 *
 *   - no container asks for convgpu.io/gpu of 2 or more: the sums above, on 1 GPU;
 *   - exactly one regular container asks for convgpu.io/gpu: N >= 2 and no other container
 *     (regular, init or sidecar) asks for any convgpu unit: M/N and C/N units on each of N GPUs;
 *   - anything else is refused (the caller answers 400, as for a malformed pod) with a sentence
 *     naming the container and the rule:
 *       * convgpu.io/gpu: 0 (a container on convgpu GPUs asks for 1 or more);
 *       * convgpu.io/gpu without convgpu.io/gpu-memory (memory is required on each GPU);
 *       * M or C not a multiple of N (M must be a positive multiple, C may be 0);
 *       * N >= 2 in an init container (init containers run alone, one GPU's worth);
 *       * two containers with N >= 2, or one beside another container with convgpu units: the
 *         extender has one request per pod, and the units of a container on several GPUs
 *         cannot be summed with another container's into it.
 *     A container with convgpu.io/gpu: 1 (and memory) is an ordinary one-GPU container and is
 *     summed as above. A quantity of 2^32-1 units or more (saturated) is not held to the
 *     multiple-of-N rule: it fits no GPU whatever N, so the pod fails every node as before.
 *   N itself is not bounded here: N larger than any node's GPUs fails every node (TOO_LARGE). */
#ifndef CONVGPU_K8S_EXT_POD_H
#define CONVGPU_K8S_EXT_POD_H

#include <jansson.h>
#include <stdint.h>

#include "cluster_fit.h"

#define K8S_RES_GPU_MEMORY "convgpu.io/gpu-memory"
#define K8S_RES_GPU_COMPUTE "convgpu.io/gpu-compute"
#define K8S_RES_GPU "convgpu.io/gpu" /* how many GPUs one container uses */

/* Fills *req (units per GPU, and how many GPUs) from pod (the ExtenderArgs' Pod). Returns 0, or
 * -1 with err saying which field or container is wrong and why. */
int k8s_pod_request(const json_t *pod, cg_cluster_request *req, char *err, size_t errlen);

/* A resource quantity as a whole number: 0, or -1 when it is not one (negative, fractional,
 * malformed). Values above UINT32_MAX saturate. */
int k8s_quantity_units(const json_t *q, uint32_t *out);

#endif

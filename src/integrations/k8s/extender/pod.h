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
 * holds, so an absurd request fails every node instead of wrapping round. */
#ifndef CONVGPU_K8S_EXT_POD_H
#define CONVGPU_K8S_EXT_POD_H

#include <jansson.h>
#include <stdint.h>

#include "cluster_fit.h"

#define K8S_RES_GPU_MEMORY "convgpu.io/gpu-memory"
#define K8S_RES_GPU_COMPUTE "convgpu.io/gpu-compute"

/* Fills *req from pod (the ExtenderArgs' Pod). Returns 0, or -1 with err saying which field is
 * wrong and why. */
int k8s_pod_request(const json_t *pod, cg_cluster_request *req, char *err, size_t errlen);

/* A resource quantity as a whole number: 0, or -1 when it is not one (negative, fractional,
 * malformed). Values above UINT32_MAX saturate. */
int k8s_quantity_units(const json_t *q, uint32_t *out);

#endif

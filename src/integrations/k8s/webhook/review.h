/* review.h — convgpu-webhook's decision on one AdmissionReview (admission.k8s.io/v1), without
 * I/O (fuzzed: fuzz/fuzz_admission.c).
 *
 * A Pod being created that asks for a convgpu.io/ extended resource (in any container's or init
 * container's limits or requests: the device plugin's convgpu.io/gpu-memory, gpu-compute, gpu)
 * gets, through a JSONPatch, what the device-plugin path needs and its author would otherwise
 * write by hand: spec.runtimeClassName = the configured RuntimeClass (convgpu: the shim that
 * claims the device plugin's allocation) and, when the site names one, spec.schedulerName (the
 * scheduler that runs convgpu's extender), unless the pod already names a scheduler other than
 * the default. Everything else is allowed unchanged: other kinds and operations, pods without
 * convgpu resources, and pods whose GPUs come through DRA claims (resourceClaims): there the
 * claim's CDI device carries everything and kube-scheduler's own DRA plugin allocates, so nothing
 * needs to be added. The webhook never refuses a pod: it only adds; a review it cannot read is
 * answered HTTP 400, and the API server then applies the configuration's failurePolicy (Ignore:
 * fail open; Fail: fail closed). */
#ifndef CONVGPU_K8S_WEBHOOK_REVIEW_H
#define CONVGPU_K8S_WEBHOOK_REVIEW_H

#include <stddef.h>

#define CGW_RESOURCE_PREFIX "convgpu.io/"

struct cgw_config {
    const char *runtime_class;  /* "convgpu" */
    const char *scheduler_name; /* NULL or "": leave spec.schedulerName alone */
};

/* Decides on one AdmissionReview (body, len bytes). Returns 0 with *answer a malloc'd
 * AdmissionReview response (the request's uid, allowed, and a base64 JSONPatch when something is
 * added), or -1 with err saying what is wrong with the review. *patched (may be NULL) says
 * whether a patch was added. */
int cgw_review(const char *body, size_t len, const struct cgw_config *cfg, char **answer,
               int *patched, char *err, size_t errlen);

/* Standard base64 (RFC 4648, with padding) of n bytes: malloc'd text, NULL when out of memory. */
char *cgw_base64(const unsigned char *data, size_t n);

#endif

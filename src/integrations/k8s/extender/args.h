/* args.h — kube-scheduler's extender requests decoded: ExtenderArgs (the body of filter and
 * prioritize) and ExtenderBindingArgs (bind). No I/O, so the decoder is fuzzed directly
 * (fuzz/fuzz_k8s_extender.c).
 *
 * The shapes are kube-scheduler's (k8s.io/kube-scheduler/extender/v1): Go field names without
 * JSON tags, so the keys are "Pod", "Nodes", "NodeNames"; Go's decoder matches keys regardless of
 * case, and so does this one for these top-level fields. Pod and the items of Nodes are the API
 * server's v1.Pod and v1.NodeList, with their own lower-case keys.
 *
 *   ExtenderArgs        {"Pod": v1.Pod, "Nodes": v1.NodeList | null, "NodeNames": [..] | null}
 *   ExtenderBindingArgs {"PodName", "PodNamespace", "PodUID", "Node"}
 *
 * The pod's metadata.annotations["convgpu.io/app"] (optional) names its application for the
 * interference weighing (K8S_APP_ANNOTATION): a valid profile key, else the request is refused.
 *
 * Everything that makes a request unusable (not JSON, not an object, a missing Pod, neither
 * Nodes nor NodeNames, a node without a name, a wrong type anywhere the extender reads) is an
 * error: the caller answers 400 with err and decides nothing. What only makes a NODE unusable
 * (no annotation, a malformed one) is not an error here: the node is failed with its reason. */
#ifndef CONVGPU_K8S_EXT_ARGS_H
#define CONVGPU_K8S_EXT_ARGS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cluster_fit.h"

#define K8S_NODE_NAME_MAX 253
#define K8S_APP_ANNOTATION "convgpu.io/app" /* a DNS subdomain, as the API server requires of Node names */

struct k8s_node {
    const char *name;   /* borrowed from k8s_args.root */
    json_t *object;     /* the whole v1.Node (borrowed); NULL when the request gave NodeNames */
    const char *gpus;   /* the convgpu.io/gpus annotation, NULL when the node has none */
    size_t gpus_len;
};

struct k8s_args {
    json_t *root;              /* owns everything borrowed above */
    cg_cluster_request req;    /* what the pod asks for */
    /* The pod's application (its convgpu.io/app annotation, a profile key: what seed 003's
     * matrix names), NULL when it has none; borrowed from root. */
    const char *app;
    /* The extender's clock, Unix seconds, for how long a GPU's containers have waited
     * (pressure.h); the server sets it after decoding, 0 (the decoder's) counts no wait. */
    int64_t now;
    bool by_name;              /* the nodes came as NodeNames (nodeCacheCapable: true) */
    json_t *node_list;         /* the request's Nodes (borrowed), when !by_name */
    struct k8s_node *nodes;
    size_t nnodes;
};

struct k8s_binding {
    json_t *root;
    const char *pod_name, *pod_namespace, *pod_uid, *node;
};

/* Decode body (len bytes). Return 0, or -1 with err saying what is wrong (nothing to free). */
int k8s_args_decode(const char *body, size_t len, struct k8s_args *out, char *err, size_t errlen);
void k8s_args_free(struct k8s_args *a);
int k8s_binding_decode(const char *body, size_t len, struct k8s_binding *out, char *err,
                       size_t errlen);
void k8s_binding_free(struct k8s_binding *b);

#endif

/* fuzz_k8s_extender.c — libFuzzer harness for the scheduler extender's decoders of
 * kube-scheduler's requests (src/integrations/k8s/extender/args.c, pod.c, node_gpus.c) and the
 * answers built from them (verbs.c). The first byte picks the verb. A request is either refused
 * with a message (the server's 400) or decoded; then filter must account for every node exactly
 * once (kept, failed or unresolvable), never keep a node whose annotation does not fit the pod,
 * and prioritize must score every node within 0..10. */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "verbs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_filter(const struct k8s_args *a, json_t *ans)
{
    if (!ans)
        return; /* out of memory */
    json_t *kept = a->by_name ? json_object_get(ans, "NodeNames")
                              : json_object_get(json_object_get(ans, "Nodes"), "items");
    json_t *failed = json_object_get(ans, "FailedNodes");
    json_t *unres = json_object_get(ans, "FailedAndUnresolvableNodes");
    if (!json_is_array(kept) || !json_is_object(failed) || !json_is_object(unres))
        abort();
    /* Names may repeat in a request; the maps hold each once, so count at most. */
    if (json_array_size(kept) + json_object_size(failed) + json_object_size(unres) > a->nnodes)
        abort();
    int wants = a->req.memory_units || a->req.compute_units;
    if (wants && a->by_name && json_array_size(kept) != 0)
        abort(); /* without annotations nothing can be shown to fit */
    for (size_t i = 0; i < a->nnodes; i++) {
        const char *n = a->nodes[i].name;
        if (json_object_get(failed, n) && !json_is_string(json_object_get(failed, n)))
            abort();
        if (wants && !a->nodes[i].gpus && !json_object_get(unres, n))
            abort(); /* a node without the annotation is never kept */
    }
    json_decref(ans);
}

static void check_prioritize(const struct k8s_args *a, json_t *ans)
{
    if (!ans)
        return;
    if (!json_is_array(ans) || json_array_size(ans) != a->nnodes)
        abort();
    size_t i;
    json_t *h;
    json_array_foreach(ans, i, h) {
        json_int_t s = json_integer_value(json_object_get(h, "Score"));
        if (!json_is_string(json_object_get(h, "Host")) || s < 0 || s > CG_CLUSTER_MAX_SCORE)
            abort();
    }
    json_decref(ans);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    char err[512] = "";
    const char *body = (const char *)data + 1;
    size_t len = size - 1;
    if (data[0] % 3 == 2) {
        struct k8s_binding b;
        if (k8s_binding_decode(body, len, &b, err, sizeof err) != 0) {
            if (!err[0])
                abort();
            return 0;
        }
        if (!b.pod_name[0] || !b.node[0])
            abort();
        json_decref(k8s_bind(&b));
        k8s_binding_free(&b);
        return 0;
    }
    struct k8s_args a;
    if (k8s_args_decode(body, len, &a, err, sizeof err) != 0) {
        if (!err[0] || a.root || a.nodes)
            abort();
        return 0;
    }
    cg_cluster_policy p = data[0] & 4 ? CG_CLUSTER_SPREAD : CG_CLUSTER_BINPACK;
    if (data[0] % 3 == 0)
        check_filter(&a, k8s_filter(&a, p));
    else
        check_prioritize(&a, k8s_prioritize(&a, p));
    k8s_args_free(&a);
    return 0;
}

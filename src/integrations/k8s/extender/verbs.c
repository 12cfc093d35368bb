/* verbs.c — filter, prioritize and bind answers (the contract is in verbs.h). */
#include "verbs.h"

#include <stdio.h>
#include <string.h>

#include "node_gpus.h"

struct verdict {
    cg_cluster_fit_result fit; /* fit.status == CG_FIT_OK: kept */
    int unresolvable;
    char reason[320];
};

static void judge(const struct k8s_node *n, const struct k8s_args *a, cg_cluster_policy policy,
                  struct verdict *v)
{
    cg_cluster_gpu gpus[CG_CLUSTER_MAX_GPUS];
    size_t ngpus = 0;
    char err[200];
    memset(v, 0, sizeof *v);
    v->fit.status = CG_FIT_INVALID;
    v->unresolvable = 1;
    if (a->by_name) {
        snprintf(v->reason, sizeof v->reason,
                 "convgpu: the extender needs whole Node objects to read %s; configure it with "
                 "nodeCacheCapable: false",
                 K8S_GPUS_ANNOTATION);
        return;
    }
    if (!n->gpus) {
        snprintf(v->reason, sizeof v->reason, "convgpu: the node has no %s annotation (is "
                 "`convgpu k8s publish` running on it?)", K8S_GPUS_ANNOTATION);
        return;
    }
    if (k8s_node_gpus_decode(n->gpus, n->gpus_len, a->app, a->now, gpus, &ngpus, err,
                             sizeof err) != 0) {
        snprintf(v->reason, sizeof v->reason, "convgpu: malformed %s: %s", K8S_GPUS_ANNOTATION,
                 err);
        return;
    }
    cg_cluster_fit(gpus, ngpus, &a->req, policy, &v->fit);
    if (v->fit.status == CG_FIT_OK) {
        v->unresolvable = 0;
        return;
    }
    v->unresolvable = v->fit.status != CG_FIT_NO_ROOM;
    if (a->req.gpus > 1) {
        /* The most free on one GPU says little when N GPUs are needed: say how many hold the
         * per-GPU amounts now, and how many ever could. */
        snprintf(v->reason, sizeof v->reason,
                 "convgpu: %s: the pod asks %u GPUs for %u memory and %u compute units each; of "
                 "the node's %zu GPU(s), %u %s that much free and %u %s that large",
                 cg_cluster_fit_reason(v->fit.status, a->req.gpus), a->req.gpus,
                 a->req.memory_units, a->req.compute_units, ngpus, v->fit.gpus_free_enough,
                 v->fit.gpus_free_enough == 1 ? "has" : "have", v->fit.gpus_large_enough,
                 v->fit.gpus_large_enough == 1 ? "is" : "are");
        return;
    }
    uint32_t most_mem = 0, most_cmp = 0;
    for (size_t i = 0; i < ngpus; i++) {
        if (gpus[i].memory.free > most_mem)
            most_mem = gpus[i].memory.free;
        if (gpus[i].compute.free > most_cmp)
            most_cmp = gpus[i].compute.free;
    }
    snprintf(v->reason, sizeof v->reason,
             "convgpu: %s: the pod asks one GPU for %u memory and %u compute units; the most "
             "free on any of the node's %zu GPU(s): %u memory, %u compute",
             cg_cluster_fit_reason(v->fit.status, a->req.gpus), a->req.memory_units,
             a->req.compute_units, ngpus, most_mem, most_cmp);
}

static int wants_gpu(const struct k8s_args *a)
{
    return a->req.memory_units || a->req.compute_units;
}

json_t *k8s_filter(const struct k8s_args *a, cg_cluster_policy policy)
{
    json_t *kept = json_array(), *failed = json_object(), *unresolvable = json_object();
    json_t *res = json_object();
    if (!kept || !failed || !unresolvable || !res)
        goto oom;
    for (size_t i = 0; i < a->nnodes; i++) {
        const struct k8s_node *n = &a->nodes[i];
        struct verdict v;
        if (wants_gpu(a)) {
            judge(n, a, policy, &v);
        } else {
            memset(&v, 0, sizeof v); /* no GPU asked for: every node is kept */
        }
        int rc;
        if (v.fit.status == CG_FIT_OK)
            rc = json_array_append_new(kept, a->by_name ? json_string(n->name)
                                                         : json_incref(n->object));
        else
            rc = json_object_set_new(v.unresolvable ? unresolvable : failed, n->name,
                                     json_string(v.reason));
        if (rc != 0)
            goto oom;
    }
    if (a->by_name) {
        json_object_set_new(res, "Nodes", json_null());
        json_object_set_new(res, "NodeNames", kept);
    } else {
        /* The NodeList as it came (kind, apiVersion, metadata), with only the kept items. */
        json_t *list = json_copy(a->node_list);
        if (!list || json_object_set_new(list, "items", kept) != 0) {
            json_decref(list);
            kept = NULL;
            goto oom;
        }
        json_object_set_new(res, "Nodes", list);
        json_object_set_new(res, "NodeNames", json_null());
    }
    kept = NULL;
    json_object_set_new(res, "FailedNodes", failed);
    json_object_set_new(res, "FailedAndUnresolvableNodes", unresolvable);
    json_object_set_new(res, "Error", json_string(""));
    return res;
oom:
    json_decref(kept);
    json_decref(failed);
    json_decref(unresolvable);
    json_decref(res);
    return NULL;
}

json_t *k8s_prioritize(const struct k8s_args *a, cg_cluster_policy policy)
{
    json_t *list = json_array();
    if (!list)
        return NULL;
    for (size_t i = 0; i < a->nnodes; i++) {
        struct verdict v = {.fit = {.score = 0}};
        if (wants_gpu(a))
            judge(&a->nodes[i], a, policy, &v);
        int score = v.fit.status == CG_FIT_OK ? v.fit.score : 0;
        if (json_array_append_new(list, json_pack("{s:s,s:i}", "Host", a->nodes[i].name,
                                                  "Score", score)) != 0) {
            json_decref(list);
            return NULL;
        }
    }
    return list;
}

json_t *k8s_bind(const struct k8s_binding *b)
{
    char msg[512];
    snprintf(msg, sizeof msg,
             "convgpu-scheduler-extender does not bind pods (asked to bind %s/%s to %s): "
             "configure it without bindVerb so that kube-scheduler binds; the GPU is chosen "
             "on the node by the device plugin",
             b->pod_namespace, b->pod_name, b->node);
    return json_pack("{s:s}", "Error", msg);
}

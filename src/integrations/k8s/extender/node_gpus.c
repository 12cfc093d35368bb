/* node_gpus.c — decoding a node's `convgpu.io/gpus` annotation (the format is in node_gpus.h). */
#include "node_gpus.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

static int units(const json_t *gpu, size_t i, const char *key, cg_units *u, char *err,
                 size_t errlen)
{
    const json_t *o = json_object_get(gpu, key);
    const json_t *t = json_object_get(o, "total"), *f = json_object_get(o, "free");
    if (!json_is_object(o) || !json_is_integer(t) || !json_is_integer(f)) {
        snprintf(err, errlen, "GPU %zu: %s must be {\"total\": N, \"free\": N}", i, key);
        return -1;
    }
    json_int_t total = json_integer_value(t), free = json_integer_value(f);
    if (total < 0 || total > CG_CLUSTER_MAX_UNITS || free < 0 || free > total) {
        snprintf(err, errlen, "GPU %zu: %s {total %lld, free %lld} is out of bounds "
                              "(0 <= free <= total <= %u)",
                 i, key, (long long)total, (long long)free, CG_CLUSTER_MAX_UNITS);
        return -1;
    }
    /* "max" (optional): the most one container may take of the GPU, its physical memory,
     * where the node promises more than it has (convgpud --oversubscribe): a pod's units on
     * one GPU fit only within it, so the free units it may count on are at most that. */
    const json_t *m = json_object_get(o, "max");
    if (m && (!json_is_integer(m) || json_integer_value(m) < 0 ||
              json_integer_value(m) > total)) {
        snprintf(err, errlen, "GPU %zu: %s max must be an integer from 0 to its total", i, key);
        return -1;
    }
    if (m && json_integer_value(m) < free)
        free = json_integer_value(m);
    u->total = (uint32_t)total;
    u->free = (uint32_t)free;
    return 0;
}

int k8s_node_gpus_decode(const char *text, size_t len, cg_cluster_gpu gpus[CG_CLUSTER_MAX_GPUS],
                         size_t *n, char *err, size_t errlen)
{
    *n = 0;
    if (len > K8S_GPUS_MAX_BYTES) {
        snprintf(err, errlen, "annotation %s is longer than %d bytes", K8S_GPUS_ANNOTATION,
                 K8S_GPUS_MAX_BYTES);
        return -1;
    }
    json_error_t jerr;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!root) {
        snprintf(err, errlen, "annotation %s is not JSON: %s", K8S_GPUS_ANNOTATION, jerr.text);
        return -1;
    }
    int rc = -1;
    if (!json_is_array(root)) {
        snprintf(err, errlen, "annotation %s is not a JSON array", K8S_GPUS_ANNOTATION);
        goto out;
    }
    if (json_array_size(root) > CG_CLUSTER_MAX_GPUS) {
        snprintf(err, errlen, "annotation %s lists %zu GPUs (at most %d)", K8S_GPUS_ANNOTATION,
                 json_array_size(root), CG_CLUSTER_MAX_GPUS);
        goto out;
    }
    size_t i;
    const json_t *g;
    json_array_foreach(root, i, g) {
        const json_t *index = json_object_get(g, "index"), *ub = json_object_get(g, "unit_bytes");
        if (!json_is_object(g)) {
            snprintf(err, errlen, "GPU %zu is not an object", i);
            goto out;
        }
        if (!json_is_integer(index) || json_integer_value(index) < 0 ||
            json_integer_value(index) > 1023) {
            snprintf(err, errlen, "GPU %zu: index must be an integer 0..1023", i);
            goto out;
        }
        if (!json_is_string(json_object_get(g, "uuid"))) {
            snprintf(err, errlen, "GPU %zu: uuid must be a string", i);
            goto out;
        }
        if (!json_is_integer(ub) || json_integer_value(ub) <= 0) {
            snprintf(err, errlen, "GPU %zu: unit_bytes must be a positive integer", i);
            goto out;
        }
        cg_cluster_gpu *d = &gpus[i];
        d->index = (unsigned)json_integer_value(index);
        for (size_t k = 0; k < i; k++)
            if (gpus[k].index == d->index) {
                snprintf(err, errlen, "GPU %zu: index %u is listed twice", i, d->index);
                goto out;
            }
        if (units(g, i, "memory_units", &d->memory, err, errlen) != 0 ||
            units(g, i, "compute_units", &d->compute, err, errlen) != 0)
            goto out;
    }
    *n = json_array_size(root);
    rc = 0;
out:
    json_decref(root);
    return rc;
}

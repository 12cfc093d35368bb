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

/* An optional integer field of o within lo..hi, into *out (left as is when absent). */
static int bounded(const json_t *o, const char *key, json_int_t lo, json_int_t hi, uint64_t *out)
{
    const json_t *v = json_object_get(o, key);
    if (!v)
        return 0;
    if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi)
        return -1;
    *out = (uint64_t)json_integer_value(v);
    return 0;
}

#define APPS_MAX 64

/* "pressure" and "apps" (node_gpus.h) into the GPU's cg_gpu_pressure for this pod. */
static int pressure(const json_t *gpu, size_t i, const char *app, int64_t now, cg_cluster_gpu *d,
                    char *err, size_t errlen)
{
    const json_t *p = json_object_get(gpu, "pressure"), *apps = json_object_get(gpu, "apps");
    cg_gpu_pressure *x = &d->pressure;
    if (apps) {
        if (!json_is_object(apps) || json_object_size(apps) > APPS_MAX) {
            snprintf(err, errlen, "GPU %zu: apps must be an object of at most %d keys", i,
                     APPS_MAX);
            return -1;
        }
        const char *key;
        const json_t *v;
        json_object_foreach((json_t *)apps, key, v) {
            if (!json_is_number(v) || !(json_number_value(v) > 0) ||
                !(json_number_value(v) < 1000)) {
                snprintf(err, errlen, "GPU %zu: apps' slowdowns must be numbers above 0 and "
                                      "below 1000", i);
                return -1;
            }
        }
    }
    if (!p)
        return 0;
    uint64_t cap = 0, free_b = 0, waiting = 0, since = 0, swap = 0, load = 0;
    if (!json_is_object(p) || bounded(p, "capacity", 0, INT64_MAX, &cap) != 0 ||
        bounded(p, "free", 0, INT64_MAX, &free_b) != 0 || free_b > cap ||
        bounded(p, "waiting", 0, 100000, &waiting) != 0 ||
        bounded(p, "waiting_since", 0, INT64_MAX, &since) != 0 ||
        bounded(p, "swap_left", 0, INT64_MAX, &swap) != 0 ||
        bounded(p, "compute_load_pct", 0, 100, &load) != 0) {
        snprintf(err, errlen, "GPU %zu: pressure must be {\"capacity\", \"free\" <= capacity, "
                              "\"waiting\" <= 100000, \"waiting_since\", \"swap_left\", "
                              "\"compute_load_pct\" <= 100}, integers from 0", i);
        return -1;
    }
    x->known = true;
    x->capacity_bytes = cap;
    x->free_bytes = free_b;
    x->waiting = (unsigned)waiting;
    x->waited_s = waiting && since > 0 && now > (int64_t)since ? (uint64_t)(now - (int64_t)since)
                                                               : 0;
    x->swap_left_bytes = swap;
    x->compute_load_pct = (unsigned)load;
    const json_t *s = app && apps ? json_object_get(apps, app) : NULL;
    x->slowdown_milli = s ? (uint32_t)(json_number_value(s) * 1000.0 + 0.5) : 0;
    return 0;
}

int k8s_node_gpus_decode(const char *text, size_t len, const char *app, int64_t now,
                         cg_cluster_gpu gpus[CG_CLUSTER_MAX_GPUS], size_t *n, char *err,
                         size_t errlen)
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
        *d = (cg_cluster_gpu){.index = (unsigned)json_integer_value(index),
                              .unit_bytes = (uint64_t)json_integer_value(ub)};
        for (size_t k = 0; k < i; k++)
            if (gpus[k].index == d->index) {
                snprintf(err, errlen, "GPU %zu: index %u is listed twice", i, d->index);
                goto out;
            }
        if (units(g, i, "memory_units", &d->memory, err, errlen) != 0 ||
            units(g, i, "compute_units", &d->compute, err, errlen) != 0 ||
            pressure(g, i, app, now, d, err, errlen) != 0)
            goto out;
    }
    *n = json_array_size(root);
    rc = 0;
out:
    json_decref(root);
    return rc;
}

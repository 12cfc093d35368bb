/* annotation.c — the `convgpu.io/gpus` annotation from convgpud's devices and containers (the
 * arithmetic is in annotation.h). */
#include "annotation.h"

#include <stdio.h>

#define MAX_GPUS 64

static int get_uint(const json_t *o, const char *key, uint64_t *out)
{
    const json_t *v = json_object_get(o, key);
    if (!json_is_integer(v) || json_integer_value(v) < 0)
        return -1;
    *out = (uint64_t)json_integer_value(v);
    return 0;
}

json_t *k8s_annotation_build(const json_t *devices, const json_t *containers,
                             uint64_t unit_bytes, char *err, size_t errlen)
{
    if (unit_bytes == 0) {
        snprintf(err, errlen, "the memory unit is 0 bytes");
        return NULL;
    }
    if (!json_is_array(devices) || !json_is_array(containers)) {
        snprintf(err, errlen, "the daemon's devices or containers are not a list");
        return NULL;
    }
    size_t n = json_array_size(devices);
    if (n > MAX_GPUS) {
        snprintf(err, errlen, "the daemon lists %zu devices (at most %d)", n, MAX_GPUS);
        return NULL;
    }
    uint64_t capacity[MAX_GPUS], promised[MAX_GPUS], limits[MAX_GPUS] = {0},
        shares[MAX_GPUS] = {0};
    unsigned index[MAX_GPUS];
    for (size_t i = 0; i < n; i++) {
        const json_t *d = json_array_get(devices, i);
        uint64_t idx;
        if (get_uint(d, "index", &idx) != 0 || idx > 1023 ||
            get_uint(d, "capacity", &capacity[i]) != 0 ||
            !json_is_string(json_object_get(d, "uuid"))) {
            snprintf(err, errlen, "device %zu in the daemon's answer has no index, capacity or "
                                  "uuid", i);
            return NULL;
        }
        /* What the GPU promises (convgpud --oversubscribe; a daemon before it: capacity). */
        promised[i] = capacity[i];
        if (json_object_get(d, "promised") &&
            (get_uint(d, "promised", &promised[i]) != 0 || promised[i] < capacity[i])) {
            snprintf(err, errlen, "device %zu in the daemon's answer promises less than its "
                                  "capacity", i);
            return NULL;
        }
        index[i] = (unsigned)idx;
    }
    size_t k;
    const json_t *c;
    json_array_foreach(containers, k, c) {
        uint64_t dev, limit, share = 0;
        const json_t *pct = json_object_get(c, "gpu_compute");
        if (get_uint(c, "device", &dev) != 0 || get_uint(c, "limit", &limit) != 0 ||
            !(json_is_null(pct) || !pct || get_uint(c, "gpu_compute", &share) == 0)) {
            snprintf(err, errlen, "container %zu in the daemon's answer has no device or limit",
                     k);
            return NULL;
        }
        for (size_t i = 0; i < n; i++)
            if (index[i] == dev) {
                limits[i] = limits[i] + limit < limits[i] ? UINT64_MAX : limits[i] + limit;
                shares[i] += share > 100 ? 100 : share;
            }
    }
    json_t *out = json_array();
    for (size_t i = 0; out && i < n; i++) {
        const json_t *d = json_array_get(devices, i);
        /* Units of what the GPU promises, limits taken off; "max": its physical memory, the
         * most one container may take of it. */
        uint64_t free_bytes = limits[i] >= promised[i] ? 0 : promised[i] - limits[i];
        json_t *g = json_pack("{s:I,s:O,s:{s:I,s:I,s:I},s:{s:i,s:I},s:I}", "index",
                              (json_int_t)index[i], "uuid", json_object_get(d, "uuid"),
                              "memory_units", "total", (json_int_t)(promised[i] / unit_bytes),
                              "free", (json_int_t)(free_bytes / unit_bytes), "max",
                              (json_int_t)(capacity[i] / unit_bytes), "compute_units",
                              "total", 100, "free",
                              (json_int_t)(shares[i] >= 100 ? 0 : 100 - shares[i]), "unit_bytes",
                              (json_int_t)unit_bytes);
        if (json_array_append_new(out, g) != 0) {
            json_decref(out);
            out = NULL;
        }
    }
    if (!out)
        snprintf(err, errlen, "out of memory");
    return out;
}

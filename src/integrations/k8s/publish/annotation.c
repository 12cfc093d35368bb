/* annotation.c — the `convgpu.io/gpus` annotation from convgpud's devices and containers (the
 * arithmetic is in annotation.h). */
#include "annotation.h"

#include <stdio.h>
#include <string.h>

#define MAX_GPUS 64

static int get_uint(const json_t *o, const char *key, uint64_t *out)
{
    const json_t *v = json_object_get(o, key);
    if (!json_is_integer(v) || json_integer_value(v) < 0)
        return -1;
    *out = (uint64_t)json_integer_value(v);
    return 0;
}

/* The stored slowdown of fg beside bg (rows: /v1/interference's; the worst over tenants), or 0
 * when no row pairs them. */
static double slowdown_of(const json_t *rows, const char *fg, const char *bg)
{
    double worst = 0;
    size_t i;
    const json_t *r;
    json_array_foreach(rows, i, r) {
        const char *f = json_string_value(json_object_get(r, "foreground")),
                   *b = json_string_value(json_object_get(r, "background"));
        const json_t *s = json_object_get(r, "slowdown");
        if (f && b && json_is_number(s) && strcmp(f, fg) == 0 && strcmp(b, bg) == 0 &&
            json_number_value(s) > worst)
            worst = json_number_value(s);
    }
    return worst;
}

/* Whether key names one of the GPU's containers (index dev). */
static int resident(const json_t *containers, uint64_t dev, const char *key)
{
    size_t k;
    const json_t *c;
    json_array_foreach(containers, k, c) {
        const char *pk = json_string_value(json_object_get(c, "profile_key"));
        const json_t *d = json_object_get(c, "device");
        if (pk && pk[0] && json_is_integer(d) && (uint64_t)json_integer_value(d) == dev &&
            strcmp(pk, key) == 0)
            return 1;
    }
    return 0;
}

/* "apps" for GPU dev (annotation.h): each key the matrix names, with its worst slowdown beside
 * a resident, either way round; at most K8S_APPS_MAX, the worst kept. */
static json_t *apps_of(const json_t *rows, const json_t *containers, uint64_t dev)
{
    json_t *apps = json_object();
    if (!apps || !json_is_array(rows))
        return apps;
    size_t i;
    const json_t *r;
    json_array_foreach(rows, i, r) {
        const char *f = json_string_value(json_object_get(r, "foreground")),
                   *b = json_string_value(json_object_get(r, "background"));
        if (!f || !b)
            continue;
        /* Row (f, b): f joining a GPU where b runs is slowed; b joining where f runs slows f. */
        const char *joiner[2] = {f, b}, *present[2] = {b, f};
        for (int w = 0; w < 2; w++) {
            if (!resident(containers, dev, present[w]))
                continue;
            double s = slowdown_of(rows, f, b);
            json_t *old = json_object_get(apps, joiner[w]);
            if (!old || json_real_value(old) < s)
                json_object_set_new(apps, joiner[w], json_real(s));
        }
    }
    while (json_object_size(apps) > K8S_APPS_MAX) { /* drop the mildest */
        const char *key, *mild = NULL;
        json_t *v;
        double least = 0;
        json_object_foreach(apps, key, v)
            if (!mild || json_real_value(v) < least) {
                mild = key;
                least = json_real_value(v);
            }
        json_object_del(apps, mild);
    }
    return apps;
}

/* "pressure" for GPU dev (annotation.h). */
static json_t *pressure_of(const json_t *device, const json_t *containers, uint64_t dev,
                           uint64_t capacity, double now)
{
    uint64_t free_bytes = 0, swap_left = 0;
    get_uint(device, "free", &free_bytes);
    get_uint(device, "swap_budget_left", &swap_left);
    const json_t *util = json_object_get(device, "compute_utilization");
    double u = json_is_number(util) ? json_number_value(util) : 0;
    int load = u > 0 ? (int)(u * 10.0 + 0.5) * 10 : 0;
    if (load > 100)
        load = 100;
    unsigned waiting = 0;
    double longest = 0;
    size_t k;
    const json_t *c;
    json_array_foreach(containers, k, c) {
        uint64_t d, pending = 0;
        if (get_uint(c, "device", &d) != 0 || d != dev)
            continue;
        const char *state = json_string_value(json_object_get(c, "state"));
        get_uint(c, "pending", &pending);
        if (!state || !(strcmp(state, "suspended") == 0 ||
                        (strcmp(state, "swapped") == 0 && pending > 0)))
            continue;
        waiting++;
        const json_t *f = json_object_get(c, "suspended_for_s");
        if (json_is_number(f) && json_number_value(f) > longest)
            longest = json_number_value(f);
    }
    double since = waiting && now > longest ? (double)(int64_t)(now - longest + 0.5) : 0;
    return json_pack("{s:I,s:I,s:i,s:I,s:I,s:i}", "capacity", (json_int_t)capacity, "free",
                     (json_int_t)(free_bytes < capacity ? free_bytes : capacity), "waiting",
                     (int)waiting, "waiting_since", (json_int_t)since, "swap_left",
                     (json_int_t)swap_left, "compute_load_pct", load);
}

json_t *k8s_annotation_build(const json_t *devices, const json_t *containers,
                             const json_t *interference, double now, uint64_t unit_bytes,
                             char *err, size_t errlen)
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
        if (g) {
            json_object_set_new(g, "pressure",
                                pressure_of(d, containers, index[i], capacity[i], now));
            json_object_set_new(g, "apps", apps_of(interference, containers, index[i]));
        }
        if (g && (!json_object_get(g, "pressure") || !json_object_get(g, "apps"))) {
            json_decref(g);
            g = NULL;
        }
        if (!g || json_array_append_new(out, g) != 0) {
            json_decref(out);
            out = NULL;
        }
    }
    if (!out)
        snprintf(err, errlen, "out of memory");
    return out;
}

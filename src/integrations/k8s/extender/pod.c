/* pod.c — a pod's convgpu units from its spec: how many GPUs and how many units on each (the
 * rule is in pod.h). */
#include "pod.h"

#include <stdio.h>
#include <string.h>

static uint32_t sat_add(uint32_t a, uint32_t b)
{
    return a > UINT32_MAX - b ? UINT32_MAX : a + b;
}

static uint32_t sat_mul(uint64_t a, uint64_t b)
{
    return b && a > UINT32_MAX / b ? UINT32_MAX : (uint32_t)(a * b);
}

int k8s_quantity_units(const json_t *q, uint32_t *out)
{
    if (json_is_integer(q)) {
        json_int_t v = json_integer_value(q);
        if (v < 0)
            return -1;
        *out = (uint64_t)v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
        return 0;
    }
    if (!json_is_string(q))
        return -1;
    const char *s = json_string_value(q);
    size_t n = json_string_length(q), i = 0;
    uint64_t v = 0;
    while (i < n && s[i] >= '0' && s[i] <= '9') {
        v = v > UINT32_MAX ? v : v * 10 + (uint64_t)(s[i] - '0');
        i++;
    }
    if (i == 0)
        return -1;
    static const struct {
        const char *suffix;
        uint64_t factor;
    } suffixes[] = {
        {"", 1},
        {"k", 1000ull}, {"M", 1000000ull}, {"G", 1000000000ull}, {"T", 1000000000000ull},
        {"P", 1000000000000000ull}, {"E", 1000000000000000000ull},
        {"Ki", 1ull << 10}, {"Mi", 1ull << 20}, {"Gi", 1ull << 30}, {"Ti", 1ull << 40},
        {"Pi", 1ull << 50}, {"Ei", 1ull << 60},
    };
    for (size_t k = 0; k < sizeof suffixes / sizeof suffixes[0]; k++)
        if (n - i == strlen(suffixes[k].suffix) && memcmp(s + i, suffixes[k].suffix, n - i) == 0) {
            *out = sat_mul(v, suffixes[k].factor);
            return 0;
        }
    return -1;
}

/* One resource of one container: requests[R], else limits[R], else 0; *present says whether
 * either list names R (convgpu.io/gpu: 0 is not the same as no convgpu.io/gpu). */
static int container_units(const json_t *c, const char *where, size_t idx, const char *res,
                           uint32_t *out, int *present, char *err, size_t errlen)
{
    *out = 0;
    *present = 0;
    const json_t *resources = json_object_get(c, "resources");
    if (!resources || json_is_null(resources))
        return 0;
    if (!json_is_object(resources)) {
        snprintf(err, errlen, "Pod.spec.%s[%zu].resources is not an object", where, idx);
        return -1;
    }
    static const char *const lists[] = {"requests", "limits"};
    for (size_t l = 0; l < 2; l++) {
        const json_t *list = json_object_get(resources, lists[l]);
        if (!list || json_is_null(list))
            continue;
        if (!json_is_object(list)) {
            snprintf(err, errlen, "Pod.spec.%s[%zu].resources.%s is not an object", where, idx,
                     lists[l]);
            return -1;
        }
        const json_t *q = json_object_get(list, res);
        if (!q)
            continue;
        if (k8s_quantity_units(q, out) != 0) {
            snprintf(err, errlen, "Pod.spec.%s[%zu].resources.%s[\"%s\"] is not a whole number "
                                  "of units",
                     where, idx, lists[l], res);
            return -1;
        }
        *present = 1;
        return 0;
    }
    return 0;
}

/* One container's convgpu request, as it wrote it: totals over its GPUs. */
struct units {
    uint32_t v[2];  /* memory, compute */
    uint32_t gpus;  /* convgpu.io/gpu, 1 when absent */
};

static const char *const resources[2] = {K8S_RES_GPU_MEMORY, K8S_RES_GPU_COMPUTE};

/* Where a container is, for messages: Pod.spec.containers[1] ("train"). */
struct place {
    const char *where;
    size_t idx;
    char text[128];
};

static void place_of(const json_t *c, const char *where, size_t idx, struct place *pl)
{
    const json_t *name = json_object_get(c, "name");
    pl->where = where;
    pl->idx = idx;
    if (json_is_string(name))
        snprintf(pl->text, sizeof pl->text, "Pod.spec.%s[%zu] (\"%.63s\")", where, idx,
                 json_string_value(name));
    else
        snprintf(pl->text, sizeof pl->text, "Pod.spec.%s[%zu]", where, idx);
}

static int containers(const json_t *spec, const char *key, int required, const json_t **out,
                      char *err, size_t errlen)
{
    *out = json_object_get(spec, key);
    if (!*out || json_is_null(*out)) {
        if (required) {
            snprintf(err, errlen, "Pod.spec.%s is missing", key);
            return -1;
        }
        *out = NULL;
        return 0;
    }
    if (!json_is_array(*out)) {
        snprintf(err, errlen, "Pod.spec.%s is not an array", key);
        return -1;
    }
    return 0;
}

/* Reads one container and checks its convgpu.io/gpu against its own units (pod.h). */
static int one(const json_t *c, const char *where, size_t idx, struct units *u, char *err,
               size_t errlen)
{
    if (!json_is_object(c)) {
        snprintf(err, errlen, "Pod.spec.%s[%zu] is not an object", where, idx);
        return -1;
    }
    int present;
    for (int r = 0; r < 2; r++)
        if (container_units(c, where, idx, resources[r], &u->v[r], &present, err, errlen) != 0)
            return -1;
    if (container_units(c, where, idx, K8S_RES_GPU, &u->gpus, &present, err, errlen) != 0)
        return -1;
    if (!present) {
        u->gpus = 1;
        return 0;
    }
    struct place pl;
    place_of(c, where, idx, &pl);
    if (u->gpus == 0) {
        snprintf(err, errlen, "%s asks for %s: 0; a container asks for 1 GPU or more", pl.text,
                 K8S_RES_GPU);
        return -1;
    }
    if (u->v[0] == 0) {
        snprintf(err, errlen, "%s asks for %s: %u without %s: a container on convgpu GPUs must "
                              "ask for memory on each",
                 pl.text, K8S_RES_GPU, u->gpus, K8S_RES_GPU_MEMORY);
        return -1;
    }
    if (u->gpus == 1)
        return 0; /* one GPU: the same as no convgpu.io/gpu */
    if (strcmp(where, "containers") != 0) {
        snprintf(err, errlen, "%s asks for %s: %u: only a regular container may ask for several "
                              "GPUs, not an init container",
                 pl.text, K8S_RES_GPU, u->gpus);
        return -1;
    }
    /* The units are totals over the GPUs, split evenly; a saturated quantity fits no GPU
     * whatever N (k8s_pod_request), so it is not held to the split. */
    for (int r = 0; r < 2; r++)
        if (u->v[r] != UINT32_MAX && u->v[r] % u->gpus != 0) {
            snprintf(err, errlen, "%s asks for %u %s units on %s: %u: the units are totals over "
                                  "its GPUs, so they must be a multiple of %u",
                     pl.text, u->v[r], resources[r], K8S_RES_GPU, u->gpus, u->gpus);
            return -1;
        }
    return 0;
}

static int has_units(const struct units *u)
{
    return u->v[0] || u->v[1];
}

int k8s_pod_request(const json_t *pod, cg_cluster_request *req, char *err, size_t errlen)
{
    if (!json_is_object(pod)) {
        snprintf(err, errlen, "Pod is missing or not an object");
        return -1;
    }
    const json_t *spec = json_object_get(pod, "spec");
    if (!json_is_object(spec)) {
        snprintf(err, errlen, "Pod.spec is missing or not an object");
        return -1;
    }
    const json_t *regular, *init;
    if (containers(spec, "containers", 1, &regular, err, errlen) != 0 ||
        containers(spec, "initContainers", 0, &init, err, errlen) != 0)
        return -1;

    struct units total = {{0, 0}, 1}, sidecars = {{0, 0}, 1}, init_max = {{0, 0}, 1}, u;
    /* The container on several GPUs, if any, and the first other container with units: the
     * two may not meet in one pod (pod.h). */
    struct units gang = {{0, 0}, 1};
    struct place gang_at = {.where = NULL}, other_at = {.where = NULL};
    size_t i;
    const json_t *c;
    json_array_foreach(regular, i, c) {
        if (one(c, "containers", i, &u, err, errlen) != 0)
            return -1;
        if (u.gpus > 1) {
            if (gang_at.where) {
                struct place second;
                place_of(c, "containers", i, &second);
                snprintf(err, errlen, "%s and %s both ask for several GPUs (%s): a pod may have "
                                      "one container on several GPUs",
                         gang_at.text, second.text, K8S_RES_GPU);
                return -1;
            }
            gang = u;
            place_of(c, "containers", i, &gang_at);
        } else if (has_units(&u) && !other_at.where) {
            place_of(c, "containers", i, &other_at);
        }
        for (int r = 0; r < 2; r++)
            total.v[r] = sat_add(total.v[r], u.v[r]);
    }
    if (init) {
        json_array_foreach(init, i, c) {
            if (one(c, "initContainers", i, &u, err, errlen) != 0)
                return -1;
            if (has_units(&u) && !other_at.where)
                place_of(c, "initContainers", i, &other_at);
            const json_t *policy = json_object_get(c, "restartPolicy");
            if (policy && !json_is_null(policy) && !json_is_string(policy)) {
                snprintf(err, errlen, "Pod.spec.initContainers[%zu].restartPolicy is not a string",
                         i);
                return -1;
            }
            int sidecar = json_is_string(policy) && strcmp(json_string_value(policy), "Always") == 0;
            for (int r = 0; r < 2; r++) {
                uint32_t during;
                if (sidecar) {
                    total.v[r] = sat_add(total.v[r], u.v[r]);
                    sidecars.v[r] = sat_add(sidecars.v[r], u.v[r]);
                    during = sidecars.v[r];
                } else {
                    during = sat_add(u.v[r], sidecars.v[r]);
                }
                if (during > init_max.v[r])
                    init_max.v[r] = during;
            }
        }
    }
    if (gang_at.where) {
        if (other_at.where) {
            snprintf(err, errlen, "%s asks for %u GPUs (%s) and %s asks for convgpu units too: a "
                                  "container on several GPUs must be the pod's only container "
                                  "with convgpu units",
                     gang_at.text, gang.gpus, K8S_RES_GPU, other_at.text);
            return -1;
        }
        /* Alone, its units are the pod's: split evenly over its GPUs (one() checked that they
         * divide); a saturated total stays saturated, more than any GPU holds. */
        req->memory_units = gang.v[0] == UINT32_MAX ? UINT32_MAX : gang.v[0] / gang.gpus;
        req->compute_units = gang.v[1] == UINT32_MAX ? UINT32_MAX : gang.v[1] / gang.gpus;
        req->gpus = gang.gpus;
        return 0;
    }
    req->memory_units = total.v[0] > init_max.v[0] ? total.v[0] : init_max.v[0];
    req->compute_units = total.v[1] > init_max.v[1] ? total.v[1] : init_max.v[1];
    req->gpus = 1;
    return 0;
}

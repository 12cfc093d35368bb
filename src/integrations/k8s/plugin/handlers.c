/* handlers.c — what ListAndWatch, Allocate and GetPreferredAllocation answer, decided in C from
 * the inventory; rpc.cc only converts messages (plugin.h). Every device ID kubelet sends is
 * checked here, where it enters; what they grant is recorded with convgpud (state.c), and
 * kubelet only ever gets the record's token. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin.h"

const char *dp_resource_name(cg_unit_kind kind)
{
    switch (kind) {
    case CG_UNIT_MEMORY: return DP_RESOURCE_MEMORY;
    case CG_UNIT_COMPUTE: return DP_RESOURCE_COMPUTE;
    case CG_UNIT_SLOT: return DP_RESOURCE_GPU;
    }
    return "?";
}

struct dp_device *dp_list_units(const struct dp_inventory *inv, cg_unit_kind kind, size_t *n)
{
    const struct dp_config *cfg = dp_config_get();
    size_t total = 0;
    for (size_t g = 0; g < inv->ngpus; g++)
        total += dp_gpu_units(&inv->gpus[g], kind, cfg);
    struct dp_device *list = calloc(total ? total : 1, sizeof *list);
    if (!list) {
        *n = 0;
        return NULL;
    }
    size_t k = 0;
    for (size_t g = 0; g < inv->ngpus; g++) {
        const struct dp_gpu *gpu = &inv->gpus[g];
        unsigned units = dp_gpu_units(gpu, kind, cfg);
        for (unsigned u = 0; u < units; u++) {
            cg_unit_id_format(list[k].id, sizeof list[k].id, kind,
                              (cg_unit){.gpu = gpu->index, .n = u});
            list[k].healthy = inv->daemon_up && gpu->present;
            k++;
        }
    }
    *n = k;
    return list;
}

/* Parses and checks one ID of an endpoint's kind. Returns DP_OK or a code with msg. */
static int check_id(const char *id, cg_unit_kind kind, cg_unit *u, char *msg, size_t msglen)
{
    cg_unit_kind k;
    if (!id || cg_unit_id_parse(id, &k, u) != 0) {
        snprintf(msg, msglen, "unknown device ID \"%.64s\": convgpu's IDs are gpu<INDEX>-mem-<N>, "
                              "gpu<INDEX>-compute-<N> and gpu<INDEX>-slot-<N>", id ? id : "");
        return DP_INVALID_ARGUMENT;
    }
    if (k != kind) {
        snprintf(msg, msglen, "device ID %s is a unit of %s, not of %s", id, dp_resource_name(k),
                 dp_resource_name(kind));
        return DP_INVALID_ARGUMENT;
    }
    return DP_OK;
}

struct unit_at {
    cg_unit u;
    size_t at;
};

static int unit_order(const void *a, const void *b)
{
    const struct unit_at *x = a, *y = b;
    if (x->u.gpu != y->u.gpu)
        return x->u.gpu < y->u.gpu ? -1 : 1;
    if (x->u.n != y->u.n)
        return x->u.n < y->u.n ? -1 : 1;
    return x->at < y->at ? -1 : x->at > y->at;
}

/* Sorted, so that a node's thousands of available IDs cost n log n, not n^2. -1: out of memory
 * (msg says so). */
static int has_duplicate(const cg_unit *units, size_t n, const char *const *ids, char *msg,
                         size_t msglen)
{
    struct unit_at *s = malloc((n ? n : 1) * sizeof *s);
    if (!s) {
        snprintf(msg, msglen, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        s[i] = (struct unit_at){units[i], i};
    qsort(s, n, sizeof *s, unit_order);
    int dup = 0;
    for (size_t i = 1; i < n && !dup; i++)
        if (s[i].u.gpu == s[i - 1].u.gpu && s[i].u.n == s[i - 1].u.n) {
            snprintf(msg, msglen, "device ID %s is given twice", ids[s[i - 1].at]);
            dup = 1;
        }
    free(s);
    return dup;
}

static int duplicate_code(int has)
{
    return has < 0 ? DP_INTERNAL : has ? DP_INVALID_ARGUMENT : DP_OK;
}

/* The GPUs of a container's slots, ascending; n is at most DP_MAX_GPUS (checked where the IDs
 * enter). */
static void gpu_list(const cg_unit *units, size_t n, unsigned *sorted)
{
    for (size_t i = 0; i < n; i++) {
        size_t j = i;
        while (j > 0 && sorted[j - 1] > units[i].gpu) {
            sorted[j] = sorted[j - 1];
            j--;
        }
        sorted[j] = units[i].gpu;
    }
}

int dp_allocate_on(const struct dp_inventory *inv, const struct dp_config *cfg, cg_unit_kind kind,
                   const char *const *ids, size_t nids, struct dp_grant *out, char *msg,
                   size_t msglen)
{
    memset(out, 0, sizeof *out);
    out->kind = kind;
    out->device = -1;
    if (nids == 0) {
        snprintf(msg, msglen, "no device IDs to allocate");
        return DP_INVALID_ARGUMENT;
    }
    if (kind == CG_UNIT_SLOT && nids > DP_MAX_GPUS) {
        snprintf(msg, msglen, "%zu GPU slots asked for; a container uses at most %d GPUs", nids,
                 DP_MAX_GPUS);
        return DP_INVALID_ARGUMENT;
    }
    cg_unit *units = calloc(nids, sizeof *units);
    if (!units) {
        snprintf(msg, msglen, "out of memory");
        return DP_INTERNAL;
    }
    int code = DP_OK;
    bool one_gpu = true;
    for (size_t i = 0; i < nids && code == DP_OK; i++) {
        code = check_id(ids[i], kind, &units[i], msg, msglen);
        if (code != DP_OK)
            break;
        const struct dp_gpu *g = dp_inventory_find(inv, units[i].gpu);
        unsigned have = g ? dp_gpu_units(g, kind, cfg) : 0;
        one_gpu = one_gpu && units[i].gpu == units[0].gpu;
        if (!g || units[i].n >= have) {
            snprintf(msg, msglen, "device ID %s is not one this node advertises (%s)", ids[i],
                     g ? "beyond that GPU's units" : "no such GPU on this node");
            code = DP_INVALID_ARGUMENT;
        } else if (!inv->daemon_up) {
            snprintf(msg, msglen, "convgpud is not reachable: cannot allocate %s", ids[i]);
            code = DP_UNAVAILABLE;
        } else if (!g->present) {
            snprintf(msg, msglen, "GPU %u (device ID %s) is no longer listed by convgpud",
                     g->index, ids[i]);
            code = DP_FAILED_PRECONDITION;
        }
        for (size_t j = 0; j < i && code == DP_OK && kind == CG_UNIT_SLOT; j++)
            if (units[j].gpu == units[i].gpu && units[j].n != units[i].n) {
                snprintf(msg, msglen, "GPU slots %s and %s are on one GPU; a container's slots "
                                      "name distinct GPUs", ids[j], ids[i]);
                code = DP_INVALID_ARGUMENT;
            }
    }
    if (code == DP_OK)
        code = duplicate_code(has_duplicate(units, nids, ids, msg, msglen));
    if (code != DP_OK) {
        free(units);
        return code;
    }
    /* kubelet allocates each resource on its own (in no fixed order) and merges the
     * environments, so each grant is a record of its own, claimed together by the container.
     * The memory units name the GPU when they are all on one (convgpud places the container
     * otherwise); the compute grant names none (it applies on the container's GPU, where
     * convgpud admits it). The slots name the GPUs of a multi-GPU container; convgpud then splits
     * the memory and compute totals evenly over them, and their IDs above are kubelet's count
     * only (docs/KUBERNETES.md). */
    /* A GPU may advertise more units than it has memory (convgpud --oversubscribe), so that
     * containers whose peaks seldom meet can share it; one container still never gets more
     * than the GPU holds (convgpud would refuse it later, less clearly). */
    const struct dp_gpu *g0 = kind == CG_UNIT_MEMORY ? dp_inventory_find(inv, units[0].gpu) : NULL;
    if (one_gpu && g0 && (uint64_t)nids * cfg->unit_bytes > g0->capacity) {
        snprintf(msg, msglen, "%zu memory units (%llu MiB) exceed GPU %u's memory (%llu MiB): "
                              "its units are shared, but one container's stay within the GPU; "
                              "ask for less, or for convgpu.io/gpu: N to spread over N GPUs",
                 nids, (unsigned long long)((uint64_t)nids * cfg->unit_bytes >> 20), g0->index,
                 (unsigned long long)(g0->capacity >> 20));
        free(units);
        return DP_INVALID_ARGUMENT;
    }
    switch (kind) {
    case CG_UNIT_MEMORY:
        out->bytes = (uint64_t)nids * cfg->unit_bytes;
        out->device = one_gpu ? (int)units[0].gpu : -1;
        /* The operator's options ride on the memory record, the one every container has. */
        out->has_priority = cfg->has_priority;
        out->priority = cfg->priority;
        out->no_swap = cfg->no_swap;
        out->exclusive = cfg->exclusive;
        break;
    case CG_UNIT_COMPUTE:
        out->compute = (unsigned)nids;
        break;
    case CG_UNIT_SLOT:
        gpu_list(units, nids, out->gpus);
        out->ngpus = nids;
        break;
    }
    free(units);
    return DP_OK;
}

const char *dp_grant_env(cg_unit_kind kind)
{
    switch (kind) {
    case CG_UNIT_MEMORY: return DP_ENV_ALLOCATION;
    case CG_UNIT_COMPUTE: return DP_ENV_ALLOCATION_COMPUTE;
    case CG_UNIT_SLOT: return DP_ENV_ALLOCATION_GPUS;
    }
    return "?";
}

/* Appends to buf at *at; false once the text no longer fits. */
__attribute__((format(printf, 4, 5))) static bool append(char *buf, size_t len, size_t *at,
                                                          const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int w = *at < len ? vsnprintf(buf + *at, len - *at, fmt, ap) : -1;
    va_end(ap);
    if (w < 0 || (size_t)w >= len - *at)
        return false;
    *at += (size_t)w;
    return true;
}

int dp_grant_body(const struct dp_grant *g, char *buf, size_t len)
{
    size_t at = 0;
    bool ok = len > 0;
    switch (g->kind) {
    case CG_UNIT_MEMORY:
        ok = ok && append(buf, len, &at, "{\"gpu_memory\": %" PRIu64, g->bytes) &&
             (g->device < 0 || append(buf, len, &at, ", \"device\": %d", g->device)) &&
             (!g->has_priority || append(buf, len, &at, ", \"priority\": %u", g->priority)) &&
             (!g->no_swap || append(buf, len, &at, ", \"swap\": false")) &&
             (!g->exclusive || append(buf, len, &at, ", \"exclusive\": true")) &&
             append(buf, len, &at, "}");
        break;
    case CG_UNIT_COMPUTE:
        ok = ok && append(buf, len, &at, "{\"gpu_compute\": %u}", g->compute);
        break;
    case CG_UNIT_SLOT:
        ok = ok && append(buf, len, &at, "{\"devices\": [");
        for (size_t i = 0; ok && i < g->ngpus; i++)
            ok = append(buf, len, &at, "%s%u", i ? ", " : "", g->gpus[i]);
        ok = ok && append(buf, len, &at, "]}");
        break;
    }
    return ok ? 0 : -1;
}

int dp_allocate(cg_unit_kind kind, const char *const *ids, size_t nids, struct dp_env *envs,
                size_t *nenvs, char *msg, size_t msglen)
{
    /* Decided on the poller's view (at most --poll-ms old): Allocate reserves nothing, the daemon
     * admits the container when the shim registers it, so a slightly old view cannot overcommit;
     * and kubelet waits on this answer (the p99 target is 10 ms). A refusal is only given on a
     * fresh read: a GPU or a daemon that just came back is not refused for having been away. */
    struct dp_inventory inv;
    struct dp_grant grant;
    const struct dp_config *cfg = dp_config_get();
    *nenvs = 0;
    dp_state_get(&inv, NULL);
    if (dp_allocate_on(&inv, cfg, kind, ids, nids, &grant, msg, msglen) != DP_OK) {
        char why[400];
        if (dp_refresh(&inv, why, sizeof why) != 0) {
            snprintf(msg, msglen, "convgpud is not reachable, nothing allocated: %s", why);
            return DP_UNAVAILABLE;
        }
        int code = dp_allocate_on(&inv, cfg, kind, ids, nids, &grant, msg, msglen);
        if (code != DP_OK)
            return code;
    }
    /* The token, never the limit: the container's environment is the pod author's to write, so
     * the shim takes the limit from convgpud's record, which only the plugin may make. With no
     * record there is no answer: plain limits here would be read by no one (the shim in
     * Kubernetes mode) or, by a shim left in Docker mode, beside the pod's own. */
    char token[DP_TOKEN_LEN + 1];
    int code = dp_record(&grant, token, msg, msglen);
    if (code != DP_OK)
        return code;
    envs[0].name = dp_grant_env(kind);
    snprintf(envs[0].value, sizeof envs[0].value, "%s", token);
    *nenvs = 1;
    return DP_OK;
}

int dp_prefer(cg_unit_kind kind, const char *const *avail, size_t navail,
              const char *const *must, size_t nmust, long size, size_t *out, char *msg,
              size_t msglen)
{
    struct dp_inventory inv;
    dp_state_get(&inv, NULL);
    return dp_prefer_on(&inv, kind, avail, navail, must, nmust, size, out, msg, msglen);
}

/* A GPU that promises more than it has (convgpud --oversubscribe) lists more memory units than
 * one container may take from it: keeps, of each GPU's available units, the must-include ones
 * and then the first others up to what its memory holds, so the one-GPU choice below never
 * hands a container more of a GPU than it has (a larger request spreads, as a multi-GPU pod's
 * total does). Compacts a[] in place; map[k] is the kept unit's position in avail. Returns
 * how many are kept. */
static size_t cap_memory_units(const struct dp_inventory *inv, const struct dp_config *cfg,
                               cg_unit *a, size_t navail, const cg_unit *m, size_t nmust,
                               size_t *map)
{
    unsigned kept[DP_MAX_GPUS] = {0};
    size_t nk = 0;
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < navail; i++) {
            bool must = false;
            for (size_t j = 0; j < nmust && !must; j++)
                must = m[j].gpu == a[i].gpu && m[j].n == a[i].n;
            if (must != (pass == 0))
                continue;
            const struct dp_gpu *g = dp_inventory_find(inv, a[i].gpu);
            size_t slot = g ? (size_t)(g - inv->gpus) : 0;
            uint64_t cap = g && cfg->unit_bytes ? g->capacity / cfg->unit_bytes : 0;
            if (g && !must && kept[slot] >= cap)
                continue;
            if (g)
                kept[slot]++;
            map[nk++] = i;
        }
    /* map is in pass order; a[] follows it (a copy: map's positions refer to the original). */
    cg_unit *copy = malloc(navail * sizeof *copy);
    if (!copy) { /* nothing dropped: Allocate still refuses an over-large grant */
        for (size_t k = 0; k < navail; k++)
            map[k] = k;
        return navail;
    }
    memcpy(copy, a, navail * sizeof *copy);
    for (size_t k = 0; k < nk; k++)
        a[k] = copy[map[k]];
    free(copy);
    return nk;
}

int dp_prefer_on(const struct dp_inventory *inv, cg_unit_kind kind, const char *const *avail,
                 size_t navail, const char *const *must, size_t nmust, long size, size_t *out,
                 char *msg, size_t msglen)
{
    if (size <= 0 || (size_t)size > navail) {
        snprintf(msg, msglen, "allocation size %ld is not between 1 and the %zu available "
                              "devices", size, navail);
        return DP_INVALID_ARGUMENT;
    }
    cg_unit *a = calloc(navail, sizeof *a), *m = calloc(nmust ? nmust : 1, sizeof *m);
    int code = a && m ? DP_OK : DP_INTERNAL;
    if (code != DP_OK)
        snprintf(msg, msglen, "out of memory");
    for (size_t i = 0; i < navail && code == DP_OK; i++)
        code = check_id(avail[i], kind, &a[i], msg, msglen);
    for (size_t i = 0; i < nmust && code == DP_OK; i++) {
        code = check_id(must[i], kind, &m[i], msg, msglen);
        bool listed = false;
        for (size_t j = 0; j < navail && code == DP_OK && !listed; j++)
            listed = a[j].gpu == m[i].gpu && a[j].n == m[i].n;
        if (code == DP_OK && !listed) {
            snprintf(msg, msglen, "device ID %s must be included but is not available", must[i]);
            code = DP_INVALID_ARGUMENT;
        }
    }
    if (code == DP_OK)
        code = duplicate_code(has_duplicate(a, navail, avail, msg, msglen));
    if (code == DP_OK)
        code = duplicate_code(has_duplicate(m, nmust, must, msg, msglen));
    size_t *map = NULL, nkept = navail;
    if (code == DP_OK && kind == CG_UNIT_MEMORY) {
        map = calloc(navail, sizeof *map);
        if (!map) {
            snprintf(msg, msglen, "out of memory");
            code = DP_INTERNAL;
        } else {
            nkept = cap_memory_units(inv, dp_config_get(), a, navail, m, nmust, map);
        }
        if (code == DP_OK && (size_t)size > nkept) {
            snprintf(msg, msglen, "%ld memory units are more than these GPUs' memory holds; "
                                  "their units are shared (convgpud --oversubscribe), but a "
                                  "container's units on one GPU stay within its memory", size);
            code = DP_INVALID_ARGUMENT;
        }
    }
    if (code == DP_OK) {
        cg_prefer_result r =
            kind == CG_UNIT_SLOT
                ? cg_units_prefer_gpus(a, navail, m, nmust, (size_t)size, dp_gpu_cost, inv, out)
                : cg_units_prefer(a, nkept, m, nmust, (size_t)size, out);
        for (long k = 0; r == CG_PREFER_OK && map && k < size; k++)
            out[k] = map[out[k]];
        switch (r) {
        case CG_PREFER_OK: break;
        case CG_PREFER_TOO_FEW_MUST:
            snprintf(msg, msglen, "%zu devices must be included in an allocation of %ld", nmust,
                     size);
            code = DP_INVALID_ARGUMENT;
            break;
        case CG_PREFER_SPLIT_MUST:
            snprintf(msg, msglen, "two of the GPU slots that must be included are on one GPU");
            code = DP_INVALID_ARGUMENT;
            break;
        case CG_PREFER_NO_GPU:
            snprintf(msg, msglen, "fewer than %ld GPUs have an available %s slot", size,
                     dp_resource_name(kind));
            code = DP_FAILED_PRECONDITION;
            break;
        case CG_PREFER_NO_MEMORY:
            snprintf(msg, msglen, "out of memory");
            code = DP_INTERNAL;
            break;
        }
    }
    free(a);
    free(m);
    free(map);
    return code;
}

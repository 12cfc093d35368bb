/* grant.c — convgpud's GPUs as the driver reads them (GET /v1/devices), and what a decoded claim
 * grants on them (dra.h). No I/O: unit-tested by k8s.dra_units. */
#include <stdio.h>
#include <string.h>

#include "dra.h"

static int uint_field(json_t *o, const char *key, uint64_t *out)
{
    json_t *v = json_object_get(o, key);
    if (!json_is_integer(v) || json_integer_value(v) < 0)
        return -1;
    *out = (uint64_t)json_integer_value(v);
    return 0;
}

int dra_inventory_decode(json_t *devices, struct dra_inventory *out, char *err, size_t errlen)
{
    struct dra_inventory inv = {0};
    if (!json_is_array(devices)) {
        snprintf(err, errlen, "convgpud's /v1/devices is not an array");
        return -1;
    }
    size_t i;
    json_t *d;
    json_array_foreach(devices, i, d) {
        struct dra_gpu *g = &inv.gpus[inv.ngpus];
        uint64_t index;
        const char *name = json_string_value(json_object_get(d, "name"));
        const char *uuid = json_string_value(json_object_get(d, "uuid"));
        if (inv.ngpus == DRA_MAX_GPUS || uint_field(d, "index", &index) != 0 ||
            index >= DRA_MAX_GPUS || uint_field(d, "capacity", &g->capacity) != 0) {
            snprintf(err, errlen, "convgpud's device %zu has no usable index and capacity", i);
            return -1;
        }
        if (uint_field(d, "total", &g->total) != 0)
            g->total = g->capacity;
        if (uint_field(d, "promised", &g->promised) != 0 || g->promised < g->capacity)
            g->promised = g->capacity; /* a daemon from before the factor */
        g->index = (unsigned)index;
        snprintf(g->name, sizeof g->name, "%s", name ? name : "");
        snprintf(g->uuid, sizeof g->uuid, "%s", uuid ? uuid : "");
        for (size_t k = 0; k < inv.ngpus; k++)
            if (inv.gpus[k].index == g->index) {
                snprintf(err, errlen, "convgpud lists GPU %u twice", g->index);
                return -1;
            }
        inv.ngpus++;
    }
    *out = inv;
    return 0;
}

const struct dra_gpu *dra_inventory_find(const struct dra_inventory *inv, unsigned index)
{
    for (size_t i = 0; i < inv->ngpus; i++)
        if (inv->gpus[i].index == index)
            return &inv->gpus[i];
    return NULL;
}

/* The memory a whole GPU (all it has) or one of its partitions (its share of what the GPU
 * promises) gives one claim, rounded down to the step. */
static uint64_t offered(const struct dra_gpu *g, unsigned partitions)
{
    uint64_t m = partitions ? g->promised / partitions : g->capacity;
    if (m > g->capacity)
        m = g->capacity;
    return m / DRA_MEMORY_STEP * DRA_MEMORY_STEP;
}

int dra_grant_of(const struct dra_claim *c, const struct dra_inventory *inv, unsigned partitions,
                 struct dra_grant *out, char *err, size_t errlen)
{
    struct {
        uint64_t memory;
        unsigned compute;
    } per[DRA_MAX_GPUS] = {{0}};
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < c->nresults; i++) {
        const struct dra_result *r = &c->results[i];
        const struct dra_gpu *g = dra_inventory_find(inv, r->gpu);
        if (!g) {
            snprintf(err, errlen, "device %s of request %s: this node has no GPU %u", r->device,
                     r->request, r->gpu);
            return -1;
        }
        if (r->partition >= 0 && (!partitions || (unsigned)r->partition >= partitions)) {
            snprintf(err, errlen, "device %s of request %s: this node publishes %s", r->device,
                     r->request, partitions ? "fewer partitions" : "no partitions");
            return -1;
        }
        uint64_t mem = r->has_memory ? r->memory : offered(g, r->partition >= 0 ? partitions : 0);
        unsigned comp = r->has_compute ? r->compute
                        : r->partition >= 0 ? 100 / partitions
                        : r->has_memory ? 0 : 100;
        bool seen = false;
        for (size_t k = 0; k < out->ngpus; k++)
            seen = seen || out->gpus[k] == r->gpu;
        if (!seen)
            out->gpus[out->ngpus++] = r->gpu;
        per[r->gpu].memory += mem;
        per[r->gpu].compute += comp;
    }
    /* ascending, as convgpud lists a multi-GPU container's devices */
    for (size_t i = 1; i < out->ngpus; i++)
        for (size_t j = i; j > 0 && out->gpus[j - 1] > out->gpus[j]; j--) {
            unsigned t = out->gpus[j];
            out->gpus[j] = out->gpus[j - 1];
            out->gpus[j - 1] = t;
        }
    for (size_t k = 0; k < out->ngpus; k++) {
        unsigned gi = out->gpus[k];
        const struct dra_gpu *g = dra_inventory_find(inv, gi);
        if (per[gi].memory == 0) {
            snprintf(err, errlen, "the claim gives no memory on GPU %u", gi);
            return -1;
        }
        /* The GPU's memory is shared by its claims up to what it promises (the slice's
         * capacity, which the scheduler keeps), but one claim, one container, stays within the
         * memory the GPU has: convgpud places a container's whole limit on its GPU. */
        if (per[gi].memory > g->capacity) {
            snprintf(err, errlen, "the claim gives %llu MiB on GPU %u, which has %llu MiB: its "
                                  "claims together may take up to %llu MiB (convgpud's "
                                  "oversubscription), but one claim stays within the GPU",
                     (unsigned long long)(per[gi].memory >> 20), gi,
                     (unsigned long long)(g->capacity >> 20),
                     (unsigned long long)(g->promised >> 20));
            return -1;
        }
        if (per[gi].compute > 100) {
            snprintf(err, errlen, "the claim gives %u%% compute on GPU %u; at most 100",
                     per[gi].compute, gi);
            return -1;
        }
        if (k > 0 && (per[gi].memory != per[out->gpus[0]].memory ||
                      per[gi].compute != per[out->gpus[0]].compute)) {
            snprintf(err, errlen, "the claim gives GPUs %u and %u different amounts; a container "
                                  "on several GPUs has the same memory and compute on each",
                     out->gpus[0], gi);
            return -1;
        }
    }
    out->memory = per[out->gpus[0]].memory;
    out->compute = per[out->gpus[0]].compute;
    return 0;
}

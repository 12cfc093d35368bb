/* inventory.c — convgpud's devices as the plugin sees them (inventory.h). */
#include "inventory.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"

unsigned dp_gpu_units(const struct dp_gpu *g, cg_unit_kind kind, const struct dp_config *cfg)
{
    switch (kind) {
    case CG_UNIT_COMPUTE: return DP_COMPUTE_UNITS;
    case CG_UNIT_SLOT: return cfg->gpu_slots;
    case CG_UNIT_MEMORY: break;
    }
    return cg_units_of_memory(g->promised > g->capacity ? g->promised : g->capacity,
                              cfg->unit_bytes);
}

unsigned dp_gpu_cost(const void *inventory, unsigned a, unsigned b)
{
    const struct dp_gpu *g = dp_inventory_find(inventory, a);
    for (size_t i = 0; g && i < g->nlinks; i++)
        if (g->links[i].peer == b)
            return cg_link_cost((cg_link)g->links[i].level);
    return cg_link_cost(CG_LINK_SYSTEM);
}

const struct dp_gpu *dp_inventory_find(const struct dp_inventory *inv, unsigned index)
{
    for (size_t i = 0; i < inv->ngpus; i++)
        if (inv->gpus[i].index == index)
            return &inv->gpus[i];
    return NULL;
}

/* Keeps gpus sorted by index: ListAndWatch lists them in that order. */
static void insert_sorted(struct dp_inventory *inv, const struct dp_gpu *g)
{
    size_t at = inv->ngpus;
    while (at > 0 && inv->gpus[at - 1].index > g->index) {
        inv->gpus[at] = inv->gpus[at - 1];
        at--;
    }
    inv->gpus[at] = *g;
    inv->ngpus++;
}

/* A device's "topology" object ({"<other index>": "<level>", ...}, as GET /v1/devices gives it;
 * absent from daemons before it): the links placement of several GPUs weighs. */
static int parse_links(json_t *topology, struct dp_gpu *g, char *err, size_t errlen)
{
    g->nlinks = 0;
    if (!topology)
        return 0;
    if (!json_is_object(topology) || json_object_size(topology) > DP_MAX_GPUS) {
        snprintf(err, errlen, "convgpud's device %u has a malformed \"topology\"", g->index);
        return -1;
    }
    const char *key;
    json_t *level;
    json_object_foreach(topology, key, level) {
        char *end;
        errno = 0;
        unsigned long peer = strtoul(key, &end, 10);
        cg_link l;
        if (errno || end == key || *end || key[0] < '0' || key[0] > '9' ||
            peer > CG_UNIT_MAX_GPU || peer == g->index || !json_is_string(level) ||
            !cg_link_parse(json_string_value(level), &l)) {
            snprintf(err, errlen, "convgpud's device %u reports a bad link \"%.32s\" in its "
                                  "\"topology\"", g->index, key);
            return -1;
        }
        g->links[g->nlinks].peer = (unsigned)peer;
        g->links[g->nlinks].level = (unsigned)l;
        g->nlinks++;
    }
    return 0;
}

int dp_inventory_parse(json_t *devices, struct dp_inventory *out, char *err, size_t errlen)
{
    if (!json_is_array(devices)) {
        snprintf(err, errlen, "convgpud's device list is not a JSON array");
        return -1;
    }
    if (json_array_size(devices) > DP_MAX_GPUS) {
        snprintf(err, errlen, "convgpud lists %zu devices; the plugin handles at most %d",
                 json_array_size(devices), DP_MAX_GPUS);
        return -1;
    }
    struct dp_inventory inv = {.daemon_up = true};
    size_t i;
    json_t *d;
    json_array_foreach(devices, i, d) {
        json_t *index = json_object_get(d, "index"), *uuid = json_object_get(d, "uuid");
        json_t *cap = json_object_get(d, "capacity");
        if (!json_is_integer(index) || json_integer_value(index) < 0 ||
            json_integer_value(index) > (json_int_t)CG_UNIT_MAX_GPU || !json_is_string(uuid) ||
            json_string_length(uuid) >= sizeof inv.gpus[0].uuid || !json_is_integer(cap) ||
            json_integer_value(cap) < 0) {
            snprintf(err, errlen, "convgpud's device entry %zu lacks a valid index, uuid or "
                                  "capacity", i);
            return -1;
        }
        struct dp_gpu g = {.index = (unsigned)json_integer_value(index),
                           .capacity = (uint64_t)json_integer_value(cap),
                           .present = true};
        /* "promised" (convgpud --oversubscribe) is never below the capacity; a daemon before
         * it sends none, and promises its capacity. */
        json_t *prom = json_object_get(d, "promised");
        if (prom &&
            (!json_is_integer(prom) || json_integer_value(prom) < json_integer_value(cap))) {
            snprintf(err, errlen, "convgpud's device entry %zu has a \"promised\" that is not a "
                                  "whole number of bytes at least its capacity", i);
            return -1;
        }
        g.promised = prom ? (uint64_t)json_integer_value(prom) : g.capacity;
        if (dp_inventory_find(&inv, g.index)) {
            snprintf(err, errlen, "convgpud lists device %u twice", g.index);
            return -1;
        }
        snprintf(g.uuid, sizeof g.uuid, "%s", json_string_value(uuid));
        if (parse_links(json_object_get(d, "topology"), &g, err, errlen) != 0)
            return -1;
        insert_sorted(&inv, &g);
    }
    *out = inv;
    return 0;
}

void dp_inventory_merge(const struct dp_inventory *prev, const struct dp_inventory *fresh,
                        struct dp_inventory *out)
{
    struct dp_inventory m = {.daemon_up = fresh != NULL};
    if (fresh)
        for (size_t i = 0; i < fresh->ngpus; i++)
            insert_sorted(&m, &fresh->gpus[i]);
    for (size_t i = 0; i < prev->ngpus && m.ngpus < DP_MAX_GPUS; i++) {
        if (dp_inventory_find(&m, prev->gpus[i].index))
            continue;
        struct dp_gpu gone = prev->gpus[i];
        gone.present = false;
        insert_sorted(&m, &gone);
    }
    *out = m;
}

int dp_inventory_equal(const struct dp_inventory *a, const struct dp_inventory *b)
{
    if (a->daemon_up != b->daemon_up || a->ngpus != b->ngpus)
        return 0;
    for (size_t i = 0; i < a->ngpus; i++) {
        const struct dp_gpu *x = &a->gpus[i], *y = &b->gpus[i];
        if (x->index != y->index || x->capacity != y->capacity || x->promised != y->promised ||
            x->present != y->present ||
            strcmp(x->uuid, y->uuid) != 0 || x->nlinks != y->nlinks)
            return 0;
        for (size_t k = 0; k < x->nlinks; k++)
            if (x->links[k].peer != y->links[k].peer || x->links[k].level != y->links[k].level)
                return 0;
    }
    return 1;
}

/* inventory.c — convgpud's devices as the plugin sees them (inventory.h). */
#include "inventory.h"

#include <stdio.h>
#include <string.h>

unsigned dp_gpu_units(const struct dp_gpu *g, cg_unit_kind kind, uint64_t unit_bytes)
{
    return kind == CG_UNIT_COMPUTE ? DP_COMPUTE_UNITS : cg_units_of_memory(g->capacity, unit_bytes);
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
        if (dp_inventory_find(&inv, g.index)) {
            snprintf(err, errlen, "convgpud lists device %u twice", g.index);
            return -1;
        }
        snprintf(g.uuid, sizeof g.uuid, "%s", json_string_value(uuid));
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
        if (x->index != y->index || x->capacity != y->capacity || x->present != y->present ||
            strcmp(x->uuid, y->uuid) != 0)
            return 0;
    }
    return 1;
}

/* slices.c — this node's ResourceSlices (resource.k8s.io/v1) from convgpud's GPUs (dra.h). No
 * I/O. Two shapes:
 * - consumable capacity (the default): one device per GPU, allowMultipleAllocations, capacities
 *   `memory` (what the GPU promises: its memory times the oversubscription factor, in whole
 *   256 MiB steps) and `compute` (100), each with a request policy: memory from 256 MiB up to
 *   the GPU's own memory (one claim is one container, which convgpud keeps within its GPU) in
 *   steps of 256 MiB (default 256 MiB), compute 1 to 100 in steps of 1 (default 1);
 * - partitions (--partitions N, for clusters without consumable capacity): a slice of counter
 *   sets, one per GPU (its memory and compute), and a slice of devices: per GPU the whole GPU
 *   and N partitions, each consuming its share of the GPU's counters, so the scheduler never
 *   hands out a partition and the whole GPU, or more partitions than fit, at once.
 * Every device carries the attributes convgpud knows: index, uuid, model, memory (the GPU's own). */
#include <stdio.h>
#include <string.h>

#include "dra.h"

void dra_slice_name(const char *node, size_t i, char *out, size_t len)
{
    snprintf(out, len, "%s-%s-%zu", node, DRA_DRIVER, i);
}

static json_t *quantity(uint64_t v)
{
    char s[32];
    snprintf(s, sizeof s, "%llu", (unsigned long long)v);
    return json_string(s);
}

static json_t *attributes(const struct dra_gpu *g)
{
    json_t *a = json_object();
    json_object_set_new(a, "index", json_pack("{s:I}", "int", (json_int_t)g->index));
    if (g->uuid[0])
        json_object_set_new(a, "uuid", json_pack("{s:s}", "string", g->uuid));
    if (g->name[0])
        json_object_set_new(a, "model", json_pack("{s:s}", "string", g->name));
    json_object_set_new(a, "memory", json_pack("{s:I}", "int", (json_int_t)g->total));
    json_object_set_new(a, "driverName", json_pack("{s:s}", "string", "convgpu"));
    return a;
}

static uint64_t promised_steps(const struct dra_gpu *g, unsigned parts)
{
    uint64_t m = parts ? g->promised / parts : g->promised;
    return m / DRA_MEMORY_STEP * DRA_MEMORY_STEP;
}

/* What one device of the partitioned shape gives a claim: the whole GPU its memory, a partition
 * its share of the promise, never more than the GPU has. */
static uint64_t device_steps(const struct dra_gpu *g, unsigned parts, int part)
{
    uint64_t m = part < 0 ? g->capacity : g->promised / parts;
    if (m > g->capacity)
        m = g->capacity;
    return m / DRA_MEMORY_STEP * DRA_MEMORY_STEP;
}

static json_t *shared_device(const struct dra_gpu *g)
{
    char name[32];
    snprintf(name, sizeof name, "gpu-%u", g->index);
    /* The claims together may take what the GPU promises; one claim at most what it has. */
    json_t *memory = json_pack("{s:o,s:{s:s,s:{s:s,s:o,s:s}}}", "value", quantity(promised_steps(g, 0)),
                               "requestPolicy", "default", "256Mi", "validRange", "min", "256Mi",
                               "max", quantity(g->capacity / DRA_MEMORY_STEP * DRA_MEMORY_STEP),
                               "step", "256Mi");
    json_t *compute = json_pack("{s:s,s:{s:s,s:{s:s,s:s,s:s}}}", "value", "100", "requestPolicy",
                                "default", "1", "validRange", "min", "1", "max", "100", "step", "1");
    return json_pack("{s:s,s:o,s:{s:o,s:o},s:b}", "name", name, "attributes", attributes(g),
                     "capacity", "memory", memory, "compute", compute,
                     "allowMultipleAllocations", 1);
}

static json_t *counters(uint64_t memory, unsigned compute)
{
    return json_pack("{s:{s:o},s:{s:o}}", "memory", "value", quantity(memory), "compute", "value",
                     quantity(compute));
}

/* A device of the partitioned shape: the whole GPU (part < 0) or partition part. */
static json_t *partition_device(const struct dra_gpu *g, unsigned parts, int part)
{
    char name[48], set[32];
    if (part < 0)
        snprintf(name, sizeof name, "gpu-%u", g->index);
    else
        snprintf(name, sizeof name, "gpu-%u-part-%d", g->index, part);
    snprintf(set, sizeof set, "gpu-%u-counters", g->index);
    uint64_t mem = device_steps(g, parts, part);
    unsigned comp = part < 0 ? 100 : 100 / parts;
    json_t *attrs = attributes(g);
    if (part >= 0)
        json_object_set_new(attrs, "partition", json_pack("{s:I}", "int", (json_int_t)part));
    return json_pack("{s:s,s:o,s:{s:{s:o},s:{s:o}},s:[{s:s,s:o}]}", "name", name, "attributes",
                     attrs, "capacity", "memory", "value", quantity(mem), "compute", "value",
                     quantity(comp), "consumesCounters", "counterSet", set, "counters",
                     counters(mem, comp));
}

static json_t *slice(const char *node, size_t i, size_t count, long gen)
{
    char name[320];
    dra_slice_name(node, i, name, sizeof name);
    return json_pack("{s:s,s:s,s:{s:s},s:{s:s,s:s,s:{s:s,s:I,s:I}}}", "apiVersion", DRA_API_GROUP,
                     "kind", "ResourceSlice", "metadata", "name", name, "spec", "driver",
                     DRA_DRIVER, "nodeName", node, "pool", "name", node, "generation",
                     (json_int_t)gen, "resourceSliceCount", (json_int_t)count);
}

json_t *dra_slices(const struct dra_inventory *inv, const char *node, unsigned partitions,
                   long gen)
{
    json_t *out = json_array();
    json_t *devices = json_array();
    json_t *sets = partitions ? json_array() : NULL;
    for (size_t i = 0; i < inv->ngpus && devices; i++) {
        const struct dra_gpu *g = &inv->gpus[i];
        if (!partitions) {
            json_array_append_new(devices, shared_device(g));
            continue;
        }
        char set[32];
        snprintf(set, sizeof set, "gpu-%u-counters", g->index);
        json_array_append_new(sets, json_pack("{s:s,s:o}", "name", set, "counters",
                                              counters(promised_steps(g, 0), 100)));
        json_array_append_new(devices, partition_device(g, partitions, -1));
        for (unsigned p = 0; p < partitions; p++)
            json_array_append_new(devices, partition_device(g, partitions, (int)p));
    }
    size_t count = partitions ? 2 : 1;
    json_t *first = slice(node, 0, count, gen);
    json_t *second = partitions ? slice(node, 1, count, gen) : NULL;
    if (!out || !devices || (partitions && (!sets || !second)) || !first) {
        json_decref(out);
        json_decref(devices);
        json_decref(sets);
        json_decref(first);
        json_decref(second);
        return NULL;
    }
    if (partitions) {
        /* A slice holds devices or shared counters, never both. */
        json_object_set_new(json_object_get(first, "spec"), "sharedCounters", sets);
        json_object_set_new(json_object_get(second, "spec"), "devices", devices);
        json_array_append_new(out, first);
        json_array_append_new(out, second);
    } else {
        json_object_set_new(json_object_get(first, "spec"), "devices", devices);
        json_array_append_new(out, first);
    }
    return out;
}

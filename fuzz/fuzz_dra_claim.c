/* fuzz_dra_claim.c — libFuzzer harness for convgpu-dra-driver's decoders of what the API server
 * sends (src/integrations/k8s/dra/claim.c): a ResourceClaim's allocation, its quantities, and
 * what it grants on a node (grant.c), and a Pod's spec.priority (priority.c). The first byte
 * picks: 0 a quantity alone, 0xff a Pod, else a claim. A decoded claim must hold
 * 1..DRA_MAX_RESULTS results, each on a GPU index below DRA_MAX_GPUS with compute at most 100,
 * and at most DRA_MAX_PODS pods; a grant must give every GPU it names the same memory, within
 * the GPU; a pod's priority is a 32-bit integer. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dra.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    if (data[0] == 0) {
        char text[128];
        size_t n = size - 1 < sizeof text - 1 ? size - 1 : sizeof text - 1;
        memcpy(text, data + 1, n);
        text[n] = '\0';
        uint64_t v;
        (void)dra_quantity_parse(text, &v);
        return 0;
    }
    char err[512];
    if (data[0] == 0xff) {
        json_t *pod = json_loadb((const char *)data + 1, size - 1, 0, NULL);
        int64_t v = 0;
        if (dra_pod_priority(pod, "ns", "pod-a", "p-1", &v, err, sizeof err) == 0 &&
            (v < INT32_MIN || v > INT32_MAX))
            abort();
        json_decref(pod);
        return 0;
    }
    struct dra_claim c;
    if (dra_claim_decode_text((const char *)data + 1, size - 1, NULL, data[0] & 1 ? "node-a" : NULL,
                              &c, err, sizeof err) != 0)
        return 0;
    if (c.nresults == 0 || c.nresults > DRA_MAX_RESULTS || c.npods > DRA_MAX_PODS)
        abort();
    for (size_t i = 0; i < c.nresults; i++)
        if (c.results[i].gpu >= DRA_MAX_GPUS || c.results[i].compute > 100)
            abort();
    struct dra_inventory inv = {.ngpus = 2};
    inv.gpus[0] = (struct dra_gpu){.index = 0, .capacity = 4ull << 30, .promised = 8ull << 30};
    inv.gpus[1] = (struct dra_gpu){.index = 3, .capacity = 2ull << 30, .promised = 2ull << 30};
    struct dra_grant g;
    if (dra_grant_of(&c, &inv, data[0] & 2 ? 2 : 0, &g, err, sizeof err) == 0) {
        if (g.ngpus == 0 || g.memory == 0 || g.compute > 100)
            abort();
        for (size_t k = 0; k < g.ngpus; k++) {
            const struct dra_gpu *gpu = dra_inventory_find(&inv, g.gpus[k]);
            if (!gpu || g.memory > gpu->capacity)
                abort();
        }
    }
    return 0;
}

/* test_dra_units.c — convgpu-dra-driver's decisions without gRPC, a daemon or an API server
 * (k8s.dra_units): Kubernetes quantities, a ResourceClaim's allocation in its real JSON shape,
 * what it grants on a node's GPUs (sums on one GPU, oversubscription up to the promise, refusals
 * with reasons), and the ResourceSlices of both shapes. */
#include <stdio.h>
#include <string.h>

#include "dra.h"

static int fails, checks;
#define CHECK(c)                                                                                   \
    do {                                                                                           \
        checks++;                                                                                  \
        if (!(c)) {                                                                                \
            fails++;                                                                               \
            fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #c);                           \
        }                                                                                          \
    } while (0)

static uint64_t q(const char *s)
{
    uint64_t v = 0;
    return dra_quantity_parse(s, &v) == 0 ? v : (uint64_t)-1;
}

static void quantities(void)
{
    CHECK(q("2Gi") == 2ull << 30);
    CHECK(q("2147483648") == 2ull << 30);
    CHECK(q("512Mi") == 512ull << 20);
    CHECK(q("1G") == 1000000000ull);
    CHECK(q("1.5Gi") == 3ull << 29);
    CHECK(q("30") == 30);
    CHECK(q("500m") == 1); /* rounded up */
    CHECK(q("1e3") == 1000);
    CHECK(q("+4k") == 4000);
    CHECK(q("0.1") == 1);
    CHECK(q("16Ei") == (uint64_t)-1); /* 2^64: too large */
    CHECK(q("-1") == (uint64_t)-1);
    CHECK(q("") == (uint64_t)-1);
    CHECK(q("Gi") == (uint64_t)-1);
    CHECK(q("1 Gi") == (uint64_t)-1);
    CHECK(q("1GiB") == (uint64_t)-1);
    CHECK(q("1.") == 1);
    CHECK(q(".5Ki") == 512);
}

static const char *claim_text =
    "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\","
    "\"metadata\":{\"name\":\"c\",\"namespace\":\"ns\",\"uid\":\"u-1\"},"
    "\"status\":{\"allocation\":{\"devices\":{\"results\":["
    "{\"request\":\"a\",\"driver\":\"gpu.convgpu.io\",\"pool\":\"node-a\",\"device\":\"gpu-1\","
    "\"consumedCapacity\":{\"memory\":\"2Gi\",\"compute\":\"30\"}},"
    "{\"request\":\"b\",\"driver\":\"other.example.com\",\"pool\":\"node-a\",\"device\":\"x\"},"
    "{\"request\":\"c\",\"driver\":\"gpu.convgpu.io\",\"pool\":\"node-a\",\"device\":\"gpu-1\","
    "\"consumedCapacity\":{\"memory\":\"1Gi\"}}]}}}}";

static struct dra_inventory inventory(void)
{
    struct dra_inventory inv = {.ngpus = 2};
    inv.gpus[0] = (struct dra_gpu){.index = 0, .name = "A", .uuid = "GPU-0", .total = 4ull << 30,
                                   .capacity = 4ull << 30, .promised = 4ull << 30};
    inv.gpus[1] = (struct dra_gpu){.index = 1, .name = "B", .uuid = "GPU-1", .total = 3ull << 30,
                                   .capacity = 3ull << 30, .promised = 6ull << 30};
    return inv;
}

static void claims(void)
{
    struct dra_claim c;
    char err[512];
    CHECK(dra_claim_decode_text(claim_text, strlen(claim_text), "u-1", "node-a", &c, err,
                                sizeof err) == 0);
    CHECK(c.nresults == 2 && c.results[0].gpu == 1 && c.results[0].memory == 2ull << 30 &&
          c.results[0].compute == 30 && c.results[1].has_compute == false);
    CHECK(strcmp(c.namespace_, "ns") == 0 && strcmp(c.results[1].request, "c") == 0);
    CHECK(dra_claim_decode_text(claim_text, strlen(claim_text), "u-2", "node-a", &c, err,
                                sizeof err) != 0 && strstr(err, "has UID"));
    CHECK(dra_claim_decode_text(claim_text, strlen(claim_text), "u-1", "node-b", &c, err,
                                sizeof err) != 0 && strstr(err, "no device"));
    CHECK(dra_claim_decode_text("[]", 2, "u-1", "node-a", &c, err, sizeof err) != 0);
    const char *bad_dev = "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\","
                          "\"metadata\":{\"name\":\"c\",\"namespace\":\"ns\",\"uid\":\"u\"},"
                          "\"status\":{\"allocation\":{\"devices\":{\"results\":[{\"request\":"
                          "\"a\",\"driver\":\"gpu.convgpu.io\",\"pool\":\"p\",\"device\":"
                          "\"gpu-01\"}]}}}}";
    CHECK(dra_claim_decode_text(bad_dev, strlen(bad_dev), "u", "p", &c, err, sizeof err) != 0 &&
          strstr(err, "gpu-01"));
    CHECK(!dra_uid_valid("../x") && !dra_uid_valid("") && dra_uid_valid("0d0e-12ab"));

    struct dra_inventory inv = inventory();
    struct dra_grant g;
    CHECK(dra_claim_decode_text(claim_text, strlen(claim_text), "u-1", "node-a", &c, err,
                                sizeof err) == 0);
    CHECK(dra_grant_of(&c, &inv, 0, &g, err, sizeof err) == 0);
    CHECK(g.ngpus == 1 && g.gpus[0] == 1 && g.memory == 3ull << 30 && g.compute == 30);
    c.results[1].memory = 2ull << 30; /* 4GiB of a 3GiB GPU promising 6GiB: one claim, one GPU */
    CHECK(dra_grant_of(&c, &inv, 0, &g, err, sizeof err) != 0 && strstr(err, "stays within"));
    c.results[1].memory = 1ull << 30;
    c.results[1].gpu = 0; /* 2GiB+30% on GPU 1, 1GiB on GPU 0: not even */
    CHECK(dra_grant_of(&c, &inv, 0, &g, err, sizeof err) != 0 && strstr(err, "different"));
    c.results[1].gpu = 7;
    CHECK(dra_grant_of(&c, &inv, 0, &g, err, sizeof err) != 0 && strstr(err, "no GPU 7"));
    /* a partition, with no consumedCapacity: its share of the promise */
    struct dra_claim p = {.nresults = 1};
    p.results[0] = (struct dra_result){.gpu = 0, .partition = 1};
    CHECK(dra_grant_of(&p, &inv, 2, &g, err, sizeof err) == 0 && g.memory == 2ull << 30 &&
          g.compute == 50);
    p.results[0].gpu = 1; /* half of GPU 1's 6GiB promise: 3GiB, all it has */
    CHECK(dra_grant_of(&p, &inv, 2, &g, err, sizeof err) == 0 && g.memory == 3ull << 30);
    p.results[0].partition = 0;
    CHECK(dra_grant_of(&p, &inv, 1, &g, err, sizeof err) == 0 && g.memory == 3ull << 30);
    CHECK(dra_grant_of(&p, &inv, 0, &g, err, sizeof err) != 0);
}

static void slices(void)
{
    struct dra_inventory inv = inventory();
    json_t *s = dra_slices(&inv, "node-a", 0, 7);
    CHECK(json_array_size(s) == 1);
    json_t *spec = json_object_get(json_array_get(s, 0), "spec");
    CHECK(json_integer_value(json_object_get(json_object_get(spec, "pool"), "generation")) == 7);
    json_t *d1 = json_array_get(json_object_get(spec, "devices"), 1);
    CHECK(strcmp(json_string_value(json_object_get(d1, "name")), "gpu-1") == 0);
    CHECK(json_is_true(json_object_get(d1, "allowMultipleAllocations")));
    const char *mem = json_string_value(json_object_get(
        json_object_get(json_object_get(d1, "capacity"), "memory"), "value"));
    CHECK(mem && strcmp(mem, "6442450944") == 0);
    json_decref(s);
    s = dra_slices(&inv, "node-a", 4, 1);
    CHECK(json_array_size(s) == 2);
    CHECK(json_array_size(json_object_get(json_object_get(json_array_get(s, 1), "spec"),
                                          "devices")) == 10);
    CHECK(json_object_get(json_object_get(json_array_get(s, 0), "spec"), "devices") == NULL);
    json_decref(s);
}

int main(void)
{
    quantities();
    claims();
    slices();
    printf("%d checks, %d failed\n", checks, fails);
    return fails != 0;
}

/* test_dra_units.c — convgpu-dra-driver's decisions without gRPC, a daemon or an API server
 * (k8s.dra_units): Kubernetes quantities, a ResourceClaim's allocation in its real JSON shape,
 * what it grants on a node's GPUs (sums on one GPU, oversubscription up to the promise, refusals
 * with reasons), the ResourceSlices of both shapes, and the pod priority path: --priority-map's
 * parser (a table of good and bad maps), a claim's reservedFor pods, a pod's spec.priority. */
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

static void priority_maps(void)
{
    static const struct {
        const char *text;
        const char *refusal; /* NULL: accepted */
        int64_t value;       /* then: this pod priority ... */
        unsigned want;       /* ... maps to this */
    } cases[] = {
        {"1000000000:9,1000:5,0:0", NULL, 1000000000, 9},
        {"1000000000:9,1000:5,0:0", NULL, 2000001000, 9}, /* system-node-critical */
        {"1000000000:9,1000:5,0:0", NULL, 999999999, 5},
        {"1000000000:9,1000:5,0:0", NULL, 1000, 5},
        {"1000000000:9,1000:5,0:0", NULL, 999, 0},
        {"1000000000:9,1000:5,0:0", NULL, -5, 0},  /* below every row */
        {"0:0,1000:5,1000000000:9", NULL, 5000, 5}, /* any order: sorted */
        {"1000:3", NULL, 1000, 3},
        {"-100:1", NULL, -100, 1},
        {"2147483647:9,-2147483648:1", NULL, 0, 1},
        {"", "empty", 0, 0},
        {"1000", "VALUE:PRIORITY", 0, 0},
        {"1000:10", "0 to 9", 0, 0},
        {"1000:-1", "0 to 9", 0, 0},
        {"1000:", "0 to 9", 0, 0},
        {":5", "PriorityClass value", 0, 0},
        {"abc:5", "PriorityClass value", 0, 0},
        {"1e3:5", "PriorityClass value", 0, 0},
        {"2147483648:5", "PriorityClass value", 0, 0},
        {"-2147483649:5", "PriorityClass value", 0, 0},
        {"1000:5,", "VALUE:PRIORITY", 0, 0},
        {"1000:5,1000:6", "twice", 0, 0},
        {"1000:5 ", "0 to 9", 0, 0},
        {"1000:2,0:4", "lower convgpu priority", 0, 0},
        {"1:1,2:1,3:1,4:1,5:1,6:1,7:1,8:1,9:1,10:1,11:1,12:1,13:1,14:1,15:1,16:1,17:1",
         "more than 16", 0, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct dra_priority_map m;
        char err[256] = "";
        int rc = dra_priority_map_parse(cases[i].text, &m, err, sizeof err);
        if (cases[i].refusal) {
            CHECK(rc != 0 && strstr(err, cases[i].refusal) && m.n == 0);
            if (!(rc != 0 && strstr(err, cases[i].refusal)))
                fprintf(stderr, "  case %zu \"%s\": %s\n", i, cases[i].text, err);
        } else {
            CHECK(rc == 0 && dra_priority_of(&m, cases[i].value) == cases[i].want);
            if (rc != 0)
                fprintf(stderr, "  case %zu \"%s\": %s\n", i, cases[i].text, err);
        }
    }
    struct dra_priority_map none = {0};
    CHECK(dra_priority_of(&none, 2000001000) == 0);
    CHECK(dra_priority_map_parse(NULL, &none, (char[64]){0}, 64) != 0);
}

static const char reserved_claim[] =
    "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\","
    "\"metadata\":{\"name\":\"c\",\"namespace\":\"ns\",\"uid\":\"u\"},"
    "\"status\":{\"allocation\":{\"devices\":{\"results\":[{\"request\":\"a\","
    "\"driver\":\"gpu.convgpu.io\",\"pool\":\"p\",\"device\":\"gpu-0\"}]}},"
    "\"reservedFor\":[{\"resource\":\"pods\",\"name\":\"pod-a\",\"uid\":\"p-1\"},"
    "{\"apiGroup\":\"batch\",\"resource\":\"jobs\",\"name\":\"j\",\"uid\":\"j-1\"},"
    "{\"resource\":\"pods\",\"name\":\"pod-b\",\"uid\":\"p-2\"}]}}";

static void pods(void)
{
    struct dra_claim c;
    char err[512];
    CHECK(dra_claim_decode_text(reserved_claim, strlen(reserved_claim), "u", "p", &c, err,
                                sizeof err) == 0);
    CHECK(c.npods == 2 && !c.pods_truncated && strcmp(c.pods[0].name, "pod-a") == 0 &&
          strcmp(c.pods[1].uid, "p-2") == 0);
    char bad[sizeof reserved_claim + 16];
    snprintf(bad, sizeof bad, "%s", reserved_claim);
    memcpy(strstr(bad, "p-1"), "../", 3);
    CHECK(dra_claim_decode_text(bad, strlen(bad), "u", "p", &c, err, sizeof err) != 0 &&
          strstr(err, "reservedFor[0].uid"));

    static const struct {
        const char *pod;
        int ok;
        int64_t priority;
        const char *refusal;
    } cases[] = {
        {"{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"namespace\":\"ns\","
         "\"name\":\"pod-a\",\"uid\":\"p-1\"},\"spec\":{\"priorityClassName\":\"high\","
         "\"priority\":1000000}}", 1, 1000000, NULL},
        {"{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"namespace\":\"ns\","
         "\"name\":\"pod-a\",\"uid\":\"p-1\"},\"spec\":{}}", 1, 0, NULL},
        {"{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"namespace\":\"ns\","
         "\"name\":\"pod-a\",\"uid\":\"p-9\"},\"spec\":{\"priority\":5}}", 0, 0, "has UID"},
        {"{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"namespace\":\"ns\","
         "\"name\":\"pod-a\",\"uid\":\"p-1\"},\"spec\":{\"priority\":\"9\"}}", 0, 0, "32-bit"},
        {"{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"namespace\":\"ns\","
         "\"name\":\"pod-a\",\"uid\":\"p-1\"},\"spec\":{\"priority\":4294967296}}", 0, 0,
         "32-bit"},
        {"{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"namespace\":\"other\","
         "\"name\":\"pod-a\",\"uid\":\"p-1\"},\"spec\":{}}", 0, 0, "another object"},
        {"{\"kind\":\"Node\",\"apiVersion\":\"v1\"}", 0, 0, "not a Pod"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_t *o = json_loads(cases[i].pod, 0, NULL);
        int64_t v = -1;
        int rc = dra_pod_priority(o, "ns", "pod-a", "p-1", &v, err, sizeof err);
        CHECK(o != NULL);
        if (cases[i].ok)
            CHECK(rc == 0 && v == cases[i].priority);
        else
            CHECK(rc != 0 && strstr(err, cases[i].refusal));
        json_decref(o);
    }
}

int main(void)
{
    quantities();
    claims();
    slices();
    priority_maps();
    pods();
    printf("%d checks, %d failed\n", checks, fails);
    return fails != 0;
}

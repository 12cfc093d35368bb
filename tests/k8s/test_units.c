/* test_units.c — the device plugin's decisions without gRPC: device IDs (src/core/units.c), the
 * best-fit preference, the inventory read from convgpud's answer and carried across reads, and
 * what Allocate and GetPreferredAllocation answer for good and bad requests. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inventory.h"
#include "plugin.h"
#include "units.h"

#include "../common/check.h"

#define MIB (1ull << 20)
#define GIB (1ull << 30)

static void test_ids(void)
{
    char buf[CG_UNIT_ID_MAX];
    CHECK(cg_unit_id_format(buf, sizeof buf, CG_UNIT_MEMORY, (cg_unit){3, 17}) > 0 &&
              strcmp(buf, "gpu3-mem-17") == 0, "%s", buf);
    CHECK(cg_unit_id_format(buf, sizeof buf, CG_UNIT_COMPUTE, (cg_unit){0, 99}) > 0 &&
              strcmp(buf, "gpu0-compute-99") == 0, "%s", buf);
    CHECK(cg_unit_id_format(buf, 8, CG_UNIT_MEMORY, (cg_unit){3, 17}) == -1, "too small a buffer");
    CHECK(cg_unit_id_format(buf, sizeof buf, CG_UNIT_MEMORY, (cg_unit){CG_UNIT_MAX_GPU + 1, 0}) == -1,
          "GPU index out of bounds");
    cg_unit_kind k;
    cg_unit u;
    CHECK(cg_unit_id_parse("gpu12-mem-0", &k, &u) == 0 && k == CG_UNIT_MEMORY && u.gpu == 12 &&
              u.n == 0, "gpu12-mem-0");
    CHECK(cg_unit_id_parse("gpu0-compute-99", &k, &u) == 0 && k == CG_UNIT_COMPUTE && u.n == 99,
          "gpu0-compute-99");
    const char *bad[] = {"", "gpu", "gpu0", "gpu0-mem-", "gpu-mem-1", "gpu01-mem-1", "gpu1-mem-01",
                         "gpu1-mem-1x", "gpu1-mem-1 ", " gpu1-mem-1", "gpu1-Mem-1", "gpu1-mem--1",
                         "gpu1-memory-1", "GPU-3a9c-mem-1", "gpu1024-mem-0", "gpu0-mem-1000000",
                         "gpu99999999999999999999-mem-0", "gpu0-compute-1-", "cpu0-mem-0"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        CHECK(cg_unit_id_parse(bad[i], &k, &u) == -1, "\"%s\" accepted", bad[i]);
    CHECK(cg_unit_id_parse(NULL, &k, &u) == -1, "NULL accepted");
    CHECK(cg_units_of_memory(5 * GIB, 256 * MIB) == 20, "5GiB in 256MiB units");
    CHECK(cg_units_of_memory(5 * GIB - 1, 256 * MIB) == 19, "a partial unit is not offered");
    CHECK(cg_units_of_memory(5 * GIB, 0) == 0, "a zero unit offers nothing");
}

static void test_prefer(void)
{
    /* GPU 0: 6 free units, GPU 1: 3, GPU 2: 4. */
    cg_unit avail[13];
    size_t n = 0;
    for (unsigned i = 0; i < 6; i++) avail[n++] = (cg_unit){0, 10 + i};
    for (unsigned i = 0; i < 3; i++) avail[n++] = (cg_unit){1, 5 - i}; /* out of order */
    for (unsigned i = 0; i < 4; i++) avail[n++] = (cg_unit){2, i};
    size_t out[8];
    CHECK(cg_units_prefer(avail, n, NULL, 0, 3, out) == CG_PREFER_OK, "3 units");
    /* Best fit: GPU 1 holds exactly 3; lowest numbers first (3, 4, 5). */
    CHECK(avail[out[0]].gpu == 1 && avail[out[0]].n == 3 && avail[out[1]].n == 4 &&
              avail[out[2]].n == 5, "got gpu%u n%u,%u,%u", avail[out[0]].gpu, avail[out[0]].n,
          avail[out[1]].n, avail[out[2]].n);
    CHECK(cg_units_prefer(avail, n, NULL, 0, 4, out) == CG_PREFER_OK && avail[out[0]].gpu == 2,
          "4 units: GPU 2 (4 free) rather than GPU 0 (6 free)");
    CHECK(cg_units_prefer(avail, n, NULL, 0, 5, out) == CG_PREFER_OK && avail[out[0]].gpu == 0,
          "5 units: only GPU 0 holds them");
    CHECK(cg_units_prefer(avail, n, NULL, 0, 7, out) == CG_PREFER_NO_GPU,
          "7 units: 13 free on the node, but no single GPU has 7");
    cg_unit must[2] = {{0, 12}, {0, 14}};
    CHECK(cg_units_prefer(avail, n, must, 2, 3, out) == CG_PREFER_OK && avail[out[0]].gpu == 0 &&
              avail[out[0]].n == 12 && avail[out[1]].n == 14 && avail[out[2]].n == 10,
          "must units first, on their GPU, then the lowest other");
    cg_unit split[2] = {{0, 12}, {1, 3}};
    CHECK(cg_units_prefer(avail, n, split, 2, 3, out) == CG_PREFER_SPLIT_MUST, "split must");
    CHECK(cg_units_prefer(avail, n, must, 2, 1, out) == CG_PREFER_TOO_FEW_MUST, "too few");
    /* Ties go to the lower index. */
    cg_unit tie[4] = {{5, 0}, {5, 1}, {4, 0}, {4, 1}};
    CHECK(cg_units_prefer(tie, 4, NULL, 0, 2, out) == CG_PREFER_OK && tie[out[0]].gpu == 4,
          "tie: GPU 4 before GPU 5");
}

static void inventory_of(struct dp_inventory *inv, const char *json)
{
    json_error_t e;
    json_t *j = json_loads(json, 0, &e);
    char err[256] = "";
    CHECK(j && dp_inventory_parse(j, inv, err, sizeof err) == 0, "%s", err);
    json_decref(j);
}

static void test_inventory(void)
{
    struct dp_inventory inv, prev, merged;
    inventory_of(&inv, "[{\"index\":1,\"uuid\":\"GPU-b\",\"capacity\":1073741824},"
                       "{\"index\":0,\"uuid\":\"GPU-a\",\"capacity\":5368709120,\"free\":1}]");
    CHECK(inv.daemon_up && inv.ngpus == 2 && inv.gpus[0].index == 0 && inv.gpus[1].index == 1 &&
              inv.gpus[0].present && strcmp(inv.gpus[1].uuid, "GPU-b") == 0, "sorted by index");
    const char *bad[] = {"{}", "[1]", "[{\"index\":-1,\"uuid\":\"x\",\"capacity\":1}]",
                         "[{\"index\":0,\"uuid\":7,\"capacity\":1}]",
                         "[{\"index\":0,\"uuid\":\"x\",\"capacity\":-5}]",
                         ("[{\"index\":0,\"uuid\":\"x\",\"capacity\":1},"
                          "{\"index\":0,\"uuid\":\"y\",\"capacity\":1}]"),
                         "[{\"index\":4096,\"uuid\":\"x\",\"capacity\":1}]"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        json_t *j = json_loads(bad[i], 0, NULL);
        struct dp_inventory keep = inv;
        char err[256] = "";
        CHECK(j && dp_inventory_parse(j, &keep, err, sizeof err) == -1 && err[0] &&
                  dp_inventory_equal(&keep, &inv), "%s accepted", bad[i]);
        json_decref(j);
    }
    /* GPU 1 goes away: kept, absent; the daemon goes away: all absent; both return. */
    prev = inv;
    struct dp_inventory fresh;
    inventory_of(&fresh, "[{\"index\":0,\"uuid\":\"GPU-a\",\"capacity\":5368709120}]");
    dp_inventory_merge(&prev, &fresh, &merged);
    CHECK(merged.daemon_up && merged.ngpus == 2 && merged.gpus[0].present &&
              !merged.gpus[1].present && merged.gpus[1].capacity == 1073741824ull,
          "a GPU that went away stays listed, absent");
    CHECK(!dp_inventory_equal(&merged, &prev), "that is a change");
    dp_inventory_merge(&merged, NULL, &prev);
    CHECK(!prev.daemon_up && prev.ngpus == 2 && !prev.gpus[0].present, "daemon down: all absent");
    dp_inventory_merge(&prev, &inv, &merged);
    CHECK(dp_inventory_equal(&merged, &inv), "both back: as before");
}

static int alloc(const struct dp_inventory *inv, cg_unit_kind kind, size_t n, const char **ids,
                 struct dp_env *envs, size_t *nenvs, char *msg)
{
    return dp_allocate_on(inv, 256 * MIB, kind, ids, n, envs, nenvs, msg, 256);
}

static void test_allocate(void)
{
    struct dp_config c = {.unit_bytes = 256 * MIB, .poll_ms = 1000};
    dp_configure(&c);
    struct dp_inventory inv;
    inventory_of(&inv, "[{\"index\":0,\"uuid\":\"GPU-a\",\"capacity\":5368709120},"
                       "{\"index\":1,\"uuid\":\"GPU-b\",\"capacity\":1073741824}]");
    size_t n = 0;
    struct dp_device *list = dp_list_units(&inv, CG_UNIT_MEMORY, &n);
    CHECK(list && n == 24 && strcmp(list[0].id, "gpu0-mem-0") == 0 &&
              strcmp(list[20].id, "gpu1-mem-0") == 0 && list[23].healthy, "20 + 4 memory units");
    free(list);
    list = dp_list_units(&inv, CG_UNIT_COMPUTE, &n);
    CHECK(list && n == 200 && strcmp(list[199].id, "gpu1-compute-99") == 0, "2 x 100 compute");
    free(list);

    struct dp_env envs[DP_MAX_ENVS];
    size_t ne;
    char msg[256];
    const char *good[] = {"gpu1-mem-0", "gpu1-mem-3", "gpu1-mem-2"};
    CHECK(alloc(&inv, CG_UNIT_MEMORY, 3, good, envs, &ne, msg) == DP_OK && ne == 2 &&
              strcmp(envs[0].name, "CONVGPU_GPU_MEMORY") == 0 &&
              strcmp(envs[0].value, "805306368") == 0 &&
              strcmp(envs[1].name, "CONVGPU_GPU_DEVICE") == 0 && strcmp(envs[1].value, "1") == 0,
          "3 units of GPU 1: %s", msg);
    const char *compute[] = {"gpu0-compute-7", "gpu0-compute-8"};
    CHECK(alloc(&inv, CG_UNIT_COMPUTE, 2, compute, envs, &ne, msg) == DP_OK && ne == 1 &&
              strcmp(envs[0].name, "CONVGPU_GPU_COMPUTE") == 0 && strcmp(envs[0].value, "2") == 0,
          "2%% of GPU 0, the GPU left to the memory units: %s", msg);

    struct { const char *ids[3]; size_t n; cg_unit_kind kind; int code; const char *says; } bad[] = {
        {{"gpu0-mem-x"}, 1, CG_UNIT_MEMORY, DP_INVALID_ARGUMENT, "unknown device ID"},
        {{"gpu0-compute-1"}, 1, CG_UNIT_MEMORY, DP_INVALID_ARGUMENT, "not of convgpu.io/gpu-memory"},
        {{"gpu2-mem-0"}, 1, CG_UNIT_MEMORY, DP_INVALID_ARGUMENT, "no such GPU"},
        {{"gpu1-mem-4"}, 1, CG_UNIT_MEMORY, DP_INVALID_ARGUMENT, "beyond that GPU's units"},
        {{"gpu0-mem-1", "gpu1-mem-1"}, 2, CG_UNIT_MEMORY, DP_INVALID_ARGUMENT, "different GPUs"},
        {{"gpu0-mem-1", "gpu0-mem-1"}, 2, CG_UNIT_MEMORY, DP_INVALID_ARGUMENT, "twice"},
        {{NULL}, 0, CG_UNIT_MEMORY, DP_INVALID_ARGUMENT, "no device IDs"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        msg[0] = 0;
        int code = alloc(&inv, bad[i].kind, bad[i].n, bad[i].ids, envs, &ne, msg);
        CHECK(code == bad[i].code && ne == 0 && strstr(msg, bad[i].says), "case %zu: %d %s", i,
              code, msg);
    }
    struct dp_inventory gone, down;
    struct dp_inventory only0;
    inventory_of(&only0, "[{\"index\":0,\"uuid\":\"GPU-a\",\"capacity\":5368709120}]");
    dp_inventory_merge(&inv, &only0, &gone);
    CHECK(alloc(&gone, CG_UNIT_MEMORY, 1, good, envs, &ne, msg) == DP_FAILED_PRECONDITION &&
              strstr(msg, "no longer listed"), "GPU 1 gone: %s", msg);
    list = dp_list_units(&gone, CG_UNIT_MEMORY, &n);
    CHECK(list && n == 24 && list[0].healthy && !list[20].healthy, "GPU 1's units Unhealthy");
    free(list);
    dp_inventory_merge(&inv, NULL, &down);
    CHECK(alloc(&down, CG_UNIT_MEMORY, 1, good, envs, &ne, msg) == DP_UNAVAILABLE &&
              strstr(msg, "not reachable"), "daemon down: %s", msg);

    /* GetPreferredAllocation: validated, then best fit. */
    const char *avail[] = {"gpu0-mem-0", "gpu0-mem-1", "gpu0-mem-2", "gpu1-mem-0", "gpu1-mem-1"};
    size_t out[5];
    CHECK(dp_prefer(CG_UNIT_MEMORY, avail, 5, NULL, 0, 2, out, msg, sizeof msg) == DP_OK &&
              out[0] == 3 && out[1] == 4, "2 units: GPU 1 (best fit): %s", msg);
    CHECK(dp_prefer(CG_UNIT_MEMORY, avail, 5, NULL, 0, 4, out, msg, sizeof msg) ==
              DP_FAILED_PRECONDITION && strstr(msg, "no single GPU"), "4 units: %s", msg);
    CHECK(dp_prefer(CG_UNIT_MEMORY, avail, 5, NULL, 0, 0, out, msg, sizeof msg) ==
              DP_INVALID_ARGUMENT, "size 0");
    CHECK(dp_prefer(CG_UNIT_MEMORY, avail, 5, NULL, 0, 6, out, msg, sizeof msg) ==
              DP_INVALID_ARGUMENT, "size beyond the available");
    const char *must_missing[] = {"gpu0-mem-9"};
    CHECK(dp_prefer(CG_UNIT_MEMORY, avail, 5, must_missing, 1, 2, out, msg, sizeof msg) ==
              DP_INVALID_ARGUMENT && strstr(msg, "not available"), "%s", msg);
    const char *foreign[] = {"gpu0-mem-0", "gpu0-compute-1"};
    CHECK(dp_prefer(CG_UNIT_MEMORY, foreign, 2, NULL, 0, 1, out, msg, sizeof msg) ==
              DP_INVALID_ARGUMENT && strstr(msg, "gpu0-compute-1"), "%s", msg);
    const char *dup[] = {"gpu0-mem-0", "gpu0-mem-0"};
    CHECK(dp_prefer(CG_UNIT_MEMORY, dup, 2, NULL, 0, 1, out, msg, sizeof msg) ==
              DP_INVALID_ARGUMENT && strstr(msg, "twice"), "%s", msg);
}

int main(void)
{
    test_ids();
    test_prefer();
    test_inventory();
    test_allocate();
    if (failures)
        fprintf(stderr, "%d failure(s)\n", failures);
    else
        printf("all passed\n");
    return failures != 0;
}

/* test_units.c — the device plugin's decisions without gRPC: device IDs (src/core/units.c), the
 * best-fit preference and its split over GPUs, the choice of GPU slots by topology (checked
 * against a brute-force model), the inventory read from convgpud's answer and carried across
 * reads, what Allocate grants for good and bad requests and the record it makes of a grant with
 * convgpud (its body, and the gRPC code each answer of convgpud becomes), and what
 * GetPreferredAllocation answers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
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
    CHECK(cg_unit_id_format(buf, sizeof buf, CG_UNIT_SLOT, (cg_unit){7, 2}) > 0 &&
              strcmp(buf, "gpu7-slot-2") == 0, "%s", buf);
    CHECK(cg_unit_id_parse("gpu7-slot-2", &k, &u) == 0 && k == CG_UNIT_SLOT && u.gpu == 7 &&
              u.n == 2, "gpu7-slot-2");
    const char *bad[] = {"", "gpu", "gpu0", "gpu0-mem-", "gpu-mem-1", "gpu01-mem-1", "gpu1-mem-01",
                         "gpu1-mem-1x", "gpu1-mem-1 ", " gpu1-mem-1", "gpu1-Mem-1", "gpu1-mem--1",
                         "gpu1-memory-1", "GPU-3a9c-mem-1", "gpu1024-mem-0", "gpu0-mem-1000000",
                         "gpu99999999999999999999-mem-0", "gpu0-compute-1-", "cpu0-mem-0",
                         "gpu0-slot-", "gpu0-slots-1", "gpu0-slot-01"};
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
    /* No single GPU has 7 (a multi-GPU pod's total): as few GPUs as possible, the one with
     * the most available first (GPU 0's 6), then the next (GPU 2's lowest). */
    size_t out13[13];
    CHECK(cg_units_prefer(avail, n, NULL, 0, 7, out13) == CG_PREFER_OK &&
              avail[out13[0]].gpu == 0 && avail[out13[5]].gpu == 0 && avail[out13[6]].gpu == 2 &&
              avail[out13[6]].n == 0, "7 units: 6 of GPU 0 and GPU 2's unit 0");
    CHECK(cg_units_prefer(avail, n, NULL, 0, 13, out13) == CG_PREFER_OK, "every unit");
    cg_unit must[2] = {{0, 12}, {0, 14}};
    CHECK(cg_units_prefer(avail, n, must, 2, 3, out) == CG_PREFER_OK && avail[out[0]].gpu == 0 &&
              avail[out[0]].n == 12 && avail[out[1]].n == 14 && avail[out[2]].n == 10,
          "must units first, on their GPU, then the lowest other");
    cg_unit split[2] = {{0, 12}, {1, 3}};
    CHECK(cg_units_prefer(avail, n, split, 2, 3, out) == CG_PREFER_OK && out[0] == 2 &&
              out[1] == 8 && avail[out[2]].gpu == 0 && avail[out[2]].n == 10,
          "must units on two GPUs: they first, then the GPU with the most left");
    CHECK(cg_units_prefer(avail, n, must, 2, 1, out) == CG_PREFER_TOO_FEW_MUST, "too few");
    /* Ties go to the lower index. */
    cg_unit tie[4] = {{5, 0}, {5, 1}, {4, 0}, {4, 1}};
    CHECK(cg_units_prefer(tie, 4, NULL, 0, 2, out) == CG_PREFER_OK && tie[out[0]].gpu == 4,
          "tie: GPU 4 before GPU 5");
}

/* Random sets of available units: cg_units_prefer's choice is `size` distinct positions with
 * every must unit; on one GPU when one GPU can hold them with the must units (the best fit);
 * otherwise, without must units, on as few GPUs as any choice could use. */
/* The first implementation of cg_units_prefer (a scan per chosen unit: cubic), kept as the
 * reference the sorted one must agree with exactly, position for position. */
static size_t ref_count_on(const cg_unit *avail, size_t navail, unsigned gpu)
{
    size_t count = 0;
    for (size_t i = 0; i < navail; i++)
        count += avail[i].gpu == gpu;
    return count;
}

static bool ref_first_of_gpu(const cg_unit *avail, size_t i)
{
    for (size_t j = 0; j < i; j++)
        if (avail[j].gpu == avail[i].gpu)
            return false;
    return true;
}

static size_t ref_take_from(const cg_unit *avail, size_t navail, size_t chosen, unsigned gpu,
                            size_t size, size_t *out)
{
    while (chosen < size) {
        size_t pick = navail;
        for (size_t i = 0; i < navail; i++) {
            if (avail[i].gpu != gpu)
                continue;
            bool taken = false;
            for (size_t k = 0; k < chosen && !taken; k++)
                taken = out[k] == i;
            if (!taken && (pick == navail || avail[i].n < avail[pick].n))
                pick = i;
        }
        if (pick == navail)
            break;
        out[chosen++] = pick;
    }
    return chosen;
}

static cg_prefer_result ref_prefer(const cg_unit *avail, size_t navail, const cg_unit *must,
                                   size_t nmust, size_t size, size_t *out)
{
    if (nmust > size)
        return CG_PREFER_TOO_FEW_MUST;
    bool must_one_gpu = true;
    for (size_t i = 1; i < nmust; i++)
        must_one_gpu = must_one_gpu && must[i].gpu == must[0].gpu;
    bool found = false;
    unsigned best_gpu = 0;
    size_t best_count = 0;
    for (size_t i = 0; i < navail && must_one_gpu; i++) {
        unsigned gpu = avail[i].gpu;
        if (!ref_first_of_gpu(avail, i) || (nmust > 0 && gpu != must[0].gpu))
            continue;
        size_t count = ref_count_on(avail, navail, gpu);
        if (count >= size &&
            (!found || count < best_count || (count == best_count && gpu < best_gpu))) {
            found = true;
            best_gpu = gpu;
            best_count = count;
        }
    }
    size_t chosen = 0;
    for (size_t m = 0; m < nmust; m++)
        for (size_t i = 0; i < navail; i++)
            if (avail[i].gpu == must[m].gpu && avail[i].n == must[m].n)
                out[chosen++] = i;
    if (found)
        return ref_take_from(avail, navail, chosen, best_gpu, size, out) == size
                   ? CG_PREFER_OK
                   : CG_PREFER_NO_GPU;
    while (chosen < size) {
        bool any = false;
        unsigned gpu = 0;
        size_t most = 0;
        for (size_t i = 0; i < navail; i++) {
            if (!ref_first_of_gpu(avail, i))
                continue;
            size_t left = ref_count_on(avail, navail, avail[i].gpu);
            for (size_t k = 0; k < chosen; k++)
                left -= avail[out[k]].gpu == avail[i].gpu;
            if (left > 0 && (!any || left > most || (left == most && avail[i].gpu < gpu))) {
                any = true;
                gpu = avail[i].gpu;
                most = left;
            }
        }
        if (!any)
            return CG_PREFER_NO_GPU;
        chosen = ref_take_from(avail, navail, chosen, gpu, size, out);
    }
    return CG_PREFER_OK;
}

/* Random inventories in random order (GPUs interleaved, numbers shuffled), random sizes and must
 * units: the sorted implementation picks exactly what the reference picks. */
static void test_prefer_reference(void)
{
    srand(777);
    for (int round = 0; round < 5000; round++) {
        cg_unit avail[96];
        size_t navail = 0;
        unsigned ngpu = 1 + (unsigned)rand() % 6;
        for (unsigned g = 0; g < ngpu; g++) {
            unsigned k = (unsigned)rand() % 16, base = (unsigned)rand() % 4 * 100;
            for (unsigned i = 0; i < k; i++)
                avail[navail++] = (cg_unit){(g * 7) % 11, base + i * 3};
        }
        if (navail == 0)
            continue;
        for (size_t i = navail - 1; i > 0; i--) {
            size_t j = (size_t)rand() % (i + 1);
            cg_unit t = avail[i];
            avail[i] = avail[j];
            avail[j] = t;
        }
        size_t size = 1 + (size_t)rand() % navail, nmust = 0;
        cg_unit must[4];
        if (rand() % 2)
            for (size_t i = 0; i < 4 && nmust < size; i++) {
                cg_unit c = avail[(size_t)rand() % navail];
                bool dup = false;
                for (size_t j = 0; j < nmust; j++)
                    dup = dup || (must[j].gpu == c.gpu && must[j].n == c.n);
                if (!dup && rand() % 2)
                    must[nmust++] = c;
            }
        size_t got[96], want[96];
        cg_prefer_result rg = cg_units_prefer(avail, navail, must, nmust, size, got);
        cg_prefer_result rw = ref_prefer(avail, navail, must, nmust, size, want);
        CHECK(rg == rw, "round %d: result %d, the reference %d", round, rg, rw);
        if (rg != rw || rg != CG_PREFER_OK)
            continue;
        CHECK(memcmp(got, want, size * sizeof *got) == 0,
              "round %d: %zu of %zu units, %zu must: a different choice than the reference", round,
              size, navail, nmust);
    }
}

static void test_prefer_model(void)
{
    srand(12345);
    for (int round = 0; round < 20000; round++) {
        cg_unit avail[40];
        size_t navail = 0, count[5] = {0};
        for (unsigned g = 0; g < 5; g++) {
            unsigned k = (unsigned)rand() % 8;
            for (unsigned i = 0; i < k; i++) {
                avail[navail++] = (cg_unit){g, (unsigned)rand() % 3 * 10 + i};
                count[g]++;
            }
        }
        if (navail == 0)
            continue;
        size_t size = 1 + (size_t)rand() % navail, nmust = 0;
        cg_unit must[3];
        if (rand() % 3 == 0)
            for (size_t i = 0; i < 3 && nmust < size; i++)
                if (rand() % 2) {
                    cg_unit c = avail[(size_t)rand() % navail];
                    bool dup = false;
                    for (size_t j = 0; j < nmust; j++)
                        dup = dup || (must[j].gpu == c.gpu && must[j].n == c.n);
                    if (!dup)
                        must[nmust++] = c;
                }
        size_t out[40];
        cg_prefer_result r = cg_units_prefer(avail, navail, must, nmust, size, out);
        CHECK(r == CG_PREFER_OK, "round %d: %d", round, r);
        if (r != CG_PREFER_OK)
            continue;
        bool seen[40] = {false}, gpus_used[5] = {false};
        size_t ngpus = 0;
        for (size_t i = 0; i < size; i++) {
            CHECK(out[i] < navail && !seen[out[i]], "round %d: position %zu", round, out[i]);
            if (out[i] >= navail || seen[out[i]])
                break;
            seen[out[i]] = true;
            if (!gpus_used[avail[out[i]].gpu])
                ngpus++;
            gpus_used[avail[out[i]].gpu] = true;
        }
        for (size_t j = 0; j < nmust; j++) {
            bool in = false;
            for (size_t i = 0; i < size; i++)
                in = in || (avail[out[i]].gpu == must[j].gpu && avail[out[i]].n == must[j].n);
            CHECK(in, "round %d: must unit %zu left out", round, j);
        }
        bool must_one = true;
        for (size_t j = 1; j < nmust; j++)
            must_one = must_one && must[j].gpu == must[0].gpu;
        size_t best = 0;
        bool one_fits = false;
        for (unsigned g = 0; g < 5; g++)
            if (count[g] >= size && must_one && (nmust == 0 || g == must[0].gpu) &&
                (!one_fits || count[g] < count[best])) {
                one_fits = true;
                best = g;
            }
        if (one_fits) {
            CHECK(ngpus == 1 && gpus_used[best], "round %d: one GPU (%zu) holds %zu", round,
                  best, size);
        } else if (nmust == 0) {
            size_t sorted[5], k = 0, sum = 0;
            memcpy(sorted, count, sizeof sorted);
            for (unsigned a = 0; a < 5; a++)
                for (unsigned b = a + 1; b < 5; b++)
                    if (sorted[b] > sorted[a]) {
                        size_t t = sorted[a];
                        sorted[a] = sorted[b];
                        sorted[b] = t;
                    }
            while (sum < size)
                sum += sorted[k++];
            CHECK(ngpus == k, "round %d: %zu GPUs used, %zu would do", round, ngpus, k);
        }
    }
}

/* Four GPUs: NVLink pairs (0,1) and (2,3), the rest across the sockets. */
static unsigned pairs_cost(const void *ctx, unsigned a, unsigned b)
{
    (void)ctx;
    return a / 2 == b / 2 ? cg_link_cost(CG_LINK_NVLINK) : cg_link_cost(CG_LINK_SYSTEM);
}

/* The cost of a pair from a 6 x 6 table of costs (ctx). */
static unsigned table_cost(const void *ctx, unsigned a, unsigned b)
{
    const unsigned (*t)[6] = ctx;
    return t[a][b];
}

static void test_prefer_gpus(void)
{
    /* Free slots: GPU 0 two, GPU 1 one, GPU 2 three, GPU 3 three. */
    cg_unit avail[] = {{0, 4}, {0, 1}, {1, 7}, {2, 0}, {2, 1}, {2, 2}, {3, 5}, {3, 6}, {3, 7}};
    size_t n = sizeof avail / sizeof *avail, out[4];
    CHECK(cg_units_prefer_gpus(avail, n, NULL, 0, 2, pairs_cost, NULL, out) == CG_PREFER_OK &&
              avail[out[0]].gpu == 2 && avail[out[0]].n == 0 && avail[out[1]].gpu == 3 &&
              avail[out[1]].n == 5, "2 GPUs: the NVLink pair with the most free slots (2, 3)");
    cg_unit must1[] = {{1, 7}};
    CHECK(cg_units_prefer_gpus(avail, n, must1, 1, 2, pairs_cost, NULL, out) == CG_PREFER_OK &&
              avail[out[0]].gpu == 0 && avail[out[0]].n == 1 && out[1] == 2,
          "must GPU 1: its NVLink peer 0 beside it");
    CHECK(cg_units_prefer_gpus(avail, n, NULL, 0, 3, pairs_cost, NULL, out) == CG_PREFER_OK &&
              avail[out[0]].gpu == 0 && avail[out[1]].gpu == 2 && avail[out[2]].gpu == 3,
          "3 GPUs: every set costs the same; the most free slots win (2, 3, then 0)");
    CHECK(cg_units_prefer_gpus(avail, n, NULL, 0, 4, pairs_cost, NULL, out) == CG_PREFER_OK,
          "all four");
    CHECK(cg_units_prefer_gpus(avail, n, NULL, 0, 5, pairs_cost, NULL, out) == CG_PREFER_NO_GPU,
          "five GPUs of four");
    cg_unit same[] = {{2, 0}, {2, 1}};
    CHECK(cg_units_prefer_gpus(avail, n, same, 2, 2, pairs_cost, NULL, out) ==
              CG_PREFER_SPLIT_MUST, "two must slots of one GPU");
    CHECK(cg_units_prefer_gpus(avail, n, must1, 1, 0, pairs_cost, NULL, out) ==
              CG_PREFER_TOO_FEW_MUST, "a must slot beyond the size");

    /* Random topologies (6 GPUs, levels at random) against brute force: the choice has the
     * least pairwise cost of any set of GPUs with a free slot and includes the must GPU. */
    static unsigned level[6][6];
    srand(777);
    for (int round = 0; round < 3000; round++) {
        for (unsigned a = 0; a < 6; a++)
            for (unsigned b = a + 1; b < 6; b++)
                level[a][b] = level[b][a] = cg_link_cost((cg_link)(rand() % CG_LINK__COUNT));
        cg_unit av[18];
        size_t na = 0;
        bool has[6] = {false};
        for (unsigned g = 0; g < 6; g++)
            for (unsigned k = (unsigned)rand() % 3; k > 0; k--) {
                av[na++] = (cg_unit){g, k};
                has[g] = true;
            }
        unsigned ngpu = 0;
        for (unsigned g = 0; g < 6; g++)
            ngpu += has[g];
        if (ngpu == 0)
            continue;
        size_t size = 1 + (size_t)rand() % ngpu, nm = rand() % 2 && na ? 1 : 0;
        cg_unit m[1] = {av[na ? (size_t)rand() % na : 0]};
        size_t o[6];
        cg_prefer_result r = cg_units_prefer_gpus(av, na, m, nm, size, table_cost, level, o);
        CHECK(r == CG_PREFER_OK, "round %d: %d", round, r);
        if (r != CG_PREFER_OK)
            continue;
        unsigned got = 0, mask = 0;
        for (size_t i = 0; i < size; i++) {
            CHECK(!(mask & (1u << av[o[i]].gpu)), "round %d: a GPU twice", round);
            mask |= 1u << av[o[i]].gpu;
        }
        for (size_t i = 0; i < size; i++)
            for (size_t j = i + 1; j < size; j++)
                got += level[av[o[i]].gpu][av[o[j]].gpu];
        unsigned best = ~0u;
        for (unsigned set = 0; set < 64; set++) {
            if ((size_t)__builtin_popcount(set) != size || (nm && !(set & (1u << m[0].gpu))))
                continue;
            bool ok = true;
            unsigned c = 0;
            for (unsigned a = 0; a < 6; a++)
                if (set & (1u << a)) {
                    ok = ok && has[a];
                    for (unsigned b = a + 1; b < 6; b++)
                        if (set & (1u << b))
                            c += level[a][b];
                }
            if (ok && c < best)
                best = c;
        }
        CHECK(got == best && (!nm || (mask & (1u << m[0].gpu))), "round %d: cost %u, best %u",
              round, got, best);
    }
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
                         "[{\"index\":4096,\"uuid\":\"x\",\"capacity\":1}]",
                         "[{\"index\":0,\"uuid\":\"x\",\"capacity\":1,\"topology\":[]}]",
                         "[{\"index\":0,\"uuid\":\"x\",\"capacity\":1,\"topology\":{\"1\":\"warp\"}}]",
                         "[{\"index\":0,\"uuid\":\"x\",\"capacity\":1,\"topology\":{\"0\":\"nvlink\"}}]",
                         "[{\"index\":0,\"uuid\":\"x\",\"capacity\":1,\"topology\":{\"x1\":\"nvlink\"}}]",
                         "[{\"index\":0,\"uuid\":\"x\",\"capacity\":1,\"topology\":{\"1\":3}}]"};
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

static const struct dp_config config = {.unit_bytes = 256 * MIB, .gpu_slots = 8, .poll_ms = 1000};

static int alloc(const struct dp_inventory *inv, cg_unit_kind kind, size_t n, const char **ids,
                 struct dp_grant *g, char *msg)
{
    return dp_allocate_on(inv, &config, kind, ids, n, g, msg, 256);
}

/* The grant's record as convgpud gets it; "" when it does not fit. */
static const char *body_of(const struct dp_grant *g)
{
    static char buf[DP_MAX_GPUS * 6 + 64];
    return dp_grant_body(g, buf, sizeof buf) == 0 ? buf : "";
}

static void test_allocate(void)
{
    dp_configure(&config);
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

    struct dp_grant g;
    char msg[256];
    const char *good[] = {"gpu1-mem-0", "gpu1-mem-3", "gpu1-mem-2"};
    CHECK(alloc(&inv, CG_UNIT_MEMORY, 3, good, &g, msg) == DP_OK && g.bytes == 805306368 &&
              g.device == 1 && strcmp(dp_grant_env(g.kind), "CONVGPU_ALLOCATION") == 0 &&
              strcmp(body_of(&g), "{\"gpu_memory\": 805306368, \"device\": 1}") == 0,
          "3 units of GPU 1: %s %s", body_of(&g), msg);
    const char *compute[] = {"gpu0-compute-7", "gpu0-compute-8"};
    CHECK(alloc(&inv, CG_UNIT_COMPUTE, 2, compute, &g, msg) == DP_OK && g.compute == 2 &&
              strcmp(dp_grant_env(g.kind), "CONVGPU_ALLOCATION_COMPUTE") == 0 &&
              strcmp(body_of(&g), "{\"gpu_compute\": 2}") == 0,
          "2%% of GPU 0, the GPU left to the memory units: %s %s", body_of(&g), msg);

    /* Memory units of two GPUs (a multi-GPU pod's total): no GPU named, the daemon places. */
    const char *split[] = {"gpu0-mem-1", "gpu1-mem-1"};
    CHECK(alloc(&inv, CG_UNIT_MEMORY, 2, split, &g, msg) == DP_OK && g.device == -1 &&
              strcmp(body_of(&g), "{\"gpu_memory\": 536870912}") == 0,
          "2 units of 2 GPUs: %s %s", body_of(&g), msg);
    /* The node operator's options (--priority 7 --no-swap --exclusive) ride on every memory
     * record, and on nothing else. */
    struct dp_config op = config;
    op.has_priority = true;
    op.priority = 7;
    op.no_swap = op.exclusive = true;
    CHECK(dp_allocate_on(&inv, &op, CG_UNIT_MEMORY, good, 3, &g, msg, 256) == DP_OK &&
              strcmp(body_of(&g), "{\"gpu_memory\": 805306368, \"device\": 1, \"priority\": 7, "
                                  "\"swap\": false, \"exclusive\": true}") == 0,
          "the operator's options in the memory record: %s %s", body_of(&g), msg);
    op = config;
    op.has_priority = true; /* priority 0 given is written: it is the operator's word */
    CHECK(dp_allocate_on(&inv, &op, CG_UNIT_MEMORY, split, 2, &g, msg, 256) == DP_OK &&
              strcmp(body_of(&g), "{\"gpu_memory\": 536870912, \"priority\": 0}") == 0,
          "--priority 0 alone: %s %s", body_of(&g), msg);
    op.no_swap = true;
    CHECK(dp_allocate_on(&inv, &op, CG_UNIT_COMPUTE, compute, 2, &g, msg, 256) == DP_OK &&
              strcmp(body_of(&g), "{\"gpu_compute\": 2}") == 0,
          "... not in the compute record: %s %s", body_of(&g), msg);
    list = dp_list_units(&inv, CG_UNIT_SLOT, &n);
    CHECK(list && n == 16 && strcmp(list[8].id, "gpu1-slot-0") == 0 && list[15].healthy,
          "8 slots per GPU");
    free(list);
    const char *slots[] = {"gpu1-slot-3", "gpu0-slot-7"};
    CHECK(alloc(&inv, CG_UNIT_SLOT, 2, slots, &g, msg) == DP_OK && g.ngpus == 2 &&
              strcmp(dp_grant_env(g.kind), "CONVGPU_ALLOCATION_GPUS") == 0 &&
              strcmp(body_of(&g), "{\"devices\": [0, 1]}") == 0,
          "slots of GPUs 1 and 0: devices [0, 1] (%s) %s", body_of(&g), msg);
    /* The largest grant's body fits: 64 GPUs of index up to 1023. */
    struct dp_grant big = {.kind = CG_UNIT_SLOT, .ngpus = DP_MAX_GPUS};
    for (size_t i = 0; i < DP_MAX_GPUS; i++)
        big.gpus[i] = 1023 - (unsigned)i;
    char small[16];
    CHECK(body_of(&big)[0] == '{' && dp_grant_body(&big, small, sizeof small) == -1,
          "64 GPUs fit the plugin's buffer, not 16 bytes");

    /* convgpud's answer to the record, mapped in one place (state.c). */
    struct { long status; int code; } map[] = {
        {201, DP_OK}, {0, DP_UNAVAILABLE}, {403, DP_PERMISSION_DENIED},
        {507, DP_RESOURCE_EXHAUSTED}, {400, DP_FAILED_PRECONDITION},
        {409, DP_FAILED_PRECONDITION}, {500, DP_UNAVAILABLE}, {503, DP_UNAVAILABLE},
        {200, DP_UNAVAILABLE},
    };
    for (size_t i = 0; i < sizeof map / sizeof *map; i++)
        CHECK(dp_code_of_status(map[i].status) == map[i].code, "HTTP %ld -> %d, not %d",
              map[i].status, dp_code_of_status(map[i].status), map[i].code);

    struct { const char *ids[3]; size_t n; cg_unit_kind kind; int code; const char *says; } bad[] = {
        {{"gpu0-mem-x"}, 1, CG_UNIT_MEMORY, DP_INVALID_ARGUMENT, "unknown device ID"},
        {{"gpu0-compute-1"}, 1, CG_UNIT_MEMORY, DP_INVALID_ARGUMENT, "not of convgpu.io/gpu-memory"},
        {{"gpu2-mem-0"}, 1, CG_UNIT_MEMORY, DP_INVALID_ARGUMENT, "no such GPU"},
        {{"gpu1-mem-4"}, 1, CG_UNIT_MEMORY, DP_INVALID_ARGUMENT, "beyond that GPU's units"},
        {{"gpu0-slot-1", "gpu0-slot-2"}, 2, CG_UNIT_SLOT, DP_INVALID_ARGUMENT, "on one GPU"},
        {{"gpu1-slot-8"}, 1, CG_UNIT_SLOT, DP_INVALID_ARGUMENT, "beyond that GPU's units"},
        {{"gpu0-mem-1"}, 1, CG_UNIT_SLOT, DP_INVALID_ARGUMENT, "not of convgpu.io/gpu"},
        {{"gpu0-mem-1", "gpu0-mem-1"}, 2, CG_UNIT_MEMORY, DP_INVALID_ARGUMENT, "twice"},
        {{NULL}, 0, CG_UNIT_MEMORY, DP_INVALID_ARGUMENT, "no device IDs"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        msg[0] = 0;
        int code = alloc(&inv, bad[i].kind, bad[i].n, bad[i].ids, &g, msg);
        CHECK(code == bad[i].code && strstr(msg, bad[i].says), "case %zu: %d %s", i, code, msg);
    }
    struct dp_inventory gone, down;
    struct dp_inventory only0;
    inventory_of(&only0, "[{\"index\":0,\"uuid\":\"GPU-a\",\"capacity\":5368709120}]");
    dp_inventory_merge(&inv, &only0, &gone);
    CHECK(alloc(&gone, CG_UNIT_MEMORY, 1, good, &g, msg) == DP_FAILED_PRECONDITION &&
              strstr(msg, "no longer listed"), "GPU 1 gone: %s", msg);
    list = dp_list_units(&gone, CG_UNIT_MEMORY, &n);
    CHECK(list && n == 24 && list[0].healthy && !list[20].healthy, "GPU 1's units Unhealthy");
    free(list);
    dp_inventory_merge(&inv, NULL, &down);
    CHECK(alloc(&down, CG_UNIT_MEMORY, 1, good, &g, msg) == DP_UNAVAILABLE &&
              strstr(msg, "not reachable"), "daemon down: %s", msg);

    /* GetPreferredAllocation: validated, then best fit. */
    const char *avail[] = {"gpu0-mem-0", "gpu0-mem-1", "gpu0-mem-2", "gpu1-mem-0", "gpu1-mem-1"};
    size_t out[5];
    CHECK(dp_prefer(CG_UNIT_MEMORY, avail, 5, NULL, 0, 2, out, msg, sizeof msg) == DP_OK &&
              out[0] == 3 && out[1] == 4, "2 units: GPU 1 (best fit): %s", msg);
    CHECK(dp_prefer(CG_UNIT_MEMORY, avail, 5, NULL, 0, 4, out, msg, sizeof msg) == DP_OK &&
              out[0] == 0 && out[1] == 1 && out[2] == 2 && out[3] == 3,
          "4 units: no GPU has them, GPU 0's 3 and GPU 1's first: %s", msg);
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

    /* Slots weigh the topology convgpud reports: GPUs 1 and 2 are NVLink peers. */
    struct dp_inventory topo;
    inventory_of(&topo, "[{\"index\":0,\"uuid\":\"a\",\"capacity\":1,\"topology\":{\"1\":\"system\",\"2\":\"system\"}},"
                        "{\"index\":1,\"uuid\":\"b\",\"capacity\":1,\"topology\":{\"0\":\"system\",\"2\":\"nvlink\"}},"
                        "{\"index\":2,\"uuid\":\"c\",\"capacity\":1,\"topology\":{\"0\":\"system\",\"1\":\"nvlink\"}}]");
    CHECK(topo.gpus[1].nlinks == 2 && dp_gpu_cost(&topo, 1, 2) == cg_link_cost(CG_LINK_NVLINK) &&
              dp_gpu_cost(&topo, 0, 2) == cg_link_cost(CG_LINK_SYSTEM) &&
              dp_gpu_cost(&topo, 0, 9) == cg_link_cost(CG_LINK_SYSTEM), "the links read");
    const char *sl[] = {"gpu0-slot-0", "gpu0-slot-1", "gpu1-slot-0", "gpu2-slot-0"};
    CHECK(dp_prefer_on(&topo, CG_UNIT_SLOT, sl, 4, NULL, 0, 2, out, msg, sizeof msg) == DP_OK &&
              out[0] == 2 && out[1] == 3, "2 GPUs: the NVLink pair, not GPU 0 with more slots: %s",
          msg);
    CHECK(dp_prefer_on(&topo, CG_UNIT_SLOT, sl, 4, NULL, 0, 4, out, msg, sizeof msg) ==
              DP_FAILED_PRECONDITION && strstr(msg, "fewer than 4 GPUs"), "%s", msg);
    const char *two_of_one[] = {"gpu0-slot-0", "gpu0-slot-1"};
    CHECK(dp_prefer_on(&topo, CG_UNIT_SLOT, sl, 4, two_of_one, 2, 2, out, msg, sizeof msg) ==
              DP_INVALID_ARGUMENT && strstr(msg, "on one GPU"), "%s", msg);
}

/* A GPU that promises more than it has (convgpud --oversubscribe): its units are advertised
 * from "promised", one container's units on one GPU stay within its capacity. */
static void test_oversubscribed(void)
{
    dp_configure(&config);
    struct dp_inventory inv, old;
    char msg[256] = "";
    /* GPU 0: 1 GiB promised as 2 GiB (8 units, 4 of memory); GPU 1: a daemon before the
     * factor (no "promised"): its capacity, 4 units. */
    inventory_of(&inv, "[{\"index\":0,\"uuid\":\"GPU-a\",\"capacity\":1073741824,"
                       "\"promised\":2147483648},"
                       "{\"index\":1,\"uuid\":\"GPU-b\",\"capacity\":1073741824}]");
    CHECK(inv.gpus[0].promised == 2147483648ull && inv.gpus[1].promised == 1073741824ull,
          "promised read, and the capacity without it");
    size_t n = 0;
    struct dp_device *list = dp_list_units(&inv, CG_UNIT_MEMORY, &n);
    CHECK(list && n == 12 && strcmp(list[7].id, "gpu0-mem-7") == 0 &&
              strcmp(list[8].id, "gpu1-mem-0") == 0, "8 units of GPU 0, 4 of GPU 1: %zu", n);
    free(list);
    list = dp_list_units(&inv, CG_UNIT_COMPUTE, &n);
    CHECK(list && n == 200, "compute stays 100 units per GPU: %zu", n);
    free(list);
    old = inv;
    inventory_of(&old, "[{\"index\":0,\"uuid\":\"GPU-a\",\"capacity\":1073741824},"
                       "{\"index\":1,\"uuid\":\"GPU-b\",\"capacity\":1073741824}]");
    CHECK(!dp_inventory_equal(&old, &inv), "a new factor is a change kubelet must see");
    const char *bad[] = {
        "[{\"index\":0,\"uuid\":\"x\",\"capacity\":1024,\"promised\":1023}]",
        "[{\"index\":0,\"uuid\":\"x\",\"capacity\":1024,\"promised\":\"2048\"}]",
        "[{\"index\":0,\"uuid\":\"x\",\"capacity\":1024,\"promised\":2048.5}]"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        json_t *j = json_loads(bad[i], 0, NULL);
        struct dp_inventory keep = inv;
        char err[256] = "";
        CHECK(j && dp_inventory_parse(j, &keep, err, sizeof err) == -1 &&
                  strstr(err, "promised") && dp_inventory_equal(&keep, &inv), "%s accepted",
              bad[i]);
        json_decref(j);
    }

    /* Allocate: a unit beyond the capacity's is one this node advertises; four on GPU 0 are
     * its whole memory; five on it are more than it has. */
    struct dp_grant g;
    const char *last[] = {"gpu0-mem-7"};
    CHECK(alloc(&inv, CG_UNIT_MEMORY, 1, last, &g, msg) == DP_OK && g.device == 0 &&
              g.bytes == 256 * MIB, "gpu0-mem-7: %s", msg);
    const char *four[] = {"gpu0-mem-4", "gpu0-mem-5", "gpu0-mem-6", "gpu0-mem-7"};
    CHECK(alloc(&inv, CG_UNIT_MEMORY, 4, four, &g, msg) == DP_OK && g.device == 0 &&
              g.bytes == 1024 * MIB, "4 units of GPU 0: %s", msg);
    const char *five[] = {"gpu0-mem-0", "gpu0-mem-1", "gpu0-mem-2", "gpu0-mem-3", "gpu0-mem-4"};
    msg[0] = '\0';
    CHECK(alloc(&inv, CG_UNIT_MEMORY, 5, five, &g, msg) == DP_INVALID_ARGUMENT &&
              strstr(msg, "exceed GPU 0's memory (1024 MiB)"), "5 units of GPU 0: %s", msg);
    const char *spread[] = {"gpu0-mem-0", "gpu0-mem-1", "gpu0-mem-2", "gpu1-mem-0", "gpu1-mem-1"};
    CHECK(alloc(&inv, CG_UNIT_MEMORY, 5, spread, &g, msg) == DP_OK && g.device == -1,
          "5 units over two GPUs (a multi-GPU pod's total): convgpud places them: %s", msg);

    /* GetPreferredAllocation never puts more of one GPU in a container than it has. */
    const char *avail[12];
    static char ids[12][32];
    for (int i = 0; i < 12; i++) {
        snprintf(ids[i], sizeof ids[i], "gpu%d-mem-%d", i < 8 ? 0 : 1, i < 8 ? i : i - 8);
        avail[i] = ids[i];
    }
    size_t out[12];
    CHECK(dp_prefer_on(&inv, CG_UNIT_MEMORY, avail, 12, NULL, 0, 4, out, msg, sizeof msg) ==
              DP_OK, "4 units: %s", msg);
    unsigned on0 = 0;
    for (int k = 0; k < 4; k++)
        on0 += out[k] < 8;
    CHECK(on0 == 0 || on0 == 4, "4 units on one GPU: %u of GPU 0", on0);
    CHECK(dp_prefer_on(&inv, CG_UNIT_MEMORY, avail, 12, NULL, 0, 6, out, msg, sizeof msg) ==
              DP_OK, "6 units: %s", msg);
    on0 = 0;
    for (int k = 0; k < 6; k++) {
        on0 += out[k] < 8;
        CHECK(out[k] < 12 && strcmp(avail[out[k]], ids[out[k]]) == 0, "a position in avail");
    }
    CHECK(on0 <= 4 && 6 - on0 <= 4, "6 units: at most 4 of each GPU (%u of GPU 0)", on0);
    CHECK(dp_prefer_on(&inv, CG_UNIT_MEMORY, avail, 12, NULL, 0, 9, out, msg, sizeof msg) ==
              DP_INVALID_ARGUMENT && strstr(msg, "memory holds"), "9 units: %s", msg);
    /* A must-include unit beyond the capacity's count is kept, and chosen. */
    const char *must[] = {"gpu0-mem-7"};
    CHECK(dp_prefer_on(&inv, CG_UNIT_MEMORY, avail, 12, must, 1, 2, out, msg, sizeof msg) ==
              DP_OK && (out[0] == 7 || out[1] == 7), "must gpu0-mem-7: %s", msg);
}

int main(void)
{
    test_ids();
    test_prefer();
    test_prefer_model();
    test_prefer_reference();
    test_prefer_gpus();
    test_inventory();
    test_allocate();
    test_oversubscribed();
    if (failures)
        fprintf(stderr, "%d failure(s)\n", failures);
    else
        printf("all passed\n");
    return failures != 0;
}

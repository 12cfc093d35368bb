/* test_place.c — seed 003's placements in the core (issue 22 item 3): load-balance
 * (place_load_balance.c) and standalone (place_standalone.c) on hand-built states — the least
 * summed utilisation, how a container of unknown utilisation counts, the tie rules, the paper's
 * Figure 4(a) and 4(b) sequences, equal applications grouped, an empty device before a mixed
 * one, memory staying a hard limit — names, what cg_container_info shows and restore keeps, an
 * exclusive container under each, and a utilisation above 100% refused with nothing changed;
 * interference (place_interference.c): a table of residents and newcomers against a matrix.
 * cg_core_check after every step. */
#include <stdio.h>
#include <string.h>

#include "core_test.h"

/* A check whose condition says it all: check.h's CHECK with no further message. */
#define EXPECT(cond) CHECK(cond, "%s", "")

static unsigned nevents;
static void count(void *ctx, const cg_event *ev)
{
    (void)ctx;
    (void)ev;
    nevents++;
}

static cg_core *mk(cg_placement_policy p, unsigned ndev, cg_bytes cap)
{
    cg_config cfg = {.placement = p, .sink = count};
    cg_core *core = cg_core_new(&cfg);
    for (unsigned i = 0; i < ndev; i++)
        cg_device_add(core, cap, 0, 0, NULL);
    return core;
}

/* Creates a container (device < 0: placed) and returns its device, or -1 on failure. */
static int put(cg_core *core, int device, cg_bytes limit, unsigned util, uint64_t app)
{
    cg_container_spec spec = {.device = device, .limit = limit, .util_pct = util, .app = app};
    cg_cid cid;
    cg_container_info ci;
    if (cg_container_create_spec(core, &spec, 0, &cid) != CG_OK ||
        cg_container_get(core, cid, 0, &ci) != CG_OK)
        return -1;
    CHECK_CORE(core);
    return (int)ci.device;
}

static void test_names(void)
{
    cg_placement_policy p;
    EXPECT(cg_placement_policy_parse("load-balance", &p) && p == CG_PLACE_LOAD_BALANCE);
    EXPECT(cg_placement_policy_parse("standalone", &p) && p == CG_PLACE_STANDALONE);
    EXPECT(strcmp(cg_placement_policy_name(CG_PLACE_LOAD_BALANCE), "load-balance") == 0);
    EXPECT(strcmp(cg_placement_policy_name(CG_PLACE_STANDALONE), "standalone") == 0);
    EXPECT(!cg_placement_policy_parse("load_balance", &p));
}

/* Least summed utilisation wins, whatever the memory; unknown counts its hard share, else 0. */
static void test_load_balance(void)
{
    cg_core *core = mk(CG_PLACE_LOAD_BALANCE, 4, 100);
    EXPECT(put(core, 0, 10, 50, 0) == 0);          /* dev0: 50 */
    EXPECT(put(core, 1, 10, 30, 0) == 1);
    EXPECT(put(core, 1, 10, 10, 0) == 1);          /* dev1: 40 */
    /* dev2: a hard 45% share of unknown utilisation counts 45. */
    cg_container_spec hard = {.device = 2, .limit = 10, .compute_pct = 45,
                              .compute_mode = CG_COMPUTE_HARD};
    cg_cid cid;
    EXPECT(cg_container_create_spec(core, &hard, 0, &cid) == CG_OK);
    EXPECT(put(core, 3, 80, 60, 0) == 3);          /* dev3: 60, little room */
    EXPECT(put(core, -1, 10, 20, 0) == 1);         /* the least sum, 40, not the most room */
    /* Now dev1: 60 with 70 free, dev3: 20 free; 75 fits dev0 (50) and dev2 (45): dev2. */
    EXPECT(put(core, -1, 75, 5, 0) == 2);
    cg_core_free(core);

    /* Unknown utilisation and no share counts 0: the device with it ties with an empty one,
     * and the tie goes to the most room, then the lowest index. */
    core = mk(CG_PLACE_LOAD_BALANCE, 3, 100);
    EXPECT(put(core, 0, 30, 0, 0) == 0);           /* dev0: load 0, 70 free */
    EXPECT(put(core, 2, 10, 0, 0) == 2);           /* dev2: load 0, 90 free */
    EXPECT(put(core, -1, 10, 0, 0) == 1);          /* dev1: load 0, 100 free */
    EXPECT(put(core, -1, 10, 0, 0) == 1);          /* dev1 90 = dev2 90: lowest index */
    cg_core_free(core);
}

/* Seed 003's Table 3 applications on four 12 GB GPUs (MB), in the paper's orders. */
enum { L = 1, G, T, Q };
static const struct { cg_bytes mem; unsigned util; } app3[] = {
    [L] = {8300, 23}, [G] = {600, 71}, [T] = {3500, 88}, [Q] = {5300, 47}};

/* Figure 4(a): the busiest first, each to the least summed utilisation. */
static void test_figure_4a(void)
{
    static const int order[] = {T, T, G, G, Q, Q, L, L}, want[] = {0, 1, 2, 3, 2, 3, 0, 1};
    cg_core *core = mk(CG_PLACE_LOAD_BALANCE, 4, 12000);
    for (unsigned i = 0; i < 8; i++)
        EXPECT(put(core, -1, app3[order[i]].mem, app3[order[i]].util, (uint64_t)order[i]) ==
              want[i]);
    cg_core_free(core);
}

/* Figure 4(b), submitted largest first as binpack's 4(c) is: each application joins its own
 * group while it fits (the two LAMMPS do not: 16.6 GB > 12 GB), starts one on an empty device
 * otherwise, and GROMACS, with no group or empty device left, goes to the least busy device. */
static void test_figure_4b(void)
{
    static const int order[] = {L, L, Q, Q, T, T, G, G}, want[] = {0, 1, 2, 2, 3, 3, 0, 1};
    cg_core *core = mk(CG_PLACE_STANDALONE, 4, 12000);
    for (unsigned i = 0; i < 8; i++)
        EXPECT(put(core, -1, app3[order[i]].mem, app3[order[i]].util, (uint64_t)order[i]) ==
              want[i]);
    cg_core_free(core);
}

static void test_standalone(void)
{
    cg_core *core = mk(CG_PLACE_STANDALONE, 4, 100);
    EXPECT(put(core, 0, 10, 10, 7) == 0);          /* dev0: one of app 7 */
    EXPECT(put(core, 1, 10, 10, 7) == 1);
    EXPECT(put(core, 1, 10, 10, 7) == 1);          /* dev1: two of app 7 */
    EXPECT(put(core, 2, 10, 10, 7) == 2);
    EXPECT(put(core, 2, 10, 10, 8) == 2);          /* dev2: mixed */
    /* The group with most of app 7, not the emptier dev0 nor the empty dev3. */
    EXPECT(put(core, -1, 10, 90, 7) == 1);
    /* A new application takes the empty device, not a group nor the least loaded. */
    EXPECT(put(core, -1, 10, 90, 9) == 3);
    /* App 8 has no pure group (dev2 is mixed), no empty device: least loaded, dev0 (10). */
    EXPECT(put(core, -1, 10, 90, 8) == 0);
    /* Unknown application: least summed load, whatever groups exist: dev2 (20) over dev0
     * (100), dev1 (110) and dev3 (90). */
    EXPECT(put(core, -1, 10, 0, 0) == 2);
    /* The group that does not fit is passed over: dev1 has 70 free, app 7 asking 75 goes to
     * the least-loaded device that fits (dev0: 100 with 80 free, dev3: 90 with 90 free). */
    EXPECT(put(core, -1, 75, 5, 7) == 3);
    cg_core_free(core);
}

/* util/app are shown and restored; above 100% is refused with nothing changed. */
static void test_info_restore_invalid(void)
{
    cg_core *core = mk(CG_PLACE_LOAD_BALANCE, 2, 100);
    cg_container_spec spec = {.device = -1, .limit = 10, .util_pct = 42, .app = 0xabcdefull};
    cg_cid cid;
    cg_container_info ci;
    EXPECT(cg_container_create_spec(core, &spec, 0, &cid) == CG_OK);
    EXPECT(cg_container_get(core, cid, 0, &ci) == CG_OK && ci.util_pct == 42 &&
          ci.app == 0xabcdefull);
    spec.device = 1;
    spec.util_pct = 100;
    EXPECT(cg_container_restore_spec(core, &spec, 5, 0, &cid) == CG_OK);
    EXPECT(cg_container_get(core, cid, 0, &ci) == CG_OK && ci.util_pct == 100 &&
          ci.app == 0xabcdefull && ci.assigned == 5);
    CHECK_CORE(core);
    unsigned before = nevents;
    spec.util_pct = 101;
    EXPECT(cg_container_restore_spec(core, &spec, 5, 0, &cid) == CG_ERR_INVALID);
    spec.device = -1;
    EXPECT(cg_container_create_spec(core, &spec, 0, &cid) == CG_ERR_INVALID);
    spec.util_pct = 1000000;
    EXPECT(cg_container_create_spec(core, &spec, 0, &cid) == CG_ERR_INVALID);
    EXPECT(nevents == before);
    cg_device_info di;
    EXPECT(cg_device_get(core, 0, &di) == CG_OK && di.ncontainers == 1);
    EXPECT(cg_device_get(core, 1, &di) == CG_OK && di.ncontainers == 1);
    CHECK_CORE(core);
    cg_core_free(core);
}

/* An exclusive container under either policy takes the largest empty device, as least-loaded
 * would (every empty device has load 0). */
static void test_exclusive(void)
{
    for (cg_placement_policy p = CG_PLACE_LOAD_BALANCE; p <= CG_PLACE_STANDALONE; p++) {
        cg_config cfg = {.placement = p};
        cg_core *core = cg_core_new(&cfg);
        cg_device_add(core, 50, 0, 0, NULL);
        cg_device_add(core, 80, 0, 0, NULL);
        cg_device_add(core, 60, 0, 0, NULL);
        cg_container_spec spec = {.device = -1, .exclusive = true, .util_pct = 30, .app = 3};
        cg_cid cid;
        cg_container_info ci;
        EXPECT(cg_container_create_spec(core, &spec, 0, &cid) == CG_OK);
        EXPECT(cg_container_get(core, cid, 0, &ci) == CG_OK && ci.device == 1);
        /* Standalone does not join an exclusive container's device, same application or not. */
        EXPECT(put(core, -1, 10, 30, 3) == 2);
        CHECK_CORE(core);
        cg_core_free(core);
    }
}

/* Seed 003's matrix for interference placement: apps 1..4; 0 for unmeasured pairs. */
static uint32_t matrix(void *ctx, uint64_t fg, uint64_t bg)
{
    (void)ctx;
    if (fg == 1 && bg == 2)
        return 1800;   /* app 1 beside app 2: 1.8x */
    if (fg == 3 && bg == 1)
        return 1300;   /* app 3 beside app 1: 1.3x (so app 1 slows app 3 when it joins it) */
    if (fg == 1 && bg == 4)
        return 900;    /* a speed-up counts as none */
    return 0;
}

/* interference: a table of (residents per device, newcomer) -> device, with its reason. */
static void test_interference(void)
{
    struct {
        const char *why;
        uint64_t apps[3];     /* one resident per device (0: none), each 10 of 100, util 20 */
        uint64_t app;         /* the newcomer */
        cg_bytes limit;
        int want;
    } rows[] = {
        {"beside app 2 costs 1.8, beside app 3 1.3 (the other way round): device 1", {2, 3, 2}, 1, 10, 1},
        {"an unmeasured neighbour is as good as none: device 2 by load", {2, 3, 5}, 1, 10, 2},
        {"a speed-up costs nothing: device 2 (4) before 0 (2) and 1 (3)", {2, 3, 4}, 1, 10, 2},
        {"memory stays a hard limit: device 0 is the only one with room", {2, 3, 5}, 1, 95, 0},
        {"unknown application: least load (device 2 is empty)", {2, 3, 0}, 0, 10, 2},
        {"app 3 avoids app 1, whichever way the row reads", {1, 1, 2}, 3, 10, 2},
    };
    for (size_t k = 0; k < sizeof rows / sizeof rows[0]; k++) {
        cg_config cfg = {.placement = CG_PLACE_INTERFERENCE, .sink = count, .slowdown = matrix};
        cg_core *core = cg_core_new(&cfg);
        for (unsigned i = 0; i < 3; i++)
            cg_device_add(core, 100, 0, 0, NULL);
        /* The "memory" row fills devices 1 and 2 first. */
        for (unsigned i = 0; i < 3; i++)
            if (rows[k].apps[i])
                EXPECT(put(core, (int)i, rows[k].limit == 95 && i ? 95 : 10, 20, rows[k].apps[i]) ==
                       (int)i);
        int got = put(core, -1, rows[k].limit == 95 ? 80 : rows[k].limit, 20, rows[k].app);
        CHECK(got == rows[k].want, "%s: device %d", rows[k].why, got);
        cg_core_free(core);
    }
    /* Without a matrix it is load-balance. */
    cg_core *core = mk(CG_PLACE_INTERFERENCE, 2, 100);
    EXPECT(put(core, 0, 10, 10, 2) == 0);
    EXPECT(put(core, 1, 10, 50, 3) == 1);
    EXPECT(put(core, -1, 10, 20, 1) == 0);
    cg_core_free(core);
    cg_placement_policy p;
    EXPECT(cg_placement_policy_parse("interference", &p) && p == CG_PLACE_INTERFERENCE);
}

int main(void)
{
    test_names();
    test_interference();
    test_load_balance();
    test_figure_4a();
    test_figure_4b();
    test_standalone();
    test_info_restore_invalid();
    test_exclusive();
    if (failures) {
        fprintf(stderr, "%d failure(s)\n", failures);
        return 1;
    }
    printf("test_place: ok\n");
    return 0;
}

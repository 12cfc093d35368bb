/* test_exclusive.c — exclusive containers in the core (exclusive.c): admission on a named
 * device (busy refused, the capacity as the default limit, a limit above it refused), placement
 * (an exclusive container takes an empty device as each placement policy would; the others
 * avoid a held device, and learn why when none is left), removal freeing the device, restore,
 * and every refusal leaving state and event stream unchanged. cg_core_check after every step. */
#include <stdio.h>
#include <string.h>

#include "core.h"
#include "core_test.h"

static unsigned nevents;
static void count(void *ctx, const cg_event *ev)
{
    (void)ctx;
    (void)ev;
    nevents++;
}

/* Devices of the given capacities, placement p. */
static cg_core *mk(cg_placement_policy p, const cg_bytes *caps, unsigned n)
{
    cg_config cfg = {.placement = p, .sink = count};
    cg_core *core = cg_core_new(&cfg);
    for (unsigned i = 0; i < n; i++)
        CHECK(cg_device_add(core, caps[i], 0, 0, NULL) == CG_OK, "device %u", i);
    return core;
}

static cg_status create(cg_core *core, int device, cg_bytes limit, bool exclusive, cg_cid *cid)
{
    cg_container_spec spec = {.device = device, .limit = limit, .exclusive = exclusive};
    return cg_container_create_spec(core, &spec, 0, cid);
}

static cg_cid holder(const cg_core *core, unsigned dev)
{
    cg_device_info di = {0};
    cg_device_get(core, dev, &di);
    return di.exclusive;
}

static void test_named_device(void)
{
    const cg_bytes caps[] = {100};
    cg_core *core = mk(CG_PLACE_FIRST_FIT, caps, 1);
    cg_cid x, a, bad;
    CHECK(create(core, 0, 0, true, &x) == CG_OK, "exclusive without a limit");
    CHECK(info(core, x).limit == 100 && info(core, x).assigned == 100 && info(core, x).exclusive,
          "takes the whole capacity: limit %llu", (unsigned long long)info(core, x).limit);
    CHECK(holder(core, 0) == x, "device names its holder");
    unsigned ev = nevents;
    CHECK(create(core, 0, 1, false, &bad) == CG_ERR_EXCLUSIVE, "a named held device refuses");
    CHECK(create(core, -1, 1, false, &bad) == CG_ERR_EXCLUSIVE, "placement: only device held");
    CHECK(create(core, 0, 0, true, &bad) == CG_ERR_BUSY, "a second exclusive: busy");
    CHECK(nevents == ev, "refusals emit nothing (%u events)", nevents - ev);
    CHECK_CORE(core);
    CHECK(cg_container_set_limit(core, x, 101, 0, NULL) == CG_ERR_TOO_LARGE, "still bounded");
    CHECK(cg_container_remove(core, x, 0) == CG_OK && holder(core, 0) == CG_CID_NONE,
          "removal frees the device");
    CHECK(create(core, 0, 10, false, &a) == CG_OK, "then others are admitted");
    ev = nevents;
    CHECK(create(core, 0, 0, true, &bad) == CG_ERR_BUSY, "exclusive on a busy device");
    CHECK(create(core, -1, 0, true, &bad) == CG_ERR_BUSY, "placed: no empty device");
    CHECK(create(core, 0, 101, true, &bad) == CG_ERR_TOO_LARGE, "above capacity");
    CHECK(nevents == ev && info(core, a).limit == 10, "refusals changed nothing");
    CHECK_CORE(core);
    cg_core_free(core);
}

static void test_placement(void)
{
    const cg_bytes caps[] = {100, 300, 200};
    /* Placement among empty devices: first-fit the lowest index, least-loaded the largest,
     * binpack the smallest that holds the limit. */
    const struct { cg_placement_policy p; cg_bytes limit; unsigned dev; } cases[] = {
        {CG_PLACE_FIRST_FIT, 0, 0},     {CG_PLACE_LEAST_LOADED, 0, 1}, {CG_PLACE_BINPACK, 0, 0},
        {CG_PLACE_FIRST_FIT, 150, 1},   {CG_PLACE_BINPACK, 150, 2},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        cg_core *core = mk(cases[k].p, caps, 3);
        cg_cid x;
        CHECK(create(core, -1, cases[k].limit, true, &x) == CG_OK, "case %zu", k);
        CHECK(info(core, x).device == cases[k].dev, "case %zu: device %u, want %u", k,
              info(core, x).device, cases[k].dev);
        CHECK(info(core, x).limit == (cases[k].limit ? cases[k].limit : caps[cases[k].dev]),
              "case %zu: limit", k);
        CHECK_CORE(core);
        cg_core_free(core);
    }

    /* Others avoid a held device, even when it has the most free memory, and an exclusive
     * container skips busy devices. */
    cg_core *core = mk(CG_PLACE_LEAST_LOADED, caps, 3);
    cg_cid x, a, b, y, bad;
    CHECK(create(core, 1, 10, true, &x) == CG_OK, "exclusive on device 1 with a small limit");
    CHECK(create(core, -1, 10, false, &a) == CG_OK && info(core, a).device == 2,
          "least-loaded skips the held (emptiest) device: got %u", info(core, a).device);
    CHECK(create(core, -1, 0, true, &y) == CG_OK && info(core, y).device == 0,
          "the next exclusive takes the only empty device: got %u", info(core, y).device);
    CHECK(create(core, -1, 150, false, &b) == CG_OK && info(core, b).device == 2, "room on 2");
    CHECK(create(core, -1, 250, false, &bad) == CG_ERR_EXCLUSIVE,
          "only the held device could hold 250: why is the exclusive holder");
    CHECK(create(core, -1, 1, true, &bad) == CG_ERR_BUSY, "no empty device is left");
    CHECK_CORE(core);
    /* Waiting placement (no device has the limit free) never waits on a held device. */
    CHECK(create(core, -1, 100, false, &bad) == CG_OK && info(core, bad).device == 2,
          "waits on device 2, not on held 0 or 1: got %u", info(core, bad).device);
    CHECK_CORE(core);
    cg_core_free(core);
}

static void test_restore(void)
{
    const cg_bytes caps[] = {100, 100};
    cg_core *core = mk(CG_PLACE_FIRST_FIT, caps, 2);
    cg_cid x, a, b;
    CHECK(cg_container_restore(core, 0, 100, 40, 1, &x) == CG_OK, "restore");
    CHECK(cg_container_restore_exclusive(core, x) == CG_OK && info(core, x).exclusive &&
              holder(core, 0) == x, "exclusive again");
    CHECK(cg_container_restore(core, 1, 10, 0, 2, &a) == CG_OK, "restore another");
    CHECK(cg_container_restore(core, 1, 10, 0, 3, &b) == CG_OK, "and a third beside it");
    CHECK(cg_container_restore_exclusive(core, a) == CG_ERR_BUSY && !info(core, a).exclusive &&
              holder(core, 1) == CG_CID_NONE, "not alone: stays shared, nothing changed");
    CHECK(cg_container_restore_exclusive(core, 999) == CG_ERR_NOT_FOUND, "unknown");
    CHECK_CORE(core);
    cg_core_free(core);
}

int main(void)
{
    test_named_device();
    test_placement();
    test_restore();
    if (failures)
        fprintf(stderr, "test_exclusive: %d failure(s)\n", failures);
    else
        printf("test_exclusive: ok\n");
    return failures != 0;
}

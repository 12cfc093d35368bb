/* test_topology.c — the link matrix and the choice of n devices (core/topology.c): a DGX-like
 * 8-GPU node (NVLink pairs 0-1, 2-3, 4-5, 6-7; a PCIe switch per four; two sockets) and a 4-GPU
 * PCIe box; the policies' tie-breaks; refusals that change nothing; and a brute-force
 * cross-check on random topologies and loads that the chosen set is a cheapest one. */
#include <stdio.h>
#include <string.h>

#include "core.h"
#include "check.h"

#define GIB (1ull << 30)

static cg_core *mk(cg_placement_policy p, unsigned ndev, cg_bytes cap)
{
    cg_config cfg = {.placement = p};
    cg_core *core = cg_core_new(&cfg);
    for (unsigned i = 0; i < ndev; i++)
        CHECK(cg_device_add(core, cap, 0, 0, NULL) == CG_OK, "device %u", i);
    return core;
}

static void set(cg_core *core, unsigned a, unsigned b, cg_link l)
{
    CHECK(cg_topology_set(core, a, b, l) == CG_OK, "set %u-%u %s", a, b, cg_link_name(l));
}

/* NVLink pairs 0-1, 2-3, 4-5, 6-7; {0,1,2,3} and {4,5,6,7} each behind one PCIe switch and on
 * one socket; across the sockets SYSTEM (left as the default on purpose: unset means SYSTEM). */
static cg_core *dgx(cg_placement_policy p)
{
    cg_core *core = mk(p, 8, 80 * GIB);
    for (unsigned s = 0; s < 8; s += 4)
        for (unsigned a = s; a < s + 4; a++)
            for (unsigned b = a + 1; b < s + 4; b++)
                set(core, a, b, (a ^ 1) == b ? CG_LINK_NVLINK : CG_LINK_SINGLE);
    return core;
}

/* Takes `bytes` of device d with a container of that limit. */
static void load(cg_core *core, unsigned d, cg_bytes bytes)
{
    cg_cid cid;
    CHECK(cg_container_create(core, (int)d, bytes, 0, &cid) == CG_OK, "load %u", d);
}

static cg_status place(const cg_core *core, cg_bytes limit, unsigned n, unsigned *out)
{
    cg_container_spec spec = {.device = -1, .limit = limit};
    return cg_place_devices(core, &spec, n, out);
}

static unsigned set_cost(const cg_core *core, const unsigned *s, unsigned n)
{
    unsigned c = 0;
    for (unsigned i = 0; i < n; i++)
        for (unsigned j = i + 1; j < n; j++)
            c += cg_link_cost(cg_topology_get(core, s[i], s[j]));
    return c;
}

static void test_links(void)
{
    cg_core *core = mk(CG_PLACE_FIRST_FIT, 4, 16 * GIB);
    CHECK(cg_topology_get(core, 0, 1) == CG_LINK_SYSTEM, "never set: SYSTEM");
    set(core, 1, 2, CG_LINK_NODE);
    CHECK(cg_topology_get(core, 2, 1) == CG_LINK_NODE, "symmetric");
    CHECK(cg_topology_set(core, 1, 1, CG_LINK_NVLINK) == CG_ERR_INVALID, "a == b");
    CHECK(cg_topology_set(core, 1, 4, CG_LINK_NVLINK) == CG_ERR_INVALID, "b not a device");
    CHECK(cg_topology_set(core, 4, 1, CG_LINK_NVLINK) == CG_ERR_INVALID, "a not a device");
    CHECK(cg_topology_set(core, 1, 2, CG_LINK__COUNT) == CG_ERR_INVALID, "unknown level");
    CHECK(cg_topology_set(core, 1, 2, (cg_link)-1) == CG_ERR_INVALID, "negative level");
    CHECK(cg_topology_set(NULL, 1, 2, CG_LINK_NVLINK) == CG_ERR_INVALID, "no core");
    CHECK(cg_topology_get(core, 1, 2) == CG_LINK_NODE, "refusals changed nothing");
    CHECK(cg_topology_get(core, 1, 1) == CG_LINK_SYSTEM && cg_topology_get(core, 9, 1) ==
          CG_LINK_SYSTEM, "no link to itself or to a missing device");
    for (unsigned l = 0; l + 1 < CG_LINK__COUNT; l++)
        CHECK(cg_link_cost((cg_link)l) < cg_link_cost((cg_link)(l + 1)), "costs rise: %u", l);
    for (unsigned l = 0; l < CG_LINK__COUNT; l++) {
        cg_link back;
        CHECK(cg_link_parse(cg_link_name((cg_link)l), &back) && back == (cg_link)l, "name %u", l);
    }
    cg_link x = CG_LINK_NODE;
    CHECK(!cg_link_parse("nvlinkx", &x) && !cg_link_parse("nvlin", &x) &&
          !cg_link_parse("", &x) && x == CG_LINK_NODE, "unknown names refused");
    CHECK(cg_link_name(CG_LINK__COUNT) == NULL && cg_link_cost(CG_LINK__COUNT) == 0, "bounds");
    CHECK(cg_core_check(core) == NULL, "invariants");
    cg_core_free(core);
}

static void test_dgx(void)
{
    cg_core *core = dgx(CG_PLACE_FIRST_FIT);
    unsigned out[8];
    CHECK(place(core, 10 * GIB, 2, out) == CG_OK && out[0] == 0 && out[1] == 1,
          "n=2: an NVLink pair (0,1), got %u,%u", out[0], out[1]);
    CHECK(place(core, 10 * GIB, 4, out) == CG_OK && out[0] == 0 && out[3] == 3,
          "n=4: one socket's four, got %u..%u", out[0], out[3]);
    CHECK(place(core, 10 * GIB, 8, out) == CG_OK && out[0] == 0 && out[7] == 7, "n=8: all");

    /* Device 1 full: 0's NVLink partner is gone; the pair 2-3 is still NVLink. */
    load(core, 1, 80 * GIB);
    CHECK(place(core, 10 * GIB, 2, out) == CG_OK && out[0] == 2 && out[1] == 3,
          "n=2 with 1 full: the next NVLink pair, got %u,%u", out[0], out[1]);
    /* Every NVLink pair broken on socket 0 (1 and 3 full), socket 1 full but 4: the best left
     * is two GPUs on one switch (0 and 2), not across the sockets. */
    load(core, 3, 80 * GIB);
    load(core, 5, 80 * GIB);
    load(core, 6, 80 * GIB);
    load(core, 7, 80 * GIB);
    CHECK(place(core, 10 * GIB, 2, out) == CG_OK && out[0] == 0 && out[1] == 2,
          "n=2, NVLink partners full: the same switch (0,2), got %u,%u", out[0], out[1]);
    CHECK(place(core, 10 * GIB, 3, out) == CG_OK && out[0] == 0 && out[1] == 2 && out[2] == 4,
          "n=3: the three that fit");
    CHECK(place(core, 10 * GIB, 4, out) == CG_ERR_NO_DEVICE, "n=4: only three fit");
    CHECK(place(core, 81 * GIB, 1, out) == CG_ERR_TOO_LARGE, "above every capacity");
    CHECK(place(core, 10 * GIB, 9, out) == CG_ERR_NO_DEVICE, "more than the node has");
    CHECK(cg_core_check(core) == NULL, "invariants");
    cg_core_free(core);
}

/* A 4-GPU PCIe box: {0,1} on one switch, {2,3} on another, both under one host bridge. */
static void test_pcie_box(void)
{
    cg_core *core = mk(CG_PLACE_LEAST_LOADED, 4, 16 * GIB);
    for (unsigned a = 0; a < 4; a++)
        for (unsigned b = a + 1; b < 4; b++)
            set(core, a, b, a / 2 == b / 2 ? CG_LINK_SINGLE : CG_LINK_HOSTBRIDGE);
    unsigned out[4];
    load(core, 0, 4 * GIB);
    /* least-loaded ranks 1, 2, 3, then 0 (fuller); 1-2 would be its first pair, but they are on
     * different switches: the cheapest sets are the two switches' pairs, and the one with the
     * most preferred device (1, with 0) wins. */
    CHECK(place(core, 4 * GIB, 2, out) == CG_OK && out[0] == 0 && out[1] == 1,
          "n=2: one switch's pair, got %u,%u", out[0], out[1]);
    load(core, 1, 13 * GIB);
    CHECK(place(core, 4 * GIB, 2, out) == CG_OK && out[0] == 2 && out[1] == 3,
          "n=2, 1 too full: the other switch, got %u,%u", out[0], out[1]);
    CHECK(place(core, 4 * GIB, 3, out) == CG_OK && out[0] == 0 && out[1] == 2 && out[2] == 3,
          "n=3: the three that fit");
    cg_core_free(core);
}

/* With no topology every pair ties: the policy alone chooses, as single placement does. */
static void test_tie_breaks(void)
{
    static const cg_bytes used[4] = {2 * GIB, 6 * GIB, 1 * GIB, 6 * GIB};
    struct { cg_placement_policy p; unsigned a, b, one; } want[] = {
        {CG_PLACE_FIRST_FIT, 0, 1, 1},
        {CG_PLACE_LEAST_LOADED, 0, 2, 1},
        {CG_PLACE_BINPACK, 1, 3, 1},
    };
    for (unsigned k = 0; k < sizeof want / sizeof want[0]; k++) {
        cg_core *core = mk(want[k].p, 4, 8 * GIB);
        for (unsigned d = 0; d < 4; d++)
            load(core, d, used[d]);
        unsigned out[2];
        const char *name = cg_placement_policy_name(want[k].p);
        CHECK(place(core, 1 * GIB, 2, out) == CG_OK && out[0] == want[k].a && out[1] == want[k].b,
              "%s: n=2 got %u,%u", name, out[0], out[1]);
        /* n=1 is GaiaGPU's fraction rule whatever the policy: the fullest that fits (1 and 3
         * tie at 2 GiB free; the lower index wins); with 3 GiB asked, the fullest is 0. */
        CHECK(place(core, 1 * GIB, 1, out) == CG_OK && out[0] == want[k].one,
              "%s: n=1 got %u", name, out[0]);
        CHECK(place(core, 3 * GIB, 1, out) == CG_OK && out[0] == 0, "%s: n=1 3GiB got %u",
              name, out[0]);
        cg_core_free(core);
    }
}

static void test_invalid(void)
{
    cg_core *core = dgx(CG_PLACE_BINPACK);
    unsigned out[CG_MAX_DEVICES + 1];
    for (unsigned i = 0; i <= CG_MAX_DEVICES; i++)
        out[i] = 777;
    cg_container_spec spec = {.device = -1, .limit = GIB};
    CHECK(cg_place_devices(core, &spec, 0, out) == CG_ERR_INVALID, "n=0");
    CHECK(cg_place_devices(core, &spec, CG_MAX_DEVICES + 1, out) == CG_ERR_INVALID, "n too big");
    CHECK(cg_place_devices(core, NULL, 2, out) == CG_ERR_INVALID, "no spec");
    CHECK(cg_place_devices(core, &spec, 2, NULL) == CG_ERR_INVALID, "no out");
    CHECK(cg_place_devices(NULL, &spec, 2, out) == CG_ERR_INVALID, "no core");
    cg_container_spec bad = spec;
    bad.compute_pct = 101;
    CHECK(cg_place_devices(core, &bad, 2, out) == CG_ERR_INVALID, "share above 100");
    bad = spec;
    bad.limit = 0;
    CHECK(cg_place_devices(core, &bad, 2, out) == CG_ERR_INVALID, "limit 0");
    for (unsigned i = 0; i <= CG_MAX_DEVICES; i++)
        CHECK(out[i] == 777, "out[%u] untouched by a refusal", i);

    /* Hard shares: devices whose time is promised away do not fit. */
    cg_container_spec hard = {.device = -1, .limit = GIB, .compute_pct = 60,
                              .compute_mode = CG_COMPUTE_HARD};
    cg_container_spec taker = hard;
    cg_cid cid;
    taker.device = 0;
    CHECK(cg_container_create_spec(core, &taker, 0, &cid) == CG_OK, "hard share on 0");
    CHECK(cg_place_devices(core, &hard, 2, out) == CG_OK && out[0] == 2 && out[1] == 3,
          "0 cannot admit 60%%: the pair 2-3, got %u,%u", out[0], out[1]);
    /* An exclusive holder makes its device unfit. */
    cg_container_spec excl = {.device = 2, .limit = 0, .exclusive = true};
    CHECK(cg_container_create_spec(core, &excl, 0, &cid) == CG_OK, "exclusive on 2");
    CHECK(cg_place_devices(core, &spec, 2, out) == CG_OK && out[0] == 0 && out[1] == 1,
          "binpack: 0 is fullest (its time), with its NVLink partner; got %u,%u", out[0], out[1]);
    spec.exclusive = true;
    spec.limit = 0;
    CHECK(cg_place_devices(core, &spec, 2, out) == CG_OK && out[0] == 4 && out[1] == 5,
          "exclusive: only empty devices, got %u,%u", out[0], out[1]);
    CHECK(cg_core_check(core) == NULL, "invariants");
    cg_core_free(core);
}

static uint64_t rng = 0x243f6a8885a308d3ull;
static unsigned rnd(unsigned n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (unsigned)(rng % n);
}

/* Random nodes of up to 10 devices, random links and loads, every n: the choice fits, is
 * sorted and distinct, and costs no more than the cheapest fitting set by brute force; refusals
 * agree with the brute force too. */
static void test_brute_force(void)
{
    for (unsigned iter = 0; iter < 1500; iter++) {
        unsigned ndev = 2 + rnd(9);
        cg_placement_policy p = (cg_placement_policy)rnd(CG_PLACE__COUNT);
        cg_core *core = mk(p, ndev, 16 * GIB);
        for (unsigned a = 0; a < ndev; a++)
            for (unsigned b = a + 1; b < ndev; b++)
                if (rnd(4))
                    set(core, a, b, (cg_link)rnd(CG_LINK__COUNT));
        for (unsigned d = 0; d < ndev; d++)
            if (rnd(2))
                load(core, d, (1 + rnd(16)) * GIB);
        cg_bytes limit = (1 + rnd(12)) * GIB;
        unsigned n = 1 + rnd(ndev);
        bool fit[CG_MAX_DEVICES];
        unsigned nfit = 0;
        for (unsigned d = 0; d < ndev; d++) {
            cg_device_info di;
            cg_device_get(core, d, &di);
            fit[d] = di.free >= limit;
            nfit += fit[d];
        }
        unsigned best = ~0u;
        for (unsigned mask = 0; mask < (1u << ndev); mask++) {
            if ((unsigned)__builtin_popcount(mask) != n)
                continue;
            unsigned s[CG_MAX_DEVICES], k = 0;
            bool ok = true;
            for (unsigned d = 0; d < ndev; d++)
                if (mask >> d & 1) {
                    ok = ok && fit[d];
                    s[k++] = d;
                }
            if (ok && set_cost(core, s, n) < best)
                best = set_cost(core, s, n);
        }
        unsigned out[CG_MAX_DEVICES];
        cg_status st = place(core, limit, n, out);
        if (nfit < n) {
            CHECK(st == CG_ERR_NO_DEVICE, "iter %u: %u fit, %u asked: %s", iter, nfit, n,
                  cg_status_str(st));
        } else {
            CHECK(st == CG_OK, "iter %u: %s", iter, cg_status_str(st));
            bool ok = true;
            for (unsigned i = 0; i < n; i++)
                ok = ok && out[i] < ndev && fit[out[i]] && (i == 0 || out[i - 1] < out[i]);
            CHECK(ok, "iter %u: the choice fits, ascending and distinct", iter);
            CHECK(ok && set_cost(core, out, n) == best, "iter %u: cost %u, cheapest %u (n=%u of "
                  "%u)", iter, set_cost(core, out, n), best, n, ndev);
            unsigned again[CG_MAX_DEVICES];
            CHECK(place(core, limit, n, again) == CG_OK &&
                  memcmp(again, out, n * sizeof *out) == 0, "iter %u: deterministic", iter);
        }
        cg_core_free(core);
    }
}

/* Beyond the exhaustive bound (24 choose 12 = 2.7 million sets) the greedy search: three
 * DGX-like sockets of eight, NVLink pairs and a switch per four; 12 devices take one socket's
 * eight and a switch of four of another, never three sockets. */
static void test_greedy(void)
{
    cg_core *core = mk(CG_PLACE_FIRST_FIT, 24, 80 * GIB);
    for (unsigned a = 0; a < 24; a++)
        for (unsigned b = a + 1; b < 24; b++) {
            if (a / 8 != b / 8)
                continue;
            set(core, a, b, (a ^ 1) == b ? CG_LINK_NVLINK
                            : a / 4 == b / 4 ? CG_LINK_SINGLE : CG_LINK_NODE);
        }
    unsigned out[12];
    CHECK(place(core, GIB, 12, out) == CG_OK, "greedy placement");
    unsigned per_socket[3] = {0, 0, 0};
    for (unsigned i = 0; i < 12; i++)
        per_socket[out[i] / 8]++;
    CHECK(per_socket[0] == 8 && per_socket[1] == 4 && per_socket[2] == 0,
          "one socket and a switch: %u/%u/%u", per_socket[0], per_socket[1], per_socket[2]);
    CHECK(out[8] == 8 && out[11] == 11, "the second socket's first switch");
    cg_core_free(core);

    core = mk(CG_PLACE_BINPACK, CG_MAX_DEVICES, 8 * GIB);
    unsigned all[CG_MAX_DEVICES];
    CHECK(place(core, GIB, CG_MAX_DEVICES, all) == CG_OK && all[0] == 0 &&
          all[CG_MAX_DEVICES - 1] == CG_MAX_DEVICES - 1, "every device of a full node");
    CHECK(place(core, GIB, CG_MAX_DEVICES / 2, all) == CG_OK, "64 choose 32 ends");
    cg_core_free(core);
}

int main(void)
{
    test_links();
    test_dgx();
    test_pcie_box();
    test_tie_breaks();
    test_invalid();
    test_brute_force();
    test_greedy();
    if (failures)
        fprintf(stderr, "test_topology: %d failure(s)\n", failures);
    return failures != 0;
}

/* topology.c — how the node's devices talk (a link level per pair) and the choice of n devices
 * for a multi-device container: the set whose pairs talk fastest, GaiaGPU's rule (its
 * topology-aware scheduler places a request for several GPUs where they communicate best, one
 * for a fraction of a GPU where it leaves the least fragmentation).
 *
 * The path of one choice: the devices that fit the spec now are ranked by the placement
 * policy's preference; every n-subset of them is scored by the sum of its pairwise link costs
 * (closest.c: exhaustively while there are at most CG_PLACE_EXHAUSTIVE_MAX subsets, else
 * greedily); the cheapest wins, and among equals the one whose members come first in the
 * ranking. Pure: it
 * reads the core and writes only `out`. */
#include "closest.h"
#include "internal.h"

_Static_assert(CG_MAX_DEVICES <= CG_CLOSEST_MAX, "a node's devices fit the set search");
_Static_assert(CG_PLACE_EXHAUSTIVE_MAX == CG_CLOSEST_EXHAUSTIVE_MAX, "one bound, documented in core.h");

static const char *const link_names[CG_LINK__COUNT] = {
    [CG_LINK_NVLINK] = "nvlink",       [CG_LINK_SINGLE] = "single",
    [CG_LINK_MULTIPLE] = "multiple",   [CG_LINK_HOSTBRIDGE] = "hostbridge",
    [CG_LINK_NODE] = "node",           [CG_LINK_SYSTEM] = "system",
};

/* Relative costs (core.h): NVLink well ahead of any PCIe path, one step per PCIe hop, a large
 * step where traffic crosses the sockets' interconnect. */
static const unsigned link_costs[CG_LINK__COUNT] = {
    [CG_LINK_NVLINK] = 1, [CG_LINK_SINGLE] = 3,     [CG_LINK_MULTIPLE] = 4,
    [CG_LINK_HOSTBRIDGE] = 5, [CG_LINK_NODE] = 6, [CG_LINK_SYSTEM] = 10,
};

const char *cg_link_name(cg_link l)
{
    return (unsigned)l < CG_LINK__COUNT ? link_names[l] : NULL;
}

bool cg_link_parse(const char *name, cg_link *out)
{
    if (!name)
        return false;
    for (unsigned i = 0; i < CG_LINK__COUNT; i++) {
        const char *a = link_names[i], *b = name;
        while (*a && *a == *b)
            a++, b++;
        if (!*a && !*b) {
            *out = (cg_link)i;
            return true;
        }
    }
    return false;
}

unsigned cg_link_cost(cg_link l)
{
    return (unsigned)l < CG_LINK__COUNT ? link_costs[l] : 0;
}

cg_status cg_topology_set(cg_core *core, unsigned a, unsigned b, cg_link level)
{
    if (!core || a == b || a >= core->ndev || b >= core->ndev ||
        (unsigned)level >= CG_LINK__COUNT)
        return CG_ERR_INVALID;
    core->link[a][b] = core->link[b][a] = (uint8_t)(level + 1);
    return CG_OK;
}

cg_link cg_topology_get(const cg_core *core, unsigned a, unsigned b)
{
    if (!core || a == b || a >= core->ndev || b >= core->ndev || core->link[a][b] == 0)
        return CG_LINK_SYSTEM;
    return (cg_link)(core->link[a][b] - 1);
}

static unsigned pair_cost(const void *core, unsigned a, unsigned b)
{
    return link_costs[cg_topology_get(core, a, b)];
}

/* Whether device i can take the spec now (see cg_place_devices). */
static bool fits_now(const cg_device *d, const cg_container_spec *spec, unsigned hard)
{
    if (spec->exclusive)
        return d->ncontainers == 0 && dev_free(d) >= spec->limit;
    return dev_fits(d, spec->limit, hard);
}

/* Whether device i could ever hold the limit (its capacity, whatever runs there now). */
static bool could_hold(const cg_device *d, const cg_container_spec *spec)
{
    return d->capacity >= spec->limit;
}

/* Whether the policy prefers device a to device b (both fit); equal preference is false both
 * ways, and the index decides. n == 1 always prefers the fuller device (binpack). */
static bool prefers(const cg_core *core, unsigned n, unsigned a, unsigned b)
{
    cg_placement_policy p = n == 1 ? CG_PLACE_BINPACK : core->cfg.placement;
    cg_bytes ra = dev_room(&core->dev[a]), rb = dev_room(&core->dev[b]);
    switch (p) {
    case CG_PLACE_BINPACK: return ra < rb;
    case CG_PLACE_LEAST_LOADED: return ra > rb;
    default: return false;
    }
}

/* Ranks the fitting devices (rank[0] most preferred): insertion sort, stable on the index. */
static void rank_devices(const cg_core *core, unsigned n, unsigned *rank, unsigned m)
{
    for (unsigned i = 1; i < m; i++) {
        unsigned v = rank[i], j = i;
        while (j > 0 && prefers(core, n, v, rank[j - 1])) {
            rank[j] = rank[j - 1];
            j--;
        }
        rank[j] = v;
    }
}

cg_status cg_place_devices(const cg_core *core, const cg_container_spec *spec, unsigned n,
                           unsigned *out)
{
    if (!core || !spec || !out || n == 0 || n > CG_MAX_DEVICES)
        return CG_ERR_INVALID;
    if (!share_valid(spec->compute_pct, spec->compute_mode) ||
        spec->priority > CG_PRIORITY_MAX || (spec->limit == 0 && !spec->exclusive))
        return CG_ERR_INVALID;
    if (n > core->ndev)
        return CG_ERR_NO_DEVICE;
    unsigned hard = spec->compute_mode == CG_COMPUTE_HARD ? spec->compute_pct : 0;
    unsigned rank[CG_MAX_DEVICES], m = 0, holders = 0;
    for (unsigned i = 0; i < core->ndev; i++) {
        holders += could_hold(&core->dev[i], spec);
        if (fits_now(&core->dev[i], spec, hard))
            rank[m++] = i;
    }
    if (holders < n)
        return CG_ERR_TOO_LARGE;
    if (m < n)
        return CG_ERR_NO_DEVICE;
    rank_devices(core, n, rank, m);

    unsigned best[CG_MAX_DEVICES];
    cg_closest_set(rank, m, 0, n, pair_cost, core, best);

    /* Ascending device order for the caller. */
    for (unsigned i = 1; i < n; i++) {
        unsigned v = best[i], j = i;
        while (j > 0 && best[j - 1] > v) {
            best[j] = best[j - 1];
            j--;
        }
        best[j] = v;
    }
    for (unsigned i = 0; i < n; i++)
        out[i] = best[i];
    return CG_OK;
}

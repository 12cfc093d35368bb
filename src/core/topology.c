/* topology.c — how the node's devices talk (a link level per pair) and the choice of n devices
 * for a multi-device container: the set whose pairs talk fastest, GaiaGPU's rule (its
 * topology-aware scheduler places a request for several GPUs where they communicate best, one
 * for a fraction of a GPU where it leaves the least fragmentation).
 *
 * The path of one choice: the devices that fit the spec now are ranked by the placement
 * policy's preference; every n-subset of them is scored by the sum of its pairwise link costs
 * (exhaustively while there are at most CG_PLACE_EXHAUSTIVE_MAX subsets, else greedily); the
 * cheapest wins, and among equals the one whose members come first in the ranking. Pure: it
 * reads the core and writes only `out`. */
#include "internal.h"

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

static unsigned pair_cost(const cg_core *core, unsigned a, unsigned b)
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

/* C(m, n), or `cap + 1` once it exceeds cap. */
static uint64_t choose_capped(unsigned m, unsigned n, uint64_t cap)
{
    if (n > m)
        return 0;
    if (n > m - n)
        n = m - n;
    uint64_t c = 1;
    for (unsigned i = 1; i <= n; i++) {
        c = c * (m - n + i) / i; /* exact: c * (m-n+i) is a multiple of i here */
        if (c > cap)
            return cap + 1;
    }
    return c;
}

/* Every n-subset of rank[0..m), in lexicographic order of positions, so the first subset with
 * the least cost is also the one whose members come earliest in the ranking. */
static void search_exhaustive(const cg_core *core, const unsigned *rank, unsigned m, unsigned n,
                              unsigned *best)
{
    unsigned pos[CG_MAX_DEVICES];
    unsigned long long best_cost = ~0ull;
    for (unsigned i = 0; i < n; i++)
        pos[i] = i;
    for (;;) {
        unsigned long long cost = 0;
        for (unsigned i = 0; i < n; i++)
            for (unsigned j = i + 1; j < n; j++)
                cost += pair_cost(core, rank[pos[i]], rank[pos[j]]);
        if (cost < best_cost) {
            best_cost = cost;
            for (unsigned i = 0; i < n; i++)
                best[i] = rank[pos[i]];
        }
        /* Next combination: the rightmost position that can still move right. */
        int k = (int)n - 1;
        while (k >= 0 && pos[k] == m - n + (unsigned)k)
            k--;
        if (k < 0)
            return;
        pos[k]++;
        for (unsigned i = (unsigned)k + 1; i < n; i++)
            pos[i] = pos[i - 1] + 1;
    }
}

/* Too many subsets to try: from each fitting device as a seed (in ranking order), add the
 * device that adds the least cost to those taken so far (ties: the earlier ranked), until n;
 * keep the cheapest set over all seeds (ties: the earlier seed). O(m^2 n^2) cost lookups:
 * about 4 million for 64 devices choose 32. Not always optimal: a cheap pair the seed does not
 * lead to can be missed, which the exhaustive search below the bound never does. */
static void search_greedy(const cg_core *core, const unsigned *rank, unsigned m, unsigned n,
                          unsigned *best)
{
    unsigned long long best_cost = ~0ull;
    for (unsigned s = 0; s < m; s++) {
        unsigned set[CG_MAX_DEVICES];
        bool taken[CG_MAX_DEVICES] = {false};
        unsigned long long cost = 0;
        set[0] = rank[s];
        taken[s] = true;
        for (unsigned k = 1; k < n; k++) {
            unsigned pick = m;
            unsigned long long pick_add = ~0ull;
            for (unsigned c = 0; c < m; c++) {
                if (taken[c])
                    continue;
                unsigned long long add = 0;
                for (unsigned i = 0; i < k; i++)
                    add += pair_cost(core, set[i], rank[c]);
                if (add < pick_add) {
                    pick_add = add;
                    pick = c;
                }
            }
            taken[pick] = true;
            set[k] = rank[pick];
            cost += pick_add;
        }
        if (cost < best_cost) {
            best_cost = cost;
            for (unsigned i = 0; i < n; i++)
                best[i] = set[i];
        }
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
    if (choose_capped(m, n, CG_PLACE_EXHAUSTIVE_MAX) <= CG_PLACE_EXHAUSTIVE_MAX)
        search_exhaustive(core, rank, m, n, best);
    else
        search_greedy(core, rank, m, n, best);

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

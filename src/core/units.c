/* units.c — device IDs for the units convgpu advertises to kubelet, and the preferred allocation
 * (units.h has the contract). */
#include "units.h"

#include "closest.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static const char *kind_word(cg_unit_kind kind)
{
    switch (kind) {
    case CG_UNIT_MEMORY: return "mem";
    case CG_UNIT_COMPUTE: return "compute";
    case CG_UNIT_SLOT: return "slot";
    }
    return "?";
}

int cg_unit_id_format(char *buf, size_t len, cg_unit_kind kind, cg_unit u)
{
    if (u.gpu > CG_UNIT_MAX_GPU || u.n >= CG_UNIT_MAX_PER_GPU)
        return -1;
    int n = snprintf(buf, len, "gpu%u-%s-%u", u.gpu, kind_word(kind), u.n);
    return n < 0 || (size_t)n >= len ? -1 : n;
}

/* A decimal number without sign, spaces or leading zeros, at most `max`; *p moves past it. */
static bool take_number(const char **p, unsigned max, unsigned *out)
{
    const char *s = *p;
    if (*s < '0' || *s > '9' || (s[0] == '0' && s[1] >= '0' && s[1] <= '9'))
        return false;
    unsigned long v = 0;
    for (; *s >= '0' && *s <= '9'; s++) {
        v = v * 10 + (unsigned long)(*s - '0');
        if (v > max)
            return false;
    }
    *out = (unsigned)v;
    *p = s;
    return true;
}

static bool take_word(const char **p, const char *word)
{
    size_t n = strlen(word);
    if (strncmp(*p, word, n) != 0)
        return false;
    *p += n;
    return true;
}

int cg_unit_id_parse(const char *id, cg_unit_kind *kind, cg_unit *u)
{
    const char *p = id;
    cg_unit v;
    if (!id || strlen(id) >= CG_UNIT_ID_MAX || !take_word(&p, "gpu") ||
        !take_number(&p, CG_UNIT_MAX_GPU, &v.gpu))
        return -1;
    cg_unit_kind k;
    if (take_word(&p, "-mem-"))
        k = CG_UNIT_MEMORY;
    else if (take_word(&p, "-compute-"))
        k = CG_UNIT_COMPUTE;
    else if (take_word(&p, "-slot-"))
        k = CG_UNIT_SLOT;
    else
        return -1;
    if (!take_number(&p, CG_UNIT_MAX_PER_GPU - 1, &v.n) || *p)
        return -1;
    *kind = k;
    *u = v;
    return 0;
}

unsigned cg_units_of_memory(uint64_t capacity, uint64_t unit_bytes)
{
    if (unit_bytes == 0)
        return 0;
    uint64_t n = capacity / unit_bytes;
    return n > CG_UNIT_MAX_PER_GPU ? CG_UNIT_MAX_PER_GPU : (unsigned)n;
}

static bool in_list(const cg_unit *list, size_t n, cg_unit u)
{
    for (size_t i = 0; i < n; i++)
        if (list[i].gpu == u.gpu && list[i].n == u.n)
            return true;
    return false;
}

/* How many of avail's units are on gpu. */
static size_t count_on(const cg_unit *avail, size_t navail, unsigned gpu)
{
    size_t count = 0;
    for (size_t i = 0; i < navail; i++)
        count += avail[i].gpu == gpu;
    return count;
}

/* Whether avail[i] is the first unit of its GPU in avail (each GPU visited once). */
static bool first_of_gpu(const cg_unit *avail, size_t i)
{
    for (size_t j = 0; j < i; j++)
        if (avail[j].gpu == avail[i].gpu)
            return false;
    return true;
}

/* Appends to out the units of gpu not yet chosen, by ascending number, until size. */
static size_t take_from(const cg_unit *avail, size_t navail, const size_t *out, size_t chosen,
                        unsigned gpu, size_t size, size_t *dst)
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
        dst[chosen++] = pick;
    }
    return chosen;
}

cg_prefer_result cg_units_prefer(const cg_unit *avail, size_t navail, const cg_unit *must,
                                 size_t nmust, size_t size, size_t *out)
{
    if (nmust > size)
        return CG_PREFER_TOO_FEW_MUST;
    bool must_one_gpu = true;
    for (size_t i = 1; i < nmust; i++)
        must_one_gpu = must_one_gpu && must[i].gpu == must[0].gpu;

    /* The best fit: the GPU with the fewest available units that still has `size`. The GPUs are
     * found by scanning avail (no table of GPU indexes needed: at most CG_UNIT_MAX_GPU + 1). */
    bool found = false;
    unsigned best_gpu = 0;
    size_t best_count = 0;
    for (size_t i = 0; i < navail && must_one_gpu; i++) {
        unsigned gpu = avail[i].gpu;
        if (!first_of_gpu(avail, i) || (nmust > 0 && gpu != must[0].gpu))
            continue;
        size_t count = count_on(avail, navail, gpu);
        if (count < size)
            continue;
        if (!found || count < best_count || (count == best_count && gpu < best_gpu)) {
            found = true;
            best_gpu = gpu;
            best_count = count;
        }
    }

    /* The must units first (in their order). */
    size_t chosen = 0;
    for (size_t m = 0; m < nmust; m++)
        for (size_t i = 0; i < navail; i++)
            if (avail[i].gpu == must[m].gpu && avail[i].n == must[m].n)
                out[chosen++] = i;
    if (found)
        return take_from(avail, navail, out, chosen, best_gpu, size, out) == size
                   ? CG_PREFER_OK
                   : CG_PREFER_NO_GPU;

    /* No GPU holds it all: as few GPUs as possible, the fullest-available first (ties: the
     * lower index), each GPU's units by ascending number. */
    while (chosen < size) {
        bool any = false;
        unsigned gpu = 0;
        size_t most = 0;
        for (size_t i = 0; i < navail; i++) {
            if (!first_of_gpu(avail, i))
                continue;
            size_t left = count_on(avail, navail, avail[i].gpu);
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
        chosen = take_from(avail, navail, out, chosen, gpu, size, out);
    }
    return CG_PREFER_OK;
}

struct gpu_cost_ctx {
    cg_gpu_cost_fn cost;
    const void *ctx;
};

static unsigned gpu_pair_cost(const void *p, unsigned a, unsigned b)
{
    const struct gpu_cost_ctx *c = p;
    return c->cost(c->ctx, a, b);
}

cg_prefer_result cg_units_prefer_gpus(const cg_unit *avail, size_t navail, const cg_unit *must,
                                      size_t nmust, size_t size, cg_gpu_cost_fn cost,
                                      const void *ctx, size_t *out)
{
    if (nmust > size)
        return CG_PREFER_TOO_FEW_MUST;
    for (size_t i = 0; i < nmust; i++)
        for (size_t j = i + 1; j < nmust; j++)
            if (must[i].gpu == must[j].gpu)
                return CG_PREFER_SPLIT_MUST;
    if (size == 0 || size > CG_UNIT_MAX_GANG)
        return CG_PREFER_NO_GPU;

    /* The candidates: the must GPUs first (always taken), then every other GPU with a free slot
     * ranked by free slots (most first), then index; at most CG_CLOSEST_MAX of them. */
    struct cand {
        unsigned gpu;
        size_t slots;
    } others[CG_UNIT_MAX_GPU + 1];
    size_t nothers = 0;
    for (size_t i = 0; i < navail; i++) {
        unsigned gpu = avail[i].gpu;
        bool fixed = false;
        for (size_t k = 0; k < nmust && !fixed; k++)
            fixed = must[k].gpu == gpu;
        if (fixed || !first_of_gpu(avail, i))
            continue;
        struct cand c = {gpu, count_on(avail, navail, gpu)};
        size_t at = nothers++;
        while (at > 0 && (c.slots > others[at - 1].slots ||
                          (c.slots == others[at - 1].slots && c.gpu < others[at - 1].gpu))) {
            others[at] = others[at - 1];
            at--;
        }
        others[at] = c;
    }
    unsigned rank[CG_CLOSEST_MAX], m = 0;
    for (size_t i = 0; i < nmust; i++)
        rank[m++] = must[i].gpu;
    unsigned nfixed = m;
    for (size_t i = 0; i < nothers && m < CG_CLOSEST_MAX; i++)
        rank[m++] = others[i].gpu;
    if (m < size)
        return CG_PREFER_NO_GPU;

    unsigned set[CG_CLOSEST_MAX];
    struct gpu_cost_ctx c = {cost, ctx};
    cg_closest_set(rank, m, nfixed, (unsigned)size, gpu_pair_cost, &c, set);
    /* Ascending GPU order; on each GPU its must slot, else its lowest-numbered one. */
    for (size_t i = 1; i < size; i++) {
        unsigned v = set[i];
        size_t j = i;
        while (j > 0 && set[j - 1] > v) {
            set[j] = set[j - 1];
            j--;
        }
        set[j] = v;
    }
    for (size_t k = 0; k < size; k++) {
        size_t pick = navail;
        for (size_t i = 0; i < navail; i++) {
            if (avail[i].gpu != set[k])
                continue;
            if (in_list(must, nmust, avail[i])) {
                pick = i;
                break;
            }
            if (pick == navail || avail[i].n < avail[pick].n)
                pick = i;
        }
        out[k] = pick;
    }
    return CG_PREFER_OK;
}

/* units.c — device IDs for the units convgpu advertises to kubelet, and the preferred allocation
 * (units.h has the contract). */
#include "units.h"

#include "closest.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
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

/* One unit of the GPU being taken from, or one must unit (with its place in must). */
struct ranked {
    unsigned gpu, n;
    size_t at;
};

static int by_gpu_then_number(const void *a, const void *b)
{
    const struct ranked *x = a, *y = b;
    if (x->gpu != y->gpu)
        return x->gpu < y->gpu ? -1 : 1;
    return x->n < y->n ? -1 : x->n > y->n;
}

/* A GPU in the order of the split case: the most units left first, ties the lower index. */
struct gpu_left {
    unsigned gpu;
    size_t left;
};

static int most_left_then_lower(const void *a, const void *b)
{
    const struct gpu_left *x = a, *y = b;
    if (x->left != y->left)
        return x->left > y->left ? -1 : 1;
    return x->gpu < y->gpu ? -1 : x->gpu > y->gpu;
}

struct prefer_work {
    const cg_unit *avail;
    size_t navail;
    const unsigned char *is_must; /* per position in avail */
    struct ranked *scratch;       /* room for the largest GPU's units */
};

/* Appends gpu's units that are not must units, by ascending number, until size. */
static size_t take_gpu(const struct prefer_work *w, unsigned gpu, size_t chosen, size_t size,
                       size_t *out)
{
    size_t k = 0;
    for (size_t i = 0; i < w->navail; i++)
        if (w->avail[i].gpu == gpu && !w->is_must[i])
            w->scratch[k++] = (struct ranked){gpu, w->avail[i].n, i};
    qsort(w->scratch, k, sizeof *w->scratch, by_gpu_then_number);
    for (size_t i = 0; i < k && chosen < size; i++)
        out[chosen++] = w->scratch[i].at;
    return chosen;
}

/* One pass counts every GPU's units and finds the must units; only the GPUs taken from are
 * sorted. A scan of every ID per chosen unit cost tens of ms for a whole GPU of an 8-GPU node
 * (docs/BENCHMARKS.md, "Preferred allocation"). */
cg_prefer_result cg_units_prefer(const cg_unit *avail, size_t navail, const cg_unit *must,
                                 size_t nmust, size_t size, size_t *out)
{
    if (nmust > size)
        return CG_PREFER_TOO_FEW_MUST;
    if (size > navail)
        return CG_PREFER_NO_GPU;
    for (size_t i = 0; i < navail; i++)
        if (avail[i].gpu > CG_UNIT_MAX_GPU)
            return CG_PREFER_NO_GPU; /* not an ID cg_unit_id_parse accepts */
    enum { NGPU = CG_UNIT_MAX_GPU + 1 };
    size_t *count = calloc(2 * NGPU, sizeof *count), *must_on = count ? count + NGPU : NULL;
    struct ranked *sorted_must = malloc((nmust ? nmust : 1) * sizeof *sorted_must);
    size_t *must_at = malloc((nmust ? nmust : 1) * sizeof *must_at);
    unsigned char *is_must = calloc(navail ? navail : 1, 1);
    struct ranked *scratch = malloc((navail ? navail : 1) * sizeof *scratch);
    struct gpu_left *order = malloc(NGPU * sizeof *order);
    cg_prefer_result res = CG_PREFER_OK;
    if (!count || !sorted_must || !must_at || !is_must || !scratch || !order) {
        res = CG_PREFER_NO_MEMORY;
        goto done;
    }

    bool must_one_gpu = true;
    for (size_t m = 0; m < nmust; m++) {
        sorted_must[m] = (struct ranked){must[m].gpu, must[m].n, m};
        must_at[m] = navail; /* not (yet) found in avail */
        must_one_gpu = must_one_gpu && must[m].gpu == must[0].gpu;
    }
    qsort(sorted_must, nmust, sizeof *sorted_must, by_gpu_then_number);
    for (size_t i = 0; i < navail; i++) {
        count[avail[i].gpu]++;
        struct ranked key = {avail[i].gpu, avail[i].n, 0};
        struct ranked *hit =
            nmust ? bsearch(&key, sorted_must, nmust, sizeof key, by_gpu_then_number) : NULL;
        if (hit && must_at[hit->at] == navail) {
            must_at[hit->at] = i;
            is_must[i] = 1;
            must_on[avail[i].gpu]++;
        }
    }

    /* The must units first (in their order). */
    size_t chosen = 0;
    for (size_t m = 0; m < nmust; m++)
        if (must_at[m] < navail)
            out[chosen++] = must_at[m];

    /* The best fit: the GPU with the fewest available units that still has `size` (ties: the
     * lower index, the first one met). */
    bool found = false;
    unsigned best = 0;
    for (unsigned g = 0; g < NGPU && must_one_gpu; g++) {
        if (count[g] < size || (nmust > 0 && g != must[0].gpu))
            continue;
        if (!found || count[g] < count[best]) {
            found = true;
            best = g;
        }
    }
    struct prefer_work w = {avail, navail, is_must, scratch};
    if (found) {
        chosen = take_gpu(&w, best, chosen, size, out);
    } else {
        /* No GPU holds it all: as few GPUs as possible, the most units left first (ties: the
         * lower index); each GPU is taken whole or up to the request's size. */
        size_t ngpus = 0;
        for (unsigned g = 0; g < NGPU; g++)
            if (count[g] > must_on[g])
                order[ngpus++] = (struct gpu_left){g, count[g] - must_on[g]};
        qsort(order, ngpus, sizeof *order, most_left_then_lower);
        for (size_t k = 0; k < ngpus && chosen < size; k++)
            chosen = take_gpu(&w, order[k].gpu, chosen, size, out);
    }
    if (chosen < size)
        res = CG_PREFER_NO_GPU;
done:
    free(count);
    free(sorted_must);
    free(must_at);
    free(is_must);
    free(scratch);
    free(order);
    return res;
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

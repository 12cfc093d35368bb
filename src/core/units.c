/* units.c — device IDs for the units convgpu advertises to kubelet, and the preferred allocation
 * (units.h has the contract). */
#include "units.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static const char *kind_word(cg_unit_kind kind)
{
    return kind == CG_UNIT_MEMORY ? "mem" : "compute";
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

cg_prefer_result cg_units_prefer(const cg_unit *avail, size_t navail, const cg_unit *must,
                                 size_t nmust, size_t size, size_t *out)
{
    if (nmust > size)
        return CG_PREFER_TOO_FEW_MUST;
    for (size_t i = 1; i < nmust; i++)
        if (must[i].gpu != must[0].gpu)
            return CG_PREFER_SPLIT_MUST;

    /* The best fit: the GPU with the fewest available units that still has `size`. The GPUs are
     * found by scanning avail (no table of GPU indexes needed: at most CG_UNIT_MAX_GPU + 1). */
    bool found = false;
    unsigned best_gpu = 0;
    size_t best_count = 0;
    for (size_t i = 0; i < navail; i++) {
        unsigned gpu = avail[i].gpu;
        bool seen = false;
        for (size_t j = 0; j < i && !seen; j++)
            seen = avail[j].gpu == gpu;
        if (seen || (nmust > 0 && gpu != must[0].gpu))
            continue;
        size_t count = 0;
        for (size_t j = i; j < navail; j++)
            count += avail[j].gpu == gpu;
        if (count < size)
            continue;
        if (!found || count < best_count || (count == best_count && gpu < best_gpu)) {
            found = true;
            best_gpu = gpu;
            best_count = count;
        }
    }
    if (!found)
        return CG_PREFER_NO_GPU;

    /* The must units first (in their order), then the GPU's others by ascending number. */
    size_t chosen = 0;
    for (size_t m = 0; m < nmust; m++)
        for (size_t i = 0; i < navail; i++)
            if (avail[i].gpu == must[m].gpu && avail[i].n == must[m].n)
                out[chosen++] = i;
    unsigned floor = 0; /* every unit numbered below floor has been considered */
    bool any_left = true;
    while (chosen < size && any_left) {
        any_left = false;
        size_t pick = navail;
        for (size_t i = 0; i < navail; i++) {
            if (avail[i].gpu != best_gpu || avail[i].n < floor || in_list(must, nmust, avail[i]))
                continue;
            if (pick == navail || avail[i].n < avail[pick].n)
                pick = i;
        }
        if (pick < navail) {
            out[chosen++] = pick;
            floor = avail[pick].n + 1;
            any_left = true;
        }
    }
    return chosen == size ? CG_PREFER_OK : CG_PREFER_NO_GPU;
}

/* hash.c — linear probing with backward-shift deletion (no tombstones, so lookups stay short
 * under the churn of containers and requests coming and going). Load factor <= 1/2. */
#include "hash.h"

#include "internal.h"

static uint64_t mix(uint64_t k1, uint64_t k2)
{
    uint64_t z = k1 * 0x9e3779b97f4a7c15ull ^ (k2 + 0x632be59bd9b4e019ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void place(cg_hash_slot *slots, size_t cap, uint64_t k1, uint64_t k2, void *val)
{
    size_t i = (size_t)mix(k1, k2) & (cap - 1);
    while (slots[i].val)
        i = (i + 1) & (cap - 1);
    slots[i] = (cg_hash_slot){k1, k2, val};
}

bool cg_hash_reserve(struct cg_core *core, cg_hash *h, size_t extra)
{
    size_t want = h->len + extra;
    if (want * 2 <= h->cap)
        return true;
    size_t cap = h->cap ? h->cap : 16;
    while (want * 2 > cap)
        cap *= 2;
    cg_hash_slot *slots = cg_mem_alloc(core, cap * sizeof *slots);
    if (!slots)
        return false;
    for (size_t i = 0; i < cap; i++)
        slots[i].val = NULL;
    for (size_t i = 0; i < h->cap; i++)
        if (h->slots[i].val)
            place(slots, cap, h->slots[i].k1, h->slots[i].k2, h->slots[i].val);
    cg_mem_free(core, h->slots, h->cap * sizeof *h->slots);
    h->slots = slots;
    h->cap = cap;
    return true;
}

void cg_hash_put(cg_hash *h, uint64_t k1, uint64_t k2, void *val)
{
    place(h->slots, h->cap, k1, k2, val);
    h->len++;
}

static size_t find(const cg_hash *h, uint64_t k1, uint64_t k2)
{
    if (!h->cap)
        return SIZE_MAX;
    size_t i = (size_t)mix(k1, k2) & (h->cap - 1);
    while (h->slots[i].val) {
        if (h->slots[i].k1 == k1 && h->slots[i].k2 == k2)
            return i;
        i = (i + 1) & (h->cap - 1);
    }
    return SIZE_MAX;
}

void *cg_hash_get(const cg_hash *h, uint64_t k1, uint64_t k2)
{
    size_t i = find(h, k1, k2);
    return i == SIZE_MAX ? NULL : h->slots[i].val;
}

void *cg_hash_del(cg_hash *h, uint64_t k1, uint64_t k2)
{
    size_t i = find(h, k1, k2);
    if (i == SIZE_MAX)
        return NULL;
    void *val = h->slots[i].val;
    size_t mask = h->cap - 1;
    /* Shift later members of the probe run back so that no lookup stops early at the hole. */
    size_t j = i;
    for (;;) {
        j = (j + 1) & mask;
        if (!h->slots[j].val)
            break;
        size_t home = (size_t)mix(h->slots[j].k1, h->slots[j].k2) & mask;
        /* Move j into the hole i unless its home lies cyclically in (i, j]. */
        bool stays = i <= j ? (home > i && home <= j) : (home > i || home <= j);
        if (!stays) {
            h->slots[i] = h->slots[j];
            i = j;
        }
    }
    h->slots[i].val = NULL;
    h->len--;
    return val;
}

void cg_hash_release(struct cg_core *core, cg_hash *h)
{
    cg_mem_free(core, h->slots, h->cap * sizeof *h->slots);
    *h = (cg_hash){0};
}

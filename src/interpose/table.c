/* table.c — the hooked-symbol table built from hooks.def, and the lookups over it that dlsym
 * and cuGetProcAddress use to turn a real entry point into our wrapper. */
#include "hooks.h"

#include <string.h>

const struct cg_hook cg_hooks[CG_HOOK_COUNT] = {
#define CG_HOOK(lib, sym, base, ver, ptds) {#sym, base, (void *)sym, CG_LIB_##lib, ver, ptds},
#include "hooks.def"
#undef CG_HOOK
};

_Atomic(void *) cg_real_ptr[CG_HOOK_COUNT];

/* Not strcmp: this runs inside dlsym, possibly before a sanitizer's strcmp interceptor works. */
CG_UNINSTRUMENTED static int same(const char *a, const char *b)
{
    while (*a && *a == *b)
        a++, b++;
    return *a == *b;
}

CG_UNINSTRUMENTED int cg_hook_find(const char *name)
{
    /* Every hooked name starts with "cu" or "nvml"; the runtime's other lookups mostly do too,
     * so the prefix test only spares the rest; the loop is ~25 short strcmp calls. */
    if (!name || !((name[0] == 'c' && name[1] == 'u') || (name[0] == 'n' && name[1] == 'v')))
        return -1;
    for (int i = 0; i < CG_HOOK_COUNT; i++)
        if (same(cg_hooks[i].name, name))
            return i;
    return -1;
}

int cg_hook_by_wrapper(const void *p)
{
    for (int i = 0; i < CG_HOOK_COUNT; i++)
        if (cg_hooks[i].wrapper == p)
            return i;
    return -1;
}

int cg_hook_by_real(int lib, const void *p)
{
    if (!p)
        return -1;
    for (int i = 0; i < CG_HOOK_COUNT; i++)
        if (cg_hooks[i].lib == lib && cg_real(i) == p)
            return i;
    return -1;
}

int cg_hook_by_base(const char *base, int version, int ptds)
{
    /* The newest variant not newer than the caller's version; the per-thread variant only when
     * one exists for this name (the others are stream-less and shared by both modes). */
    int best = -1;
    for (int i = 0; i < CG_HOOK_COUNT; i++) {
        const struct cg_hook *h = &cg_hooks[i];
        if (h->lib != CG_LIB_CUDA || strcmp(h->base, base) != 0 || h->version > version)
            continue;
        if (h->ptds && !ptds)
            continue;
        if (best < 0 || h->version > cg_hooks[best].version ||
            (h->version == cg_hooks[best].version && h->ptds && ptds))
            best = i;
    }
    return best;
}

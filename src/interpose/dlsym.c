/* dlsym.c — our dlsym: the way into the driver that preloading alone does not cover.
 *
 * The CUDA runtime (also the statically linked cudart nvcc uses by default) dlopens libcuda.so.1
 * and looks entry points up on that handle; a lookup on a handle never sees preloaded symbols.
 * So we answer every dlsym: the real lookup decides whether the name exists there, and for a
 * hooked name that exists we hand out our wrapper instead. Everything else is the real answer.
 *
 * RTLD_NEXT is relative to the *caller*: passed on as is, libc would search after us, which is
 * wrong for everyone else. We find the caller's object from our return address and search the
 * objects after it in link-map order, taking the first that defines the name itself. */
#include "hooks.h"

#include <dlfcn.h>
#include <link.h>
#include <stddef.h>

static struct link_map *object_of(const void *addr)
{
    Dl_info info;
    struct link_map *lm = NULL;
    if (!dladdr1(addr, &info, (void **)&lm, RTLD_DL_LINKMAP))
        return NULL;
    return lm;
}

static void *lookup_next(const void *caller, const char *name)
{
    struct link_map *self = object_of(caller);
    if (!self) /* code outside any object (JIT): "after us" is the best answer there is */
        return cg_real_dlsym(RTLD_NEXT, name);
    for (struct link_map *m = self->l_next; m; m = m->l_next) {
        /* A handle lookup searches the object and then its dependencies: accept the answer
         * only when this object itself defines the name. */
        void *p = cg_real_dlsym(m, name);
        if (!p)
            continue;
        struct link_map *def = object_of(p);
        if (def && def != m)
            continue;
        (void)dlerror(); /* the misses above must not leave an error for the caller to see */
        return p;
    }
    return NULL;
}

CG_EXPORT void *dlsym(void *restrict handle, const char *restrict name)
{
    const void *caller = __builtin_return_address(0);
    void *p = handle == RTLD_NEXT ? lookup_next(caller, name) : cg_real_dlsym(handle, name);
    if (p) {
        int id = cg_hook_find(name);
        if (id >= 0)
            return cg_hooks[id].wrapper;
    }
    return p;
}

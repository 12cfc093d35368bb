/* real.c — finding the real thing: libc's dlsym (ours shadows it) and our own handles of the
 * real driver and NVML, from which every wrapper's real pointer is resolved once.
 *
 * Nothing here runs until a hook is actually used, so a process that never touches CUDA never
 * loads the driver because of us. No locks: racing first calls both dlopen (reference-counted,
 * same handle) and store the same pointers, and a driver constructor that re-enters a hook
 * while we dlopen it cannot deadlock on a once-guard. */
#include "hooks.h"
#include "log.h"

#include <dlfcn.h>

typedef void *(*dlsym_fn)(void *, const char *);

_Atomic(void *) cg_real_dlsym_ptr;
static _Atomic(void *) lib_handles[CG_LIB_COUNT];

static const char *const lib_names[CG_LIB_COUNT] = {"libcuda.so.1", "libnvidia-ml.so.1"};

CG_UNINSTRUMENTED void *cg_real_dlsym(void *handle, const char *name)
{
    void *f = atomic_load_explicit(&cg_real_dlsym_ptr, memory_order_acquire);
    if (__builtin_expect(f == NULL, 0)) {
        /* dlvsym is not ours, so this cannot recurse; the version names cover glibc >= 2.34
         * (dlsym moved into libc) and older x86-64 / aarch64 releases. */
        static const char *const versions[] = {"GLIBC_2.34", "GLIBC_2.2.5", "GLIBC_2.17"};
        for (unsigned i = 0; i < sizeof versions / sizeof versions[0] && !f; i++)
            f = dlvsym(RTLD_NEXT, "dlsym", versions[i]);
        if (!f)
            return NULL;
        atomic_store_explicit(&cg_real_dlsym_ptr, f, memory_order_release);
    }
    if (!name)
        return NULL;
    return ((dlsym_fn)f)(handle, name);
}

void *cg_lib_handle(int lib)
{
    void *h = atomic_load_explicit(&lib_handles[lib], memory_order_acquire);
    if (__builtin_expect(h != NULL, 1))
        return h == CG_REAL_MISSING ? NULL : h;
    h = dlopen(lib_names[lib], RTLD_NOW | RTLD_GLOBAL);
    if (!h) {
        const char *e = dlerror();
        cg_log(CG_LOG_DEBUG, "cannot load %s: %s", lib_names[lib], e ? e : "?");
    }
    atomic_store_explicit(&lib_handles[lib], h ? h : CG_REAL_MISSING, memory_order_release);
    return h;
}

void *cg_real_resolve(int id)
{
    void *h = cg_lib_handle(cg_hooks[id].lib);
    void *p = h ? cg_real_dlsym(h, cg_hooks[id].name) : NULL;
    if (p == cg_hooks[id].wrapper) /* only if the "driver" is us: never call ourselves */
        p = NULL;
    if (!p)
        cg_log(CG_LOG_DEBUG, "real %s not found", cg_hooks[id].name);
    atomic_store_explicit(&cg_real_ptr[id], p ? p : CG_REAL_MISSING, memory_order_relaxed);
    return p;
}

void *cg_lib_sym(int lib, _Atomic(void *) *cache, const char *name)
{
    void *p = atomic_load_explicit(cache, memory_order_relaxed);
    if (__builtin_expect(p != NULL, 1))
        return p == CG_REAL_MISSING ? NULL : p;
    void *h = cg_lib_handle(lib);
    p = h ? cg_real_dlsym(h, name) : NULL;
    atomic_store_explicit(cache, p ? p : CG_REAL_MISSING, memory_order_relaxed);
    return p;
}

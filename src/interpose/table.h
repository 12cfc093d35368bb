/* table.h — the hooked-symbol table (built from hooks.def) and the real driver behind it.
 *
 * Every wrapper reaches the real function through cg_real(id): one relaxed load of a cached
 * pointer, resolved on first use with the real dlsym on our own dlopen handle of the driver
 * (never RTLD_NEXT: the program may have reached the driver only through dlopen). */
#ifndef CONVGPU_IP_TABLE_H
#define CONVGPU_IP_TABLE_H

#include <stdatomic.h>
#include <stdint.h>

/* For code that runs inside dlsym: a sanitizer runtime looks up its interceptors with dlsym
 * before it has set itself up, so that path must not be instrumented. */
#define CG_UNINSTRUMENTED __attribute__((no_sanitize("address"), no_sanitize("undefined")))

enum cg_lib { CG_LIB_CUDA = 0, CG_LIB_NVML = 1, CG_LIB_COUNT };

enum cg_hook_id {
#define CG_HOOK(lib, sym, base, ver, ptds) CG_ID_##sym,
#include "hooks.def"
#undef CG_HOOK
    CG_HOOK_COUNT
};

struct cg_hook {
    const char *name;   /* exported name, e.g. "cuMemAlloc_v2" */
    const char *base;   /* name given to cuGetProcAddress, e.g. "cuMemAlloc" */
    void *wrapper;      /* our function of that name */
    int lib;            /* enum cg_lib */
    int version;        /* CUDA version that introduced this ABI variant */
    int ptds;           /* 1 = the per-thread default stream variant */
};

extern const struct cg_hook cg_hooks[CG_HOOK_COUNT];
extern _Atomic(void *) cg_real_ptr[CG_HOOK_COUNT];

#define CG_REAL_MISSING ((void *)1) /* cached "the driver has no such symbol" */

void *cg_real_resolve(int id);

/* The real function behind hook `id`, or NULL when the driver lacks it. */
static inline void *cg_real(int id)
{
    void *p = atomic_load_explicit(&cg_real_ptr[id], memory_order_relaxed);
    if (__builtin_expect(p != NULL && p != CG_REAL_MISSING, 1))
        return p;
    return p == CG_REAL_MISSING ? NULL : cg_real_resolve(id);
}

#define CG_REAL(sym) ((PFN_##sym)cg_real(CG_ID_##sym))

/* Index of the hook exported as `name`, or -1. Cheap for the thousands of unhooked names the
 * runtime looks up at start. */
int cg_hook_find(const char *name);
/* Index of the hook whose wrapper is `p`, or -1. */
int cg_hook_by_wrapper(const void *p);
/* Index of the hook whose real pointer is `p` (resolving all of `lib` first), or -1. */
int cg_hook_by_real(int lib, const void *p);
/* Fallback for cuGetProcAddress: the variant of `base` for `version` and the stream flag. */
int cg_hook_by_base(const char *base, int version, int ptds);

/* Our own handle of the real library (dlopen once, RTLD_NOW|RTLD_GLOBAL); NULL if unavailable. */
void *cg_lib_handle(int lib);
/* An unhooked real function we call ourselves (e.g. cuCtxGetDevice), cached in *cache. */
void *cg_lib_sym(int lib, _Atomic(void *) *cache, const char *name);
/* The real dlsym of libc, never ours (cached here; dlsym.c's entry stub jumps through it). */
extern _Atomic(void *) cg_real_dlsym_ptr;
void *cg_real_dlsym(void *handle, const char *name);

#endif

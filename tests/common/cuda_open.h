/* cuda_open.h — for test programs that act like an application: reach the driver the way the
 * CUDA runtime does (dlopen of libcuda.so.1, whichever one the loader finds: the emulator's, a
 * real driver's, with or without the interposer preloaded) and make device 0's primary context
 * current. Header-only so each test program stays one file. */
#ifndef CONVGPU_TEST_CUDA_OPEN_H
#define CONVGPU_TEST_CUDA_OPEN_H

#include <dlfcn.h>
#include <stdio.h>

#include "cuda_types.h"

/* Returns the driver handle with a current context on device 0, or NULL (reason on stderr). */
static inline void *cg_test_cuda_open(const char *who)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW);
    if (!h) {
        fprintf(stderr, "%s: %s\n", who, dlerror());
        return NULL;
    }
    PFN_cuInit init = (PFN_cuInit)dlsym(h, "cuInit");
    PFN_cuDeviceGet get = (PFN_cuDeviceGet)dlsym(h, "cuDeviceGet");
    PFN_cuDevicePrimaryCtxRetain retain =
        (PFN_cuDevicePrimaryCtxRetain)dlsym(h, "cuDevicePrimaryCtxRetain");
    PFN_cuCtxSetCurrent setcur = (PFN_cuCtxSetCurrent)dlsym(h, "cuCtxSetCurrent");
    CUdevice dev;
    CUcontext ctx;
    if (!init || !get || !retain || !setcur || init(0) || get(&dev, 0) || retain(&ctx, dev) ||
        setcur(ctx)) {
        fprintf(stderr, "%s: no context on device 0\n", who);
        return NULL;
    }
    return h;
}

/* Function `name` of a module loaded from `text` (PTX for a real driver; the emulator also
 * takes its own module text), or NULL (reason on stderr). */
static inline CUfunction cg_test_function(void *h, const char *who, const char *text,
                                          const char *name)
{
    PFN_cuModuleLoadData load = (PFN_cuModuleLoadData)dlsym(h, "cuModuleLoadData");
    PFN_cuModuleGetFunction get = (PFN_cuModuleGetFunction)dlsym(h, "cuModuleGetFunction");
    CUmodule m;
    CUfunction f;
    if (!load || !get || load(&m, text) || get(&f, m, name)) {
        fprintf(stderr, "%s: cannot load kernel %s\n", who, name);
        return NULL;
    }
    return f;
}

#endif

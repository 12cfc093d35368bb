/* execalloc.c — allocates BYTES of device memory through the driver API, then execs PROGRAM
 * without freeing: the new image must find the old image's memory returned (the driver frees a
 * process's memory when its image is replaced, and so must convgpu's account).
 * Usage: execalloc BYTES PROGRAM [ARGS...]. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cuda_types.h"

int main(int argc, char **argv)
{
    if (argc < 3)
        return 1;
    void *h = dlopen("libcuda.so.1", RTLD_NOW);
    if (!h)
        return 1;
    PFN_cuInit init = (PFN_cuInit)dlsym(h, "cuInit");
    PFN_cuDeviceGet get = (PFN_cuDeviceGet)dlsym(h, "cuDeviceGet");
    PFN_cuDevicePrimaryCtxRetain retain = (PFN_cuDevicePrimaryCtxRetain)dlsym(h, "cuDevicePrimaryCtxRetain");
    PFN_cuCtxSetCurrent setcur = (PFN_cuCtxSetCurrent)dlsym(h, "cuCtxSetCurrent");
    PFN_cuMemAlloc_v2 alloc = (PFN_cuMemAlloc_v2)dlsym(h, "cuMemAlloc_v2");
    CUdevice dev;
    CUcontext ctx;
    CUdeviceptr p;
    if (init(0) || get(&dev, 0) || retain(&ctx, dev) || setcur(ctx) ||
        alloc(&p, strtoull(argv[1], NULL, 10))) {
        fprintf(stderr, "execalloc: allocation before exec failed\n");
        return 1;
    }
    execv(argv[2], argv + 2);
    perror("execalloc: exec");
    return 1;
}

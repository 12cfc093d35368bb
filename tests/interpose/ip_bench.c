/* ip_bench.c — per-call cost of hooked entry points, to compare the same binary run without the
 * interposer, preloaded but unconfigured (pass-through), and under `convgpu run` (fast path).
 * Prints the median over batches, in ns per call:
 *   passthru_ns   cuCtxSynchronize-free cheap hooked call: cuMemFree_v2(0) (driver rejects it)
 *   getinfo_ns    cuMemGetInfo_v2
 *   allocfree_ns  cuMemAlloc_v2(2MiB) + cuMemFree_v2 (within the container's quota)
 * Usage: ip_bench [iterations per batch] */
#include "cuda_types.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

#define BATCHES 21

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 20000;
    void *h = dlopen("libcuda.so.1", RTLD_NOW);
    if (!h)
        return 1;
    PFN_cuInit init = (PFN_cuInit)dlsym(h, "cuInit");
    PFN_cuDeviceGet dget = (PFN_cuDeviceGet)dlsym(h, "cuDeviceGet");
    PFN_cuDevicePrimaryCtxRetain retain = (PFN_cuDevicePrimaryCtxRetain)dlsym(h, "cuDevicePrimaryCtxRetain");
    PFN_cuCtxSetCurrent setcur = (PFN_cuCtxSetCurrent)dlsym(h, "cuCtxSetCurrent");
    PFN_cuMemAlloc_v2 alloc = (PFN_cuMemAlloc_v2)dlsym(h, "cuMemAlloc_v2");
    PFN_cuMemFree_v2 mfree = (PFN_cuMemFree_v2)dlsym(h, "cuMemFree_v2");
    PFN_cuMemGetInfo_v2 info = (PFN_cuMemGetInfo_v2)dlsym(h, "cuMemGetInfo_v2");
    CUdevice dev;
    CUcontext ctx;
    if (!init || init(0) || dget(&dev, 0) || retain(&ctx, dev) || setcur(ctx))
        return 1;
    /* Warm up: the first allocation opens the session and gets a quota from the daemon. */
    CUdeviceptr keep, p;
    if (alloc(&keep, 64u << 20) || mfree(keep))
        return 2;
    double t[3][BATCHES];
    for (int b = 0; b < BATCHES; b++) {
        double t0 = now_ns();
        for (int i = 0; i < n; i++)
            mfree(0);
        double t1 = now_ns();
        size_t f, tot;
        for (int i = 0; i < n; i++)
            info(&f, &tot);
        double t2 = now_ns();
        for (int i = 0; i < n / 10; i++) {
            if (alloc(&p, 2u << 20) || mfree(p))
                return 2;
        }
        double t3 = now_ns();
        t[0][b] = (t1 - t0) / n;
        t[1][b] = (t2 - t1) / n;
        t[2][b] = (t3 - t2) / (n / 10);
    }
    for (int k = 0; k < 3; k++)
        qsort(t[k], BATCHES, sizeof(double), cmp);
    printf("passthru_ns=%.1f getinfo_ns=%.1f allocfree_ns=%.1f\n", t[0][BATCHES / 2],
           t[1][BATCHES / 2], t[2][BATCHES / 2]);
    return 0;
}

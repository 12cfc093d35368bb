/* bench_api.c — response time of the hooked CUDA driver calls (the paper's Figure 4 set).
 *
 * The same binary runs natively (the emulator's or a real libcuda.so.1, found by the dynamic
 * loader), preloaded but unconfigured, and under convgpu: bench/run-all.sh runs the variants as
 * interleaved processes and compares the medians each process prints.
 *
 * Every call is timed on its own (CLOCK_MONOTONIC around the call); an operation's figure is the
 * median over all its calls in this process, with p25/p75. Operations are interleaved inside
 * every round, so drift during the run hits all of them alike. The cheap pass-through call
 * (cuMemFree_v2(0), which the driver rejects) is timed per batch instead, because a single call
 * is shorter than the clock read.
 *
 * Output, one line per operation:
 *   op=NAME n=CALLS med_ns=... p25_ns=... p75_ns=...
 * plus `op=init` (cuInit + primary context) and `op=first_alloc` (the process's first
 * allocation: under convgpu it opens the session with the daemon and crosses the socket once).
 *
 * Usage: bench_api [--rounds R] [--size BYTES] */
#include "cuda_types.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static inline double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double quantile(double *v, size_t n, double q)
{
    if (n == 0)
        return 0;
    size_t i = (size_t)(q * (double)(n - 1) + 0.5);
    return v[i < n ? i : n - 1];
}

enum op {
    OP_ALLOC, OP_FREE, OP_MANAGED, OP_MANAGED_FREE, OP_PITCH, OP_PITCH_FREE, OP_ARRAY3D,
    OP_ARRAY_DESTROY, OP_GETINFO, OP_TOTALMEM, OP_PASSTHRU, OP_COUNT
};
static const char *op_name[OP_COUNT] = {
    "alloc", "free", "alloc_managed", "free_managed", "alloc_pitch", "free_pitch",
    "array3d_create", "array_destroy", "mem_get_info", "device_total_mem", "passthru",
};

struct series {
    double *v;
    size_t n, cap;
};

static void add(struct series *s, double x)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 1024;
        s->v = realloc(s->v, s->cap * sizeof *s->v);
        if (!s->v) {
            perror("realloc");
            exit(1);
        }
    }
    s->v[s->n++] = x;
}

static void report(const char *name, struct series *s)
{
    qsort(s->v, s->n, sizeof *s->v, cmp_double);
    printf("op=%s n=%zu med_ns=%.1f p25_ns=%.1f p75_ns=%.1f min_ns=%.1f\n", name, s->n,
           quantile(s->v, s->n, 0.5), quantile(s->v, s->n, 0.25), quantile(s->v, s->n, 0.75),
           s->n ? s->v[0] : 0.0);
}

#define SYM(h, name) ((PFN_##name)must_sym(h, #name))

static void *must_sym(void *h, const char *name)
{
    void *p = dlsym(h, name);
    if (!p) {
        fprintf(stderr, "bench_api: %s not found: %s\n", name, dlerror());
        exit(1);
    }
    return p;
}

#define CHECK(call)                                                                  \
    do {                                                                             \
        CUresult r_ = (call);                                                        \
        if (r_ != CUDA_SUCCESS) {                                                    \
            fprintf(stderr, "bench_api: %s failed: %d (line %d)\n", #call, (int)r_, \
                    __LINE__);                                                       \
            exit(2);                                                                 \
        }                                                                            \
    } while (0)

int main(int argc, char **argv)
{
    int rounds = 200;
    size_t size = 2u << 20;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else if (strcmp(argv[i], "--size") == 0 && i + 1 < argc)
            size = (size_t)strtoull(argv[++i], NULL, 0);
        else {
            fprintf(stderr, "usage: bench_api [--rounds R] [--size BYTES]\n");
            return 2;
        }
    }
    if (rounds < 1)
        rounds = 1;

    void *h = dlopen("libcuda.so.1", RTLD_NOW);
    if (!h) {
        fprintf(stderr, "bench_api: %s\n", dlerror());
        return 1;
    }
    PFN_cuInit init = SYM(h, cuInit);
    PFN_cuDeviceGet dget = SYM(h, cuDeviceGet);
    PFN_cuDevicePrimaryCtxRetain retain = SYM(h, cuDevicePrimaryCtxRetain);
    PFN_cuCtxSetCurrent setcur = SYM(h, cuCtxSetCurrent);
    PFN_cuMemAlloc_v2 alloc = SYM(h, cuMemAlloc_v2);
    PFN_cuMemFree_v2 mfree = SYM(h, cuMemFree_v2);
    PFN_cuMemAllocManaged managed = SYM(h, cuMemAllocManaged);
    PFN_cuMemAllocPitch_v2 pitch = SYM(h, cuMemAllocPitch_v2);
    PFN_cuArray3DCreate_v2 arr3d = SYM(h, cuArray3DCreate_v2);
    PFN_cuArrayDestroy arrdel = SYM(h, cuArrayDestroy);
    PFN_cuMemGetInfo_v2 info = SYM(h, cuMemGetInfo_v2);
    PFN_cuDeviceTotalMem_v2 total = SYM(h, cuDeviceTotalMem_v2);

    CUdevice dev;
    CUcontext ctx;
    double t0 = now_ns();
    CHECK(init(0));
    CHECK(dget(&dev, 0));
    CHECK(retain(&ctx, dev));
    CHECK(setcur(ctx));
    double t1 = now_ns();
    CUdeviceptr p;
    CHECK(alloc(&p, size));
    double t2 = now_ns();
    CHECK(mfree(p));
    printf("op=init n=1 med_ns=%.1f\n", t1 - t0);
    printf("op=first_alloc n=1 med_ns=%.1f\n", t2 - t1);

    struct series s[OP_COUNT];
    memset(s, 0, sizeof s);
    CUDA_ARRAY3D_DESCRIPTOR ad = {
        .Width = 256, .Height = 256, .Depth = 8, .Format = CU_AD_FORMAT_FLOAT, .NumChannels = 1,
    };
    /* Warm-up round, not recorded: first-call effects (lazy symbol binding, page faults in the
     * allocation table, the pitch query) are measured by first_alloc, not here. */
    for (int r = -1; r < rounds; r++) {
        double a, b;
        size_t f, tot, pp;
        CUarray arr;
        for (int k = 0; k < 8; k++) {
            a = now_ns(); CHECK(alloc(&p, size)); b = now_ns();
            if (r >= 0) add(&s[OP_ALLOC], b - a);
            a = now_ns(); CHECK(mfree(p)); b = now_ns();
            if (r >= 0) add(&s[OP_FREE], b - a);
            a = now_ns(); CHECK(info(&f, &tot)); b = now_ns();
            if (r >= 0) add(&s[OP_GETINFO], b - a);
            a = now_ns(); CHECK(total(&tot, dev)); b = now_ns();
            if (r >= 0) add(&s[OP_TOTALMEM], b - a);
        }
        a = now_ns(); CHECK(managed(&p, size, CU_MEM_ATTACH_GLOBAL)); b = now_ns();
        if (r >= 0) add(&s[OP_MANAGED], b - a);
        a = now_ns(); CHECK(mfree(p)); b = now_ns();
        if (r >= 0) add(&s[OP_MANAGED_FREE], b - a);
        a = now_ns(); CHECK(pitch(&p, &pp, 1000, 512, 4)); b = now_ns();
        if (r >= 0) add(&s[OP_PITCH], b - a);
        a = now_ns(); CHECK(mfree(p)); b = now_ns();
        if (r >= 0) add(&s[OP_PITCH_FREE], b - a);
        a = now_ns(); CHECK(arr3d(&arr, &ad)); b = now_ns();
        if (r >= 0) add(&s[OP_ARRAY3D], b - a);
        a = now_ns(); CHECK(arrdel(arr)); b = now_ns();
        if (r >= 0) add(&s[OP_ARRAY_DESTROY], b - a);
        /* Pass-through: 200 rejected frees timed together. */
        a = now_ns();
        for (int i = 0; i < 200; i++)
            (void)mfree(0);
        b = now_ns();
        if (r >= 0) add(&s[OP_PASSTHRU], (b - a) / 200);
    }
    for (int o = 0; o < OP_COUNT; o++)
        report(op_name[o], &s[o]);
    return 0;
}

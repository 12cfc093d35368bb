/* bench_swap.c — what swapping device memory costs with the facility docs/SWAP.md chose
 * (VMM: physical memory mapped into a reservation that outlives it), on whatever libcuda.so.1
 * the loader finds (the emulator's, or a real driver's when a GPU is lent).
 *
 * Two questions, each answered in one process with its variants interleaved in every round, so
 * drift hits them alike (figures are medians over rounds, with p25/p75):
 *
 *  1. The allocation path when nothing is swapped: cuMemAlloc_v2 + cuMemFree_v2 against the
 *     same allocation backed by VMM (cuMemAddressReserve + cuMemCreate + cuMemMap +
 *     cuMemSetAccess; cuMemUnmap + cuMemRelease + cuMemAddressFree), each call pair timed.
 *     Then each of those calls timed alone (op=call_NAME), with the calls the interposer adds
 *     around them (cuCtxGetCurrent, cuCtxGetDevice, cuMemGetAllocationGranularity, the
 *     cuCtxSynchronize a free implies), and the allocation with its reservation kept from the
 *     last one (alloc_vmm_reuse: create + map + set access; free_vmm_reuse: unmap + release),
 *     which is what a cache of reservations leaves to pay.
 *  2. Bandwidth: device-to-host and host-to-device copies of CHUNKS allocations into warm
 *     pinned host memory (copy_out, copy_in: the reference) and into warm pageable memory
 *     (copy_out_pageable, copy_in_pageable: what the driver's staging of pageable copies
 *     allows), a copy into device memory written for the first time (copy_in_fresh: what any
 *     new allocation costs on the emulator, whose device memory is host memory faulted in page
 *     by page), against a swap-out (synchronise, host copy, copy out, unmap and release) and a
 *     swap-in (create, map at the same address, grant access, copy back, host copy freed) of
 *     the same allocations, with the host copy in warm pinned memory (the device side's cost
 *     alone), in new pinned memory, in new pageable memory populated in one call, (kept) in
 *     the pageable copy the chunk's last swap-in kept, lazily freed (MADV_FREE), as the
 *     interposer does (its first round is the populated case), or (registered) in that kept
 *     copy page-locked for each copy and unlocked after it, as the interposer does with
 *     CONVGPU_SWAP_PIN=1. Every swap-in is checked word for word.
 *
 * Output, one line per figure:
 *   op=NAME n=ROUNDS med_ns=... p25_ns=... p75_ns=...           (allocation path, per call set)
 *   op=NAME n=ROUNDS med_gbps=... p25_gbps=... p75_gbps=...      (bandwidth, whole set)
 *   ratio swap_out_KIND/copy_out=... swap_in_KIND/copy_in=...    (medians; copy_*_pageable too)
 *
 * Usage: bench_swap [--rounds R] [--size BYTES] [--chunks N] [--chunk BYTES] */
#include "cuda_types.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static double now_ns(void)
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
    size_t i = (size_t)(q * (double)(n - 1) + 0.5);
    return v[i < n ? i : n - 1];
}

static void *must_sym(void *h, const char *name)
{
    void *p = dlsym(h, name);
    if (!p) {
        fprintf(stderr, "bench_swap: %s not found: %s\n", name, dlerror());
        exit(1);
    }
    return p;
}
#define SYM(name) p_##name = (PFN_##name)must_sym(h, #name)

#define CHECK(call)                                                                        \
    do {                                                                                   \
        CUresult r_ = (call);                                                              \
        if (r_ != CUDA_SUCCESS) {                                                          \
            fprintf(stderr, "bench_swap: %s failed: %d (line %d)\n", #call, (int)r_,      \
                    __LINE__);                                                             \
            exit(1);                                                                       \
        }                                                                                  \
    } while (0)

static PFN_cuInit p_cuInit;
static PFN_cuDeviceGet p_cuDeviceGet;
static PFN_cuDevicePrimaryCtxRetain p_cuDevicePrimaryCtxRetain;
static PFN_cuCtxSetCurrent p_cuCtxSetCurrent;
static PFN_cuCtxSynchronize p_cuCtxSynchronize;
static PFN_cuCtxGetCurrent p_cuCtxGetCurrent;
static PFN_cuCtxGetDevice p_cuCtxGetDevice;
static PFN_cuMemAlloc_v2 p_cuMemAlloc_v2;
static PFN_cuMemFree_v2 p_cuMemFree_v2;
static PFN_cuMemAllocHost_v2 p_cuMemAllocHost_v2;
static PFN_cuMemFreeHost p_cuMemFreeHost;
static PFN_cuMemHostRegister_v2 p_cuMemHostRegister_v2;
static PFN_cuMemHostUnregister p_cuMemHostUnregister;
static PFN_cuMemcpyDtoH_v2 p_cuMemcpyDtoH_v2;
static PFN_cuMemcpyHtoD_v2 p_cuMemcpyHtoD_v2;
static PFN_cuMemsetD32_v2 p_cuMemsetD32_v2;
static PFN_cuMemGetAllocationGranularity p_cuMemGetAllocationGranularity;
static PFN_cuMemAddressReserve p_cuMemAddressReserve;
static PFN_cuMemAddressFree p_cuMemAddressFree;
static PFN_cuMemCreate p_cuMemCreate;
static PFN_cuMemRelease p_cuMemRelease;
static PFN_cuMemMap p_cuMemMap;
static PFN_cuMemUnmap p_cuMemUnmap;
static PFN_cuMemSetAccess p_cuMemSetAccess;

static CUmemAllocationProp prop;
static CUmemAccessDesc access_rw;

/* A VMM-backed allocation: the reservation is its address for life; the handle comes and goes. */
struct chunk {
    CUdeviceptr va;
    size_t size;
    CUmemGenericAllocationHandle h;
    void *host;
    void *spare; /* HOST_KEPT, HOST_REGISTERED: the last host copy, lazily freed */
};

static void map_in(struct chunk *c)
{
    CHECK(p_cuMemCreate(&c->h, c->size, &prop, 0));
    CHECK(p_cuMemMap(c->va, c->size, 0, c->h, 0));
    CHECK(p_cuMemSetAccess(c->va, c->size, &access_rw, 1));
}

static void map_out(struct chunk *c)
{
    CHECK(p_cuMemUnmap(c->va, c->size));
    CHECK(p_cuMemRelease(c->h));
    c->h = 0;
}

/* Where a swap-out puts its host copy: host memory that is already there (the device side's
 * cost alone), new pinned memory, new pageable memory populated in one call (transparent
 * huge pages where the kernel gives them: one fault per 2 MiB instead of per 4 KiB), the
 * pageable copy the last swap-in kept (the interposer's default), or that kept copy
 * page-locked for each copy and unlocked after it (CONVGPU_SWAP_PIN=1). */
enum host_kind { HOST_GIVEN, HOST_PINNED, HOST_POPULATED, HOST_KEPT, HOST_REGISTERED };
#define HOST_KINDS 5

/* Whether a kind keeps its host copy after a swap-in, as the interposer does. */
static int keeps_copy(enum host_kind kind) { return kind == HOST_KEPT || kind == HOST_REGISTERED; }

static void *populated(size_t n)
{
    void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    madvise(p, n, MADV_HUGEPAGE);
    if (madvise(p, n, MADV_POPULATE_WRITE) != 0) {
        munmap(p, n);
        return NULL;
    }
    return p;
}

/* Everything out: queued work finished, each chunk copied to the host and its physical memory
 * given back; the reservations stay. */
static void swap_out(struct chunk *c, int n, enum host_kind kind, void **given)
{
    CHECK(p_cuCtxSynchronize());
    for (int i = 0; i < n; i++) {
        if (kind == HOST_GIVEN)
            c[i].host = given[i];
        else if (kind == HOST_PINNED)
            CHECK(p_cuMemAllocHost_v2(&c[i].host, c[i].size));
        else if (keeps_copy(kind) && c[i].spare) {
            c[i].host = c[i].spare; /* what the kernel took back is faulted in again */
            c[i].spare = NULL;
            madvise(c[i].host, c[i].size, MADV_POPULATE_WRITE);
        } else if (!(c[i].host = populated(c[i].size)))
            exit(1);
        if (kind == HOST_REGISTERED)
            CHECK(p_cuMemHostRegister_v2(c[i].host, c[i].size, 0));
        CHECK(p_cuMemcpyDtoH_v2(c[i].host, c[i].va, c[i].size));
        if (kind == HOST_REGISTERED)
            CHECK(p_cuMemHostUnregister(c[i].host));
        map_out(&c[i]);
    }
}

/* Back at the same addresses; the host copy is freed if swap_out made it. */
static void swap_in(struct chunk *c, int n, enum host_kind kind)
{
    for (int i = 0; i < n; i++) {
        map_in(&c[i]);
        if (kind == HOST_REGISTERED)
            CHECK(p_cuMemHostRegister_v2(c[i].host, c[i].size, 0));
        CHECK(p_cuMemcpyHtoD_v2(c[i].va, c[i].host, c[i].size));
    }
    CHECK(p_cuCtxSynchronize());
    for (int i = 0; i < n; i++) {
        if (kind == HOST_REGISTERED)
            CHECK(p_cuMemHostUnregister(c[i].host));
        if (kind == HOST_PINNED)
            CHECK(p_cuMemFreeHost(c[i].host));
        else if (keeps_copy(kind) && madvise(c[i].host, c[i].size, MADV_FREE) == 0)
            c[i].spare = c[i].host;
        else if (kind != HOST_GIVEN) /* populated, or kept where MADV_FREE is missing */
            munmap(c[i].host, c[i].size);
        c[i].host = NULL;
    }
}

/* Each chunk holds the word it was filled with, everywhere. */
static void verify(struct chunk *c, int n, uint32_t *scratch)
{
    for (int i = 0; i < n; i++) {
        CHECK(p_cuMemcpyDtoH_v2(scratch, c[i].va, c[i].size));
        for (size_t w = 0; w < c[i].size / 4; w++)
            if (scratch[w] != 0x5eed0000u + (unsigned)i) {
                fprintf(stderr, "bench_swap: chunk %d word %zu differs after swap-in\n", i, w);
                exit(1);
            }
    }
}

struct series {
    double *v;
    size_t n;
};

static void put(struct series *s, double x) { s->v[s->n++] = x; }

static void report_ns(const char *op, struct series *s)
{
    qsort(s->v, s->n, sizeof *s->v, cmp_double);
    printf("op=%s n=%zu med_ns=%.0f p25_ns=%.0f p75_ns=%.0f\n", op, s->n, quantile(s->v, s->n, .5),
           quantile(s->v, s->n, .25), quantile(s->v, s->n, .75));
}

/* Bandwidths sort the other way round: p25 is the slower quarter. */
static double report_gbps(const char *op, struct series *s)
{
    qsort(s->v, s->n, sizeof *s->v, cmp_double);
    double med = quantile(s->v, s->n, .5);
    printf("op=%s n=%zu med_gbps=%.2f p25_gbps=%.2f p75_gbps=%.2f\n", op, s->n, med,
           quantile(s->v, s->n, .25), quantile(s->v, s->n, .75));
    return med;
}

/* Each call of the VMM allocation path timed alone, interleaved with the same path keeping its
 * reservation (a cache of address ranges), and the calls the interposer adds around it. */
enum { C_GETCUR, C_GETDEV, C_GRAN, C_RESERVE, C_CREATE, C_MAP, C_ACCESS, C_SYNC, C_UNMAP,
       C_RELEASE, C_AFREE, C_REUSE_ALLOC, C_REUSE_FREE, C_N };

static void call_costs(int rounds, size_t size)
{
    static const char *names[C_N] = {"call_ctx_get_current", "call_ctx_get_device",
                                     "call_granularity", "call_address_reserve", "call_create",
                                     "call_map", "call_set_access", "call_ctx_synchronize",
                                     "call_unmap", "call_release", "call_address_free",
                                     "alloc_vmm_reuse", "free_vmm_reuse"};
    struct series s[C_N];
    for (int k = 0; k < C_N; k++)
        s[k] = (struct series){calloc((size_t)rounds, sizeof(double)), 0};
    struct chunk kept = {.size = size};
    CHECK(p_cuMemAddressReserve(&kept.va, size, 0, 0, 0));
    for (int r = 0; r < rounds; r++) {
        CUcontext cur;
        CUdevice d;
        size_t g;
        double t[12];
        struct chunk c = {.size = size};
        t[0] = now_ns();
        CHECK(p_cuCtxGetCurrent(&cur));
        t[1] = now_ns();
        CHECK(p_cuCtxGetDevice(&d));
        t[2] = now_ns();
        CHECK(p_cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
        t[3] = now_ns();
        CHECK(p_cuMemAddressReserve(&c.va, size, 0, 0, 0));
        t[4] = now_ns();
        CHECK(p_cuMemCreate(&c.h, size, &prop, 0));
        t[5] = now_ns();
        CHECK(p_cuMemMap(c.va, size, 0, c.h, 0));
        t[6] = now_ns();
        CHECK(p_cuMemSetAccess(c.va, size, &access_rw, 1));
        t[7] = now_ns();
        CHECK(p_cuCtxSynchronize());
        t[8] = now_ns();
        CHECK(p_cuMemUnmap(c.va, size));
        t[9] = now_ns();
        CHECK(p_cuMemRelease(c.h));
        t[10] = now_ns();
        CHECK(p_cuMemAddressFree(c.va, size));
        t[11] = now_ns();
        for (int k = 0; k <= C_AFREE; k++)
            put(&s[k], t[k + 1] - t[k]);
        t[0] = now_ns();
        map_in(&kept);
        t[1] = now_ns();
        map_out(&kept);
        t[2] = now_ns();
        put(&s[C_REUSE_ALLOC], t[1] - t[0]);
        put(&s[C_REUSE_FREE], t[2] - t[1]);
    }
    CHECK(p_cuMemAddressFree(kept.va, size));
    for (int k = 0; k < C_N; k++) {
        report_ns(names[k], &s[k]);
        free(s[k].v);
    }
}

static size_t parse_bytes(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    double mul = !strcmp(end, "GiB") ? 1 << 30 : !strcmp(end, "MiB") ? 1 << 20
               : !strcmp(end, "KiB") ? 1 << 10 : !*end ? 1 : 0;
    if (v <= 0 || mul == 0) {
        fprintf(stderr, "bench_swap: bad size %s\n", s);
        exit(2);
    }
    return (size_t)(v * mul);
}

int main(int argc, char **argv)
{
    int rounds = 200;
    size_t size = 2u << 20, chunk_size = 16u << 20;
    int nchunks = 16;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--rounds"))
            rounds = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--size"))
            size = parse_bytes(argv[i + 1]);
        else if (!strcmp(argv[i], "--chunks"))
            nchunks = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--chunk"))
            chunk_size = parse_bytes(argv[i + 1]);
        else {
            fprintf(stderr, "usage: bench_swap [--rounds R] [--size B] [--chunks N] [--chunk B]\n");
            return 2;
        }
    }
    if (rounds < 1 || nchunks < 1) {
        fprintf(stderr, "bench_swap: rounds and chunks must be positive\n");
        return 2;
    }
    void *h = dlopen("libcuda.so.1", RTLD_NOW);
    if (!h) {
        fprintf(stderr, "bench_swap: %s\n", dlerror());
        return 1;
    }
    SYM(cuInit); SYM(cuDeviceGet); SYM(cuDevicePrimaryCtxRetain); SYM(cuCtxSetCurrent);
    SYM(cuCtxSynchronize); SYM(cuCtxGetCurrent); SYM(cuCtxGetDevice); SYM(cuMemAlloc_v2); SYM(cuMemFree_v2); SYM(cuMemAllocHost_v2);
    SYM(cuMemFreeHost); SYM(cuMemHostRegister_v2); SYM(cuMemHostUnregister);
    SYM(cuMemcpyDtoH_v2); SYM(cuMemcpyHtoD_v2); SYM(cuMemsetD32_v2);
    SYM(cuMemGetAllocationGranularity); SYM(cuMemAddressReserve); SYM(cuMemAddressFree);
    SYM(cuMemCreate); SYM(cuMemRelease); SYM(cuMemMap); SYM(cuMemUnmap); SYM(cuMemSetAccess);

    CUdevice dev;
    CUcontext ctx;
    CHECK(p_cuInit(0));
    CHECK(p_cuDeviceGet(&dev, 0));
    CHECK(p_cuDevicePrimaryCtxRetain(&ctx, dev));
    CHECK(p_cuCtxSetCurrent(ctx));
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = dev;
    access_rw.location = prop.location;
    access_rw.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    size_t gran;
    CHECK(p_cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
    size = (size + gran - 1) / gran * gran;
    chunk_size = (chunk_size + gran - 1) / gran * gran;

    /* 1. the allocation path */
    struct series pa = {calloc((size_t)rounds, sizeof(double)), 0};
    struct series pf = {calloc((size_t)rounds, sizeof(double)), 0};
    struct series va = {calloc((size_t)rounds, sizeof(double)), 0};
    struct series vf = {calloc((size_t)rounds, sizeof(double)), 0};
    for (int r = 0; r < rounds; r++) {
        CUdeviceptr p;
        double t0 = now_ns();
        CHECK(p_cuMemAlloc_v2(&p, size));
        double t1 = now_ns();
        CHECK(p_cuMemFree_v2(p));
        double t2 = now_ns();
        put(&pa, t1 - t0);
        put(&pf, t2 - t1);
        struct chunk c = {.size = size};
        t0 = now_ns();
        CHECK(p_cuMemAddressReserve(&c.va, size, 0, 0, 0));
        map_in(&c);
        t1 = now_ns();
        map_out(&c);
        CHECK(p_cuMemAddressFree(c.va, size));
        t2 = now_ns();
        put(&va, t1 - t0);
        put(&vf, t2 - t1);
    }
    printf("size=%zu chunks=%d chunk=%zu granularity=%zu\n", size, nchunks, chunk_size, gran);
    report_ns("alloc_plain", &pa);
    report_ns("free_plain", &pf);
    report_ns("alloc_vmm", &va);
    report_ns("free_vmm", &vf);
    call_costs(rounds, size);

    /* 2. bandwidth */
    int brounds = rounds < 20 ? rounds : 20;
    struct chunk *c = calloc((size_t)nchunks, sizeof *c);
    void **pinned = calloc((size_t)nchunks, sizeof *pinned);
    void **pageable = calloc((size_t)nchunks, sizeof *pageable);
    uint32_t *check = malloc(chunk_size);
    if (!c || !pinned || !pageable || !check)
        return 1;
    for (int i = 0; i < nchunks; i++) {
        c[i].size = chunk_size;
        CHECK(p_cuMemAddressReserve(&c[i].va, chunk_size, 0, 0, 0));
        map_in(&c[i]);
        CHECK(p_cuMemsetD32_v2(c[i].va, 0x5eed0000u + (unsigned)i, chunk_size / 4));
        CHECK(p_cuMemAllocHost_v2(&pinned[i], chunk_size));
        if (!(pageable[i] = populated(chunk_size)))
            return 1;
    }
    struct series co = {calloc((size_t)brounds, sizeof(double)), 0};
    struct series ci = {calloc((size_t)brounds, sizeof(double)), 0};
    struct series cf = {calloc((size_t)brounds, sizeof(double)), 0};
    struct series cpo = {calloc((size_t)brounds, sizeof(double)), 0};
    struct series cpi = {calloc((size_t)brounds, sizeof(double)), 0};
    struct series so[HOST_KINDS], si[HOST_KINDS];
    for (int k = 0; k < HOST_KINDS; k++) {
        so[k] = (struct series){calloc((size_t)brounds, sizeof(double)), 0};
        si[k] = (struct series){calloc((size_t)brounds, sizeof(double)), 0};
    }
    double total = (double)chunk_size * nchunks;
    for (int r = 0; r < brounds; r++) {
        double t0 = now_ns();
        for (int i = 0; i < nchunks; i++)
            CHECK(p_cuMemcpyDtoH_v2(pinned[i], c[i].va, chunk_size));
        double t1 = now_ns();
        for (int i = 0; i < nchunks; i++)
            CHECK(p_cuMemcpyHtoD_v2(c[i].va, pinned[i], chunk_size));
        double t2 = now_ns();
        put(&co, total / (t1 - t0));
        put(&ci, total / (t2 - t1));
        /* The same copies through warm pageable memory: what the driver's own staging allows. */
        t0 = now_ns();
        for (int i = 0; i < nchunks; i++)
            CHECK(p_cuMemcpyDtoH_v2(pageable[i], c[i].va, chunk_size));
        t1 = now_ns();
        for (int i = 0; i < nchunks; i++)
            CHECK(p_cuMemcpyHtoD_v2(c[i].va, pageable[i], chunk_size));
        CHECK(p_cuCtxSynchronize()); /* a pageable HtoD may return before its DMA completes */
        t2 = now_ns();
        put(&cpo, total / (t1 - t0));
        put(&cpi, total / (t2 - t1));

        /* Emulated device memory written for the first time (what a swap-in's new physical
         * memory is on the emulator): a new allocation, filled, freed. */
        double fresh = 0;
        for (int i = 0; i < nchunks; i++) {
            CUdeviceptr p;
            CHECK(p_cuMemAlloc_v2(&p, chunk_size));
            t0 = now_ns();
            CHECK(p_cuMemcpyHtoD_v2(p, pinned[i], chunk_size));
            fresh += now_ns() - t0;
            CHECK(p_cuMemFree_v2(p));
        }
        put(&cf, total / fresh);
        for (int k = 0; k < HOST_KINDS; k++) {
            enum host_kind kind = (enum host_kind)k;
            t0 = now_ns();
            swap_out(c, nchunks, kind, pinned);
            t1 = now_ns();
            swap_in(c, nchunks, kind);
            t2 = now_ns();
            put(&so[k], total / (t1 - t0));
            put(&si[k], total / (t2 - t1));
            verify(c, nchunks, check);
        }
    }
    double mco = report_gbps("copy_out", &co), mci = report_gbps("copy_in", &ci);
    report_gbps("copy_in_fresh", &cf);
    double mpo = report_gbps("copy_out_pageable", &cpo), mpi = report_gbps("copy_in_pageable", &cpi);
    printf("ratio copy_out_pageable/copy_out=%.2f copy_in_pageable/copy_in=%.2f\n", mpo / mco,
           mpi / mci);
    static const char *name[HOST_KINDS] = {"warm", "pinned", "populated", "kept", "registered"};
    for (int k = 0; k < HOST_KINDS; k++) {
        char o[64], i[64];
        snprintf(o, sizeof o, "swap_out_%s", name[k]);
        snprintf(i, sizeof i, "swap_in_%s", name[k]);
        double mso = report_gbps(o, &so[k]), msi = report_gbps(i, &si[k]);
        printf("ratio %s/copy_out=%.2f %s/copy_in=%.2f\n", o, mso / mco, i, msi / mci);
    }
    /* Everything the run took is given back, so a leak checker (make asan) sees none. */
    struct series *all[] = {&pa, &pf, &va, &vf, &co, &ci, &cf, &cpo, &cpi};
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
        free(all[k]->v);
    for (int k = 0; k < HOST_KINDS; k++) {
        free(so[k].v);
        free(si[k].v);
    }
    for (int i = 0; i < nchunks; i++)
        munmap(pageable[i], chunk_size);
    free(pageable);
    free(pinned);
    free(check);
    free(c);
    return 0;
}

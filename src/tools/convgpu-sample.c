/* convgpu-sample — the paper's sample program: allocate device memory, copy a pattern to it,
 * run the `complement` kernel, copy it back and verify, optionally hold the memory, free.
 *
 * It is written the way the CUDA runtime reaches a driver: dlopen("libcuda.so.1"), dlsym for
 * cuInit and cuGetProcAddress_v2 only, every other entry point through cuGetProcAddress_v2 at
 * CUDA 13.0. So it runs unchanged on a real driver, on the emulator, and under the convgpu
 * interposer; its kernel is PTX, which both take.
 *
 * Exit status: 0 success, 2 an allocation failed with CUDA_ERROR_OUT_OF_MEMORY, 1 otherwise. */
#include "cuda_types.h"
#include "complement_ptx.h"
#include "size.h"

#include <dlfcn.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define API_VERSION 13000

/* (base name, exported symbol it resolves to at API_VERSION) */
#define SAMPLE_API(X)                                            \
    X(cuGetErrorName, cuGetErrorName)                            \
    X(cuDriverGetVersion, cuDriverGetVersion)                    \
    X(cuDeviceGetCount, cuDeviceGetCount)                        \
    X(cuDeviceGet, cuDeviceGet)                                  \
    X(cuDeviceGetName, cuDeviceGetName)                          \
    X(cuDevicePrimaryCtxRetain, cuDevicePrimaryCtxRetain)        \
    X(cuDevicePrimaryCtxRelease, cuDevicePrimaryCtxRelease_v2)   \
    X(cuCtxSetCurrent, cuCtxSetCurrent)                          \
    X(cuMemGetInfo, cuMemGetInfo_v2)                             \
    X(cuMemAlloc, cuMemAlloc_v2)                                 \
    X(cuMemAllocPitch, cuMemAllocPitch_v2)                       \
    X(cuMemAllocManaged, cuMemAllocManaged)                      \
    X(cuMemFree, cuMemFree_v2)                                   \
    X(cuMemcpyHtoD, cuMemcpyHtoD_v2)                             \
    X(cuMemcpyDtoH, cuMemcpyDtoH_v2)                             \
    X(cuMemcpyHtoDAsync, cuMemcpyHtoDAsync_v2)                   \
    X(cuMemcpyDtoHAsync, cuMemcpyDtoHAsync_v2)                   \
    X(cuStreamCreate, cuStreamCreate)                            \
    X(cuStreamSynchronize, cuStreamSynchronize)                  \
    X(cuStreamDestroy, cuStreamDestroy_v2)                       \
    X(cuMemAllocAsync, cuMemAllocAsync)                          \
    X(cuMemFreeAsync, cuMemFreeAsync)                            \
    X(cuMemPoolCreate, cuMemPoolCreate)                          \
    X(cuMemPoolDestroy, cuMemPoolDestroy)                        \
    X(cuMemAllocFromPoolAsync, cuMemAllocFromPoolAsync)          \
    X(cuMemGetAllocationGranularity, cuMemGetAllocationGranularity) \
    X(cuMemCreate, cuMemCreate)                                  \
    X(cuMemRelease, cuMemRelease)                                \
    X(cuMemAddressReserve, cuMemAddressReserve)                  \
    X(cuMemAddressFree, cuMemAddressFree)                        \
    X(cuMemMap, cuMemMap)                                        \
    X(cuMemUnmap, cuMemUnmap)                                    \
    X(cuMemSetAccess, cuMemSetAccess)                            \
    X(cuArrayCreate, cuArrayCreate_v2)                           \
    X(cuArrayDestroy, cuArrayDestroy)                            \
    X(cuMipmappedArrayCreate, cuMipmappedArrayCreate)            \
    X(cuMipmappedArrayDestroy, cuMipmappedArrayDestroy)          \
    X(cuModuleLoadData, cuModuleLoadData)                        \
    X(cuModuleGetFunction, cuModuleGetFunction)                  \
    X(cuModuleUnload, cuModuleUnload)                            \
    X(cuLaunchKernel, cuLaunchKernel)

static struct {
#define FIELD(base, sym) PFN_##sym base;
    SAMPLE_API(FIELD)
#undef FIELD
} api;

enum mode { M_PLAIN, M_PITCH, M_MANAGED, M_VMM, M_ASYNC, M_POOL, M_ARRAY, M_MIPMAP };
static const char *const mode_names[] = {"plain", "pitch", "managed", "vmm",
                                         "async", "pool",  "array",   "mipmap"};

static struct {
    uint64_t size;
    uint64_t touch;         /* bytes of each piece moved and verified; 0 = all */
    enum mode mode;
    unsigned chunks;
    unsigned long hold_ms;
    const char *hold_until; /* hold until this file exists (a test's release) */
    int hold_forever;       /* hold until a signal ends the process */
    int recheck;            /* after the hold, read the memory back and verify it again */
    int device;
    unsigned repeat;
    int quiet, report;
    unsigned seed;          /* shifts the pattern: jobs with different seeds differ in every byte */
    int fresh_check;        /* a fresh allocation must read as zeros (nobody's data) */
    unsigned long work_ms;  /* CPU time of host work with the memory held (a job's run) */
} opt = {64ull << 20, 0, M_PLAIN, 1, 0, NULL, 0, 0, 0, 1, 0, 0, 0, 0, 0};

/* One piece of the allocation, with whatever its API needs to free it. */
typedef struct {
    CUdeviceptr ptr;
    size_t len;             /* bytes of data used */
    size_t mapped;          /* VMM: size of handle and reservation */
    CUmemGenericAllocationHandle handle;
    CUarray array;
    CUmipmappedArray mipmap;
} chunk;

static CUdevice dev;
static CUcontext ctx;
static CUstream stream;
static CUmemoryPool pool;
static CUmodule module;
static CUfunction kernel;
static int ctx_retained;

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
    if (opt.quiet || opt.report)
        return;
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    fflush(stdout); /* a test reading a job's output file waits for each line as it comes */
}

static const char *err_name(CUresult rc)
{
    const char *s = NULL;
    if (api.cuGetErrorName && api.cuGetErrorName(rc, &s) == CUDA_SUCCESS && s)
        return s;
    return "CUDA_ERROR_UNRECOGNIZED";
}

/* Records a call's result; 0 on success, else the exit status the failure calls for. */
static int check(const char *call, CUresult rc, int is_alloc)
{
    if (opt.report)
        printf("call.%s=%s\n", call, err_name(rc));
    if (rc == CUDA_SUCCESS)
        return 0;
    fprintf(stderr, "convgpu-sample: %s failed: %s\n", call, err_name(rc));
    return is_alloc && rc == CUDA_ERROR_OUT_OF_MEMORY ? 2 : 1;
}

#define CALL(fn, ...) check(#fn, api.fn(__VA_ARGS__), 0)
#define ALLOC(fn, ...) check(#fn, api.fn(__VA_ARGS__), 1)

static int load_driver(void)
{
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "convgpu-sample: cannot load libcuda.so.1: %s\n", dlerror());
        return 1;
    }
    PFN_cuInit init;
    PFN_cuGetProcAddress_v2 getproc;
    void *p = dlsym(lib, "cuInit"), *q = dlsym(lib, "cuGetProcAddress_v2");
    if (!p || !q) {
        fprintf(stderr, "convgpu-sample: libcuda.so.1 lacks cuInit or cuGetProcAddress_v2\n");
        return 1;
    }
    memcpy(&init, &p, sizeof p);
    memcpy(&getproc, &q, sizeof q);
    CUresult rc = init(0);
    if (rc != CUDA_SUCCESS) {
        fprintf(stderr, "convgpu-sample: cuInit failed: error %d\n", (int)rc);
        if (opt.report)
            printf("call.cuInit=%d\n", (int)rc);
        return 1;
    }
#define RESOLVE(base, sym)                                                               \
    {                                                                                    \
        void *fn = NULL;                                                                 \
        CUdriverProcAddressQueryResult st;                                               \
        if (getproc(#base, &fn, API_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &st) !=        \
                CUDA_SUCCESS ||                                                          \
            !fn) {                                                                       \
            fprintf(stderr, "convgpu-sample: cuGetProcAddress(%s) failed (status %d)\n", \
                    #base, (int)st);                                                     \
            return 1;                                                                    \
        }                                                                                \
        memcpy(&api.base, &fn, sizeof fn);                                               \
    }
    SAMPLE_API(RESOLVE)
#undef RESOLVE
    if (opt.report)
        printf("call.cuInit=%s\n", err_name(rc));
    return 0;
}

static int report_meminfo(const char *when)
{
    size_t free_b = 0, total_b = 0;
    int rc = CALL(cuMemGetInfo, &free_b, &total_b);
    if (rc == 0 && opt.report)
        printf("mem_free_%s=%zu\nmem_total_%s=%zu\n", when, free_b, when, total_b);
    return rc;
}

static int alloc_chunk(chunk *c, size_t len)
{
    int rc = 0;
    c->len = len;
    switch (opt.mode) {
    case M_PLAIN: rc = ALLOC(cuMemAlloc, &c->ptr, len); break;
    case M_MANAGED: rc = ALLOC(cuMemAllocManaged, &c->ptr, len, CU_MEM_ATTACH_GLOBAL); break;
    case M_ASYNC: rc = ALLOC(cuMemAllocAsync, &c->ptr, len, stream); break;
    case M_POOL: rc = ALLOC(cuMemAllocFromPoolAsync, &c->ptr, len, pool, stream); break;
    case M_PITCH: {
        size_t width = len < (1u << 20) ? len : (1u << 20), pitch = 0;
        size_t height = (len + width - 1) / width;
        rc = ALLOC(cuMemAllocPitch, &c->ptr, &pitch, width, height, 4);
        if (rc == 0 && pitch != width && height > 1) {
            fprintf(stderr, "convgpu-sample: unexpected pitch %zu for width %zu\n", pitch, width);
            rc = 1;
        }
        break;
    }
    case M_ARRAY: {
        /* Arrays hold memory but have no linear address: only the allocation is exercised. */
        CUDA_ARRAY_DESCRIPTOR d = {len < 65536 ? len : 65536, (len + 65535) / 65536,
                                   CU_AD_FORMAT_UNSIGNED_INT8, 1};
        rc = ALLOC(cuArrayCreate, &c->array, &d);
        break;
    }
    case M_MIPMAP: {
        /* RGBA float texels, level 0 about 3/4 of len (the whole chain down to 1 x 1 is about
         * len), at most 16384 wide and high: within every current GPU's 2D mipmap limits. */
        size_t texels = len / 16 * 3 / 4 ? len / 16 * 3 / 4 : 1;
        size_t w = texels < 16384 ? texels : 16384, h = (texels + w - 1) / w;
        if (h > 16384) {
            fprintf(stderr, "convgpu-sample: %zu bytes is too much for one mipmapped array; "
                            "use --chunks\n", len);
            return 1;
        }
        CUDA_ARRAY3D_DESCRIPTOR d = {w, h, 0, CU_AD_FORMAT_FLOAT, 4, 0};
        unsigned levels = 0;
        for (size_t m = w > h ? w : h; m; m >>= 1)
            levels++;
        rc = ALLOC(cuMipmappedArrayCreate, &c->mipmap, &d, levels);
        break;
    }
    case M_VMM: {
        CUmemAllocationProp prop;
        memset(&prop, 0, sizeof prop);
        prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
        prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        prop.location.id = dev;
        size_t g = 0;
        if ((rc = CALL(cuMemGetAllocationGranularity, &g, &prop,
                       CU_MEM_ALLOC_GRANULARITY_MINIMUM)))
            break;
        c->mapped = (len + g - 1) / g * g;
        if ((rc = ALLOC(cuMemCreate, &c->handle, c->mapped, &prop, 0)))
            break;
        if ((rc = CALL(cuMemAddressReserve, &c->ptr, c->mapped, 0, 0, 0))) {
            api.cuMemRelease(c->handle);
            c->handle = 0;
            break;
        }
        CUmemAccessDesc acc = {{CU_MEM_LOCATION_TYPE_DEVICE, dev},
                               CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
        if ((rc = CALL(cuMemMap, c->ptr, c->mapped, 0, c->handle, 0)) == 0)
            rc = CALL(cuMemSetAccess, c->ptr, c->mapped, &acc, 1);
        break;
    }
    }
    return rc;
}

static int free_chunk(chunk *c)
{
    int rc = 0;
    switch (opt.mode) {
    case M_PLAIN:
    case M_PITCH:
    case M_MANAGED:
        if (c->ptr)
            rc = CALL(cuMemFree, c->ptr);
        break;
    case M_ASYNC:
    case M_POOL:
        if (c->ptr && (rc = CALL(cuMemFreeAsync, c->ptr, stream)) == 0)
            rc = CALL(cuStreamSynchronize, stream);
        break;
    case M_ARRAY:
        if (c->array)
            rc = CALL(cuArrayDestroy, c->array);
        break;
    case M_MIPMAP:
        if (c->mipmap)
            rc = CALL(cuMipmappedArrayDestroy, c->mipmap);
        break;
    case M_VMM:
        if (c->ptr) {
            api.cuMemUnmap(c->ptr, c->mapped); /* fails harmlessly if never mapped */
            rc |= CALL(cuMemAddressFree, c->ptr, c->mapped);
        }
        if (c->handle)
            rc |= CALL(cuMemRelease, c->handle);
        rc = rc ? 1 : 0;
        break;
    }
    memset(c, 0, sizeof *c);
    return rc;
}

static unsigned char pattern(size_t i, unsigned round)
{
    return (unsigned char)(i * 131u + 7u + round + opt.seed);
}

/* How much of a chunk is checked: its first --touch bytes, or all of it. */
static size_t checked_len(const chunk *c)
{
    return opt.touch && opt.touch < c->len ? (size_t)opt.touch : c->len;
}

/* A host buffer for the checked part of a chunk: 1 with the buffer, 0 where the mode has no
 * linear memory to check (arrays), -1 (said) when the host is out of memory. */
static int host_span(const chunk *c, unsigned char **host, size_t *len)
{
    if (opt.mode == M_ARRAY || opt.mode == M_MIPMAP)
        return 0;
    *len = checked_len(c);
    if (!(*host = malloc(*len))) {
        fprintf(stderr, "convgpu-sample: out of host memory\n");
        return -1;
    }
    return 1;
}

/* Before anything is written: what the driver gave must be nobody's data. The emulator (and
 * NVIDIA's driver, which clears memory before another process gets it) give zeros; a byte
 * that is not zero is another process's, or this one's from before. */
static int fresh_check(const chunk *c)
{
    unsigned char *host;
    size_t len;
    int span = host_span(c, &host, &len);
    if (span <= 0)
        return -span;
    memset(host, 0xa5, len);
    int rc = CALL(cuMemcpyDtoH, host, c->ptr, len);
    for (size_t i = 0; rc == 0 && i < len; i++) {
        if (host[i] != 0) {
            fprintf(stderr, "convgpu-sample: fresh memory holds data (byte %zu is 0x%02x)\n", i,
                    host[i]);
            rc = 1;
        }
    }
    free(host);
    return rc;
}

/* Copy in, complement on the device, copy out, verify (the first --touch bytes, or all). */
static int exercise(chunk *c, unsigned round)
{
    unsigned char *host;
    size_t len;
    int span = host_span(c, &host, &len);
    if (span <= 0)
        return -span;
    for (size_t i = 0; i < len; i++)
        host[i] = pattern(i, round);
    int async = opt.mode == M_ASYNC || opt.mode == M_POOL;
    int rc = async ? CALL(cuMemcpyHtoDAsync, c->ptr, host, len, stream)
                   : CALL(cuMemcpyHtoD, c->ptr, host, len);
    size_t n = len;
    void *params[] = {&c->ptr, &n};
    unsigned grid = (unsigned)((n + 255) / 256 < 0x7fffffff ? (n + 255) / 256 : 0x7fffffff);
    if (rc == 0)
        rc = CALL(cuLaunchKernel, kernel, grid, 1, 1, 256, 1, 1, 0, async ? stream : NULL,
                  params, NULL);
    memset(host, 0, len);
    if (rc == 0)
        rc = async ? CALL(cuMemcpyDtoHAsync, host, c->ptr, len, stream)
                   : CALL(cuMemcpyDtoH, host, c->ptr, len);
    if (rc == 0 && async)
        rc = CALL(cuStreamSynchronize, stream);
    for (size_t i = 0; rc == 0 && i < len; i++) {
        if (host[i] != (unsigned char)~pattern(i, round)) {
            fprintf(stderr, "convgpu-sample: verification failed at byte %zu\n", i);
            rc = 1;
        }
    }
    free(host);
    return rc;
}

/* The device still holds what exercise() left: the complement of the pattern. */
static int recheck(const chunk *c, unsigned round)
{
    unsigned char *host;
    size_t len;
    int span = host_span(c, &host, &len);
    if (span <= 0)
        return -span;
    int rc = CALL(cuMemcpyDtoH, host, c->ptr, len);
    for (size_t i = 0; rc == 0 && i < len; i++) {
        if (host[i] != (unsigned char)~pattern(i, round)) {
            fprintf(stderr, "convgpu-sample: after the hold: verification failed at byte %zu\n",
                    i);
            rc = 1;
        }
    }
    free(host);
    return rc;
}

static volatile unsigned long work_sink; /* the host work's result, kept from the optimizer */

static double cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* A job's run with its memory held: --work-ms of this process's CPU time (time stopped does
 * not count: a suspended job's work waits too), reading a 1 MiB piece of the memory back and
 * verifying it every 50 ms of it, so the device calls stay short (a process stopped inside
 * one cannot be checkpointed, docs/SLURM.md). */
static int work(const chunk *cs, unsigned nchunks, unsigned round)
{
    enum { PIECE = 1 << 20, EVERY_MS = 50 };
    if (opt.mode == M_ARRAY || opt.mode == M_MIPMAP)
        return 0;
    unsigned char *host = malloc(PIECE);
    if (!host) {
        fprintf(stderr, "convgpu-sample: out of host memory\n");
        return 1;
    }
    double start = cpu_ms(), next = start;
    size_t at = 0;
    unsigned k = 0, pieces = 0;
    int rc = 0;
    while (rc == 0 && cpu_ms() - start < (double)opt.work_ms) {
        if (cpu_ms() < next) {
            for (unsigned i = 0; i < 100000; i++)
                work_sink += i * 2654435761u;
            continue;
        }
        next += EVERY_MS;
        const chunk *c = &cs[k % nchunks];
        size_t len = checked_len(c);
        size_t n = len < PIECE ? len : PIECE;
        if (at + n > len)
            at = 0;
        rc = CALL(cuMemcpyDtoH, host, c->ptr + at, n);
        for (size_t i = 0; rc == 0 && i < n; i++)
            if (host[i] != (unsigned char)~pattern(at + i, round)) {
                fprintf(stderr, "convgpu-sample: during the work: verification failed at byte "
                                "%zu\n", at + i);
                rc = 1;
            }
        at += n;
        k++;
        pieces++;
    }
    free(host);
    if (rc == 0)
        say("round %u: %lu ms of work done, %u pieces read back verified\n", round + 1,
            opt.work_ms, pieces);
    return rc;
}

static void nap_ms(unsigned long ms)
{
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

/* Tests hold a state until they release it (the file appears, or a signal), never for a time
 * they guess is long enough: on a loaded machine their checks may take any time. */
static void hold(void)
{
    if (opt.hold_forever) {
        for (;;)
            pause();
    }
    if (opt.hold_until) {
        struct stat sb;
        while (stat(opt.hold_until, &sb) != 0)
            nap_ms(10);
        return;
    }
    nap_ms(opt.hold_ms);
}

static int one_round(unsigned round)
{
    chunk *cs = calloc(opt.chunks, sizeof *cs);
    if (!cs)
        return 1;
    int rc = 0;
    size_t piece = (size_t)(opt.size / opt.chunks);
    for (unsigned i = 0; rc == 0 && i < opt.chunks; i++) {
        size_t len = i + 1 == opt.chunks ? (size_t)(opt.size - piece * (opt.chunks - 1)) : piece;
        rc = alloc_chunk(&cs[i], len);
    }
    if (rc == 0)
        rc = report_meminfo("after_alloc");
    for (unsigned i = 0; rc == 0 && opt.fresh_check && i < opt.chunks; i++)
        rc = fresh_check(&cs[i]);
    if (rc == 0 && opt.fresh_check)
        say("round %u: the fresh memory held nobody's data\n", round + 1);
    for (unsigned i = 0; rc == 0 && i < opt.chunks; i++)
        rc = exercise(&cs[i], round);
    if (rc == 0) {
        say("round %u: %s allocation of %llu bytes in %u chunk(s) verified\n", round + 1,
            mode_names[opt.mode], (unsigned long long)opt.size, opt.chunks);
        if (opt.work_ms)
            rc = work(cs, opt.chunks, round);
        if (rc == 0 && (opt.hold_ms || opt.hold_until || opt.hold_forever))
            hold();
        for (unsigned i = 0; rc == 0 && opt.recheck && i < opt.chunks; i++)
            rc = recheck(&cs[i], round);
        if (rc == 0 && opt.recheck)
            say("round %u: the memory read back after the hold verified\n", round + 1);
    }
    for (unsigned i = 0; i < opt.chunks; i++) {
        int frc = free_chunk(&cs[i]);
        if (rc == 0)
            rc = frc;
    }
    free(cs);
    if (rc == 0)
        rc = report_meminfo("after_free");
    return rc;
}

static int setup(void)
{
    int count = 0, version = 0;
    char name[128];
    int rc = CALL(cuDriverGetVersion, &version);
    if (rc == 0)
        rc = CALL(cuDeviceGetCount, &count);
    if (rc)
        return rc;
    if (opt.device < 0 || opt.device >= count) {
        fprintf(stderr, "convgpu-sample: device %d does not exist (%d device(s))\n", opt.device,
                count);
        return 1;
    }
    if ((rc = CALL(cuDeviceGet, &dev, opt.device)) || (rc = CALL(cuDeviceGetName, name, sizeof name, dev)))
        return rc;
    if (opt.report)
        printf("driver_version=%d\ndevice_count=%d\ndevice=%d\ndevice_name=%s\n", version,
               count, opt.device, name);
    say("device %d: %s (driver API %d)\n", opt.device, name, version);
    /* The runtime's way: the device's primary context, made current. */
    if ((rc = ALLOC(cuDevicePrimaryCtxRetain, &ctx, dev)))
        return rc;
    ctx_retained = 1;
    if ((rc = CALL(cuCtxSetCurrent, ctx)) || (rc = report_meminfo("before")))
        return rc;
    /* The same PTX for a real driver (which JIT-compiles it) and the emulator (which runs its
     * built-in kernel of that name). */
    if ((rc = CALL(cuModuleLoadData, &module, complement_ptx)) ||
        (rc = CALL(cuModuleGetFunction, &kernel, module, "complement")))
        return rc;
    if (opt.mode == M_ASYNC || opt.mode == M_POOL)
        if ((rc = CALL(cuStreamCreate, &stream, CU_STREAM_NON_BLOCKING)))
            return rc;
    if (opt.mode == M_POOL) {
        CUmemPoolProps props;
        memset(&props, 0, sizeof props);
        props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
        props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        props.location.id = dev;
        rc = CALL(cuMemPoolCreate, &pool, &props);
    }
    return rc;
}

static void teardown(void)
{
    if (pool)
        CALL(cuMemPoolDestroy, pool);
    if (stream)
        CALL(cuStreamDestroy, stream);
    if (module)
        CALL(cuModuleUnload, module);
    if (ctx_retained)
        CALL(cuDevicePrimaryCtxRelease, dev);
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: convgpu-sample [options]\n"
            "Allocates device memory, copies a pattern in, runs the complement kernel, copies\n"
            "it back and verifies it, through the CUDA driver API found by the dynamic loader.\n"
            "  --size SIZE     bytes to allocate (e.g. 64MiB, 1.5GiB; default 64MiB)\n"
            "  --api API       plain|pitch|managed|vmm|async|pool|array|mipmap\n"
            "                  (default plain)\n"
            "  --chunks N      allocate in N pieces (default 1)\n"
            "  --hold-ms N     keep the memory N milliseconds after verifying\n"
            "  --hold-until F  keep it until the file F exists (a test's release)\n"
            "  --hold          keep it until a signal ends the process\n"
            "  --recheck       after the hold, read the memory back and verify it again\n"
            "                  (what a pause, swap or suspend kept)\n"
            "  --touch SIZE    copy and verify only the first SIZE bytes of each piece\n"
            "                  (default all; keeps big runs fast where page faults are slow)\n"
            "  --device N      device ordinal (default 0)\n"
            "  --repeat N      run the whole cycle N times (default 1)\n"
            "  --seed N        shift the pattern by N (0-255): runs with different seeds\n"
            "                  differ in every byte\n"
            "  --fresh-check   before writing, read the fresh allocation: it must be zeros\n"
            "                  (nobody's data)\n"
            "  --work-ms N     after verifying, N ms of CPU time of host work with the memory\n"
            "                  held, a 1 MiB piece read back and verified every 50 ms\n"
            "  --quiet         print nothing but errors\n"
            "  --report        print key=value lines (memory info, every call's CUresult)\n"
            "  --help          this text\n"
            "Exit status: 0 ok, 2 an allocation ran out of device memory, 1 other failure.\n");
}

static int parse_uint(const char *s, unsigned long max, unsigned long *out)
{
    char *end;
    if (!s || !*s || *s == '-')
        return -1;
    unsigned long v = strtoul(s, &end, 10);
    if (*end || v > max)
        return -1;
    *out = v;
    return 0;
}

static int parse_args(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"size", required_argument, NULL, 's'},   {"api", required_argument, NULL, 'a'},
        {"touch", required_argument, NULL, 't'},
        {"chunks", required_argument, NULL, 'c'}, {"hold-ms", required_argument, NULL, 'H'},
        {"hold-until", required_argument, NULL, 'U'}, {"hold", no_argument, NULL, 'F'},
        {"recheck", no_argument, NULL, 'K'},
        {"device", required_argument, NULL, 'd'}, {"repeat", required_argument, NULL, 'r'},
        {"quiet", no_argument, NULL, 'q'},        {"report", no_argument, NULL, 'R'},
        {"seed", required_argument, NULL, 'S'},   {"fresh-check", no_argument, NULL, 'Z'},
        {"work-ms", required_argument, NULL, 'W'},
        {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0}};
    int c;
    unsigned long v;
    const char *why;
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (c) {
        case 's':
            if (cg_parse_size(optarg, &opt.size, &why) != 0 || opt.size == 0) {
                fprintf(stderr, "convgpu-sample: bad --size '%s': %s\n", optarg,
                        opt.size == 0 ? "must be positive" : why);
                return -1;
            }
            break;
        case 't':
            if (cg_parse_size(optarg, &opt.touch, &why) != 0 || opt.touch == 0) {
                fprintf(stderr, "convgpu-sample: bad --touch '%s': %s\n", optarg,
                        opt.touch == 0 ? "must be positive" : why);
                return -1;
            }
            break;
        case 'a': {
            size_t i;
            for (i = 0; i < sizeof mode_names / sizeof mode_names[0]; i++)
                if (strcmp(optarg, mode_names[i]) == 0)
                    break;
            if (i == sizeof mode_names / sizeof mode_names[0]) {
                fprintf(stderr, "convgpu-sample: unknown --api '%s'\n", optarg);
                return -1;
            }
            opt.mode = (enum mode)i;
            break;
        }
        case 'c':
            if (parse_uint(optarg, 1u << 20, &v) || v == 0)
                goto bad;
            opt.chunks = (unsigned)v;
            break;
        case 'H':
            if (parse_uint(optarg, 1ul << 31, &v))
                goto bad;
            opt.hold_ms = v;
            break;
        case 'U':
            if (!*optarg || strlen(optarg) >= 4096) {
                fprintf(stderr, "convgpu-sample: bad --hold-until '%s': want a path\n", optarg);
                return -1;
            }
            opt.hold_until = optarg;
            break;
        case 'F': opt.hold_forever = 1; break;
        case 'K': opt.recheck = 1; break;
        case 'd':
            if (parse_uint(optarg, 1u << 16, &v))
                goto bad;
            opt.device = (int)v;
            break;
        case 'r':
            if (parse_uint(optarg, 1u << 20, &v) || v == 0)
                goto bad;
            opt.repeat = (unsigned)v;
            break;
        case 'S':
            if (parse_uint(optarg, 255, &v))
                goto bad;
            opt.seed = (unsigned)v;
            break;
        case 'Z': opt.fresh_check = 1; break;
        case 'W':
            if (parse_uint(optarg, 1ul << 31, &v))
                goto bad;
            opt.work_ms = v;
            break;
        case 'q': opt.quiet = 1; break;
        case 'R': opt.report = 1; break;
        case 'h': usage(stdout); exit(0);
        default: usage(stderr); return -1;
        }
        continue;
    bad:
        fprintf(stderr, "convgpu-sample: bad value '%s' for --%s\n", optarg,
                c == 'c' ? "chunks" : c == 'H' ? "hold-ms" : c == 'd' ? "device"
                : c == 'S' ? "seed" : c == 'W' ? "work-ms" : "repeat");
        return -1;
    }
    if (optind < argc) {
        fprintf(stderr, "convgpu-sample: unexpected argument '%s'\n", argv[optind]);
        return -1;
    }
    if ((opt.hold_ms != 0) + (opt.hold_until != NULL) + opt.hold_forever > 1) {
        fprintf(stderr, "convgpu-sample: --hold-ms, --hold-until and --hold exclude each other\n");
        return -1;
    }
    if (opt.chunks > opt.size) {
        fprintf(stderr, "convgpu-sample: more chunks than bytes\n");
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (parse_args(argc, argv) != 0)
        return 1;
    if (opt.report)
        printf("api=%s\nsize=%llu\nchunks=%u\n", mode_names[opt.mode],
               (unsigned long long)opt.size, opt.chunks);
    int rc = load_driver();
    if (rc == 0)
        rc = setup();
    for (unsigned r = 0; rc == 0 && r < opt.repeat; r++)
        rc = one_round(r);
    teardown();
    if (opt.report)
        printf("result=%s\n", rc == 0 ? "ok" : rc == 2 ? "out_of_memory" : "error");
    if (rc == 2)
        printf("convgpu-sample: out of device memory (CUDA_ERROR_OUT_OF_MEMORY)\n");
    fflush(stdout);
    return rc;
}

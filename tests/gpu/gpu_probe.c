/* gpu_probe — small real-GPU measurements for tests/gpu/run.sh, written against the CUDA
 * driver API as the CUDA runtime reaches it: dlopen("libcuda.so.1") and dlsym of the versioned
 * entry points on that handle (which is exactly what libconvgpu.so's dlsym hook must answer).
 * NVML is reached the same way. Links nothing but libc/libdl; types come from the toolkit's
 * cuda.h and our own nvml_types.h (the toolkit ships no nvml.h).
 *
 *   gpu_probe info                  device name, total memory, driver version (NVML + driver)
 *   gpu_probe measure               context charge (NVML device delta, NVML per-process use,
 *                                   cuMemGetInfo), allocation granularity, free-memory delta of
 *                                   small cuMemAlloc sizes, one at a time and 64 held at once
 *   gpu_probe timing [ITERS] [SIZE] API response times (ns): cuMemAlloc_v2 + cuMemFree_v2 of
 *                                   SIZE bytes (default 2 MiB), cuMemGetInfo_v2; median, p90, mean
 *   gpu_probe hold SIZE MS          allocate SIZE bytes, keep them MS milliseconds, free; prints
 *                                   wall-clock times (for the suspend/resume test)
 *   gpu_probe hold-until SIZE FILE  the same, keeping them until FILE exists (the test's release:
 *                                   it holds as long as the test's checks take)
 *
 * Output: key=value lines on stdout. Exit status: 0 ok, 2 an allocation failed with
 * CUDA_ERROR_OUT_OF_MEMORY, 1 anything else. */
#include <cuda.h>

#include "nvml_types.h"

#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

typedef CUresult (*fn_init)(unsigned int);
typedef CUresult (*fn_driver_version)(int *);
typedef CUresult (*fn_device_get)(CUdevice *, int);
typedef CUresult (*fn_device_name)(char *, int, CUdevice);
typedef CUresult (*fn_total_mem)(size_t *, CUdevice);
typedef CUresult (*fn_ctx_retain)(CUcontext *, CUdevice);
typedef CUresult (*fn_ctx_release)(CUdevice);
typedef CUresult (*fn_ctx_set)(CUcontext);
typedef CUresult (*fn_mem_info)(size_t *, size_t *);
typedef CUresult (*fn_mem_alloc)(CUdeviceptr *, size_t);
typedef CUresult (*fn_mem_free)(CUdeviceptr);
typedef CUresult (*fn_granularity)(size_t *, const CUmemAllocationProp *,
                                   CUmemAllocationGranularity_flags);
typedef CUresult (*fn_error_name)(CUresult, const char **);

static struct {
    fn_init init;
    fn_driver_version driver_version;
    fn_device_get device_get;
    fn_device_name device_name;
    fn_total_mem total_mem;
    fn_ctx_retain ctx_retain;
    fn_ctx_release ctx_release;
    fn_ctx_set ctx_set;
    fn_mem_info mem_info;
    fn_mem_alloc mem_alloc;
    fn_mem_free mem_free;
    fn_granularity granularity;
    fn_error_name error_name;
} cu;

static struct {
    void *h;
    PFN_nvmlInit_v2 init;
    PFN_nvmlShutdown shutdown;
    PFN_nvmlDeviceGetHandleByIndex_v2 handle;
    PFN_nvmlDeviceGetMemoryInfo mem;
    PFN_nvmlDeviceGetComputeRunningProcesses_v3 procs;
    PFN_nvmlSystemGetDriverVersion driver;
    nvmlDevice_t dev;
    int ok;
} nv;

static CUdevice dev;
static CUcontext ctx;

static void *sym(void *h, const char *name)
{
    void *p = dlsym(h, name);
    if (!p)
        fprintf(stderr, "gpu_probe: %s not found\n", name);
    return p;
}

#define LOAD(h, field, name)                          \
    do {                                              \
        void *p_ = sym((h), (name));                  \
        if (!p_)                                      \
            return -1;                                \
        memcpy(&(field), &p_, sizeof p_);             \
    } while (0)

static int load_cuda(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "gpu_probe: cannot load libcuda.so.1: %s\n", dlerror());
        return -1;
    }
    LOAD(h, cu.init, "cuInit");
    LOAD(h, cu.driver_version, "cuDriverGetVersion");
    LOAD(h, cu.device_get, "cuDeviceGet");
    LOAD(h, cu.device_name, "cuDeviceGetName");
    LOAD(h, cu.total_mem, "cuDeviceTotalMem_v2");
    LOAD(h, cu.ctx_retain, "cuDevicePrimaryCtxRetain");
    LOAD(h, cu.ctx_release, "cuDevicePrimaryCtxRelease_v2");
    LOAD(h, cu.ctx_set, "cuCtxSetCurrent");
    LOAD(h, cu.mem_info, "cuMemGetInfo_v2");
    LOAD(h, cu.mem_alloc, "cuMemAlloc_v2");
    LOAD(h, cu.mem_free, "cuMemFree_v2");
    LOAD(h, cu.granularity, "cuMemGetAllocationGranularity");
    LOAD(h, cu.error_name, "cuGetErrorName");
    return 0;
}

/* NVML is optional: without it the NVML figures are simply not printed. */
static void load_nvml(void)
{
    nv.h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!nv.h) {
        printf("nvml=unavailable\n");
        return;
    }
    void *p;
#define NVSYM(field, name)                        \
    if (!(p = dlsym(nv.h, name))) {               \
        printf("nvml=incomplete(%s)\n", name);    \
        return;                                   \
    }                                             \
    memcpy(&nv.field, &p, sizeof p);
    NVSYM(init, "nvmlInit_v2")
    NVSYM(shutdown, "nvmlShutdown")
    NVSYM(handle, "nvmlDeviceGetHandleByIndex_v2")
    NVSYM(mem, "nvmlDeviceGetMemoryInfo")
    NVSYM(procs, "nvmlDeviceGetComputeRunningProcesses_v3")
    NVSYM(driver, "nvmlSystemGetDriverVersion")
#undef NVSYM
    if (nv.init() != NVML_SUCCESS || nv.handle(0, &nv.dev) != NVML_SUCCESS) {
        printf("nvml=init_failed\n");
        return;
    }
    nv.ok = 1;
}

static const char *errname(CUresult rc)
{
    const char *s = NULL;
    if (cu.error_name && cu.error_name(rc, &s) == CUDA_SUCCESS && s)
        return s;
    return "CUDA_ERROR_UNRECOGNIZED";
}

static int ck(const char *what, CUresult rc)
{
    if (rc == CUDA_SUCCESS)
        return 0;
    fprintf(stderr, "gpu_probe: %s failed: %s\n", what, errname(rc));
    printf("error=%s:%s\n", what, errname(rc));
    return rc == CUDA_ERROR_OUT_OF_MEMORY ? 2 : 1;
}

static int open_context(int device)
{
    int rc;
    if ((rc = ck("cuInit", cu.init(0))) || (rc = ck("cuDeviceGet", cu.device_get(&dev, device))) ||
        (rc = ck("cuDevicePrimaryCtxRetain", cu.ctx_retain(&ctx, dev))) ||
        (rc = ck("cuCtxSetCurrent", cu.ctx_set(ctx))))
        return rc;
    return 0;
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t unix_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000ull + (uint64_t)ts.tv_nsec / 1000000ull;
}

static int parse_size(const char *s, size_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s)
        return -1;
    if (strcmp(end, "KiB") == 0)
        v <<= 10;
    else if (strcmp(end, "MiB") == 0)
        v <<= 20;
    else if (strcmp(end, "GiB") == 0)
        v <<= 30;
    else if (*end)
        return -1;
    *out = (size_t)v;
    return 0;
}

static int nvml_device_used(unsigned long long *used)
{
    nvmlMemory_t m;
    if (!nv.ok || nv.mem(nv.dev, &m) != NVML_SUCCESS)
        return -1;
    *used = m.used;
    return 0;
}

/* This process's GPU memory as NVML sees it; -1 if NVML does not list it or hides the value
 * (containers with their own pid namespace, some virtualised GPUs). */
static int nvml_process_used(unsigned long long *used)
{
    nvmlProcessInfo_t infos[256];
    unsigned count = 256;
    if (!nv.ok || nv.procs(nv.dev, &count, infos) != NVML_SUCCESS)
        return -1;
    for (unsigned i = 0; i < count; i++) {
        if (infos[i].pid == (unsigned)getpid()) {
            if (infos[i].usedGpuMemory == ~0ull || infos[i].usedGpuMemory == NVML_VALUE_NOT_AVAILABLE)
                return -2;
            *used = infos[i].usedGpuMemory;
            return 0;
        }
    }
    return -1;
}

static int cmd_info(void)
{
    int rc, version = 0;
    char name[256];
    size_t total = 0;
    load_nvml();
    if (nv.ok) {
        char drv[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE];
        nvmlMemory_t m;
        if (nv.driver(drv, sizeof drv) == NVML_SUCCESS)
            printf("nvml_driver_version=%s\n", drv);
        if (nv.mem(nv.dev, &m) == NVML_SUCCESS)
            printf("nvml_total=%llu\nnvml_used=%llu\nnvml_free=%llu\n", m.total, m.used, m.free);
    }
    if ((rc = ck("cuInit", cu.init(0))) || (rc = ck("cuDriverGetVersion", cu.driver_version(&version))) ||
        (rc = ck("cuDeviceGet", cu.device_get(&dev, 0))) ||
        (rc = ck("cuDeviceGetName", cu.device_name(name, sizeof name, dev))) ||
        (rc = ck("cuDeviceTotalMem_v2", cu.total_mem(&total, dev))))
        return rc;
    for (char *p = name; *p; p++)
        if (*p == ' ')
            *p = '_';
    printf("cuda_driver_version=%d\ndevice_name=%s\ndevice_total=%zu\n", version, name, total);
    return 0;
}

static int cmd_measure(void)
{
    int rc;
    unsigned long long before = 0, after = 0, proc = 0;
    load_nvml();
    int have_before = nvml_device_used(&before) == 0;
    if ((rc = open_context(0)))
        return rc;
    /* A context may materialise lazily: the first allocation forces it; measure around it. */
    size_t free0 = 0, total = 0, free1 = 0, dummy = 0;
    if ((rc = ck("cuMemGetInfo_v2", cu.mem_info(&free0, &total))))
        return rc;
    printf("device_total=%zu\nfree_after_context=%zu\n", total, free0);
    if (have_before && nvml_device_used(&after) == 0)
        printf("context_nvml_device_delta=%lld\n", (long long)(after - before));
    int pr = nvml_process_used(&proc);
    if (pr == 0)
        printf("context_nvml_process_used=%llu\n", proc);
    else
        printf("context_nvml_process_used=%s\n", pr == -2 ? "not_available" : "not_listed");

    CUmemAllocationProp prop;
    memset(&prop, 0, sizeof prop);
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = dev;
    size_t gmin = 0, grec = 0;
    if ((rc = ck("cuMemGetAllocationGranularity(minimum)",
                 cu.granularity(&gmin, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM))) ||
        (rc = ck("cuMemGetAllocationGranularity(recommended)",
                 cu.granularity(&grec, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED))))
        return rc;
    printf("vmm_granularity_minimum=%zu\nvmm_granularity_recommended=%zu\n", gmin, grec);

    /* Free-memory delta of small allocations (each alone, freed before the next). */
    static const size_t sizes[] = {1, 4096, 65536, 1u << 20, (2u << 20) + 1};
    static const char *const names[] = {"1B", "4KiB", "64KiB", "1MiB", "2MiBplus1"};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        CUdeviceptr p = 0;
        if ((rc = ck("cuMemGetInfo_v2", cu.mem_info(&free0, &dummy))) ||
            (rc = ck("cuMemAlloc_v2", cu.mem_alloc(&p, sizes[i]))) ||
            (rc = ck("cuMemGetInfo_v2", cu.mem_info(&free1, &dummy))))
            return rc;
        printf("alloc_delta_%s=%lld\n", names[i], (long long)free0 - (long long)free1);
        if ((rc = ck("cuMemFree_v2", cu.mem_free(p))))
            return rc;
    }
    /* Many small allocations held at once: does the driver pack them into shared pages (free
     * falls by far less than count x 2 MiB) or back each with its own? convgpu charges each one
     * rounded up to the daemon's granularity, so packing would mean over-charging them. */
    static const size_t held_sizes[] = {4096, 65536, 1u << 20};
    static const char *const held_names[] = {"4KiB", "64KiB", "1MiB"};
    enum { HELD = 64 };
    for (size_t i = 0; i < sizeof held_sizes / sizeof held_sizes[0]; i++) {
        CUdeviceptr held[HELD] = {0};
        int n = 0;
        rc = ck("cuMemGetInfo_v2", cu.mem_info(&free0, &dummy));
        while (rc == 0 && n < HELD && (rc = ck("cuMemAlloc_v2", cu.mem_alloc(&held[n], held_sizes[i]))) == 0)
            n++;
        if (rc == 0 && (rc = ck("cuMemGetInfo_v2", cu.mem_info(&free1, &dummy))) == 0)
            printf("held%d_delta_%s=%lld\n", HELD, held_names[i], (long long)free0 - (long long)free1);
        while (n > 0)
            cu.mem_free(held[--n]);
        if (rc)
            return rc;
    }
    if (nv.ok && nvml_device_used(&after) == 0 && have_before)
        printf("nvml_device_delta_end=%lld\n", (long long)(after - before));
    cu.ctx_release(dev);
    return 0;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void stats(const char *name, uint64_t *v, size_t n)
{
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += (double)v[i];
    qsort(v, n, sizeof *v, cmp_u64);
    printf("%s_ns_median=%" PRIu64 "\n%s_ns_p90=%" PRIu64 "\n%s_ns_mean=%.0f\n", name, v[n / 2], name,
           v[(n * 9) / 10], name, sum / (double)n);
}

static int cmd_timing(size_t iters, size_t size)
{
    int rc;
    if ((rc = open_context(0)))
        return rc;
    uint64_t *ta = calloc(iters, sizeof *ta), *tf = calloc(iters, sizeof *tf),
             *ti = calloc(iters, sizeof *ti);
    if (!ta || !tf || !ti) {
        fprintf(stderr, "gpu_probe: out of host memory\n");
        return 1;
    }
    CUdeviceptr p = 0;
    size_t fr, to;
    /* The first allocation: under convgpu it may be the one that asks the daemon. */
    uint64_t t0 = now_ns();
    if ((rc = ck("cuMemAlloc_v2", cu.mem_alloc(&p, size))))
        return rc;
    printf("first_alloc_ns=%" PRIu64 "\n", now_ns() - t0);
    if ((rc = ck("cuMemFree_v2", cu.mem_free(p))))
        return rc;
    for (size_t i = 0; i < 32; i++) { /* warm-up */
        if ((rc = ck("cuMemAlloc_v2", cu.mem_alloc(&p, size))) || (rc = ck("cuMemFree_v2", cu.mem_free(p))))
            return rc;
    }
    for (size_t i = 0; i < iters; i++) {
        uint64_t a = now_ns();
        if ((rc = ck("cuMemAlloc_v2", cu.mem_alloc(&p, size))))
            return rc;
        uint64_t b = now_ns();
        if ((rc = ck("cuMemFree_v2", cu.mem_free(p))))
            return rc;
        uint64_t c = now_ns();
        if ((rc = ck("cuMemGetInfo_v2", cu.mem_info(&fr, &to))))
            return rc;
        uint64_t d = now_ns();
        ta[i] = b - a;
        tf[i] = c - b;
        ti[i] = d - c;
    }
    printf("iterations=%zu\nsize=%zu\n", iters, size);
    stats("cuMemAlloc", ta, iters);
    stats("cuMemFree", tf, iters);
    stats("cuMemGetInfo", ti, iters);
    free(ta);
    free(tf);
    free(ti);
    cu.ctx_release(dev);
    return 0;
}

/* Keeps SIZE bytes MS milliseconds, or until the file `release` exists when it is not NULL. */
static int cmd_hold(size_t size, unsigned long ms, const char *release)
{
    int rc;
    uint64_t start = unix_ms();
    printf("start_unix_ms=%" PRIu64 "\n", start);
    fflush(stdout);
    if ((rc = open_context(0)))
        return rc;
    CUdeviceptr p = 0;
    uint64_t t0 = unix_ms();
    if ((rc = ck("cuMemAlloc_v2", cu.mem_alloc(&p, size))))
        return rc;
    uint64_t t1 = unix_ms();
    printf("allocated=%zu\nalloc_at_unix_ms=%" PRIu64 "\nalloc_wait_ms=%" PRIu64 "\n", size, t1, t1 - t0);
    fflush(stdout);
    struct stat sb;
    while (release && stat(release, &sb) != 0) {
        struct timespec nap = {0, 10 * 1000000L};
        nanosleep(&nap, NULL);
    }
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
    while (!release && nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
    if ((rc = ck("cuMemFree_v2", cu.mem_free(p))))
        return rc;
    printf("freed_at_unix_ms=%" PRIu64 "\n", unix_ms());
    cu.ctx_release(dev);
    return 0;
}

static void usage(void)
{
    fprintf(stderr, "usage: gpu_probe info | measure | timing [ITERS] [SIZE] | hold SIZE MS |\n"
                    "       hold-until SIZE FILE\n"
                    "SIZE: bytes, or a number with KiB, MiB or GiB\n");
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc < 2) {
        usage();
        return 1;
    }
    if (load_cuda() != 0)
        return 1;
    const char *cmd = argv[1];
    if (strcmp(cmd, "info") == 0 && argc == 2)
        return cmd_info();
    if (strcmp(cmd, "measure") == 0 && argc == 2)
        return cmd_measure();
    if (strcmp(cmd, "timing") == 0 && argc <= 4) {
        size_t iters = 2000, size = 2u << 20;
        if ((argc > 2 && (parse_size(argv[2], &iters) || iters == 0)) ||
            (argc > 3 && (parse_size(argv[3], &size) || size == 0))) {
            usage();
            return 1;
        }
        return cmd_timing(iters, size);
    }
    if (strcmp(cmd, "hold") == 0 && argc == 4) {
        size_t size, ms;
        if (parse_size(argv[2], &size) || size == 0 || parse_size(argv[3], &ms)) {
            usage();
            return 1;
        }
        return cmd_hold(size, (unsigned long)ms, NULL);
    }
    if (strcmp(cmd, "hold-until") == 0 && argc == 4) {
        size_t size;
        if (parse_size(argv[2], &size) || size == 0 || !*argv[3]) {
            usage();
            return 1;
        }
        return cmd_hold(size, 0, argv[3]);
    }
    usage();
    return 1;
}

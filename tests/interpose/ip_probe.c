/* ip_probe.c — a CUDA program for the interposer tests that reaches the driver the way the CUDA
 * runtime does: dlopen("libcuda.so.1"), dlsym of cuGetProcAddress_v2, everything else through
 * it. Subcommands (exit 0 = as expected, 2 = out of memory, 1 = anything else):
 *   lookup            which functions dlsym/cuGetProcAddress hand out (pass-through checks)
 *   info              prints what cuMemGetInfo, cuDeviceTotalMem and NVML (v1, v2) report
 *   alloc SIZE        allocates SIZE (cuMemAlloc_v2), prints info, frees
 *   hold SIZE FILE    allocates SIZE, creates FILE, sleeps until killed or FILE is removed
 *   threads SIZE N BIG GO  one buffer of SIZE; N threads each ask for BIG (they must be
 *                     suspended); once the file GO exists (the test saw them suspended) the main
 *                     thread keeps freeing and allocating; waits until all done
 *   fork SIZE         parent holds SIZE across fork; checks the child is its own process
 *   steps SIZE FILE   allocates SIZE, creates FILE, waits until FILE is removed, allocates SIZE
 *                     again (exit 2 if that one is refused)
 *   release SIZE FILE FREED  allocates SIZE, creates FILE, waits until FILE is removed, frees,
 *                     creates FREED and stays alive (no further call into the driver) until
 *                     FREED is removed: a free that is the process's last word to the daemon
 *   arrays            creates arrays and mipmapped arrays of each kind; prints the fall of
 *                     cuMemGetInfo's free for each ("array NAME drop=BYTES") and after all are
 *                     destroyed ("array destroyed drop=BYTES")
 *   gpus FILE SIZE... on CUDA device k (its primary context current) allocates the k-th SIZE
 *                     and prints "gpu K alloc rc=R" and that device's cuMemGetInfo and NVML
 *                     memory ("gpu K free=F total=T nvml_total=N"); creates FILE, waits until
 *                     it is removed, frees everything (exit 2 if an allocation was refused) */
#include "cuda_types.h"
#include "nvml_types.h"
#include "size.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void *cuda;
static PFN_cuGetProcAddress_v2 get_proc;
static CUcontext the_ctx;

#define DIE(...)                                                                                   \
    do {                                                                                           \
        fprintf(stderr, "ip_probe: " __VA_ARGS__);                                                 \
        fputc('\n', stderr);                                                                       \
        exit(1);                                                                                   \
    } while (0)

static void *proc(const char *name, int version, cuuint64_t flags)
{
    void *p = NULL;
    CUdriverProcAddressQueryResult st;
    CUresult r = get_proc(name, &p, version, flags, &st);
    if (r != CUDA_SUCCESS || st != CU_GET_PROC_ADDRESS_SUCCESS)
        return NULL;
    return p;
}
#define P(sym) ((PFN_##sym)proc_or_die(#sym))
static void *proc_or_die(const char *versioned)
{
    /* cuGetProcAddress takes the base name: strip _v2 and friends. */
    char base[64];
    snprintf(base, sizeof base, "%s", versioned);
    char *v = strstr(base, "_v");
    if (v && v[2] >= '0' && v[2] <= '9')
        *v = '\0';
    void *p = proc(base, 12000, 0);
    if (!p)
        DIE("cuGetProcAddress(%s) failed", base);
    return p;
}

static const char *object_of(const void *p)
{
    Dl_info i;
    if (!p || !dladdr(p, &i) || !i.dli_fname)
        return "?";
    const char *s = strrchr(i.dli_fname, '/');
    return s ? s + 1 : i.dli_fname;
}

static void init(void)
{
    cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!cuda)
        DIE("dlopen libcuda.so.1: %s", dlerror());
    get_proc = (PFN_cuGetProcAddress_v2)dlsym(cuda, "cuGetProcAddress_v2");
    if (!get_proc)
        DIE("no cuGetProcAddress_v2");
    if (P(cuInit)(0) != CUDA_SUCCESS)
        DIE("cuInit failed");
    CUdevice dev;
    if (P(cuDeviceGet)(&dev, 0) != CUDA_SUCCESS ||
        P(cuDevicePrimaryCtxRetain)(&the_ctx, dev) != CUDA_SUCCESS ||
        P(cuCtxSetCurrent)(the_ctx) != CUDA_SUCCESS)
        DIE("no context");
}

static uint64_t parse(const char *s)
{
    uint64_t v;
    const char *e;
    if (cg_parse_size(s, &v, &e) != 0)
        DIE("bad size %s: %s", s, e);
    return v;
}

static CUresult alloc(CUdeviceptr *p, uint64_t n)
{
    return P(cuMemAlloc_v2)(p, n);
}

static void info(const char *tag)
{
    size_t f = 0, t = 0, tm = 0;
    CUresult r = P(cuMemGetInfo_v2)(&f, &t);
    CUresult r2 = P(cuDeviceTotalMem_v2)(&tm, 0);
    printf("%s cuMemGetInfo rc=%d free=%zu total=%zu\n", tag, (int)r, f, t);
    printf("%s cuDeviceTotalMem rc=%d total=%zu\n", tag, (int)r2, tm);
    void *nvml = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!nvml) {
        printf("%s nvml absent\n", tag);
        return;
    }
    PFN_nvmlInit_v2 ini = (PFN_nvmlInit_v2)dlsym(nvml, "nvmlInit_v2");
    PFN_nvmlDeviceGetHandleByIndex_v2 byidx =
        (PFN_nvmlDeviceGetHandleByIndex_v2)dlsym(nvml, "nvmlDeviceGetHandleByIndex_v2");
    PFN_nvmlDeviceGetMemoryInfo m1 = (PFN_nvmlDeviceGetMemoryInfo)dlsym(nvml, "nvmlDeviceGetMemoryInfo");
    PFN_nvmlDeviceGetMemoryInfo_v2 m2 =
        (PFN_nvmlDeviceGetMemoryInfo_v2)dlsym(nvml, "nvmlDeviceGetMemoryInfo_v2");
    nvmlDevice_t d;
    /* The container's device is the node's device N; NVML numbers the node's devices. */
    const char *idx = getenv("CONVGPU_TEST_NVML_INDEX");
    if (!ini || !byidx || !m1 || !m2 || ini() != NVML_SUCCESS ||
        byidx(idx ? (unsigned)atoi(idx) : 0, &d) != NVML_SUCCESS) {
        printf("%s nvml unusable\n", tag);
        return;
    }
    nvmlMemory_t a = {0};
    nvmlMemory_v2_t b = {.version = nvmlMemory_v2};
    int ra = (int)m1(d, &a), rb = (int)m2(d, &b);
    printf("%s nvml rc=%d free=%llu total=%llu used=%llu\n", tag, ra, a.free, a.total, a.used);
    printf("%s nvml_v2 rc=%d free=%llu total=%llu used=%llu\n", tag, rb, b.free, b.total, b.used);
}

/* ---- lookup: pass-through properties -------------------------------------------------------- */

static int failures;
static void expect(int ok, const char *what)
{
    printf("%s %s\n", ok ? "ok  " : "FAIL", what);
    if (!ok)
        failures++;
}

static int cmd_lookup(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    void *self = dlopen("libconvgpu.so", RTLD_NOW | RTLD_NOLOAD);
    expect(self != NULL, "libconvgpu.so is loaded (preloaded)");
    if (!self || !h)
        return 1;
    const char *conv = object_of(dlsym(self, "dlsym"));
    const char *drv = object_of(dlsym(h, "cuInit"));
    expect(strcmp(conv, "libconvgpu.so") == 0, "dlsym is ours");
    expect(strstr(drv, "libcuda") != NULL, "unhooked name on the driver handle -> the driver");
    expect(strcmp(object_of(dlsym(h, "cuMemAlloc_v2")), conv) == 0,
           "hooked name on the driver handle -> our wrapper");
    expect(dlsym(h, "cuMemAlloc_v2") == dlsym(self, "cuMemAlloc_v2"), "... the exported one");
    void *libc0 = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
    expect(libc0 && dlsym(libc0, "cuMemAlloc_v2") == NULL,
           "hooked name missing from that handle (libc) -> NULL");
    expect(dlsym(h, "no_such_symbol_xyz") == NULL && dlerror() != NULL, "missing name -> NULL + error");

    /* RTLD_NEXT from this executable: the first definition after it, as libc answers it (a
     * name a sanitizer runtime does not intercept, so the answer is libc's in every build). */
    void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
    (void)dlerror();
    void *n = dlsym(RTLD_NEXT, "getpid");
    expect(n != NULL && dlerror() == NULL, "RTLD_NEXT getpid found, no error left");
    expect(libc && n == dlsym(libc, "getpid"), "RTLD_NEXT getpid = libc's getpid");
    expect(strcmp(object_of(dlsym(RTLD_NEXT, "cuMemAlloc_v2")), conv) == 0,
           "RTLD_NEXT hooked name -> our wrapper");
    expect(strstr(object_of(dlsym(RTLD_NEXT, "cuInit")), "libcuda") != NULL,
           "RTLD_NEXT unhooked driver name -> the driver");
    expect(dlsym(RTLD_DEFAULT, "cuMemFree_v2") == dlsym(self, "cuMemFree_v2"),
           "RTLD_DEFAULT hooked name -> our wrapper");

    /* cuGetProcAddress: the wrapper of exactly the variant the driver picks. */
    get_proc = (PFN_cuGetProcAddress_v2)dlsym(h, "cuGetProcAddress_v2");
    expect(get_proc == dlsym(self, "cuGetProcAddress_v2"), "cuGetProcAddress_v2 is ours");
    P(cuInit)(0);
    expect(proc("cuMemAlloc", 12000, 0) == dlsym(self, "cuMemAlloc_v2"), "cuMemAlloc@12000 -> our _v2");
    expect(proc("cuMemAllocAsync", 12000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) ==
               dlsym(self, "cuMemAllocAsync_ptsz"),
           "cuMemAllocAsync per-thread -> our _ptsz");
    expect(proc("cuMemAllocAsync", 12000, CU_GET_PROC_ADDRESS_LEGACY_STREAM) ==
               dlsym(self, "cuMemAllocAsync"),
           "cuMemAllocAsync legacy -> our plain variant");
    expect(proc("cuGetProcAddress", 12000, 0) == dlsym(self, "cuGetProcAddress_v2"),
           "cuGetProcAddress@12000 -> our _v2");
    expect(proc("nvmlDeviceGetMemoryInfo", 12000, 0) == NULL, "non-driver name -> not found");
    void *cp = proc("cuStreamSynchronize", 12000, 0);
    expect(cp && strstr(object_of(cp), "libcuda") != NULL, "unhooked cuStreamSynchronize -> the driver");
    expect(proc("cuMemcpyHtoD", 12000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) ==
               dlsym(self, "cuMemcpyHtoD_v2_ptds"),
           "cuMemcpyHtoD per-thread -> our _v2_ptds (copies wait while swapped out)");
    void *p4 = NULL;
    expect(get_proc("cuMemFree", &p4, 12000, 0, NULL) == CUDA_SUCCESS &&
               p4 == dlsym(self, "cuMemFree_v2"),
           "symbolStatus NULL accepted");
    PFN_cuGetProcAddress g1 = (PFN_cuGetProcAddress)dlsym(h, "cuGetProcAddress");
    void *p5 = NULL;
    expect(g1 && g1("cuMemGetInfo", &p5, 12000, 0) == CUDA_SUCCESS &&
               p5 == dlsym(self, "cuMemGetInfo_v2"),
           "cuGetProcAddress (4 args) -> our cuMemGetInfo_v2");

    /* Pass-through works through the wrappers. */
    init();
    CUdeviceptr d;
    expect(alloc(&d, 1 << 20) == CUDA_SUCCESS && P(cuMemFree_v2)(d) == CUDA_SUCCESS,
           "allocate and free through the wrappers");
    expect(P(cuMemFree_v2)(0xdead0000) != CUDA_SUCCESS, "bad free still reported by the driver");
    return failures ? 1 : 0;
}

/* ---- threads: one suspended, others keep going ---------------------------------------------- */

static atomic_int granted;
static uint64_t big;

static void *waiter(void *arg)
{
    (void)arg;
    CUdeviceptr p;
    P(cuCtxSetCurrent)(the_ctx);
    CUresult r = alloc(&p, big);
    printf("waiter rc=%d\n", (int)r);
    fflush(stdout);
    if (r == CUDA_SUCCESS) {
        atomic_fetch_add(&granted, 1);
        P(cuMemFree_v2)(p);
    }
    return NULL;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void wait_for_file(const char *path)
{
    struct stat sb;
    while (stat(path, &sb) != 0)
        usleep(10 * 1000);
}

static int cmd_threads(uint64_t size, int n, uint64_t want, const char *go)
{
    init();
    CUdeviceptr a;
    if (alloc(&a, size) != CUDA_SUCCESS)
        return 2;
    big = want;
    pthread_t t[16];
    n = n < 1 ? 1 : n > 16 ? 16 : n;
    for (int i = 0; i < n; i++)
        pthread_create(&t[i], NULL, waiter, NULL);
    wait_for_file(go);
    /* The waiters are suspended; this thread must still free and allocate. (How fast is not
     * judged here: a blocked thread never gets through its rounds while the waiters wait.) */
    double t0 = now_s();
    int rounds = 0;
    for (; rounds < 20; rounds++) {
        if (P(cuMemFree_v2)(a) != CUDA_SUCCESS || alloc(&a, size) != CUDA_SUCCESS) {
            printf("main thread failed in round %d\n", rounds);
            return 1;
        }
    }
    double dt = now_s() - t0;
    printf("main-ok rounds=%d seconds=%.3f granted_meanwhile=%d\n", rounds, dt,
           atomic_load(&granted));
    fflush(stdout);
    if (atomic_load(&granted) != 0)
        return 1;
    for (int i = 0; i < n; i++)
        pthread_join(t[i], NULL);
    printf("all-done granted=%d\n", atomic_load(&granted));
    P(cuMemFree_v2)(a);
    return atomic_load(&granted) == n ? 0 : 1;
}

/* ---- fork ----------------------------------------------------------------------------------- */

static int cmd_fork(uint64_t size)
{
    init();
    CUdeviceptr a;
    if (alloc(&a, size) != CUDA_SUCCESS)
        return 2;
    size_t f0, t0;
    P(cuMemGetInfo_v2)(&f0, &t0);
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0)
        DIE("fork");
    if (pid == 0) {
        /* A new process to the daemon: exec something that allocates on its own. */
        char self[4096];
        ssize_t k = readlink("/proc/self/exe", self, sizeof self - 1);
        if (k <= 0)
            _exit(1);
        self[k] = '\0';
        char sz[32];
        snprintf(sz, sizeof sz, "%llu", (unsigned long long)size);
        execl(self, self, "alloc", sz, (char *)NULL);
        _exit(1);
    }
    int st;
    waitpid(pid, &st, 0);
    printf("child exit=%d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    if (WIFEXITED(st) && WEXITSTATUS(st) == 2)
        return 2;
    /* The daemon returns the child's account when it sees the child's socket hang up, a moment
     * after waitpid can return: wait for that (60 s only bound a hang; a busy machine may take
     * more than the second this allowed before). */
    size_t f1 = 0, t1;
    for (int tries = 0; tries < 6000; tries++) {
        P(cuMemGetInfo_v2)(&f1, &t1);
        if (f1 == f0)
            break;
        struct timespec ts = {0, 10 * 1000000L};
        nanosleep(&ts, NULL);
    }
    printf("parent free before=%zu after=%zu\n", f0, f1);
    /* The child's exit returned only the child's memory: the parent's is still charged. */
    if (f1 != f0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
        return 1;
    if (P(cuMemFree_v2)(a) != CUDA_SUCCESS)
        return 1;
    size_t f2, t2;
    P(cuMemGetInfo_v2)(&f2, &t2);
    printf("parent free after its free=%zu\n", f2);
    return f2 >= f1 + size ? 0 : 1;
}

static size_t free_now(void)
{
    size_t f = 0, t = 0;
    if (P(cuMemGetInfo_v2)(&f, &t) != CUDA_SUCCESS)
        DIE("cuMemGetInfo failed");
    return f;
}

static int cmd_arrays(void)
{
    init();
    size_t f0 = free_now();
    CUarray a[3];
    CUmipmappedArray m[3];
    CUDA_ARRAY_DESCRIPTOR d2 = {1024, 1024, CU_AD_FORMAT_FLOAT, 4};
    struct {
        const char *name;
        int mipmap;
        unsigned levels;
        CUDA_ARRAY3D_DESCRIPTOR d;
    } cases[] = {
        {"array3d", 0, 1, {100, 100, 100, CU_AD_FORMAT_UNSIGNED_INT16, 2, 0}},
        {"cubemap", 0, 1, {512, 512, 6, CU_AD_FORMAT_UNSIGNED_INT32, 4, CUDA_ARRAY3D_CUBEMAP}},
        {"sparse", 0, 1, {4096, 4096, 16, CU_AD_FORMAT_FLOAT, 4, CUDA_ARRAY3D_SPARSE}},
        {"mipmap", 1, 12, {2048, 2048, 0, CU_AD_FORMAT_UNSIGNED_INT8, 4, 0}},
        {"mipmap-layered", 1, 2, {1024, 1024, 8, CU_AD_FORMAT_FLOAT, 1, CUDA_ARRAY3D_LAYERED}},
        {"mipmap-deferred", 1, 12,
         {2048, 2048, 0, CU_AD_FORMAT_UNSIGNED_INT8, 4, CUDA_ARRAY3D_DEFERRED_MAPPING}},
    };
    CUarray plain;
    size_t before = free_now();
    if (P(cuArrayCreate_v2)(&plain, &d2) != CUDA_SUCCESS)
        DIE("cuArrayCreate failed");
    printf("array array2d drop=%zu\n", before - free_now());
    unsigned na = 0, nm = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        before = free_now();
        CUresult r = cases[i].mipmap
                         ? P(cuMipmappedArrayCreate)(&m[nm++], &cases[i].d, cases[i].levels)
                         : P(cuArray3DCreate_v2)(&a[na++], &cases[i].d);
        if (r != CUDA_SUCCESS)
            DIE("%s: creation failed: %d", cases[i].name, (int)r);
        printf("array %s drop=%zu\n", cases[i].name, before - free_now());
    }
    int bad = P(cuArrayDestroy)(plain) != CUDA_SUCCESS;
    while (na)
        bad |= P(cuArrayDestroy)(a[--na]) != CUDA_SUCCESS;
    while (nm)
        bad |= P(cuMipmappedArrayDestroy)(m[--nm]) != CUDA_SUCCESS;
    printf("array destroyed drop=%zu\n", f0 - free_now());
    return bad;
}

/* The NVML total of the device CUDA calls ordinal k, matched by UUID (NVML numbers the node's
 * devices; CUDA only the visible ones). */
static unsigned long long nvml_total_of(CUdevice dev)
{
    char uuid[16], want[64];
    if (P(cuDeviceGetUuid_v2)((CUuuid *)uuid, dev) != CUDA_SUCCESS)
        return 0;
    const unsigned char *u = (const unsigned char *)uuid;
    snprintf(want, sizeof want,
             "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1],
             u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14],
             u[15]);
    void *nvml = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!nvml)
        return 0;
    PFN_nvmlInit_v2 ini = (PFN_nvmlInit_v2)dlsym(nvml, "nvmlInit_v2");
    typedef nvmlReturn_t (*by_uuid_fn)(const char *uuid, nvmlDevice_t *device);
    by_uuid_fn byuuid = (by_uuid_fn)dlsym(nvml, "nvmlDeviceGetHandleByUUID");
    PFN_nvmlDeviceGetMemoryInfo mem = (PFN_nvmlDeviceGetMemoryInfo)dlsym(nvml, "nvmlDeviceGetMemoryInfo");
    nvmlDevice_t d;
    nvmlMemory_t m;
    if (!ini || !byuuid || !mem || ini() != NVML_SUCCESS || byuuid(want, &d) != NVML_SUCCESS ||
        mem(d, &m) != NVML_SUCCESS)
        return 0;
    return m.total;
}

static void touch(const char *path)
{
    FILE *f = fopen(path, "w");
    if (f)
        fclose(f);
}

static void wait_gone(const char *path)
{
    struct stat sb;
    while (stat(path, &sb) == 0)
        usleep(20 * 1000);
}

static int cmd_gpus(const char *file, int n, char **sizes)
{
    init();
    CUdeviceptr p[16] = {0};
    int refused = 0;
    if (n > 16)
        DIE("at most 16 GPUs");
    for (int k = 0; k < n; k++) {
        CUdevice dev;
        CUcontext ctx;
        if (P(cuDeviceGet)(&dev, k) != CUDA_SUCCESS ||
            P(cuDevicePrimaryCtxRetain)(&ctx, dev) != CUDA_SUCCESS ||
            P(cuCtxSetCurrent)(ctx) != CUDA_SUCCESS)
            DIE("no context on device %d", k);
        CUresult r = alloc(&p[k], parse(sizes[k]));
        printf("gpu %d alloc rc=%d\n", k, (int)r);
        if (r == CUDA_ERROR_OUT_OF_MEMORY)
            refused = 1;
        else if (r != CUDA_SUCCESS)
            return 1;
        size_t f = 0, t = 0;
        P(cuMemGetInfo_v2)(&f, &t);
        printf("gpu %d free=%zu total=%zu nvml_total=%llu\n", k, f, t, nvml_total_of(dev));
    }
    touch(file);
    wait_gone(file);
    for (int k = 0; k < n; k++)
        if (p[k] && P(cuMemFree_v2)(p[k]) != CUDA_SUCCESS) /* from any context: one address space */
            return 1;
    return refused ? 2 : 0;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc < 2)
        DIE("usage: ip_probe lookup|info|alloc|hold|threads|fork|steps|arrays ...");
    const char *c = argv[1];
    if (strcmp(c, "lookup") == 0)
        return cmd_lookup();
    if (strcmp(c, "info") == 0) {
        init();
        info("info");
        return 0;
    }
    if (strcmp(c, "alloc") == 0 && argc >= 3) {
        init();
        CUdeviceptr p;
        CUresult r = alloc(&p, parse(argv[2]));
        printf("alloc rc=%d\n", (int)r);
        if (r == CUDA_ERROR_OUT_OF_MEMORY)
            return 2;
        if (r != CUDA_SUCCESS)
            return 1;
        info("after");
        return P(cuMemFree_v2)(p) == CUDA_SUCCESS ? 0 : 1;
    }
    if (strcmp(c, "hold") == 0 && argc >= 4) {
        init();
        CUdeviceptr p;
        CUresult r = alloc(&p, parse(argv[2]));
        printf("hold rc=%d\n", (int)r);
        if (r != CUDA_SUCCESS)
            return r == CUDA_ERROR_OUT_OF_MEMORY ? 2 : 1;
        touch(argv[3]);
        wait_gone(argv[3]);
        return P(cuMemFree_v2)(p) == CUDA_SUCCESS ? 0 : 1;
    }
    if (strcmp(c, "release") == 0 && argc >= 5) {
        init();
        CUdeviceptr p;
        CUresult r = alloc(&p, parse(argv[2]));
        printf("release alloc rc=%d\n", (int)r);
        fflush(stdout);
        if (r != CUDA_SUCCESS)
            return r == CUDA_ERROR_OUT_OF_MEMORY ? 2 : 1;
        touch(argv[3]);
        wait_gone(argv[3]);
        r = P(cuMemFree_v2)(p);
        printf("release free rc=%d\n", (int)r);
        fflush(stdout);
        touch(argv[4]);
        wait_gone(argv[4]);
        return r == CUDA_SUCCESS ? 0 : 1;
    }
    if (strcmp(c, "steps") == 0 && argc >= 4) {
        init();
        CUdeviceptr p, q;
        uint64_t n = parse(argv[2]);
        if (alloc(&p, n) != CUDA_SUCCESS)
            return 2;
        printf("step1 done\n");
        touch(argv[3]);
        wait_gone(argv[3]);
        CUresult r = alloc(&q, n);
        printf("step2 rc=%d\n", (int)r);
        if (r != CUDA_SUCCESS)
            return r == CUDA_ERROR_OUT_OF_MEMORY ? 2 : 1;
        info("after");
        return P(cuMemFree_v2)(q) == CUDA_SUCCESS && P(cuMemFree_v2)(p) == CUDA_SUCCESS ? 0 : 1;
    }
    if (strcmp(c, "threads") == 0 && argc >= 6)
        return cmd_threads(parse(argv[2]), atoi(argv[3]), parse(argv[4]), argv[5]);
    if (strcmp(c, "fork") == 0 && argc >= 3)
        return cmd_fork(parse(argv[2]));
    if (strcmp(c, "arrays") == 0)
        return cmd_arrays();
    if (strcmp(c, "gpus") == 0 && argc >= 4)
        return cmd_gpus(argv[2], argc - 3, argv + 3);
    DIE("unknown command %s", c);
}

/* bench_scale.c — allocations/s and allocation latency with N concurrent processes.
 *
 * The driver forks N workers; worker i runs in container i % C (CONVGPU_SOCKET = the i % C-th
 * socket given, LD_PRELOAD = --preload) or natively (no socket given). Each worker execs this
 * program again (so the preload applies), initialises CUDA, makes its first allocation (under
 * convgpu: registers with the daemon), reports ready, waits for the common start, then
 * allocates and frees SIZE bytes in a loop for the duration, timing every allocation. The driver
 * merges all samples and prints one line:
 *
 *   procs=N containers=C allocs=TOTAL allocs_per_s=... p50_ns=... p99_ns=... p999_ns=...
 *   max_ns=... first_alloc_p50_ns=... first_alloc_max_ns=... init_p50_ns=...
 *   daemon_cpu_us=... daemon_rss_kb_before=... daemon_rss_kb_during=...
 *
 * daemon_* come from /proc/PID/{stat,status} of --daemon-pid (CPU over the timed phase; RSS
 * before the workers start and while all of them are connected).
 *
 * Usage: bench_scale --procs N [--duration-ms D] [--size BYTES] [--preload LIB]
 *                    [--daemon-pid PID] [-- SOCK...] */
#include "cuda_types.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static inline uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static void die(const char *what)
{
    fprintf(stderr, "bench_scale: %s: %s\n", what, strerror(errno));
    exit(1);
}

#define MAX_SAMPLES (1u << 20)

struct result {
    uint64_t count;     /* allocations timed (samples kept: min(count, MAX_SAMPLES)) */
    uint64_t init_ns;   /* cuInit + primary context */
    uint64_t first_ns;  /* the first allocation (registration with the daemon under convgpu) */
    uint64_t elapsed_ns;/* the timed loop */
    uint32_t lat[];     /* ns per allocation */
};

#define SYM(h, name) ((PFN_##name)must_sym(h, #name))
static void *must_sym(void *h, const char *name)
{
    void *p = dlsym(h, name);
    if (!p) {
        fprintf(stderr, "bench_scale: %s: %s\n", name, dlerror());
        _exit(3);
    }
    return p;
}

static void readall(int fd) /* blocks until EOF: the driver closed its end */
{
    char b;
    for (;;) {
        ssize_t r = read(fd, &b, 1);
        if (r == 0 || (r < 0 && errno != EINTR))
            return;
    }
}

static int worker(int out_fd, uint64_t duration_ns, size_t size, int ready_fd, int go_fd,
                  int release_fd)
{
    size_t len = sizeof(struct result) + MAX_SAMPLES * sizeof(uint32_t);
    if (ftruncate(out_fd, (off_t)len) < 0)
        die("ftruncate");
    struct result *res = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, out_fd, 0);
    if (res == MAP_FAILED)
        die("mmap");
    void *h = dlopen("libcuda.so.1", RTLD_NOW);
    if (!h) {
        fprintf(stderr, "bench_scale: %s\n", dlerror());
        return 3;
    }
    PFN_cuInit init = SYM(h, cuInit);
    PFN_cuDeviceGet dget = SYM(h, cuDeviceGet);
    PFN_cuDevicePrimaryCtxRetain retain = SYM(h, cuDevicePrimaryCtxRetain);
    PFN_cuCtxSetCurrent setcur = SYM(h, cuCtxSetCurrent);
    PFN_cuMemAlloc_v2 alloc = SYM(h, cuMemAlloc_v2);
    PFN_cuMemFree_v2 mfree = SYM(h, cuMemFree_v2);
    CUdevice dev;
    CUcontext ctx;
    CUdeviceptr p;
    uint64_t t0 = now_ns();
    if (init(0) || dget(&dev, 0) || retain(&ctx, dev) || setcur(ctx))
        return 3;
    uint64_t t1 = now_ns();
    if (alloc(&p, size) || mfree(p))
        return 4;
    uint64_t t2 = now_ns();
    res->init_ns = t1 - t0;
    res->first_ns = t2 - t1;
    if (write(ready_fd, "r", 1) != 1)
        return 5;
    readall(go_fd);
    uint64_t start = now_ns(), end = start + duration_ns, n = 0, t = start;
    while (t < end) {
        uint64_t a = now_ns();
        CUresult r = alloc(&p, size);
        t = now_ns();
        if (r != CUDA_SUCCESS) {
            fprintf(stderr, "bench_scale: cuMemAlloc_v2: %d\n", (int)r);
            return 4;
        }
        if (n < MAX_SAMPLES)
            res->lat[n] = (uint32_t)((t - a) > UINT32_MAX ? UINT32_MAX : (t - a));
        n++;
        if (mfree(p))
            return 4;
    }
    res->count = n;
    res->elapsed_ns = now_ns() - start;
    if (write(ready_fd, "d", 1) != 1)
        return 5;
    readall(release_fd); /* stay connected until the driver has read the daemon's RSS */
    return 0;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}
static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static long daemon_field(long pid, int cpu)
{
    if (pid <= 0)
        return -1;
    if (cpu) { /* ns resolution from schedstat, in us */
        char sp[64];
        snprintf(sp, sizeof sp, "/proc/%ld/schedstat", pid);
        FILE *sf = fopen(sp, "r");
        unsigned long long ns;
        if (sf) {
            int ok = fscanf(sf, "%llu", &ns) == 1;
            fclose(sf);
            if (ok)
                return (long)(ns / 1000);
        }
    }
    char path[64], buf[4096];
    snprintf(path, sizeof path, cpu ? "/proc/%ld/stat" : "/proc/%ld/status", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    long v = -1;
    if (cpu) {
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        buf[n] = 0;
        char *q = strrchr(buf, ')'); /* fields after the command name */
        unsigned long ut, st;
        if (q && sscanf(q + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) == 2)
            v = (long)((ut + st) * 1000000 / (unsigned long)sysconf(_SC_CLK_TCK)); /* us */
    } else {
        while (fgets(buf, sizeof buf, f))
            if (sscanf(buf, "VmRSS: %ld", &v) == 1)
                break;
    }
    fclose(f);
    return v;
}

static void wait_bytes(int fd, int n)
{
    char b[64];
    while (n > 0) {
        ssize_t r = read(fd, b, (size_t)(n < 64 ? n : 64));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            fprintf(stderr, "bench_scale: a worker died before it reported\n");
            exit(1);
        }
        n -= (int)r;
    }
}

int main(int argc, char **argv)
{
    if (argc == 9 && strcmp(argv[1], "--worker") == 0)
        return worker(atoi(argv[2]), strtoull(argv[3], NULL, 10), (size_t)strtoull(argv[4], NULL, 10),
                      atoi(argv[5]), atoi(argv[6]), atoi(argv[7]));
    int procs = 1;
    uint64_t duration_ms = 1000;
    size_t size = 4096;
    const char *preload = NULL;
    long dpid = -1;
    int i = 1;
    for (; i < argc; i++) {
        if (strcmp(argv[i], "--procs") == 0 && i + 1 < argc)
            procs = atoi(argv[++i]);
        else if (strcmp(argv[i], "--duration-ms") == 0 && i + 1 < argc)
            duration_ms = strtoull(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--size") == 0 && i + 1 < argc)
            size = (size_t)strtoull(argv[++i], NULL, 0);
        else if (strcmp(argv[i], "--preload") == 0 && i + 1 < argc)
            preload = argv[++i];
        else if (strcmp(argv[i], "--daemon-pid") == 0 && i + 1 < argc)
            dpid = atol(argv[++i]);
        else if (strcmp(argv[i], "--") == 0) {
            i++;
            break;
        } else {
            fprintf(stderr, "usage: bench_scale --procs N [--duration-ms D] [--size BYTES] "
                            "[--preload LIB] [--daemon-pid PID] [-- SOCK...]\n");
            return 2;
        }
    }
    char **socks = argv + i;
    int nsocks = argc - i;
    if (procs < 1 || procs > 1024)
        return 2;

    int ready[2], go[2], rel[2];
    if (pipe(ready) || pipe2(go, O_CLOEXEC) || pipe2(rel, O_CLOEXEC))
        die("pipe");
    int *outs = calloc((size_t)procs, sizeof(int));
    pid_t *pids = calloc((size_t)procs, sizeof(pid_t));
    if (!outs || !pids)
        die("calloc");
    long rss_before = daemon_field(dpid, 0);
    for (int w = 0; w < procs; w++) {
        outs[w] = memfd_create("bench_scale", 0);
        if (outs[w] < 0)
            die("memfd_create");
        pids[w] = fork();
        if (pids[w] < 0)
            die("fork");
        if (pids[w] == 0) {
            /* The worker keeps its own ends: go/release read ends without CLOEXEC. */
            int g = dup(go[0]), r = dup(rel[0]);
            char a[7][32];
            snprintf(a[0], 32, "%d", outs[w]);
            snprintf(a[1], 32, "%llu", (unsigned long long)(duration_ms * 1000000ull));
            snprintf(a[2], 32, "%zu", size);
            snprintf(a[3], 32, "%d", ready[1]);
            snprintf(a[4], 32, "%d", g);
            snprintf(a[5], 32, "%d", r);
            close(ready[0]);
            if (nsocks > 0) {
                setenv("CONVGPU_SOCKET", socks[w % nsocks], 1);
                if (preload)
                    setenv("LD_PRELOAD", preload, 1);
            }
            execl("/proc/self/exe", argv[0], "--worker", a[0], a[1], a[2], a[3], a[4], a[5],
                  "x", (char *)NULL);
            _exit(127);
        }
    }
    close(ready[1]);
    close(go[0]);
    close(rel[0]);
    wait_bytes(ready[0], procs);
    long cpu0 = daemon_field(dpid, 1);
    uint64_t t0 = now_ns();
    close(go[1]);
    wait_bytes(ready[0], procs);
    uint64_t t1 = now_ns();
    long cpu1 = daemon_field(dpid, 1);
    long rss_during = daemon_field(dpid, 0);
    close(rel[1]);
    int bad = 0;
    for (int w = 0; w < procs; w++) {
        int st;
        while (waitpid(pids[w], &st, 0) < 0 && errno == EINTR)
            ;
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
            bad++;
    }
    if (bad) {
        fprintf(stderr, "bench_scale: %d worker(s) failed\n", bad);
        return 1;
    }

    uint64_t total = 0, kept = 0;
    uint64_t *first = calloc((size_t)procs, sizeof(uint64_t));
    uint64_t *inits = calloc((size_t)procs, sizeof(uint64_t));
    size_t len = sizeof(struct result) + MAX_SAMPLES * sizeof(uint32_t);
    uint32_t *all = NULL;
    for (int w = 0; w < procs; w++) {
        struct result *r = mmap(NULL, len, PROT_READ, MAP_SHARED, outs[w], 0);
        if (r == MAP_FAILED)
            die("mmap result");
        uint64_t k = r->count < MAX_SAMPLES ? r->count : MAX_SAMPLES;
        all = realloc(all, (size_t)(kept + k + 1) * sizeof(uint32_t));
        if (!all)
            die("realloc");
        memcpy(all + kept, r->lat, (size_t)k * sizeof(uint32_t));
        kept += k;
        total += r->count;
        first[w] = r->first_ns;
        inits[w] = r->init_ns;
        munmap(r, len);
        close(outs[w]);
    }
    qsort(all, (size_t)kept, sizeof(uint32_t), cmp_u32);
    qsort(first, (size_t)procs, sizeof(uint64_t), cmp_u64);
    qsort(inits, (size_t)procs, sizeof(uint64_t), cmp_u64);
#define Q(q) (kept ? all[(size_t)((q) * (double)(kept - 1))] : 0u)
    double secs = (double)(t1 - t0) / 1e9;
    printf("procs=%d containers=%d allocs=%llu allocs_per_s=%.0f p50_ns=%u p99_ns=%u p999_ns=%u "
           "max_ns=%u first_alloc_p50_ns=%llu first_alloc_max_ns=%llu init_p50_ns=%llu "
           "daemon_cpu_us=%ld daemon_rss_kb_before=%ld daemon_rss_kb_during=%ld\n",
           procs, nsocks, (unsigned long long)total, (double)total / secs, Q(0.5), Q(0.99),
           Q(0.999), kept ? all[kept - 1] : 0u, (unsigned long long)first[procs / 2],
           (unsigned long long)first[procs - 1], (unsigned long long)inits[procs / 2],
           (cpu0 >= 0 && cpu1 >= 0) ? cpu1 - cpu0 : -1, rss_before, rss_during);
    return 0;
}

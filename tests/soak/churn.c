/* churn — a workload for the reliability tests: random device-memory allocations and frees
 * within a budget, optionally forking children, exiting without freeing, pausing on request, and
 * reporting what it holds at every step so a test can compare it with the daemon's accounts.
 *
 * Reached like an application reaches a driver (dlopen("libcuda.so.1"), everything else through
 * cuGetProcAddress_v2), so it runs under the interposer on the emulator, as convgpu-sample does.
 *
 *   churn [options]                      the workload (exit 0 done, 2 out of memory, 1 error)
 *   churn --nvml                         no workload: print the emulated device's per-process use
 *                                        ("proc PID USED") and its "device USED TOTAL" (NVML)
 *
 * Options (SIZE accepts KiB/MiB/GiB):
 *   --budget SIZE     most bytes held at once by this process (default 256MiB)
 *   --max SIZE        largest single allocation (default 64MiB)
 *   --unit SIZE       every size is a multiple of this (default 2MiB: no rounding anywhere)
 *   --ops N           operations before freeing everything and exiting 0 (default 1000)
 *   --sleep-ms A[:B]  pause between operations, uniform in [A, B] ms (default 1:5)
 *   --seed N          random seed (mixed with the pid)
 *   --status FILE     one line, replaced atomically before every allocation and at each state
 *                     change: "pid= state=run|alloc|paused|done held= want= granted= ops="
 *   --pause FILE      while FILE exists, wait between operations (state=paused)
 *   --stop FILE       when FILE exists, free everything and exit 0
 *   --fork-pm N       per mille of operations that fork: half exec a short churn of their own,
 *                     half exit at once (default 0)
 *   --exit-pm N       per mille of operations that exit 0 at once without freeing (default 0)
 *   --oom-ok          an out-of-memory answer is counted, not fatal (one to the context
 *                     charge ends the run: exit 0 after no operation)
 *   --pid-dir DIR     create DIR/PID while running (removed at a normal exit)
 *   --managed-pm N    per mille of allocations made with cuMemAllocManaged (default 0)
 *
 * At the end it prints "churn pid= ops= allocs= frees= ooms= forks= held= peak=". */
#include "cuda_types.h"
#include "nvml_types.h"
#include "size.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define API_VERSION 13000
#define MAX_HELD 4096

static struct {
    PFN_cuDeviceGet cuDeviceGet;
    PFN_cuDevicePrimaryCtxRetain cuDevicePrimaryCtxRetain;
    PFN_cuCtxSetCurrent cuCtxSetCurrent;
    PFN_cuMemAlloc_v2 cuMemAlloc;
    PFN_cuMemAllocManaged cuMemAllocManaged;
    PFN_cuMemFree_v2 cuMemFree;
} api;

static struct {
    uint64_t budget, max, unit;
    unsigned long ops;
    unsigned sleep_lo, sleep_hi;
    unsigned long long seed;
    const char *status, *pause, *stop, *pid_dir;
    unsigned fork_pm, exit_pm, managed_pm;
    int oom_ok;
} opt = {256ull << 20, 64ull << 20, 2ull << 20, 1000, 1, 5, 1, NULL, NULL, NULL, NULL, 0, 0, 0, 0};

static struct {
    CUdeviceptr ptr[MAX_HELD];
    uint64_t len[MAX_HELD];
    unsigned n;
    uint64_t held, peak;
    unsigned long ops, allocs, frees, ooms, forks;
    int granted;            /* some allocation succeeded: the context charge is taken */
} st;

static unsigned long long rng;
static unsigned long long next_rand(void)
{
    /* splitmix64 */
    unsigned long long z = (rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
static unsigned long long rand_below(unsigned long long n) { return n ? next_rand() % n : 0; }

static void status(const char *state, uint64_t want)
{
    if (!opt.status)
        return;
    char tmp[4200], line[256];
    snprintf(tmp, sizeof tmp, "%s.%d", opt.status, (int)getpid());
    int n = snprintf(line, sizeof line, "pid=%d state=%s held=%llu want=%llu granted=%d ops=%lu\n",
                     (int)getpid(), state, (unsigned long long)st.held,
                     (unsigned long long)want, st.granted, st.ops);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return;
    ssize_t w = write(fd, line, (size_t)n);
    close(fd);
    if (w == n)
        rename(tmp, opt.status);
}

static int exists(const char *path) { return path && access(path, F_OK) == 0; }

static void sleep_ms(unsigned ms)
{
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

static void *resolve(PFN_cuGetProcAddress_v2 getproc, const char *name)
{
    void *fn = NULL;
    CUdriverProcAddressQueryResult q;
    if (getproc(name, &fn, API_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &q) != CUDA_SUCCESS || !fn) {
        fprintf(stderr, "churn: cuGetProcAddress(%s) failed\n", name);
        exit(1);
    }
    return fn;
}

static void load_driver(void)
{
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "churn: cannot load libcuda.so.1: %s\n", dlerror());
        exit(1);
    }
    PFN_cuInit init;
    PFN_cuGetProcAddress_v2 getproc;
    void *p = dlsym(lib, "cuInit"), *q = dlsym(lib, "cuGetProcAddress_v2");
    if (!p || !q) {
        fprintf(stderr, "churn: libcuda.so.1 lacks cuInit or cuGetProcAddress_v2\n");
        exit(1);
    }
    memcpy(&init, &p, sizeof p);
    memcpy(&getproc, &q, sizeof q);
    CUresult rc = init(0);
    if (rc != CUDA_SUCCESS) {
        fprintf(stderr, "churn: cuInit failed: %d\n", (int)rc);
        exit(1);
    }
#define R(field, name)                                                                           \
    do {                                                                                         \
        void *f_ = resolve(getproc, name);                                                       \
        memcpy(&api.field, &f_, sizeof f_);                                                      \
    } while (0)
    R(cuDeviceGet, "cuDeviceGet");
    R(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
    R(cuCtxSetCurrent, "cuCtxSetCurrent");
    R(cuMemAlloc, "cuMemAlloc");
    R(cuMemAllocManaged, "cuMemAllocManaged");
    R(cuMemFree, "cuMemFree");
#undef R
}

/* A context, made current, the way the runtime does it. Its charge is taken by the first
 * allocation request, which is where a suspended container makes its process wait. */
static int setup(void)
{
    CUdevice dev;
    CUcontext ctx;
    CUresult rc = api.cuDeviceGet(&dev, 0);
    if (rc == CUDA_SUCCESS)
        rc = api.cuDevicePrimaryCtxRetain(&ctx, dev);
    if (rc == CUDA_ERROR_OUT_OF_MEMORY)
        return 2;
    if (rc == CUDA_SUCCESS)
        rc = api.cuCtxSetCurrent(ctx);
    if (rc != CUDA_SUCCESS) {
        fprintf(stderr, "churn: context setup failed: %d\n", (int)rc);
        return 1;
    }
    return 0;
}

static int free_one(unsigned i)
{
    CUresult rc = api.cuMemFree(st.ptr[i]);
    if (rc != CUDA_SUCCESS) {
        fprintf(stderr, "churn: cuMemFree failed: %d\n", (int)rc);
        return 1;
    }
    st.held -= st.len[i];
    st.frees++;
    st.n--;
    st.ptr[i] = st.ptr[st.n];
    st.len[i] = st.len[st.n];
    return 0;
}

static int free_all(void)
{
    while (st.n)
        if (free_one(st.n - 1))
            return 1;
    return 0;
}

/* 0 done, 2 out of memory (not --oom-ok), 1 error */
static int alloc_one(void)
{
    uint64_t room = opt.budget - st.held;
    uint64_t units = (opt.max < room ? opt.max : room) / opt.unit;
    if (units == 0 || st.n == MAX_HELD)
        return free_one((unsigned)rand_below(st.n));
    uint64_t len = (1 + rand_below(units)) * opt.unit;
    CUdeviceptr p = 0;
    status("alloc", len);
    CUresult rc = rand_below(1000) < opt.managed_pm
                      ? api.cuMemAllocManaged(&p, len, CU_MEM_ATTACH_GLOBAL)
                      : api.cuMemAlloc(&p, len);
    if (rc == CUDA_ERROR_OUT_OF_MEMORY) {
        st.ooms++;
        status("run", 0);
        if (opt.oom_ok)
            return 0;
        fprintf(stderr, "churn: out of memory allocating %llu bytes (holding %llu)\n",
                (unsigned long long)len, (unsigned long long)st.held);
        return 2;
    }
    if (rc != CUDA_SUCCESS) {
        fprintf(stderr, "churn: cuMemAlloc failed: %d\n", (int)rc);
        return 1;
    }
    st.ptr[st.n] = p;
    st.len[st.n++] = len;
    st.held += len;
    st.allocs++;
    st.granted = 1;
    if (st.held > st.peak)
        st.peak = st.held;
    status("run", 0);
    return 0;
}

static char self_exe[4096];

static void do_fork(void)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        return;
    if (pid > 0) {
        st.forks++;
        int s;
        while (waitpid(pid, &s, 0) < 0 && errno == EINTR) {
        }
        return;
    }
    /* The child: half the time a fresh workload of its own, else gone at once. */
    if (rand_below(2) == 0 && self_exe[0]) {
        char budget[32], seed[32], max[32];
        snprintf(budget, sizeof budget, "%llu", (unsigned long long)(opt.budget / 4 / opt.unit * opt.unit));
        snprintf(max, sizeof max, "%llu", (unsigned long long)opt.unit * 4);
        snprintf(seed, sizeof seed, "%llu", next_rand());
        if (opt.budget / 4 >= opt.unit)
            execl(self_exe, self_exe, "--budget", budget, "--max", max, "--ops", "8", "--sleep-ms",
                  "0:2", "--seed", seed, "--oom-ok", (char *)NULL);
    }
    _exit(0);
}

static int nvml_dump(void)
{
    void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "churn: cannot load libnvidia-ml.so.1: %s\n", dlerror());
        return 1;
    }
    PFN_nvmlInit_v2 init;
    PFN_nvmlDeviceGetHandleByIndex_v2 handle;
    PFN_nvmlDeviceGetComputeRunningProcesses_v3 procs;
    PFN_nvmlDeviceGetMemoryInfo meminfo;
    void *a = dlsym(lib, "nvmlInit_v2"), *b = dlsym(lib, "nvmlDeviceGetHandleByIndex_v2"),
         *c = dlsym(lib, "nvmlDeviceGetComputeRunningProcesses_v3"),
         *d = dlsym(lib, "nvmlDeviceGetMemoryInfo");
    if (!a || !b || !c || !d) {
        fprintf(stderr, "churn: NVML lacks an entry point\n");
        return 1;
    }
    memcpy(&init, &a, sizeof a);
    memcpy(&handle, &b, sizeof b);
    memcpy(&procs, &c, sizeof c);
    memcpy(&meminfo, &d, sizeof d);
    nvmlDevice_t dev;
    if (init() != NVML_SUCCESS || handle(0, &dev) != NVML_SUCCESS) {
        fprintf(stderr, "churn: NVML init failed\n");
        return 1;
    }
    static nvmlProcessInfo_t info[4096];
    unsigned n = 4096;
    nvmlMemory_t m;
    if (procs(dev, &n, info) != NVML_SUCCESS || meminfo(dev, &m) != NVML_SUCCESS) {
        fprintf(stderr, "churn: NVML query failed\n");
        return 1;
    }
    for (unsigned i = 0; i < n; i++)
        printf("proc %u %llu\n", info[i].pid, info[i].usedGpuMemory);
    printf("device %llu %llu\n", m.used, m.total);
    return 0;
}

static int parse_size(const char *s, uint64_t *out)
{
    const char *err = NULL;
    if (cg_parse_size(s, out, &err) != 0) {
        fprintf(stderr, "churn: bad size '%s': %s\n", s, err ? err : "?");
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    enum { O_BUDGET = 256, O_MAX, O_UNIT, O_OPS, O_SLEEP, O_SEED, O_STATUS, O_PAUSE, O_STOP,
           O_FORK, O_EXIT, O_OOM, O_PIDDIR, O_NVML, O_MANAGED };
    static const struct option longopts[] = {
        {"budget", required_argument, NULL, O_BUDGET}, {"max", required_argument, NULL, O_MAX},
        {"unit", required_argument, NULL, O_UNIT},     {"ops", required_argument, NULL, O_OPS},
        {"sleep-ms", required_argument, NULL, O_SLEEP}, {"seed", required_argument, NULL, O_SEED},
        {"status", required_argument, NULL, O_STATUS}, {"pause", required_argument, NULL, O_PAUSE},
        {"stop", required_argument, NULL, O_STOP},     {"fork-pm", required_argument, NULL, O_FORK},
        {"exit-pm", required_argument, NULL, O_EXIT},  {"oom-ok", no_argument, NULL, O_OOM},
        {"pid-dir", required_argument, NULL, O_PIDDIR}, {"nvml", no_argument, NULL, O_NVML},
        {"managed-pm", required_argument, NULL, O_MANAGED}, {NULL, 0, NULL, 0}};
    int c, nvml = 0;
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (c) {
        case O_BUDGET: if (parse_size(optarg, &opt.budget)) return 1; break;
        case O_MAX: if (parse_size(optarg, &opt.max)) return 1; break;
        case O_UNIT: if (parse_size(optarg, &opt.unit)) return 1; break;
        case O_OPS: opt.ops = strtoul(optarg, NULL, 10); break;
        case O_SLEEP: {
            char *end;
            opt.sleep_lo = opt.sleep_hi = (unsigned)strtoul(optarg, &end, 10);
            if (*end == ':')
                opt.sleep_hi = (unsigned)strtoul(end + 1, NULL, 10);
            if (opt.sleep_hi < opt.sleep_lo)
                opt.sleep_hi = opt.sleep_lo;
            break;
        }
        case O_SEED: opt.seed = strtoull(optarg, NULL, 10); break;
        case O_STATUS: opt.status = optarg; break;
        case O_PAUSE: opt.pause = optarg; break;
        case O_STOP: opt.stop = optarg; break;
        case O_FORK: opt.fork_pm = (unsigned)strtoul(optarg, NULL, 10); break;
        case O_EXIT: opt.exit_pm = (unsigned)strtoul(optarg, NULL, 10); break;
        case O_OOM: opt.oom_ok = 1; break;
        case O_PIDDIR: opt.pid_dir = optarg; break;
        case O_NVML: nvml = 1; break;
        case O_MANAGED: opt.managed_pm = (unsigned)strtoul(optarg, NULL, 10); break;
        default:
            fprintf(stderr, "usage: churn [--budget SIZE] [--max SIZE] [--ops N] ... | --nvml\n");
            return 1;
        }
    }
    if (nvml)
        return nvml_dump();
    if (opt.unit == 0 || opt.max < opt.unit || opt.budget < opt.unit) {
        fprintf(stderr, "churn: need unit <= max and unit <= budget\n");
        return 1;
    }
    rng = opt.seed * 0x100000001b3ull ^ (unsigned long long)getpid();
    ssize_t k = readlink("/proc/self/exe", self_exe, sizeof self_exe - 1);
    self_exe[k > 0 ? k : 0] = '\0';

    char pidfile[4200] = "";
    if (opt.pid_dir) {
        snprintf(pidfile, sizeof pidfile, "%s/%d", opt.pid_dir, (int)getpid());
        int fd = open(pidfile, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        if (fd >= 0)
            close(fd);
    }
    load_driver();
    status("alloc", 0);
    int rc = setup();
    if (rc == 2 && opt.oom_ok) {
        /* The context charge itself was refused (the container's other processes hold its
         * whole limit): an answer, not a failure, for a workload that allows them. */
        st.ooms++;
        rc = 0;
        opt.ops = 0;
    }
    while (rc == 0 && st.ops < opt.ops && !exists(opt.stop)) {
        if (exists(opt.pause)) {
            status("paused", 0);
            while (exists(opt.pause) && !exists(opt.stop))
                sleep_ms(5);
            status("run", 0);
            continue;
        }
        st.ops++;
        unsigned long long r = rand_below(1000);
        if (r < opt.exit_pm) {
            /* Gone without freeing: the daemon must take the account back on hang-up. */
            printf("churn pid=%d exit-without-free held=%llu\n", (int)getpid(),
                   (unsigned long long)st.held);
            fflush(stdout);
            if (pidfile[0])
                unlink(pidfile);
            _exit(0);
        }
        if (r < opt.exit_pm + opt.fork_pm) {
            do_fork();
        } else if (st.n == 0 || (rand_below(100) < 55 && st.held + opt.unit <= opt.budget)) {
            rc = alloc_one();
        } else {
            rc = free_one((unsigned)rand_below(st.n));
        }
        if (rc == 0 && opt.sleep_hi)
            sleep_ms(opt.sleep_lo + (unsigned)rand_below(opt.sleep_hi - opt.sleep_lo + 1));
    }
    uint64_t held_at_end = st.held;
    if (rc != 1 && free_all())
        rc = 1;
    status("done", 0);
    printf("churn pid=%d rc=%d ops=%lu allocs=%lu frees=%lu ooms=%lu forks=%lu held=%llu peak=%llu\n",
           (int)getpid(), rc, st.ops, st.allocs, st.frees, st.ooms, st.forks,
           (unsigned long long)held_at_end, (unsigned long long)st.peak);
    if (pidfile[0])
        unlink(pidfile);
    return rc;
}

/* emu_test.c — helpers shared by the emulator tests (see emu_test.h). */
#include "emu_test.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct t_cuda cu;
struct t_nvml nv;
void *t_cuda_lib;

void t_fail(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "FAIL %s:%d (pid %d): ", file, line, (int)getpid());
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    fflush(NULL);
    exit(1);
}

const char *t_cu_name(CUresult rc)
{
    const char *s = NULL;
    if (cu.cuGetErrorName && cu.cuGetErrorName(rc, &s) == CUDA_SUCCESS && s)
        return s;
    static _Thread_local char buf[32];
    snprintf(buf, sizeof buf, "CUresult %d", (int)rc);
    return buf;
}

static void *load(const char *soname)
{
    void *h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (!h)
        t_fail(__FILE__, __LINE__, "dlopen %s: %s", soname, dlerror());
    return h;
}

static void resolve(void *h, const char *name, void *slot)
{
    void *p = dlsym(h, name);
    if (!p)
        t_fail(__FILE__, __LINE__, "dlsym %s: not exported", name);
    memcpy(slot, &p, sizeof p);
}

void t_load_cuda(void)
{
    t_cuda_lib = load("libcuda.so.1");
#define R(n) resolve(t_cuda_lib, #n, &cu.n);
    T_CUDA_API(R)
#undef R
}

void t_load_nvml(void)
{
    void *h = load("libnvidia-ml.so.1");
#define R(n) resolve(h, #n, &nv.n);
    T_NVML_API(R)
#undef R
}

void t_isolate(void)
{
    const char *p = getenv("CONVGPU_EMU_STATE");
    if (!p || !*p)
        t_fail(__FILE__, __LINE__, "CONVGPU_EMU_STATE must name a per-test state file");
    if (unlink(p) != 0 && errno != ENOENT)
        t_fail(__FILE__, __LINE__, "unlink %s: %s", p, strerror(errno));
}

CUcontext t_init_ctx(void)
{
    CUcontext ctx;
    CUdevice dev;
    CHECK_OK(cu.cuInit(0));
    CHECK_OK(cu.cuDeviceGet(&dev, 0));
    CHECK_OK(cu.cuDevicePrimaryCtxRetain(&ctx, dev));
    CHECK_OK(cu.cuCtxSetCurrent(ctx));
    return ctx;
}

uint64_t t_free(void)
{
    size_t f, t;
    CHECK_OK(cu.cuMemGetInfo_v2(&f, &t));
    return f;
}

uint64_t t_nvml_used(unsigned idx)
{
    nvmlDevice_t d;
    nvmlMemory_t m;
    CHECK_NVML(nv.nvmlDeviceGetHandleByIndex_v2(idx, &d), NVML_SUCCESS);
    CHECK_NVML(nv.nvmlDeviceGetMemoryInfo(d, &m), NVML_SUCCESS);
    return m.used;
}

uint64_t t_nvml_proc_used(unsigned idx, pid_t pid)
{
    nvmlDevice_t d;
    nvmlProcessInfo_t p[64];
    unsigned n = 64;
    CHECK_NVML(nv.nvmlDeviceGetHandleByIndex_v2(idx, &d), NVML_SUCCESS);
    CHECK_NVML(nv.nvmlDeviceGetComputeRunningProcesses_v3(d, &n, p), NVML_SUCCESS);
    for (unsigned i = 0; i < n; i++)
        if (p[i].pid == (unsigned)pid)
            return p[i].usedGpuMemory;
    return 0;
}

pid_t t_spawn(char *const argv[], const char *const env[], int *out_fd)
{
    int fds[2] = {-1, -1};
    if (out_fd && pipe(fds) != 0)
        t_fail(__FILE__, __LINE__, "pipe: %s", strerror(errno));
    fflush(NULL);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0)
        t_fail(__FILE__, __LINE__, "fork: %s", strerror(errno));
    if (pid == 0) {
        /* A helper that holds a state until the test kills it must not outlive a test that
         * failed before it could. */
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
            _exit(127);
        for (int i = 0; env && env[i]; i++) {
            if (env[i][0] == '-') {
                unsetenv(env[i] + 1);
            } else {
                char *kv = strdup(env[i]);
                char *eq = strchr(kv, '=');
                *eq = '\0';
                setenv(kv, eq + 1, 1);
                free(kv);
            }
        }
        if (out_fd) {
            dup2(fds[1], 1);
            dup2(fds[1], 2);
            close(fds[0]);
            close(fds[1]);
        }
        execv(argv[0], argv);
        fprintf(stderr, "exec %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    if (out_fd) {
        close(fds[1]);
        *out_fd = fds[0];
    }
    return pid;
}

int t_wait(pid_t pid)
{
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            t_fail(__FILE__, __LINE__, "waitpid: %s", strerror(errno));
    return WIFEXITED(st) ? WEXITSTATUS(st) : -WTERMSIG(st);
}

char *t_read_all(int fd)
{
    size_t len = 0, cap = 4096;
    char *buf = malloc(cap);
    ssize_t n;
    while ((n = read(fd, buf + len, cap - len - 1)) > 0 || (n < 0 && errno == EINTR)) {
        if (n < 0)
            continue;
        len += (size_t)n;
        if (cap - len < 2)
            buf = realloc(buf, cap *= 2);
    }
    buf[len] = '\0';
    close(fd);
    return buf;
}

int t_run(char *const argv[], const char *const env[], char **out)
{
    int fd;
    pid_t pid = t_spawn(argv, env, out ? &fd : NULL);
    if (out)
        *out = t_read_all(fd);
    return t_wait(pid);
}

const char *t_sample(void)
{
    static char path[4096];
    const char *b = getenv("CONVGPU_BUILD_DIR");
    if (!b)
        t_fail(__FILE__, __LINE__, "CONVGPU_BUILD_DIR is not set");
    snprintf(path, sizeof path, "%s/bin/convgpu-sample", b);
    return path;
}

void t_sleep_ms(unsigned ms)
{
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

int t_wait_for(int (*cond_fn)(void *), void *arg, unsigned timeout_ms)
{
    for (unsigned waited = 0; waited <= timeout_ms; waited += 10) {
        if (cond_fn(arg))
            return 1;
        t_sleep_ms(10);
    }
    return 0;
}

void t_load_kernels(t_kernels *k)
{
    CHECK_OK(cu.cuModuleLoadData(&k->module,
                                 "convgpu-emu-module 1\nkernel spin\nkernel complement\n"));
    CHECK_OK(cu.cuModuleGetFunction(&k->spin, k->module, "spin"));
    CHECK_OK(cu.cuModuleGetFunction(&k->complement, k->module, "complement"));
}

void t_spin(const t_kernels *k, CUstream s, unsigned long long us)
{
    void *params[] = {&us};
    CHECK_OK(cu.cuLaunchKernel(k->spin, 1, 1, 1, 32, 1, 1, 0, s, params, NULL));
}

void t_complement(const t_kernels *k, CUstream s, CUdeviceptr p, size_t n)
{
    void *params[] = {&p, &n};
    CHECK_OK(cu.cuLaunchKernel(k->complement, 1, 1, 1, 256, 1, 1, 0, s, params, NULL));
}

void t_gate_init(t_gate *g)
{
    pthread_mutex_init(&g->mu, NULL);
    pthread_cond_init(&g->cv, NULL);
    g->reached = g->open = 0;
}

void t_gate_fn(void *gate)
{
    t_gate *g = gate;
    pthread_mutex_lock(&g->mu);
    g->reached = 1;
    while (!g->open)
        pthread_cond_wait(&g->cv, &g->mu);
    pthread_mutex_unlock(&g->mu);
}

void t_gate_open(t_gate *g)
{
    pthread_mutex_lock(&g->mu);
    g->open = 1;
    pthread_cond_broadcast(&g->cv);
    pthread_mutex_unlock(&g->mu);
}

int t_gate_reached(void *gate)
{
    t_gate *g = gate;
    pthread_mutex_lock(&g->mu);
    int r = g->reached;
    pthread_mutex_unlock(&g->mu);
    return r;
}

int t_thread_asleep(pid_t tid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int)tid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    const char *p = strrchr(buf, ')');
    return p && (p[2] == 'S' || p[2] == 'D');
}

/* test_pidns.c — a process in a pid namespace of its own (unshare --pid --fork --mount-proc, as a
 * container runtime makes one) is pid 1 to itself. The emulated NVML, read from the host's
 * namespace, reports the pid the host sees, as real NVML reports host pids: in the compute
 * process list (with its memory) and in the process utilisation samples. The host's reclaim
 * keeps it while it lives and returns its charges when it dies; and a process in another
 * container, which cannot see the first one's namespace, finds it dead by itself (its memory
 * and the device it held come back). Needs root and unshare(1); skipped otherwise (exit 77).
 * Device: 1GiB, context 66MiB. */
#include "emu_test.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#define UNSHARE "/usr/bin/unshare"

__attribute__((noreturn)) static void holder(const char *size)
{
    t_kernels k;
    CUdeviceptr p;
    prctl(PR_SET_PDEATHSIG, SIGKILL); /* dies with unshare, should the test die first */
    t_load_cuda();
    t_init_ctx();
    t_load_kernels(&k);
    if (size)
        CHECK_OK(cu.cuMemAlloc_v2(&p, strtoull(size, NULL, 10) * T_MiB));
    t_spin(&k, NULL, 1000000000ull);
    printf("nspid=%d\n", (int)getpid());
    fflush(stdout);
    for (;;)
        pause();
}

/* filler MiB: allocates that much, then queues a kernel and waits for it; exit 0 if both
 * worked. */
static int filler(const char *size)
{
    t_kernels k;
    CUdeviceptr p;
    t_load_cuda();
    t_init_ctx();
    t_load_kernels(&k);
    CUresult rc = cu.cuMemAlloc_v2(&p, strtoull(size, NULL, 10) * T_MiB);
    if (rc != CUDA_SUCCESS) {
        printf("cuMemAlloc_v2: %s\n", t_cu_name(rc));
        return 2;
    }
    t_spin(&k, NULL, 0);
    CHECK_OK(cu.cuCtxSynchronize());
    return 0;
}

static pid_t unshare_pid, inner;

static int child_known(void *arg)
{
    (void)arg;
    char path[64], buf[64] = "";
    snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)unshare_pid,
             (int)unshare_pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    inner = n > 0 ? (pid_t)atoi(buf) : 0;
    return inner > 0;
}

static int listed(void *arg)
{
    (void)arg;
    return t_nvml_proc_used(0, inner) == 66 * T_MiB;
}

static int sampled(void *arg)
{
    nvmlDevice_t d = *(nvmlDevice_t *)arg;
    nvmlProcessUtilizationSample_t s[256];
    unsigned n = 256;
    if (nv.nvmlDeviceGetProcessUtilization(d, s, &n, 0) != NVML_SUCCESS)
        return 0;
    int found = 0;
    for (unsigned i = 0; i < n; i++) {
        CHECK(s[i].pid != 1); /* never the namespace's own numbering */
        found |= s[i].pid == (unsigned)inner && s[i].smUtil > 0;
    }
    return found;
}

static int gone(void *arg)
{
    (void)arg;
    return t_nvml_used(0) == 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "holder") == 0)
        holder(argc > 2 ? argv[2] : NULL);
    if (argc > 2 && strcmp(argv[1], "filler") == 0)
        return filler(argv[2]);
    if (geteuid() != 0 || access(UNSHARE, X_OK) != 0) {
        printf("skipped: needs root and %s\n", UNSHARE);
        return 77;
    }
    t_isolate();
    t_load_nvml();
    CHECK_NVML(nv.nvmlInit_v2(), NVML_SUCCESS);
    nvmlDevice_t d;
    CHECK_NVML(nv.nvmlDeviceGetHandleByIndex_v2(0, &d), NVML_SUCCESS);
    char *args[] = {UNSHARE, "--pid", "--fork", "--mount-proc", argv[0], "holder", NULL};
    int fd;
    unshare_pid = t_spawn(args, NULL, &fd);
    CHECK(t_wait_for(child_known, NULL, T_WAIT_MS));
    char line[64] = "";
    FILE *f = fdopen(fd, "r");
    if (!fgets(line, sizeof line, f) || strcmp(line, "nspid=1\n") != 0)
        t_fail(__FILE__, __LINE__, "the helper is not pid 1 in its namespace: %s", line);
    /* Host pid in the process list, with its context charge, and in the samples. */
    CHECK(t_wait_for(listed, NULL, T_WAIT_MS));
    CHECK(t_wait_for(sampled, &d, T_WAIT_MS));
    CHECK_EQ(t_nvml_proc_used(0, inner), 66 * T_MiB); /* still there: not taken for dead */
    CHECK_EQ(t_nvml_proc_used(0, 1), 0);
    kill(inner, SIGKILL);
    t_wait(unshare_pid);
    fclose(f);
    CHECK(t_wait_for(gone, NULL, T_WAIT_MS));

    /* Two containers: one dies holding memory and the device; the other, which cannot see the
     * first one's namespace, must find it dead on its own (this process keeps out of the
     * state meanwhile: it would reclaim it first). */
    char *hold[] = {UNSHARE, "--pid", "--fork", "--mount-proc", argv[0], "holder", "600", NULL};
    unshare_pid = t_spawn(hold, NULL, &fd);
    CHECK(t_wait_for(child_known, NULL, T_WAIT_MS));
    f = fdopen(fd, "r");
    CHECK(fgets(line, sizeof line, f) != NULL); /* its kernel is queued */
    CHECK(t_wait_for(sampled, &d, T_WAIT_MS));  /* and running: it holds the device */
    CHECK_EQ(t_nvml_proc_used(0, inner), 666 * T_MiB);
    kill(inner, SIGKILL);
    t_wait(unshare_pid);
    fclose(f);
    char *fill[] = {UNSHARE, "--pid", "--fork", "--mount-proc", argv[0], "filler", "900", NULL};
    char *out = NULL;
    int rc = t_run(fill, NULL, &out);
    if (rc != 0)
        t_fail(__FILE__, __LINE__, "the second container: exit %d\n%s", rc, out);
    free(out);
    CHECK(t_wait_for(gone, NULL, T_WAIT_MS));
    CHECK_NVML(nv.nvmlShutdown(), NVML_SUCCESS);
    printf("ok: pid 1 in its namespace reported as %d\n", (int)inner);
    return 0;
}

/* test_fork.c — a forked child is its own process: it inherits no context, creates its own,
 * is charged its own context and memory (NVML lists both processes), and what it held comes
 * back when it exits (or execs another program), leaving the parent's accounting untouched. */
#include "emu_test.h"

#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static pid_t exec_child;

static int exec_released(void *arg)
{
    (void)arg;
    return t_nvml_proc_used(0, exec_child) == 0;
}

int main(void)
{
    t_isolate();
    t_load_cuda();
    t_load_nvml();
    t_init_ctx();
    CHECK_NVML(nv.nvmlInit_v2(), NVML_SUCCESS);
    CUdeviceptr p;
    CHECK_OK(cu.cuMemAlloc_v2(&p, 100 * T_MiB));
    uint64_t parent_free = t_free();
    int ready[2], go[2];
    CHECK(pipe(ready) == 0 && pipe(go) == 0);
    fflush(NULL);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        close(ready[0]);
        close(go[1]);
        CUdeviceptr q;
        CUcontext c;
        char b;
        CHECK_OK(cu.cuCtxGetCurrent(&c));
        CHECK(c == NULL);
        CHECK_CU(cu.cuMemAlloc_v2(&q, 1), CUDA_ERROR_INVALID_CONTEXT);
        CHECK_CU(cu.cuMemFree_v2(p), CUDA_ERROR_INVALID_CONTEXT);
        CHECK_OK(cu.cuCtxCreate_v4(&c, NULL, 0, 0));
        CHECK_CU(cu.cuMemFree_v2(p), CUDA_ERROR_INVALID_VALUE); /* the parent's pointer */
        CHECK_OK(cu.cuMemAlloc_v2(&q, 50 * T_MiB));
        char msg[] = "child data", back[sizeof msg];
        CHECK_OK(cu.cuMemcpyHtoD_v2(q, msg, sizeof msg));
        CHECK_OK(cu.cuMemcpyDtoH_v2(back, q, sizeof msg));
        CHECK(memcmp(msg, back, sizeof msg) == 0);
        CHECK_EQ(t_free(), parent_free - 66 * T_MiB - 50 * T_MiB);
        CHECK(write(ready[1], "r", 1) == 1);
        CHECK(read(go[0], &b, 1) == 1);
        _exit(0); /* without freeing: exit returns it */
    }
    close(ready[1]);
    close(go[0]);
    char b;
    if (read(ready[0], &b, 1) != 1)
        t_fail(__FILE__, __LINE__, "child failed: exit %d", t_wait(pid));
    CHECK_EQ(t_nvml_proc_used(0, getpid()), 166 * T_MiB);
    CHECK_EQ(t_nvml_proc_used(0, pid), 116 * T_MiB);
    CHECK_EQ(t_free(), parent_free - 116 * T_MiB);
    CHECK(write(go[1], "g", 1) == 1);
    CHECK_EQ(t_wait(pid), 0);
    CHECK_EQ(t_nvml_proc_used(0, pid), 0);
    CHECK_EQ(t_free(), parent_free);
    /* A child that execs another program leaves the GPU behind at once, though it lives on
     * (the driver's state does not survive exec). */
    int in[2];
    CHECK(pipe(ready) == 0 && pipe(go) == 0 && pipe(in) == 0);
    fflush(NULL);
    pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        CUcontext c;
        CUdeviceptr q;
        char b2;
        CHECK_OK(cu.cuCtxCreate_v4(&c, NULL, 0, 0));
        CHECK_OK(cu.cuMemAlloc_v2(&q, 10 * T_MiB));
        CHECK(write(ready[1], "r", 1) == 1);
        CHECK(read(go[0], &b2, 1) == 1);
        dup2(in[0], 0);
        close(in[1]);
        execl("/bin/cat", "cat", (char *)NULL);
        _exit(127);
    }
    close(in[0]);
    if (read(ready[0], &b, 1) != 1)
        t_fail(__FILE__, __LINE__, "child failed: exit %d", t_wait(pid));
    CHECK_EQ(t_nvml_proc_used(0, pid), 76 * T_MiB);
    CHECK(write(go[1], "g", 1) == 1);
    exec_child = pid;
    CHECK(t_wait_for(exec_released, NULL, T_WAIT_MS));
    CHECK(waitpid(pid, NULL, WNOHANG) == 0); /* still running (cat) */
    CHECK_EQ(t_free(), parent_free);
    close(in[1]);
    CHECK_EQ(t_wait(pid), 0);

    /* The parent's state survived the fork. */
    CHECK_OK(cu.cuMemsetD8_v2(p, 1, 100 * T_MiB));
    CHECK_OK(cu.cuMemFree_v2(p));
    CHECK_EQ(t_nvml_proc_used(0, getpid()), 66 * T_MiB);
    printf("ok\n");
    return 0;
}

/* test_config.c — configuration errors make cuInit fail cleanly with one line on stderr; a
 * state file in use with another configuration is kept (and said so); an unused one with
 * another configuration is re-initialised. Each case is a fresh process (role "probe"). */
#include "emu_test.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int probe(void)
{
    t_load_cuda();
    CUresult rc = cu.cuInit(0);
    CUresult again = cu.cuInit(0);
    CHECK_EQ(again, rc); /* the first outcome is final */
    if (rc != CUDA_SUCCESS) {
        printf("result=%s\n", t_cu_name(rc));
        return 0;
    }
    size_t t;
    CHECK_OK(cu.cuDeviceTotalMem_v2(&t, 0));
    printf("result=CUDA_SUCCESS total=%zu\n", t);
    return 0;
}

static int count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

static int holder_holds(void *arg)
{
    return t_nvml_proc_used(0, *(pid_t *)arg) > 0;
}

int main(int argc, char **argv)
{
    (void)argv;
    if (argc > 1)
        return probe();
    t_isolate();
    char self[4096];
    ssize_t sn = readlink("/proc/self/exe", self, sizeof self - 1);
    CHECK(sn > 0);
    self[sn] = '\0';
    char *args[] = {self, "probe", NULL};

    static const struct { const char *env, *result, *stderr_has; } bad[] = {
        {"CONVGPU_EMU_DEVICES=lots", "CUDA_ERROR_INVALID_VALUE", "CONVGPU_EMU_DEVICES"},
        {"CONVGPU_EMU_DEVICES=0", "CUDA_ERROR_INVALID_VALUE", "zero"},
        {"CONVGPU_EMU_DEVICES=17x1GiB", "CUDA_ERROR_INVALID_VALUE", "CONVGPU_EMU_DEVICES"},
        {"CONVGPU_EMU_DEVICES=2x", "CUDA_ERROR_INVALID_VALUE", "CONVGPU_EMU_DEVICES"},
        {"CONVGPU_EMU_GRANULARITY=3000", "CUDA_ERROR_INVALID_VALUE", "GRANULARITY"},
        {"CONVGPU_EMU_CONTEXT=1.5B", "CUDA_ERROR_INVALID_VALUE", "CONVGPU_EMU_CONTEXT"},
        {"CONVGPU_EMU_CONTEXT=2GiB", "CUDA_ERROR_INVALID_VALUE", "context charge"},
        {"CONVGPU_EMU_SAMPLE_MS=10", "CUDA_ERROR_INVALID_VALUE", "SAMPLE_MS"},
        {"CONVGPU_EMU_SAMPLE_MS=", "CUDA_ERROR_INVALID_VALUE", "SAMPLE_MS"},
        {"CONVGPU_EMU_SAMPLE_MS=100ms", "CUDA_ERROR_INVALID_VALUE", "SAMPLE_MS"},
        {"CONVGPU_EMU_TIMESLICE_US=50", "CUDA_ERROR_INVALID_VALUE", "TIMESLICE"},
        {"CONVGPU_EMU_TIMESLICE_US=50001", "CUDA_ERROR_INVALID_VALUE", "TIMESLICE"},
        {"CONVGPU_EMU_TIMESLICE_US=1ms", "CUDA_ERROR_INVALID_VALUE", "TIMESLICE"},
        {"CONVGPU_EMU_TIMESLICE_US=-1", "CUDA_ERROR_INVALID_VALUE", "TIMESLICE"},
        {"CONVGPU_EMU_STATE=/nonexistent-dir/state", "CUDA_ERROR_OPERATING_SYSTEM", "state file"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *env[] = {"CONVGPU_EMU_DEVICES=1GiB", bad[i].env, NULL};
        char *out = NULL;
        CHECK_EQ(t_run(args, env, &out), 0);
        if (!strstr(out, bad[i].result) || !strstr(out, bad[i].stderr_has) ||
            count_lines(out) != 2)
            t_fail(__FILE__, __LINE__, "%s: output was:\n%s", bad[i].env, out);
        free(out);
    }
    /* Accepted forms. */
    static const struct { const char *env, *total; } good[] = {
        {"CONVGPU_EMU_DEVICES=2x3GiB", "total=3221225472"},
        {"CONVGPU_EMU_DEVICES=1.5GiB,4GiB", "total=1610612736"},
        {"-CONVGPU_EMU_DEVICES", "total=5368709120"}, /* the default: the paper's 5GiB GPU */
        {"CONVGPU_EMU_TIMESLICE_US=0", "total=5368709120"},   /* turns of whole kernels */
        {"CONVGPU_EMU_TIMESLICE_US=2000", "total=5368709120"},
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        const char *env[] = {good[i].env, NULL};
        char *out = NULL;
        CHECK_EQ(t_run(args, env, &out), 0);
        if (!strstr(out, good[i].total) || count_lines(out) != 1)
            t_fail(__FILE__, __LINE__, "%s: output was:\n%s", good[i].env, out);
        free(out);
    }
    /* A live user with 1GiB keeps the file; a newcomer asking for 2GiB is told and adapts. */
    char *holder[] = {(char *)t_sample(), "--size", "4MiB", "--hold", "--quiet", NULL};
    const char *env1[] = {"CONVGPU_EMU_DEVICES=1GiB", NULL};
    const char *env2[] = {"CONVGPU_EMU_DEVICES=2GiB", NULL};
    int fd;
    pid_t pid = t_spawn(holder, env1, &fd);
    t_load_nvml();
    CHECK_NVML(nv.nvmlInit_v2(), NVML_SUCCESS);
    CHECK(t_wait_for(holder_holds, &pid, T_WAIT_MS));
    char *out = NULL;
    CHECK_EQ(t_run(args, env2, &out), 0);
    if (!strstr(out, "in use by 1 process") || !strstr(out, "total=1073741824"))
        t_fail(__FILE__, __LINE__, "while in use: output was:\n%s", out);
    free(out);
    kill(pid, SIGKILL);
    t_wait(pid);
    free(t_read_all(fd));
    CHECK_EQ(t_run(args, env2, &out), 0);
    if (strstr(out, "in use") || !strstr(out, "total=2147483648"))
        t_fail(__FILE__, __LINE__, "after: output was:\n%s", out);
    free(out);
    printf("ok\n");
    return 0;
}

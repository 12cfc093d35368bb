/* test_capacity.c — capacity is exact: a device of T bytes lets processes allocate T minus
 * one context charge per process (the charge itself rounded up to the granule), every
 * allocation rounded up to the granule, and not one granule more. Run with T = 1GiB,
 * context 65MiB (charged as 66MiB), granule 2MiB. */
#include "emu_test.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define CTX (66 * T_MiB)

static char self[4096];

static int role(const char *r)
{
    t_load_cuda();
    CHECK_OK(cu.cuInit(0));
    CUcontext c;
    CUresult rc = cu.cuDevicePrimaryCtxRetain(&c, 0);
    if (strcmp(r, "try-ctx") == 0)
        return (int)rc;
    CHECK_OK(rc); /* hold-ctx: keep a context until killed */
    printf("ready\n");
    fflush(stdout);
    for (;;)
        pause();
}

static void read_ready(int fd)
{
    char buf[16] = "";
    ssize_t n = read(fd, buf, sizeof buf - 1);
    if (n <= 0 || strncmp(buf, "ready", 5) != 0)
        t_fail(__FILE__, __LINE__, "helper did not become ready (%zd)", n);
}

int main(int argc, char **argv)
{
    if (argc > 1)
        return role(argv[1]);
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    CHECK(n > 0);
    t_isolate();
    t_load_cuda();
    t_init_ctx();
    const uint64_t cap = T_GiB - CTX;
    CUdeviceptr p, q;
    CHECK_EQ(t_free(), cap);

    CHECK_CU(cu.cuMemAlloc_v2(&p, cap + 1), CUDA_ERROR_OUT_OF_MEMORY);
    CHECK_OK(cu.cuMemAlloc_v2(&p, cap));
    CHECK_EQ(t_free(), 0);
    CHECK_CU(cu.cuMemAlloc_v2(&q, 1), CUDA_ERROR_OUT_OF_MEMORY);
    /* A second process cannot even take its context charge now. */
    char *try_argv[] = {self, "try-ctx", NULL};
    CHECK_EQ(t_run(try_argv, NULL, NULL), CUDA_ERROR_OUT_OF_MEMORY);
    CHECK_OK(cu.cuMemFree_v2(p));

    /* Rounding: cap - granule + 1 byte still takes the whole capacity. */
    CHECK_OK(cu.cuMemAlloc_v2(&p, cap - 2 * T_MiB + 1));
    CHECK_EQ(t_free(), 0);
    CHECK_CU(cu.cuMemAlloc_v2(&q, 1), CUDA_ERROR_OUT_OF_MEMORY);
    CHECK_OK(cu.cuMemFree_v2(p));
    /* Many small allocations: exactly cap / granule of them fit. */
    static CUdeviceptr many[1024];
    size_t k = 0;
    while (k < 1024 && cu.cuMemAlloc_v2(&many[k], 1) == CUDA_SUCCESS)
        k++;
    CHECK_EQ(k, cap / (2 * T_MiB));
    while (k > 0)
        CHECK_OK(cu.cuMemFree_v2(many[--k]));

    /* Another process with a context: one more context charge comes off. */
    char *hold_argv[] = {self, "hold-ctx", NULL};
    int fd;
    pid_t pid = t_spawn(hold_argv, NULL, &fd);
    read_ready(fd);
    CHECK_EQ(t_free(), cap - CTX);
    CHECK_CU(cu.cuMemAlloc_v2(&p, cap - CTX + 1), CUDA_ERROR_OUT_OF_MEMORY);
    CHECK_OK(cu.cuMemAlloc_v2(&p, cap - CTX));
    CHECK_CU(cu.cuMemAlloc_v2(&q, 1), CUDA_ERROR_OUT_OF_MEMORY);
    CHECK_OK(cu.cuMemFree_v2(p));
    kill(pid, SIGTERM);
    CHECK_EQ(t_wait(pid), -SIGTERM);
    close(fd);
    CHECK_EQ(t_free(), cap);
    printf("ok\n");
    return 0;
}

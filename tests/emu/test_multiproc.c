/* test_multiproc.c — one device shared by all processes: two convgpu-sample processes contend
 * (the second fails with OUT_OF_MEMORY, exit 2, while the first holds its memory, and succeeds
 * once it has exited), and a SIGKILLed process's memory and context charge come back, both
 * while it is an unreaped zombie and after. The test process itself uses only NVML, so it
 * holds no device memory. Device: 256MiB, context 66MiB, granule 2MiB. */
#include "emu_test.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pid_t watched;
static uint64_t want_used;

static int proc_holds(void *arg)
{
    (void)arg;
    return t_nvml_proc_used(0, watched) >= want_used;
}

static int device_empty(void *arg)
{
    (void)arg;
    return t_nvml_used(0) == 0;
}

static void contend(void)
{
    char *first[] = {(char *)t_sample(), "--size", "120MiB", "--hold", "--quiet", NULL};
    char *second[] = {(char *)t_sample(), "--size", "120MiB", "--quiet", NULL};
    int fd;
    watched = t_spawn(first, NULL, &fd);
    want_used = 186 * T_MiB;
    CHECK(t_wait_for(proc_holds, NULL, T_WAIT_MS));
    CHECK_EQ(t_nvml_used(0), 186 * T_MiB);
    char *out = NULL;
    int rc = t_run(second, NULL, &out);
    if (rc != 2 || !strstr(out, "CUDA_ERROR_OUT_OF_MEMORY"))
        t_fail(__FILE__, __LINE__, "second sample: exit %d, output:\n%s", rc, out);
    free(out);
    kill(watched, SIGTERM); /* ends its hold; it never frees */
    CHECK_EQ(t_wait(watched), -SIGTERM);
    free(t_read_all(fd));
    CHECK_EQ(t_nvml_used(0), 0);
    CHECK_EQ(t_run(second, NULL, NULL), 0);
}

static void sigkill(void)
{
    char *holder[] = {(char *)t_sample(), "--size", "150MiB", "--api", "vmm", "--hold",
                      "--quiet", NULL};
    int fd;
    watched = t_spawn(holder, NULL, &fd);
    want_used = 216 * T_MiB;
    CHECK(t_wait_for(proc_holds, NULL, T_WAIT_MS));
    kill(watched, SIGKILL);
    /* Not reaped yet: a zombie already holds nothing, as after a real driver's exit. (The
     * kernel ends the process a moment after kill returns: wait for that, not for a time.) */
    CHECK(t_wait_for(device_empty, NULL, T_WAIT_MS));
    CHECK_EQ(t_nvml_used(0), 0);
    CHECK_EQ(t_nvml_proc_used(0, watched), 0);
    CHECK_EQ(t_wait(watched), -SIGKILL);
    free(t_read_all(fd));
    /* The whole capacity is usable again by a new process. */
    char *all[] = {(char *)t_sample(), "--size", "190MiB", "--quiet", NULL};
    CHECK_EQ(t_run(all, NULL, NULL), 0);
    CHECK_EQ(t_nvml_used(0), 0);
}

int main(void)
{
    t_isolate();
    t_load_nvml();
    CHECK_NVML(nv.nvmlInit_v2(), NVML_SUCCESS);
    contend();
    sigkill();
    CHECK_NVML(nv.nvmlShutdown(), NVML_SUCCESS);
    printf("ok\n");
    return 0;
}

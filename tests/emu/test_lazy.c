/* test_lazy.c — device memory is backed lazily: on an emulated 64GiB device a process
 * allocates 60GiB, touches 1MiB of it, and its resident memory grows by about that 1MiB. */
#include "emu_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rss_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    unsigned long long kb = 0;
    CHECK(f != NULL);
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "VmRSS: %llu kB", &kb) == 1)
            break;
    fclose(f);
    return kb;
}

int main(void)
{
    t_isolate();
    t_load_cuda();
    t_init_ctx();
    size_t f, t;
    CHECK_OK(cu.cuMemGetInfo_v2(&f, &t));
    CHECK_EQ(t, 64 * T_GiB);
    static unsigned char host[1 << 20];
    memset(host, 0x5a, sizeof host);
    uint64_t before = rss_kib();
    CUdeviceptr p;
    CHECK_OK(cu.cuMemAlloc_v2(&p, 60 * T_GiB));
    CHECK_OK(cu.cuMemcpyHtoD_v2(p + 30 * T_GiB, host, sizeof host));
    CHECK_OK(cu.cuMemsetD8_v2(p + 60 * T_GiB - 4096, 1, 4096));
    uint64_t after = rss_kib();
    CHECK_OK(cu.cuMemGetInfo_v2(&f, &t));
    CHECK_EQ(t - f, 60 * T_GiB + 66 * T_MiB);
    printf("RSS %llu kB -> %llu kB\n", (unsigned long long)before, (unsigned long long)after);
    if (after > before + 16 * 1024)
        t_fail(__FILE__, __LINE__, "RSS grew by %llu kB for 1MiB touched",
               (unsigned long long)(after - before));
    CHECK_OK(cu.cuMemFree_v2(p));
    printf("ok\n");
    return 0;
}

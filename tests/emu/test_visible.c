/* test_visible.c — CUDA_VISIBLE_DEVICES as the driver applies it: indices and GPU-UUID
 * prefixes, renumbered from 0, the list cut at the first invalid or repeated entry, empty or
 * nothing valid = no device. Each setting runs in a fresh process (this program, role "list").
 * Devices: 1GiB, 2GiB, 3GiB; the list is printed as sizes in GiB. */
#include "emu_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int list(void)
{
    t_load_cuda();
    CUresult rc = cu.cuInit(0);
    if (rc != CUDA_SUCCESS) {
        printf("%s\n", t_cu_name(rc));
        return 0;
    }
    int n;
    CHECK_OK(cu.cuDeviceGetCount(&n));
    for (int i = 0; i < n; i++) {
        size_t t;
        CHECK_OK(cu.cuDeviceTotalMem_v2(&t, i));
        printf("%s%zu", i ? "," : "", t >> 30);
    }
    printf("\n");
    return 0;
}

int main(int argc, char **argv)
{
    (void)argv;
    if (argc > 1)
        return list();
    t_isolate();
    t_load_nvml();
    char self[4096];
    ssize_t sn = readlink("/proc/self/exe", self, sizeof self - 1);
    CHECK(sn > 0);
    self[sn] = '\0';
    CHECK_NVML(nv.nvmlInit_v2(), NVML_SUCCESS); /* NVML sees all, whatever the variable */
    char u1[NVML_DEVICE_UUID_V2_BUFFER_SIZE], u2[NVML_DEVICE_UUID_V2_BUFFER_SIZE];
    nvmlDevice_t d;
    CHECK_NVML(nv.nvmlDeviceGetHandleByIndex_v2(1, &d), NVML_SUCCESS);
    CHECK_NVML(nv.nvmlDeviceGetUUID(d, u1, sizeof u1), NVML_SUCCESS);
    CHECK_NVML(nv.nvmlDeviceGetHandleByIndex_v2(2, &d), NVML_SUCCESS);
    CHECK_NVML(nv.nvmlDeviceGetUUID(d, u2, sizeof u2), NVML_SUCCESS);
    char full2[128], prefix1[16], mixed[160];
    snprintf(full2, sizeof full2, "CUDA_VISIBLE_DEVICES=%s", u2);
    snprintf(prefix1, sizeof prefix1, "%.10s", u1); /* "GPU-" + 6 hex digits */
    snprintf(mixed, sizeof mixed, "CUDA_VISIBLE_DEVICES=%s,0", prefix1);

    static const struct { const char *env; const char *want; } cases[] = {
        {"-CUDA_VISIBLE_DEVICES", "1,2,3"},
        {"CUDA_VISIBLE_DEVICES=2", "3"},
        {"CUDA_VISIBLE_DEVICES=2,0", "3,1"},
        {"CUDA_VISIBLE_DEVICES= 1 , 2 ", "2,3"},
        {"CUDA_VISIBLE_DEVICES=1,7,0", "2"},
        {"CUDA_VISIBLE_DEVICES=0,0,1", "1"},
        {"CUDA_VISIBLE_DEVICES=1,abc,2", "2"},
        {"CUDA_VISIBLE_DEVICES=", "CUDA_ERROR_NO_DEVICE"},
        {"CUDA_VISIBLE_DEVICES=-1", "CUDA_ERROR_NO_DEVICE"},
        {"CUDA_VISIBLE_DEVICES=3", "CUDA_ERROR_NO_DEVICE"},
        {"CUDA_VISIBLE_DEVICES=GPU-zzzz", "CUDA_ERROR_NO_DEVICE"},
        {"CUDA_VISIBLE_DEVICES=GPU-", "CUDA_ERROR_NO_DEVICE"},
        {NULL, "3"},  /* full UUID of device 2 */
        {NULL, "2,1"}, /* prefix of device 1, then index 0 */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *e = cases[i].env ? cases[i].env : i == 12 ? full2 : mixed;
        const char *env[] = {e, NULL};
        char *args[] = {self, "list", NULL};
        char *out = NULL;
        CHECK_EQ(t_run(args, env, &out), 0);
        out[strcspn(out, "\n")] = '\0';
        if (strcmp(out, cases[i].want) != 0)
            t_fail(__FILE__, __LINE__, "%s: got '%s', expected '%s'", e, out, cases[i].want);
        free(out);
    }
    unsigned n;
    CHECK_NVML(nv.nvmlDeviceGetCount_v2(&n), NVML_SUCCESS);
    CHECK_EQ(n, 3);
    printf("ok\n");
    return 0;
}

/* test_nvml.c — NVML reports what the driver API does: device count, names and UUIDs, memory
 * (v1 and v2, with the version check), per-process used memory with the insufficient-size
 * protocol, and utilisation that rises while a `spin` kernel runs. Devices: 1GiB and 2GiB. */
#include "emu_test.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static CUcontext ctx;

/* Keeps device 0 busy with short `spin` kernels back to back until the test clears `spinning`:
 * the busy state lasts as long as the test's look at it takes, however loaded the machine. */
static atomic_int spinning = 1;

static void *spinner(void *arg)
{
    (void)arg;
    CUmodule m;
    CUfunction f;
    unsigned long long us = 50000;
    void *params[] = {&us};
    CHECK_OK(cu.cuCtxSetCurrent(ctx));
    CHECK_OK(cu.cuModuleLoadData(&m, "convgpu-emu-module 1\nkernel spin\n"));
    CHECK_OK(cu.cuModuleGetFunction(&f, m, "spin"));
    /* One kernel in flight at a time: launches return at once, and the test must not leave a
     * queue of them behind when it stops spinning. */
    while (atomic_load(&spinning)) {
        CHECK_OK(cu.cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, NULL, params, NULL));
        CHECK_OK(cu.cuStreamSynchronize(NULL));
    }
    CHECK_OK(cu.cuModuleUnload(m));
    return NULL;
}

static unsigned util(nvmlDevice_t d)
{
    nvmlUtilization_t u;
    CHECK_NVML(nv.nvmlDeviceGetUtilizationRates(d, &u), NVML_SUCCESS);
    CHECK(u.gpu <= 100);
    return u.gpu;
}

static int busy(void *arg)
{
    return util(*(nvmlDevice_t *)arg) >= 80;
}

static int idle(void *arg)
{
    return util(*(nvmlDevice_t *)arg) == 0;
}

int main(void)
{
    t_isolate();
    t_load_cuda();
    t_load_nvml();
    unsigned n;
    CHECK_NVML(nv.nvmlDeviceGetCount_v2(&n), NVML_ERROR_UNINITIALIZED);
    ctx = t_init_ctx();
    CHECK_NVML(nv.nvmlInit_v2(), NVML_SUCCESS);
    char ver[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE];
    CHECK_NVML(nv.nvmlSystemGetDriverVersion(ver, sizeof ver), NVML_SUCCESS);
    CHECK_NVML(nv.nvmlSystemGetDriverVersion(ver, 2), NVML_ERROR_INSUFFICIENT_SIZE);

    /* Count, names, UUIDs: as the driver says. */
    int count;
    CHECK_OK(cu.cuDeviceGetCount(&count));
    CHECK_NVML(nv.nvmlDeviceGetCount_v2(&n), NVML_SUCCESS);
    CHECK_EQ(n, (unsigned)count);
    CHECK_EQ(n, 2);
    for (unsigned i = 0; i < n; i++) {
        nvmlDevice_t d, e;
        char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE], cname[NVML_DEVICE_NAME_V2_BUFFER_SIZE];
        char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE], cuuid[64];
        CUuuid u;
        unsigned idx;
        CHECK_NVML(nv.nvmlDeviceGetHandleByIndex_v2(i, &d), NVML_SUCCESS);
        CHECK_NVML(nv.nvmlDeviceGetName(d, name, sizeof name), NVML_SUCCESS);
        CHECK_OK(cu.cuDeviceGetName(cname, sizeof cname, (CUdevice)i));
        CHECK(strcmp(name, cname) == 0);
        CHECK_NVML(nv.nvmlDeviceGetUUID(d, uuid, sizeof uuid), NVML_SUCCESS);
        CHECK_NVML(nv.nvmlDeviceGetUUID(d, uuid, 10), NVML_ERROR_INSUFFICIENT_SIZE);
        CHECK_OK(cu.cuDeviceGetUuid_v2(&u, (CUdevice)i));
        const unsigned char *b = (const unsigned char *)u.bytes;
        snprintf(cuuid, sizeof cuuid,
                 "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                 b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
                 b[14], b[15]);
        if (strcmp(uuid, cuuid) != 0)
            t_fail(__FILE__, __LINE__, "NVML UUID %s, driver UUID %s", uuid, cuuid);
        CHECK_NVML(nv.nvmlDeviceGetHandleByUUID(uuid, &e), NVML_SUCCESS);
        CHECK(e == d);
        CHECK_NVML(nv.nvmlDeviceGetIndex(d, &idx), NVML_SUCCESS);
        CHECK_EQ(idx, i);
        size_t total;
        nvmlMemory_t m;
        CHECK_OK(cu.cuDeviceTotalMem_v2(&total, (CUdevice)i));
        CHECK_NVML(nv.nvmlDeviceGetMemoryInfo(d, &m), NVML_SUCCESS);
        CHECK_EQ(m.total, total);
    }
    nvmlDevice_t d0, bad;
    CHECK_NVML(nv.nvmlDeviceGetHandleByIndex_v2(2, &bad), NVML_ERROR_INVALID_ARGUMENT);
    CHECK_NVML(nv.nvmlDeviceGetHandleByUUID("GPU-nope", &bad), NVML_ERROR_NOT_FOUND);
    CHECK_NVML(nv.nvmlDeviceGetHandleByIndex_v2(0, &d0), NVML_SUCCESS);

    /* Memory: the driver's numbers, v1 and v2. */
    CUdeviceptr p;
    CHECK_OK(cu.cuMemAlloc_v2(&p, 100 * T_MiB + 1));
    size_t f, t;
    CHECK_OK(cu.cuMemGetInfo_v2(&f, &t));
    nvmlMemory_t m1;
    nvmlMemory_v2_t m2;
    CHECK_NVML(nv.nvmlDeviceGetMemoryInfo(d0, &m1), NVML_SUCCESS);
    CHECK_EQ(m1.total, t);
    CHECK_EQ(m1.free, f);
    CHECK_EQ(m1.used, 66 * T_MiB + 102 * T_MiB);
    memset(&m2, 0, sizeof m2);
    m2.version = 1;
    CHECK_NVML(nv.nvmlDeviceGetMemoryInfo_v2(d0, &m2), NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
    m2.version = nvmlMemory_v2;
    CHECK_EQ(m2.version, (unsigned)sizeof(nvmlMemory_v2_t) | (2u << 24));
    CHECK_NVML(nv.nvmlDeviceGetMemoryInfo_v2(d0, &m2), NVML_SUCCESS);
    CHECK_EQ(m2.total, t);
    CHECK_EQ(m2.free, f);
    CHECK_EQ(m2.used + m2.reserved, m1.used);

    /* Per-process memory and the sizing protocol. */
    unsigned cnt = 0;
    nvmlProcessInfo_t pi[4];
    CHECK_NVML(nv.nvmlDeviceGetComputeRunningProcesses_v3(d0, &cnt, NULL),
               NVML_ERROR_INSUFFICIENT_SIZE);
    CHECK_EQ(cnt, 1);
    CHECK_NVML(nv.nvmlDeviceGetComputeRunningProcesses_v3(d0, NULL, pi),
               NVML_ERROR_INVALID_ARGUMENT);
    cnt = 4;
    CHECK_NVML(nv.nvmlDeviceGetComputeRunningProcesses_v3(d0, &cnt, pi), NVML_SUCCESS);
    CHECK_EQ(cnt, 1);
    CHECK_EQ(pi[0].pid, (unsigned)getpid());
    CHECK_EQ(pi[0].usedGpuMemory, m1.used);
    CHECK_EQ(pi[0].gpuInstanceId, NVML_VALUE_NOT_AVAILABLE);
    nvmlProcessInfo_v2_t pv2[1];
    cnt = 1;
    CHECK_NVML(nv.nvmlDeviceGetComputeRunningProcesses_v2(d0, &cnt, pv2), NVML_SUCCESS);
    CHECK_EQ(pv2[0].usedGpuMemory, m1.used);
    nvmlDevice_t d1;
    CHECK_NVML(nv.nvmlDeviceGetHandleByIndex_v2(1, &d1), NVML_SUCCESS);
    cnt = 0;
    CHECK_NVML(nv.nvmlDeviceGetComputeRunningProcesses_v3(d1, &cnt, NULL), NVML_SUCCESS);
    CHECK_EQ(cnt, 0);
    CHECK_OK(cu.cuMemFree_v2(p));
    CHECK_EQ(t_nvml_used(0), 66 * T_MiB);

    /* Utilisation: idle, then busy while spin runs (the other device idle), then it decays. */
    CHECK(util(d0) == 0);
    pthread_t th;
    pthread_create(&th, NULL, spinner, NULL);
    int was_busy = t_wait_for(busy, &d0, T_WAIT_MS);
    unsigned other = util(d1);
    atomic_store(&spinning, 0);
    pthread_join(th, NULL);
    if (!was_busy || other != 0)
        t_fail(__FILE__, __LINE__, "utilisation during spin: %u%% (other device %u%%)",
               util(d0), other);
    CHECK(t_wait_for(idle, &d0, T_WAIT_MS));

    CHECK_NVML(nv.nvmlShutdown(), NVML_SUCCESS);
    CHECK_NVML(nv.nvmlDeviceGetCount_v2(&n), NVML_ERROR_UNINITIALIZED);
    CHECK_NVML(nv.nvmlShutdown(), NVML_ERROR_UNINITIALIZED);
    printf("ok\n");
    return 0;
}

/* test_errors.c — the emulator's error behaviour: calls before cuInit, missing contexts, NULL
 * outputs, bad and freed pointers, over-capacity requests, bad images and launches, and the
 * error-name tables. */
#include "emu_test.h"

#include <stdio.h>
#include <string.h>

static const char *image = "convgpu-emu-module 1\n# test\nkernel complement\nkernel spin\n";

static void before_init(void)
{
    int n;
    CUdevice d;
    CUcontext c;
    CUdeviceptr p;
    size_t f, t;
    CUmodule m;
    const char *s;
    const void *tbl = &n;
    CUuuid id;
    /* Error names and the export table work (and do not initialise) before cuInit. */
    CHECK_OK(cu.cuGetErrorName(CUDA_ERROR_OUT_OF_MEMORY, &s));
    CHECK(strcmp(s, "CUDA_ERROR_OUT_OF_MEMORY") == 0);
    memset(&id, 0, sizeof id);
    CHECK_CU(cu.cuGetExportTable(&tbl, &id), CUDA_ERROR_NOT_SUPPORTED);
    CHECK(tbl == NULL);
    CHECK_OK(cu.cuDriverGetVersion(&n));
    CHECK_EQ(n, 13000);
    CHECK_CU(cu.cuDeviceGetCount(&n), CUDA_ERROR_NOT_INITIALIZED);
    CHECK_CU(cu.cuDeviceGet(&d, 0), CUDA_ERROR_NOT_INITIALIZED);
    CHECK_CU(cu.cuCtxCreate_v4(&c, NULL, 0, 0), CUDA_ERROR_NOT_INITIALIZED);
    CHECK_CU(cu.cuDevicePrimaryCtxRetain(&c, 0), CUDA_ERROR_NOT_INITIALIZED);
    CHECK_CU(cu.cuMemAlloc_v2(&p, 1), CUDA_ERROR_NOT_INITIALIZED);
    CHECK_CU(cu.cuMemGetInfo_v2(&f, &t), CUDA_ERROR_NOT_INITIALIZED);
    CHECK_CU(cu.cuMemFree_v2(0), CUDA_ERROR_NOT_INITIALIZED);
    CHECK_CU(cu.cuModuleLoadData(&m, image), CUDA_ERROR_NOT_INITIALIZED);
    CHECK_CU(cu.cuCtxGetCurrent(&c), CUDA_ERROR_NOT_INITIALIZED);
    CHECK_CU(cu.cuInit(1), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cu.cuDeviceGetCount(&n), CUDA_ERROR_NOT_INITIALIZED);
}

static void without_context(void)
{
    CUdeviceptr p;
    size_t f, t;
    CUcontext c = (CUcontext)&t;
    CHECK_OK(cu.cuCtxGetCurrent(&c));
    CHECK(c == NULL);
    CHECK_CU(cu.cuMemAlloc_v2(&p, 1024), CUDA_ERROR_INVALID_CONTEXT);
    CHECK_CU(cu.cuMemGetInfo_v2(&f, &t), CUDA_ERROR_INVALID_CONTEXT);
    CHECK_CU(cu.cuCtxPopCurrent_v2(&c), CUDA_ERROR_INVALID_CONTEXT);
}

static void devices(void)
{
    int n, v;
    CUdevice d;
    char name[64];
    CHECK_CU(cu.cuDeviceGetCount(NULL), CUDA_ERROR_INVALID_VALUE);
    CHECK_OK(cu.cuDeviceGetCount(&n));
    CHECK_EQ(n, 1);
    CHECK_CU(cu.cuDeviceGet(&d, 1), CUDA_ERROR_INVALID_DEVICE);
    CHECK_CU(cu.cuDeviceGet(NULL, 0), CUDA_ERROR_INVALID_VALUE);
    CHECK_OK(cu.cuDeviceGet(&d, 0));
    CHECK_CU(cu.cuDeviceGetName(name, 0, d), CUDA_ERROR_INVALID_VALUE);
    CHECK_OK(cu.cuDeviceGetName(name, sizeof name, d));
    CHECK(strstr(name, "1GiB") != NULL);
    CHECK_CU(cu.cuDeviceGetAttribute(&v, (CUdevice_attribute)9999, d), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cu.cuDeviceGetAttribute(NULL, CU_DEVICE_ATTRIBUTE_WARP_SIZE, d),
             CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cu.cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_WARP_SIZE, 7),
             CUDA_ERROR_INVALID_DEVICE);
    static const struct { CUdevice_attribute a; int v; } want[] = {
        {CU_DEVICE_ATTRIBUTE_WARP_SIZE, 32},
        {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, 1024},
        {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 108},
        {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 8},
        {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, 0},
        {CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT, 512},
        {CU_DEVICE_ATTRIBUTE_INTEGRATED, 0},
        {CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING, 1},
        {CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY, 1},
        {CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS, 1},
        {CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, 1},
        {CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, 1},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        CHECK_OK(cu.cuDeviceGetAttribute(&v, want[i].a, d));
        if (v != want[i].v)
            t_fail(__FILE__, __LINE__, "attribute %d = %d, expected %d", (int)want[i].a, v,
                   want[i].v);
    }
}

static void memory(void)
{
    CUdeviceptr p, q, base;
    size_t size;
    unsigned char buf[256];
    CHECK_CU(cu.cuMemAlloc_v2(NULL, 16), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cu.cuMemAlloc_v2(&p, 0), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cu.cuMemAlloc_v2(&p, 2 * T_GiB), CUDA_ERROR_OUT_OF_MEMORY);
    CHECK_CU(cu.cuMemGetInfo_v2(NULL, &size), CUDA_ERROR_INVALID_VALUE);
    CHECK_OK(cu.cuMemAlloc_v2(&p, 4096));
    CHECK_OK(cu.cuMemGetAddressRange_v2(&base, &size, p + 100));
    CHECK(base == p && size == 4096);
    CHECK_CU(cu.cuMemcpyHtoD_v2(p + 4000, buf, 200), CUDA_ERROR_INVALID_VALUE); /* past end */
    CHECK_CU(cu.cuMemcpyHtoD_v2(p, NULL, 16), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cu.cuMemsetD32_v2(p + 1, 0, 4), CUDA_ERROR_INVALID_VALUE); /* misaligned */
    CHECK_OK(cu.cuMemsetD32_v2(p, 0xdeadbeefu, 1024));
    CHECK_OK(cu.cuMemcpyDtoH_v2(buf, p + 4092, 4));
    CHECK(buf[0] == 0xef && buf[3] == 0xde);
    CHECK_CU(cu.cuMemFree_v2(p + 8), CUDA_ERROR_INVALID_VALUE); /* interior pointer */
    CHECK_CU(cu.cuMemFree_v2((CUdeviceptr)(uintptr_t)buf), CUDA_ERROR_INVALID_VALUE);
    CHECK_OK(cu.cuMemAlloc_v2(&q, 100));
    CHECK_OK(cu.cuMemcpyDtoD_v2(q, p, 100));
    CHECK_OK(cu.cuMemFree_v2(p));
    CHECK_CU(cu.cuMemFree_v2(p), CUDA_ERROR_INVALID_VALUE); /* double free */
    CHECK_CU(cu.cuMemcpyDtoH_v2(buf, p, 16), CUDA_ERROR_INVALID_VALUE); /* freed */
    CHECK_CU(cu.cuMemGetAddressRange_v2(&base, &size, p), CUDA_ERROR_NOT_FOUND);
    CHECK_OK(cu.cuMemFree_v2(q));
    CHECK_OK(cu.cuMemFree_v2(0));
}

static void modules(void)
{
    CUmodule m;
    CUfunction f, g;
    CUdeviceptr p;
    unsigned char buf[64];
    CHECK_CU(cu.cuModuleLoadData(&m, "convgpu-emu-module 2\nkernel spin\n"),
             CUDA_ERROR_INVALID_IMAGE);
    CHECK_CU(cu.cuModuleLoadData(&m, "convgpu-emu-module 1\nkernel nosuch\n"),
             CUDA_ERROR_INVALID_IMAGE);
    CHECK_CU(cu.cuModuleLoadData(&m, "convgpu-emu-module 1\n"), CUDA_ERROR_INVALID_IMAGE);
    CHECK_CU(cu.cuModuleLoadData(&m, "\x7f" "ELF"), CUDA_ERROR_INVALID_IMAGE);
    CHECK_CU(cu.cuModuleLoad(&m, "/nonexistent/kernel.img"), CUDA_ERROR_FILE_NOT_FOUND);
    CHECK_OK(cu.cuModuleLoadData(&m, "convgpu-emu-module 1\r\nkernel complement\r\n"));
    CHECK_CU(cu.cuModuleGetFunction(&f, m, "spin"), CUDA_ERROR_NOT_FOUND);
    CHECK_OK(cu.cuModuleUnload(m));
    CHECK_CU(cu.cuModuleUnload(m), CUDA_ERROR_INVALID_HANDLE);

    /* PTX: refused as a real driver refuses it; entries that name built-in kernels run them,
     * others are not found. */
    CHECK_CU(cu.cuModuleLoadData(&m, ".version 9.1\n.target sm_75\n"),
             CUDA_ERROR_UNSUPPORTED_PTX_VERSION);
    CHECK_CU(cu.cuModuleLoadData(&m, "// c\n.version 10.0\n.target sm_75\n"),
             CUDA_ERROR_UNSUPPORTED_PTX_VERSION);
    CHECK_CU(cu.cuModuleLoadData(&m, ".version 8.0\n.target sm_90\n"), CUDA_ERROR_INVALID_PTX);
    CHECK_CU(cu.cuModuleLoadData(&m, ".version 8.0\n.address_size 64\n"), CUDA_ERROR_INVALID_PTX);
    CHECK_CU(cu.cuModuleLoadData(&m, ".version eight\n.target sm_75\n"), CUDA_ERROR_INVALID_PTX);
    CHECK_CU(cu.cuModuleLoadData(&m, ".version 8.0\n.target compute_75\n"), CUDA_ERROR_INVALID_PTX);
    CHECK_CU(cu.cuModuleLoadData(&m, ".target sm_75\n.version 8.0\n"), CUDA_ERROR_INVALID_IMAGE);
    CHECK_OK(cu.cuModuleLoadData(&m, "/* generated */ .version 6.3 .target sm_75, texmode_unified"
                                     " // arch\n.address_size 64\n"
                                     ".visible .entry other(.param .u64 a) { ret; }\n"
                                     "// .entry spin\n.file 1 \".entry spin\"\n"
                                     ".visible .entry complement(\n.param .u64 p)\n{ ret; }\n"));
    CHECK_OK(cu.cuModuleGetFunction(&f, m, "complement"));
    CHECK_CU(cu.cuModuleGetFunction(&g, m, "other"), CUDA_ERROR_NOT_FOUND);
    CHECK_CU(cu.cuModuleGetFunction(&g, m, "spin"), CUDA_ERROR_NOT_FOUND); /* comment, string */
    CHECK_OK(cu.cuModuleUnload(m));
    CHECK_OK(cu.cuModuleLoadData(&m, ".version 9.0\n.target sm_80\n.entry spin() { ret; }\n"));
    CHECK_OK(cu.cuModuleGetFunction(&g, m, "spin"));
    CHECK_OK(cu.cuModuleUnload(m));

    CHECK_OK(cu.cuModuleLoadData(&m, image));
    CHECK_OK(cu.cuModuleGetFunction(&f, m, "complement"));
    CHECK_OK(cu.cuModuleGetFunction(&g, m, "spin"));
    CHECK_OK(cu.cuMemAlloc_v2(&p, sizeof buf));
    for (size_t i = 0; i < sizeof buf; i++)
        buf[i] = (unsigned char)i;
    CHECK_OK(cu.cuMemcpyHtoD_v2(p, buf, sizeof buf));
    size_t n = sizeof buf - 1; /* leave the last byte alone */
    void *params[] = {&p, &n};
    CHECK_OK(cu.cuLaunchKernel(f, 1, 1, 1, 64, 1, 1, 0, NULL, params, NULL));
    CHECK_OK(cu.cuMemcpyDtoH_v2(buf, p, sizeof buf));
    for (size_t i = 0; i < n; i++)
        CHECK(buf[i] == (unsigned char)~i);
    CHECK(buf[63] == 63);
    /* The same through the `extra` buffer protocol: complements back. */
    struct { CUdeviceptr p; size_t n; } args = {p, n};
    size_t argsz = sizeof args;
    void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &args, CU_LAUNCH_PARAM_BUFFER_SIZE, &argsz,
                     CU_LAUNCH_PARAM_END};
    CHECK_OK(cu.cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, extra));
    CHECK_OK(cu.cuMemcpyDtoH_v2(buf, p, sizeof buf));
    for (size_t i = 0; i < sizeof buf; i++)
        CHECK(buf[i] == (unsigned char)i);
    CUlaunchConfig cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.gridDimX = cfg.gridDimY = cfg.gridDimZ = cfg.blockDimX = cfg.blockDimY = cfg.blockDimZ = 1;
    CHECK_OK(cu.cuLaunchKernelEx(&cfg, f, params, NULL));
    CHECK_OK(cu.cuMemcpyDtoH_v2(buf, p, 1));
    CHECK(buf[0] == 0xff);
    /* Bad launches. (A kernel touching memory beyond its buffer is a fault when it runs: the
     * context's sticky error, tested in test_async.c.) */
    CHECK_CU(cu.cuLaunchKernel(f, 0, 1, 1, 1, 1, 1, 0, NULL, params, NULL),
             CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cu.cuLaunchKernel(f, 1, 1, 1, 2048, 1, 1, 0, NULL, params, NULL),
             CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cu.cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cu.cuLaunchKernel((CUfunction)buf, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL),
             CUDA_ERROR_INVALID_HANDLE);
    CHECK_CU(cu.cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, (CUstream)buf, params, NULL),
             CUDA_ERROR_INVALID_HANDLE);
    unsigned long long us = 1000;
    void *sp[] = {&us};
    CHECK_OK(cu.cuLaunchKernel(g, 1, 1, 1, 1, 1, 1, 0, NULL, sp, NULL));
    CHECK_OK(cu.cuMemFree_v2(p));
    CHECK_OK(cu.cuModuleUnload(m));
    CHECK_CU(cu.cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL),
             CUDA_ERROR_INVALID_HANDLE);
}

static void error_names(void)
{
    const char *s = (const char *)1;
    CHECK_CU(cu.cuGetErrorName((CUresult)12345, &s), CUDA_ERROR_INVALID_VALUE);
    CHECK(s == NULL);
    CHECK_CU(cu.cuGetErrorString(CUDA_SUCCESS, NULL), CUDA_ERROR_INVALID_VALUE);
    static const struct { CUresult c; const char *n; } names[] = {
        {CUDA_SUCCESS, "CUDA_SUCCESS"},
        {CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE"},
        {CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED"},
        {CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT"},
        {CUDA_ERROR_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE"},
        {CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND"},
        {CUDA_ERROR_ILLEGAL_ADDRESS, "CUDA_ERROR_ILLEGAL_ADDRESS"},
        {CUDA_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED"},
        {CUDA_ERROR_KEY_ROTATION, "CUDA_ERROR_KEY_ROTATION"},
        {CUDA_ERROR_UNKNOWN, "CUDA_ERROR_UNKNOWN"},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        CHECK_OK(cu.cuGetErrorName(names[i].c, &s));
        if (strcmp(s, names[i].n) != 0)
            t_fail(__FILE__, __LINE__, "name of %d is %s", (int)names[i].c, s);
        CHECK_OK(cu.cuGetErrorString(names[i].c, &s));
        CHECK(s && *s);
    }
}

int main(void)
{
    t_isolate();
    t_load_cuda();
    before_init();
    CHECK_OK(cu.cuInit(0));
    without_context();
    devices();
    t_init_ctx();
    memory();
    modules();
    error_names();
    printf("ok\n");
    return 0;
}

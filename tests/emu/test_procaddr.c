/* test_procaddr.c — cuGetProcAddress semantics, table-driven: the requested CUDA version picks
 * the versioned symbol, the per-thread-stream flag picks _ptds/_ptsz variants, too old a
 * version and unknown names fail with the right status; the old 4-argument form agrees. */
#include "emu_test.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#define DEF CU_GET_PROC_ADDRESS_DEFAULT
#define LEG CU_GET_PROC_ADDRESS_LEGACY_STREAM
#define PTD CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM
#define OK CU_GET_PROC_ADDRESS_SUCCESS
#define OLD CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT
#define UNK CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND

static const struct {
    const char *name;
    int version;
    cuuint64_t flags;
    const char *symbol; /* expected exported symbol, NULL = none */
    CUresult rc;
    CUdriverProcAddressQueryResult status;
} cases[] = {
    {"cuInit", 2000, DEF, "cuInit", CUDA_SUCCESS, OK},
    {"cuInit", 13000, PTD, "cuInit", CUDA_SUCCESS, OK},
    {"cuInit", 1000, DEF, NULL, CUDA_ERROR_NOT_FOUND, OLD},
    {"cuMemAlloc", 3020, DEF, "cuMemAlloc_v2", CUDA_SUCCESS, OK},
    {"cuMemAlloc", 13000, DEF, "cuMemAlloc_v2", CUDA_SUCCESS, OK},
    {"cuMemAlloc", 3010, DEF, NULL, CUDA_ERROR_NOT_FOUND, OLD},
    {"cuMemAlloc_v2", 13000, DEF, NULL, CUDA_ERROR_NOT_FOUND, UNK},
    {"cuCtxCreate", 3020, DEF, "cuCtxCreate_v2", CUDA_SUCCESS, OK},
    {"cuCtxCreate", 11040, DEF, "cuCtxCreate_v3", CUDA_SUCCESS, OK},
    {"cuCtxCreate", 12040, DEF, "cuCtxCreate_v3", CUDA_SUCCESS, OK},
    {"cuCtxCreate", 12050, DEF, "cuCtxCreate_v4", CUDA_SUCCESS, OK},
    {"cuCtxCreate", 13000, DEF, "cuCtxCreate_v4", CUDA_SUCCESS, OK},
    {"cuCtxGetDevice", 12000, DEF, "cuCtxGetDevice", CUDA_SUCCESS, OK},
    {"cuCtxGetDevice", 13000, DEF, "cuCtxGetDevice_v2", CUDA_SUCCESS, OK},
    {"cuCtxSynchronize", 13000, DEF, "cuCtxSynchronize_v2", CUDA_SUCCESS, OK},
    {"cuDeviceGetUuid", 11000, DEF, "cuDeviceGetUuid", CUDA_SUCCESS, OK},
    {"cuDeviceGetUuid", 11040, DEF, "cuDeviceGetUuid_v2", CUDA_SUCCESS, OK},
    {"cuDeviceGetUuid", 9010, DEF, NULL, CUDA_ERROR_NOT_FOUND, OLD},
    {"cuEventElapsedTime", 12000, DEF, "cuEventElapsedTime", CUDA_SUCCESS, OK},
    {"cuEventElapsedTime", 12080, DEF, "cuEventElapsedTime_v2", CUDA_SUCCESS, OK},
    {"cuGetProcAddress", 11030, DEF, "cuGetProcAddress", CUDA_SUCCESS, OK},
    {"cuGetProcAddress", 12000, DEF, "cuGetProcAddress_v2", CUDA_SUCCESS, OK},
    {"cuDevicePrimaryCtxRelease", 11000, DEF, "cuDevicePrimaryCtxRelease_v2", CUDA_SUCCESS, OK},
    {"cuMemAllocAsync", 11010, DEF, NULL, CUDA_ERROR_NOT_FOUND, OLD},
    {"cuMemAllocAsync", 11020, DEF, "cuMemAllocAsync", CUDA_SUCCESS, OK},
    {"cuMemAllocAsync", 11020, PTD, "cuMemAllocAsync_ptsz", CUDA_SUCCESS, OK},
    {"cuMemAllocAsync", 13000, LEG, "cuMemAllocAsync", CUDA_SUCCESS, OK},
    {"cuMemcpyHtoD", 13000, DEF, "cuMemcpyHtoD_v2", CUDA_SUCCESS, OK},
    {"cuMemcpyHtoD", 13000, LEG, "cuMemcpyHtoD_v2", CUDA_SUCCESS, OK},
    {"cuMemcpyHtoD", 13000, PTD, "cuMemcpyHtoD_v2_ptds", CUDA_SUCCESS, OK},
    {"cuMemcpyHtoD", 6050, PTD, "cuMemcpyHtoD_v2", CUDA_SUCCESS, OK},
    {"cuMemcpyHtoDAsync", 12000, PTD, "cuMemcpyHtoDAsync_v2_ptsz", CUDA_SUCCESS, OK},
    {"cuMemcpy", 12000, PTD, "cuMemcpy_ptds", CUDA_SUCCESS, OK},
    {"cuMemsetD8", 12000, PTD, "cuMemsetD8_v2_ptds", CUDA_SUCCESS, OK},
    {"cuLaunchKernel", 12000, PTD, "cuLaunchKernel_ptsz", CUDA_SUCCESS, OK},
    {"cuLaunchKernel", 12000, DEF, "cuLaunchKernel", CUDA_SUCCESS, OK},
    {"cuLaunchKernelEx", 11060, PTD, "cuLaunchKernelEx_ptsz", CUDA_SUCCESS, OK},
    {"cuLaunchCooperativeKernel", 12000, PTD, "cuLaunchCooperativeKernel_ptsz", CUDA_SUCCESS, OK},
    {"cuStreamSynchronize", 12000, PTD, "cuStreamSynchronize_ptsz", CUDA_SUCCESS, OK},
    {"cuStreamQuery", 12000, LEG, "cuStreamQuery", CUDA_SUCCESS, OK},
    {"cuEventRecord", 12000, PTD, "cuEventRecord_ptsz", CUDA_SUCCESS, OK},
    {"cuMemAlloc", 12000, PTD, "cuMemAlloc_v2", CUDA_SUCCESS, OK}, /* no stream: no variant */
    {"cuMemCreate", 10020, DEF, "cuMemCreate", CUDA_SUCCESS, OK},
    {"cuNoSuchFunction", 13000, DEF, NULL, CUDA_ERROR_NOT_FOUND, UNK},
    {"", 13000, DEF, NULL, CUDA_ERROR_NOT_FOUND, UNK},
    {"cuInit", 13000, 4, NULL, CUDA_ERROR_INVALID_VALUE, UNK},
};

int main(void)
{
    t_isolate();
    t_load_cuda();
    /* Lookups need no cuInit: the runtime fetches cuInit itself this way. */
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        void *fn = (void *)&cases; /* must be overwritten */
        CUdriverProcAddressQueryResult st = (CUdriverProcAddressQueryResult)77;
        CUresult rc = cu.cuGetProcAddress_v2(cases[i].name, &fn, cases[i].version,
                                             cases[i].flags, &st);
        void *want = cases[i].symbol ? dlsym(t_cuda_lib, cases[i].symbol) : NULL;
        if (cases[i].symbol && !want)
            t_fail(__FILE__, __LINE__, "%s is not exported", cases[i].symbol);
        if (rc != cases[i].rc || fn != want ||
            (cases[i].rc != CUDA_ERROR_INVALID_VALUE && st != cases[i].status))
            t_fail(__FILE__, __LINE__,
                   "case %zu: cuGetProcAddress_v2(\"%s\", %d, flags %llu) = %s status %d fn %p; "
                   "expected %s status %d fn %p (%s)",
                   i, cases[i].name, cases[i].version, (unsigned long long)cases[i].flags,
                   t_cu_name(rc), (int)st, fn, t_cu_name(cases[i].rc), (int)cases[i].status,
                   want, cases[i].symbol ? cases[i].symbol : "NULL");
        /* The 4-argument form agrees, and the status pointer may be NULL. */
        void *fn2 = (void *)&cases;
        CHECK_CU(cu.cuGetProcAddress(cases[i].name, &fn2, cases[i].version, cases[i].flags),
                 cases[i].rc);
        CHECK(fn2 == want);
        CHECK_CU(cu.cuGetProcAddress_v2(cases[i].name, &fn2, cases[i].version, cases[i].flags,
                                        NULL),
                 cases[i].rc);
    }
    CHECK_CU(cu.cuGetProcAddress_v2(NULL, NULL, 13000, 0, NULL), CUDA_ERROR_INVALID_VALUE);
    /* A function obtained this way works like the exported one. */
    void *fn;
    PFN_cuDriverGetVersion getver;
    int v = 0;
    CHECK_OK(cu.cuGetProcAddress_v2("cuDriverGetVersion", &fn, 13000, 0, NULL));
    memcpy(&getver, &fn, sizeof fn);
    CHECK_OK(getver(&v));
    CHECK_EQ(v, 13000);
    printf("ok: %zu cases\n", sizeof cases / sizeof cases[0]);
    return 0;
}

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
    /* streams, capture, graphs (the launch paths a compute limiter must see too) */
    {"cuGraphLaunch", 10000, DEF, "cuGraphLaunch", CUDA_SUCCESS, OK},
    {"cuGraphLaunch", 12000, PTD, "cuGraphLaunch_ptsz", CUDA_SUCCESS, OK},
    {"cuGraphLaunch", 9020, DEF, NULL, CUDA_ERROR_NOT_FOUND, OLD},
    {"cuLaunchCooperativeKernelMultiDevice", 9000, DEF, "cuLaunchCooperativeKernelMultiDevice",
     CUDA_SUCCESS, OK},
    {"cuGraphInstantiate", 10000, DEF, "cuGraphInstantiate", CUDA_SUCCESS, OK},
    {"cuGraphInstantiate", 11000, DEF, "cuGraphInstantiate_v2", CUDA_SUCCESS, OK},
    {"cuGraphInstantiate", 12000, DEF, "cuGraphInstantiateWithFlags", CUDA_SUCCESS, OK},
    {"cuGraphInstantiateWithFlags", 11040, DEF, "cuGraphInstantiateWithFlags", CUDA_SUCCESS, OK},
    {"cuGraphAddKernelNode", 11000, DEF, "cuGraphAddKernelNode", CUDA_SUCCESS, OK},
    {"cuGraphAddKernelNode", 12000, DEF, "cuGraphAddKernelNode_v2", CUDA_SUCCESS, OK},
    {"cuGraphKernelNodeGetParams", 12000, DEF, "cuGraphKernelNodeGetParams_v2", CUDA_SUCCESS, OK},
    {"cuGraphCreate", 10000, DEF, "cuGraphCreate", CUDA_SUCCESS, OK},
    {"cuGraphDestroy", 10000, DEF, "cuGraphDestroy", CUDA_SUCCESS, OK},
    {"cuGraphGetNodes", 10000, DEF, "cuGraphGetNodes", CUDA_SUCCESS, OK},
    {"cuGraphNodeGetType", 10000, DEF, "cuGraphNodeGetType", CUDA_SUCCESS, OK},
    {"cuGraphAddEmptyNode", 10000, DEF, "cuGraphAddEmptyNode", CUDA_SUCCESS, OK},
    {"cuGraphExecDestroy", 10000, DEF, "cuGraphExecDestroy", CUDA_SUCCESS, OK},
    {"cuStreamBeginCapture", 10000, DEF, "cuStreamBeginCapture", CUDA_SUCCESS, OK},
    {"cuStreamBeginCapture", 10010, DEF, "cuStreamBeginCapture_v2", CUDA_SUCCESS, OK},
    {"cuStreamBeginCapture", 12000, PTD, "cuStreamBeginCapture_v2_ptsz", CUDA_SUCCESS, OK},
    {"cuStreamEndCapture", 12000, PTD, "cuStreamEndCapture_ptsz", CUDA_SUCCESS, OK},
    {"cuStreamIsCapturing", 10000, DEF, "cuStreamIsCapturing", CUDA_SUCCESS, OK},
    {"cuStreamWaitEvent", 12000, PTD, "cuStreamWaitEvent_ptsz", CUDA_SUCCESS, OK},
    {"cuStreamWaitEvent", 3020, DEF, "cuStreamWaitEvent", CUDA_SUCCESS, OK},
    {"cuEventRecordWithFlags", 11010, PTD, "cuEventRecordWithFlags_ptsz", CUDA_SUCCESS, OK},
    {"cuLaunchHostFunc", 10000, DEF, "cuLaunchHostFunc", CUDA_SUCCESS, OK},
    {"cuLaunchHostFunc", 12000, PTD, "cuLaunchHostFunc_ptsz", CUDA_SUCCESS, OK},
    {"cuStreamAddCallback", 7000, PTD, "cuStreamAddCallback_ptsz", CUDA_SUCCESS, OK},
    {"cuStreamAddCallback", 5000, PTD, "cuStreamAddCallback", CUDA_SUCCESS, OK},
    /* the entry points tools look up */
    {"cuDeviceGetMemPool", 11020, DEF, "cuDeviceGetMemPool", CUDA_SUCCESS, OK},
    {"cuDeviceSetMemPool", 11020, DEF, "cuDeviceSetMemPool", CUDA_SUCCESS, OK},
    {"cuCtxGetLimit", 3010, DEF, "cuCtxGetLimit", CUDA_SUCCESS, OK},
    {"cuCtxSetLimit", 13000, DEF, "cuCtxSetLimit", CUDA_SUCCESS, OK},
    {"cuCtxGetFlags", 7000, DEF, "cuCtxGetFlags", CUDA_SUCCESS, OK},
    {"cuCtxGetStreamPriorityRange", 5050, DEF, "cuCtxGetStreamPriorityRange", CUDA_SUCCESS, OK},
    {"cuDeviceCanAccessPeer", 4000, DEF, "cuDeviceCanAccessPeer", CUDA_SUCCESS, OK},
    {"cuDeviceGetPCIBusId", 4010, DEF, "cuDeviceGetPCIBusId", CUDA_SUCCESS, OK},
    {"cuPointerGetAttribute", 4000, DEF, "cuPointerGetAttribute", CUDA_SUCCESS, OK},
    {"cuPointerGetAttributes", 7000, DEF, "cuPointerGetAttributes", CUDA_SUCCESS, OK},
    {"cuMemHostAlloc", 2020, DEF, "cuMemHostAlloc", CUDA_SUCCESS, OK},
    {"cuMemHostRegister", 6050, DEF, "cuMemHostRegister_v2", CUDA_SUCCESS, OK},
    {"cuMemHostRegister", 4000, DEF, NULL, CUDA_ERROR_NOT_FOUND, OLD},
    {"cuMemHostUnregister", 4000, DEF, "cuMemHostUnregister", CUDA_SUCCESS, OK},
    {"cuMemHostGetDevicePointer", 3020, DEF, "cuMemHostGetDevicePointer_v2", CUDA_SUCCESS, OK},
    {"cuMemHostGetFlags", 2030, DEF, "cuMemHostGetFlags", CUDA_SUCCESS, OK},
    {"cuMemcpy2D", 3020, DEF, "cuMemcpy2D_v2", CUDA_SUCCESS, OK},
    {"cuMemcpy2D", 12000, PTD, "cuMemcpy2D_v2_ptds", CUDA_SUCCESS, OK},
    {"cuMemcpy2DUnaligned", 12000, PTD, "cuMemcpy2DUnaligned_v2_ptds", CUDA_SUCCESS, OK},
    {"cuMemcpy2DAsync", 12000, PTD, "cuMemcpy2DAsync_v2_ptsz", CUDA_SUCCESS, OK},
    {"cuMemcpy3D", 3020, DEF, "cuMemcpy3D_v2", CUDA_SUCCESS, OK},
    {"cuMemcpy3DAsync", 12000, PTD, "cuMemcpy3DAsync_v2_ptsz", CUDA_SUCCESS, OK},
    {"cuMemsetD16", 3020, DEF, "cuMemsetD16_v2", CUDA_SUCCESS, OK},
    {"cuMemsetD16Async", 12000, PTD, "cuMemsetD16Async_ptsz", CUDA_SUCCESS, OK},
    {"cuMemsetD2D8", 12000, PTD, "cuMemsetD2D8_v2_ptds", CUDA_SUCCESS, OK},
    {"cuMemsetD2D32Async", 12000, DEF, "cuMemsetD2D32Async", CUDA_SUCCESS, OK},
    {"cuMemPrefetchAsync", 8000, DEF, "cuMemPrefetchAsync", CUDA_SUCCESS, OK},
    {"cuMemPrefetchAsync", 12000, PTD, "cuMemPrefetchAsync_ptsz", CUDA_SUCCESS, OK},
    {"cuMemPrefetchAsync", 12020, DEF, "cuMemPrefetchAsync_v2", CUDA_SUCCESS, OK},
    {"cuMemPrefetchAsync", 13000, PTD, "cuMemPrefetchAsync_v2_ptsz", CUDA_SUCCESS, OK},
    {"cuMemAdvise", 8000, DEF, "cuMemAdvise", CUDA_SUCCESS, OK},
    {"cuMemAdvise", 12020, DEF, "cuMemAdvise_v2", CUDA_SUCCESS, OK},
    {"cuFuncGetAttribute", 2020, DEF, "cuFuncGetAttribute", CUDA_SUCCESS, OK},
    {"cuModuleLoadDataEx", 2010, DEF, "cuModuleLoadDataEx", CUDA_SUCCESS, OK},
    {"cuModuleGetGlobal", 3020, DEF, "cuModuleGetGlobal_v2", CUDA_SUCCESS, OK},
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

/* procaddr.c — cuGetProcAddress: the one table of every entry point the emulator exports.
 *
 * A row is (base name, CUDA version that introduced this form, function, per-thread-stream
 * variant or NULL). A base name may have several rows; a request for cudaVersion V gets the
 * newest row introduced at or before V (cuCtxCreate: 3020 -> _v2, 11040 -> _v3, 12050 -> _v4),
 * and with CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM the row's _ptds/_ptsz variant when
 * it has one and V >= 7000 (when those variants appeared). A name known only in newer forms
 * answers CUDA_ERROR_NOT_FOUND with CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT. ABIs older
 * than the rows below (e.g. the 32-bit cuMemAlloc of CUDA < 3.2) are not emulated.
 * Adding an entry point is one row.
 *
 * CONVGPU_EMU_TRACE_LOOKUPS=FILE appends one line per lookup to FILE — "NAME VERSION FLAGS
 * RESULT SYMBOL" (SYMBOL: the exported function answered, or -) — which is how the tests learn
 * what a real CUDA runtime asks a driver for before it gives up on the emulator. */
/* dladdr needs _GNU_SOURCE, which the build defines everywhere */
#include "driver.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef void (*emu_fn)(void);
#define F(f) ((emu_fn)(f))

#define EMU_PTDS_VERSION 7000

static const struct emu_entry {
    const char *name;
    int version;
    emu_fn fn;
    emu_fn ptds;
} table[] = {
    {"cuInit", 2000, F(cuInit), NULL},
    {"cuDriverGetVersion", 2020, F(cuDriverGetVersion), NULL},
    {"cuGetErrorName", 6000, F(cuGetErrorName), NULL},
    {"cuGetErrorString", 6000, F(cuGetErrorString), NULL},
    {"cuGetProcAddress", 11030, F(cuGetProcAddress), NULL},
    {"cuGetProcAddress", 12000, F(cuGetProcAddress_v2), NULL},
    {"cuGetExportTable", 3000, F(cuGetExportTable), NULL},

    {"cuCheckpointProcessGetRestoreThreadId", 12080, F(cuCheckpointProcessGetRestoreThreadId),
     NULL},
    {"cuCheckpointProcessGetState", 12080, F(cuCheckpointProcessGetState), NULL},
    {"cuCheckpointProcessLock", 12080, F(cuCheckpointProcessLock), NULL},
    {"cuCheckpointProcessCheckpoint", 12080, F(cuCheckpointProcessCheckpoint), NULL},
    {"cuCheckpointProcessRestore", 12080, F(cuCheckpointProcessRestore), NULL},
    {"cuCheckpointProcessUnlock", 12080, F(cuCheckpointProcessUnlock), NULL},

    {"cuDeviceGet", 2000, F(cuDeviceGet), NULL},
    {"cuDeviceGetCount", 2000, F(cuDeviceGetCount), NULL},
    {"cuDeviceGetName", 2000, F(cuDeviceGetName), NULL},
    {"cuDeviceGetUuid", 9020, F(cuDeviceGetUuid), NULL},
    {"cuDeviceGetUuid", 11040, F(cuDeviceGetUuid_v2), NULL},
    {"cuDeviceGetAttribute", 2000, F(cuDeviceGetAttribute), NULL},
    {"cuDeviceTotalMem", 3020, F(cuDeviceTotalMem_v2), NULL},
    {"cuDeviceGetDefaultMemPool", 11020, F(cuDeviceGetDefaultMemPool), NULL},

    {"cuDevicePrimaryCtxRetain", 7000, F(cuDevicePrimaryCtxRetain), NULL},
    {"cuDevicePrimaryCtxRelease", 11000, F(cuDevicePrimaryCtxRelease_v2), NULL},
    {"cuDevicePrimaryCtxReset", 11000, F(cuDevicePrimaryCtxReset_v2), NULL},
    {"cuDevicePrimaryCtxGetState", 7000, F(cuDevicePrimaryCtxGetState), NULL},
    {"cuDevicePrimaryCtxSetFlags", 11000, F(cuDevicePrimaryCtxSetFlags_v2), NULL},

    {"cuCtxCreate", 3020, F(cuCtxCreate_v2), NULL},
    {"cuCtxCreate", 11040, F(cuCtxCreate_v3), NULL},
    {"cuCtxCreate", 12050, F(cuCtxCreate_v4), NULL},
    {"cuCtxDestroy", 4000, F(cuCtxDestroy_v2), NULL},
    {"cuCtxSetCurrent", 4000, F(cuCtxSetCurrent), NULL},
    {"cuCtxGetCurrent", 4000, F(cuCtxGetCurrent), NULL},
    {"cuCtxPushCurrent", 4000, F(cuCtxPushCurrent_v2), NULL},
    {"cuCtxPopCurrent", 4000, F(cuCtxPopCurrent_v2), NULL},
    {"cuCtxGetDevice", 2000, F(cuCtxGetDevice), NULL},
    {"cuCtxGetDevice", 13000, F(cuCtxGetDevice_v2), NULL},
    {"cuCtxSynchronize", 2000, F(cuCtxSynchronize), NULL},
    {"cuCtxSynchronize", 13000, F(cuCtxSynchronize_v2), NULL},
    {"cuCtxGetApiVersion", 3020, F(cuCtxGetApiVersion), NULL},

    {"cuMemGetInfo", 3020, F(cuMemGetInfo_v2), NULL},
    {"cuMemAlloc", 3020, F(cuMemAlloc_v2), NULL},
    {"cuMemAllocPitch", 3020, F(cuMemAllocPitch_v2), NULL},
    {"cuMemAllocManaged", 6000, F(cuMemAllocManaged), NULL},
    {"cuMemFree", 3020, F(cuMemFree_v2), NULL},
    {"cuMemGetAddressRange", 3020, F(cuMemGetAddressRange_v2), NULL},
    {"cuMemAllocHost", 3020, F(cuMemAllocHost_v2), NULL},
    {"cuMemFreeHost", 2000, F(cuMemFreeHost), NULL},

    {"cuMemcpy", 4000, F(cuMemcpy), F(cuMemcpy_ptds)},
    {"cuMemcpyAsync", 4000, F(cuMemcpyAsync), F(cuMemcpyAsync_ptsz)},
    {"cuMemcpyHtoD", 3020, F(cuMemcpyHtoD_v2), F(cuMemcpyHtoD_v2_ptds)},
    {"cuMemcpyDtoH", 3020, F(cuMemcpyDtoH_v2), F(cuMemcpyDtoH_v2_ptds)},
    {"cuMemcpyDtoD", 3020, F(cuMemcpyDtoD_v2), F(cuMemcpyDtoD_v2_ptds)},
    {"cuMemcpyHtoDAsync", 3020, F(cuMemcpyHtoDAsync_v2), F(cuMemcpyHtoDAsync_v2_ptsz)},
    {"cuMemcpyDtoHAsync", 3020, F(cuMemcpyDtoHAsync_v2), F(cuMemcpyDtoHAsync_v2_ptsz)},
    {"cuMemcpyDtoDAsync", 3020, F(cuMemcpyDtoDAsync_v2), F(cuMemcpyDtoDAsync_v2_ptsz)},
    {"cuMemsetD8", 3020, F(cuMemsetD8_v2), F(cuMemsetD8_v2_ptds)},
    {"cuMemsetD32", 3020, F(cuMemsetD32_v2), F(cuMemsetD32_v2_ptds)},
    {"cuMemsetD8Async", 3020, F(cuMemsetD8Async), F(cuMemsetD8Async_ptsz)},
    {"cuMemsetD32Async", 3020, F(cuMemsetD32Async), F(cuMemsetD32Async_ptsz)},

    {"cuMemAllocAsync", 11020, F(cuMemAllocAsync), F(cuMemAllocAsync_ptsz)},
    {"cuMemFreeAsync", 11020, F(cuMemFreeAsync), F(cuMemFreeAsync_ptsz)},
    {"cuMemAllocFromPoolAsync", 11020, F(cuMemAllocFromPoolAsync),
     F(cuMemAllocFromPoolAsync_ptsz)},
    {"cuMemPoolCreate", 11020, F(cuMemPoolCreate), NULL},
    {"cuMemPoolDestroy", 11020, F(cuMemPoolDestroy), NULL},
    {"cuMemPoolTrimTo", 11020, F(cuMemPoolTrimTo), NULL},
    {"cuMemPoolSetAttribute", 11020, F(cuMemPoolSetAttribute), NULL},
    {"cuMemPoolGetAttribute", 11020, F(cuMemPoolGetAttribute), NULL},

    {"cuMemGetAllocationGranularity", 10020, F(cuMemGetAllocationGranularity), NULL},
    {"cuMemCreate", 10020, F(cuMemCreate), NULL},
    {"cuMemRelease", 10020, F(cuMemRelease), NULL},
    {"cuMemAddressReserve", 10020, F(cuMemAddressReserve), NULL},
    {"cuMemAddressFree", 10020, F(cuMemAddressFree), NULL},
    {"cuMemMap", 10020, F(cuMemMap), NULL},
    {"cuMemUnmap", 10020, F(cuMemUnmap), NULL},
    {"cuMemSetAccess", 10020, F(cuMemSetAccess), NULL},

    {"cuArrayCreate", 3020, F(cuArrayCreate_v2), NULL},
    {"cuArray3DCreate", 3020, F(cuArray3DCreate_v2), NULL},
    {"cuArrayDestroy", 2000, F(cuArrayDestroy), NULL},
    {"cuMipmappedArrayCreate", 5000, F(cuMipmappedArrayCreate), NULL},
    {"cuMipmappedArrayDestroy", 5000, F(cuMipmappedArrayDestroy), NULL},

    {"cuStreamCreate", 2000, F(cuStreamCreate), NULL},
    {"cuStreamCreateWithPriority", 5050, F(cuStreamCreateWithPriority), NULL},
    {"cuStreamDestroy", 4000, F(cuStreamDestroy_v2), NULL},
    {"cuStreamSynchronize", 2000, F(cuStreamSynchronize), F(cuStreamSynchronize_ptsz)},
    {"cuStreamQuery", 2000, F(cuStreamQuery), F(cuStreamQuery_ptsz)},
    {"cuEventCreate", 2000, F(cuEventCreate), NULL},
    {"cuEventRecord", 2000, F(cuEventRecord), F(cuEventRecord_ptsz)},
    {"cuEventSynchronize", 2000, F(cuEventSynchronize), NULL},
    {"cuEventQuery", 2000, F(cuEventQuery), NULL},
    {"cuEventElapsedTime", 2000, F(cuEventElapsedTime), NULL},
    {"cuEventElapsedTime", 12080, F(cuEventElapsedTime_v2), NULL},
    {"cuEventDestroy", 4000, F(cuEventDestroy_v2), NULL},

    {"cuModuleLoad", 2000, F(cuModuleLoad), NULL},
    {"cuModuleLoadData", 2000, F(cuModuleLoadData), NULL},
    {"cuModuleGetFunction", 2000, F(cuModuleGetFunction), NULL},
    {"cuModuleUnload", 2000, F(cuModuleUnload), NULL},
    {"cuLaunchKernel", 4000, F(cuLaunchKernel), F(cuLaunchKernel_ptsz)},
    {"cuLaunchKernelEx", 11060, F(cuLaunchKernelEx), F(cuLaunchKernelEx_ptsz)},
    {"cuLaunchCooperativeKernel", 9000, F(cuLaunchCooperativeKernel),
     F(cuLaunchCooperativeKernel_ptsz)},
    {"cuLaunchCooperativeKernelMultiDevice", 9000, F(cuLaunchCooperativeKernelMultiDevice),
     NULL},
    {"cuFuncGetAttribute", 2020, F(cuFuncGetAttribute), NULL},
    {"cuModuleLoadDataEx", 2010, F(cuModuleLoadDataEx), NULL},
    {"cuModuleGetGlobal", 3020, F(cuModuleGetGlobal_v2), NULL},

    {"cuStreamWaitEvent", 3020, F(cuStreamWaitEvent), F(cuStreamWaitEvent_ptsz)},
    {"cuEventRecordWithFlags", 11010, F(cuEventRecordWithFlags), F(cuEventRecordWithFlags_ptsz)},
    {"cuLaunchHostFunc", 10000, F(cuLaunchHostFunc), F(cuLaunchHostFunc_ptsz)},
    {"cuStreamAddCallback", 5000, F(cuStreamAddCallback), F(cuStreamAddCallback_ptsz)},
    {"cuStreamBeginCapture", 10000, F(cuStreamBeginCapture), F(cuStreamBeginCapture_ptsz)},
    {"cuStreamBeginCapture", 10010, F(cuStreamBeginCapture_v2), F(cuStreamBeginCapture_v2_ptsz)},
    {"cuStreamEndCapture", 10000, F(cuStreamEndCapture), F(cuStreamEndCapture_ptsz)},
    {"cuStreamIsCapturing", 10000, F(cuStreamIsCapturing), F(cuStreamIsCapturing_ptsz)},
    {"cuGraphCreate", 10000, F(cuGraphCreate), NULL},
    {"cuGraphDestroy", 10000, F(cuGraphDestroy), NULL},
    {"cuGraphAddKernelNode", 10000, F(cuGraphAddKernelNode), NULL},
    {"cuGraphAddKernelNode", 12000, F(cuGraphAddKernelNode_v2), NULL},
    {"cuGraphAddEmptyNode", 10000, F(cuGraphAddEmptyNode), NULL},
    {"cuGraphKernelNodeGetParams", 12000, F(cuGraphKernelNodeGetParams_v2), NULL},
    {"cuGraphNodeGetType", 10000, F(cuGraphNodeGetType), NULL},
    {"cuGraphGetNodes", 10000, F(cuGraphGetNodes), NULL},
    {"cuGraphInstantiate", 10000, F(cuGraphInstantiate), NULL},
    {"cuGraphInstantiate", 11000, F(cuGraphInstantiate_v2), NULL},
    {"cuGraphInstantiate", 12000, F(cuGraphInstantiateWithFlags), NULL},
    {"cuGraphInstantiateWithFlags", 11040, F(cuGraphInstantiateWithFlags), NULL},
    {"cuGraphExecDestroy", 10000, F(cuGraphExecDestroy), NULL},
    {"cuGraphLaunch", 10000, F(cuGraphLaunch), F(cuGraphLaunch_ptsz)},

    {"cuDeviceGetMemPool", 11020, F(cuDeviceGetMemPool), NULL},
    {"cuDeviceSetMemPool", 11020, F(cuDeviceSetMemPool), NULL},
    {"cuDeviceCanAccessPeer", 4000, F(cuDeviceCanAccessPeer), NULL},
    {"cuDeviceGetPCIBusId", 4010, F(cuDeviceGetPCIBusId), NULL},
    {"cuCtxGetLimit", 3010, F(cuCtxGetLimit), NULL},
    {"cuCtxSetLimit", 3010, F(cuCtxSetLimit), NULL},
    {"cuCtxGetFlags", 7000, F(cuCtxGetFlags), NULL},
    {"cuCtxGetStreamPriorityRange", 5050, F(cuCtxGetStreamPriorityRange), NULL},
    {"cuPointerGetAttribute", 4000, F(cuPointerGetAttribute), NULL},
    {"cuPointerGetAttributes", 7000, F(cuPointerGetAttributes), NULL},
    {"cuMemHostAlloc", 2020, F(cuMemHostAlloc), NULL},
    {"cuMemHostRegister", 6050, F(cuMemHostRegister_v2), NULL},
    {"cuMemHostUnregister", 4000, F(cuMemHostUnregister), NULL},
    {"cuMemHostGetDevicePointer", 3020, F(cuMemHostGetDevicePointer_v2), NULL},
    {"cuMemHostGetFlags", 2030, F(cuMemHostGetFlags), NULL},
    {"cuMemcpy2D", 3020, F(cuMemcpy2D_v2), F(cuMemcpy2D_v2_ptds)},
    {"cuMemcpy2DUnaligned", 3020, F(cuMemcpy2DUnaligned_v2), F(cuMemcpy2DUnaligned_v2_ptds)},
    {"cuMemcpy2DAsync", 3020, F(cuMemcpy2DAsync_v2), F(cuMemcpy2DAsync_v2_ptsz)},
    {"cuMemcpy3D", 3020, F(cuMemcpy3D_v2), F(cuMemcpy3D_v2_ptds)},
    {"cuMemcpy3DAsync", 3020, F(cuMemcpy3DAsync_v2), F(cuMemcpy3DAsync_v2_ptsz)},
    {"cuMemcpyPeer", 4000, F(cuMemcpyPeer), F(cuMemcpyPeer_ptds)},
    {"cuMemcpyPeerAsync", 4000, F(cuMemcpyPeerAsync), F(cuMemcpyPeerAsync_ptsz)},
    {"cuMemcpy3DPeer", 4000, F(cuMemcpy3DPeer), F(cuMemcpy3DPeer_ptds)},
    {"cuMemcpy3DPeerAsync", 4000, F(cuMemcpy3DPeerAsync), F(cuMemcpy3DPeerAsync_ptsz)},
    {"cuMemcpyBatchAsync", 12080, F(cuMemcpyBatchAsync), F(cuMemcpyBatchAsync_ptsz)},
    {"cuMemcpyBatchAsync", 13000, F(cuMemcpyBatchAsync_v2), F(cuMemcpyBatchAsync_v2_ptsz)},
    {"cuMemcpy3DBatchAsync", 12080, F(cuMemcpy3DBatchAsync), F(cuMemcpy3DBatchAsync_ptsz)},
    {"cuMemcpy3DBatchAsync", 13000, F(cuMemcpy3DBatchAsync_v2),
     F(cuMemcpy3DBatchAsync_v2_ptsz)},
    {"cuMemcpyAtoD", 3020, F(cuMemcpyAtoD_v2), F(cuMemcpyAtoD_v2_ptds)},
    {"cuMemcpyDtoA", 3020, F(cuMemcpyDtoA_v2), F(cuMemcpyDtoA_v2_ptds)},
    {"cuMemcpyAtoH", 3020, F(cuMemcpyAtoH_v2), F(cuMemcpyAtoH_v2_ptds)},
    {"cuMemcpyHtoA", 3020, F(cuMemcpyHtoA_v2), F(cuMemcpyHtoA_v2_ptds)},
    {"cuMemcpyAtoA", 3020, F(cuMemcpyAtoA_v2), F(cuMemcpyAtoA_v2_ptds)},
    {"cuMemcpyAtoHAsync", 3020, F(cuMemcpyAtoHAsync_v2), F(cuMemcpyAtoHAsync_v2_ptsz)},
    {"cuMemcpyHtoAAsync", 3020, F(cuMemcpyHtoAAsync_v2), F(cuMemcpyHtoAAsync_v2_ptsz)},
    {"cuMemsetD16", 3020, F(cuMemsetD16_v2), F(cuMemsetD16_v2_ptds)},
    {"cuMemsetD16Async", 3020, F(cuMemsetD16Async), F(cuMemsetD16Async_ptsz)},
    {"cuMemsetD2D8", 3020, F(cuMemsetD2D8_v2), F(cuMemsetD2D8_v2_ptds)},
    {"cuMemsetD2D16", 3020, F(cuMemsetD2D16_v2), F(cuMemsetD2D16_v2_ptds)},
    {"cuMemsetD2D32", 3020, F(cuMemsetD2D32_v2), F(cuMemsetD2D32_v2_ptds)},
    {"cuMemsetD2D8Async", 3020, F(cuMemsetD2D8Async), F(cuMemsetD2D8Async_ptsz)},
    {"cuMemsetD2D16Async", 3020, F(cuMemsetD2D16Async), F(cuMemsetD2D16Async_ptsz)},
    {"cuMemsetD2D32Async", 3020, F(cuMemsetD2D32Async), F(cuMemsetD2D32Async_ptsz)},
    {"cuMemPrefetchAsync", 8000, F(cuMemPrefetchAsync), F(cuMemPrefetchAsync_ptsz)},
    {"cuMemPrefetchAsync", 12020, F(cuMemPrefetchAsync_v2), F(cuMemPrefetchAsync_v2_ptsz)},
    {"cuMemAdvise", 8000, F(cuMemAdvise), NULL},
    {"cuMemAdvise", 12020, F(cuMemAdvise_v2), NULL},
};

static int trace_fd = -1;
static pthread_once_t trace_once = PTHREAD_ONCE_INIT;

static void trace_open(void)
{
    const char *path = getenv("CONVGPU_EMU_TRACE_LOOKUPS");
    if (path && *path)
        trace_fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
}

/* One write per line: lookups from several threads or processes never interleave. */
static void trace(const char *symbol, int version, cuuint64_t flags, CUresult r, void *fn)
{
    pthread_once(&trace_once, trace_open);
    if (trace_fd < 0)
        return;
    Dl_info info;
    const char *answer = fn && dladdr(fn, &info) && info.dli_sname ? info.dli_sname : "-";
    char line[512];
    int n = snprintf(line, sizeof line, "%.200s %d %llu %d %.200s\n", symbol ? symbol : "(null)",
                     version, (unsigned long long)flags, (int)r, answer);
    if (n > 0 && (size_t)n < sizeof line && write(trace_fd, line, (size_t)n) < 0)
        return; /* a trace that cannot be written is not the program's problem */
}

static CUresult find(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                     CUdriverProcAddressQueryResult *status)
{
    CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    if (pfn)
        *pfn = NULL;
    if (!symbol || !pfn ||
        (flags & ~(cuuint64_t)(CU_GET_PROC_ADDRESS_LEGACY_STREAM |
                               CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM)))
        return CUDA_ERROR_INVALID_VALUE;
    const struct emu_entry *best = NULL;
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        if (strcmp(table[i].name, symbol) != 0)
            continue;
        if (table[i].version > cudaVersion) {
            if (!best)
                st = CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
            continue;
        }
        if (!best || table[i].version > best->version)
            best = &table[i];
    }
    if (status)
        *status = best ? CU_GET_PROC_ADDRESS_SUCCESS : st;
    if (!best)
        return CUDA_ERROR_NOT_FOUND;
    /* DEFAULT is the legacy stream here: a per-thread build asks explicitly (cuda.h's
     * cuGetProcAddress_v2_ptsz wrapper adds the flag). */
    int ptds = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) && best->ptds &&
               cudaVersion >= EMU_PTDS_VERSION;
    *pfn = (void *)(ptds ? best->ptds : best->fn);
    return CUDA_SUCCESS;
}

static CUresult lookup(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                       CUdriverProcAddressQueryResult *status)
{
    CUresult r = find(symbol, pfn, cudaVersion, flags, status);
    trace(symbol, cudaVersion, flags, r, pfn ? *pfn : NULL);
    return r;
}

CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                             CUdriverProcAddressQueryResult *symbolStatus)
{
    return lookup(symbol, pfn, cudaVersion, flags, symbolStatus);
}

CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags)
{
    return lookup(symbol, pfn, cudaVersion, flags, NULL);
}

/* Private driver interfaces (used by the CUDA runtime) are not emulated. */
CUresult cuGetExportTable(const void **ppExportTable, const CUuuid *pExportTableId)
{
    (void)pExportTableId;
    if (ppExportTable)
        *ppExportTable = NULL;
    return CUDA_ERROR_NOT_SUPPORTED;
}

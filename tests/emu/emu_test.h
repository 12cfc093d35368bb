/* emu_test.h — shared helpers of the emulator tests: loading the emulated libraries through
 * the dynamic loader (as real programs do), checks that end the test, state isolation and
 * running child processes. */
#ifndef CONVGPU_EMU_TEST_H
#define CONVGPU_EMU_TEST_H

#include "cuda_types.h"
#include "nvml_types.h"

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

#define T_MiB (1ull << 20)
#define T_GiB (1ull << 30)

#define T_CUDA_API(X)                                                                          \
    X(cuInit) X(cuDriverGetVersion) X(cuGetErrorName) X(cuGetErrorString) X(cuGetProcAddress) \
    X(cuGetProcAddress_v2) X(cuGetExportTable) X(cuDeviceGetCount) X(cuDeviceGet)             \
    X(cuDeviceGetName) X(cuDeviceGetUuid_v2) X(cuDeviceTotalMem_v2) X(cuDeviceGetAttribute)    \
    X(cuDevicePrimaryCtxRetain) X(cuDevicePrimaryCtxRelease_v2) X(cuCtxCreate_v2)              \
    X(cuCtxCreate_v4) X(cuCtxDestroy_v2) X(cuCtxSetCurrent) X(cuCtxGetCurrent)                 \
    X(cuCtxPushCurrent_v2) X(cuCtxPopCurrent_v2) X(cuCtxGetDevice) X(cuMemGetInfo_v2)          \
    X(cuMemAlloc_v2) X(cuMemAllocPitch_v2) X(cuMemAllocManaged) X(cuMemFree_v2)                \
    X(cuMemGetAddressRange_v2) X(cuMemcpy) X(cuMemcpyHtoD_v2) X(cuMemcpyDtoH_v2)               \
    X(cuMemcpyDtoD_v2) X(cuMemsetD8_v2) X(cuMemsetD32_v2) X(cuMemAllocAsync)                   \
    X(cuMemFreeAsync) X(cuDeviceGetDefaultMemPool) X(cuMemPoolCreate) X(cuMemPoolDestroy)      \
    X(cuMemAllocFromPoolAsync) X(cuMemPoolTrimTo) X(cuMemPoolSetAttribute)                     \
    X(cuMemPoolGetAttribute) X(cuMemGetAllocationGranularity) X(cuMemCreate) X(cuMemRelease)   \
    X(cuMemAddressReserve) X(cuMemAddressFree) X(cuMemMap) X(cuMemUnmap) X(cuMemSetAccess)     \
    X(cuArrayCreate_v2) X(cuArray3DCreate_v2) X(cuArrayDestroy) X(cuMipmappedArrayCreate)     \
    X(cuMipmappedArrayDestroy) X(cuStreamCreate)              \
    X(cuStreamDestroy_v2) X(cuStreamSynchronize) X(cuModuleLoad) X(cuModuleLoadData)           \
    X(cuModuleGetFunction) X(cuModuleUnload) X(cuLaunchKernel) X(cuLaunchKernelEx)              \
    T_CUDA_API_ASYNC(X) T_CUDA_API_TOOLS(X) T_CUDA_API_CKPT(X)

/* Process checkpointing (test_checkpoint.c). */
#define T_CUDA_API_CKPT(X)                                                                     \
    X(cuCheckpointProcessGetRestoreThreadId) X(cuCheckpointProcessGetState)                    \
    X(cuCheckpointProcessLock) X(cuCheckpointProcessCheckpoint) X(cuCheckpointProcessRestore)  \
    X(cuCheckpointProcessUnlock)

/* Streams, events, capture and graphs (test_async.c, test_graph.c). */
#define T_CUDA_API_ASYNC(X)                                                                    \
    X(cuStreamCreateWithPriority) X(cuStreamQuery) X(cuStreamQuery_ptsz)                       \
    X(cuStreamSynchronize_ptsz) X(cuStreamWaitEvent) X(cuEventCreate) X(cuEventRecord)          \
    X(cuEventRecordWithFlags) X(cuEventQuery) X(cuEventSynchronize) X(cuEventElapsedTime_v2)    \
    X(cuEventDestroy_v2) X(cuLaunchHostFunc) X(cuLaunchHostFunc_ptsz) X(cuStreamAddCallback)    \
    X(cuCtxSynchronize) X(cuMemcpyHtoDAsync_v2) X(cuMemcpyDtoHAsync_v2) X(cuMemcpyDtoDAsync_v2) \
    X(cuMemsetD8Async) X(cuMemsetD8_v2_ptds) X(cuMemAllocHost_v2) X(cuMemFreeHost)              \
    X(cuLaunchKernel_ptsz) X(cuLaunchCooperativeKernel) X(cuLaunchCooperativeKernelMultiDevice) \
    X(cuStreamBeginCapture_v2) X(cuStreamBeginCapture) X(cuStreamEndCapture)                   \
    X(cuStreamIsCapturing) X(cuGraphCreate) X(cuGraphDestroy) X(cuGraphAddKernelNode_v2)        \
    X(cuGraphAddKernelNode) X(cuGraphAddEmptyNode) X(cuGraphKernelNodeGetParams_v2)            \
    X(cuGraphNodeGetType) X(cuGraphGetNodes) X(cuGraphInstantiateWithFlags)                    \
    X(cuGraphInstantiate_v2) X(cuGraphExecDestroy) X(cuGraphLaunch) X(cuGraphLaunch_ptsz)

/* The entry points third-party tools look up (test_entry.c). */
#define T_CUDA_API_TOOLS(X)                                                                    \
    X(cuDeviceGetMemPool) X(cuDeviceSetMemPool) X(cuCtxGetLimit) X(cuCtxSetLimit)              \
    X(cuCtxGetFlags) X(cuCtxGetStreamPriorityRange) X(cuDeviceCanAccessPeer)                   \
    X(cuDeviceGetPCIBusId) X(cuPointerGetAttribute) X(cuPointerGetAttributes) X(cuMemHostAlloc) \
    X(cuMemHostRegister_v2) X(cuMemHostUnregister) X(cuMemHostGetDevicePointer_v2)             \
    X(cuMemHostGetFlags) X(cuMemcpy2D_v2) X(cuMemcpy2DAsync_v2) X(cuMemcpy3D_v2)               \
    X(cuMemsetD16_v2) X(cuMemsetD16Async) X(cuMemsetD2D8_v2) X(cuMemsetD2D16_v2)              \
    X(cuMemsetD2D32_v2) X(cuMemsetD2D32Async) X(cuMemPrefetchAsync) X(cuMemPrefetchAsync_v2)   \
    X(cuMemAdvise) X(cuMemAdvise_v2) X(cuFuncGetAttribute) X(cuModuleLoadDataEx)               \
    X(cuModuleGetGlobal_v2) X(cuMemcpyPeer) X(cuMemcpyPeer_ptds) X(cuMemcpyPeerAsync)          \
    X(cuMemcpyPeerAsync_ptsz) X(cuMemcpy3DPeer) X(cuMemcpy3DPeer_ptds) X(cuMemcpy3DPeerAsync)  \
    X(cuMemcpy3DPeerAsync_ptsz) X(cuMemcpyAtoD_v2) X(cuMemcpyDtoA_v2) X(cuMemcpyAtoH_v2)       \
    X(cuMemcpyHtoA_v2) X(cuMemcpyAtoA_v2) X(cuMemcpyAtoHAsync_v2) X(cuMemcpyHtoAAsync_v2)      \
    X(cuMemcpyAtoD_v2_ptds) X(cuMemcpyHtoAAsync_v2_ptsz) X(cuMemcpyBatchAsync)                \
    X(cuMemcpyBatchAsync_ptsz) X(cuMemcpyBatchAsync_v2) X(cuMemcpyBatchAsync_v2_ptsz)          \
    X(cuMemcpy3DBatchAsync) X(cuMemcpy3DBatchAsync_ptsz) X(cuMemcpy3DBatchAsync_v2)            \
    X(cuMemcpy3DBatchAsync_v2_ptsz)

#define T_NVML_API(X)                                                                        \
    X(nvmlInit_v2) X(nvmlShutdown) X(nvmlDeviceGetCount_v2) X(nvmlDeviceGetHandleByIndex_v2) \
    X(nvmlDeviceGetHandleByUUID) X(nvmlDeviceGetIndex) X(nvmlDeviceGetName)                  \
    X(nvmlDeviceGetUUID) X(nvmlDeviceGetMemoryInfo) X(nvmlDeviceGetMemoryInfo_v2)            \
    X(nvmlDeviceGetComputeRunningProcesses_v3) X(nvmlDeviceGetComputeRunningProcesses_v2)    \
    X(nvmlDeviceGetUtilizationRates) X(nvmlSystemGetDriverVersion) X(nvmlErrorString)        \
    X(nvmlDeviceGetProcessUtilization) X(nvmlDeviceGetComputeRunningProcesses)                \
    X(nvmlDeviceGetPciInfo_v3) X(nvmlDeviceGetPciInfo_v2) X(nvmlDeviceGetMinorNumber)          \
    X(nvmlDeviceGetCudaComputeCapability) X(nvmlDeviceGetTemperature)                         \
    X(nvmlDeviceGetPowerUsage) X(nvmlDeviceGetClockInfo)

#define T_FIELD(n) PFN_##n n;
struct t_cuda { T_CUDA_API(T_FIELD) };
struct t_nvml { T_NVML_API(T_FIELD) };
#undef T_FIELD

extern struct t_cuda cu;
extern struct t_nvml nv;
extern void *t_cuda_lib;

/* dlopen("libcuda.so.1") / ("libnvidia-ml.so.1") and dlsym every entry point above. */
void t_load_cuda(void);
void t_load_nvml(void);

/* Removes this test's state file ($CONVGPU_EMU_STATE, which CTest sets per test). */
void t_isolate(void);

__attribute__((noreturn, format(printf, 3, 4)))
void t_fail(const char *file, int line, const char *fmt, ...);
const char *t_cu_name(CUresult rc);

#define CHECK(cond)                                           \
    do {                                                      \
        if (!(cond))                                          \
            t_fail(__FILE__, __LINE__, "check failed: %s", #cond); \
    } while (0)

#define CHECK_EQ(a, b)                                                                    \
    do {                                                                                  \
        unsigned long long a_ = (unsigned long long)(a), b_ = (unsigned long long)(b);    \
        if (a_ != b_)                                                                     \
            t_fail(__FILE__, __LINE__, "%s == %llu, expected %s == %llu", #a, a_, #b, b_); \
    } while (0)

#define CHECK_CU(call, want)                                                               \
    do {                                                                                   \
        CUresult r_ = (call);                                                              \
        if (r_ != (want))                                                                  \
            t_fail(__FILE__, __LINE__, "%s returned %s, expected %s", #call, t_cu_name(r_), \
                   t_cu_name(want));                                                       \
    } while (0)

#define CHECK_OK(call) CHECK_CU(call, CUDA_SUCCESS)

#define CHECK_NVML(call, want)                                                            \
    do {                                                                                  \
        nvmlReturn_t r_ = (call);                                                         \
        if (r_ != (want))                                                                 \
            t_fail(__FILE__, __LINE__, "%s returned %d (%s), expected %d", #call, (int)r_, \
                   nv.nvmlErrorString ? nv.nvmlErrorString(r_) : "?", (int)(want));       \
    } while (0)

/* cuInit, then the primary context of device 0 made current. */
CUcontext t_init_ctx(void);

/* Free memory of the current context's device, by cuMemGetInfo. */
uint64_t t_free(void);

/* NVML: bytes used on device idx, and the used memory of pid there (0 if not listed). */
uint64_t t_nvml_used(unsigned idx);
uint64_t t_nvml_proc_used(unsigned idx, pid_t pid);

/* Runs argv with extra "NAME=value" settings (NAME= with nothing unsets when listed as
 * "-NAME"). With out != NULL, stdout and stderr are captured into a malloc'd string. Returns
 * the pid (t_spawn) or the exit status, -signal if killed (t_run). */
pid_t t_spawn(char *const argv[], const char *const env[], int *out_fd); /* dies with the test */
int t_wait(pid_t pid);
int t_run(char *const argv[], const char *const env[], char **out);
char *t_read_all(int fd);

/* $CONVGPU_BUILD_DIR/bin/convgpu-sample */
const char *t_sample(void);

/* The built-in kernels, from a module loaded into the current context. */
typedef struct {
    CUmodule module;
    CUfunction spin, complement;
} t_kernels;
void t_load_kernels(t_kernels *k);
/* Queues spin(us) / complement(p, n) on stream s (returns at once). */
void t_spin(const t_kernels *k, CUstream s, unsigned long long us);
void t_complement(const t_kernels *k, CUstream s, CUdeviceptr p, size_t n);

/* A gate in a stream: t_gate_fn is a host function (cuLaunchHostFunc) that holds its stream
 * until the test opens the gate, so queued work stays queued as long as a check needs. */
typedef struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int reached, open;
} t_gate;
void t_gate_init(t_gate *g);
void t_gate_fn(void *gate);
void t_gate_open(t_gate *g);
int t_gate_reached(void *gate); /* for t_wait_for */

/* Whether thread tid of this process is asleep (blocked), from /proc. */
int t_thread_asleep(pid_t tid);

/* Polls cond_fn up to timeout_ms; 1 if it became true. Tests wait for conditions, never for
 * durations, and pass T_WAIT_MS: a deadline that only bounds a hang, on a loaded machine too. */
#define T_WAIT_MS 60000u
int t_wait_for(int (*cond_fn)(void *), void *arg, unsigned timeout_ms);
void t_sleep_ms(unsigned ms);

#endif

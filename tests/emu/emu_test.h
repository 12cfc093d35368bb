/* emu_test.h — shared helpers of the emulator tests: loading the emulated libraries through
 * the dynamic loader (as real programs do), checks that end the test, state isolation and
 * running child processes. */
#ifndef CONVGPU_EMU_TEST_H
#define CONVGPU_EMU_TEST_H

#include "cuda_types.h"
#include "nvml_types.h"

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
    X(cuModuleGetFunction) X(cuModuleUnload) X(cuLaunchKernel) X(cuLaunchKernelEx)

#define T_NVML_API(X)                                                                        \
    X(nvmlInit_v2) X(nvmlShutdown) X(nvmlDeviceGetCount_v2) X(nvmlDeviceGetHandleByIndex_v2) \
    X(nvmlDeviceGetHandleByUUID) X(nvmlDeviceGetIndex) X(nvmlDeviceGetName)                  \
    X(nvmlDeviceGetUUID) X(nvmlDeviceGetMemoryInfo) X(nvmlDeviceGetMemoryInfo_v2)            \
    X(nvmlDeviceGetComputeRunningProcesses_v3) X(nvmlDeviceGetComputeRunningProcesses_v2)    \
    X(nvmlDeviceGetUtilizationRates) X(nvmlSystemGetDriverVersion) X(nvmlErrorString)

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

/* Polls cond_fn up to timeout_ms; 1 if it became true. Tests wait for conditions, never for
 * durations, and pass T_WAIT_MS: a deadline that only bounds a hang, on a loaded machine too. */
#define T_WAIT_MS 60000u
int t_wait_for(int (*cond_fn)(void *), void *arg, unsigned timeout_ms);
void t_sleep_ms(unsigned ms);

#endif

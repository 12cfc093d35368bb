/* gpu.h — the node's GPUs as NVML sees them: discovery at start, and the NVML handle the
 * watchdog keeps using afterwards. */
#ifndef CONVGPUD_GPU_H
#define CONVGPUD_GPU_H

#include "nvml_types.h"

struct nvml {
    void *h;
    PFN_nvmlInit_v2 init;
    PFN_nvmlShutdown shutdown;
    PFN_nvmlDeviceGetCount_v2 count;
    PFN_nvmlDeviceGetHandleByIndex_v2 handle;
    PFN_nvmlDeviceGetName name;
    PFN_nvmlDeviceGetUUID uuid;
    PFN_nvmlDeviceGetMemoryInfo mem;
    PFN_nvmlDeviceGetComputeRunningProcesses_v3 procs;
    PFN_nvmlErrorString errstr;
};

#endif

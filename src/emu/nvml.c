/* nvml.c — the emulated libnvidia-ml.so.1: initialisation, devices, memory, processes and
 * error strings (nvml_util.c: utilisation; nvml_info.c: PCI, clocks and sensors). It reads the
 * same shared state as the driver, so memory, processes and utilisation agree with what
 * cuMemGetInfo and the kernels produce. Like real NVML it sees every physical device and
 * ignores CUDA_VISIBLE_DEVICES, and it never registers as a process using the GPU. Pids are
 * reported as the caller's pid namespace sees them (pidns.h), as real NVML reports host pids. */
#include "nvml_int.h"

#include "pidns.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* A nominal driver, matching the CUDA 13.0 the driver library reports. */
#define EMU_DRIVER_VERSION "580.65.06"
#define EMU_NVML_VERSION   "13.580.65.06"

emu_nvml g_nvml = {.lock = PTHREAD_MUTEX_INITIALIZER};

nvmlReturn_t nvmlInitWithFlags(unsigned int flags)
{
    (void)flags; /* NO_GPUS / NO_ATTACH change nothing here */
    nvmlReturn_t rc = NVML_SUCCESS;
    pthread_mutex_lock(&g_nvml.lock);
    if (!g_nvml.attached) {
        char err[EMU_ERR_MAX];
        emu_config want, got;
        if (emu_config_from_env(&want, err, sizeof err) != 0 ||
            emu_nvml_topology_load(want.ndev, err, sizeof err) != 0 ||
            emu_shared_attach(&g_nvml.sh, &want, &got, 0, err, sizeof err) != 0) {
            fprintf(stderr, "convgpu-emu: nvmlInit: %s\n", err);
            rc = NVML_ERROR_DRIVER_NOT_LOADED;
        } else {
            for (unsigned i = 0; i < EMU_MAX_DEVICES; i++)
                g_nvml.dev[i].index = i;
            g_nvml.attached = 1;
        }
    }
    if (rc == NVML_SUCCESS)
        __atomic_add_fetch(&g_nvml.refs, 1, __ATOMIC_ACQ_REL);
    pthread_mutex_unlock(&g_nvml.lock);
    return rc;
}

nvmlReturn_t nvmlInit_v2(void) { return nvmlInitWithFlags(0); }
nvmlReturn_t nvmlInit(void) { return nvmlInitWithFlags(0); }

nvmlReturn_t nvmlShutdown(void)
{
    nvmlReturn_t rc = NVML_SUCCESS;
    pthread_mutex_lock(&g_nvml.lock);
    if (g_nvml.refs == 0)
        rc = NVML_ERROR_UNINITIALIZED;
    else
        __atomic_sub_fetch(&g_nvml.refs, 1, __ATOMIC_ACQ_REL);
    pthread_mutex_unlock(&g_nvml.lock);
    return rc;
}

nvmlReturn_t emu_nvml_ready(emu_config *cfg)
{
    if (__atomic_load_n(&g_nvml.refs, __ATOMIC_ACQUIRE) == 0)
        return NVML_ERROR_UNINITIALIZED;
    return emu_shared_config(&g_nvml.sh, cfg) == 0 ? NVML_SUCCESS : NVML_ERROR_UNKNOWN;
}

nvmlReturn_t emu_nvml_device(nvmlDevice_t d, emu_config *cfg, unsigned *idx)
{
    nvmlReturn_t rc = emu_nvml_ready(cfg);
    if (rc != NVML_SUCCESS)
        return rc;
    if (!d || d < &g_nvml.dev[0] || d >= &g_nvml.dev[EMU_MAX_DEVICES] || d->index >= cfg->ndev)
        return NVML_ERROR_INVALID_ARGUMENT;
    *idx = d->index;
    return NVML_SUCCESS;
}

static nvmlReturn_t put_string(char *out, unsigned int length, const char *s)
{
    if (!out)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (strlen(s) + 1 > length)
        return NVML_ERROR_INSUFFICIENT_SIZE;
    memcpy(out, s, strlen(s) + 1);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length)
{
    emu_config cfg;
    nvmlReturn_t rc = emu_nvml_ready(&cfg);
    return rc != NVML_SUCCESS ? rc : put_string(version, length, EMU_DRIVER_VERSION);
}

nvmlReturn_t nvmlSystemGetNVMLVersion(char *version, unsigned int length)
{
    return put_string(version, length, EMU_NVML_VERSION);
}

nvmlReturn_t nvmlSystemGetCudaDriverVersion(int *cudaDriverVersion)
{
    if (!cudaDriverVersion)
        return NVML_ERROR_INVALID_ARGUMENT;
    *cudaDriverVersion = 13000;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *cudaDriverVersion)
{
    return nvmlSystemGetCudaDriverVersion(cudaDriverVersion);
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *deviceCount)
{
    emu_config cfg;
    nvmlReturn_t rc = emu_nvml_ready(&cfg);
    if (rc != NVML_SUCCESS)
        return rc;
    if (!deviceCount)
        return NVML_ERROR_INVALID_ARGUMENT;
    *deviceCount = cfg.ndev;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCount(unsigned int *deviceCount)
{
    return nvmlDeviceGetCount_v2(deviceCount);
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *dev)
{
    emu_config cfg;
    nvmlReturn_t rc = emu_nvml_ready(&cfg);
    if (rc != NVML_SUCCESS)
        return rc;
    if (!dev || index >= cfg.ndev)
        return NVML_ERROR_INVALID_ARGUMENT;
    *dev = &g_nvml.dev[index];
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int index, nvmlDevice_t *dev)
{
    return nvmlDeviceGetHandleByIndex_v2(index, dev);
}

nvmlReturn_t nvmlDeviceGetHandleByUUID(const char *uuid, nvmlDevice_t *dev)
{
    emu_config cfg;
    nvmlReturn_t rc = emu_nvml_ready(&cfg);
    if (rc != NVML_SUCCESS)
        return rc;
    if (!uuid || !dev)
        return NVML_ERROR_INVALID_ARGUMENT;
    for (unsigned i = 0; i < cfg.ndev; i++) {
        unsigned char u[16];
        char s[EMU_UUID_STRLEN];
        emu_device_uuid(i, cfg.total[i], u);
        emu_uuid_string(u, s);
        if (strcasecmp(s, uuid) == 0) {
            *dev = &g_nvml.dev[i];
            return NVML_SUCCESS;
        }
    }
    return NVML_ERROR_NOT_FOUND;
}

nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t d, unsigned int *index)
{
    emu_config cfg;
    unsigned i;
    nvmlReturn_t rc = emu_nvml_device(d, &cfg, &i);
    if (rc != NVML_SUCCESS)
        return rc;
    if (!index)
        return NVML_ERROR_INVALID_ARGUMENT;
    *index = i;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char *name, unsigned int length)
{
    emu_config cfg;
    unsigned i;
    char s[NVML_DEVICE_NAME_V2_BUFFER_SIZE];
    nvmlReturn_t rc = emu_nvml_device(d, &cfg, &i);
    if (rc != NVML_SUCCESS)
        return rc;
    emu_device_name(cfg.total[i], s, sizeof s);
    return put_string(name, length, s);
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t d, char *uuid, unsigned int length)
{
    emu_config cfg;
    unsigned i;
    unsigned char u[16];
    char s[EMU_UUID_STRLEN];
    nvmlReturn_t rc = emu_nvml_device(d, &cfg, &i);
    if (rc != NVML_SUCCESS)
        return rc;
    emu_device_uuid(i, cfg.total[i], u);
    emu_uuid_string(u, s);
    return put_string(uuid, length, s);
}

static nvmlReturn_t memory(nvmlDevice_t d, uint64_t *total, uint64_t *used)
{
    emu_config cfg;
    unsigned i;
    nvmlReturn_t rc = emu_nvml_device(d, &cfg, &i);
    if (rc != NVML_SUCCESS)
        return rc;
    if (emu_shared_used(&g_nvml.sh, i, used) != 0)
        return NVML_ERROR_UNKNOWN;
    *total = cfg.total[i];
    if (*used > *total)
        *used = *total;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t *m)
{
    uint64_t total, used;
    if (!m) {
        emu_config cfg;
        nvmlReturn_t rc = emu_nvml_ready(&cfg);
        return rc != NVML_SUCCESS ? rc : NVML_ERROR_INVALID_ARGUMENT;
    }
    nvmlReturn_t rc = memory(d, &total, &used);
    if (rc == NVML_SUCCESS) {
        m->total = total;
        m->used = used;
        m->free = total - used;
    }
    return rc;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t d, nvmlMemory_v2_t *m)
{
    uint64_t total, used;
    emu_config cfg;
    nvmlReturn_t rc = emu_nvml_ready(&cfg);
    if (rc != NVML_SUCCESS)
        return rc;
    if (!m)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (m->version != nvmlMemory_v2)
        return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    if ((rc = memory(d, &total, &used)) == NVML_SUCCESS) {
        /* Nothing is held back by the emulated driver: total = used + free. */
        m->total = total;
        m->reserved = 0;
        m->used = used;
        m->free = total - used;
    }
    return rc;
}

/* The sizing protocol of the process queries: *count in = room, out = needed. */
static nvmlReturn_t processes(nvmlDevice_t d, unsigned int *count, void *infos, int v1)
{
    emu_config cfg;
    unsigned i;
    nvmlReturn_t rc = emu_nvml_device(d, &cfg, &i);
    if (rc != NVML_SUCCESS)
        return rc;
    if (!count || (*count > 0 && !infos))
        return NVML_ERROR_INVALID_ARGUMENT;
    emu_proc_use use[EMU_MAX_PROCS];
    int n = emu_shared_processes(&g_nvml.sh, i, use, EMU_MAX_PROCS);
    if (n < 0)
        return NVML_ERROR_UNKNOWN;
    if ((unsigned)n > *count) {
        *count = (unsigned)n;
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    for (int k = 0; k < n; k++) {
        if (v1) {
            nvmlProcessInfo_v1_t *p = (nvmlProcessInfo_v1_t *)infos + k;
            p->pid = emu_ident_report_pid(&use[k].who);
            p->usedGpuMemory = use[k].used;
        } else {
            nvmlProcessInfo_t *p = (nvmlProcessInfo_t *)infos + k;
            p->pid = emu_ident_report_pid(&use[k].who);
            p->usedGpuMemory = use[k].used;
            p->gpuInstanceId = NVML_VALUE_NOT_AVAILABLE;
            p->computeInstanceId = NVML_VALUE_NOT_AVAILABLE;
        }
    }
    *count = (unsigned)n;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t d, unsigned int *infoCount,
                                                     nvmlProcessInfo_t *infos)
{
    return processes(d, infoCount, infos, 0);
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t d, unsigned int *infoCount,
                                                     nvmlProcessInfo_v2_t *infos)
{
    return processes(d, infoCount, infos, 0);
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t d, unsigned int *infoCount,
                                                  nvmlProcessInfo_v1_t *infos)
{
    return processes(d, infoCount, infos, 1);
}

const char *nvmlErrorString(nvmlReturn_t result)
{
    switch (result) {
    case NVML_SUCCESS: return "Success";
    case NVML_ERROR_UNINITIALIZED: return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT: return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
    case NVML_ERROR_NO_PERMISSION: return "Insufficient Permissions";
    case NVML_ERROR_ALREADY_INITIALIZED: return "Already Initialized";
    case NVML_ERROR_NOT_FOUND: return "Not Found";
    case NVML_ERROR_INSUFFICIENT_SIZE: return "Insufficient Size";
    case NVML_ERROR_INSUFFICIENT_POWER: return "Insufficient External Power";
    case NVML_ERROR_DRIVER_NOT_LOADED: return "Driver Not Loaded";
    case NVML_ERROR_TIMEOUT: return "Timeout";
    case NVML_ERROR_IRQ_ISSUE: return "Interrupt Request Issue";
    case NVML_ERROR_LIBRARY_NOT_FOUND: return "NVML Shared Library Not Found";
    case NVML_ERROR_FUNCTION_NOT_FOUND: return "Function Not Found";
    case NVML_ERROR_CORRUPTED_INFOROM: return "Corrupted infoROM";
    case NVML_ERROR_GPU_IS_LOST: return "GPU is lost";
    case NVML_ERROR_RESET_REQUIRED: return "GPU requires restart";
    case NVML_ERROR_OPERATING_SYSTEM: return "The operating system has blocked the request.";
    case NVML_ERROR_LIB_RM_VERSION_MISMATCH: return "RM has detected an NVML/RM version mismatch.";
    case NVML_ERROR_IN_USE: return "In use by another client";
    case NVML_ERROR_MEMORY: return "Insufficient Memory";
    case NVML_ERROR_NO_DATA: return "No data";
    case NVML_ERROR_VGPU_ECC_NOT_SUPPORTED: return "ECC is not supported on this vGPU";
    case NVML_ERROR_INSUFFICIENT_RESOURCES: return "Insufficient resources";
    case NVML_ERROR_FREQ_NOT_SUPPORTED: return "Frequency not supported";
    case NVML_ERROR_ARGUMENT_VERSION_MISMATCH: return "Argument version mismatch";
    case NVML_ERROR_DEPRECATED: return "Deprecated";
    case NVML_ERROR_NOT_READY: return "Not ready";
    case NVML_ERROR_GPU_NOT_FOUND: return "GPU not found";
    case NVML_ERROR_INVALID_STATE: return "Invalid state";
    case NVML_ERROR_UNKNOWN: return "Unknown Error";
    }
    return "Unknown Error";
}

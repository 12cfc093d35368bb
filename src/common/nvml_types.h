/* nvml_types.h — our own declarations of the NVML subset convgpu speaks.
 *
 * There is no nvml.h on the build machines, so the types, return codes and entry points are
 * declared here from NVML's public ABI. Prototypes use the real exported symbol names
 * (nvmlInit_v2, nvmlDeviceGetCount_v2, nvmlDeviceGetComputeRunningProcesses_v3, ...) and there
 * are no renaming macros. For every entry point E there is a pointer type PFN_E.
 *
 * Defining CONVGPU_NVML_DECLS_ONLY skips the type section (see cuda_types.h for why). */
#ifndef CONVGPU_NVML_TYPES_H
#define CONVGPU_NVML_TYPES_H

#include <stddef.h>

#ifndef CONVGPU_NVML_DECLS_ONLY

typedef enum nvmlReturn_enum {
    NVML_SUCCESS = 0,
    NVML_ERROR_UNINITIALIZED = 1,
    NVML_ERROR_INVALID_ARGUMENT = 2,
    NVML_ERROR_NOT_SUPPORTED = 3,
    NVML_ERROR_NO_PERMISSION = 4,
    NVML_ERROR_ALREADY_INITIALIZED = 5,
    NVML_ERROR_NOT_FOUND = 6,
    NVML_ERROR_INSUFFICIENT_SIZE = 7,
    NVML_ERROR_INSUFFICIENT_POWER = 8,
    NVML_ERROR_DRIVER_NOT_LOADED = 9,
    NVML_ERROR_TIMEOUT = 10,
    NVML_ERROR_IRQ_ISSUE = 11,
    NVML_ERROR_LIBRARY_NOT_FOUND = 12,
    NVML_ERROR_FUNCTION_NOT_FOUND = 13,
    NVML_ERROR_CORRUPTED_INFOROM = 14,
    NVML_ERROR_GPU_IS_LOST = 15,
    NVML_ERROR_RESET_REQUIRED = 16,
    NVML_ERROR_OPERATING_SYSTEM = 17,
    NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18,
    NVML_ERROR_IN_USE = 19,
    NVML_ERROR_MEMORY = 20,
    NVML_ERROR_NO_DATA = 21,
    NVML_ERROR_VGPU_ECC_NOT_SUPPORTED = 22,
    NVML_ERROR_INSUFFICIENT_RESOURCES = 23,
    NVML_ERROR_FREQ_NOT_SUPPORTED = 24,
    NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25,
    NVML_ERROR_DEPRECATED = 26,
    NVML_ERROR_NOT_READY = 27,
    NVML_ERROR_GPU_NOT_FOUND = 28,
    NVML_ERROR_INVALID_STATE = 29,
    NVML_ERROR_UNKNOWN = 999
} nvmlReturn_t;

typedef struct nvmlDevice_st *nvmlDevice_t;

/* Buffer sizes the API documents for its string outputs. */
#define NVML_DEVICE_NAME_BUFFER_SIZE           64
#define NVML_DEVICE_NAME_V2_BUFFER_SIZE        96
#define NVML_DEVICE_UUID_BUFFER_SIZE           80
#define NVML_DEVICE_UUID_V2_BUFFER_SIZE        96
#define NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE 80
#define NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE   80

/* "Not available" marker of unsigned fields (e.g. gpuInstanceId outside MIG). */
#define NVML_VALUE_NOT_AVAILABLE 0xFFFFFFFFu

/* nvmlInitWithFlags flags. */
#define NVML_INIT_FLAG_NO_GPUS   1u
#define NVML_INIT_FLAG_NO_ATTACH 2u

typedef struct nvmlMemory_st {
    unsigned long long total;
    unsigned long long free;
    unsigned long long used;
} nvmlMemory_t;

typedef struct nvmlMemory_v2_st {
    unsigned int version;
    unsigned long long total;
    unsigned long long reserved;
    unsigned long long free;
    unsigned long long used;
} nvmlMemory_v2_t;

/* Versioned structs carry sizeof | version << 24 in their first field. */
#define NVML_STRUCT_VERSION(data, ver) (unsigned int)(sizeof(nvml##data##_v##ver##_t) | ((ver) << 24U))
#define nvmlMemory_v2 NVML_STRUCT_VERSION(Memory, 2)

typedef struct nvmlProcessInfo_v1_st {
    unsigned int pid;
    unsigned long long usedGpuMemory;
} nvmlProcessInfo_v1_t;

typedef struct nvmlProcessInfo_v2_st {
    unsigned int pid;
    unsigned long long usedGpuMemory;
    unsigned int gpuInstanceId;
    unsigned int computeInstanceId;
} nvmlProcessInfo_v2_t;
typedef nvmlProcessInfo_v2_t nvmlProcessInfo_t;

typedef struct nvmlUtilization_st {
    unsigned int gpu;
    unsigned int memory;
} nvmlUtilization_t;

/* One process's utilisation over one sample period (nvmlDeviceGetProcessUtilization);
 * timeStamp is the period's end, in microseconds since the epoch (CLOCK_REALTIME). */
typedef struct nvmlProcessUtilizationSample_st {
    unsigned int pid;
    unsigned long long timeStamp;
    unsigned int smUtil;
    unsigned int memUtil;
    unsigned int encUtil;
    unsigned int decUtil;
} nvmlProcessUtilizationSample_t;

#define NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE    32
#define NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE 16

typedef struct nvmlPciInfo_st {
    char busIdLegacy[NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE];
    unsigned int domain;
    unsigned int bus;
    unsigned int device;
    unsigned int pciDeviceId;
    unsigned int pciSubSystemId;
    char busId[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE];
} nvmlPciInfo_t;

typedef enum nvmlTemperatureSensors_enum {
    NVML_TEMPERATURE_GPU = 0,
    NVML_TEMPERATURE_COUNT
} nvmlTemperatureSensors_t;

typedef enum nvmlClockType_enum {
    NVML_CLOCK_GRAPHICS = 0,
    NVML_CLOCK_SM = 1,
    NVML_CLOCK_MEM = 2,
    NVML_CLOCK_VIDEO = 3,
    NVML_CLOCK_COUNT
} nvmlClockType_t;

/* Topology (nvmlDeviceGetTopologyCommonAncestor and friends): the PCIe path between two GPUs,
 * nearest first; the values are spaced as NVIDIA spaces them. */
typedef enum nvmlGpuLevel_enum {
    NVML_TOPOLOGY_INTERNAL = 0,
    NVML_TOPOLOGY_SINGLE = 10,
    NVML_TOPOLOGY_MULTIPLE = 20,
    NVML_TOPOLOGY_HOSTBRIDGE = 30,
    NVML_TOPOLOGY_NODE = 40,
    NVML_TOPOLOGY_SYSTEM = 50
} nvmlGpuTopologyLevel_t;

typedef enum nvmlGpuP2PStatus_enum {
    NVML_P2P_STATUS_OK = 0,
    NVML_P2P_STATUS_CHIPSET_NOT_SUPPORED = 1,
    NVML_P2P_STATUS_CHIPSET_NOT_SUPPORTED = 1,
    NVML_P2P_STATUS_GPU_NOT_SUPPORTED = 2,
    NVML_P2P_STATUS_IOH_TOPOLOGY_NOT_SUPPORTED = 3,
    NVML_P2P_STATUS_DISABLED_BY_REGKEY = 4,
    NVML_P2P_STATUS_NOT_SUPPORTED = 5,
    NVML_P2P_STATUS_UNKNOWN = 6
} nvmlGpuP2PStatus_t;

typedef enum nvmlGpuP2PCapsIndex_enum {
    NVML_P2P_CAPS_INDEX_READ = 0,
    NVML_P2P_CAPS_INDEX_WRITE = 1,
    NVML_P2P_CAPS_INDEX_NVLINK = 2,
    NVML_P2P_CAPS_INDEX_ATOMICS = 3,
    NVML_P2P_CAPS_INDEX_PROP = 4,
    NVML_P2P_CAPS_INDEX_UNKNOWN = 5
} nvmlGpuP2PCapsIndex_t;

typedef enum nvmlEnableState_enum {
    NVML_FEATURE_DISABLED = 0,
    NVML_FEATURE_ENABLED = 1
} nvmlEnableState_t;

/* Link indexes an NVLink query may name (NVML_NVLINK_MAX_LINKS). */
#define NVML_NVLINK_MAX_LINKS 18

#endif /* CONVGPU_NVML_DECLS_ONLY */

/* NVML_DECL(name, (params)) declares the exported function and PFN_name. */
#define CG_NVML_DECL(name, params) \
    nvmlReturn_t name params;      \
    typedef nvmlReturn_t(*PFN_##name) params

CG_NVML_DECL(nvmlInit, (void));
CG_NVML_DECL(nvmlInit_v2, (void));
CG_NVML_DECL(nvmlInitWithFlags, (unsigned int flags));
CG_NVML_DECL(nvmlShutdown, (void));
CG_NVML_DECL(nvmlSystemGetDriverVersion, (char *version, unsigned int length));
CG_NVML_DECL(nvmlSystemGetNVMLVersion, (char *version, unsigned int length));
CG_NVML_DECL(nvmlSystemGetCudaDriverVersion, (int *cudaDriverVersion));
CG_NVML_DECL(nvmlSystemGetCudaDriverVersion_v2, (int *cudaDriverVersion));
CG_NVML_DECL(nvmlDeviceGetCount, (unsigned int *deviceCount));
CG_NVML_DECL(nvmlDeviceGetCount_v2, (unsigned int *deviceCount));
CG_NVML_DECL(nvmlDeviceGetHandleByIndex, (unsigned int index, nvmlDevice_t *device));
CG_NVML_DECL(nvmlDeviceGetHandleByIndex_v2, (unsigned int index, nvmlDevice_t *device));
CG_NVML_DECL(nvmlDeviceGetHandleByUUID, (const char *uuid, nvmlDevice_t *device));
CG_NVML_DECL(nvmlDeviceGetIndex, (nvmlDevice_t device, unsigned int *index));
CG_NVML_DECL(nvmlDeviceGetName, (nvmlDevice_t device, char *name, unsigned int length));
CG_NVML_DECL(nvmlDeviceGetUUID, (nvmlDevice_t device, char *uuid, unsigned int length));
CG_NVML_DECL(nvmlDeviceGetMemoryInfo, (nvmlDevice_t device, nvmlMemory_t *memory));
CG_NVML_DECL(nvmlDeviceGetMemoryInfo_v2, (nvmlDevice_t device, nvmlMemory_v2_t *memory));
CG_NVML_DECL(nvmlDeviceGetComputeRunningProcesses, (nvmlDevice_t device, unsigned int *infoCount,
                                                    nvmlProcessInfo_v1_t *infos));
CG_NVML_DECL(nvmlDeviceGetComputeRunningProcesses_v2, (nvmlDevice_t device,
                                                       unsigned int *infoCount,
                                                       nvmlProcessInfo_v2_t *infos));
CG_NVML_DECL(nvmlDeviceGetComputeRunningProcesses_v3, (nvmlDevice_t device,
                                                       unsigned int *infoCount,
                                                       nvmlProcessInfo_t *infos));
CG_NVML_DECL(nvmlDeviceGetUtilizationRates, (nvmlDevice_t device, nvmlUtilization_t *utilization));
CG_NVML_DECL(nvmlDeviceGetProcessUtilization, (nvmlDevice_t device,
                                               nvmlProcessUtilizationSample_t *utilization,
                                               unsigned int *processSamplesCount,
                                               unsigned long long lastSeenTimeStamp));
CG_NVML_DECL(nvmlDeviceGetPciInfo_v3, (nvmlDevice_t device, nvmlPciInfo_t *pci));
CG_NVML_DECL(nvmlDeviceGetPciInfo_v2, (nvmlDevice_t device, nvmlPciInfo_t *pci));
CG_NVML_DECL(nvmlDeviceGetMinorNumber, (nvmlDevice_t device, unsigned int *minorNumber));
CG_NVML_DECL(nvmlDeviceGetCudaComputeCapability, (nvmlDevice_t device, int *major, int *minor));
CG_NVML_DECL(nvmlDeviceGetTemperature, (nvmlDevice_t device, nvmlTemperatureSensors_t sensorType,
                                        unsigned int *temp));
CG_NVML_DECL(nvmlDeviceGetPowerUsage, (nvmlDevice_t device, unsigned int *power));
CG_NVML_DECL(nvmlDeviceGetClockInfo, (nvmlDevice_t device, nvmlClockType_t type,
                                      unsigned int *clock));

CG_NVML_DECL(nvmlDeviceGetTopologyCommonAncestor, (nvmlDevice_t device1, nvmlDevice_t device2,
                                                  nvmlGpuTopologyLevel_t *pathInfo));
CG_NVML_DECL(nvmlDeviceGetTopologyNearestGpus, (nvmlDevice_t device, nvmlGpuTopologyLevel_t level,
                                               unsigned int *count, nvmlDevice_t *deviceArray));
CG_NVML_DECL(nvmlSystemGetTopologyGpuSet, (unsigned int cpuNumber, unsigned int *count,
                                           nvmlDevice_t *deviceArray));
CG_NVML_DECL(nvmlDeviceGetP2PStatus, (nvmlDevice_t device1, nvmlDevice_t device2,
                                      nvmlGpuP2PCapsIndex_t p2pIndex,
                                      nvmlGpuP2PStatus_t *p2pStatus));
CG_NVML_DECL(nvmlDeviceGetNvLinkState, (nvmlDevice_t device, unsigned int link,
                                        nvmlEnableState_t *isActive));
CG_NVML_DECL(nvmlDeviceGetNvLinkRemotePciInfo_v2, (nvmlDevice_t device, unsigned int link,
                                                   nvmlPciInfo_t *pci));

/* nvmlErrorString is the one entry point that does not return nvmlReturn_t. */
const char *nvmlErrorString(nvmlReturn_t result);
typedef const char *(*PFN_nvmlErrorString)(nvmlReturn_t result);

#endif

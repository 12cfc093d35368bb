/* cuda_types.h — our own declarations of the CUDA driver API subset convgpu speaks.
 *
 * The project builds without the CUDA toolkit, so the types, enum values, error codes and entry
 * points it needs are declared here from the public ABI (CUDA 13.0). Every prototype uses the
 * real exported (versioned) symbol name, e.g. cuMemAlloc_v2, cuCtxCreate_v4, and the per-thread
 * default stream variants (_ptds/_ptsz) are separate symbols. Unlike cuda.h there are no
 * renaming macros: the interposer must be able to name cuMemAlloc and cuMemAlloc_v2 apart.
 *
 * For every entry point E there is a function pointer type PFN_E with the same signature.
 * tests/decls checks all of this against the toolkit's cuda.h where one is installed.
 *
 * Defining CONVGPU_CUDA_DECLS_ONLY before inclusion skips the type section and declares only
 * the prototypes and PFN types (the decls test uses it to redeclare our prototypes against the
 * toolkit's types: a mismatch is then a compile error). */
#ifndef CONVGPU_CUDA_TYPES_H
#define CONVGPU_CUDA_TYPES_H

#include <stddef.h>
#include <stdint.h>

/* The CUDA API version these declarations describe (cuda.h's CUDA_VERSION). */
#define CONVGPU_CUDA_API_VERSION 13000

#ifndef CONVGPU_CUDA_DECLS_ONLY

/* ---- scalar and handle types ---------------------------------------------------------------- */

typedef uint32_t cuuint32_t;
typedef uint64_t cuuint64_t;

typedef unsigned long long CUdeviceptr_v2;
typedef CUdeviceptr_v2 CUdeviceptr;
typedef int CUdevice_v1;
typedef CUdevice_v1 CUdevice;

typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUarray_st *CUarray;
typedef struct CUmipmappedArray_st *CUmipmappedArray;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef struct CUmemPoolHandle_st *CUmemoryPool;
typedef struct CUgraphExec_st *CUgraphExec;
typedef unsigned long long CUmemGenericAllocationHandle_v1;
typedef CUmemGenericAllocationHandle_v1 CUmemGenericAllocationHandle;

#ifndef CU_UUID_HAS_BEEN_DEFINED
#define CU_UUID_HAS_BEEN_DEFINED
typedef struct CUuuid_st {
    char bytes[16];
} CUuuid;
#endif

/* Special stream handles. */
#define CU_STREAM_LEGACY     ((CUstream)0x1)
#define CU_STREAM_PER_THREAD ((CUstream)0x2)

#define CU_DEVICE_CPU     ((CUdevice)-1)
#define CU_DEVICE_INVALID ((CUdevice)-2)

/* Graphs (stream capture, cuGraphLaunch) and the library-kernel handle a kernel node may name. */
typedef struct CUgraph_st *CUgraph;
typedef struct CUgraphNode_st *CUgraphNode;
typedef struct CUkern_st *CUkernel;

/* cuMemHostAlloc and cuMemHostRegister flags. */
#define CU_MEMHOSTALLOC_PORTABLE      0x01
#define CU_MEMHOSTALLOC_DEVICEMAP     0x02
#define CU_MEMHOSTALLOC_WRITECOMBINED 0x04
#define CU_MEMHOSTREGISTER_PORTABLE   0x01
#define CU_MEMHOSTREGISTER_DEVICEMAP  0x02
#define CU_MEMHOSTREGISTER_IOMEMORY   0x04
#define CU_MEMHOSTREGISTER_READ_ONLY  0x08

/* Markers of the `extra` argument of cuLaunchKernel. */
#define CU_LAUNCH_PARAM_END_AS_INT            0x00
#define CU_LAUNCH_PARAM_END                   ((void *)CU_LAUNCH_PARAM_END_AS_INT)
#define CU_LAUNCH_PARAM_BUFFER_POINTER_AS_INT 0x01
#define CU_LAUNCH_PARAM_BUFFER_POINTER        ((void *)CU_LAUNCH_PARAM_BUFFER_POINTER_AS_INT)
#define CU_LAUNCH_PARAM_BUFFER_SIZE_AS_INT    0x02
#define CU_LAUNCH_PARAM_BUFFER_SIZE           ((void *)CU_LAUNCH_PARAM_BUFFER_SIZE_AS_INT)

/* ---- error codes ---------------------------------------------------------------------------- */

typedef enum cudaError_enum {
    CUDA_SUCCESS = 0,
    CUDA_ERROR_INVALID_VALUE = 1,
    CUDA_ERROR_OUT_OF_MEMORY = 2,
    CUDA_ERROR_NOT_INITIALIZED = 3,
    CUDA_ERROR_DEINITIALIZED = 4,
    CUDA_ERROR_PROFILER_DISABLED = 5,
    CUDA_ERROR_PROFILER_NOT_INITIALIZED = 6,
    CUDA_ERROR_PROFILER_ALREADY_STARTED = 7,
    CUDA_ERROR_PROFILER_ALREADY_STOPPED = 8,
    CUDA_ERROR_STUB_LIBRARY = 34,
    CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER = 36,
    CUDA_ERROR_DEVICE_UNAVAILABLE = 46,
    CUDA_ERROR_NO_DEVICE = 100,
    CUDA_ERROR_INVALID_DEVICE = 101,
    CUDA_ERROR_DEVICE_NOT_LICENSED = 102,
    CUDA_ERROR_INVALID_IMAGE = 200,
    CUDA_ERROR_INVALID_CONTEXT = 201,
    CUDA_ERROR_CONTEXT_ALREADY_CURRENT = 202,
    CUDA_ERROR_MAP_FAILED = 205,
    CUDA_ERROR_UNMAP_FAILED = 206,
    CUDA_ERROR_ARRAY_IS_MAPPED = 207,
    CUDA_ERROR_ALREADY_MAPPED = 208,
    CUDA_ERROR_NO_BINARY_FOR_GPU = 209,
    CUDA_ERROR_ALREADY_ACQUIRED = 210,
    CUDA_ERROR_NOT_MAPPED = 211,
    CUDA_ERROR_NOT_MAPPED_AS_ARRAY = 212,
    CUDA_ERROR_NOT_MAPPED_AS_POINTER = 213,
    CUDA_ERROR_ECC_UNCORRECTABLE = 214,
    CUDA_ERROR_UNSUPPORTED_LIMIT = 215,
    CUDA_ERROR_CONTEXT_ALREADY_IN_USE = 216,
    CUDA_ERROR_PEER_ACCESS_UNSUPPORTED = 217,
    CUDA_ERROR_INVALID_PTX = 218,
    CUDA_ERROR_INVALID_GRAPHICS_CONTEXT = 219,
    CUDA_ERROR_NVLINK_UNCORRECTABLE = 220,
    CUDA_ERROR_JIT_COMPILER_NOT_FOUND = 221,
    CUDA_ERROR_UNSUPPORTED_PTX_VERSION = 222,
    CUDA_ERROR_JIT_COMPILATION_DISABLED = 223,
    CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY = 224,
    CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC = 225,
    CUDA_ERROR_CONTAINED = 226,
    CUDA_ERROR_INVALID_SOURCE = 300,
    CUDA_ERROR_FILE_NOT_FOUND = 301,
    CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND = 302,
    CUDA_ERROR_SHARED_OBJECT_INIT_FAILED = 303,
    CUDA_ERROR_OPERATING_SYSTEM = 304,
    CUDA_ERROR_INVALID_HANDLE = 400,
    CUDA_ERROR_ILLEGAL_STATE = 401,
    CUDA_ERROR_LOSSY_QUERY = 402,
    CUDA_ERROR_NOT_FOUND = 500,
    CUDA_ERROR_NOT_READY = 600,
    CUDA_ERROR_ILLEGAL_ADDRESS = 700,
    CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES = 701,
    CUDA_ERROR_LAUNCH_TIMEOUT = 702,
    CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING = 703,
    CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED = 704,
    CUDA_ERROR_PEER_ACCESS_NOT_ENABLED = 705,
    CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE = 708,
    CUDA_ERROR_CONTEXT_IS_DESTROYED = 709,
    CUDA_ERROR_ASSERT = 710,
    CUDA_ERROR_TOO_MANY_PEERS = 711,
    CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED = 712,
    CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED = 713,
    CUDA_ERROR_HARDWARE_STACK_ERROR = 714,
    CUDA_ERROR_ILLEGAL_INSTRUCTION = 715,
    CUDA_ERROR_MISALIGNED_ADDRESS = 716,
    CUDA_ERROR_INVALID_ADDRESS_SPACE = 717,
    CUDA_ERROR_INVALID_PC = 718,
    CUDA_ERROR_LAUNCH_FAILED = 719,
    CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE = 720,
    CUDA_ERROR_TENSOR_MEMORY_LEAK = 721,
    CUDA_ERROR_NOT_PERMITTED = 800,
    CUDA_ERROR_NOT_SUPPORTED = 801,
    CUDA_ERROR_SYSTEM_NOT_READY = 802,
    CUDA_ERROR_SYSTEM_DRIVER_MISMATCH = 803,
    CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE = 804,
    CUDA_ERROR_MPS_CONNECTION_FAILED = 805,
    CUDA_ERROR_MPS_RPC_FAILURE = 806,
    CUDA_ERROR_MPS_SERVER_NOT_READY = 807,
    CUDA_ERROR_MPS_MAX_CLIENTS_REACHED = 808,
    CUDA_ERROR_MPS_MAX_CONNECTIONS_REACHED = 809,
    CUDA_ERROR_MPS_CLIENT_TERMINATED = 810,
    CUDA_ERROR_CDP_NOT_SUPPORTED = 811,
    CUDA_ERROR_CDP_VERSION_MISMATCH = 812,
    CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED = 900,
    CUDA_ERROR_STREAM_CAPTURE_INVALIDATED = 901,
    CUDA_ERROR_STREAM_CAPTURE_MERGE = 902,
    CUDA_ERROR_STREAM_CAPTURE_UNMATCHED = 903,
    CUDA_ERROR_STREAM_CAPTURE_UNJOINED = 904,
    CUDA_ERROR_STREAM_CAPTURE_ISOLATION = 905,
    CUDA_ERROR_STREAM_CAPTURE_IMPLICIT = 906,
    CUDA_ERROR_CAPTURED_EVENT = 907,
    CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD = 908,
    CUDA_ERROR_TIMEOUT = 909,
    CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE = 910,
    CUDA_ERROR_EXTERNAL_DEVICE = 911,
    CUDA_ERROR_INVALID_CLUSTER_SIZE = 912,
    CUDA_ERROR_FUNCTION_NOT_LOADED = 913,
    CUDA_ERROR_INVALID_RESOURCE_TYPE = 914,
    CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION = 915,
    CUDA_ERROR_KEY_ROTATION = 916,
    CUDA_ERROR_UNKNOWN = 999
} CUresult;

/* ---- enums ---------------------------------------------------------------------------------- */

typedef enum CUdevice_attribute_enum {
    CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1,
    CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X = 2,
    CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y = 3,
    CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z = 4,
    CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X = 5,
    CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y = 6,
    CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z = 7,
    CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK = 8,
    CU_DEVICE_ATTRIBUTE_SHARED_MEMORY_PER_BLOCK = 8,
    CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY = 9,
    CU_DEVICE_ATTRIBUTE_WARP_SIZE = 10,
    CU_DEVICE_ATTRIBUTE_MAX_PITCH = 11,
    CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK = 12,
    CU_DEVICE_ATTRIBUTE_REGISTERS_PER_BLOCK = 12,
    CU_DEVICE_ATTRIBUTE_CLOCK_RATE = 13,
    CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT = 14,
    CU_DEVICE_ATTRIBUTE_GPU_OVERLAP = 15,
    CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
    CU_DEVICE_ATTRIBUTE_KERNEL_EXEC_TIMEOUT = 17,
    CU_DEVICE_ATTRIBUTE_INTEGRATED = 18,
    CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY = 19,
    CU_DEVICE_ATTRIBUTE_COMPUTE_MODE = 20,
    CU_DEVICE_ATTRIBUTE_SURFACE_ALIGNMENT = 30,
    CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS = 31,
    CU_DEVICE_ATTRIBUTE_ECC_ENABLED = 32,
    CU_DEVICE_ATTRIBUTE_PCI_BUS_ID = 33,
    CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID = 34,
    CU_DEVICE_ATTRIBUTE_TCC_DRIVER = 35,
    CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE = 36,
    CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH = 37,
    CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE = 38,
    CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR = 39,
    CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT = 40,
    CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING = 41,
    CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID = 50,
    CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT = 51,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
    CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED = 78,
    CU_DEVICE_ATTRIBUTE_GLOBAL_L1_CACHE_SUPPORTED = 79,
    CU_DEVICE_ATTRIBUTE_LOCAL_L1_CACHE_SUPPORTED = 80,
    CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR = 81,
    CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR = 82,
    CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY = 83,
    CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD = 84,
    CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS = 88,
    CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS = 89,
    CU_DEVICE_ATTRIBUTE_COMPUTE_PREEMPTION_SUPPORTED = 90,
    CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH = 95,
    CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97,
    CU_DEVICE_ATTRIBUTE_DIRECT_MANAGED_MEM_ACCESS_FROM_HOST = 101,
    CU_DEVICE_ATTRIBUTE_VIRTUAL_ADDRESS_MANAGEMENT_SUPPORTED = 102,
    CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED = 102,
    CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED = 103,
    CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR = 106,
    CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED = 115,
    CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES = 119,
    CU_DEVICE_ATTRIBUTE_MAX = 148
} CUdevice_attribute;

typedef enum CUctx_flags_enum {
    CU_CTX_SCHED_AUTO = 0x00,
    CU_CTX_SCHED_SPIN = 0x01,
    CU_CTX_SCHED_YIELD = 0x02,
    CU_CTX_SCHED_BLOCKING_SYNC = 0x04,
    CU_CTX_BLOCKING_SYNC = 0x04,
    CU_CTX_SCHED_MASK = 0x07,
    CU_CTX_MAP_HOST = 0x08,
    CU_CTX_LMEM_RESIZE_TO_MAX = 0x10,
    CU_CTX_COREDUMP_ENABLE = 0x20,
    CU_CTX_USER_COREDUMP_ENABLE = 0x40,
    CU_CTX_SYNC_MEMOPS = 0x80,
    CU_CTX_FLAGS_MASK = 0xFF
} CUctx_flags;

typedef enum CUstream_flags_enum {
    CU_STREAM_DEFAULT = 0x0,
    CU_STREAM_NON_BLOCKING = 0x1
} CUstream_flags;

typedef enum CUevent_flags_enum {
    CU_EVENT_DEFAULT = 0x0,
    CU_EVENT_BLOCKING_SYNC = 0x1,
    CU_EVENT_DISABLE_TIMING = 0x2,
    CU_EVENT_INTERPROCESS = 0x4
} CUevent_flags;

typedef enum CUmemAttach_flags_enum {
    CU_MEM_ATTACH_GLOBAL = 0x1,
    CU_MEM_ATTACH_HOST = 0x2,
    CU_MEM_ATTACH_SINGLE = 0x4
} CUmemAttach_flags;

typedef enum CUarray_format_enum {
    CU_AD_FORMAT_UNSIGNED_INT8 = 0x01,
    CU_AD_FORMAT_UNSIGNED_INT16 = 0x02,
    CU_AD_FORMAT_UNSIGNED_INT32 = 0x03,
    CU_AD_FORMAT_SIGNED_INT8 = 0x08,
    CU_AD_FORMAT_SIGNED_INT16 = 0x09,
    CU_AD_FORMAT_SIGNED_INT32 = 0x0a,
    CU_AD_FORMAT_HALF = 0x10,
    CU_AD_FORMAT_FLOAT = 0x20,
    CU_AD_FORMAT_MAX = 0x7FFFFFFF
} CUarray_format;

typedef enum CUmemAllocationHandleType_enum {
    CU_MEM_HANDLE_TYPE_NONE = 0x0,
    CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR = 0x1,
    CU_MEM_HANDLE_TYPE_WIN32 = 0x2,
    CU_MEM_HANDLE_TYPE_WIN32_KMT = 0x4,
    CU_MEM_HANDLE_TYPE_FABRIC = 0x8,
    CU_MEM_HANDLE_TYPE_MAX = 0x7FFFFFFF
} CUmemAllocationHandleType;

typedef enum CUmemAccess_flags_enum {
    CU_MEM_ACCESS_FLAGS_PROT_NONE = 0x0,
    CU_MEM_ACCESS_FLAGS_PROT_READ = 0x1,
    CU_MEM_ACCESS_FLAGS_PROT_READWRITE = 0x3,
    CU_MEM_ACCESS_FLAGS_PROT_MAX = 0x7FFFFFFF
} CUmemAccess_flags;

typedef enum CUmemLocationType_enum {
    CU_MEM_LOCATION_TYPE_INVALID = 0x0,
    CU_MEM_LOCATION_TYPE_NONE = 0x0,
    CU_MEM_LOCATION_TYPE_DEVICE = 0x1,
    CU_MEM_LOCATION_TYPE_HOST = 0x2,
    CU_MEM_LOCATION_TYPE_HOST_NUMA = 0x3,
    CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT = 0x4,
    CU_MEM_LOCATION_TYPE_MAX = 0x7FFFFFFF
} CUmemLocationType;

typedef enum CUmemAllocationType_enum {
    CU_MEM_ALLOCATION_TYPE_INVALID = 0x0,
    CU_MEM_ALLOCATION_TYPE_PINNED = 0x1,
    CU_MEM_ALLOCATION_TYPE_MANAGED = 0x2,
    CU_MEM_ALLOCATION_TYPE_MAX = 0x7FFFFFFF
} CUmemAllocationType;

typedef enum CUmemAllocationGranularity_flags_enum {
    CU_MEM_ALLOC_GRANULARITY_MINIMUM = 0x0,
    CU_MEM_ALLOC_GRANULARITY_RECOMMENDED = 0x1
} CUmemAllocationGranularity_flags;

typedef enum CUmemAllocationCompType_enum {
    CU_MEM_ALLOCATION_COMP_NONE = 0x0,
    CU_MEM_ALLOCATION_COMP_GENERIC = 0x1
} CUmemAllocationCompType;

typedef enum CUmemPool_attribute_enum {
    CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES = 1,
    CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC = 2,
    CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES = 3,
    CU_MEMPOOL_ATTR_RELEASE_THRESHOLD = 4,
    CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT = 5,
    CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH = 6,
    CU_MEMPOOL_ATTR_USED_MEM_CURRENT = 7,
    CU_MEMPOOL_ATTR_USED_MEM_HIGH = 8
} CUmemPool_attribute;

typedef enum CUdriverProcAddress_flags_enum {
    CU_GET_PROC_ADDRESS_DEFAULT = 0,
    CU_GET_PROC_ADDRESS_LEGACY_STREAM = 1 << 0,
    CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM = 1 << 1
} CUdriverProcAddress_flags;

typedef enum CUdriverProcAddressQueryResult_enum {
    CU_GET_PROC_ADDRESS_SUCCESS = 0,
    CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND = 1,
    CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT = 2
} CUdriverProcAddressQueryResult;

typedef enum CUlaunchAttributeID_enum {
    CU_LAUNCH_ATTRIBUTE_IGNORE = 0,
    CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW = 1,
    CU_LAUNCH_ATTRIBUTE_COOPERATIVE = 2,
    CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY = 3,
    CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION = 4,
    CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE = 5,
    CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION = 6,
    CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT = 7,
    CU_LAUNCH_ATTRIBUTE_PRIORITY = 8,
    CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP = 9,
    CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN = 10,
    CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT = 12
} CUlaunchAttributeID;

typedef enum CUexecAffinityType_enum {
    CU_EXEC_AFFINITY_TYPE_SM_COUNT = 0,
    CU_EXEC_AFFINITY_TYPE_MAX
} CUexecAffinityType;

typedef enum CUcigDataType_enum {
    CIG_DATA_TYPE_D3D12_COMMAND_QUEUE = 0x1,
    CIG_DATA_TYPE_NV_BLOB = 0x2
} CUcigDataType;

typedef enum CUevent_record_flags_enum {
    CU_EVENT_RECORD_DEFAULT = 0x0,
    CU_EVENT_RECORD_EXTERNAL = 0x1
} CUevent_record_flags;

typedef enum CUevent_wait_flags_enum {
    CU_EVENT_WAIT_DEFAULT = 0x0,
    CU_EVENT_WAIT_EXTERNAL = 0x1
} CUevent_wait_flags;

typedef enum CUstreamCaptureStatus_enum {
    CU_STREAM_CAPTURE_STATUS_NONE = 0,
    CU_STREAM_CAPTURE_STATUS_ACTIVE = 1,
    CU_STREAM_CAPTURE_STATUS_INVALIDATED = 2
} CUstreamCaptureStatus;

typedef enum CUstreamCaptureMode_enum {
    CU_STREAM_CAPTURE_MODE_GLOBAL = 0,
    CU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1,
    CU_STREAM_CAPTURE_MODE_RELAXED = 2
} CUstreamCaptureMode;

/* The node types up to the ones the emulator builds (kernel, memcpy, memset, host, empty). */
typedef enum CUgraphNodeType_enum {
    CU_GRAPH_NODE_TYPE_KERNEL = 0,
    CU_GRAPH_NODE_TYPE_MEMCPY = 1,
    CU_GRAPH_NODE_TYPE_MEMSET = 2,
    CU_GRAPH_NODE_TYPE_HOST = 3,
    CU_GRAPH_NODE_TYPE_GRAPH = 4,
    CU_GRAPH_NODE_TYPE_EMPTY = 5,
    CU_GRAPH_NODE_TYPE_WAIT_EVENT = 6,
    CU_GRAPH_NODE_TYPE_EVENT_RECORD = 7
} CUgraphNodeType;

typedef enum CUgraphInstantiate_flags_enum {
    CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH = 1,
    CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD = 2,
    CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH = 4,
    CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY = 8
} CUgraphInstantiate_flags;

typedef enum CUpointer_attribute_enum {
    CU_POINTER_ATTRIBUTE_CONTEXT = 1,
    CU_POINTER_ATTRIBUTE_MEMORY_TYPE = 2,
    CU_POINTER_ATTRIBUTE_DEVICE_POINTER = 3,
    CU_POINTER_ATTRIBUTE_HOST_POINTER = 4,
    CU_POINTER_ATTRIBUTE_P2P_TOKENS = 5,
    CU_POINTER_ATTRIBUTE_SYNC_MEMOPS = 6,
    CU_POINTER_ATTRIBUTE_BUFFER_ID = 7,
    CU_POINTER_ATTRIBUTE_IS_MANAGED = 8,
    CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL = 9,
    CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE = 10,
    CU_POINTER_ATTRIBUTE_RANGE_START_ADDR = 11,
    CU_POINTER_ATTRIBUTE_RANGE_SIZE = 12,
    CU_POINTER_ATTRIBUTE_MAPPED = 13,
    CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES = 14,
    CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE = 15,
    CU_POINTER_ATTRIBUTE_ACCESS_FLAGS = 16,
    CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE = 17,
    CU_POINTER_ATTRIBUTE_MAPPING_SIZE = 18,
    CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR = 19,
    CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID = 20,
    CU_POINTER_ATTRIBUTE_IS_HW_DECOMPRESS_CAPABLE = 21
} CUpointer_attribute;

typedef enum CUmemorytype_enum {
    CU_MEMORYTYPE_HOST = 0x01,
    CU_MEMORYTYPE_DEVICE = 0x02,
    CU_MEMORYTYPE_ARRAY = 0x03,
    CU_MEMORYTYPE_UNIFIED = 0x04
} CUmemorytype;

typedef enum CUlimit_enum {
    CU_LIMIT_STACK_SIZE = 0x00,
    CU_LIMIT_PRINTF_FIFO_SIZE = 0x01,
    CU_LIMIT_MALLOC_HEAP_SIZE = 0x02,
    CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH = 0x03,
    CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT = 0x04,
    CU_LIMIT_MAX_L2_FETCH_GRANULARITY = 0x05,
    CU_LIMIT_PERSISTING_L2_CACHE_SIZE = 0x06,
    CU_LIMIT_SHMEM_SIZE = 0x07,
    CU_LIMIT_CIG_ENABLED = 0x08,
    CU_LIMIT_CIG_SHMEM_FALLBACK_ENABLED = 0x09,
    CU_LIMIT_MAX
} CUlimit;

typedef enum CUfunction_attribute_enum {
    CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0,
    CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1,
    CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES = 2,
    CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES = 3,
    CU_FUNC_ATTRIBUTE_NUM_REGS = 4,
    CU_FUNC_ATTRIBUTE_PTX_VERSION = 5,
    CU_FUNC_ATTRIBUTE_BINARY_VERSION = 6,
    CU_FUNC_ATTRIBUTE_CACHE_MODE_CA = 7,
    CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
    CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT = 9,
    CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET = 10,
    CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH = 11,
    CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT = 12,
    CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH = 13,
    CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED = 14,
    CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE = 15
} CUfunction_attribute;

typedef enum CUmem_advise_enum {
    CU_MEM_ADVISE_SET_READ_MOSTLY = 1,
    CU_MEM_ADVISE_UNSET_READ_MOSTLY = 2,
    CU_MEM_ADVISE_SET_PREFERRED_LOCATION = 3,
    CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION = 4,
    CU_MEM_ADVISE_SET_ACCESSED_BY = 5,
    CU_MEM_ADVISE_UNSET_ACCESSED_BY = 6
} CUmem_advise;

/* JIT options of cuModuleLoadDataEx: the emulator accepts and ignores them (it compiles
 * nothing); the ones it names are those it writes back (an empty log). */
typedef enum CUjit_option_enum {
    CU_JIT_MAX_REGISTERS = 0,
    CU_JIT_THREADS_PER_BLOCK = 1,
    CU_JIT_WALL_TIME = 2,
    CU_JIT_INFO_LOG_BUFFER = 3,
    CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4,
    CU_JIT_ERROR_LOG_BUFFER = 5,
    CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
    CU_JIT_OPTIMIZATION_LEVEL = 7,
    CU_JIT_SPLIT_COMPILE = 34,
    CU_JIT_NUM_OPTIONS
} CUjit_option;

typedef void (*CUhostFn)(void *userData);
typedef void (*CUstreamCallback)(CUstream hStream, CUresult status, void *userData);

/* ---- structs -------------------------------------------------------------------------------- */

typedef struct CUDA_ARRAY_DESCRIPTOR_st {
    size_t Width;
    size_t Height;
    CUarray_format Format;
    unsigned int NumChannels;
} CUDA_ARRAY_DESCRIPTOR_v2;
typedef CUDA_ARRAY_DESCRIPTOR_v2 CUDA_ARRAY_DESCRIPTOR;

typedef struct CUDA_ARRAY3D_DESCRIPTOR_st {
    size_t Width;
    size_t Height;
    size_t Depth;
    CUarray_format Format;
    unsigned int NumChannels;
    unsigned int Flags;
} CUDA_ARRAY3D_DESCRIPTOR_v2;
typedef CUDA_ARRAY3D_DESCRIPTOR_v2 CUDA_ARRAY3D_DESCRIPTOR;

/* CUDA_ARRAY3D_DESCRIPTOR.Flags that change what an array holds */
#define CUDA_ARRAY3D_LAYERED          0x01
#define CUDA_ARRAY3D_CUBEMAP          0x04
#define CUDA_ARRAY3D_SPARSE           0x40
#define CUDA_ARRAY3D_DEFERRED_MAPPING 0x80

typedef struct CUmemLocation_st {
    CUmemLocationType type;
    int id;
} CUmemLocation_v1;
typedef CUmemLocation_v1 CUmemLocation;

typedef struct CUmemAllocationProp_st {
    CUmemAllocationType type;
    CUmemAllocationHandleType requestedHandleTypes;
    CUmemLocation location;
    void *win32HandleMetaData;
    struct {
        unsigned char compressionType;
        unsigned char gpuDirectRDMACapable;
        unsigned short usage;
        unsigned char reserved[4];
    } allocFlags;
} CUmemAllocationProp_v1;
typedef CUmemAllocationProp_v1 CUmemAllocationProp;

typedef struct CUmemAccessDesc_st {
    CUmemLocation location;
    CUmemAccess_flags flags;
} CUmemAccessDesc_v1;
typedef CUmemAccessDesc_v1 CUmemAccessDesc;

typedef struct CUmemPoolProps_st {
    CUmemAllocationType allocType;
    CUmemAllocationHandleType handleTypes;
    CUmemLocation location;
    void *win32SecurityAttributes;
    size_t maxSize;
    unsigned short usage;
    unsigned char reserved[54];
} CUmemPoolProps_v1;
typedef CUmemPoolProps_v1 CUmemPoolProps;

typedef struct CUexecAffinitySmCount_st {
    unsigned int val;
} CUexecAffinitySmCount_v1;
typedef CUexecAffinitySmCount_v1 CUexecAffinitySmCount;

typedef struct CUexecAffinityParam_st {
    CUexecAffinityType type;
    union {
        CUexecAffinitySmCount smCount;
    } param;
} CUexecAffinityParam_v1;
typedef CUexecAffinityParam_v1 CUexecAffinityParam;

typedef struct CUctxCigParam_st {
    CUcigDataType sharedDataType;
    void *sharedData;
} CUctxCigParam;

/* CUDA 12.5+ context creation parameters (cuCtxCreate_v4). */
typedef struct CUctxCreateParams_st {
    CUexecAffinityParam *execAffinityParams;
    int numExecAffinityParams;
    CUctxCigParam *cigParams;
} CUctxCreateParams;

typedef struct CUDA_KERNEL_NODE_PARAMS_st {
    CUfunction func;
    unsigned int gridDimX;
    unsigned int gridDimY;
    unsigned int gridDimZ;
    unsigned int blockDimX;
    unsigned int blockDimY;
    unsigned int blockDimZ;
    unsigned int sharedMemBytes;
    void **kernelParams;
    void **extra;
} CUDA_KERNEL_NODE_PARAMS_v1;

/* CUDA 12+: a kernel node may name a library kernel (kern) instead of func. */
typedef struct CUDA_KERNEL_NODE_PARAMS_v2_st {
    CUfunction func;
    unsigned int gridDimX;
    unsigned int gridDimY;
    unsigned int gridDimZ;
    unsigned int blockDimX;
    unsigned int blockDimY;
    unsigned int blockDimZ;
    unsigned int sharedMemBytes;
    void **kernelParams;
    void **extra;
    CUkernel kern;
    CUcontext ctx;
} CUDA_KERNEL_NODE_PARAMS_v2;
typedef CUDA_KERNEL_NODE_PARAMS_v2 CUDA_KERNEL_NODE_PARAMS;

typedef struct CUDA_MEMCPY2D_st {
    size_t srcXInBytes;
    size_t srcY;
    CUmemorytype srcMemoryType;
    const void *srcHost;
    CUdeviceptr srcDevice;
    CUarray srcArray;
    size_t srcPitch;
    size_t dstXInBytes;
    size_t dstY;
    CUmemorytype dstMemoryType;
    void *dstHost;
    CUdeviceptr dstDevice;
    CUarray dstArray;
    size_t dstPitch;
    size_t WidthInBytes;
    size_t Height;
} CUDA_MEMCPY2D_v2;
typedef CUDA_MEMCPY2D_v2 CUDA_MEMCPY2D;

typedef struct CUDA_MEMCPY3D_st {
    size_t srcXInBytes;
    size_t srcY;
    size_t srcZ;
    size_t srcLOD;
    CUmemorytype srcMemoryType;
    const void *srcHost;
    CUdeviceptr srcDevice;
    CUarray srcArray;
    void *reserved0;
    size_t srcPitch;
    size_t srcHeight;
    size_t dstXInBytes;
    size_t dstY;
    size_t dstZ;
    size_t dstLOD;
    CUmemorytype dstMemoryType;
    void *dstHost;
    CUdeviceptr dstDevice;
    CUarray dstArray;
    void *reserved1;
    size_t dstPitch;
    size_t dstHeight;
    size_t WidthInBytes;
    size_t Height;
    size_t Depth;
} CUDA_MEMCPY3D_v2;
typedef CUDA_MEMCPY3D_v2 CUDA_MEMCPY3D;

/* A 3D copy between contexts: CUDA_MEMCPY3D's sides, each with its context. */
typedef struct CUDA_MEMCPY3D_PEER_st {
    size_t srcXInBytes;
    size_t srcY;
    size_t srcZ;
    size_t srcLOD;
    CUmemorytype srcMemoryType;
    const void *srcHost;
    CUdeviceptr srcDevice;
    CUarray srcArray;
    CUcontext srcContext;
    size_t srcPitch;
    size_t srcHeight;
    size_t dstXInBytes;
    size_t dstY;
    size_t dstZ;
    size_t dstLOD;
    CUmemorytype dstMemoryType;
    void *dstHost;
    CUdeviceptr dstDevice;
    CUarray dstArray;
    CUcontext dstContext;
    size_t dstPitch;
    size_t dstHeight;
    size_t WidthInBytes;
    size_t Height;
    size_t Depth;
} CUDA_MEMCPY3D_PEER_v1;
typedef CUDA_MEMCPY3D_PEER_v1 CUDA_MEMCPY3D_PEER;

/* Batched copies (CUDA 12.8): every copy of a batch names how its source may be read. */
typedef enum CUmemcpyFlags_enum {
    CU_MEMCPY_FLAG_DEFAULT = 0x0,
    CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE = 0x1
} CUmemcpyFlags;

typedef enum CUmemcpySrcAccessOrder_enum {
    CU_MEMCPY_SRC_ACCESS_ORDER_INVALID = 0x0,
    CU_MEMCPY_SRC_ACCESS_ORDER_STREAM = 0x1,
    CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL = 0x2,
    CU_MEMCPY_SRC_ACCESS_ORDER_ANY = 0x3,
    CU_MEMCPY_SRC_ACCESS_ORDER_MAX = 0x7FFFFFFF
} CUmemcpySrcAccessOrder;

typedef struct CUmemcpyAttributes_st {
    CUmemcpySrcAccessOrder srcAccessOrder;
    CUmemLocation srcLocHint;
    CUmemLocation dstLocHint;
    unsigned int flags;
} CUmemcpyAttributes_v1;
typedef CUmemcpyAttributes_v1 CUmemcpyAttributes;

typedef enum CUmemcpy3DOperandType_enum {
    CU_MEMCPY_OPERAND_TYPE_POINTER = 0x1,
    CU_MEMCPY_OPERAND_TYPE_ARRAY = 0x2,
    CU_MEMCPY_OPERAND_TYPE_MAX = 0x7FFFFFFF
} CUmemcpy3DOperandType;

typedef struct CUoffset3D_st {
    size_t x;
    size_t y;
    size_t z;
} CUoffset3D_v1;
typedef CUoffset3D_v1 CUoffset3D;

typedef struct CUextent3D_st {
    size_t width;
    size_t height;
    size_t depth;
} CUextent3D_v1;
typedef CUextent3D_v1 CUextent3D;

/* One side of a batched 3D copy: a pointer with its row length and layer height (in
 * elements), or an array with an offset. */
typedef struct CUmemcpy3DOperand_st {
    CUmemcpy3DOperandType type;
    union {
        struct {
            CUdeviceptr ptr;
            size_t rowLength;
            size_t layerHeight;
            CUmemLocation locHint;
        } ptr;
        struct {
            CUarray array;
            CUoffset3D offset;
        } array;
    } op;
} CUmemcpy3DOperand_v1;
typedef CUmemcpy3DOperand_v1 CUmemcpy3DOperand;

typedef struct CUDA_MEMCPY3D_BATCH_OP_st {
    CUmemcpy3DOperand src;
    CUmemcpy3DOperand dst;
    CUextent3D extent;
    CUmemcpySrcAccessOrder srcAccessOrder;
    unsigned int flags;
} CUDA_MEMCPY3D_BATCH_OP_v1;
typedef CUDA_MEMCPY3D_BATCH_OP_v1 CUDA_MEMCPY3D_BATCH_OP;

/* Only the members the emulator reads are named; the pad and the pointer-bearing member fix the
 * real size (64) and alignment (8). */
typedef union CUlaunchAttributeValue_union {
    char pad[64];
    int cooperative;
    struct {
        unsigned int x;
        unsigned int y;
        unsigned int z;
    } clusterDim;
    int programmaticStreamSerializationAllowed;
    struct {
        CUevent event;
        int flags;
    } launchCompletionEvent;
    int priority;
} CUlaunchAttributeValue;

typedef struct CUlaunchAttribute_st {
    CUlaunchAttributeID id;
    char pad[8 - sizeof(CUlaunchAttributeID)];
    CUlaunchAttributeValue value;
} CUlaunchAttribute;

typedef struct CUlaunchConfig_st {
    unsigned int gridDimX;
    unsigned int gridDimY;
    unsigned int gridDimZ;
    unsigned int blockDimX;
    unsigned int blockDimY;
    unsigned int blockDimZ;
    unsigned int sharedMemBytes;
    CUstream hStream;
    CUlaunchAttribute *attrs;
    unsigned int numAttrs;
} CUlaunchConfig;

/* One device's launch in cuLaunchCooperativeKernelMultiDevice (deprecated, still exported). */
typedef struct CUDA_LAUNCH_PARAMS_st {
    CUfunction function;
    unsigned int gridDimX, gridDimY, gridDimZ;
    unsigned int blockDimX, blockDimY, blockDimZ;
    unsigned int sharedMemBytes;
    CUstream hStream;
    void **kernelParams;
} CUDA_LAUNCH_PARAMS;

/* Process checkpointing (R550+): another process locks, checkpoints, restores and unlocks a
 * CUDA process by pid (cuda-checkpoint, CRIU). Layouts as cuda.h 13.0 has them. */
typedef enum CUprocessState_enum {
    CU_PROCESS_STATE_RUNNING = 0,
    CU_PROCESS_STATE_LOCKED = 1,
    CU_PROCESS_STATE_CHECKPOINTED = 2,
    CU_PROCESS_STATE_FAILED = 3
} CUprocessState;

typedef struct CUcheckpointLockArgs_st {
    unsigned int timeoutMs; /* 0: no timeout */
    unsigned int reserved0;
    cuuint64_t reserved1[7];
} CUcheckpointLockArgs;

typedef struct CUcheckpointCheckpointArgs_st {
    cuuint64_t reserved[8];
} CUcheckpointCheckpointArgs;

typedef struct CUcheckpointGpuPair_st {
    CUuuid oldUuid;
    CUuuid newUuid;
} CUcheckpointGpuPair;

typedef struct CUcheckpointRestoreArgs_st {
    CUcheckpointGpuPair *gpuPairs;
    unsigned int gpuPairsCount;
    char reserved[52 - sizeof(CUcheckpointGpuPair *)];
    cuuint64_t reserved1;
} CUcheckpointRestoreArgs;

typedef struct CUcheckpointUnlockArgs_st {
    cuuint64_t reserved[8];
} CUcheckpointUnlockArgs;

#endif /* CONVGPU_CUDA_DECLS_ONLY */

/* ---- entry points ----------------------------------------------------------------------------
 * CG_CU_DECL(name, (params)) declares the exported function `name` and PFN_name, a pointer to
 * it. One line per symbol, so the prototype and the pointer type cannot drift apart. (The
 * decls test predefines CG_CU_DECL to add a check per symbol.) */

#ifndef CG_CU_DECL
#define CG_CU_DECL(name, params) \
    CUresult name params;        \
    typedef CUresult(*PFN_##name) params
#endif

/* initialisation, version, errors, entry-point lookup */
CG_CU_DECL(cuInit, (unsigned int Flags));
CG_CU_DECL(cuDriverGetVersion, (int *driverVersion));
CG_CU_DECL(cuGetErrorName, (CUresult error, const char **pStr));
CG_CU_DECL(cuGetErrorString, (CUresult error, const char **pStr));
CG_CU_DECL(cuGetProcAddress, (const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags));
CG_CU_DECL(cuGetProcAddress_v2, (const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                                 CUdriverProcAddressQueryResult *symbolStatus));
CG_CU_DECL(cuGetExportTable, (const void **ppExportTable, const CUuuid *pExportTableId));

/* devices */
CG_CU_DECL(cuDeviceGet, (CUdevice *device, int ordinal));
CG_CU_DECL(cuDeviceGetCount, (int *count));
CG_CU_DECL(cuDeviceGetName, (char *name, int len, CUdevice dev));
CG_CU_DECL(cuDeviceGetUuid, (CUuuid *uuid, CUdevice dev));
CG_CU_DECL(cuDeviceGetUuid_v2, (CUuuid *uuid, CUdevice dev));
CG_CU_DECL(cuDeviceGetAttribute, (int *pi, CUdevice_attribute attrib, CUdevice dev));
CG_CU_DECL(cuDeviceTotalMem_v2, (size_t *bytes, CUdevice dev));
CG_CU_DECL(cuDeviceGetDefaultMemPool, (CUmemoryPool *pool_out, CUdevice dev));

/* primary contexts */
CG_CU_DECL(cuDevicePrimaryCtxRetain, (CUcontext *pctx, CUdevice dev));
CG_CU_DECL(cuDevicePrimaryCtxRelease_v2, (CUdevice dev));
CG_CU_DECL(cuDevicePrimaryCtxReset_v2, (CUdevice dev));
CG_CU_DECL(cuDevicePrimaryCtxGetState, (CUdevice dev, unsigned int *flags, int *active));
CG_CU_DECL(cuDevicePrimaryCtxSetFlags_v2, (CUdevice dev, unsigned int flags));

/* contexts */
CG_CU_DECL(cuCtxCreate_v2, (CUcontext *pctx, unsigned int flags, CUdevice dev));
CG_CU_DECL(cuCtxCreate_v3, (CUcontext *pctx, CUexecAffinityParam *paramsArray, int numParams,
                            unsigned int flags, CUdevice dev));
CG_CU_DECL(cuCtxCreate_v4, (CUcontext *pctx, CUctxCreateParams *ctxCreateParams,
                            unsigned int flags, CUdevice dev));
CG_CU_DECL(cuCtxDestroy_v2, (CUcontext ctx));
CG_CU_DECL(cuCtxSetCurrent, (CUcontext ctx));
CG_CU_DECL(cuCtxGetCurrent, (CUcontext *pctx));
CG_CU_DECL(cuCtxPushCurrent_v2, (CUcontext ctx));
CG_CU_DECL(cuCtxPopCurrent_v2, (CUcontext *pctx));
CG_CU_DECL(cuCtxGetDevice, (CUdevice *device));
CG_CU_DECL(cuCtxGetDevice_v2, (CUdevice *device, CUcontext ctx));
CG_CU_DECL(cuCtxSynchronize, (void));
CG_CU_DECL(cuCtxSynchronize_v2, (CUcontext ctx));
CG_CU_DECL(cuCtxGetApiVersion, (CUcontext ctx, unsigned int *version));

/* linear memory */
CG_CU_DECL(cuMemGetInfo_v2, (size_t *free, size_t *total));
CG_CU_DECL(cuMemAlloc_v2, (CUdeviceptr *dptr, size_t bytesize));
CG_CU_DECL(cuMemAllocPitch_v2, (CUdeviceptr *dptr, size_t *pPitch, size_t WidthInBytes,
                                size_t Height, unsigned int ElementSizeBytes));
CG_CU_DECL(cuMemAllocManaged, (CUdeviceptr *dptr, size_t bytesize, unsigned int flags));
CG_CU_DECL(cuMemFree_v2, (CUdeviceptr dptr));
CG_CU_DECL(cuMemGetAddressRange_v2, (CUdeviceptr *pbase, size_t *psize, CUdeviceptr dptr));
CG_CU_DECL(cuMemAllocHost_v2, (void **pp, size_t bytesize));
CG_CU_DECL(cuMemFreeHost, (void *p));

/* copies and sets (each also exists as a per-thread default stream variant below) */
CG_CU_DECL(cuMemcpy, (CUdeviceptr dst, CUdeviceptr src, size_t ByteCount));
CG_CU_DECL(cuMemcpyAsync, (CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream hStream));
CG_CU_DECL(cuMemcpyHtoD_v2, (CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount));
CG_CU_DECL(cuMemcpyDtoH_v2, (void *dstHost, CUdeviceptr srcDevice, size_t ByteCount));
CG_CU_DECL(cuMemcpyDtoD_v2, (CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount));
CG_CU_DECL(cuMemcpyHtoDAsync_v2, (CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount,
                                  CUstream hStream));
CG_CU_DECL(cuMemcpyDtoHAsync_v2, (void *dstHost, CUdeviceptr srcDevice, size_t ByteCount,
                                  CUstream hStream));
CG_CU_DECL(cuMemcpyDtoDAsync_v2, (CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount,
                                  CUstream hStream));
CG_CU_DECL(cuMemsetD8_v2, (CUdeviceptr dstDevice, unsigned char uc, size_t N));
CG_CU_DECL(cuMemsetD32_v2, (CUdeviceptr dstDevice, unsigned int ui, size_t N));
CG_CU_DECL(cuMemsetD8Async, (CUdeviceptr dstDevice, unsigned char uc, size_t N, CUstream hStream));
CG_CU_DECL(cuMemsetD32Async, (CUdeviceptr dstDevice, unsigned int ui, size_t N, CUstream hStream));

/* stream-ordered allocation and memory pools */
CG_CU_DECL(cuMemAllocAsync, (CUdeviceptr *dptr, size_t bytesize, CUstream hStream));
CG_CU_DECL(cuMemFreeAsync, (CUdeviceptr dptr, CUstream hStream));
CG_CU_DECL(cuMemAllocFromPoolAsync, (CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool,
                                     CUstream hStream));
CG_CU_DECL(cuMemPoolCreate, (CUmemoryPool *pool, const CUmemPoolProps *poolProps));
CG_CU_DECL(cuMemPoolDestroy, (CUmemoryPool pool));
CG_CU_DECL(cuMemPoolTrimTo, (CUmemoryPool pool, size_t minBytesToKeep));
CG_CU_DECL(cuMemPoolSetAttribute, (CUmemoryPool pool, CUmemPool_attribute attr, void *value));
CG_CU_DECL(cuMemPoolGetAttribute, (CUmemoryPool pool, CUmemPool_attribute attr, void *value));

/* virtual memory management */
CG_CU_DECL(cuMemGetAllocationGranularity, (size_t *granularity, const CUmemAllocationProp *prop,
                                           CUmemAllocationGranularity_flags option));
CG_CU_DECL(cuMemCreate, (CUmemGenericAllocationHandle *handle, size_t size,
                         const CUmemAllocationProp *prop, unsigned long long flags));
CG_CU_DECL(cuMemRelease, (CUmemGenericAllocationHandle handle));
CG_CU_DECL(cuMemAddressReserve, (CUdeviceptr *ptr, size_t size, size_t alignment, CUdeviceptr addr,
                                 unsigned long long flags));
CG_CU_DECL(cuMemAddressFree, (CUdeviceptr ptr, size_t size));
CG_CU_DECL(cuMemMap, (CUdeviceptr ptr, size_t size, size_t offset,
                      CUmemGenericAllocationHandle handle, unsigned long long flags));
CG_CU_DECL(cuMemUnmap, (CUdeviceptr ptr, size_t size));
CG_CU_DECL(cuMemSetAccess, (CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc,
                            size_t count));

/* arrays */
CG_CU_DECL(cuArrayCreate_v2, (CUarray *pHandle, const CUDA_ARRAY_DESCRIPTOR *pAllocateArray));
CG_CU_DECL(cuArray3DCreate_v2, (CUarray *pHandle, const CUDA_ARRAY3D_DESCRIPTOR *pAllocateArray));
CG_CU_DECL(cuArrayDestroy, (CUarray hArray));
CG_CU_DECL(cuMipmappedArrayCreate, (CUmipmappedArray *pHandle,
                                    const CUDA_ARRAY3D_DESCRIPTOR *pMipmappedArrayDesc,
                                    unsigned int numMipmapLevels));
CG_CU_DECL(cuMipmappedArrayDestroy, (CUmipmappedArray hMipmappedArray));

/* streams and events */
CG_CU_DECL(cuStreamCreate, (CUstream *phStream, unsigned int Flags));
CG_CU_DECL(cuStreamCreateWithPriority, (CUstream *phStream, unsigned int flags, int priority));
CG_CU_DECL(cuStreamDestroy_v2, (CUstream hStream));
CG_CU_DECL(cuStreamSynchronize, (CUstream hStream));
CG_CU_DECL(cuStreamQuery, (CUstream hStream));
CG_CU_DECL(cuEventCreate, (CUevent *phEvent, unsigned int Flags));
CG_CU_DECL(cuEventRecord, (CUevent hEvent, CUstream hStream));
CG_CU_DECL(cuEventSynchronize, (CUevent hEvent));
CG_CU_DECL(cuEventQuery, (CUevent hEvent));
CG_CU_DECL(cuEventElapsedTime, (float *pMilliseconds, CUevent hStart, CUevent hEnd));
CG_CU_DECL(cuEventElapsedTime_v2, (float *pMilliseconds, CUevent hStart, CUevent hEnd));
CG_CU_DECL(cuEventDestroy_v2, (CUevent hEvent));
CG_CU_DECL(cuEventRecordWithFlags, (CUevent hEvent, CUstream hStream, unsigned int flags));
CG_CU_DECL(cuStreamWaitEvent, (CUstream hStream, CUevent hEvent, unsigned int Flags));
CG_CU_DECL(cuLaunchHostFunc, (CUstream hStream, CUhostFn fn, void *userData));
CG_CU_DECL(cuStreamAddCallback, (CUstream hStream, CUstreamCallback callback, void *userData,
                                 unsigned int flags));

/* stream capture and graphs */
CG_CU_DECL(cuStreamBeginCapture, (CUstream hStream));
CG_CU_DECL(cuStreamBeginCapture_v2, (CUstream hStream, CUstreamCaptureMode mode));
CG_CU_DECL(cuStreamEndCapture, (CUstream hStream, CUgraph *phGraph));
CG_CU_DECL(cuStreamIsCapturing, (CUstream hStream, CUstreamCaptureStatus *captureStatus));
CG_CU_DECL(cuGraphCreate, (CUgraph *phGraph, unsigned int flags));
CG_CU_DECL(cuGraphDestroy, (CUgraph hGraph));
CG_CU_DECL(cuGraphAddKernelNode, (CUgraphNode *phGraphNode, CUgraph hGraph,
                                  const CUgraphNode *dependencies, size_t numDependencies,
                                  const CUDA_KERNEL_NODE_PARAMS_v1 *nodeParams));
CG_CU_DECL(cuGraphAddKernelNode_v2, (CUgraphNode *phGraphNode, CUgraph hGraph,
                                     const CUgraphNode *dependencies, size_t numDependencies,
                                     const CUDA_KERNEL_NODE_PARAMS *nodeParams));
CG_CU_DECL(cuGraphAddEmptyNode, (CUgraphNode *phGraphNode, CUgraph hGraph,
                                 const CUgraphNode *dependencies, size_t numDependencies));
CG_CU_DECL(cuGraphKernelNodeGetParams_v2, (CUgraphNode hNode, CUDA_KERNEL_NODE_PARAMS *nodeParams));
CG_CU_DECL(cuGraphNodeGetType, (CUgraphNode hNode, CUgraphNodeType *type));
CG_CU_DECL(cuGraphGetNodes, (CUgraph hGraph, CUgraphNode *nodes, size_t *numNodes));
CG_CU_DECL(cuGraphInstantiate, (CUgraphExec *phGraphExec, CUgraph hGraph, CUgraphNode *phErrorNode,
                                char *logBuffer, size_t bufferSize));
CG_CU_DECL(cuGraphInstantiate_v2, (CUgraphExec *phGraphExec, CUgraph hGraph,
                                   CUgraphNode *phErrorNode, char *logBuffer, size_t bufferSize));
CG_CU_DECL(cuGraphInstantiateWithFlags, (CUgraphExec *phGraphExec, CUgraph hGraph,
                                         unsigned long long flags));
CG_CU_DECL(cuGraphExecDestroy, (CUgraphExec hGraphExec));

/* entry points third-party tools look up (each answers as a real driver does) */
CG_CU_DECL(cuDeviceGetMemPool, (CUmemoryPool *pool, CUdevice dev));
CG_CU_DECL(cuDeviceSetMemPool, (CUdevice dev, CUmemoryPool pool));
CG_CU_DECL(cuDeviceCanAccessPeer, (int *canAccessPeer, CUdevice dev, CUdevice peerDev));
CG_CU_DECL(cuDeviceGetPCIBusId, (char *pciBusId, int len, CUdevice dev));
CG_CU_DECL(cuCtxGetLimit, (size_t *pvalue, CUlimit limit));
CG_CU_DECL(cuCtxSetLimit, (CUlimit limit, size_t value));
CG_CU_DECL(cuCtxGetFlags, (unsigned int *flags));
CG_CU_DECL(cuCtxGetStreamPriorityRange, (int *leastPriority, int *greatestPriority));
CG_CU_DECL(cuPointerGetAttribute, (void *data, CUpointer_attribute attribute, CUdeviceptr ptr));
CG_CU_DECL(cuPointerGetAttributes, (unsigned int numAttributes, CUpointer_attribute *attributes,
                                    void **data, CUdeviceptr ptr));
CG_CU_DECL(cuMemHostAlloc, (void **pp, size_t bytesize, unsigned int Flags));
CG_CU_DECL(cuMemHostRegister_v2, (void *p, size_t bytesize, unsigned int Flags));
CG_CU_DECL(cuMemHostUnregister, (void *p));
CG_CU_DECL(cuMemHostGetDevicePointer_v2, (CUdeviceptr *pdptr, void *p, unsigned int Flags));
CG_CU_DECL(cuMemHostGetFlags, (unsigned int *pFlags, void *p));
CG_CU_DECL(cuMemcpy2D_v2, (const CUDA_MEMCPY2D *pCopy));
CG_CU_DECL(cuMemcpy2DUnaligned_v2, (const CUDA_MEMCPY2D *pCopy));
CG_CU_DECL(cuMemcpy2DAsync_v2, (const CUDA_MEMCPY2D *pCopy, CUstream hStream));
CG_CU_DECL(cuMemcpy3D_v2, (const CUDA_MEMCPY3D *pCopy));
CG_CU_DECL(cuMemcpy3DAsync_v2, (const CUDA_MEMCPY3D *pCopy, CUstream hStream));
CG_CU_DECL(cuMemcpyPeer, (CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice,
                          CUcontext srcContext, size_t ByteCount));
CG_CU_DECL(cuMemcpyPeerAsync, (CUdeviceptr dstDevice, CUcontext dstContext,
                               CUdeviceptr srcDevice, CUcontext srcContext, size_t ByteCount,
                               CUstream hStream));
CG_CU_DECL(cuMemcpy3DPeer, (const CUDA_MEMCPY3D_PEER *pCopy));
CG_CU_DECL(cuMemcpy3DPeerAsync, (const CUDA_MEMCPY3D_PEER *pCopy, CUstream hStream));
/* Batched copies: 12.8's form reports the failing copy's index; 13.0's (_v2) does not. */
CG_CU_DECL(cuMemcpyBatchAsync, (CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes,
                                size_t count, CUmemcpyAttributes *attrs, size_t *attrsIdxs,
                                size_t numAttrs, size_t *failIdx, CUstream hStream));
CG_CU_DECL(cuMemcpyBatchAsync_v2, (CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes,
                                   size_t count, CUmemcpyAttributes *attrs, size_t *attrsIdxs,
                                   size_t numAttrs, CUstream hStream));
CG_CU_DECL(cuMemcpy3DBatchAsync, (size_t numOps, CUDA_MEMCPY3D_BATCH_OP *opList,
                                  size_t *failIdx, unsigned long long flags, CUstream hStream));
CG_CU_DECL(cuMemcpy3DBatchAsync_v2, (size_t numOps, CUDA_MEMCPY3D_BATCH_OP *opList,
                                     unsigned long long flags, CUstream hStream));
CG_CU_DECL(cuMemcpyAtoD_v2, (CUdeviceptr dstDevice, CUarray srcArray, size_t srcOffset,
                             size_t ByteCount));
CG_CU_DECL(cuMemcpyDtoA_v2, (CUarray dstArray, size_t dstOffset, CUdeviceptr srcDevice,
                             size_t ByteCount));
CG_CU_DECL(cuMemcpyAtoH_v2, (void *dstHost, CUarray srcArray, size_t srcOffset,
                             size_t ByteCount));
CG_CU_DECL(cuMemcpyHtoA_v2, (CUarray dstArray, size_t dstOffset, const void *srcHost,
                             size_t ByteCount));
CG_CU_DECL(cuMemcpyAtoA_v2, (CUarray dstArray, size_t dstOffset, CUarray srcArray,
                             size_t srcOffset, size_t ByteCount));
CG_CU_DECL(cuMemcpyAtoHAsync_v2, (void *dstHost, CUarray srcArray, size_t srcOffset,
                                  size_t ByteCount, CUstream hStream));
CG_CU_DECL(cuMemcpyHtoAAsync_v2, (CUarray dstArray, size_t dstOffset, const void *srcHost,
                                  size_t ByteCount, CUstream hStream));
CG_CU_DECL(cuMemsetD16_v2, (CUdeviceptr dstDevice, unsigned short us, size_t N));
CG_CU_DECL(cuMemsetD16Async, (CUdeviceptr dstDevice, unsigned short us, size_t N,
                              CUstream hStream));
CG_CU_DECL(cuMemsetD2D8_v2, (CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc,
                             size_t Width, size_t Height));
CG_CU_DECL(cuMemsetD2D16_v2, (CUdeviceptr dstDevice, size_t dstPitch, unsigned short us,
                              size_t Width, size_t Height));
CG_CU_DECL(cuMemsetD2D32_v2, (CUdeviceptr dstDevice, size_t dstPitch, unsigned int ui,
                              size_t Width, size_t Height));
CG_CU_DECL(cuMemsetD2D8Async, (CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc,
                               size_t Width, size_t Height, CUstream hStream));
CG_CU_DECL(cuMemsetD2D16Async, (CUdeviceptr dstDevice, size_t dstPitch, unsigned short us,
                                size_t Width, size_t Height, CUstream hStream));
CG_CU_DECL(cuMemsetD2D32Async, (CUdeviceptr dstDevice, size_t dstPitch, unsigned int ui,
                                size_t Width, size_t Height, CUstream hStream));
CG_CU_DECL(cuMemPrefetchAsync, (CUdeviceptr devPtr, size_t count, CUdevice dstDevice,
                                CUstream hStream));
CG_CU_DECL(cuMemPrefetchAsync_v2, (CUdeviceptr devPtr, size_t count, CUmemLocation location,
                                   unsigned int flags, CUstream hStream));
CG_CU_DECL(cuMemAdvise, (CUdeviceptr devPtr, size_t count, CUmem_advise advice, CUdevice device));
CG_CU_DECL(cuMemAdvise_v2, (CUdeviceptr devPtr, size_t count, CUmem_advise advice,
                            CUmemLocation location));
CG_CU_DECL(cuFuncGetAttribute, (int *pi, CUfunction_attribute attrib, CUfunction hfunc));
CG_CU_DECL(cuModuleLoadDataEx, (CUmodule *module, const void *image, unsigned int numOptions,
                                CUjit_option *options, void **optionValues));
CG_CU_DECL(cuModuleGetGlobal_v2, (CUdeviceptr *dptr, size_t *bytes, CUmodule hmod,
                                  const char *name));

/* process checkpointing: called by another process with the target's pid */
CG_CU_DECL(cuCheckpointProcessGetRestoreThreadId, (int pid, int *tid));
CG_CU_DECL(cuCheckpointProcessGetState, (int pid, CUprocessState *state));
CG_CU_DECL(cuCheckpointProcessLock, (int pid, CUcheckpointLockArgs *args));
CG_CU_DECL(cuCheckpointProcessCheckpoint, (int pid, CUcheckpointCheckpointArgs *args));
CG_CU_DECL(cuCheckpointProcessRestore, (int pid, CUcheckpointRestoreArgs *args));
CG_CU_DECL(cuCheckpointProcessUnlock, (int pid, CUcheckpointUnlockArgs *args));

/* modules and launches */
CG_CU_DECL(cuModuleLoad, (CUmodule *module, const char *fname));
CG_CU_DECL(cuModuleLoadData, (CUmodule *module, const void *image));
CG_CU_DECL(cuModuleGetFunction, (CUfunction *hfunc, CUmodule hmod, const char *name));
CG_CU_DECL(cuModuleUnload, (CUmodule hmod));
CG_CU_DECL(cuLaunchKernel, (CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                            unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
                            unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
                            void **kernelParams, void **extra));
CG_CU_DECL(cuLaunchKernelEx, (const CUlaunchConfig *config, CUfunction f, void **kernelParams,
                              void **extra));
CG_CU_DECL(cuLaunchCooperativeKernel,
           (CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
            unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,
            unsigned int sharedMemBytes, CUstream hStream, void **kernelParams));

CG_CU_DECL(cuLaunchCooperativeKernelMultiDevice,
           (CUDA_LAUNCH_PARAMS *launchParamsList, unsigned int numDevices, unsigned int flags));
CG_CU_DECL(cuGraphLaunch, (CUgraphExec hGraphExec, CUstream hStream));

/* per-thread default stream variants: what cuGetProcAddress returns under
 * CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM (_ptds: synchronous calls, _ptsz: stream-taking) */
CG_CU_DECL(cuMemcpy_ptds, (CUdeviceptr dst, CUdeviceptr src, size_t ByteCount));
CG_CU_DECL(cuMemcpyAsync_ptsz, (CUdeviceptr dst, CUdeviceptr src, size_t ByteCount,
                                CUstream hStream));
CG_CU_DECL(cuMemcpyHtoD_v2_ptds, (CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount));
CG_CU_DECL(cuMemcpyDtoH_v2_ptds, (void *dstHost, CUdeviceptr srcDevice, size_t ByteCount));
CG_CU_DECL(cuMemcpyDtoD_v2_ptds, (CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount));
CG_CU_DECL(cuMemcpyHtoDAsync_v2_ptsz, (CUdeviceptr dstDevice, const void *srcHost,
                                       size_t ByteCount, CUstream hStream));
CG_CU_DECL(cuMemcpyDtoHAsync_v2_ptsz, (void *dstHost, CUdeviceptr srcDevice, size_t ByteCount,
                                       CUstream hStream));
CG_CU_DECL(cuMemcpyDtoDAsync_v2_ptsz, (CUdeviceptr dstDevice, CUdeviceptr srcDevice,
                                       size_t ByteCount, CUstream hStream));
CG_CU_DECL(cuMemsetD8_v2_ptds, (CUdeviceptr dstDevice, unsigned char uc, size_t N));
CG_CU_DECL(cuMemsetD32_v2_ptds, (CUdeviceptr dstDevice, unsigned int ui, size_t N));
CG_CU_DECL(cuMemsetD8Async_ptsz, (CUdeviceptr dstDevice, unsigned char uc, size_t N,
                                  CUstream hStream));
CG_CU_DECL(cuMemsetD32Async_ptsz, (CUdeviceptr dstDevice, unsigned int ui, size_t N,
                                   CUstream hStream));
CG_CU_DECL(cuMemsetD16_v2_ptds, (CUdeviceptr dstDevice, unsigned short us, size_t N));
CG_CU_DECL(cuMemsetD16Async_ptsz, (CUdeviceptr dstDevice, unsigned short us, size_t N,
                                   CUstream hStream));
CG_CU_DECL(cuMemsetD2D8_v2_ptds, (CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc,
                                  size_t Width, size_t Height));
CG_CU_DECL(cuMemsetD2D16_v2_ptds, (CUdeviceptr dstDevice, size_t dstPitch, unsigned short us,
                                   size_t Width, size_t Height));
CG_CU_DECL(cuMemsetD2D32_v2_ptds, (CUdeviceptr dstDevice, size_t dstPitch, unsigned int ui,
                                   size_t Width, size_t Height));
CG_CU_DECL(cuMemsetD2D8Async_ptsz, (CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc,
                                    size_t Width, size_t Height, CUstream hStream));
CG_CU_DECL(cuMemsetD2D16Async_ptsz, (CUdeviceptr dstDevice, size_t dstPitch, unsigned short us,
                                     size_t Width, size_t Height, CUstream hStream));
CG_CU_DECL(cuMemsetD2D32Async_ptsz, (CUdeviceptr dstDevice, size_t dstPitch, unsigned int ui,
                                     size_t Width, size_t Height, CUstream hStream));
CG_CU_DECL(cuMemcpy2D_v2_ptds, (const CUDA_MEMCPY2D *pCopy));
CG_CU_DECL(cuMemcpy2DUnaligned_v2_ptds, (const CUDA_MEMCPY2D *pCopy));
CG_CU_DECL(cuMemcpy2DAsync_v2_ptsz, (const CUDA_MEMCPY2D *pCopy, CUstream hStream));
CG_CU_DECL(cuMemcpy3D_v2_ptds, (const CUDA_MEMCPY3D *pCopy));
CG_CU_DECL(cuMemcpy3DAsync_v2_ptsz, (const CUDA_MEMCPY3D *pCopy, CUstream hStream));
CG_CU_DECL(cuMemcpyPeer_ptds, (CUdeviceptr dstDevice, CUcontext dstContext,
                               CUdeviceptr srcDevice, CUcontext srcContext, size_t ByteCount));
CG_CU_DECL(cuMemcpyPeerAsync_ptsz, (CUdeviceptr dstDevice, CUcontext dstContext,
                                    CUdeviceptr srcDevice, CUcontext srcContext,
                                    size_t ByteCount, CUstream hStream));
CG_CU_DECL(cuMemcpy3DPeer_ptds, (const CUDA_MEMCPY3D_PEER *pCopy));
CG_CU_DECL(cuMemcpy3DPeerAsync_ptsz, (const CUDA_MEMCPY3D_PEER *pCopy, CUstream hStream));
CG_CU_DECL(cuMemcpyBatchAsync_ptsz, (CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes,
                                     size_t count, CUmemcpyAttributes *attrs, size_t *attrsIdxs,
                                     size_t numAttrs, size_t *failIdx, CUstream hStream));
CG_CU_DECL(cuMemcpy3DBatchAsync_ptsz, (size_t numOps, CUDA_MEMCPY3D_BATCH_OP *opList,
                                       size_t *failIdx, unsigned long long flags,
                                       CUstream hStream));
/* cuda.h 13.0 maps cuMemcpyBatchAsync to these under per-thread default streams without
 * declaring them: declared here as that mapping names them. */
CG_CU_DECL(cuMemcpyBatchAsync_v2_ptsz, (CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes,
                                        size_t count, CUmemcpyAttributes *attrs,
                                        size_t *attrsIdxs, size_t numAttrs, CUstream hStream));
CG_CU_DECL(cuMemcpy3DBatchAsync_v2_ptsz, (size_t numOps, CUDA_MEMCPY3D_BATCH_OP *opList,
                                          unsigned long long flags, CUstream hStream));
CG_CU_DECL(cuMemcpyAtoD_v2_ptds, (CUdeviceptr dstDevice, CUarray srcArray, size_t srcOffset,
                                  size_t ByteCount));
CG_CU_DECL(cuMemcpyDtoA_v2_ptds, (CUarray dstArray, size_t dstOffset, CUdeviceptr srcDevice,
                                  size_t ByteCount));
CG_CU_DECL(cuMemcpyAtoH_v2_ptds, (void *dstHost, CUarray srcArray, size_t srcOffset,
                                  size_t ByteCount));
CG_CU_DECL(cuMemcpyHtoA_v2_ptds, (CUarray dstArray, size_t dstOffset, const void *srcHost,
                                  size_t ByteCount));
CG_CU_DECL(cuMemcpyAtoA_v2_ptds, (CUarray dstArray, size_t dstOffset, CUarray srcArray,
                                  size_t srcOffset, size_t ByteCount));
CG_CU_DECL(cuMemcpyAtoHAsync_v2_ptsz, (void *dstHost, CUarray srcArray, size_t srcOffset,
                                       size_t ByteCount, CUstream hStream));
CG_CU_DECL(cuMemcpyHtoAAsync_v2_ptsz, (CUarray dstArray, size_t dstOffset, const void *srcHost,
                                       size_t ByteCount, CUstream hStream));
CG_CU_DECL(cuMemPrefetchAsync_ptsz, (CUdeviceptr devPtr, size_t count, CUdevice dstDevice,
                                     CUstream hStream));
CG_CU_DECL(cuMemPrefetchAsync_v2_ptsz, (CUdeviceptr devPtr, size_t count, CUmemLocation location,
                                        unsigned int flags, CUstream hStream));
CG_CU_DECL(cuEventRecordWithFlags_ptsz, (CUevent hEvent, CUstream hStream, unsigned int flags));
CG_CU_DECL(cuStreamWaitEvent_ptsz, (CUstream hStream, CUevent hEvent, unsigned int Flags));
CG_CU_DECL(cuLaunchHostFunc_ptsz, (CUstream hStream, CUhostFn fn, void *userData));
CG_CU_DECL(cuStreamAddCallback_ptsz, (CUstream hStream, CUstreamCallback callback,
                                      void *userData, unsigned int flags));
CG_CU_DECL(cuStreamBeginCapture_ptsz, (CUstream hStream));
CG_CU_DECL(cuStreamBeginCapture_v2_ptsz, (CUstream hStream, CUstreamCaptureMode mode));
CG_CU_DECL(cuStreamEndCapture_ptsz, (CUstream hStream, CUgraph *phGraph));
CG_CU_DECL(cuStreamIsCapturing_ptsz, (CUstream hStream, CUstreamCaptureStatus *captureStatus));
CG_CU_DECL(cuMemAllocAsync_ptsz, (CUdeviceptr *dptr, size_t bytesize, CUstream hStream));
CG_CU_DECL(cuMemFreeAsync_ptsz, (CUdeviceptr dptr, CUstream hStream));
CG_CU_DECL(cuMemAllocFromPoolAsync_ptsz, (CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool,
                                          CUstream hStream));
CG_CU_DECL(cuStreamSynchronize_ptsz, (CUstream hStream));
CG_CU_DECL(cuStreamQuery_ptsz, (CUstream hStream));
CG_CU_DECL(cuEventRecord_ptsz, (CUevent hEvent, CUstream hStream));
CG_CU_DECL(cuLaunchKernel_ptsz, (CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                 unsigned int gridDimZ, unsigned int blockDimX,
                                 unsigned int blockDimY, unsigned int blockDimZ,
                                 unsigned int sharedMemBytes, CUstream hStream,
                                 void **kernelParams, void **extra));
CG_CU_DECL(cuLaunchKernelEx_ptsz, (const CUlaunchConfig *config, CUfunction f,
                                   void **kernelParams, void **extra));
CG_CU_DECL(cuLaunchCooperativeKernel_ptsz,
           (CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
            unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,
            unsigned int sharedMemBytes, CUstream hStream, void **kernelParams));
CG_CU_DECL(cuGraphLaunch_ptsz, (CUgraphExec hGraphExec, CUstream hStream));

#endif

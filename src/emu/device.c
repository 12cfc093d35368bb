/* device.c — device enumeration and properties. The emulated GPU presents itself as an
 * A100-class part (compute capability 8.0, 108 SMs); only memory size differs per device. */
#include "driver.h"
#include "image.h"

#include <stdio.h>
#include <string.h>

CUresult emu_device(CUdevice dev, unsigned *phys)
{
    if (dev < 0 || (unsigned)dev >= g_emu.nvis)
        return CUDA_ERROR_INVALID_DEVICE;
    if (phys)
        *phys = g_emu.vis[dev];
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetCount(int *count)
{
    CUresult rc = emu_enter();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (!count)
        return CUDA_ERROR_INVALID_VALUE;
    *count = (int)g_emu.nvis;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGet(CUdevice *device, int ordinal)
{
    CUresult rc = emu_enter();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (!device)
        return CUDA_ERROR_INVALID_VALUE;
    if ((rc = emu_device(ordinal, NULL)) != CUDA_SUCCESS)
        return rc;
    *device = ordinal;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetName(char *name, int len, CUdevice dev)
{
    unsigned phys;
    CUresult rc = emu_enter();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (!name || len <= 0)
        return CUDA_ERROR_INVALID_VALUE;
    if ((rc = emu_device(dev, &phys)) != CUDA_SUCCESS)
        return rc;
    emu_device_name(g_emu.cfg.total[phys], name, (size_t)len);
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice dev)
{
    unsigned phys;
    CUresult rc = emu_enter();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (!uuid)
        return CUDA_ERROR_INVALID_VALUE;
    if ((rc = emu_device(dev, &phys)) != CUDA_SUCCESS)
        return rc;
    memcpy(uuid->bytes, g_emu.uuid[phys], sizeof uuid->bytes);
    return CUDA_SUCCESS;
}

/* Before CUDA 11.4 the two differed only for MIG instances, which are not emulated. */
CUresult cuDeviceGetUuid(CUuuid *uuid, CUdevice dev) { return cuDeviceGetUuid_v2(uuid, dev); }

CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
    unsigned phys;
    CUresult rc = emu_enter();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (!bytes)
        return CUDA_ERROR_INVALID_VALUE;
    if ((rc = emu_device(dev, &phys)) != CUDA_SUCCESS)
        return rc;
    *bytes = (size_t)g_emu.cfg.total[phys];
    return CUDA_SUCCESS;
}

static int attribute(CUdevice_attribute a, unsigned phys, int *v)
{
    switch (a) {
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *v = 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X: *v = 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y: *v = 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z: *v = 64; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X: *v = 2147483647; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y: *v = 65535; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z: *v = 65535; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: *v = 48 * 1024; break;
    case CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY: *v = 64 * 1024; break;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE: *v = 32; break;
    case CU_DEVICE_ATTRIBUTE_MAX_PITCH: *v = 2147483647; break;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK: *v = 65536; break;
    case CU_DEVICE_ATTRIBUTE_CLOCK_RATE: *v = 1410000; break; /* kHz */
    case CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT: *v = (int)EMU_PITCH_ALIGNMENT; break;
    case CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT: *v = (int)EMU_PITCH_ALIGNMENT; break;
    case CU_DEVICE_ATTRIBUTE_SURFACE_ALIGNMENT: *v = (int)EMU_PITCH_ALIGNMENT; break;
    case CU_DEVICE_ATTRIBUTE_GPU_OVERLAP: *v = 1; break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *v = 108; break;
    case CU_DEVICE_ATTRIBUTE_KERNEL_EXEC_TIMEOUT: *v = 0; break;
    case CU_DEVICE_ATTRIBUTE_INTEGRATED: *v = 0; break;
    case CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY: *v = 1; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_MODE: *v = 0; break; /* default (shared) */
    case CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS: *v = 1; break;
    case CU_DEVICE_ATTRIBUTE_ECC_ENABLED: *v = 0; break;
    case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID: *v = (int)(phys + 1); break;
    case CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID: *v = 0; break;
    case CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID: *v = 0; break;
    case CU_DEVICE_ATTRIBUTE_TCC_DRIVER: *v = 0; break;
    case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE: *v = 1215000; break; /* kHz */
    case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH: *v = 5120; break;
    case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: *v = 40 * 1024 * 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR: *v = 2048; break;
    case CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT: *v = 2; break;
    case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING: *v = 1; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *v = EMU_COMPUTE_CAPABILITY / 10; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *v = EMU_COMPUTE_CAPABILITY % 10; break;
    case CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED: *v = 1; break;
    case CU_DEVICE_ATTRIBUTE_GLOBAL_L1_CACHE_SUPPORTED: *v = 1; break;
    case CU_DEVICE_ATTRIBUTE_LOCAL_L1_CACHE_SUPPORTED: *v = 1; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR: *v = 164 * 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR: *v = 65536; break;
    case CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY: *v = 1; break;
    case CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD: *v = 0; break;
    case CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS: *v = 0; break;
    case CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS: *v = 1; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_PREEMPTION_SUPPORTED: *v = 1; break;
    case CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH: *v = 1; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: *v = 163 * 1024; break;
    case CU_DEVICE_ATTRIBUTE_DIRECT_MANAGED_MEM_ACCESS_FROM_HOST: *v = 1; break;
    case CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED: *v = 1; break;
    case CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED: *v = 0; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR: *v = 32; break;
    case CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED: *v = 1; break;
    case CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES: *v = 0; break;
    default: return -1;
    }
    return 0;
}

CUresult cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev)
{
    unsigned phys;
    CUresult rc = emu_enter();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (!pi)
        return CUDA_ERROR_INVALID_VALUE;
    if ((rc = emu_device(dev, &phys)) != CUDA_SUCCESS)
        return rc;
    return attribute(attrib, phys, pi) == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* Peer access is not emulated: no device can access another's memory (nor "its own", which the
 * driver does not count as peer access either). */
CUresult cuDeviceCanAccessPeer(int *canAccessPeer, CUdevice dev, CUdevice peerDev)
{
    CUresult rc = emu_enter();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (!canAccessPeer)
        return CUDA_ERROR_INVALID_VALUE;
    if ((rc = emu_device(dev, NULL)) != CUDA_SUCCESS ||
        (rc = emu_device(peerDev, NULL)) != CUDA_SUCCESS)
        return rc;
    *canAccessPeer = 0;
    return CUDA_SUCCESS;
}

/* "domain:bus:device.function" in hexadecimal; bus = physical index + 1, as
 * CU_DEVICE_ATTRIBUTE_PCI_BUS_ID says (NVML reports the same bus). Truncated to len like
 * cuDeviceGetName. */
CUresult cuDeviceGetPCIBusId(char *pciBusId, int len, CUdevice dev)
{
    unsigned phys;
    CUresult rc = emu_enter();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (!pciBusId || len <= 0)
        return CUDA_ERROR_INVALID_VALUE;
    if ((rc = emu_device(dev, &phys)) != CUDA_SUCCESS)
        return rc;
    snprintf(pciBusId, (size_t)len, "%04x:%02x:%02x.0", 0u, phys + 1, 0u);
    return CUDA_SUCCESS;
}

/* hook_info.c — memory information as the container should see it, computed from the ledger
 * alone (no round trip): total = the container's limit, free = limit - the container's use,
 * never negative. The real call still runs first so its errors (no context, bad device) and
 * any fields we do not own stay the driver's. */
#include "account.h"
#include "config.h"
#include "hooks.h"
#include "pool.h"

CG_EXPORT CUresult cuMemGetInfo_v2(size_t *free, size_t *total)
{
    PFN_cuMemGetInfo_v2 real = CG_REAL(cuMemGetInfo_v2);
    if (CG_UNLIKELY(!real))
        return CUDA_ERROR_NOT_INITIALIZED;
    CUresult r = real(free, total);
    if (CG_LIKELY(!cg_enabled()) || r != CUDA_SUCCESS)
        return r;
    cg_pool_shrink_all(); /* pools may have released memory at a synchronisation */
    uint64_t f, t;
    if (cg_meminfo_on(cg_member(), &f, &t)) {
        if (free)
            *free = (size_t)f;
        if (total)
            *total = (size_t)t;
    }
    return r;
}

CG_EXPORT CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
    PFN_cuDeviceTotalMem_v2 real = CG_REAL(cuDeviceTotalMem_v2);
    if (CG_UNLIKELY(!real))
        return CUDA_ERROR_NOT_INITIALIZED;
    CUresult r = real(bytes, dev);
    uint64_t f, t;
    if (CG_LIKELY(!cg_enabled()) || r != CUDA_SUCCESS || !bytes)
        return r;
    if (cg_meminfo_on(cg_member_of_ordinal(dev), &f, &t))
        *bytes = (size_t)t;
    return r;
}

/* NVML sees every GPU of the node; only the container's own devices are virtualised, each
 * with its own limit (its member's, client.h). */
static _Atomic(void *) c_index;

static unsigned member_of(nvmlDevice_t dev)
{
    PFN_nvmlDeviceGetIndex f =
        (PFN_nvmlDeviceGetIndex)cg_lib_sym(CG_LIB_NVML, &c_index, "nvmlDeviceGetIndex");
    unsigned idx;
    if (!f || f(dev, &idx) != NVML_SUCCESS)
        return CG_MEMBER_NONE;
    return cg_member_of_node_device(idx);
}

CG_EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory)
{
    PFN_nvmlDeviceGetMemoryInfo real = CG_REAL(nvmlDeviceGetMemoryInfo);
    if (CG_UNLIKELY(!real))
        return NVML_ERROR_UNINITIALIZED;
    nvmlReturn_t r = real(device, memory);
    uint64_t f, t;
    if (CG_LIKELY(!cg_enabled()) || r != NVML_SUCCESS || !memory ||
        !cg_meminfo_on(member_of(device), &f, &t))
        return r;
    memory->total = t;
    memory->free = f;
    memory->used = t - f;
    return r;
}

CG_EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device, nvmlMemory_v2_t *memory)
{
    PFN_nvmlDeviceGetMemoryInfo_v2 real = CG_REAL(nvmlDeviceGetMemoryInfo_v2);
    if (CG_UNLIKELY(!real))
        return NVML_ERROR_UNINITIALIZED;
    nvmlReturn_t r = real(device, memory);
    uint64_t f, t;
    if (CG_LIKELY(!cg_enabled()) || r != NVML_SUCCESS || !memory ||
        !cg_meminfo_on(member_of(device), &f, &t))
        return r;
    memory->total = t;
    memory->reserved = 0; /* the driver's own reservation is part of the container's use */
    memory->free = f;
    memory->used = t - f;
    return r;
}

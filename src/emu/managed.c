/* managed.c — the hints of managed memory: cuMemAdvise and cuMemPrefetchAsync. Managed memory
 * is always resident here (charged to its device at allocation, reachable from the host and
 * the device alike), so a hint changes nothing; each is checked as the driver checks it: the
 * range must lie in one managed allocation (the emulated devices report no pageable memory
 * access), the advice and the location must be valid, and a prefetch's stream must be one. */
#include "workq.h"

static int managed_range(CUdeviceptr p, size_t n)
{
    emu_rdlock();
    const emu_alloc *a = emu_alloc_find((uintptr_t)p);
    int ok = a && a->kind == EMU_A_MANAGED && n <= a->base + a->size - (uintptr_t)p;
    emu_unlock();
    return ok;
}

static CUresult check_location(CUmemLocation loc)
{
    switch (loc.type) {
    case CU_MEM_LOCATION_TYPE_DEVICE:
        return emu_device(loc.id, NULL) == CUDA_SUCCESS ? CUDA_SUCCESS
                                                          : CUDA_ERROR_INVALID_DEVICE;
    case CU_MEM_LOCATION_TYPE_HOST:
    case CU_MEM_LOCATION_TYPE_HOST_NUMA:
    case CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT:
        return CUDA_SUCCESS;
    default:
        return CUDA_ERROR_INVALID_VALUE;
    }
}

static CUmemLocation location_of(CUdevice dev)
{
    CUmemLocation loc = {CU_MEM_LOCATION_TYPE_DEVICE, dev};
    if (dev == CU_DEVICE_CPU)
        loc.type = CU_MEM_LOCATION_TYPE_HOST;
    return loc;
}

static CUresult advise(CUdeviceptr p, size_t n, CUmem_advise advice, CUmemLocation loc)
{
    CUresult rc = emu_enter();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (n == 0 || advice < CU_MEM_ADVISE_SET_READ_MOSTLY || advice > CU_MEM_ADVISE_UNSET_ACCESSED_BY)
        return CUDA_ERROR_INVALID_VALUE;
    if ((rc = check_location(loc)) != CUDA_SUCCESS)
        return rc;
    return managed_range(p, n) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuMemAdvise(CUdeviceptr devPtr, size_t count, CUmem_advise advice, CUdevice device)
{
    return advise(devPtr, count, advice, location_of(device));
}

CUresult cuMemAdvise_v2(CUdeviceptr devPtr, size_t count, CUmem_advise advice,
                        CUmemLocation location)
{
    return advise(devPtr, count, advice, location);
}

static CUresult prefetch(CUdeviceptr p, size_t n, CUmemLocation loc, unsigned flags, CUstream h,
                         int ptsz)
{
    struct CUstream_st *s;
    CUresult rc = emu_enter();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (n == 0 || flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    if ((rc = check_location(loc)) != CUDA_SUCCESS)
        return rc;
    if ((rc = emu_stream_get(h, ptsz, &s)) != CUDA_SUCCESS)
        return rc;
    emu_stream_put(s);
    return managed_range(p, n) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuMemPrefetchAsync(CUdeviceptr devPtr, size_t count, CUdevice dstDevice, CUstream hStream)
{
    return prefetch(devPtr, count, location_of(dstDevice), 0, hStream, 0);
}

CUresult cuMemPrefetchAsync_ptsz(CUdeviceptr devPtr, size_t count, CUdevice dstDevice,
                                 CUstream hStream)
{
    return prefetch(devPtr, count, location_of(dstDevice), 0, hStream, 1);
}

CUresult cuMemPrefetchAsync_v2(CUdeviceptr devPtr, size_t count, CUmemLocation location,
                               unsigned int flags, CUstream hStream)
{
    return prefetch(devPtr, count, location, flags, hStream, 0);
}

CUresult cuMemPrefetchAsync_v2_ptsz(CUdeviceptr devPtr, size_t count, CUmemLocation location,
                                    unsigned int flags, CUstream hStream)
{
    return prefetch(devPtr, count, location, flags, hStream, 1);
}

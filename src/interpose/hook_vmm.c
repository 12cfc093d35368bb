/* hook_vmm.c — virtual memory management: physical memory is what cuMemCreate makes and
 * cuMemRelease gives back, so it is charged by handle (reserving and mapping address space
 * costs no GPU memory). PyTorch's expandable segments and NCCL allocate this way. */
#include "account.h"
#include "alloctab.h"
#include "config.h"
#include "hooks.h"

CG_EXPORT CUresult cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size,
                               const CUmemAllocationProp *prop, unsigned long long flags)
{
    PFN_cuMemCreate real = CG_REAL(cuMemCreate);
    if (CG_UNLIKELY(!real))
        return CUDA_ERROR_NOT_INITIALIZED;
    /* Host-located allocations (CUDA 12.2+) take no GPU memory. */
    if (CG_LIKELY(!cg_enabled()) || !handle || size == 0 || !prop ||
        prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE)
        return real(handle, size, prop, flags);
    uint64_t charged;
    unsigned m = cg_alloc_member(); /* which GPU: the one the allocation is placed on */
    if (m < CG_IP_MEMBERS)
        m = cg_member_of_ordinal(prop->location.id);
    if (cg_charge_on(m, size, &charged) < 0)
        return CUDA_ERROR_OUT_OF_MEMORY;
    CUresult r;
    int attempt = 0;
    while ((r = real(handle, size, prop, flags)) == CUDA_ERROR_OUT_OF_MEMORY &&
           cg_driver_retry(&attempt))
        ;
    if (r != CUDA_SUCCESS) {
        cg_uncharge_on(m, charged);
        return r;
    }
    if (cg_alloc_put(CG_SPACE_HANDLE, *handle, charged, NULL, m) < 0) {
        PFN_cuMemRelease rel = CG_REAL(cuMemRelease);
        if (rel)
            rel(*handle);
        cg_uncharge_on(m, charged);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    return CUDA_SUCCESS;
}

/* The driver keeps a released handle's memory alive while it is still mapped; we return the
 * charge at release, which is when the program has given it up. */
CG_EXPORT CUresult cuMemRelease(CUmemGenericAllocationHandle handle)
{
    PFN_cuMemRelease real = CG_REAL(cuMemRelease);
    if (CG_UNLIKELY(!real))
        return CUDA_ERROR_NOT_INITIALIZED;
    struct cg_alloc a;
    if (CG_LIKELY(!cg_enabled()) || !cg_alloc_take(CG_SPACE_HANDLE, handle, &a))
        return real(handle);
    CUresult r = real(handle);
    if (r != CUDA_SUCCESS) {
        cg_alloc_put_back(&a);
        return r;
    }
    cg_uncharge_on(a.member, a.bytes);
    return r;
}

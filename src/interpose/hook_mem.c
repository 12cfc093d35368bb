/* hook_mem.c — linear device memory: plain, pitched and managed allocations and cuMemFree.
 *
 * Every allocation is reserved before the driver is called and rolled back if the driver fails,
 * so two threads (or processes) can never both pass the limit check; the daemon is asked only
 * when our slot's quota is short. */
#include "account.h"
#include "alloctab.h"
#include "config.h"
#include "hooks.h"
#include "pool.h"
#include "gate.h"

/* Records a successful allocation; if it cannot be recorded it cannot be charged back later,
 * so it is undone and reported as out of memory rather than leaked from the account. */
static CUresult keep(CUdeviceptr p, uint64_t charged, unsigned m)
{
    if (cg_alloc_put(CG_SPACE_PTR, p, charged, NULL, m) == 0)
        return CUDA_SUCCESS;
    PFN_cuMemFree_v2 f = CG_REAL(cuMemFree_v2);
    if (f)
        f(p);
    cg_uncharge_on(m, charged);
    return CUDA_ERROR_OUT_OF_MEMORY;
}

/* In a container that swaps: served from memory a free kept (already charged), else charged
 * (`charge` bytes) and served from VMM (swap.h); behind the gate, since while the container is
 * out no new device memory may appear under it. Only a container on one GPU swaps (a container
 * on several never does, gang.c), so its account is member 0's. */
static CUresult alloc_swappable(CUdeviceptr *dptr, size_t bytesize, uint64_t charge)
{
    uint64_t charged, id = 0;
    struct cg_gate_ticket t = cg_gate_pass();
    CUresult r = cg_swap_reuse(dptr, bytesize, &charged, &id);
    cg_gate_leave(t);
    if (r != CUDA_SUCCESS) {
        if (cg_charge_on(0, charge, &charged) < 0)
            return CUDA_ERROR_OUT_OF_MEMORY;
        int attempt = 0;
        t = cg_gate_pass();
        while ((r = cg_swap_alloc(dptr, bytesize, charged, &id)) == CUDA_ERROR_OUT_OF_MEMORY &&
               cg_driver_retry(&attempt))
            ;
        cg_gate_leave(t);
        if (r != CUDA_SUCCESS) {
            cg_uncharge_on(0, charged);
            return r;
        }
    }
    if (cg_alloc_put_swap(*dptr, charged, id) == 0)
        return CUDA_SUCCESS;
    cg_swap_free_gated(id, NULL);
    cg_uncharge_on(0, charged);
    return CUDA_ERROR_OUT_OF_MEMORY;
}

CG_EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
    PFN_cuMemAlloc_v2 real = CG_REAL(cuMemAlloc_v2);
    if (CG_UNLIKELY(!real))
        return CUDA_ERROR_NOT_INITIALIZED;
    if (CG_LIKELY(!cg_enabled()) || !dptr || bytesize == 0)
        return real(dptr, bytesize);
    uint64_t charged;
    unsigned m = cg_alloc_member();
    if (m == 0 && cg_swap_wanted())
        return alloc_swappable(dptr, bytesize, bytesize);
    if (cg_charge_on(m, bytesize, &charged) < 0)
        return CUDA_ERROR_OUT_OF_MEMORY;
    CUresult r;
    int attempt = 0;
    while ((r = real(dptr, bytesize)) == CUDA_ERROR_OUT_OF_MEMORY && cg_driver_retry(&attempt))
        ;
    if (r != CUDA_SUCCESS) {
        cg_uncharge_on(m, charged);
        return r;
    }
    return keep(*dptr, charged, m);
}

CG_EXPORT CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags)
{
    PFN_cuMemAllocManaged real = CG_REAL(cuMemAllocManaged);
    if (CG_UNLIKELY(!real))
        return CUDA_ERROR_NOT_INITIALIZED;
    if (CG_LIKELY(!cg_enabled()) || !dptr || bytesize == 0)
        return real(dptr, bytesize, flags);
    uint64_t charged;
    unsigned m = cg_alloc_member();
    if (cg_charge_on(m, bytesize, &charged) < 0)
        return CUDA_ERROR_OUT_OF_MEMORY;
    CUresult r;
    int attempt = 0;
    while ((r = real(dptr, bytesize, flags)) == CUDA_ERROR_OUT_OF_MEMORY &&
           cg_driver_retry(&attempt))
        ;
    if (r != CUDA_SUCCESS) {
        cg_uncharge_on(m, charged);
        return r;
    }
    return keep(*dptr, charged, m);
}

/* Pitched: the driver picks the pitch. Reserve for the usual 512-byte alignment, then true up
 * to what it really took (pitch x height). */
CG_EXPORT CUresult cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pPitch, size_t WidthInBytes,
                                      size_t Height, unsigned int ElementSizeBytes)
{
    PFN_cuMemAllocPitch_v2 real = CG_REAL(cuMemAllocPitch_v2);
    if (CG_UNLIKELY(!real))
        return CUDA_ERROR_NOT_INITIALIZED;
    if (CG_LIKELY(!cg_enabled()) || !dptr || !pPitch || WidthInBytes == 0 || Height == 0)
        return real(dptr, pPitch, WidthInBytes, Height, ElementSizeBytes);
    uint64_t est, charged;
    unsigned m = cg_alloc_member();
    if (WidthInBytes > SIZE_MAX - 511 ||
        __builtin_mul_overflow((uint64_t)((WidthInBytes + 511) & ~(size_t)511), Height, &est))
        return CUDA_ERROR_OUT_OF_MEMORY;
    if (m == 0 && cg_swap_wanted()) {
        /* Swappable: we choose the pitch (512-byte aligned, what the charge assumes and a
         * multiple of every texture pitch alignment) and serve pitch x height from VMM. */
        if (ElementSizeBytes != 4 && ElementSizeBytes != 8 && ElementSizeBytes != 16)
            return CUDA_ERROR_INVALID_VALUE;
        CUresult r = alloc_swappable(dptr, (size_t)est, est);
        if (r == CUDA_SUCCESS)
            *pPitch = (WidthInBytes + 511) & ~(size_t)511;
        return r;
    }
    if (cg_charge_on(m, est, &charged) < 0)
        return CUDA_ERROR_OUT_OF_MEMORY;
    CUresult r;
    int attempt = 0;
    while ((r = real(dptr, pPitch, WidthInBytes, Height, ElementSizeBytes)) ==
               CUDA_ERROR_OUT_OF_MEMORY &&
           cg_driver_retry(&attempt))
        ;
    if (r != CUDA_SUCCESS) {
        cg_uncharge_on(m, charged);
        return r;
    }
    uint64_t took, actual;
    if (__builtin_mul_overflow((uint64_t)*pPitch, Height, &took))
        took = UINT64_MAX;
    actual = cg_charge_size(took);
    if (actual > charged) {
        uint64_t more;
        if (actual == 0 || cg_charge_on(m, actual - charged, &more) < 0) {
            PFN_cuMemFree_v2 f = CG_REAL(cuMemFree_v2);
            if (f)
                f(*dptr);
            cg_uncharge_on(m, charged);
            return CUDA_ERROR_OUT_OF_MEMORY;
        }
        charged += more;
    } else if (actual < charged) {
        cg_uncharge_on(m, charged - actual);
        charged = actual;
    }
    return keep(*dptr, charged, m);
}

CG_EXPORT CUresult cuMemFree_v2(CUdeviceptr dptr)
{
    PFN_cuMemFree_v2 real = CG_REAL(cuMemFree_v2);
    if (CG_UNLIKELY(!real))
        return CUDA_ERROR_NOT_INITIALIZED;
    struct cg_alloc a;
    if (CG_LIKELY(!cg_enabled()) || !cg_alloc_take(CG_SPACE_PTR, dptr, &a))
        return real(dptr);
    bool kept = false;
    CUresult r = a.swap ? cg_swap_free_gated(a.swap, &kept) : real(dptr);
    if (r != CUDA_SUCCESS) {
        cg_alloc_put_back(&a);
        return r;
    }
    if (!kept) /* kept memory stays charged until it is reused or dropped (swap.h) */
        cg_uncharge_on(a.member, a.bytes);
    if (a.pool) /* a stream-ordered allocation freed synchronously */
        cg_pool_settle(a.pool, a.member, 0);
    return r;
}

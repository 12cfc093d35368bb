/* hook_async.c — stream-ordered allocation: cuMemAllocAsync, cuMemAllocFromPoolAsync,
 * cuMemFreeAsync (each also as its per-thread-stream _ptsz variant), and the pool calls that
 * change what a pool holds (trim, destroy). Charging is per pool or per allocation, see pool.h. */
#include "account.h"
#include "alloctab.h"
#include "config.h"
#include "hooks.h"
#include "pool.h"
#include "gate.h"

static CUresult free_async(int ptsz, CUdeviceptr p, CUstream s)
{
    PFN_cuMemFreeAsync f = ptsz ? CG_REAL(cuMemFreeAsync_ptsz) : CG_REAL(cuMemFreeAsync);
    return f ? f(p, s) : CUDA_ERROR_NOT_INITIALIZED;
}

static CUresult call_alloc(int id, CUdeviceptr *d, size_t n, CUmemoryPool pool, CUstream s)
{
    switch (id) {
    case CG_ID_cuMemAllocAsync: return CG_REAL(cuMemAllocAsync)(d, n, s);
    case CG_ID_cuMemAllocAsync_ptsz: return CG_REAL(cuMemAllocAsync_ptsz)(d, n, s);
    case CG_ID_cuMemAllocFromPoolAsync: return CG_REAL(cuMemAllocFromPoolAsync)(d, n, pool, s);
    default: return CG_REAL(cuMemAllocFromPoolAsync_ptsz)(d, n, pool, s);
    }
}

/* The charged path; the caller has checked that the real function exists. */
static CUresult alloc_async(int id, CUdeviceptr *dptr, size_t n, CUmemoryPool pool, CUstream s)
{
    int ptsz = cg_hooks[id].ptds;
    if (id == CG_ID_cuMemAllocAsync || id == CG_ID_cuMemAllocAsync_ptsz)
        pool = (CUmemoryPool)cg_pool_current();
    int by_reserve = pool && cg_pool_by_reserve(pool);
    uint64_t charged;
    unsigned m = cg_alloc_member();
    if (cg_charge_on(m, n, &charged) < 0)
        return CUDA_ERROR_OUT_OF_MEMORY;
    CUresult r;
    int attempt = 0;
    while ((r = call_alloc(id, dptr, n, pool, s)) == CUDA_ERROR_OUT_OF_MEMORY &&
           cg_driver_retry(&attempt))
        ;
    if (r != CUDA_SUCCESS) {
        cg_uncharge_on(m, charged);
        return r;
    }
    if (!by_reserve) {
        if (cg_alloc_put(CG_SPACE_PTR, *dptr, charged, NULL, m) == 0)
            return CUDA_SUCCESS;
        free_async(ptsz, *dptr, s);
        cg_uncharge_on(m, charged);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    /* The pool is charged as a whole; the entry only remembers which pool to settle on free. */
    if (cg_alloc_put(CG_SPACE_PTR, *dptr, 0, pool, m) < 0) {
        free_async(ptsz, *dptr, s);
        cg_pool_settle(pool, m, charged);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    if (cg_pool_settle(pool, m, charged) < 0) {
        struct cg_alloc a;
        cg_alloc_take(CG_SPACE_PTR, *dptr, &a);
        free_async(ptsz, *dptr, s);
        cg_pool_settle(pool, m, 0);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    return CUDA_SUCCESS;
}

#define ALLOC_ASYNC(sym, ...)                                                                     \
    PFN_##sym real = CG_REAL(sym);                                                                 \
    if (CG_UNLIKELY(!real))                                                                        \
        return CUDA_ERROR_NOT_INITIALIZED;                                                         \
    if (CG_LIKELY(!cg_enabled()) || !dptr || bytesize == 0)                                        \
        return real(__VA_ARGS__);

CG_EXPORT CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
    ALLOC_ASYNC(cuMemAllocAsync, dptr, bytesize, hStream)
    return alloc_async(CG_ID_cuMemAllocAsync, dptr, bytesize, NULL, hStream);
}

CG_EXPORT CUresult cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
    ALLOC_ASYNC(cuMemAllocAsync_ptsz, dptr, bytesize, hStream)
    return alloc_async(CG_ID_cuMemAllocAsync_ptsz, dptr, bytesize, NULL, hStream);
}

CG_EXPORT CUresult cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool,
                                           CUstream hStream)
{
    ALLOC_ASYNC(cuMemAllocFromPoolAsync, dptr, bytesize, pool, hStream)
    return alloc_async(CG_ID_cuMemAllocFromPoolAsync, dptr, bytesize, pool, hStream);
}

CG_EXPORT CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t bytesize,
                                                CUmemoryPool pool, CUstream hStream)
{
    ALLOC_ASYNC(cuMemAllocFromPoolAsync_ptsz, dptr, bytesize, pool, hStream)
    return alloc_async(CG_ID_cuMemAllocFromPoolAsync_ptsz, dptr, bytesize, pool, hStream);
}

static CUresult free_charged(PFN_cuMemFreeAsync real, CUdeviceptr dptr, CUstream s)
{
    struct cg_alloc a;
    if (CG_LIKELY(!cg_enabled()) || !cg_alloc_take(CG_SPACE_PTR, dptr, &a))
        return real(dptr, s);
    bool kept = false;
    CUresult r = a.swap ? cg_swap_free_gated(a.swap, &kept) : real(dptr, s);
    if (r != CUDA_SUCCESS) {
        cg_alloc_put_back(&a);
        return r;
    }
    if (!kept)
        cg_uncharge_on(a.member, a.bytes);
    if (a.pool)
        cg_pool_settle(a.pool, a.member, 0);
    return r;
}

CG_EXPORT CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream)
{
    PFN_cuMemFreeAsync real = CG_REAL(cuMemFreeAsync);
    if (CG_UNLIKELY(!real))
        return CUDA_ERROR_NOT_INITIALIZED;
    return free_charged(real, dptr, hStream);
}

CG_EXPORT CUresult cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream hStream)
{
    PFN_cuMemFreeAsync_ptsz real = CG_REAL(cuMemFreeAsync_ptsz);
    if (CG_UNLIKELY(!real))
        return CUDA_ERROR_NOT_INITIALIZED;
    return free_charged(real, dptr, hStream);
}

CG_EXPORT CUresult cuMemPoolTrimTo(CUmemoryPool pool, size_t minBytesToKeep)
{
    PFN_cuMemPoolTrimTo real = CG_REAL(cuMemPoolTrimTo);
    if (CG_UNLIKELY(!real))
        return CUDA_ERROR_NOT_INITIALIZED;
    CUresult r = real(pool, minBytesToKeep);
    if (r == CUDA_SUCCESS && cg_enabled())
        cg_pool_settle(pool, 0, 0);
    return r;
}

CG_EXPORT CUresult cuMemPoolDestroy(CUmemoryPool pool)
{
    PFN_cuMemPoolDestroy real = CG_REAL(cuMemPoolDestroy);
    if (CG_UNLIKELY(!real))
        return CUDA_ERROR_NOT_INITIALIZED;
    CUresult r = real(pool);
    if (r == CUDA_SUCCESS && cg_enabled())
        cg_pool_forget(pool);
    return r;
}

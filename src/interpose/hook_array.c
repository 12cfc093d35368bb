/* hook_array.c — CUDA arrays (textures, surfaces): width x height x depth elements of
 * NumChannels x the format's size, charged rounded up like any allocation. */
#include "account.h"
#include "alloctab.h"
#include "config.h"
#include "hooks.h"

#include <stdint.h>

static unsigned format_bytes(CUarray_format f)
{
    switch (f) {
    case CU_AD_FORMAT_UNSIGNED_INT8:
    case CU_AD_FORMAT_SIGNED_INT8: return 1;
    case CU_AD_FORMAT_UNSIGNED_INT16:
    case CU_AD_FORMAT_SIGNED_INT16:
    case CU_AD_FORMAT_HALF: return 2;
    default: return 4; /* 32-bit formats; unknown ones are at least that in practice */
    }
}

/* 0 on overflow (then the charge fails: no container can hold it). */
static uint64_t array_bytes(size_t w, size_t h, size_t d, CUarray_format f, unsigned ch)
{
    uint64_t n = (uint64_t)format_bytes(f) * (ch ? ch : 1);
    if (__builtin_mul_overflow(n, (uint64_t)w, &n) ||
        __builtin_mul_overflow(n, (uint64_t)(h ? h : 1), &n) ||
        __builtin_mul_overflow(n, (uint64_t)(d ? d : 1), &n))
        return UINT64_MAX;
    return n;
}

static CUresult keep(CUresult r, CUarray *arr, uint64_t charged)
{
    if (r != CUDA_SUCCESS) {
        cg_uncharge(charged);
        return r;
    }
    if (cg_alloc_put(CG_SPACE_ARRAY, (uint64_t)(uintptr_t)*arr, charged, NULL) == 0)
        return CUDA_SUCCESS;
    PFN_cuArrayDestroy f = CG_REAL(cuArrayDestroy);
    if (f)
        f(*arr);
    cg_uncharge(charged);
    return CUDA_ERROR_OUT_OF_MEMORY;
}

CG_EXPORT CUresult cuArrayCreate_v2(CUarray *pHandle, const CUDA_ARRAY_DESCRIPTOR *d)
{
    PFN_cuArrayCreate_v2 real = CG_REAL(cuArrayCreate_v2);
    if (CG_UNLIKELY(!real))
        return CUDA_ERROR_NOT_INITIALIZED;
    if (CG_LIKELY(!cg_enabled()) || !pHandle || !d || d->Width == 0)
        return real(pHandle, d);
    uint64_t charged;
    if (cg_charge(array_bytes(d->Width, d->Height, 1, d->Format, d->NumChannels), &charged) < 0)
        return CUDA_ERROR_OUT_OF_MEMORY;
    CUresult r;
    int attempt = 0;
    while ((r = real(pHandle, d)) == CUDA_ERROR_OUT_OF_MEMORY && cg_driver_retry(&attempt))
        ;
    return keep(r, pHandle, charged);
}

CG_EXPORT CUresult cuArray3DCreate_v2(CUarray *pHandle, const CUDA_ARRAY3D_DESCRIPTOR *d)
{
    PFN_cuArray3DCreate_v2 real = CG_REAL(cuArray3DCreate_v2);
    if (CG_UNLIKELY(!real))
        return CUDA_ERROR_NOT_INITIALIZED;
    if (CG_LIKELY(!cg_enabled()) || !pHandle || !d || d->Width == 0)
        return real(pHandle, d);
    uint64_t charged;
    if (cg_charge(array_bytes(d->Width, d->Height, d->Depth, d->Format, d->NumChannels),
                  &charged) < 0)
        return CUDA_ERROR_OUT_OF_MEMORY;
    CUresult r;
    int attempt = 0;
    while ((r = real(pHandle, d)) == CUDA_ERROR_OUT_OF_MEMORY && cg_driver_retry(&attempt))
        ;
    return keep(r, pHandle, charged);
}

CG_EXPORT CUresult cuArrayDestroy(CUarray hArray)
{
    PFN_cuArrayDestroy real = CG_REAL(cuArrayDestroy);
    if (CG_UNLIKELY(!real))
        return CUDA_ERROR_NOT_INITIALIZED;
    struct cg_alloc a;
    if (CG_LIKELY(!cg_enabled()) ||
        !cg_alloc_take(CG_SPACE_ARRAY, (uint64_t)(uintptr_t)hArray, &a))
        return real(hArray);
    CUresult r = real(hArray);
    if (r != CUDA_SUCCESS) {
        cg_alloc_put(a.space, a.key, a.bytes, a.pool);
        return r;
    }
    cg_uncharge(a.bytes);
    return r;
}

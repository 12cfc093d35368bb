/* hook_array.c — CUDA arrays and mipmapped arrays (textures, surfaces): every level's
 * width x height x depth elements of NumChannels x the format's size (array_bytes.h), charged
 * rounded up like any allocation. Sparse and deferred-mapping arrays are not charged: their
 * memory arrives later through cuMemCreate handles, which are. */
#include "hooks.h" /* first: it declares the entry points exported */
#include "account.h"
#include "alloctab.h"
#include "array_bytes.h"
#include "config.h"

#include <stdint.h>

/* Formats beyond the classic eight (packed, block-compressed, video) are charged 4 bytes per
 * channel: at least what most of them take. */
static uint64_t element_bytes(CUarray_format f, unsigned channels)
{
    unsigned b = cg_array_channel_bytes(f);
    return (uint64_t)(b ? b : 4) * (channels ? channels : 1);
}

/* Destroys a handle we could not record (the allocation table could not grow). */
static void undo_create(uint32_t space, void *handle)
{
    if (space == CG_SPACE_MIPMAP) {
        PFN_cuMipmappedArrayDestroy f = CG_REAL(cuMipmappedArrayDestroy);
        if (f)
            f((CUmipmappedArray)handle);
    } else {
        PFN_cuArrayDestroy f = CG_REAL(cuArrayDestroy);
        if (f)
            f((CUarray)handle);
    }
}

/* After the driver call of a charged creation: keeps the charge with the new handle, or gives
 * it back. */
static CUresult keep(uint32_t space, CUresult r, void *handle, uint64_t charged, unsigned m)
{
    if (r != CUDA_SUCCESS) {
        cg_uncharge_on(m, charged);
        return r;
    }
    if (cg_alloc_put(space, (uint64_t)(uintptr_t)handle, charged, NULL, m) == 0)
        return CUDA_SUCCESS;
    undo_create(space, handle);
    cg_uncharge_on(m, charged);
    return CUDA_ERROR_OUT_OF_MEMORY;
}

/* Before the driver call of a destruction: the entry leaves the table first and comes back if
 * the call fails (alloctab.h). */
static CUresult release(CUresult r, const struct cg_alloc *a)
{
    if (r != CUDA_SUCCESS)
        cg_alloc_put_back(a);
    else
        cg_uncharge_on(a->member, a->bytes);
    return r;
}

CG_EXPORT CUresult cuArrayCreate_v2(CUarray *pHandle, const CUDA_ARRAY_DESCRIPTOR *d)
{
    PFN_cuArrayCreate_v2 real = CG_REAL(cuArrayCreate_v2);
    if (CG_UNLIKELY(!real))
        return CUDA_ERROR_NOT_INITIALIZED;
    if (CG_LIKELY(!cg_enabled()) || !pHandle || !d || d->Width == 0)
        return real(pHandle, d);
    uint64_t charged;
    unsigned m = cg_alloc_member();
    if (cg_charge_on(m, cg_array_bytes(d->Width, d->Height, 0, 0,
                                 element_bytes(d->Format, d->NumChannels), 1),
                  &charged) < 0)
        return CUDA_ERROR_OUT_OF_MEMORY;
    CUresult r;
    int attempt = 0;
    while ((r = real(pHandle, d)) == CUDA_ERROR_OUT_OF_MEMORY && cg_driver_retry(&attempt))
        ;
    return keep(CG_SPACE_ARRAY, r, r == CUDA_SUCCESS ? *pHandle : NULL, charged, m);
}

CG_EXPORT CUresult cuArray3DCreate_v2(CUarray *pHandle, const CUDA_ARRAY3D_DESCRIPTOR *d)
{
    PFN_cuArray3DCreate_v2 real = CG_REAL(cuArray3DCreate_v2);
    if (CG_UNLIKELY(!real))
        return CUDA_ERROR_NOT_INITIALIZED;
    if (CG_LIKELY(!cg_enabled()) || !pHandle || !d || d->Width == 0 ||
        !cg_array_holds_memory(d->Flags))
        return real(pHandle, d);
    uint64_t charged;
    unsigned m = cg_alloc_member();
    if (cg_charge_on(m, cg_array_bytes(d->Width, d->Height, d->Depth, d->Flags,
                                 element_bytes(d->Format, d->NumChannels), 1),
                  &charged) < 0)
        return CUDA_ERROR_OUT_OF_MEMORY;
    CUresult r;
    int attempt = 0;
    while ((r = real(pHandle, d)) == CUDA_ERROR_OUT_OF_MEMORY && cg_driver_retry(&attempt))
        ;
    return keep(CG_SPACE_ARRAY, r, r == CUDA_SUCCESS ? *pHandle : NULL, charged, m);
}

CG_EXPORT CUresult cuMipmappedArrayCreate(CUmipmappedArray *pHandle,
                                          const CUDA_ARRAY3D_DESCRIPTOR *d,
                                          unsigned int numMipmapLevels)
{
    PFN_cuMipmappedArrayCreate real = CG_REAL(cuMipmappedArrayCreate);
    if (CG_UNLIKELY(!real))
        return CUDA_ERROR_NOT_INITIALIZED;
    /* Levels beyond the 1 x 1 x 1 one are the driver's error to report, not ours to charge. */
    if (CG_LIKELY(!cg_enabled()) || !pHandle || !d || d->Width == 0 || numMipmapLevels == 0 ||
        numMipmapLevels > cg_array_max_levels(d->Width, d->Height, d->Depth, d->Flags) ||
        !cg_array_holds_memory(d->Flags))
        return real(pHandle, d, numMipmapLevels);
    uint64_t charged;
    unsigned m = cg_alloc_member();
    if (cg_charge_on(m, cg_array_bytes(d->Width, d->Height, d->Depth, d->Flags,
                                 element_bytes(d->Format, d->NumChannels), numMipmapLevels),
                  &charged) < 0)
        return CUDA_ERROR_OUT_OF_MEMORY;
    CUresult r;
    int attempt = 0;
    while ((r = real(pHandle, d, numMipmapLevels)) == CUDA_ERROR_OUT_OF_MEMORY &&
           cg_driver_retry(&attempt))
        ;
    return keep(CG_SPACE_MIPMAP, r, r == CUDA_SUCCESS ? *pHandle : NULL, charged, m);
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
    return release(real(hArray), &a);
}

CG_EXPORT CUresult cuMipmappedArrayDestroy(CUmipmappedArray hMipmappedArray)
{
    PFN_cuMipmappedArrayDestroy real = CG_REAL(cuMipmappedArrayDestroy);
    if (CG_UNLIKELY(!real))
        return CUDA_ERROR_NOT_INITIALIZED;
    struct cg_alloc a;
    if (CG_LIKELY(!cg_enabled()) ||
        !cg_alloc_take(CG_SPACE_MIPMAP, (uint64_t)(uintptr_t)hMipmappedArray, &a))
        return real(hMipmappedArray);
    return release(real(hMipmappedArray), &a);
}

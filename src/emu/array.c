/* array.c — CUDA arrays and mipmapped arrays. Only their memory is emulated: an array charges
 * array_bytes.h's footprint (every level of a mipmapped array) rounded up to the granularity to
 * the current context's device; sparse and deferred-mapping arrays charge nothing; there are no
 * textures or level arrays, and an array holds no bytes: the 1D array copies (cuMemcpyAtoD and
 * the rest) check their arguments and answer CUDA_ERROR_NOT_SUPPORTED, as an array side of
 * cuMemcpy2D/3D does (copy2d.c). */
#include "driver.h" /* first: it declares the entry points exported */
#include "array_bytes.h"

#include <stdlib.h>

/* One object for both kinds; the handle's emu_obj kind tells them apart. */
struct CUarray_st {
    emu_obj hdr;
    unsigned phys;
    uint64_t charge;
};

static CUresult array_create(void **out, int kind, const CUDA_ARRAY3D_DESCRIPTOR *d,
                             unsigned levels)
{
    struct CUctx_st *ctx;
    CUresult rc = emu_enter_current(&ctx);
    if (rc != CUDA_SUCCESS)
        return rc;
    unsigned es = cg_array_channel_bytes(d->Format), ch = d->NumChannels;
    if (!out || d->Width == 0 || es == 0 || (ch != 1 && ch != 2 && ch != 4))
        return CUDA_ERROR_INVALID_VALUE;
    if ((d->Flags & CUDA_ARRAY3D_CUBEMAP) &&
        (d->Width != d->Height ||
         ((d->Flags & CUDA_ARRAY3D_LAYERED) ? d->Depth == 0 || d->Depth % 6 : d->Depth != 6)))
        return CUDA_ERROR_INVALID_VALUE;
    if (levels == 0 || levels > cg_array_max_levels(d->Width, d->Height, d->Depth, d->Flags))
        return CUDA_ERROR_INVALID_VALUE;
    uint64_t bytes = cg_array_bytes(d->Width, d->Height, d->Depth, d->Flags, (uint64_t)es * ch,
                                    levels);
    bool holds = cg_array_holds_memory(d->Flags);
    if (holds && bytes > g_emu.cfg.total[ctx->phys])
        return CUDA_ERROR_OUT_OF_MEMORY;
    struct CUarray_st *a = calloc(1, sizeof *a);
    if (!a)
        return CUDA_ERROR_OUT_OF_MEMORY;
    a->phys = ctx->phys;
    a->charge = holds ? emu_charge_of(bytes) : 0;
    emu_wrlock();
    if (emu_shared_charge(&g_emu.sh, a->phys, a->charge) != 0) {
        emu_unlock();
        free(a);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    emu_obj_add(&a->hdr, kind, ctx);
    emu_unlock();
    *out = a;
    return CUDA_SUCCESS;
}

static CUresult null_descriptor(void)
{
    CUresult rc = emu_enter();
    return rc != CUDA_SUCCESS ? rc : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuArrayCreate_v2(CUarray *pHandle, const CUDA_ARRAY_DESCRIPTOR *d)
{
    if (!d)
        return null_descriptor();
    CUDA_ARRAY3D_DESCRIPTOR d3 = {d->Width, d->Height, 0, d->Format, d->NumChannels, 0};
    return array_create((void **)pHandle, EMU_K_ARRAY, &d3, 1);
}

CUresult cuArray3DCreate_v2(CUarray *pHandle, const CUDA_ARRAY3D_DESCRIPTOR *d)
{
    if (!d)
        return null_descriptor();
    return array_create((void **)pHandle, EMU_K_ARRAY, d, 1);
}

CUresult cuMipmappedArrayCreate(CUmipmappedArray *pHandle, const CUDA_ARRAY3D_DESCRIPTOR *d,
                                unsigned int numMipmapLevels)
{
    if (!d)
        return null_descriptor();
    return array_create((void **)pHandle, EMU_K_MIPMAP, d, numMipmapLevels);
}

void emu_array_destroy_obj(emu_obj *o, int uncharge)
{
    struct CUarray_st *a = (struct CUarray_st *)o;
    if (uncharge)
        emu_shared_uncharge(&g_emu.sh, a->phys, a->charge);
    emu_obj_del(o);
    free(a);
}

static CUresult array_destroy(const void *handle, int kind)
{
    CUresult rc = emu_enter();
    if (rc != CUDA_SUCCESS)
        return rc;
    emu_wrlock();
    emu_obj *o = emu_obj_find(handle, kind);
    if (o)
        emu_array_destroy_obj(o, 1);
    emu_unlock();
    return o ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

CUresult cuArrayDestroy(CUarray hArray) { return array_destroy(hArray, EMU_K_ARRAY); }

CUresult cuMipmappedArrayDestroy(CUmipmappedArray hMipmappedArray)
{
    return array_destroy(hMipmappedArray, EMU_K_MIPMAP);
}

/* ---- 1D array copies: checked, then not supported (no bytes) ------------------------------ */

/* A live array handle (the lock taken here), or the driver's answer for one that is not. */
static CUresult array_copy(const void *array, const void *array2, const void *host, int host_side,
                           size_t n)
{
    CUresult rc = emu_enter();
    if (rc != CUDA_SUCCESS)
        return rc;
    emu_rdlock();
    int ok = emu_obj_find(array, EMU_K_ARRAY) && (!array2 || emu_obj_find(array2, EMU_K_ARRAY));
    emu_unlock();
    if (!ok)
        return CUDA_ERROR_INVALID_HANDLE;
    if (host_side && !host && n > 0)
        return CUDA_ERROR_INVALID_VALUE;
    return n == 0 ? CUDA_SUCCESS : CUDA_ERROR_NOT_SUPPORTED;
}

CUresult cuMemcpyAtoD_v2(CUdeviceptr dst, CUarray src, size_t off, size_t n)
{
    (void)dst, (void)off;
    return array_copy(src, NULL, NULL, 0, n);
}
CUresult cuMemcpyAtoD_v2_ptds(CUdeviceptr dst, CUarray src, size_t off, size_t n)
{
    return cuMemcpyAtoD_v2(dst, src, off, n);
}
CUresult cuMemcpyDtoA_v2(CUarray dst, size_t off, CUdeviceptr src, size_t n)
{
    (void)off, (void)src;
    return array_copy(dst, NULL, NULL, 0, n);
}
CUresult cuMemcpyDtoA_v2_ptds(CUarray dst, size_t off, CUdeviceptr src, size_t n)
{
    return cuMemcpyDtoA_v2(dst, off, src, n);
}
CUresult cuMemcpyAtoH_v2(void *dst, CUarray src, size_t off, size_t n)
{
    (void)off;
    return array_copy(src, NULL, dst, 1, n);
}
CUresult cuMemcpyAtoH_v2_ptds(void *dst, CUarray src, size_t off, size_t n)
{
    return cuMemcpyAtoH_v2(dst, src, off, n);
}
CUresult cuMemcpyHtoA_v2(CUarray dst, size_t off, const void *src, size_t n)
{
    (void)off;
    return array_copy(dst, NULL, src, 1, n);
}
CUresult cuMemcpyHtoA_v2_ptds(CUarray dst, size_t off, const void *src, size_t n)
{
    return cuMemcpyHtoA_v2(dst, off, src, n);
}
CUresult cuMemcpyAtoA_v2(CUarray dst, size_t doff, CUarray src, size_t soff, size_t n)
{
    (void)doff, (void)soff;
    return array_copy(dst, src, NULL, 0, n);
}
CUresult cuMemcpyAtoA_v2_ptds(CUarray dst, size_t doff, CUarray src, size_t soff, size_t n)
{
    return cuMemcpyAtoA_v2(dst, doff, src, soff, n);
}
CUresult cuMemcpyAtoHAsync_v2(void *dst, CUarray src, size_t off, size_t n, CUstream s)
{
    (void)s;
    return cuMemcpyAtoH_v2(dst, src, off, n);
}
CUresult cuMemcpyAtoHAsync_v2_ptsz(void *dst, CUarray src, size_t off, size_t n, CUstream s)
{
    return cuMemcpyAtoHAsync_v2(dst, src, off, n, s);
}
CUresult cuMemcpyHtoAAsync_v2(CUarray dst, size_t off, const void *src, size_t n, CUstream s)
{
    (void)s;
    return cuMemcpyHtoA_v2(dst, off, src, n);
}
CUresult cuMemcpyHtoAAsync_v2_ptsz(CUarray dst, size_t off, const void *src, size_t n,
                                   CUstream s)
{
    return cuMemcpyHtoAAsync_v2(dst, off, src, n, s);
}

void emu_array_remap(const uint8_t map[EMU_MAX_DEVICES])
{
    for (emu_obj *o = g_emu.objs.next; o != &g_emu.objs; o = o->next) {
        if (o->kind != EMU_K_ARRAY && o->kind != EMU_K_MIPMAP)
            continue;
        struct CUarray_st *a = (struct CUarray_st *)o;
        if (map[a->phys] != 0xff)
            a->phys = map[a->phys];
    }
}

/* array.c — CUDA arrays. Only their memory is emulated: an array charges
 * round_up(width * max(height,1) * max(depth,1) * element size * channels, granularity) to the
 * current context's device; there are no array copies or textures. */
#include "driver.h"

#include <stdlib.h>

struct CUarray_st {
    emu_obj hdr;
    unsigned phys;
    uint64_t charge;
};

static unsigned element_size(CUarray_format f)
{
    switch (f) {
    case CU_AD_FORMAT_UNSIGNED_INT8:
    case CU_AD_FORMAT_SIGNED_INT8: return 1;
    case CU_AD_FORMAT_UNSIGNED_INT16:
    case CU_AD_FORMAT_SIGNED_INT16:
    case CU_AD_FORMAT_HALF: return 2;
    case CU_AD_FORMAT_UNSIGNED_INT32:
    case CU_AD_FORMAT_SIGNED_INT32:
    case CU_AD_FORMAT_FLOAT: return 4;
    default: return 0;
    }
}

static CUresult array_create(CUarray *out, size_t w, size_t h, size_t d, CUarray_format fmt,
                             unsigned channels)
{
    struct CUctx_st *ctx;
    CUresult rc = emu_enter_current(&ctx);
    if (rc != CUDA_SUCCESS)
        return rc;
    unsigned es = element_size(fmt);
    if (!out || w == 0 || es == 0 || (channels != 1 && channels != 2 && channels != 4))
        return CUDA_ERROR_INVALID_VALUE;
    uint64_t bytes;
    if (__builtin_mul_overflow((uint64_t)w, (uint64_t)(h ? h : 1), &bytes) ||
        __builtin_mul_overflow(bytes, (uint64_t)(d ? d : 1), &bytes) ||
        __builtin_mul_overflow(bytes, (uint64_t)es * channels, &bytes) ||
        bytes > g_emu.cfg.total[ctx->phys])
        return CUDA_ERROR_OUT_OF_MEMORY;
    struct CUarray_st *a = calloc(1, sizeof *a);
    if (!a)
        return CUDA_ERROR_OUT_OF_MEMORY;
    a->phys = ctx->phys;
    a->charge = emu_charge_of(bytes);
    emu_wrlock();
    if (emu_shared_charge(&g_emu.sh, a->phys, a->charge) != 0) {
        emu_unlock();
        free(a);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    emu_obj_add(&a->hdr, EMU_K_ARRAY, ctx);
    emu_unlock();
    *out = a;
    return CUDA_SUCCESS;
}

CUresult cuArrayCreate_v2(CUarray *pHandle, const CUDA_ARRAY_DESCRIPTOR *d)
{
    if (!d) {
        CUresult rc = emu_enter();
        return rc != CUDA_SUCCESS ? rc : CUDA_ERROR_INVALID_VALUE;
    }
    return array_create(pHandle, d->Width, d->Height, 0, d->Format, d->NumChannels);
}

CUresult cuArray3DCreate_v2(CUarray *pHandle, const CUDA_ARRAY3D_DESCRIPTOR *d)
{
    if (!d) {
        CUresult rc = emu_enter();
        return rc != CUDA_SUCCESS ? rc : CUDA_ERROR_INVALID_VALUE;
    }
    return array_create(pHandle, d->Width, d->Height, d->Depth, d->Format, d->NumChannels);
}

void emu_array_destroy_obj(emu_obj *o, int uncharge)
{
    struct CUarray_st *a = (struct CUarray_st *)o;
    if (uncharge)
        emu_shared_uncharge(&g_emu.sh, a->phys, a->charge);
    emu_obj_del(o);
    free(a);
}

CUresult cuArrayDestroy(CUarray hArray)
{
    CUresult rc = emu_enter();
    if (rc != CUDA_SUCCESS)
        return rc;
    emu_wrlock();
    emu_obj *o = emu_obj_find(hArray, EMU_K_ARRAY);
    if (o)
        emu_array_destroy_obj(o, 1);
    emu_unlock();
    return o ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

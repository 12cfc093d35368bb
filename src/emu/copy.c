/* copy.c — copies and memsets. Execution is synchronous, so the Async forms finish before
 * they return; the stream is still validated as a real driver would. Device ranges are checked
 * against the allocation table while it is held shared, so a concurrent free cannot pull a
 * buffer out from under a copy. */
#include "driver.h"

#include <string.h>

enum side { SIDE_HOST, SIDE_DEVICE, SIDE_UNIFIED };

static CUresult check_side(uintptr_t p, size_t n, enum side side, int write)
{
    if (side == SIDE_UNIFIED)
        side = emu_alloc_find(p) ? SIDE_DEVICE : SIDE_HOST;
    if (side == SIDE_DEVICE)
        return emu_range(p, n, write);
    return p == 0 && n > 0 ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}

static CUresult copy(uintptr_t dst, enum side ds, uintptr_t src, enum side ss, size_t n,
                     const CUstream *stream)
{
    struct CUctx_st *ctx;
    CUresult rc = emu_enter();
    if (rc != CUDA_SUCCESS)
        return rc;
    emu_rdlock();
    rc = stream ? emu_stream_ctx(*stream, &ctx) : emu_current(&ctx);
    if (rc == CUDA_SUCCESS)
        rc = check_side(dst, n, ds, 1);
    if (rc == CUDA_SUCCESS)
        rc = check_side(src, n, ss, 0);
    if (rc == CUDA_SUCCESS && n > 0)
        memmove((void *)dst, (const void *)src, n);
    emu_unlock();
    return rc;
}

CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
    return copy((uintptr_t)dst, SIDE_UNIFIED, (uintptr_t)src, SIDE_UNIFIED, n, NULL);
}

CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
{
    return copy((uintptr_t)dst, SIDE_UNIFIED, (uintptr_t)src, SIDE_UNIFIED, n, &s);
}

CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n)
{
    return copy((uintptr_t)dst, SIDE_DEVICE, (uintptr_t)src, SIDE_HOST, n, NULL);
}

CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n)
{
    return copy((uintptr_t)dst, SIDE_HOST, (uintptr_t)src, SIDE_DEVICE, n, NULL);
}

CUresult cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
    return copy((uintptr_t)dst, SIDE_DEVICE, (uintptr_t)src, SIDE_DEVICE, n, NULL);
}

CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t n, CUstream s)
{
    return copy((uintptr_t)dst, SIDE_DEVICE, (uintptr_t)src, SIDE_HOST, n, &s);
}

CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t n, CUstream s)
{
    return copy((uintptr_t)dst, SIDE_HOST, (uintptr_t)src, SIDE_DEVICE, n, &s);
}

CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
{
    return copy((uintptr_t)dst, SIDE_DEVICE, (uintptr_t)src, SIDE_DEVICE, n, &s);
}

static CUresult set(uintptr_t dst, unsigned int value, size_t count, size_t width,
                    const CUstream *stream)
{
    struct CUctx_st *ctx;
    CUresult rc = emu_enter();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (dst % width != 0 || count > SIZE_MAX / width)
        return CUDA_ERROR_INVALID_VALUE;
    emu_rdlock();
    rc = stream ? emu_stream_ctx(*stream, &ctx) : emu_current(&ctx);
    if (rc == CUDA_SUCCESS)
        rc = emu_range(dst, count * width, 1);
    if (rc == CUDA_SUCCESS) {
        if (width == 1) {
            memset((void *)dst, (int)(value & 0xff), count);
        } else {
            uint32_t *p = (uint32_t *)dst;
            for (size_t i = 0; i < count; i++)
                p[i] = value;
        }
    }
    emu_unlock();
    return rc;
}

CUresult cuMemsetD8_v2(CUdeviceptr dst, unsigned char uc, size_t n)
{
    return set((uintptr_t)dst, uc, n, 1, NULL);
}

CUresult cuMemsetD32_v2(CUdeviceptr dst, unsigned int ui, size_t n)
{
    return set((uintptr_t)dst, ui, n, 4, NULL);
}

CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char uc, size_t n, CUstream s)
{
    return set((uintptr_t)dst, uc, n, 1, &s);
}

CUresult cuMemsetD32Async(CUdeviceptr dst, unsigned int ui, size_t n, CUstream s)
{
    return set((uintptr_t)dst, ui, n, 4, &s);
}

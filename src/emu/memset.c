/* memset.c — the cuMemsetD8/D16/D32 and cuMemsetD2D8/16/32 families, synchronous, Async and
 * per-thread. Each becomes one set item on its stream, ordered like any other work: the
 * synchronous forms go on the legacy (or per-thread) stream and return when done. The
 * destination must be device (or page-locked host) memory aligned to the element size, and a
 * 2D pitch must hold a row. */
#include "copy.h"

static CUresult set2d(uintptr_t dst, size_t pitch, uint32_t value, unsigned esize, size_t width,
                      size_t height, CUstream h, int async, int ptsz)
{
    struct CUstream_st *s;
    CUresult rc = emu_enter();
    if (rc != CUDA_SUCCESS)
        return rc;
    size_t row;
    if (dst % esize != 0 || __builtin_mul_overflow(width, (size_t)esize, &row) ||
        (height > 1 && (pitch < row || pitch % esize != 0)))
        return CUDA_ERROR_INVALID_VALUE;
    emu_rdlock();
    rc = emu_stream_get_locked(h, ptsz, &s);
    if (rc != CUDA_SUCCESS) {
        emu_unlock();
        return rc;
    }
    rc = emu_range(dst, emu_copy_span(row, height, 1, pitch, 1), 1);
    emu_unlock();
    if (rc == CUDA_SUCCESS && row > 0 && height > 0) {
        emu_item it = {.kind = EMU_I_SET,
                       .u.s = {.dst = dst, .pitch = height > 1 ? pitch : row, .width = width,
                               .height = height, .value = value, .esize = esize}};
        rc = emu_submit(s, &it, !async);
    }
    emu_stream_put(s);
    return rc;
}

#define P(x) ((uintptr_t)(x))

CUresult cuMemsetD8_v2(CUdeviceptr dst, unsigned char uc, size_t n)
{
    return set2d(P(dst), 0, uc, 1, n, 1, NULL, 0, 0);
}

CUresult cuMemsetD8_v2_ptds(CUdeviceptr dst, unsigned char uc, size_t n)
{
    return set2d(P(dst), 0, uc, 1, n, 1, NULL, 0, 1);
}

CUresult cuMemsetD16_v2(CUdeviceptr dst, unsigned short us, size_t n)
{
    return set2d(P(dst), 0, us, 2, n, 1, NULL, 0, 0);
}

CUresult cuMemsetD16_v2_ptds(CUdeviceptr dst, unsigned short us, size_t n)
{
    return set2d(P(dst), 0, us, 2, n, 1, NULL, 0, 1);
}

CUresult cuMemsetD32_v2(CUdeviceptr dst, unsigned int ui, size_t n)
{
    return set2d(P(dst), 0, ui, 4, n, 1, NULL, 0, 0);
}

CUresult cuMemsetD32_v2_ptds(CUdeviceptr dst, unsigned int ui, size_t n)
{
    return set2d(P(dst), 0, ui, 4, n, 1, NULL, 0, 1);
}

CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char uc, size_t n, CUstream s)
{
    return set2d(P(dst), 0, uc, 1, n, 1, s, 1, 0);
}

CUresult cuMemsetD8Async_ptsz(CUdeviceptr dst, unsigned char uc, size_t n, CUstream s)
{
    return set2d(P(dst), 0, uc, 1, n, 1, s, 1, 1);
}

CUresult cuMemsetD16Async(CUdeviceptr dst, unsigned short us, size_t n, CUstream s)
{
    return set2d(P(dst), 0, us, 2, n, 1, s, 1, 0);
}

CUresult cuMemsetD16Async_ptsz(CUdeviceptr dst, unsigned short us, size_t n, CUstream s)
{
    return set2d(P(dst), 0, us, 2, n, 1, s, 1, 1);
}

CUresult cuMemsetD32Async(CUdeviceptr dst, unsigned int ui, size_t n, CUstream s)
{
    return set2d(P(dst), 0, ui, 4, n, 1, s, 1, 0);
}

CUresult cuMemsetD32Async_ptsz(CUdeviceptr dst, unsigned int ui, size_t n, CUstream s)
{
    return set2d(P(dst), 0, ui, 4, n, 1, s, 1, 1);
}

CUresult cuMemsetD2D8_v2(CUdeviceptr dst, size_t pitch, unsigned char uc, size_t w, size_t h)
{
    return set2d(P(dst), pitch, uc, 1, w, h, NULL, 0, 0);
}

CUresult cuMemsetD2D8_v2_ptds(CUdeviceptr dst, size_t pitch, unsigned char uc, size_t w,
                              size_t h)
{
    return set2d(P(dst), pitch, uc, 1, w, h, NULL, 0, 1);
}

CUresult cuMemsetD2D16_v2(CUdeviceptr dst, size_t pitch, unsigned short us, size_t w, size_t h)
{
    return set2d(P(dst), pitch, us, 2, w, h, NULL, 0, 0);
}

CUresult cuMemsetD2D16_v2_ptds(CUdeviceptr dst, size_t pitch, unsigned short us, size_t w,
                               size_t h)
{
    return set2d(P(dst), pitch, us, 2, w, h, NULL, 0, 1);
}

CUresult cuMemsetD2D32_v2(CUdeviceptr dst, size_t pitch, unsigned int ui, size_t w, size_t h)
{
    return set2d(P(dst), pitch, ui, 4, w, h, NULL, 0, 0);
}

CUresult cuMemsetD2D32_v2_ptds(CUdeviceptr dst, size_t pitch, unsigned int ui, size_t w,
                               size_t h)
{
    return set2d(P(dst), pitch, ui, 4, w, h, NULL, 0, 1);
}

CUresult cuMemsetD2D8Async(CUdeviceptr dst, size_t pitch, unsigned char uc, size_t w, size_t h,
                           CUstream s)
{
    return set2d(P(dst), pitch, uc, 1, w, h, s, 1, 0);
}

CUresult cuMemsetD2D8Async_ptsz(CUdeviceptr dst, size_t pitch, unsigned char uc, size_t w,
                                size_t h, CUstream s)
{
    return set2d(P(dst), pitch, uc, 1, w, h, s, 1, 1);
}

CUresult cuMemsetD2D16Async(CUdeviceptr dst, size_t pitch, unsigned short us, size_t w,
                            size_t h, CUstream s)
{
    return set2d(P(dst), pitch, us, 2, w, h, s, 1, 0);
}

CUresult cuMemsetD2D16Async_ptsz(CUdeviceptr dst, size_t pitch, unsigned short us, size_t w,
                                 size_t h, CUstream s)
{
    return set2d(P(dst), pitch, us, 2, w, h, s, 1, 1);
}

CUresult cuMemsetD2D32Async(CUdeviceptr dst, size_t pitch, unsigned int ui, size_t w, size_t h,
                            CUstream s)
{
    return set2d(P(dst), pitch, ui, 4, w, h, s, 1, 0);
}

CUresult cuMemsetD2D32Async_ptsz(CUdeviceptr dst, size_t pitch, unsigned int ui, size_t w,
                                 size_t h, CUstream s)
{
    return set2d(P(dst), pitch, ui, 4, w, h, s, 1, 1);
}

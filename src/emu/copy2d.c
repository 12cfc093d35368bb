/* copy2d.c — pitched copies (cuMemcpy2D, cuMemcpy3D, cuMemcpy3DPeer and their Unaligned, Async
 * and per-thread forms). Each becomes one strided copy item (copy.h). Sides are host, device or
 * unified memory; arrays hold no bytes in the emulator (array.c), so an array side is
 * CUDA_ERROR_NOT_SUPPORTED. A pitch must hold the row (X offset + width) unless only one row is
 * copied; a 3D side's height must hold its rows (Y offset + height) unless one slice is. */
#include "copy.h"

typedef struct {
    size_t x, y, z, lod, pitch, height;
    CUmemorytype type;
    const void *host;
    CUdeviceptr dev;
    CUarray array;
    const void *reserved;
} side3d;

static CUresult side_base(const side3d *s, size_t width, size_t h, size_t d, uintptr_t *base,
                          size_t *pitch, size_t *rows_per_slice, enum emu_side *kind)
{
    switch (s->type) {
    case CU_MEMORYTYPE_HOST: *kind = EMU_SIDE_HOST; *base = (uintptr_t)s->host; break;
    case CU_MEMORYTYPE_DEVICE: *kind = EMU_SIDE_DEVICE; *base = (uintptr_t)s->dev; break;
    case CU_MEMORYTYPE_UNIFIED: *kind = EMU_SIDE_UNIFIED; *base = (uintptr_t)s->dev; break;
    case CU_MEMORYTYPE_ARRAY: return CUDA_ERROR_NOT_SUPPORTED;
    default: return CUDA_ERROR_INVALID_VALUE;
    }
    if (s->lod != 0 || s->reserved)
        return CUDA_ERROR_INVALID_VALUE;
    size_t p = s->pitch ? s->pitch : s->x + width;
    if ((h > 1 || d > 1) && p < s->x + width)
        return CUDA_ERROR_INVALID_VALUE;
    size_t sh = s->height ? s->height : s->y + h;
    if (d > 1 && sh < s->y + h)
        return CUDA_ERROR_INVALID_VALUE;
    /* Offsets in bytes must not wrap (they come from the caller). */
    if (s->z > SIZE_MAX / (sh ? sh : 1) || (s->z * sh + s->y) > SIZE_MAX / (p ? p : 1))
        return CUDA_ERROR_INVALID_VALUE;
    *base += (s->z * sh + s->y) * p + s->x;
    *pitch = p;
    *rows_per_slice = sh;
    return CUDA_SUCCESS;
}

static CUresult copy3d(const side3d *dst, const side3d *src, size_t width, size_t h, size_t d,
                       CUstream hs, int async, int ptsz)
{
    emu_copy c = {.width = width, .height = h, .depth = d};
    enum emu_side dk, sk;
    CUresult rc = emu_enter();
    if (rc != CUDA_SUCCESS)
        return rc;
    if ((rc = side_base(dst, width, h, d, &c.dst, &c.dpitch, &c.dheight, &dk)) != CUDA_SUCCESS ||
        (rc = side_base(src, width, h, d, &c.src, &c.spitch, &c.sheight, &sk)) != CUDA_SUCCESS)
        return rc;
    return emu_copy_submit(hs, ptsz, async, &c, dk, sk);
}

static CUresult copy2d(const CUDA_MEMCPY2D *p, CUstream hs, int async, int ptsz)
{
    if (!p) {
        CUresult rc = emu_enter();
        return rc != CUDA_SUCCESS ? rc : CUDA_ERROR_INVALID_VALUE;
    }
    side3d src = {p->srcXInBytes, p->srcY, 0, 0, p->srcPitch, 0, p->srcMemoryType, p->srcHost,
                  p->srcDevice, p->srcArray, NULL};
    side3d dst = {p->dstXInBytes, p->dstY, 0, 0, p->dstPitch, 0, p->dstMemoryType, p->dstHost,
                  p->dstDevice, p->dstArray, NULL};
    return copy3d(&dst, &src, p->WidthInBytes, p->Height, 1, hs, async, ptsz);
}

static CUresult copy3d_desc(const CUDA_MEMCPY3D *p, CUstream hs, int async, int ptsz)
{
    if (!p) {
        CUresult rc = emu_enter();
        return rc != CUDA_SUCCESS ? rc : CUDA_ERROR_INVALID_VALUE;
    }
    side3d src = {p->srcXInBytes, p->srcY, p->srcZ, p->srcLOD, p->srcPitch, p->srcHeight,
                  p->srcMemoryType, p->srcHost, p->srcDevice, p->srcArray, p->reserved0};
    side3d dst = {p->dstXInBytes, p->dstY, p->dstZ, p->dstLOD, p->dstPitch, p->dstHeight,
                  p->dstMemoryType, p->dstHost, p->dstDevice, p->dstArray, p->reserved1};
    return copy3d(&dst, &src, p->WidthInBytes, p->Height, p->Depth, hs, async, ptsz);
}

CUresult cuMemcpy2D_v2(const CUDA_MEMCPY2D *p) { return copy2d(p, NULL, 0, 0); }
CUresult cuMemcpy2D_v2_ptds(const CUDA_MEMCPY2D *p) { return copy2d(p, NULL, 0, 1); }
CUresult cuMemcpy2DUnaligned_v2(const CUDA_MEMCPY2D *p) { return copy2d(p, NULL, 0, 0); }
CUresult cuMemcpy2DUnaligned_v2_ptds(const CUDA_MEMCPY2D *p) { return copy2d(p, NULL, 0, 1); }
CUresult cuMemcpy2DAsync_v2(const CUDA_MEMCPY2D *p, CUstream s) { return copy2d(p, s, 1, 0); }
CUresult cuMemcpy2DAsync_v2_ptsz(const CUDA_MEMCPY2D *p, CUstream s)
{
    return copy2d(p, s, 1, 1);
}
CUresult cuMemcpy3D_v2(const CUDA_MEMCPY3D *p) { return copy3d_desc(p, NULL, 0, 0); }
CUresult cuMemcpy3D_v2_ptds(const CUDA_MEMCPY3D *p) { return copy3d_desc(p, NULL, 0, 1); }
CUresult cuMemcpy3DAsync_v2(const CUDA_MEMCPY3D *p, CUstream s)
{
    return copy3d_desc(p, s, 1, 0);
}
CUresult cuMemcpy3DAsync_v2_ptsz(const CUDA_MEMCPY3D *p, CUstream s)
{
    return copy3d_desc(p, s, 1, 1);
}

/* Between contexts: a 3D copy once each side's context is known alive (a context is ignored for
 * an array side, as the driver ignores it). */
static CUresult copy3d_peer(const CUDA_MEMCPY3D_PEER *p, CUstream hs, int async, int ptsz)
{
    CUresult rc = emu_enter();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    if ((p->srcMemoryType != CU_MEMORYTYPE_ARRAY && !emu_ctx_valid(p->srcContext)) ||
        (p->dstMemoryType != CU_MEMORYTYPE_ARRAY && !emu_ctx_valid(p->dstContext)))
        return CUDA_ERROR_INVALID_CONTEXT;
    side3d src = {p->srcXInBytes, p->srcY, p->srcZ, p->srcLOD, p->srcPitch, p->srcHeight,
                  p->srcMemoryType, p->srcHost, p->srcDevice, p->srcArray, NULL};
    side3d dst = {p->dstXInBytes, p->dstY, p->dstZ, p->dstLOD, p->dstPitch, p->dstHeight,
                  p->dstMemoryType, p->dstHost, p->dstDevice, p->dstArray, NULL};
    return copy3d(&dst, &src, p->WidthInBytes, p->Height, p->Depth, hs, async, ptsz);
}

CUresult cuMemcpy3DPeer(const CUDA_MEMCPY3D_PEER *p) { return copy3d_peer(p, NULL, 0, 0); }
CUresult cuMemcpy3DPeer_ptds(const CUDA_MEMCPY3D_PEER *p) { return copy3d_peer(p, NULL, 0, 1); }
CUresult cuMemcpy3DPeerAsync(const CUDA_MEMCPY3D_PEER *p, CUstream s)
{
    return copy3d_peer(p, s, 1, 0);
}
CUresult cuMemcpy3DPeerAsync_ptsz(const CUDA_MEMCPY3D_PEER *p, CUstream s)
{
    return copy3d_peer(p, s, 1, 1);
}

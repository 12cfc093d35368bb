/* copy.c — linear copies: cuMemcpy, HtoD/DtoH/DtoD, Peer and their Async and per-thread forms,
 * and the submission every copy shares (copy.h).
 *
 * Ordering: a copy is an item on its stream (the legacy or per-thread stream for the
 * synchronous forms), so it runs after the stream's earlier work (a copy after a kernel sees its
 * result) and before its later work. Completion: synchronous forms return when the copy is done;
 * Async forms return at once when every host side is page-locked (cuMemAllocHost,
 * cuMemHostAlloc, cuMemHostRegister), and otherwise after the copy, as a real driver's staging
 * of pageable memory does. A copy that is ready at once runs on the calling thread. */
#include "copy.h"

/* Checks one side; *mapped tells whether it is in an allocation (checked again when it runs)
 * and *pageable whether it is ordinary host memory. Lock held. */
static CUresult check_side(uintptr_t p, size_t n, enum emu_side side, int write, int *mapped,
                           int *pageable)
{
    if (side == EMU_SIDE_UNIFIED)
        side = emu_alloc_find(p) ? EMU_SIDE_DEVICE : EMU_SIDE_HOST;
    *mapped = *pageable = 0;
    if (side == EMU_SIDE_DEVICE) {
        *mapped = 1;
        return emu_range(p, n, write);
    }
    if (p == 0 && n > 0)
        return CUDA_ERROR_INVALID_VALUE;
    if (n > 0 && emu_alloc_find(p)) {
        *mapped = 1; /* page-locked host memory (or device memory called host) */
        return emu_range(p, n, write);
    }
    *pageable = 1;
    return CUDA_SUCCESS;
}

CUresult emu_copy_submit(CUstream h, int ptsz, int async, emu_copy *c, enum emu_side ds,
                         enum emu_side ss)
{
    struct CUstream_st *s;
    CUresult rc = emu_enter();
    if (rc != CUDA_SUCCESS)
        return rc;
    size_t dn = emu_copy_span(c->width, c->height, c->depth, c->dpitch, c->dheight);
    size_t sn = emu_copy_span(c->width, c->height, c->depth, c->spitch, c->sheight);
    int dpage, spage;
    emu_rdlock();
    rc = emu_stream_get_locked(h, ptsz, &s);
    if (rc != CUDA_SUCCESS) {
        emu_unlock();
        return rc;
    }
    rc = check_side(c->dst, dn, ds, 1, &c->dst_mapped, &dpage);
    if (rc == CUDA_SUCCESS)
        rc = check_side(c->src, sn, ss, 0, &c->src_mapped, &spage);
    emu_unlock();
    if (rc == CUDA_SUCCESS && dn > 0) {
        emu_item it = {.kind = EMU_I_COPY, .u.c = *c};
        rc = emu_submit(s, &it, !async || dpage || spage);
    }
    emu_stream_put(s);
    return rc;
}

static CUresult copy1d(uintptr_t dst, enum emu_side ds, uintptr_t src, enum emu_side ss,
                       size_t n, CUstream h, int async, int ptsz)
{
    emu_copy c = {.dst = dst, .src = src, .width = n, .height = 1, .depth = 1,
                  .dpitch = n, .spitch = n, .dheight = 1, .sheight = 1};
    return emu_copy_submit(h, ptsz, async, &c, ds, ss);
}

#define U EMU_SIDE_UNIFIED
#define H EMU_SIDE_HOST
#define D EMU_SIDE_DEVICE
#define P(x) ((uintptr_t)(x))

CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
    return copy1d(P(dst), U, P(src), U, n, NULL, 0, 0);
}

CUresult cuMemcpy_ptds(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
    return copy1d(P(dst), U, P(src), U, n, NULL, 0, 1);
}

CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
{
    return copy1d(P(dst), U, P(src), U, n, s, 1, 0);
}

CUresult cuMemcpyAsync_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
{
    return copy1d(P(dst), U, P(src), U, n, s, 1, 1);
}

CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n)
{
    return copy1d(P(dst), D, P(src), H, n, NULL, 0, 0);
}

CUresult cuMemcpyHtoD_v2_ptds(CUdeviceptr dst, const void *src, size_t n)
{
    return copy1d(P(dst), D, P(src), H, n, NULL, 0, 1);
}

CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n)
{
    return copy1d(P(dst), H, P(src), D, n, NULL, 0, 0);
}

CUresult cuMemcpyDtoH_v2_ptds(void *dst, CUdeviceptr src, size_t n)
{
    return copy1d(P(dst), H, P(src), D, n, NULL, 0, 1);
}

CUresult cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
    return copy1d(P(dst), D, P(src), D, n, NULL, 0, 0);
}

CUresult cuMemcpyDtoD_v2_ptds(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
    return copy1d(P(dst), D, P(src), D, n, NULL, 0, 1);
}

CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t n, CUstream s)
{
    return copy1d(P(dst), D, P(src), H, n, s, 1, 0);
}

CUresult cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr dst, const void *src, size_t n, CUstream s)
{
    return copy1d(P(dst), D, P(src), H, n, s, 1, 1);
}

CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t n, CUstream s)
{
    return copy1d(P(dst), H, P(src), D, n, s, 1, 0);
}

CUresult cuMemcpyDtoHAsync_v2_ptsz(void *dst, CUdeviceptr src, size_t n, CUstream s)
{
    return copy1d(P(dst), H, P(src), D, n, s, 1, 1);
}

CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
{
    return copy1d(P(dst), D, P(src), D, n, s, 1, 0);
}

CUresult cuMemcpyDtoDAsync_v2_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
{
    return copy1d(P(dst), D, P(src), D, n, s, 1, 1);
}

/* Between contexts: every device's memory is in the one address space here, so once both
 * contexts are known alive it is a device-to-device copy, ordered on the stream given. */
static CUresult peer1d(CUdeviceptr dst, CUcontext dctx, CUdeviceptr src, CUcontext sctx,
                       size_t n, CUstream h, int async, int ptsz)
{
    CUresult rc = emu_enter();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (!emu_ctx_valid(dctx) || !emu_ctx_valid(sctx))
        return CUDA_ERROR_INVALID_CONTEXT;
    return copy1d(P(dst), D, P(src), D, n, h, async, ptsz);
}

CUresult cuMemcpyPeer(CUdeviceptr dst, CUcontext dctx, CUdeviceptr src, CUcontext sctx, size_t n)
{
    return peer1d(dst, dctx, src, sctx, n, NULL, 0, 0);
}

CUresult cuMemcpyPeer_ptds(CUdeviceptr dst, CUcontext dctx, CUdeviceptr src, CUcontext sctx,
                           size_t n)
{
    return peer1d(dst, dctx, src, sctx, n, NULL, 0, 1);
}

CUresult cuMemcpyPeerAsync(CUdeviceptr dst, CUcontext dctx, CUdeviceptr src, CUcontext sctx,
                           size_t n, CUstream s)
{
    return peer1d(dst, dctx, src, sctx, n, s, 1, 0);
}

CUresult cuMemcpyPeerAsync_ptsz(CUdeviceptr dst, CUcontext dctx, CUdeviceptr src,
                                CUcontext sctx, size_t n, CUstream s)
{
    return peer1d(dst, dctx, src, sctx, n, s, 1, 1);
}

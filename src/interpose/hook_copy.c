/* hook_copy.c — copies and sets wait while their process's swappable memory is on the host
 * (docs/SWAP.md): every cuMemcpy* and cuMemset* form, each also _ptds/_ptsz (linear, 2D, 3D,
 * between contexts, the 1D array copies, whose linear side may be swappable memory, and the
 * batched copies of CUDA 12.8 and 13.0).
 * The call itself is the driver's, untouched. A process that has no swappable allocation never
 * waits here: its cost is one relaxed load (cg_swap_armed) on top of the wrapper's call. */
#include "gate.h"

#define GATED(sym, params, args)                                   \
    CG_EXPORT CUresult sym params                                  \
    {                                                              \
        PFN_##sym f = CG_REAL(sym);                                \
        if (CG_UNLIKELY(!f))                                       \
            return CUDA_ERROR_NOT_INITIALIZED;                     \
        struct cg_gate_ticket t = cg_gate_pass_memory();           \
        CUresult r = f args;                                       \
        cg_gate_leave(t);                                          \
        return r;                                                  \
    }

GATED(cuMemcpy, (CUdeviceptr dst, CUdeviceptr src, size_t ByteCount), (dst, src, ByteCount))
GATED(cuMemcpy_ptds, (CUdeviceptr dst, CUdeviceptr src, size_t ByteCount), (dst, src, ByteCount))
GATED(cuMemcpyAsync, (CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream hStream), (dst, src, ByteCount, hStream))
GATED(cuMemcpyAsync_ptsz, (CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream hStream), (dst, src, ByteCount, hStream))
GATED(cuMemcpyHtoD_v2, (CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount), (dstDevice, srcHost, ByteCount))
GATED(cuMemcpyHtoD_v2_ptds, (CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount), (dstDevice, srcHost, ByteCount))
GATED(cuMemcpyDtoH_v2, (void *dstHost, CUdeviceptr srcDevice, size_t ByteCount), (dstHost, srcDevice, ByteCount))
GATED(cuMemcpyDtoH_v2_ptds, (void *dstHost, CUdeviceptr srcDevice, size_t ByteCount), (dstHost, srcDevice, ByteCount))
GATED(cuMemcpyDtoD_v2, (CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount), (dstDevice, srcDevice, ByteCount))
GATED(cuMemcpyDtoD_v2_ptds, (CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount), (dstDevice, srcDevice, ByteCount))
GATED(cuMemcpyHtoDAsync_v2, (CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount, CUstream hStream), (dstDevice, srcHost, ByteCount, hStream))
GATED(cuMemcpyHtoDAsync_v2_ptsz, (CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount, CUstream hStream), (dstDevice, srcHost, ByteCount, hStream))
GATED(cuMemcpyDtoHAsync_v2, (void *dstHost, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream), (dstHost, srcDevice, ByteCount, hStream))
GATED(cuMemcpyDtoHAsync_v2_ptsz, (void *dstHost, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream), (dstHost, srcDevice, ByteCount, hStream))
GATED(cuMemcpyDtoDAsync_v2, (CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream), (dstDevice, srcDevice, ByteCount, hStream))
GATED(cuMemcpyDtoDAsync_v2_ptsz, (CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream), (dstDevice, srcDevice, ByteCount, hStream))
GATED(cuMemsetD8_v2, (CUdeviceptr dstDevice, unsigned char uc, size_t N), (dstDevice, uc, N))
GATED(cuMemsetD8_v2_ptds, (CUdeviceptr dstDevice, unsigned char uc, size_t N), (dstDevice, uc, N))
GATED(cuMemsetD32_v2, (CUdeviceptr dstDevice, unsigned int ui, size_t N), (dstDevice, ui, N))
GATED(cuMemsetD32_v2_ptds, (CUdeviceptr dstDevice, unsigned int ui, size_t N), (dstDevice, ui, N))
GATED(cuMemsetD8Async, (CUdeviceptr dstDevice, unsigned char uc, size_t N, CUstream hStream), (dstDevice, uc, N, hStream))
GATED(cuMemsetD8Async_ptsz, (CUdeviceptr dstDevice, unsigned char uc, size_t N, CUstream hStream), (dstDevice, uc, N, hStream))
GATED(cuMemsetD32Async, (CUdeviceptr dstDevice, unsigned int ui, size_t N, CUstream hStream), (dstDevice, ui, N, hStream))
GATED(cuMemsetD32Async_ptsz, (CUdeviceptr dstDevice, unsigned int ui, size_t N, CUstream hStream), (dstDevice, ui, N, hStream))
GATED(cuMemcpy2D_v2, (const CUDA_MEMCPY2D *pCopy), (pCopy))
GATED(cuMemcpy2D_v2_ptds, (const CUDA_MEMCPY2D *pCopy), (pCopy))
GATED(cuMemcpy2DUnaligned_v2, (const CUDA_MEMCPY2D *pCopy), (pCopy))
GATED(cuMemcpy2DUnaligned_v2_ptds, (const CUDA_MEMCPY2D *pCopy), (pCopy))
GATED(cuMemcpy2DAsync_v2, (const CUDA_MEMCPY2D *pCopy, CUstream hStream), (pCopy, hStream))
GATED(cuMemcpy2DAsync_v2_ptsz, (const CUDA_MEMCPY2D *pCopy, CUstream hStream), (pCopy, hStream))
GATED(cuMemcpy3D_v2, (const CUDA_MEMCPY3D *pCopy), (pCopy))
GATED(cuMemcpy3D_v2_ptds, (const CUDA_MEMCPY3D *pCopy), (pCopy))
GATED(cuMemcpy3DAsync_v2, (const CUDA_MEMCPY3D *pCopy, CUstream hStream), (pCopy, hStream))
GATED(cuMemcpy3DAsync_v2_ptsz, (const CUDA_MEMCPY3D *pCopy, CUstream hStream), (pCopy, hStream))
GATED(cuMemsetD16_v2, (CUdeviceptr dstDevice, unsigned short us, size_t N), (dstDevice, us, N))
GATED(cuMemsetD16_v2_ptds, (CUdeviceptr dstDevice, unsigned short us, size_t N), (dstDevice, us, N))
GATED(cuMemsetD16Async, (CUdeviceptr dstDevice, unsigned short us, size_t N, CUstream hStream), (dstDevice, us, N, hStream))
GATED(cuMemsetD16Async_ptsz, (CUdeviceptr dstDevice, unsigned short us, size_t N, CUstream hStream), (dstDevice, us, N, hStream))
GATED(cuMemsetD2D8_v2, (CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc, size_t Width, size_t Height), (dstDevice, dstPitch, uc, Width, Height))
GATED(cuMemsetD2D8_v2_ptds, (CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc, size_t Width, size_t Height), (dstDevice, dstPitch, uc, Width, Height))
GATED(cuMemsetD2D16_v2, (CUdeviceptr dstDevice, size_t dstPitch, unsigned short us, size_t Width, size_t Height), (dstDevice, dstPitch, us, Width, Height))
GATED(cuMemsetD2D16_v2_ptds, (CUdeviceptr dstDevice, size_t dstPitch, unsigned short us, size_t Width, size_t Height), (dstDevice, dstPitch, us, Width, Height))
GATED(cuMemsetD2D32_v2, (CUdeviceptr dstDevice, size_t dstPitch, unsigned int ui, size_t Width, size_t Height), (dstDevice, dstPitch, ui, Width, Height))
GATED(cuMemsetD2D32_v2_ptds, (CUdeviceptr dstDevice, size_t dstPitch, unsigned int ui, size_t Width, size_t Height), (dstDevice, dstPitch, ui, Width, Height))
GATED(cuMemsetD2D8Async, (CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc, size_t Width, size_t Height, CUstream hStream), (dstDevice, dstPitch, uc, Width, Height, hStream))
GATED(cuMemsetD2D8Async_ptsz, (CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc, size_t Width, size_t Height, CUstream hStream), (dstDevice, dstPitch, uc, Width, Height, hStream))
GATED(cuMemsetD2D16Async, (CUdeviceptr dstDevice, size_t dstPitch, unsigned short us, size_t Width, size_t Height, CUstream hStream), (dstDevice, dstPitch, us, Width, Height, hStream))
GATED(cuMemsetD2D16Async_ptsz, (CUdeviceptr dstDevice, size_t dstPitch, unsigned short us, size_t Width, size_t Height, CUstream hStream), (dstDevice, dstPitch, us, Width, Height, hStream))
GATED(cuMemsetD2D32Async, (CUdeviceptr dstDevice, size_t dstPitch, unsigned int ui, size_t Width, size_t Height, CUstream hStream), (dstDevice, dstPitch, ui, Width, Height, hStream))
GATED(cuMemsetD2D32Async_ptsz, (CUdeviceptr dstDevice, size_t dstPitch, unsigned int ui, size_t Width, size_t Height, CUstream hStream), (dstDevice, dstPitch, ui, Width, Height, hStream))
GATED(cuMemcpyPeer, (CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice, CUcontext srcContext, size_t ByteCount), (dstDevice, dstContext, srcDevice, srcContext, ByteCount))
GATED(cuMemcpyPeer_ptds, (CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice, CUcontext srcContext, size_t ByteCount), (dstDevice, dstContext, srcDevice, srcContext, ByteCount))
GATED(cuMemcpyPeerAsync, (CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice, CUcontext srcContext, size_t ByteCount, CUstream hStream), (dstDevice, dstContext, srcDevice, srcContext, ByteCount, hStream))
GATED(cuMemcpyPeerAsync_ptsz, (CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice, CUcontext srcContext, size_t ByteCount, CUstream hStream), (dstDevice, dstContext, srcDevice, srcContext, ByteCount, hStream))
GATED(cuMemcpy3DPeer, (const CUDA_MEMCPY3D_PEER *pCopy), (pCopy))
GATED(cuMemcpy3DPeer_ptds, (const CUDA_MEMCPY3D_PEER *pCopy), (pCopy))
GATED(cuMemcpy3DPeerAsync, (const CUDA_MEMCPY3D_PEER *pCopy, CUstream hStream), (pCopy, hStream))
GATED(cuMemcpy3DPeerAsync_ptsz, (const CUDA_MEMCPY3D_PEER *pCopy, CUstream hStream), (pCopy, hStream))
GATED(cuMemcpyAtoD_v2, (CUdeviceptr dstDevice, CUarray srcArray, size_t srcOffset, size_t ByteCount), (dstDevice, srcArray, srcOffset, ByteCount))
GATED(cuMemcpyAtoD_v2_ptds, (CUdeviceptr dstDevice, CUarray srcArray, size_t srcOffset, size_t ByteCount), (dstDevice, srcArray, srcOffset, ByteCount))
GATED(cuMemcpyDtoA_v2, (CUarray dstArray, size_t dstOffset, CUdeviceptr srcDevice, size_t ByteCount), (dstArray, dstOffset, srcDevice, ByteCount))
GATED(cuMemcpyDtoA_v2_ptds, (CUarray dstArray, size_t dstOffset, CUdeviceptr srcDevice, size_t ByteCount), (dstArray, dstOffset, srcDevice, ByteCount))
GATED(cuMemcpyAtoH_v2, (void *dstHost, CUarray srcArray, size_t srcOffset, size_t ByteCount), (dstHost, srcArray, srcOffset, ByteCount))
GATED(cuMemcpyAtoH_v2_ptds, (void *dstHost, CUarray srcArray, size_t srcOffset, size_t ByteCount), (dstHost, srcArray, srcOffset, ByteCount))
GATED(cuMemcpyHtoA_v2, (CUarray dstArray, size_t dstOffset, const void *srcHost, size_t ByteCount), (dstArray, dstOffset, srcHost, ByteCount))
GATED(cuMemcpyHtoA_v2_ptds, (CUarray dstArray, size_t dstOffset, const void *srcHost, size_t ByteCount), (dstArray, dstOffset, srcHost, ByteCount))
GATED(cuMemcpyAtoA_v2, (CUarray dstArray, size_t dstOffset, CUarray srcArray, size_t srcOffset, size_t ByteCount), (dstArray, dstOffset, srcArray, srcOffset, ByteCount))
GATED(cuMemcpyAtoA_v2_ptds, (CUarray dstArray, size_t dstOffset, CUarray srcArray, size_t srcOffset, size_t ByteCount), (dstArray, dstOffset, srcArray, srcOffset, ByteCount))
GATED(cuMemcpyAtoHAsync_v2, (void *dstHost, CUarray srcArray, size_t srcOffset, size_t ByteCount, CUstream hStream), (dstHost, srcArray, srcOffset, ByteCount, hStream))
GATED(cuMemcpyAtoHAsync_v2_ptsz, (void *dstHost, CUarray srcArray, size_t srcOffset, size_t ByteCount, CUstream hStream), (dstHost, srcArray, srcOffset, ByteCount, hStream))
GATED(cuMemcpyHtoAAsync_v2, (CUarray dstArray, size_t dstOffset, const void *srcHost, size_t ByteCount, CUstream hStream), (dstArray, dstOffset, srcHost, ByteCount, hStream))
GATED(cuMemcpyHtoAAsync_v2_ptsz, (CUarray dstArray, size_t dstOffset, const void *srcHost, size_t ByteCount, CUstream hStream), (dstArray, dstOffset, srcHost, ByteCount, hStream))
GATED(cuMemcpyBatchAsync, (CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes, size_t count, CUmemcpyAttributes *attrs, size_t *attrsIdxs, size_t numAttrs, size_t *failIdx, CUstream hStream), (dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs, failIdx, hStream))
GATED(cuMemcpyBatchAsync_ptsz, (CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes, size_t count, CUmemcpyAttributes *attrs, size_t *attrsIdxs, size_t numAttrs, size_t *failIdx, CUstream hStream), (dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs, failIdx, hStream))
GATED(cuMemcpyBatchAsync_v2, (CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes, size_t count, CUmemcpyAttributes *attrs, size_t *attrsIdxs, size_t numAttrs, CUstream hStream), (dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs, hStream))
GATED(cuMemcpyBatchAsync_v2_ptsz, (CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes, size_t count, CUmemcpyAttributes *attrs, size_t *attrsIdxs, size_t numAttrs, CUstream hStream), (dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs, hStream))
GATED(cuMemcpy3DBatchAsync, (size_t numOps, CUDA_MEMCPY3D_BATCH_OP *opList, size_t *failIdx, unsigned long long flags, CUstream hStream), (numOps, opList, failIdx, flags, hStream))
GATED(cuMemcpy3DBatchAsync_ptsz, (size_t numOps, CUDA_MEMCPY3D_BATCH_OP *opList, size_t *failIdx, unsigned long long flags, CUstream hStream), (numOps, opList, failIdx, flags, hStream))
GATED(cuMemcpy3DBatchAsync_v2, (size_t numOps, CUDA_MEMCPY3D_BATCH_OP *opList, unsigned long long flags, CUstream hStream), (numOps, opList, flags, hStream))
GATED(cuMemcpy3DBatchAsync_v2_ptsz, (size_t numOps, CUDA_MEMCPY3D_BATCH_OP *opList, unsigned long long flags, CUstream hStream), (numOps, opList, flags, hStream))

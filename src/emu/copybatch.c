/* copybatch.c — batched copies (cuMemcpyBatchAsync, cuMemcpy3DBatchAsync; CUDA 12.8's forms,
 * which report the failing copy's index, and 13.0's _v2 forms, which do not).
 *
 * A batch is checked whole before any copy is queued: a batch the driver refuses moves no byte
 * (failIdx names the first bad copy, SIZE_MAX when the fault is the call's own). Then every
 * copy is queued on the stream in turn (copy.h): the batch as a whole is in stream order, as
 * the driver promises; copies within it carry no order among themselves there, here they run
 * in list order. A copy whose source may only be read during the call
 * (CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL) completes before the call returns. The legacy
 * NULL stream is refused (CUDA_ERROR_INVALID_VALUE), as documented. Arrays hold no bytes in the
 * emulator (array.c): an array operand of a 3D batch is checked, then refused with
 * CUDA_ERROR_NOT_SUPPORTED, as cuMemcpy3D's array sides are. */
#include "copy.h"

#define EMU_MEMCPY_FLAGS_KNOWN ((unsigned)CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE)

static int order_valid(CUmemcpySrcAccessOrder o)
{
    return o == CU_MEMCPY_SRC_ACCESS_ORDER_STREAM ||
           o == CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL || o == CU_MEMCPY_SRC_ACCESS_ORDER_ANY;
}

/* The legacy NULL stream: NULL in the plain forms, CU_STREAM_LEGACY in any. */
static int legacy_stream(CUstream h, int ptsz)
{
    return h == CU_STREAM_LEGACY || (!h && !ptsz);
}

static void set_fail(size_t *failIdx, size_t i)
{
    if (failIdx)
        *failIdx = i;
}

/* A device or host pointer, as the driver's unified addressing reads it: the copy is checked
 * again when it is queued (emu_copy_submit); here only what makes the batch unusable. */
static CUresult check_linear(uintptr_t dst, uintptr_t src, size_t n)
{
    if (n == 0)
        return CUDA_SUCCESS;
    if (!dst || !src)
        return CUDA_ERROR_INVALID_VALUE;
    emu_rdlock();
    CUresult rc = CUDA_SUCCESS;
    if (emu_alloc_find(dst))
        rc = emu_range(dst, n, 1);
    if (rc == CUDA_SUCCESS && emu_alloc_find(src))
        rc = emu_range(src, n, 0);
    emu_unlock();
    return rc;
}

static CUresult batch1d(CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes, size_t count,
                        CUmemcpyAttributes *attrs, size_t *attrsIdxs, size_t numAttrs,
                        size_t *failIdx, CUstream h, int ptsz)
{
    set_fail(failIdx, SIZE_MAX);
    CUresult rc = emu_enter();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (count == 0 || !dsts || !srcs || !sizes || !attrs || !attrsIdxs || numAttrs == 0 ||
        numAttrs > count || legacy_stream(h, ptsz))
        return CUDA_ERROR_INVALID_VALUE;
    for (size_t k = 0; k < numAttrs; k++) {
        if ((k == 0 && attrsIdxs[0] != 0) || (k > 0 && attrsIdxs[k] <= attrsIdxs[k - 1]) ||
            attrsIdxs[k] >= count || !order_valid(attrs[k].srcAccessOrder) ||
            (attrs[k].flags & ~EMU_MEMCPY_FLAGS_KNOWN))
            return CUDA_ERROR_INVALID_VALUE;
    }
    for (size_t i = 0; i < count; i++) {
        if ((rc = check_linear(dsts[i], srcs[i], sizes[i])) != CUDA_SUCCESS) {
            set_fail(failIdx, i);
            return rc;
        }
    }
    size_t k = 0;
    for (size_t i = 0; i < count; i++) {
        while (k + 1 < numAttrs && attrsIdxs[k + 1] <= i)
            k++;
        int during_call = attrs[k].srcAccessOrder == CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL;
        emu_copy c = {.dst = dsts[i], .src = srcs[i], .width = sizes[i], .height = 1, .depth = 1,
                      .dpitch = sizes[i], .spitch = sizes[i], .dheight = 1, .sheight = 1};
        rc = emu_copy_submit(h, ptsz, !during_call, &c, EMU_SIDE_UNIFIED, EMU_SIDE_UNIFIED);
        if (rc != CUDA_SUCCESS) { /* freed by another thread since the check */
            set_fail(failIdx, i);
            return rc;
        }
    }
    return CUDA_SUCCESS;
}

/* One operand of a 3D batch op: its first byte, pitch and rows per slice (element = byte for a
 * pointer; a pointer operand's row length and layer height default to the extent's). */
static CUresult operand(const CUmemcpy3DOperand *o, const CUextent3D *e, uintptr_t *base,
                        size_t *pitch, size_t *rows)
{
    switch (o->type) {
    case CU_MEMCPY_OPERAND_TYPE_POINTER: break;
    case CU_MEMCPY_OPERAND_TYPE_ARRAY: return o->op.array.array ? CUDA_ERROR_NOT_SUPPORTED
                                                                : CUDA_ERROR_INVALID_VALUE;
    default: return CUDA_ERROR_INVALID_VALUE;
    }
    size_t row = o->op.ptr.rowLength ? o->op.ptr.rowLength : e->width;
    size_t layer = o->op.ptr.layerHeight ? o->op.ptr.layerHeight : e->height;
    if (!o->op.ptr.ptr || row < e->width || layer < e->height)
        return CUDA_ERROR_INVALID_VALUE;
    *base = o->op.ptr.ptr;
    *pitch = row;
    *rows = layer;
    return CUDA_SUCCESS;
}

static CUresult op3d(const CUDA_MEMCPY3D_BATCH_OP *op, emu_copy *c)
{
    const CUextent3D *e = &op->extent;
    if (!e->width || !e->height || !e->depth || !order_valid(op->srcAccessOrder) ||
        (op->flags & ~EMU_MEMCPY_FLAGS_KNOWN))
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc;
    *c = (emu_copy){.width = e->width, .height = e->height, .depth = e->depth};
    if ((rc = operand(&op->dst, e, &c->dst, &c->dpitch, &c->dheight)) != CUDA_SUCCESS ||
        (rc = operand(&op->src, e, &c->src, &c->spitch, &c->sheight)) != CUDA_SUCCESS)
        return rc;
    size_t dn = emu_copy_span(c->width, c->height, c->depth, c->dpitch, c->dheight);
    size_t sn = emu_copy_span(c->width, c->height, c->depth, c->spitch, c->sheight);
    if (dn == SIZE_MAX || sn == SIZE_MAX)
        return CUDA_ERROR_INVALID_VALUE;
    emu_rdlock();
    rc = CUDA_SUCCESS;
    if (emu_alloc_find(c->dst))
        rc = emu_range(c->dst, dn, 1);
    if (rc == CUDA_SUCCESS && emu_alloc_find(c->src))
        rc = emu_range(c->src, sn, 0);
    emu_unlock();
    return rc;
}

static CUresult batch3d(size_t numOps, CUDA_MEMCPY3D_BATCH_OP *opList, size_t *failIdx,
                        unsigned long long flags, CUstream h, int ptsz)
{
    set_fail(failIdx, SIZE_MAX);
    CUresult rc = emu_enter();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (numOps == 0 || !opList || flags != 0 || legacy_stream(h, ptsz))
        return CUDA_ERROR_INVALID_VALUE;
    emu_copy c;
    for (size_t i = 0; i < numOps; i++) {
        if ((rc = op3d(&opList[i], &c)) != CUDA_SUCCESS) {
            set_fail(failIdx, i);
            return rc;
        }
    }
    for (size_t i = 0; i < numOps; i++) {
        op3d(&opList[i], &c);
        int during_call =
            opList[i].srcAccessOrder == CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL;
        rc = emu_copy_submit(h, ptsz, !during_call, &c, EMU_SIDE_UNIFIED, EMU_SIDE_UNIFIED);
        if (rc != CUDA_SUCCESS) {
            set_fail(failIdx, i);
            return rc;
        }
    }
    return CUDA_SUCCESS;
}

CUresult cuMemcpyBatchAsync(CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes, size_t count,
                            CUmemcpyAttributes *attrs, size_t *attrsIdxs, size_t numAttrs,
                            size_t *failIdx, CUstream s)
{
    return batch1d(dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs, failIdx, s, 0);
}

CUresult cuMemcpyBatchAsync_ptsz(CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes,
                                 size_t count, CUmemcpyAttributes *attrs, size_t *attrsIdxs,
                                 size_t numAttrs, size_t *failIdx, CUstream s)
{
    return batch1d(dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs, failIdx, s, 1);
}

CUresult cuMemcpyBatchAsync_v2(CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes, size_t count,
                               CUmemcpyAttributes *attrs, size_t *attrsIdxs, size_t numAttrs,
                               CUstream s)
{
    return batch1d(dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs, NULL, s, 0);
}

CUresult cuMemcpyBatchAsync_v2_ptsz(CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes,
                                    size_t count, CUmemcpyAttributes *attrs, size_t *attrsIdxs,
                                    size_t numAttrs, CUstream s)
{
    return batch1d(dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs, NULL, s, 1);
}

CUresult cuMemcpy3DBatchAsync(size_t numOps, CUDA_MEMCPY3D_BATCH_OP *opList, size_t *failIdx,
                              unsigned long long flags, CUstream s)
{
    return batch3d(numOps, opList, failIdx, flags, s, 0);
}

CUresult cuMemcpy3DBatchAsync_ptsz(size_t numOps, CUDA_MEMCPY3D_BATCH_OP *opList,
                                   size_t *failIdx, unsigned long long flags, CUstream s)
{
    return batch3d(numOps, opList, failIdx, flags, s, 1);
}

CUresult cuMemcpy3DBatchAsync_v2(size_t numOps, CUDA_MEMCPY3D_BATCH_OP *opList,
                                 unsigned long long flags, CUstream s)
{
    return batch3d(numOps, opList, NULL, flags, s, 0);
}

CUresult cuMemcpy3DBatchAsync_v2_ptsz(size_t numOps, CUDA_MEMCPY3D_BATCH_OP *opList,
                                      unsigned long long flags, CUstream s)
{
    return batch3d(numOps, opList, NULL, flags, s, 1);
}

/* copy.h — how every copy entry point (1D, 2D, 3D; synchronous or not) becomes one queued copy:
 * the sides are checked where they enter, then the copy is ordered on its stream. */
#ifndef CONVGPU_EMU_COPY_H
#define CONVGPU_EMU_COPY_H

#include "workq.h"

/* Where a side of a copy lives: as the call states it, or (UNIFIED) as the pointer says. */
enum emu_side { EMU_SIDE_HOST, EMU_SIDE_DEVICE, EMU_SIDE_UNIFIED };

/* Bytes one side of c spans from its first byte: depth slices of slice_rows rows, pitch apart,
 * of which height rows of width bytes are copied. SIZE_MAX when that does not fit a size_t
 * (no range holds it). */
static inline size_t emu_copy_span(size_t width, size_t height, size_t depth, size_t pitch,
                                   size_t slice_rows)
{
    if (width == 0 || height == 0 || depth == 0)
        return 0;
    size_t last_row;
    if (__builtin_mul_overflow(depth - 1, slice_rows, &last_row) ||
        __builtin_add_overflow(last_row, height - 1, &last_row))
        return SIZE_MAX;
    size_t n;
    if (__builtin_mul_overflow(last_row, pitch, &n) || __builtin_add_overflow(n, width, &n))
        return SIZE_MAX;
    return n;
}

/* Queues c (dst/src already offset to the first byte) on the stream h names. async: the Async
 * forms, which still complete before returning when a host side is pageable memory, as the
 * driver's staging does; synchronous forms wait. Sides are checked now: device memory must be
 * allocated (CUDA_ERROR_INVALID_VALUE), a host side non-NULL. */
CUresult emu_copy_submit(CUstream h, int ptsz, int async, emu_copy *c, enum emu_side ds,
                         enum emu_side ss);

#endif

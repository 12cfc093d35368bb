/* array_bytes.h — how many bytes a CUDA array or mipmapped array holds, before rounding.
 *
 * One formula for the two sides that must agree to the byte: the emulator takes this much from
 * its device, the interposer charges this much to the container. A mipmap level halves every
 * dimension (never below 1) except the depth of layered and cubemap arrays, which counts layers
 * or faces. Sparse and deferred-mapping arrays hold nothing at creation: their memory is mapped
 * later from cuMemCreate handles, which are charged on their own. Header-only: the interposer
 * links nothing of ours but its own objects. */
#ifndef CONVGPU_ARRAY_BYTES_H
#define CONVGPU_ARRAY_BYTES_H

#include "cuda_types.h"

#include <stdbool.h>
#include <stdint.h>

/* Bytes per channel of the classic formats; 0 for any other format. */
static inline unsigned cg_array_channel_bytes(CUarray_format f)
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

static inline bool cg_array_holds_memory(unsigned flags)
{
    return (flags & (CUDA_ARRAY3D_SPARSE | CUDA_ARRAY3D_DEFERRED_MAPPING)) == 0;
}

/* The most mipmap levels a width x height x depth array can have: down to 1 x 1 x 1. */
static inline unsigned cg_array_max_levels(uint64_t w, uint64_t h, uint64_t d, unsigned flags)
{
    uint64_t m = w > h ? w : h;
    if (!(flags & (CUDA_ARRAY3D_LAYERED | CUDA_ARRAY3D_CUBEMAP)) && d > m)
        m = d;
    unsigned n = 0;
    for (; m; m >>= 1)
        n++;
    return n;
}

/* Bytes of `levels` levels (1 for a plain array) of elements of `element` bytes; a height or
 * depth of 0 means the dimension is absent. UINT64_MAX on overflow. */
static inline uint64_t cg_array_bytes(uint64_t w, uint64_t h, uint64_t d, unsigned flags,
                                      uint64_t element, unsigned levels)
{
    bool fixed_depth = (flags & (CUDA_ARRAY3D_LAYERED | CUDA_ARRAY3D_CUBEMAP)) != 0;
    uint64_t total = 0;
    for (unsigned l = 0; l < (levels ? levels : 1) && l < 64; l++) {
        uint64_t lw = w >> l, lh = h >> l, ld = fixed_depth ? d : d >> l, n;
        if (__builtin_mul_overflow(lw ? lw : 1, lh ? lh : 1, &n) ||
            __builtin_mul_overflow(n, ld ? ld : 1, &n) ||
            __builtin_mul_overflow(n, element, &n) || __builtin_add_overflow(total, n, &total))
            return UINT64_MAX;
    }
    return total;
}

#endif

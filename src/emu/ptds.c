/* ptds.c — the per-thread default stream variants (_ptds for synchronous calls, _ptsz for
 * stream-taking ones). With synchronous execution the legacy and per-thread default streams
 * behave alike, so each variant is its plain form; they exist as distinct symbols because
 * programs built with --default-stream per-thread (and cuGetProcAddress) name them. The
 * library links with -Bsymbolic, so these calls stay inside it even when an interposer
 * preloads the plain names. */
#include "driver.h"

CUresult cuMemcpy_ptds(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
    return cuMemcpy(dst, src, n);
}

CUresult cuMemcpyAsync_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
{
    return cuMemcpyAsync(dst, src, n, s);
}

CUresult cuMemcpyHtoD_v2_ptds(CUdeviceptr dst, const void *src, size_t n)
{
    return cuMemcpyHtoD_v2(dst, src, n);
}

CUresult cuMemcpyDtoH_v2_ptds(void *dst, CUdeviceptr src, size_t n)
{
    return cuMemcpyDtoH_v2(dst, src, n);
}

CUresult cuMemcpyDtoD_v2_ptds(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
    return cuMemcpyDtoD_v2(dst, src, n);
}

CUresult cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr dst, const void *src, size_t n, CUstream s)
{
    return cuMemcpyHtoDAsync_v2(dst, src, n, s);
}

CUresult cuMemcpyDtoHAsync_v2_ptsz(void *dst, CUdeviceptr src, size_t n, CUstream s)
{
    return cuMemcpyDtoHAsync_v2(dst, src, n, s);
}

CUresult cuMemcpyDtoDAsync_v2_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
{
    return cuMemcpyDtoDAsync_v2(dst, src, n, s);
}

CUresult cuMemsetD8_v2_ptds(CUdeviceptr dst, unsigned char uc, size_t n)
{
    return cuMemsetD8_v2(dst, uc, n);
}

CUresult cuMemsetD32_v2_ptds(CUdeviceptr dst, unsigned int ui, size_t n)
{
    return cuMemsetD32_v2(dst, ui, n);
}

CUresult cuMemsetD8Async_ptsz(CUdeviceptr dst, unsigned char uc, size_t n, CUstream s)
{
    return cuMemsetD8Async(dst, uc, n, s);
}

CUresult cuMemsetD32Async_ptsz(CUdeviceptr dst, unsigned int ui, size_t n, CUstream s)
{
    return cuMemsetD32Async(dst, ui, n, s);
}

CUresult cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUstream s)
{
    return cuMemAllocAsync(dptr, bytesize, s);
}

CUresult cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream s) { return cuMemFreeAsync(dptr, s); }

CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool,
                                      CUstream s)
{
    return cuMemAllocFromPoolAsync(dptr, bytesize, pool, s);
}

CUresult cuStreamSynchronize_ptsz(CUstream s) { return cuStreamSynchronize(s); }
CUresult cuStreamQuery_ptsz(CUstream s) { return cuStreamQuery(s); }
CUresult cuEventRecord_ptsz(CUevent e, CUstream s) { return cuEventRecord(e, s); }

CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                             unsigned int bx, unsigned int by, unsigned int bz,
                             unsigned int shmem, CUstream s, void **params, void **extra)
{
    return cuLaunchKernel(f, gx, gy, gz, bx, by, bz, shmem, s, params, extra);
}

CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *config, CUfunction f, void **params,
                               void **extra)
{
    return cuLaunchKernelEx(config, f, params, extra);
}

CUresult cuLaunchCooperativeKernel_ptsz(CUfunction f, unsigned int gx, unsigned int gy,
                                        unsigned int gz, unsigned int bx, unsigned int by,
                                        unsigned int bz, unsigned int shmem, CUstream s,
                                        void **params)
{
    return cuLaunchCooperativeKernel(f, gx, gy, gz, bx, by, bz, shmem, s, params);
}

/* procaddr.c — cuGetProcAddress and _v2: how the CUDA runtime (>= 11.3) finds every entry point.
 *
 * The runtime asks for a base name ("cuMemAlloc") with a CUDA version and stream flags; which
 * ABI variant answers (cuMemAlloc vs cuMemAlloc_v2, cuMemAllocAsync vs _ptsz) is the driver's
 * decision, so we let the real function decide with exactly the caller's arguments and only then
 * swap its answer for our wrapper of that same variant, found by comparing pointers. If the
 * comparison fails (a driver answering through an alias) but we hook the base name, the variant
 * is chosen from our table by version and flags. Names we do not hook pass through untouched. */
#include "hooks.h"
#include "log.h"

static void to_wrapper(const char *symbol, void **pfn, int version, cuuint64_t flags)
{
    if (!symbol || !pfn || !*pfn)
        return;
    void *real = *pfn;
    if (cg_hook_by_wrapper(real) >= 0) /* the driver looked itself up through our dlsym */
        return;
    int id = cg_hook_by_real(CG_LIB_CUDA, real);
    if (id < 0) {
        int ptds = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;
        id = cg_hook_by_base(symbol, version, ptds);
        if (id < 0)
            return;
        /* The driver's answer is that variant's real function; adopt it if we had none. */
        void *expected = CG_REAL_MISSING;
        atomic_compare_exchange_strong(&cg_real_ptr[id], &expected, real);
        cg_log(CG_LOG_DEBUG, "cuGetProcAddress(%s, %d, %llu): unknown pointer, using %s", symbol,
               version, (unsigned long long)flags, cg_hooks[id].name);
    }
    *pfn = cg_hooks[id].wrapper;
    /* tests/gpu/test_cudart_lookups.sh reads these lines: keep "-> ours NAME" as it is. */
    cg_log(CG_LOG_DEBUG, "cuGetProcAddress(%s, %d, %llu) -> ours %s", symbol, version,
           (unsigned long long)flags, cg_hooks[id].name);
}

CG_EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion,
                                    cuuint64_t flags)
{
    PFN_cuGetProcAddress real = CG_REAL(cuGetProcAddress);
    if (CG_UNLIKELY(!real))
        return CUDA_ERROR_NOT_INITIALIZED;
    CUresult r = real(symbol, pfn, cudaVersion, flags);
    if (r == CUDA_SUCCESS)
        to_wrapper(symbol, pfn, cudaVersion, flags);
    return r;
}

CG_EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion,
                                       cuuint64_t flags,
                                       CUdriverProcAddressQueryResult *symbolStatus)
{
    PFN_cuGetProcAddress_v2 real = CG_REAL(cuGetProcAddress_v2);
    if (CG_UNLIKELY(!real))
        return CUDA_ERROR_NOT_INITIALIZED;
    CUresult r = real(symbol, pfn, cudaVersion, flags, symbolStatus);
    if (r == CUDA_SUCCESS)
        to_wrapper(symbol, pfn, cudaVersion, flags);
    return r;
}

/* hook_ctx.c — context creation. A process's context costs device memory the moment it exists:
 * the driver takes it when the context is created, not at the first allocation. A process that
 * created its context and then waited (suspended) for its first allocation would otherwise hold
 * memory no container accounts for, and the next grant could fail in the driver. So before the
 * driver creates a context, the container is charged for it: one granule goes through the normal
 * path (the daemon adds the context charge to a process's first grant, and may suspend us until
 * there is room), and the granule itself is handed straight back as quota for later.
 *
 * Context teardown: memory a free kept for reuse (swap.c) is released first, while the driver
 * still knows it; a torn-down context takes the process's memory with it, and a kept address
 * would otherwise be handed out again with nothing behind it. */
#include "account.h"
#include "config.h"
#include "hooks.h"
#include "swap.h"

static CUresult reserve_context(CUdevice dev)
{
    if (CG_LIKELY(!cg_enabled()))
        return CUDA_SUCCESS;
    unsigned m = cg_alloc_member(); /* learns the container's GPUs; then the context's own */
    if (m < CG_IP_MEMBERS)
        m = cg_member_of_ordinal(dev);
    if (m == CG_MEMBER_NONE)
        return CUDA_SUCCESS; /* not one of its GPUs: its allocations are refused there */
    if (cg_context_charged_on(m))
        return CUDA_SUCCESS;
    uint64_t charged;
    if (cg_charge_on(m, 1, &charged) < 0)
        return CUDA_ERROR_OUT_OF_MEMORY;
    cg_uncharge_on(m, charged);
    return CUDA_SUCCESS;
}

CG_EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
    PFN_cuDevicePrimaryCtxRetain real = CG_REAL(cuDevicePrimaryCtxRetain);
    if (CG_UNLIKELY(!real))
        return CUDA_ERROR_NOT_INITIALIZED;
    CUresult r = pctx ? reserve_context(dev) : CUDA_SUCCESS;
    return r == CUDA_SUCCESS ? real(pctx, dev) : r;
}

CG_EXPORT CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
    PFN_cuCtxCreate_v2 real = CG_REAL(cuCtxCreate_v2);
    if (CG_UNLIKELY(!real))
        return CUDA_ERROR_NOT_INITIALIZED;
    CUresult r = pctx ? reserve_context(dev) : CUDA_SUCCESS;
    return r == CUDA_SUCCESS ? real(pctx, flags, dev) : r;
}

CG_EXPORT CUresult cuCtxCreate_v3(CUcontext *pctx, CUexecAffinityParam *params, int n,
                                  unsigned int flags, CUdevice dev)
{
    PFN_cuCtxCreate_v3 real = CG_REAL(cuCtxCreate_v3);
    if (CG_UNLIKELY(!real))
        return CUDA_ERROR_NOT_INITIALIZED;
    CUresult r = pctx ? reserve_context(dev) : CUDA_SUCCESS;
    return r == CUDA_SUCCESS ? real(pctx, params, n, flags, dev) : r;
}

CG_EXPORT CUresult cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *params, unsigned int flags,
                                  CUdevice dev)
{
    PFN_cuCtxCreate_v4 real = CG_REAL(cuCtxCreate_v4);
    if (CG_UNLIKELY(!real))
        return CUDA_ERROR_NOT_INITIALIZED;
    CUresult r = pctx ? reserve_context(dev) : CUDA_SUCCESS;
    return r == CUDA_SUCCESS ? real(pctx, params, flags, dev) : r;
}

/* Context teardown: kept memory goes first (the comment at the top says why). The last release
 * destroys the primary context, and whether this one is the last only the driver knows, so
 * every release drops (releases are rare: once per library that retained it). */
#define DROPS_KEPT(sym, params, args, why)                          \
    CG_EXPORT CUresult sym params                                   \
    {                                                               \
        PFN_##sym real = CG_REAL(sym);                              \
        if (CG_UNLIKELY(!real))                                     \
            return CUDA_ERROR_NOT_INITIALIZED;                      \
        if (cg_enabled())                                           \
            cg_swap_drop_kept(why);                                 \
        return real args;                                           \
    }

DROPS_KEPT(cuCtxDestroy_v2, (CUcontext ctx), (ctx), "a context is destroyed")
DROPS_KEPT(cuDevicePrimaryCtxRelease_v2, (CUdevice dev), (dev), "the primary context is released")
DROPS_KEPT(cuDevicePrimaryCtxReset_v2, (CUdevice dev), (dev), "the primary context is reset")

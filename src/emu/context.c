/* context.c — contexts, primary contexts and each thread's context stack. The context charge
 * (CONVGPU_EMU_CONTEXT) is taken when a process's first live context on a device appears and
 * returned when its last one there goes; destroying a context waits for its work (as the driver
 * does), then frees what it owned. A context whose work faulted keeps the fault as its sticky
 * error: every call working in it answers that error until it is destroyed or reset. */
#include "workq.h"

#include <stdlib.h>
#include <string.h>

#define EMU_CTX_STACK 64

static _Thread_local struct CUctx_st *t_stack[EMU_CTX_STACK];
static _Thread_local unsigned t_depth;

void emu_ctx_tls_reset(void) { t_depth = 0; }

int emu_ctx_valid(const struct CUctx_st *c)
{
    return c && __atomic_load_n(&c->alive, __ATOMIC_ACQUIRE);
}

CUresult emu_current_any(struct CUctx_st **out)
{
    if (t_depth == 0 || !emu_ctx_valid(t_stack[t_depth - 1]))
        return CUDA_ERROR_INVALID_CONTEXT;
    *out = t_stack[t_depth - 1];
    return CUDA_SUCCESS;
}

CUresult emu_current(struct CUctx_st **out)
{
    CUresult rc = emu_current_any(out);
    return rc != CUDA_SUCCESS ? rc : emu_sticky(*out);
}

CUresult emu_enter_current(struct CUctx_st **ctx)
{
    CUresult rc = emu_enter();
    return rc != CUDA_SUCCESS ? rc : emu_current(ctx);
}

/* Default limits (cuCtxGetLimit), an A100's. */
static const size_t default_limits[EMU_CTX_LIMITS] = {
    [CU_LIMIT_STACK_SIZE] = 1024,
    [CU_LIMIT_PRINTF_FIFO_SIZE] = 1u << 20,
    [CU_LIMIT_MALLOC_HEAP_SIZE] = 8u << 20,
    [CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH] = 2,
    [CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT] = 2048,
    [CU_LIMIT_MAX_L2_FETCH_GRANULARITY] = 64,
    [CU_LIMIT_PERSISTING_L2_CACHE_SIZE] = 0,
    [CU_LIMIT_SHMEM_SIZE] = 0,
    [CU_LIMIT_CIG_ENABLED] = 0,
    [CU_LIMIT_CIG_SHMEM_FALLBACK_ENABLED] = 0,
};

/* A context starts (or a primary context starts again): the device's context charge, its
 * legacy stream, no fault, default limits. Callers hold the write lock. */
static CUresult activate(struct CUctx_st *c)
{
    unsigned phys = c->phys;
    if (g_emu.ctx_live[phys] == 0 && emu_shared_ctx_acquire(&g_emu.sh, phys) != 0)
        return CUDA_ERROR_OUT_OF_MEMORY;
    if (emu_ctx_attach_legacy(c) != 0) {
        if (g_emu.ctx_live[phys] == 0)
            emu_shared_ctx_release(&g_emu.sh, phys);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    g_emu.ctx_live[phys]++;
    __atomic_store_n(&c->sticky, CUDA_SUCCESS, __ATOMIC_RELEASE);
    memcpy(c->limits, default_limits, sizeof c->limits);
    return CUDA_SUCCESS;
}

static void deactivate(unsigned phys)
{
    if (g_emu.ctx_live[phys] > 0 && --g_emu.ctx_live[phys] == 0)
        emu_shared_ctx_release(&g_emu.sh, phys);
}

/* Callers waited for the context's work (without the lock) and hold the write lock. */
static void teardown(struct CUctx_st *c)
{
    __atomic_store_n(&c->alive, 0, __ATOMIC_RELEASE);
    c->gen++;
    emu_ctx_drop_work(c); /* what raced in after the wait */
    emu_release_owned(c, 0, 1);
    deactivate(c->phys);
}

/* The wait a teardown needs first, without the lock: for c's queued work (whatever races in
 * after it is dropped by teardown). */
static void drain(struct CUctx_st *c)
{
    emu_ctx_sync(c);
}

static void push(struct CUctx_st *c)
{
    if (t_depth < EMU_CTX_STACK)
        t_stack[t_depth++] = c;
}

static CUresult ctx_create(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
    unsigned phys;
    CUresult rc = emu_enter();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (!pctx || (flags & ~(unsigned)CU_CTX_FLAGS_MASK))
        return CUDA_ERROR_INVALID_VALUE;
    if ((rc = emu_device(dev, &phys)) != CUDA_SUCCESS)
        return rc;
    if (t_depth >= EMU_CTX_STACK)
        return CUDA_ERROR_INVALID_VALUE;
    struct CUctx_st *c = calloc(1, sizeof *c);
    if (!c)
        return CUDA_ERROR_OUT_OF_MEMORY;
    c->ordinal = (unsigned)dev;
    c->phys = phys;
    c->flags = flags;
    emu_wrlock();
    if (g_emu.nctx == g_emu.capctx) {
        size_t cap = g_emu.capctx ? g_emu.capctx * 2 : 16;
        struct CUctx_st **n = realloc(g_emu.ctxs, cap * sizeof *n);
        if (!n) {
            emu_unlock();
            free(c);
            return CUDA_ERROR_OUT_OF_MEMORY;
        }
        g_emu.ctxs = n;
        g_emu.capctx = cap;
    }
    if ((rc = activate(c)) != CUDA_SUCCESS) {
        emu_unlock();
        free(c);
        return rc;
    }
    g_emu.ctxs[g_emu.nctx++] = c;
    __atomic_store_n(&c->alive, 1, __ATOMIC_RELEASE);
    emu_unlock();
    push(c);
    *pctx = c;
    return CUDA_SUCCESS;
}

static CUresult check_affinity(const CUexecAffinityParam *p, int n)
{
    if (n < 0 || (n > 0 && !p))
        return CUDA_ERROR_INVALID_VALUE;
    for (int i = 0; i < n; i++)
        if (p[i].type != CU_EXEC_AFFINITY_TYPE_SM_COUNT)
            return CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY;
    return CUDA_SUCCESS;
}

CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
    return ctx_create(pctx, flags, dev);
}

CUresult cuCtxCreate_v3(CUcontext *pctx, CUexecAffinityParam *paramsArray, int numParams,
                        unsigned int flags, CUdevice dev)
{
    CUresult rc = emu_enter();
    if (rc == CUDA_SUCCESS)
        rc = check_affinity(paramsArray, numParams);
    return rc == CUDA_SUCCESS ? ctx_create(pctx, flags, dev) : rc;
}

CUresult cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *p, unsigned int flags, CUdevice dev)
{
    CUresult rc = emu_enter();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (p) {
        if (p->cigParams)
            return CUDA_ERROR_NOT_SUPPORTED; /* graphics interop is not emulated */
        if ((rc = check_affinity(p->execAffinityParams, p->numExecAffinityParams)))
            return rc;
    }
    return ctx_create(pctx, flags, dev);
}

CUresult cuCtxDestroy_v2(CUcontext ctx)
{
    CUresult rc = emu_enter();
    if (rc != CUDA_SUCCESS)
        return rc;
    emu_rdlock();
    int ok = emu_ctx_valid(ctx) && !ctx->primary;
    emu_unlock();
    if (!ok)
        return CUDA_ERROR_INVALID_CONTEXT;
    drain(ctx);
    emu_wrlock();
    if (!emu_ctx_valid(ctx)) {
        emu_unlock();
        return CUDA_ERROR_INVALID_CONTEXT;
    }
    teardown(ctx);
    emu_unlock();
    while (t_depth > 0 && t_stack[t_depth - 1] == ctx)
        t_depth--;
    return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
    CUresult rc = emu_enter();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    if ((rc = emu_device(dev, NULL)) != CUDA_SUCCESS)
        return rc;
    struct CUctx_st *p = &g_emu.primary[dev];
    emu_wrlock();
    if (p->refs == 0) {
        if ((rc = activate(p)) != CUDA_SUCCESS) {
            emu_unlock();
            return rc;
        }
        __atomic_store_n(&p->alive, 1, __ATOMIC_RELEASE);
    }
    p->refs++;
    emu_unlock();
    *pctx = p;
    return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
    CUresult rc = emu_enter();
    if (rc != CUDA_SUCCESS)
        return rc;
    if ((rc = emu_device(dev, NULL)) != CUDA_SUCCESS)
        return rc;
    struct CUctx_st *p = &g_emu.primary[dev];
    emu_rdlock();
    unsigned refs = p->refs;
    emu_unlock();
    if (refs == 0)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (refs == 1)
        drain(p); /* the last release destroys it: its work completes first */
    emu_wrlock();
    if (p->refs == 0) {
        emu_unlock();
        return CUDA_ERROR_INVALID_CONTEXT;
    }
    if (--p->refs == 0)
        teardown(p);
    emu_unlock();
    return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxReset_v2(CUdevice dev)
{
    CUresult rc = emu_enter();
    if (rc != CUDA_SUCCESS)
        return rc;
    if ((rc = emu_device(dev, NULL)) != CUDA_SUCCESS)
        return rc;
    struct CUctx_st *p = &g_emu.primary[dev];
    if (emu_ctx_valid(p))
        drain(p);
    emu_wrlock();
    if (p->refs > 0) {
        p->refs = 0;
        teardown(p);
    }
    emu_unlock();
    return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int *flags, int *active)
{
    CUresult rc = emu_enter();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (!flags || !active)
        return CUDA_ERROR_INVALID_VALUE;
    if ((rc = emu_device(dev, NULL)) != CUDA_SUCCESS)
        return rc;
    emu_rdlock();
    *flags = g_emu.primary[dev].flags;
    *active = g_emu.primary[dev].refs > 0;
    emu_unlock();
    return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxSetFlags_v2(CUdevice dev, unsigned int flags)
{
    CUresult rc = emu_enter();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (flags & ~(unsigned)CU_CTX_FLAGS_MASK)
        return CUDA_ERROR_INVALID_VALUE;
    if ((rc = emu_device(dev, NULL)) != CUDA_SUCCESS)
        return rc;
    emu_wrlock();
    g_emu.primary[dev].flags = flags;
    emu_unlock();
    return CUDA_SUCCESS;
}

CUresult cuCtxSetCurrent(CUcontext ctx)
{
    CUresult rc = emu_enter();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (!ctx) {
        if (t_depth > 0)
            t_depth--;
        return CUDA_SUCCESS;
    }
    if (!emu_ctx_valid(ctx))
        return CUDA_ERROR_INVALID_CONTEXT;
    if (t_depth == 0)
        push(ctx);
    else
        t_stack[t_depth - 1] = ctx;
    return CUDA_SUCCESS;
}

CUresult cuCtxGetCurrent(CUcontext *pctx)
{
    CUresult rc = emu_enter();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    *pctx = t_depth ? t_stack[t_depth - 1] : NULL;
    return CUDA_SUCCESS;
}

CUresult cuCtxPushCurrent_v2(CUcontext ctx)
{
    CUresult rc = emu_enter();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (!emu_ctx_valid(ctx))
        return CUDA_ERROR_INVALID_CONTEXT;
    if (t_depth >= EMU_CTX_STACK)
        return CUDA_ERROR_INVALID_VALUE;
    push(ctx);
    return CUDA_SUCCESS;
}

CUresult cuCtxPopCurrent_v2(CUcontext *pctx)
{
    CUresult rc = emu_enter();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (t_depth == 0)
        return CUDA_ERROR_INVALID_CONTEXT;
    struct CUctx_st *c = t_stack[--t_depth];
    if (pctx)
        *pctx = c;
    return CUDA_SUCCESS;
}

/* NULL means the calling thread's current context (CUDA 13's _v2 forms take one). */
static CUresult resolve(CUcontext ctx, struct CUctx_st **out)
{
    if (!ctx)
        return emu_current_any(out);
    if (!emu_ctx_valid(ctx))
        return CUDA_ERROR_INVALID_CONTEXT;
    *out = ctx;
    return CUDA_SUCCESS;
}

CUresult cuCtxGetDevice_v2(CUdevice *device, CUcontext ctx)
{
    struct CUctx_st *c;
    CUresult rc = emu_enter();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (!device)
        return CUDA_ERROR_INVALID_VALUE;
    if ((rc = resolve(ctx, &c)) != CUDA_SUCCESS)
        return rc;
    *device = (CUdevice)c->ordinal;
    return CUDA_SUCCESS;
}

CUresult cuCtxGetDevice(CUdevice *device) { return cuCtxGetDevice_v2(device, NULL); }

/* Waits for all of the context's streams; reports the fault that ended it, if any. */
CUresult cuCtxSynchronize_v2(CUcontext ctx)
{
    struct CUctx_st *c;
    CUresult rc = emu_enter();
    if (rc == CUDA_SUCCESS)
        rc = resolve(ctx, &c);
    return rc != CUDA_SUCCESS ? rc : emu_ctx_sync(c);
}

CUresult cuCtxSynchronize(void) { return cuCtxSynchronize_v2(NULL); }

CUresult cuCtxGetApiVersion(CUcontext ctx, unsigned int *version)
{
    struct CUctx_st *c;
    CUresult rc = emu_enter();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (!version)
        return CUDA_ERROR_INVALID_VALUE;
    if ((rc = resolve(ctx, &c)) != CUDA_SUCCESS)
        return rc;
    *version = 3020; /* every context since CUDA 3.2 reports the _v2 API */
    return CUDA_SUCCESS;
}

CUresult cuCtxGetFlags(unsigned int *flags)
{
    struct CUctx_st *c;
    CUresult rc = emu_enter_current(&c);
    if (rc != CUDA_SUCCESS)
        return rc;
    if (!flags)
        return CUDA_ERROR_INVALID_VALUE;
    *flags = c->flags;
    return CUDA_SUCCESS;
}

CUresult cuCtxGetLimit(size_t *pvalue, CUlimit limit)
{
    struct CUctx_st *c;
    CUresult rc = emu_enter_current(&c);
    if (rc != CUDA_SUCCESS)
        return rc;
    if (!pvalue)
        return CUDA_ERROR_INVALID_VALUE;
    if ((unsigned)limit >= EMU_CTX_LIMITS)
        return CUDA_ERROR_UNSUPPORTED_LIMIT;
    *pvalue = __atomic_load_n(&c->limits[limit], __ATOMIC_RELAXED);
    return CUDA_SUCCESS;
}

/* The device's bounds: an A100's 40 MiB L2 allows up to 30 MiB of persisting lines. */
#define EMU_PERSISTING_L2_MAX (30u << 20)

CUresult cuCtxSetLimit(CUlimit limit, size_t value)
{
    struct CUctx_st *c;
    CUresult rc = emu_enter_current(&c);
    if (rc != CUDA_SUCCESS)
        return rc;
    switch (limit) {
    case CU_LIMIT_STACK_SIZE:
    case CU_LIMIT_PRINTF_FIFO_SIZE:
    case CU_LIMIT_MALLOC_HEAP_SIZE:
    case CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT:
        break;
    case CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH:
        if (value > 24)
            return CUDA_ERROR_INVALID_VALUE;
        break;
    case CU_LIMIT_MAX_L2_FETCH_GRANULARITY:
        if (value > 128)
            return CUDA_ERROR_INVALID_VALUE;
        break;
    case CU_LIMIT_PERSISTING_L2_CACHE_SIZE:
        if (value > EMU_PERSISTING_L2_MAX)
            value = EMU_PERSISTING_L2_MAX; /* clamped, as the driver does */
        break;
    case CU_LIMIT_CIG_SHMEM_FALLBACK_ENABLED:
        value = value != 0;
        break;
    case CU_LIMIT_SHMEM_SIZE:
    case CU_LIMIT_CIG_ENABLED:
        return CUDA_ERROR_INVALID_VALUE; /* query-only */
    default:
        return CUDA_ERROR_UNSUPPORTED_LIMIT;
    }
    __atomic_store_n(&c->limits[limit], value, __ATOMIC_RELAXED);
    return CUDA_SUCCESS;
}

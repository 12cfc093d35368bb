/* host.c — page-locked host memory: cuMemAllocHost, cuMemHostAlloc, cuMemHostRegister and their
 * companions. It is host memory, never charged to a device. With unified addressing (which the
 * emulated devices report) a page-locked host pointer is also its device pointer: kernels and
 * copies may use it, and asynchronous copies from it return at once. Its ranges live in the
 * allocation table as EMU_A_HOST (ours, freed by cuMemFreeHost or with its context) or
 * EMU_A_HOSTREG (the caller's memory, only forgotten by cuMemHostUnregister or its context). */
#include "workq.h"

#include <errno.h>
#include <sys/mman.h>
#include <unistd.h>

#define EMU_HOSTALLOC_FLAGS                                                                    \
    (CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_WRITECOMBINED)
#define EMU_HOSTREGISTER_FLAGS                                                                 \
    (CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP | CU_MEMHOSTREGISTER_IOMEMORY | \
     CU_MEMHOSTREGISTER_READ_ONLY)

static size_t page_size(void) { return (size_t)sysconf(_SC_PAGESIZE); }

static CUresult host_alloc(void **pp, size_t bytesize, unsigned flags)
{
    struct CUctx_st *ctx;
    CUresult rc = emu_enter_current(&ctx);
    if (rc != CUDA_SUCCESS)
        return rc;
    if (!pp || bytesize == 0 || (flags & ~(unsigned)EMU_HOSTALLOC_FLAGS))
        return CUDA_ERROR_INVALID_VALUE;
    size_t pg = page_size();
    if (bytesize > SIZE_MAX - pg)
        return CUDA_ERROR_OUT_OF_MEMORY;
    emu_alloc a = {.size = bytesize, .maplen = (bytesize + pg - 1) / pg * pg, .phys = ctx->phys,
                   .kind = EMU_A_HOST, .ctx = ctx, .hflags = flags};
    void *p = emu_map_backing(a.maplen);
    if (!p)
        return CUDA_ERROR_OUT_OF_MEMORY;
    a.base = (uintptr_t)p;
    emu_wrlock();
    int bad = emu_alloc_insert(&a);
    emu_unlock();
    if (bad) {
        munmap(p, a.maplen);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    *pp = p;
    return CUDA_SUCCESS;
}

CUresult cuMemAllocHost_v2(void **pp, size_t bytesize) { return host_alloc(pp, bytesize, 0); }

CUresult cuMemHostAlloc(void **pp, size_t bytesize, unsigned int Flags)
{
    return host_alloc(pp, bytesize, Flags);
}

void emu_free_host(emu_alloc *a)
{
    if (a->kind == EMU_A_HOST)
        munmap((void *)a->base, a->maplen);
    emu_alloc_remove(a);
}

/* Frees (or forgets) the host range starting at p of the given kind, after the device's work
 * that may still use it, as the driver synchronises there. */
static CUresult host_release(void *p, int kind, CUresult not_found)
{
    CUresult rc = emu_enter();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (!p)
        return not_found;
    emu_rdlock();
    emu_alloc *a = emu_alloc_find((uintptr_t)p);
    int ok = a && a->base == (uintptr_t)p && a->kind == kind;
    unsigned phys = ok ? a->phys : 0;
    emu_unlock();
    if (!ok)
        return not_found;
    emu_device_sync(phys);
    emu_wrlock();
    a = emu_alloc_find((uintptr_t)p);
    if (a && a->base == (uintptr_t)p && a->kind == kind)
        emu_free_host(a);
    else
        rc = not_found;
    emu_unlock();
    return rc;
}

CUresult cuMemFreeHost(void *p)
{
    return host_release(p, EMU_A_HOST, CUDA_ERROR_INVALID_VALUE);
}

CUresult cuMemHostRegister_v2(void *p, size_t bytesize, unsigned int Flags)
{
    struct CUctx_st *ctx;
    CUresult rc = emu_enter_current(&ctx);
    if (rc != CUDA_SUCCESS)
        return rc;
    uintptr_t base = (uintptr_t)p, end = base + bytesize;
    if (!p || bytesize == 0 || end < base || (Flags & ~(unsigned)EMU_HOSTREGISTER_FLAGS))
        return CUDA_ERROR_INVALID_VALUE;
    if (Flags & CU_MEMHOSTREGISTER_IOMEMORY)
        return CUDA_ERROR_NOT_SUPPORTED; /* no I/O memory behind an emulated device */
    /* The range must be mapped memory, as pinning it requires. */
    size_t pg = page_size();
    uintptr_t first = base / pg * pg;
    if (msync((void *)first, end - first, MS_ASYNC) != 0)
        return errno == ENOMEM ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_OPERATING_SYSTEM;
    emu_alloc a = {.base = base, .size = bytesize, .phys = ctx->phys, .kind = EMU_A_HOSTREG,
                   .ctx = ctx, .hflags = Flags};
    emu_wrlock();
    const emu_alloc *f = emu_alloc_floor(end - 1);
    if (f && f->base + f->size > base)
        rc = CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
    else if (emu_alloc_insert(&a) != 0)
        rc = CUDA_ERROR_OUT_OF_MEMORY;
    emu_unlock();
    return rc;
}

CUresult cuMemHostUnregister(void *p)
{
    return host_release(p, EMU_A_HOSTREG, CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
}

/* The page-locked range holding p, or NULL. Lock held. */
static const emu_alloc *host_range(const void *p)
{
    const emu_alloc *a = emu_alloc_find((uintptr_t)p);
    return a && (a->kind == EMU_A_HOST || a->kind == EMU_A_HOSTREG) ? a : NULL;
}

CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr *pdptr, void *p, unsigned int Flags)
{
    CUresult rc = emu_enter();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (!pdptr || Flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    emu_rdlock();
    const emu_alloc *a = host_range(p);
    emu_unlock();
    if (!a)
        return CUDA_ERROR_INVALID_VALUE;
    *pdptr = (CUdeviceptr)(uintptr_t)p; /* unified addressing: the same address */
    return CUDA_SUCCESS;
}

CUresult cuMemHostGetFlags(unsigned int *pFlags, void *p)
{
    CUresult rc = emu_enter();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (!pFlags)
        return CUDA_ERROR_INVALID_VALUE;
    emu_rdlock();
    const emu_alloc *a = host_range(p);
    unsigned flags = a ? a->hflags : 0;
    emu_unlock();
    if (!a)
        return CUDA_ERROR_INVALID_VALUE;
    /* With unified addressing every page-locked range is mapped for the device. */
    *pFlags = flags | CU_MEMHOSTALLOC_DEVICEMAP;
    return CUDA_SUCCESS;
}

/* memory.c — the process's table of device-pointer ranges and linear allocations
 * (cuMemAlloc, cuMemAllocPitch, cuMemAllocManaged, cuMemFree, cuMemGetInfo, ...).
 *
 * Charging rule (the interposer mirrors it): an allocation of n bytes charges
 * round_up(n, granularity) to its device; a pitched one charges round_up(pitch * height,
 * granularity) with pitch = round_up(width, 512); managed memory is charged to the current
 * context's device like cuMemAlloc. Memory is backed by MAP_NORESERVE anonymous mappings, so
 * it costs host RAM only once written. */
#include "workq.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Index of the last range whose base is <= addr, or -1. */
static long find_floor(uintptr_t addr)
{
    long lo = 0, hi = (long)g_emu.nalloc - 1, best = -1;
    while (lo <= hi) {
        long mid = lo + (hi - lo) / 2;
        if (g_emu.allocs[mid].base <= addr) {
            best = mid;
            lo = mid + 1;
        } else {
            hi = mid - 1;
        }
    }
    return best;
}

emu_alloc *emu_alloc_floor(uintptr_t addr)
{
    long i = find_floor(addr);
    return i < 0 ? NULL : &g_emu.allocs[i];
}

emu_alloc *emu_alloc_find(uintptr_t addr)
{
    long i = find_floor(addr);
    if (i < 0)
        return NULL;
    emu_alloc *a = &g_emu.allocs[i];
    return addr - a->base < a->size ? a : NULL;
}

int emu_alloc_insert(const emu_alloc *a)
{
    if (g_emu.nalloc == g_emu.capalloc) {
        size_t cap = g_emu.capalloc ? g_emu.capalloc * 2 : 64;
        emu_alloc *n = realloc(g_emu.allocs, cap * sizeof *n);
        if (!n)
            return -1;
        g_emu.allocs = n;
        g_emu.capalloc = cap;
    }
    size_t at = (size_t)(find_floor(a->base) + 1);
    memmove(&g_emu.allocs[at + 1], &g_emu.allocs[at], (g_emu.nalloc - at) * sizeof *a);
    g_emu.allocs[at] = *a;
    g_emu.allocs[at].id = __atomic_add_fetch(&g_emu.next_id, 1, __ATOMIC_RELAXED);
    g_emu.nalloc++;
    return 0;
}

void emu_alloc_remove(emu_alloc *a)
{
    size_t at = (size_t)(a - g_emu.allocs);
    memmove(a, a + 1, (g_emu.nalloc - at - 1) * sizeof *a);
    g_emu.nalloc--;
}

CUresult emu_range(uintptr_t addr, size_t n, int write)
{
    if (n == 0)
        return CUDA_SUCCESS;
    if (addr + n < addr)
        return CUDA_ERROR_INVALID_VALUE;
    /* A range may span adjacent ranges (VMM mappings placed side by side in a reservation). */
    while (n > 0) {
        emu_alloc *a = emu_alloc_find(addr);
        if (!a)
            return CUDA_ERROR_INVALID_VALUE;
        if (a->kind == EMU_A_VMM && !(a->prot & (write ? PROT_WRITE : PROT_READ)))
            return CUDA_ERROR_INVALID_VALUE;
        if (a->kind == EMU_A_HOSTREG && write && (a->hflags & CU_MEMHOSTREGISTER_READ_ONLY))
            return CUDA_ERROR_INVALID_VALUE;
        size_t here = a->base + a->size - addr;
        if (here > n)
            here = n;
        addr += here;
        n -= here;
    }
    return CUDA_SUCCESS;
}

void *emu_map_backing(size_t len)
{
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

void emu_free_linear(emu_alloc *a, int uncharge)
{
    munmap((void *)a->base, a->maplen);
    if (uncharge && a->charge)
        emu_shared_uncharge(&g_emu.sh, a->phys, a->charge);
    emu_alloc_remove(a);
}

static size_t page_round(size_t n)
{
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    return (n + pg - 1) / pg * pg;
}

static CUresult linear_alloc(CUdeviceptr *dptr, size_t bytes, int kind)
{
    struct CUctx_st *ctx;
    CUresult rc = emu_enter_current(&ctx);
    if (rc != CUDA_SUCCESS)
        return rc;
    if (!dptr || bytes == 0)
        return CUDA_ERROR_INVALID_VALUE;
    if (bytes > g_emu.cfg.total[ctx->phys])
        return CUDA_ERROR_OUT_OF_MEMORY;
    emu_alloc a = {.size = bytes, .maplen = page_round(bytes), .charge = emu_charge_of(bytes),
                   .phys = ctx->phys, .kind = kind, .ctx = ctx};
    emu_wrlock();
    if (emu_shared_charge(&g_emu.sh, a.phys, a.charge) != 0) {
        emu_unlock();
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    void *p = emu_map_backing(a.maplen);
    a.base = (uintptr_t)p;
    if (!p || emu_alloc_insert(&a) != 0) {
        if (p)
            munmap(p, a.maplen);
        emu_shared_uncharge(&g_emu.sh, a.phys, a.charge);
        emu_unlock();
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    emu_unlock();
    *dptr = (CUdeviceptr)a.base;
    return CUDA_SUCCESS;
}

CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
    return linear_alloc(dptr, bytesize, EMU_A_LINEAR);
}

CUresult cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pPitch, size_t WidthInBytes,
                            size_t Height, unsigned int ElementSizeBytes)
{
    CUresult rc = emu_enter();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (!pPitch || WidthInBytes == 0 || Height == 0 ||
        (ElementSizeBytes != 4 && ElementSizeBytes != 8 && ElementSizeBytes != 16))
        return CUDA_ERROR_INVALID_VALUE;
    uint64_t pitch = emu_round_up(WidthInBytes, EMU_PITCH_ALIGNMENT);
    if (pitch < WidthInBytes || Height > SIZE_MAX / pitch)
        return CUDA_ERROR_OUT_OF_MEMORY;
    rc = linear_alloc(dptr, (size_t)(pitch * Height), EMU_A_PITCH);
    if (rc == CUDA_SUCCESS)
        *pPitch = (size_t)pitch;
    return rc;
}

CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags)
{
    if (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST) {
        CUresult rc = emu_enter();
        return rc != CUDA_SUCCESS ? rc : CUDA_ERROR_INVALID_VALUE;
    }
    return linear_alloc(dptr, bytesize, EMU_A_MANAGED);
}

static int freeable(const emu_alloc *a, CUdeviceptr dptr)
{
    return a && a->base == (uintptr_t)dptr && a->kind != EMU_A_VMM && a->kind != EMU_A_HOST &&
           a->kind != EMU_A_HOSTREG;
}

/* Like the driver's, cuMemFree first waits for the device's work that could still use it (every
 * stream of the process on that device). */
CUresult cuMemFree_v2(CUdeviceptr dptr)
{
    struct CUctx_st *ctx;
    CUresult rc = emu_enter_current(&ctx);
    if (rc != CUDA_SUCCESS)
        return rc;
    if (dptr == 0)
        return CUDA_SUCCESS;
    emu_rdlock();
    emu_alloc *a = emu_alloc_find((uintptr_t)dptr);
    int ok = freeable(a, dptr);
    unsigned phys = ok ? a->phys : 0;
    emu_unlock();
    if (!ok)
        return CUDA_ERROR_INVALID_VALUE;
    emu_device_sync(phys);
    emu_wrlock();
    a = emu_alloc_find((uintptr_t)dptr);
    if (!freeable(a, dptr)) {
        emu_unlock();
        return CUDA_ERROR_INVALID_VALUE; /* another thread freed it meanwhile */
    }
    if (a->kind == EMU_A_POOL)
        emu_pool_free_alloc(a, 1);
    else
        emu_free_linear(a, 1);
    emu_unlock();
    return CUDA_SUCCESS;
}

CUresult cuMemGetInfo_v2(size_t *free, size_t *total)
{
    struct CUctx_st *ctx;
    uint64_t used;
    CUresult rc = emu_enter_current(&ctx);
    if (rc != CUDA_SUCCESS)
        return rc;
    if (!free || !total)
        return CUDA_ERROR_INVALID_VALUE;
    if (emu_shared_used(&g_emu.sh, ctx->phys, &used) != 0)
        return CUDA_ERROR_OPERATING_SYSTEM;
    uint64_t t = g_emu.cfg.total[ctx->phys];
    *total = (size_t)t;
    *free = (size_t)(used < t ? t - used : 0);
    return CUDA_SUCCESS;
}

CUresult cuMemGetAddressRange_v2(CUdeviceptr *pbase, size_t *psize, CUdeviceptr dptr)
{
    struct CUctx_st *ctx;
    CUresult rc = emu_enter_current(&ctx);
    if (rc != CUDA_SUCCESS)
        return rc;
    emu_rdlock();
    emu_alloc *a = emu_alloc_find((uintptr_t)dptr);
    if (a && (a->kind == EMU_A_HOST || a->kind == EMU_A_HOSTREG))
        a = NULL; /* host memory has no device address range */
    if (a) {
        if (pbase)
            *pbase = (CUdeviceptr)a->base;
        if (psize)
            *psize = a->size;
    }
    emu_unlock();
    return a ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

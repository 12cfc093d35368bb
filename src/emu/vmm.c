/* vmm.c — the virtual memory management API (cuMemCreate, cuMemAddressReserve, cuMemMap,
 * cuMemSetAccess, ...). A physical allocation is a memfd of its size, charged to its device at
 * cuMemCreate; a reservation is a PROT_NONE anonymous range; mapping places the memfd at the
 * reserved address, so two mappings of one handle share their bytes as on a GPU, and nothing
 * is accessible until cuMemSetAccess grants it. The charge is returned when the handle has
 * been released and its last mapping is gone, as the real driver defers the release. */
#include "driver.h"

#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

struct emu_vmm {
    emu_obj hdr;            /* first: the handle value is the object's address */
    unsigned phys;
    size_t size;
    int fd;
    int released;
    unsigned maps;
    void *saved;            /* its bytes while the process is checkpointed (checkpoint.c) */
};

static struct emu_vmm *vmm_lookup(CUmemGenericAllocationHandle h)
{
    return (struct emu_vmm *)emu_obj_find((const void *)(uintptr_t)h, EMU_K_VMM);
}

static CUresult check_prop(const CUmemAllocationProp *prop, unsigned *phys)
{
    if (!prop || prop->type != CU_MEM_ALLOCATION_TYPE_PINNED ||
        prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE)
        return CUDA_ERROR_INVALID_VALUE;
    if ((prop->requestedHandleTypes & ~(unsigned)CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) != 0)
        return CUDA_ERROR_NOT_SUPPORTED;
    return emu_device(prop->location.id, phys) == CUDA_SUCCESS ? CUDA_SUCCESS
                                                                : CUDA_ERROR_INVALID_DEVICE;
}

CUresult cuMemGetAllocationGranularity(size_t *granularity, const CUmemAllocationProp *prop,
                                       CUmemAllocationGranularity_flags option)
{
    unsigned phys;
    CUresult rc = emu_enter();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (!granularity || (option != CU_MEM_ALLOC_GRANULARITY_MINIMUM &&
                         option != CU_MEM_ALLOC_GRANULARITY_RECOMMENDED))
        return CUDA_ERROR_INVALID_VALUE;
    if ((rc = check_prop(prop, &phys)) != CUDA_SUCCESS)
        return rc;
    *granularity = (size_t)g_emu.cfg.granularity;
    return CUDA_SUCCESS;
}

static void vmm_free(struct emu_vmm *v, int uncharge)
{
    close(v->fd);
    free(v->saved);
    if (uncharge)
        emu_shared_uncharge(&g_emu.sh, v->phys, v->size);
    emu_obj_del(&v->hdr);
    free(v);
}

void emu_vmm_destroy_obj(emu_obj *o, int uncharge) { vmm_free((struct emu_vmm *)o, uncharge); }

CUresult cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size,
                     const CUmemAllocationProp *prop, unsigned long long flags)
{
    unsigned phys;
    struct CUctx_st *ctx;
    CUresult rc = emu_enter_current(&ctx);
    if (rc != CUDA_SUCCESS)
        return rc;
    if (!handle || flags != 0 || size == 0 || size % g_emu.cfg.granularity != 0)
        return CUDA_ERROR_INVALID_VALUE;
    if ((rc = check_prop(prop, &phys)) != CUDA_SUCCESS)
        return rc;
    if (size > g_emu.cfg.total[phys])
        return CUDA_ERROR_OUT_OF_MEMORY;
    struct emu_vmm *v = calloc(1, sizeof *v);
    if (!v)
        return CUDA_ERROR_OUT_OF_MEMORY;
    v->phys = phys;
    v->size = size;
    v->fd = memfd_create("convgpu-emu-vmm", MFD_CLOEXEC);
    if (v->fd < 0 || ftruncate(v->fd, (off_t)size) != 0) {
        if (v->fd >= 0)
            close(v->fd);
        free(v);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    emu_wrlock();
    if (emu_shared_charge(&g_emu.sh, phys, size) != 0) {
        emu_unlock();
        close(v->fd);
        free(v);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    emu_obj_add(&v->hdr, EMU_K_VMM, NULL);
    emu_unlock();
    *handle = (CUmemGenericAllocationHandle)(uintptr_t)v;
    return CUDA_SUCCESS;
}

CUresult cuMemRelease(CUmemGenericAllocationHandle handle)
{
    CUresult rc = emu_enter();
    if (rc != CUDA_SUCCESS)
        return rc;
    emu_wrlock();
    struct emu_vmm *v = vmm_lookup(handle);
    if (!v || v->released) {
        emu_unlock();
        return CUDA_ERROR_INVALID_VALUE;
    }
    v->released = 1;
    if (v->maps == 0)
        vmm_free(v, 1);
    emu_unlock();
    return CUDA_SUCCESS;
}

/* Index of the reservation holding [p, p+n), or -1. */
static long find_resv(uintptr_t p, size_t n)
{
    for (size_t i = 0; i < g_emu.nresv; i++) {
        emu_range_t *r = &g_emu.resv[i];
        if (p >= r->base && p - r->base <= r->size && n <= r->size - (p - r->base))
            return (long)i;
    }
    return -1;
}

CUresult cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t alignment, CUdeviceptr addr,
                             unsigned long long flags)
{
    CUresult rc = emu_enter();
    if (rc != CUDA_SUCCESS)
        return rc;
    uint64_t g = g_emu.cfg.granularity;
    if (!ptr || size == 0 || size % g != 0 || flags != 0 || (alignment & (alignment - 1)) != 0)
        return CUDA_ERROR_INVALID_VALUE;
    (void)addr; /* only a hint, which a real driver may ignore too */
    size_t align = alignment > g ? alignment : (size_t)g;
    if (size > SIZE_MAX - align)
        return CUDA_ERROR_OUT_OF_MEMORY;
    size_t span = size + align;
    char *raw = mmap(NULL, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (raw == MAP_FAILED)
        return CUDA_ERROR_OUT_OF_MEMORY;
    uintptr_t base = ((uintptr_t)raw + align - 1) & ~(uintptr_t)(align - 1);
    /* Trim the slack on both sides so the reservation is exactly [base, base+size). */
    if (base > (uintptr_t)raw)
        munmap(raw, base - (uintptr_t)raw);
    size_t tail = (uintptr_t)raw + span - (base + size);
    if (tail)
        munmap((void *)(base + size), tail);
    emu_wrlock();
    if (g_emu.nresv == g_emu.capresv) {
        size_t cap = g_emu.capresv ? g_emu.capresv * 2 : 16;
        emu_range_t *n = realloc(g_emu.resv, cap * sizeof *n);
        if (!n) {
            emu_unlock();
            munmap((void *)base, size);
            return CUDA_ERROR_OUT_OF_MEMORY;
        }
        g_emu.resv = n;
        g_emu.capresv = cap;
    }
    g_emu.resv[g_emu.nresv++] = (emu_range_t){base, size};
    emu_unlock();
    *ptr = (CUdeviceptr)base;
    return CUDA_SUCCESS;
}

CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size)
{
    CUresult rc = emu_enter();
    if (rc != CUDA_SUCCESS)
        return rc;
    emu_wrlock();
    long i = find_resv((uintptr_t)ptr, size);
    rc = CUDA_ERROR_INVALID_VALUE;
    if (i >= 0 && g_emu.resv[i].base == (uintptr_t)ptr && g_emu.resv[i].size == size) {
        /* Mappings must be gone first. */
        int mapped = 0;
        for (size_t k = 0; k < g_emu.nalloc; k++) {
            const emu_alloc *o = &g_emu.allocs[k];
            mapped |= o->base < (uintptr_t)ptr + size && (uintptr_t)ptr < o->base + o->size;
        }
        if (!mapped) {
            munmap((void *)ptr, size);
            g_emu.resv[i] = g_emu.resv[--g_emu.nresv];
            rc = CUDA_SUCCESS;
        }
    }
    emu_unlock();
    return rc;
}

CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset,
                  CUmemGenericAllocationHandle handle, unsigned long long flags)
{
    CUresult rc = emu_enter();
    if (rc != CUDA_SUCCESS)
        return rc;
    uint64_t g = g_emu.cfg.granularity;
    if (flags != 0 || size == 0 || size % g || offset % g || ptr % g)
        return CUDA_ERROR_INVALID_VALUE;
    emu_wrlock();
    struct emu_vmm *v = vmm_lookup(handle);
    rc = CUDA_ERROR_INVALID_VALUE;
    if (!v || v->released || offset > v->size || size > v->size - offset ||
        find_resv((uintptr_t)ptr, size) < 0)
        goto out;
    for (size_t k = 0; k < g_emu.nalloc; k++) {
        const emu_alloc *o = &g_emu.allocs[k];
        if (o->base < (uintptr_t)ptr + size && (uintptr_t)ptr < o->base + o->size)
            goto out; /* overlaps an existing mapping */
    }
    emu_alloc a = {.base = (uintptr_t)ptr, .size = size, .phys = v->phys, .kind = EMU_A_VMM,
                   .prot = PROT_NONE, .vmm = v};
    if (emu_alloc_insert(&a) != 0) {
        rc = CUDA_ERROR_OUT_OF_MEMORY;
        goto out;
    }
    if (mmap((void *)(uintptr_t)ptr, size, PROT_NONE, MAP_SHARED | MAP_FIXED, v->fd,
             (off_t)offset) == MAP_FAILED) {
        emu_alloc_remove(emu_alloc_find((uintptr_t)ptr));
        rc = CUDA_ERROR_OUT_OF_MEMORY;
        goto out;
    }
    v->maps++;
    rc = CUDA_SUCCESS;
out:
    emu_unlock();
    return rc;
}

/* Drops one mapping from the table and the handle's count (the caller restores the VA). */
static void drop_mapping(emu_alloc *a, int uncharge)
{
    struct emu_vmm *v = a->vmm;
    emu_alloc_remove(a);
    if (--v->maps == 0 && v->released)
        vmm_free(v, uncharge);
}

void emu_vmm_forget_mapping(emu_alloc *a, int uncharge) { drop_mapping(a, uncharge); }

void emu_vmm_forget_reservations(void)
{
    for (size_t i = 0; i < g_emu.nresv; i++)
        munmap((void *)g_emu.resv[i].base, g_emu.resv[i].size);
    g_emu.nresv = 0;
}

CUresult cuMemUnmap(CUdeviceptr ptr, size_t size)
{
    CUresult rc = emu_enter();
    if (rc != CUDA_SUCCESS)
        return rc;
    uintptr_t p = (uintptr_t)ptr, end = p + size;
    if (size == 0 || end < p)
        return CUDA_ERROR_INVALID_VALUE;
    emu_wrlock();
    /* The range must consist of whole mappings laid end to end. */
    rc = CUDA_ERROR_INVALID_VALUE;
    for (uintptr_t q = p; q < end;) {
        emu_alloc *a = emu_alloc_find(q);
        if (!a || a->kind != EMU_A_VMM || a->base != q || a->size > end - q)
            goto out;
        q += a->size;
    }
    if (mmap((void *)p, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE,
             -1, 0) == MAP_FAILED) {
        rc = CUDA_ERROR_UNMAP_FAILED;
        goto out;
    }
    for (uintptr_t q = p; q < end;) {
        emu_alloc *a = emu_alloc_find(q);
        q += a->size;
        drop_mapping(a, 1);
    }
    rc = CUDA_SUCCESS;
out:
    emu_unlock();
    return rc;
}

CUresult cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc, size_t count)
{
    CUresult rc = emu_enter();
    if (rc != CUDA_SUCCESS)
        return rc;
    uintptr_t p = (uintptr_t)ptr, end = p + size;
    if (!desc || count == 0 || size == 0 || end < p)
        return CUDA_ERROR_INVALID_VALUE;
    int prot = PROT_NONE;
    for (size_t i = 0; i < count; i++) {
        if (desc[i].location.type != CU_MEM_LOCATION_TYPE_DEVICE ||
            emu_device(desc[i].location.id, NULL) != CUDA_SUCCESS)
            return CUDA_ERROR_INVALID_DEVICE;
        switch (desc[i].flags) {
        case CU_MEM_ACCESS_FLAGS_PROT_NONE: break;
        case CU_MEM_ACCESS_FLAGS_PROT_READ: prot |= PROT_READ; break;
        case CU_MEM_ACCESS_FLAGS_PROT_READWRITE: prot |= PROT_READ | PROT_WRITE; break;
        default: return CUDA_ERROR_INVALID_VALUE;
        }
    }
    emu_wrlock();
    rc = CUDA_ERROR_INVALID_VALUE;
    for (uintptr_t q = p; q < end;) {
        emu_alloc *a = emu_alloc_find(q);
        if (!a || a->kind != EMU_A_VMM || a->base != q || a->size > end - q)
            goto out;
        q += a->size;
    }
    if (mprotect((void *)p, size, prot) != 0)
        goto out;
    for (uintptr_t q = p; q < end;) {
        emu_alloc *a = emu_alloc_find(q);
        a->prot = prot;
        q += a->size;
    }
    rc = CUDA_SUCCESS;
out:
    emu_unlock();
    return rc;
}

void emu_vmm_remap(const uint8_t map[EMU_MAX_DEVICES])
{
    for (emu_obj *o = g_emu.objs.next; o != &g_emu.objs; o = o->next)
        if (o->kind == EMU_K_VMM && map[((struct emu_vmm *)o)->phys] != 0xff)
            ((struct emu_vmm *)o)->phys = map[((struct emu_vmm *)o)->phys];
}

/* A physical allocation's bytes leave its memfd for host memory (the file's pages are given
 * back with a hole punched over them) and come back at restore: every mapping of the handle
 * sees them again, at the same addresses. */
int emu_vmm_checkpoint(void)
{
    for (emu_obj *o = g_emu.objs.next; o != &g_emu.objs; o = o->next) {
        if (o->kind != EMU_K_VMM)
            continue;
        struct emu_vmm *v = (struct emu_vmm *)o;
        v->saved = malloc(v->size ? v->size : 1);
        if (!v->saved || pread(v->fd, v->saved, v->size, 0) != (ssize_t)v->size) {
            free(v->saved);
            v->saved = NULL;
            emu_vmm_restore();
            return -1;
        }
        fallocate(v->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, (off_t)v->size);
    }
    return 0;
}

int emu_vmm_restore(void)
{
    int rc = 0;
    for (emu_obj *o = g_emu.objs.next; o != &g_emu.objs; o = o->next) {
        if (o->kind != EMU_K_VMM)
            continue;
        struct emu_vmm *v = (struct emu_vmm *)o;
        if (!v->saved)
            continue;
        if (pwrite(v->fd, v->saved, v->size, 0) != (ssize_t)v->size)
            rc = -1;
        free(v->saved);
        v->saved = NULL;
    }
    return rc;
}

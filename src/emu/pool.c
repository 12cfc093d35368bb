/* pool.c — stream-ordered allocation (cuMemAllocAsync, cuMemFreeAsync) and memory pools.
 *
 * A pool charges the device for its reserved memory, not for what is allocated from it: an
 * allocation takes round_up(size, granularity) from the pool's free reserve and grows the
 * reserve (charging the device) only by the shortfall. When memory is freed the pool keeps at
 * most max(used, release threshold rounded down to a granule) reserved and returns the rest
 * at once: cuMemFreeAsync waits for its stream's earlier work, then frees (a real driver frees
 * in stream order; freeing no earlier is the same to the program, and the accounting the
 * interposer mirrors stays a function of the calls). With the default threshold of 0 a pool
 * therefore holds nothing beyond what is in use. cuMemAllocAsync allocates from the device's
 * current pool (cuDeviceSetMemPool; the default pool unless set). */
#include "workq.h"

#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

struct CUmemPoolHandle_st {
    emu_obj hdr;            /* first: the handle is the object */
    unsigned phys;
    int is_default;
    int destroyed;          /* destroyed by the user, kept until its last allocation is freed */
    uint64_t threshold;
    uint64_t reserved, used, reserved_high, used_high;
    uint64_t max_size;      /* 0 = the device */
    int reuse[3];
};

static struct CUmemPoolHandle_st *pool_new(unsigned phys, int is_default, uint64_t max_size)
{
    struct CUmemPoolHandle_st *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->phys = phys;
    p->is_default = is_default;
    p->max_size = max_size;
    p->reuse[0] = p->reuse[1] = p->reuse[2] = 1;
    emu_obj_add(&p->hdr, EMU_K_POOL, NULL);
    return p;
}

static struct CUmemPoolHandle_st *default_pool(unsigned phys)
{
    if (!g_emu.default_pool[phys])
        g_emu.default_pool[phys] = pool_new(phys, 1, 0);
    return g_emu.default_pool[phys];
}

static struct CUmemPoolHandle_st *pool_lookup(CUmemoryPool h)
{
    struct CUmemPoolHandle_st *p = (struct CUmemPoolHandle_st *)emu_obj_find(h, EMU_K_POOL);
    return p && !p->destroyed ? p : NULL;
}

static void shrink(struct CUmemPoolHandle_st *p, uint64_t target, int uncharge)
{
    if (target < p->used)
        target = p->used;
    if (p->reserved > target) {
        if (uncharge)
            emu_shared_uncharge(&g_emu.sh, p->phys, p->reserved - target);
        p->reserved = target;
    }
}

static void pool_free(struct CUmemPoolHandle_st *p, int uncharge)
{
    shrink(p, 0, uncharge);
    if (g_emu.default_pool[p->phys] == p)
        g_emu.default_pool[p->phys] = NULL;
    if (g_emu.current_pool[p->phys] == p)
        g_emu.current_pool[p->phys] = NULL;
    emu_obj_del(&p->hdr);
    free(p);
}

void emu_pool_destroy_obj(emu_obj *o, int uncharge)
{
    struct CUmemPoolHandle_st *p = (struct CUmemPoolHandle_st *)o;
    p->used = 0;
    pool_free(p, uncharge);
}

void emu_pool_free_alloc(emu_alloc *a, int uncharge)
{
    struct CUmemPoolHandle_st *p = a->pool;
    munmap((void *)a->base, a->maplen);
    p->used -= a->charge;
    emu_alloc_remove(a);
    uint64_t keep = p->threshold / g_emu.cfg.granularity * g_emu.cfg.granularity;
    shrink(p, keep < p->reserved ? keep : p->reserved, uncharge);
    if (p->destroyed && p->used == 0)
        pool_free(p, uncharge);
}

/* The pool cuMemAllocAsync uses on phys. Lock held (write). */
static struct CUmemPoolHandle_st *current_pool(unsigned phys)
{
    return g_emu.current_pool[phys] ? g_emu.current_pool[phys] : default_pool(phys);
}

static CUresult pool_alloc(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool hpool, CUstream h,
                           int ptsz)
{
    struct CUstream_st *s = NULL;
    CUresult rc = emu_enter();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (!dptr || bytesize == 0)
        return CUDA_ERROR_INVALID_VALUE;
    emu_wrlock();
    if ((rc = emu_stream_get_locked(h, ptsz, &s)) != CUDA_SUCCESS) {
        s = NULL;
        goto out;
    }
    struct CUmemPoolHandle_st *p = hpool ? pool_lookup(hpool) : current_pool(s->phys);
    if (!p) {
        rc = hpool ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_OUT_OF_MEMORY;
        goto out;
    }
    rc = CUDA_ERROR_OUT_OF_MEMORY;
    uint64_t limit = p->max_size ? p->max_size : g_emu.cfg.total[p->phys];
    if (bytesize > limit)
        goto out;
    uint64_t c = emu_charge_of(bytesize);
    if (p->max_size && (p->used > p->max_size || c > p->max_size - p->used))
        goto out;
    uint64_t need = p->used + c > p->reserved ? p->used + c - p->reserved : 0;
    if (need && emu_shared_charge(&g_emu.sh, p->phys, need) != 0)
        goto out;
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    emu_alloc a = {.size = bytesize, .maplen = (bytesize + pg - 1) / pg * pg, .charge = c,
                   .phys = p->phys, .kind = EMU_A_POOL, .pool = p};
    void *mem = emu_map_backing(a.maplen);
    a.base = (uintptr_t)mem;
    if (!mem || emu_alloc_insert(&a) != 0) {
        if (mem)
            munmap(mem, a.maplen);
        if (need)
            emu_shared_uncharge(&g_emu.sh, p->phys, need);
        goto out;
    }
    p->reserved += need;
    p->used += c;
    if (p->reserved > p->reserved_high)
        p->reserved_high = p->reserved;
    if (p->used > p->used_high)
        p->used_high = p->used;
    *dptr = (CUdeviceptr)a.base;
    rc = CUDA_SUCCESS;
out:
    emu_unlock();
    if (s)
        emu_stream_put(s);
    return rc;
}

CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
    return pool_alloc(dptr, bytesize, NULL, hStream, 0);
}

CUresult cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
    return pool_alloc(dptr, bytesize, NULL, hStream, 1);
}

static CUresult alloc_from(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool, CUstream h,
                           int ptsz)
{
    if (!pool) {
        CUresult rc = emu_enter();
        return rc != CUDA_SUCCESS ? rc : CUDA_ERROR_INVALID_VALUE;
    }
    return pool_alloc(dptr, bytesize, pool, h, ptsz);
}

CUresult cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool,
                                 CUstream hStream)
{
    return alloc_from(dptr, bytesize, pool, hStream, 0);
}

CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool,
                                      CUstream hStream)
{
    return alloc_from(dptr, bytesize, pool, hStream, 1);
}

static int pool_ptr(CUdeviceptr dptr)
{
    const emu_alloc *a = emu_alloc_find((uintptr_t)dptr);
    return a && a->base == (uintptr_t)dptr && a->kind == EMU_A_POOL;
}

static CUresult free_async(CUdeviceptr dptr, CUstream h, int ptsz)
{
    struct CUstream_st *s;
    CUresult rc = emu_enter();
    if (rc != CUDA_SUCCESS)
        return rc;
    emu_rdlock();
    rc = emu_stream_get_locked(h, ptsz, &s);
    int ok = rc == CUDA_SUCCESS && pool_ptr(dptr);
    emu_unlock();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (ok)
        rc = emu_stream_sync(s); /* the stream's earlier work may still use it */
    emu_stream_put(s);
    if (!ok)
        return CUDA_ERROR_INVALID_VALUE;
    if (rc != CUDA_SUCCESS)
        return rc;
    emu_wrlock();
    if (pool_ptr(dptr))
        emu_pool_free_alloc(emu_alloc_find((uintptr_t)dptr), 1);
    else
        rc = CUDA_ERROR_INVALID_VALUE; /* freed by another thread meanwhile */
    emu_unlock();
    return rc;
}

CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream) { return free_async(dptr, hStream, 0); }

CUresult cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream hStream)
{
    return free_async(dptr, hStream, 1);
}

CUresult cuDeviceGetMemPool(CUmemoryPool *pool, CUdevice dev)
{
    unsigned phys;
    CUresult rc = emu_enter();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (!pool)
        return CUDA_ERROR_INVALID_VALUE;
    if ((rc = emu_device(dev, &phys)) != CUDA_SUCCESS)
        return rc;
    emu_wrlock();
    struct CUmemPoolHandle_st *p = current_pool(phys);
    emu_unlock();
    if (!p)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *pool = p;
    return CUDA_SUCCESS;
}

/* The pool must belong to the device (CUDA_ERROR_INVALID_VALUE otherwise, as the driver says);
 * destroying it makes the default pool current again. */
CUresult cuDeviceSetMemPool(CUdevice dev, CUmemoryPool pool)
{
    unsigned phys;
    CUresult rc = emu_enter();
    if (rc != CUDA_SUCCESS)
        return rc;
    if ((rc = emu_device(dev, &phys)) != CUDA_SUCCESS)
        return rc;
    emu_wrlock();
    struct CUmemPoolHandle_st *p = pool_lookup(pool);
    if (!p || p->phys != phys)
        rc = CUDA_ERROR_INVALID_VALUE;
    else
        g_emu.current_pool[phys] = p->is_default ? NULL : p;
    emu_unlock();
    return rc;
}

CUresult cuDeviceGetDefaultMemPool(CUmemoryPool *pool_out, CUdevice dev)
{
    unsigned phys;
    CUresult rc = emu_enter();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (!pool_out)
        return CUDA_ERROR_INVALID_VALUE;
    if ((rc = emu_device(dev, &phys)) != CUDA_SUCCESS)
        return rc;
    emu_wrlock();
    struct CUmemPoolHandle_st *p = default_pool(phys);
    emu_unlock();
    if (!p)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *pool_out = p;
    return CUDA_SUCCESS;
}

CUresult cuMemPoolCreate(CUmemoryPool *pool, const CUmemPoolProps *props)
{
    unsigned phys;
    CUresult rc = emu_enter();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (!pool || !props || props->allocType != CU_MEM_ALLOCATION_TYPE_PINNED ||
        props->location.type != CU_MEM_LOCATION_TYPE_DEVICE)
        return CUDA_ERROR_INVALID_VALUE;
    if ((props->handleTypes & ~(unsigned)CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) != 0)
        return CUDA_ERROR_NOT_SUPPORTED;
    if (emu_device(props->location.id, &phys) != CUDA_SUCCESS)
        return CUDA_ERROR_INVALID_VALUE;
    emu_wrlock();
    struct CUmemPoolHandle_st *p = pool_new(phys, 0, props->maxSize);
    emu_unlock();
    if (!p)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *pool = p;
    return CUDA_SUCCESS;
}

CUresult cuMemPoolDestroy(CUmemoryPool pool)
{
    CUresult rc = emu_enter();
    if (rc != CUDA_SUCCESS)
        return rc;
    emu_wrlock();
    struct CUmemPoolHandle_st *p = pool_lookup(pool);
    if (!p || p->is_default) {
        emu_unlock();
        return CUDA_ERROR_INVALID_VALUE;
    }
    /* Outstanding allocations stay valid; the pool goes with the last of them. */
    p->destroyed = 1;
    if (g_emu.current_pool[p->phys] == p)
        g_emu.current_pool[p->phys] = NULL;
    shrink(p, 0, 1);
    if (p->used == 0)
        pool_free(p, 1);
    emu_unlock();
    return CUDA_SUCCESS;
}

CUresult cuMemPoolTrimTo(CUmemoryPool pool, size_t minBytesToKeep)
{
    CUresult rc = emu_enter();
    if (rc != CUDA_SUCCESS)
        return rc;
    emu_wrlock();
    struct CUmemPoolHandle_st *p = pool_lookup(pool);
    if (p)
        shrink(p, emu_charge_of(minBytesToKeep), 1);
    emu_unlock();
    return p ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuMemPoolSetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void *value)
{
    CUresult rc = emu_enter();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (!value)
        return CUDA_ERROR_INVALID_VALUE;
    emu_wrlock();
    struct CUmemPoolHandle_st *p = pool_lookup(pool);
    rc = CUDA_ERROR_INVALID_VALUE;
    if (!p)
        goto out;
    switch (attr) {
    case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
        p->reuse[attr - 1] = *(int *)value != 0;
        rc = CUDA_SUCCESS;
        break;
    case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD:
        p->threshold = *(cuuint64_t *)value;
        shrink(p, p->threshold / g_emu.cfg.granularity * g_emu.cfg.granularity, 1);
        rc = CUDA_SUCCESS;
        break;
    case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:
    case CU_MEMPOOL_ATTR_USED_MEM_HIGH:
        /* Only a reset to zero is allowed: the mark restarts from the current value. */
        if (*(cuuint64_t *)value != 0)
            break;
        if (attr == CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH)
            p->reserved_high = p->reserved;
        else
            p->used_high = p->used;
        rc = CUDA_SUCCESS;
        break;
    default:
        break;
    }
out:
    emu_unlock();
    return rc;
}

CUresult cuMemPoolGetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void *value)
{
    CUresult rc = emu_enter();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (!value)
        return CUDA_ERROR_INVALID_VALUE;
    emu_rdlock();
    struct CUmemPoolHandle_st *p = pool_lookup(pool);
    rc = p ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    if (p) {
        switch (attr) {
        case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
        case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
        case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
            *(int *)value = p->reuse[attr - 1];
            break;
        case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD: *(cuuint64_t *)value = p->threshold; break;
        case CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT: *(cuuint64_t *)value = p->reserved; break;
        case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH: *(cuuint64_t *)value = p->reserved_high; break;
        case CU_MEMPOOL_ATTR_USED_MEM_CURRENT: *(cuuint64_t *)value = p->used; break;
        case CU_MEMPOOL_ATTR_USED_MEM_HIGH: *(cuuint64_t *)value = p->used_high; break;
        default: rc = CUDA_ERROR_INVALID_VALUE; break;
        }
    }
    emu_unlock();
    return rc;
}

void emu_pool_remap(const uint8_t map[EMU_MAX_DEVICES])
{
    for (emu_obj *o = g_emu.objs.next; o != &g_emu.objs; o = o->next)
        if (o->kind == EMU_K_POOL && map[((struct CUmemPoolHandle_st *)o)->phys] != 0xff)
            ((struct CUmemPoolHandle_st *)o)->phys = map[((struct CUmemPoolHandle_st *)o)->phys];
}

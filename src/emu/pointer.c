/* pointer.c — cuPointerGetAttribute(s): what the driver knows about an address. Device memory
 * (linear, pitched, pool, VMM), managed memory and page-locked host memory are known; with
 * unified addressing a device pointer is its own address and a page-locked host pointer is its
 * own device pointer. For an address the driver did not hand out, cuPointerGetAttribute answers
 * CUDA_ERROR_INVALID_VALUE while cuPointerGetAttributes answers success with every attribute
 * zero / NULL, as the driver documents. Each attribute is written with the type the driver
 * writes (booleans and enums as 32-bit, addresses and sizes as 64-bit). */
#include "workq.h"

#include <string.h>
#include <sys/mman.h>

/* CUDA_POINTER_ATTRIBUTE_ACCESS_FLAGS values. */
enum { EMU_ACCESS_NONE = 0, EMU_ACCESS_READ = 1, EMU_ACCESS_READWRITE = 3 };

static int visible_ordinal(unsigned phys)
{
    for (unsigned i = 0; i < g_emu.nvis; i++)
        if (g_emu.vis[i] == phys)
            return (int)i;
    return CU_DEVICE_INVALID;
}

static void put_u32(void *out, unsigned v) { memcpy(out, &v, sizeof v); }
static void put_u64(void *out, unsigned long long v) { memcpy(out, &v, sizeof v); }
static void put_ptr(void *out, const void *p) { memcpy(out, &p, sizeof p); }

/* Writes one attribute of ptr (in range a, NULL when unknown; then zeros). Lock held. Returns
 * CUDA_ERROR_INVALID_VALUE for an attribute the memory does not have (a host pointer of device
 * memory), CUDA_ERROR_NOT_SUPPORTED for P2P tokens, which need a real GPU. */
static CUresult attribute(void *out, CUpointer_attribute attr, uintptr_t ptr, const emu_alloc *a)
{
    int host = a && (a->kind == EMU_A_HOST || a->kind == EMU_A_HOSTREG);
    int managed = a && a->kind == EMU_A_MANAGED;
    switch (attr) {
    case CU_POINTER_ATTRIBUTE_CONTEXT: put_ptr(out, a ? a->ctx : NULL); break;
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
        put_u32(out, !a ? 0u : host ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE);
        break;
    case CU_POINTER_ATTRIBUTE_DEVICE_POINTER: put_u64(out, a ? ptr : 0); break;
    case CU_POINTER_ATTRIBUTE_HOST_POINTER:
        if (a && !host && !managed)
            return CUDA_ERROR_INVALID_VALUE; /* device memory has no host address */
        put_ptr(out, a ? (const void *)ptr : NULL);
        break;
    case CU_POINTER_ATTRIBUTE_P2P_TOKENS:
        if (a)
            return CUDA_ERROR_NOT_SUPPORTED;
        memset(out, 0, 16);
        break;
    case CU_POINTER_ATTRIBUTE_SYNC_MEMOPS: put_u32(out, 0); break;
    case CU_POINTER_ATTRIBUTE_BUFFER_ID: put_u64(out, a ? a->id : 0); break;
    case CU_POINTER_ATTRIBUTE_IS_MANAGED: put_u32(out, (unsigned)managed); break;
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
        put_u32(out, a ? (unsigned)visible_ordinal(a->phys) : 0u);
        break;
    case CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE:
        put_u32(out, a && (a->kind == EMU_A_LINEAR || a->kind == EMU_A_PITCH));
        break;
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR: put_u64(out, a ? a->base : 0); break;
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE: put_u64(out, a ? a->size : 0); break;
    case CU_POINTER_ATTRIBUTE_MAPPED: put_u32(out, a != NULL); break;
    case CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES: put_u32(out, 0); break;
    case CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE: put_u32(out, 0); break;
    case CU_POINTER_ATTRIBUTE_ACCESS_FLAGS: {
        unsigned f = !a ? EMU_ACCESS_NONE : EMU_ACCESS_READWRITE;
        if (a && a->kind == EMU_A_VMM)
            f = (a->prot & PROT_WRITE) ? EMU_ACCESS_READWRITE
                : (a->prot & PROT_READ) ? EMU_ACCESS_READ
                                        : EMU_ACCESS_NONE;
        if (a && a->kind == EMU_A_HOSTREG && (a->hflags & CU_MEMHOSTREGISTER_READ_ONLY))
            f = EMU_ACCESS_READ;
        put_u32(out, f);
        break;
    }
    case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE: put_ptr(out, a ? a->pool : NULL); break;
    case CU_POINTER_ATTRIBUTE_MAPPING_SIZE: put_u64(out, a ? a->size : 0); break;
    case CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR: put_ptr(out, a ? (const void *)a->base : NULL); break;
    case CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID: put_u64(out, a ? a->id : 0); break;
    case CU_POINTER_ATTRIBUTE_IS_HW_DECOMPRESS_CAPABLE: put_u32(out, 0); break;
    default: return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}

CUresult cuPointerGetAttribute(void *data, CUpointer_attribute attribute_, CUdeviceptr ptr)
{
    CUresult rc = emu_enter();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (!data)
        return CUDA_ERROR_INVALID_VALUE;
    emu_rdlock();
    const emu_alloc *a = emu_alloc_find((uintptr_t)ptr);
    rc = a ? attribute(data, attribute_, (uintptr_t)ptr, a) : CUDA_ERROR_INVALID_VALUE;
    emu_unlock();
    return rc;
}

CUresult cuPointerGetAttributes(unsigned int numAttributes, CUpointer_attribute *attributes,
                                void **data, CUdeviceptr ptr)
{
    CUresult rc = emu_enter();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (numAttributes == 0 || !attributes || !data)
        return CUDA_ERROR_INVALID_VALUE;
    for (unsigned i = 0; i < numAttributes; i++)
        if (!data[i])
            return CUDA_ERROR_INVALID_VALUE;
    emu_rdlock();
    const emu_alloc *a = emu_alloc_find((uintptr_t)ptr);
    for (unsigned i = 0; i < numAttributes && rc == CUDA_SUCCESS; i++) {
        rc = attribute(data[i], attributes[i], (uintptr_t)ptr, a);
        if (rc == CUDA_ERROR_INVALID_VALUE && attributes[i] == CU_POINTER_ATTRIBUTE_HOST_POINTER) {
            put_ptr(data[i], NULL); /* here a missing host address is NULL, not an error */
            rc = CUDA_SUCCESS;
        } else if (rc == CUDA_ERROR_NOT_SUPPORTED) {
            memset(data[i], 0, 16);
            rc = CUDA_SUCCESS;
        }
    }
    emu_unlock();
    return rc;
}

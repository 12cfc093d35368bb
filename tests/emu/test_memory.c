/* test_memory.c — what each allocation path charges and how it behaves: pitch (512-byte pitch,
 * pitch x height rounded to the granule), arrays and mipmapped arrays (every level; layered
 * and cubemap depth not halved; sparse and deferred-mapping arrays hold nothing), managed memory, stream-ordered pools with
 * their release threshold, VMM (granularity, access, shared bytes, deferred release), and
 * contexts (charge on the first, returned with the last; destroy frees owned memory). */
#include "emu_test.h"

#include <stdio.h>
#include <string.h>

#define G (2 * T_MiB)

static void pitch(uint64_t base)
{
    CUdeviceptr p;
    size_t pitch = 0;
    int align;
    CHECK_OK(cu.cuDeviceGetAttribute(&align, CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT, 0));
    CHECK_CU(cu.cuMemAllocPitch_v2(&p, &pitch, 100, 10, 3), CUDA_ERROR_INVALID_VALUE);
    CHECK_OK(cu.cuMemAllocPitch_v2(&p, &pitch, 1000, 3000, 4));
    CHECK_EQ(pitch, 1024);
    CHECK(pitch % (size_t)align == 0);
    /* 1024 * 3000 = 3072000 bytes -> 2 granules */
    CHECK_EQ(base - t_free(), 2 * G);
    CHECK_OK(cu.cuMemsetD8_v2(p + pitch * 2999, 7, 1000));
    CHECK_OK(cu.cuMemFree_v2(p));
    CHECK_EQ(t_free(), base);
}

static void arrays(uint64_t base)
{
    CUarray a, b;
    CUDA_ARRAY_DESCRIPTOR d = {1024, 1024, CU_AD_FORMAT_FLOAT, 4}; /* 16 MiB */
    CUDA_ARRAY3D_DESCRIPTOR d3 = {100, 100, 100, CU_AD_FORMAT_UNSIGNED_INT16, 2, 0}; /* 4e6 */
    CHECK_OK(cu.cuArrayCreate_v2(&a, &d));
    CHECK_EQ(base - t_free(), 16 * T_MiB);
    CHECK_OK(cu.cuArray3DCreate_v2(&b, &d3));
    CHECK_EQ(base - t_free(), 16 * T_MiB + 2 * G);
    d.NumChannels = 3;
    CHECK_CU(cu.cuArrayCreate_v2(&a, &d), CUDA_ERROR_INVALID_VALUE);
    CHECK_OK(cu.cuArrayDestroy(a));
    CHECK_OK(cu.cuArrayDestroy(b));
    CHECK_CU(cu.cuArrayDestroy(b), CUDA_ERROR_INVALID_HANDLE);
    CHECK_EQ(t_free(), base);
}

static void mipmaps(uint64_t base)
{
    CUmipmappedArray m, m2;
    CUarray a;
    /* 2048 x 2048 x 4 bytes = 16 MiB, then 4, 1, 0.25, ... MiB: 12 levels = 22369620 bytes. */
    CUDA_ARRAY3D_DESCRIPTOR d = {2048, 2048, 0, CU_AD_FORMAT_UNSIGNED_INT8, 4, 0};
    CHECK_OK(cu.cuMipmappedArrayCreate(&m, &d, 12));
    CHECK_EQ(base - t_free(), 11 * G); /* 22369620 bytes -> 11 granules */
    CHECK_CU(cu.cuMipmappedArrayCreate(&m2, &d, 13), CUDA_ERROR_INVALID_VALUE); /* > 2048 -> 1 */
    CHECK_CU(cu.cuMipmappedArrayCreate(&m2, &d, 0), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cu.cuMipmappedArrayCreate(&m2, NULL, 1), CUDA_ERROR_INVALID_VALUE);
    /* A handle of one kind is not a handle of the other. */
    CHECK_CU(cu.cuArrayDestroy((CUarray)(void *)m), CUDA_ERROR_INVALID_HANDLE);
    CHECK_OK(cu.cuMipmappedArrayDestroy(m));
    CHECK_CU(cu.cuMipmappedArrayDestroy(m), CUDA_ERROR_INVALID_HANDLE);
    CHECK_EQ(t_free(), base);
    /* Layered: 8 layers of 1024 x 1024 x 4 bytes, 2 levels: the layers are not halved. */
    CUDA_ARRAY3D_DESCRIPTOR l = {1024, 1024, 8, CU_AD_FORMAT_FLOAT, 1, CUDA_ARRAY3D_LAYERED};
    CHECK_OK(cu.cuMipmappedArrayCreate(&m, &l, 2));
    CHECK_EQ(base - t_free(), 40 * T_MiB); /* 32 MiB + 8 MiB */
    CHECK_OK(cu.cuMipmappedArrayDestroy(m));
    /* Cubemap: 6 faces of 512 x 512, faces square and exactly 6. */
    CUDA_ARRAY3D_DESCRIPTOR c = {512, 512, 6, CU_AD_FORMAT_UNSIGNED_INT32, 4, CUDA_ARRAY3D_CUBEMAP};
    CHECK_OK(cu.cuArray3DCreate_v2(&a, &c));
    CHECK_EQ(base - t_free(), 24 * T_MiB); /* 6 x 512 x 512 x 16 bytes = 24 MiB */
    CHECK_OK(cu.cuArrayDestroy(a));
    c.Depth = 5;
    CHECK_CU(cu.cuArray3DCreate_v2(&a, &c), CUDA_ERROR_INVALID_VALUE);
    c.Depth = 6, c.Height = 256;
    CHECK_CU(cu.cuArray3DCreate_v2(&a, &c), CUDA_ERROR_INVALID_VALUE);
    /* Sparse and deferred-mapping arrays get their memory mapped in later: nothing now. */
    d.Flags = CUDA_ARRAY3D_SPARSE;
    CHECK_OK(cu.cuMipmappedArrayCreate(&m, &d, 12));
    d.Depth = 1024, d.Flags = CUDA_ARRAY3D_DEFERRED_MAPPING; /* 16 GiB: a reservation only */
    CHECK_OK(cu.cuArray3DCreate_v2(&a, &d));
    CHECK_EQ(t_free(), base);
    CHECK_OK(cu.cuArrayDestroy(a));
    CHECK_OK(cu.cuMipmappedArrayDestroy(m));
    /* A chain that does not fit the device. */
    CUDA_ARRAY3D_DESCRIPTOR big = {32768, 32768, 0, CU_AD_FORMAT_FLOAT, 4, 0}; /* 16 GiB */
    CHECK_CU(cu.cuMipmappedArrayCreate(&m, &big, 2), CUDA_ERROR_OUT_OF_MEMORY);
    CHECK_EQ(t_free(), base);
}

static void managed(uint64_t base)
{
    CUdeviceptr p;
    CHECK_CU(cu.cuMemAllocManaged(&p, 4096, 0), CUDA_ERROR_INVALID_VALUE);
    CHECK_OK(cu.cuMemAllocManaged(&p, 3 * T_MiB, CU_MEM_ATTACH_GLOBAL));
    CHECK_EQ(base - t_free(), 2 * G);
    /* Managed memory is host-accessible. */
    ((unsigned char *)(uintptr_t)p)[5] = 42;
    unsigned char c = 0;
    CHECK_OK(cu.cuMemcpyDtoH_v2(&c, p + 5, 1));
    CHECK_EQ(c, 42);
    CHECK_OK(cu.cuMemFree_v2(p));
    CHECK_EQ(t_free(), base);
}

static void pools(uint64_t base)
{
    CUmemoryPool pool, mine;
    CUstream s;
    CUdeviceptr p, q;
    cuuint64_t v;
    CHECK_OK(cu.cuStreamCreate(&s, 0));
    CHECK_OK(cu.cuDeviceGetDefaultMemPool(&pool, 0));
    /* Default threshold 0: a freed allocation goes straight back to the device. */
    CHECK_OK(cu.cuMemAllocAsync(&p, 5 * T_MiB, s));
    CHECK_EQ(base - t_free(), 6 * T_MiB);
    CHECK_OK(cu.cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &v));
    CHECK_EQ(v, 6 * T_MiB);
    CHECK_OK(cu.cuMemFreeAsync(p, s));
    CHECK_OK(cu.cuStreamSynchronize(s));
    CHECK_EQ(t_free(), base);
    CHECK_CU(cu.cuMemFreeAsync(p, s), CUDA_ERROR_INVALID_VALUE);
    /* With a threshold the pool keeps what was freed, up to it; TrimTo gives it back. */
    v = 20 * T_MiB;
    CHECK_OK(cu.cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &v));
    CHECK_OK(cu.cuMemAllocAsync(&p, 16 * T_MiB, s));
    CHECK_OK(cu.cuMemAllocAsync(&q, 16 * T_MiB, s));
    CHECK_EQ(base - t_free(), 32 * T_MiB);
    CHECK_OK(cu.cuMemFreeAsync(p, s));
    CHECK_OK(cu.cuMemFreeAsync(q, s));
    CHECK_OK(cu.cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &v));
    CHECK_EQ(v, 20 * T_MiB);
    CHECK_EQ(base - t_free(), 20 * T_MiB);
    /* Reuse of the reserve does not charge the device again. */
    CHECK_OK(cu.cuMemAllocAsync(&p, 10 * T_MiB, s));
    CHECK_EQ(base - t_free(), 20 * T_MiB);
    CHECK_OK(cu.cuMemFree_v2(p)); /* cuMemFree of pool memory is allowed */
    CHECK_OK(cu.cuMemPoolTrimTo(pool, 0));
    CHECK_EQ(t_free(), base);
    v = 0;
    CHECK_OK(cu.cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &v));
    /* An explicit pool, with maxSize. */
    CUmemPoolProps props;
    memset(&props, 0, sizeof props);
    props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    props.location.id = 0;
    props.maxSize = 8 * T_MiB;
    CHECK_OK(cu.cuMemPoolCreate(&mine, &props));
    CHECK_OK(cu.cuMemAllocFromPoolAsync(&p, 6 * T_MiB, mine, s));
    CHECK_CU(cu.cuMemAllocFromPoolAsync(&q, 4 * T_MiB, mine, s), CUDA_ERROR_OUT_OF_MEMORY);
    CHECK_CU(cu.cuMemPoolDestroy(pool), CUDA_ERROR_INVALID_VALUE); /* the default pool */
    CHECK_OK(cu.cuMemPoolDestroy(mine)); /* p stays valid until freed */
    CHECK_OK(cu.cuMemsetD8_v2(p, 1, 6 * T_MiB));
    CHECK_EQ(base - t_free(), 6 * T_MiB);
    CHECK_OK(cu.cuMemFreeAsync(p, s));
    CHECK_EQ(t_free(), base);
    CHECK_OK(cu.cuStreamDestroy_v2(s));
    CHECK_CU(cu.cuStreamSynchronize(s), CUDA_ERROR_INVALID_HANDLE);
}

static void vmm(uint64_t base)
{
    CUmemAllocationProp prop;
    memset(&prop, 0, sizeof prop);
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;
    size_t g = 0;
    CHECK_OK(cu.cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
    CHECK_EQ(g, G);
    CHECK_OK(cu.cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));
    CHECK_EQ(g, G);
    CUmemGenericAllocationHandle h;
    CHECK_CU(cu.cuMemCreate(&h, G + 4096, &prop, 0), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cu.cuMemCreate(&h, 0, &prop, 0), CUDA_ERROR_INVALID_VALUE);
    CHECK_OK(cu.cuMemCreate(&h, 2 * G, &prop, 0));
    CHECK_EQ(base - t_free(), 2 * G);
    CUdeviceptr a, b;
    CHECK_OK(cu.cuMemAddressReserve(&a, 2 * G, 0, 0, 0));
    CHECK_OK(cu.cuMemAddressReserve(&b, 2 * G, 0, 0, 0));
    CHECK(a % G == 0 && b % G == 0);
    CHECK_OK(cu.cuMemMap(a, 2 * G, 0, h, 0));
    CHECK_CU(cu.cuMemMap(a, 2 * G, 0, h, 0), CUDA_ERROR_INVALID_VALUE); /* already mapped */
    CHECK_OK(cu.cuMemMap(b, G, G, h, 0)); /* second half, elsewhere */
    unsigned char buf[16] = "shared bytes!!!", out[16];
    CHECK_CU(cu.cuMemcpyHtoD_v2(a + G, buf, 16), CUDA_ERROR_INVALID_VALUE); /* no access yet */
    CUmemAccessDesc acc = {{CU_MEM_LOCATION_TYPE_DEVICE, 0}, CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
    CHECK_OK(cu.cuMemSetAccess(a, 2 * G, &acc, 1));
    CHECK_OK(cu.cuMemSetAccess(b, G, &acc, 1));
    CHECK_OK(cu.cuMemcpyHtoD_v2(a + G, buf, 16));
    CHECK_OK(cu.cuMemcpyDtoH_v2(out, b, 16));
    CHECK(memcmp(buf, out, 16) == 0);
    /* Release while mapped: the memory stays charged until the last unmap. */
    CHECK_OK(cu.cuMemRelease(h));
    CHECK_CU(cu.cuMemRelease(h), CUDA_ERROR_INVALID_VALUE);
    CHECK_EQ(base - t_free(), 2 * G);
    CHECK_CU(cu.cuMemAddressFree(a, 2 * G), CUDA_ERROR_INVALID_VALUE); /* still mapped */
    CHECK_OK(cu.cuMemUnmap(a, 2 * G));
    CHECK_EQ(base - t_free(), 2 * G);
    CHECK_OK(cu.cuMemUnmap(b, G));
    CHECK_EQ(t_free(), base);
    CHECK_OK(cu.cuMemAddressFree(a, 2 * G));
    CHECK_OK(cu.cuMemAddressFree(b, 2 * G));
}

static void contexts(uint64_t base)
{
    /* base already includes this process's context charge (the primary context). */
    CUcontext c1, c2, cur;
    CUdeviceptr p;
    CHECK_OK(cu.cuCtxCreate_v4(&c1, NULL, 0, 0));
    CHECK_OK(cu.cuCtxGetCurrent(&cur));
    CHECK(cur == c1);
    CHECK_EQ(t_free(), base); /* a second context on the device costs nothing more */
    CHECK_OK(cu.cuMemAlloc_v2(&p, 10 * T_MiB));
    CHECK_OK(cu.cuCtxCreate_v2(&c2, 0, 0));
    CHECK_OK(cu.cuCtxDestroy_v2(c1)); /* not current: c2 is */
    CHECK_EQ(t_free(), base);         /* c1's allocation went with it */
    CHECK_CU(cu.cuMemFree_v2(p), CUDA_ERROR_INVALID_VALUE);
    CHECK_OK(cu.cuCtxDestroy_v2(c2));
    CHECK_CU(cu.cuCtxDestroy_v2(c2), CUDA_ERROR_INVALID_CONTEXT);
    CHECK_CU(cu.cuCtxPushCurrent_v2(c2), CUDA_ERROR_INVALID_CONTEXT);
    /* Primary context released: the context charge comes back. */
    CHECK_OK(cu.cuDevicePrimaryCtxRelease_v2(0));
    CHECK_CU(cu.cuDevicePrimaryCtxRelease_v2(0), CUDA_ERROR_INVALID_CONTEXT);
    CHECK_CU(cu.cuMemGetInfo_v2(&(size_t){0}, &(size_t){0}), CUDA_ERROR_INVALID_CONTEXT);
    CHECK_OK(cu.cuCtxCreate_v4(&c1, NULL, 0, 0));
    CHECK_EQ(t_free(), base);
    CHECK_OK(cu.cuCtxDestroy_v2(c1));
}

int main(void)
{
    t_isolate();
    t_load_cuda();
    t_init_ctx();
    uint64_t base = t_free();
    CHECK_EQ(base, T_GiB - 66 * T_MiB);
    pitch(base);
    arrays(base);
    mipmaps(base);
    managed(base);
    pools(base);
    vmm(base);
    contexts(base);
    printf("ok\n");
    return 0;
}

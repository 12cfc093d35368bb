/* test_entry.c — the entry points CUDA tools look up (issue #17's list), each with good and bad
 * arguments: memory pools of a device, context limits and flags, stream priorities, peer
 * access, PCI bus ids, pointer attributes, page-locked host memory (never charged to the
 * device), 2D/3D copies, 16-bit and 2D sets, managed-memory hints, function attributes, module
 * loading with JIT options and module globals; and NVML's PCI, minor number, compute
 * capability, temperature, power and clocks. Devices: 1GiB and 2GiB. */
#include "emu_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void pools(void)
{
    CUmemoryPool def, cur, mine, other;
    CHECK_OK(cu.cuDeviceGetDefaultMemPool(&def, 0));
    CHECK_OK(cu.cuDeviceGetMemPool(&cur, 0));
    CHECK(cur == def);
    CUmemPoolProps props;
    memset(&props, 0, sizeof props);
    props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    props.location.id = 0;
    CHECK_OK(cu.cuMemPoolCreate(&mine, &props));
    props.location.id = 1;
    CHECK_OK(cu.cuMemPoolCreate(&other, &props));
    CHECK_OK(cu.cuDeviceSetMemPool(0, mine));
    CHECK_OK(cu.cuDeviceGetMemPool(&cur, 0));
    CHECK(cur == mine);
    /* cuMemAllocAsync now draws from it. */
    CUdeviceptr p;
    cuuint64_t used = 0;
    CHECK_OK(cu.cuMemAllocAsync(&p, 1000, NULL));
    CHECK_OK(cu.cuMemPoolGetAttribute(mine, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &used));
    CHECK_EQ(used, 2 * T_MiB);
    CHECK_OK(cu.cuMemFreeAsync(p, NULL));
    CHECK_CU(cu.cuDeviceSetMemPool(0, other), CUDA_ERROR_INVALID_VALUE); /* device 1's */
    CHECK_CU(cu.cuDeviceSetMemPool(0, (CUmemoryPool)&p), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cu.cuDeviceSetMemPool(5, mine), CUDA_ERROR_INVALID_DEVICE);
    CHECK_CU(cu.cuDeviceGetMemPool(NULL, 0), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cu.cuDeviceGetMemPool(&cur, 9), CUDA_ERROR_INVALID_DEVICE);
    /* Destroying the current pool makes the default current again. */
    CHECK_OK(cu.cuMemPoolDestroy(mine));
    CHECK_OK(cu.cuDeviceGetMemPool(&cur, 0));
    CHECK(cur == def);
    CHECK_OK(cu.cuDeviceSetMemPool(0, def));
    CHECK_OK(cu.cuMemPoolDestroy(other));
}

static void context_facts(void)
{
    size_t v;
    unsigned flags = 77;
    int least = 9, greatest = 9;
    CHECK_OK(cu.cuCtxGetLimit(&v, CU_LIMIT_STACK_SIZE));
    CHECK_EQ(v, 1024);
    CHECK_OK(cu.cuCtxGetLimit(&v, CU_LIMIT_MALLOC_HEAP_SIZE));
    CHECK_EQ(v, 8 * T_MiB);
    CHECK_OK(cu.cuCtxSetLimit(CU_LIMIT_MALLOC_HEAP_SIZE, 64 * T_MiB));
    CHECK_OK(cu.cuCtxGetLimit(&v, CU_LIMIT_MALLOC_HEAP_SIZE));
    CHECK_EQ(v, 64 * T_MiB);
    CHECK_OK(cu.cuCtxSetLimit(CU_LIMIT_PERSISTING_L2_CACHE_SIZE, 1ull << 40));
    CHECK_OK(cu.cuCtxGetLimit(&v, CU_LIMIT_PERSISTING_L2_CACHE_SIZE));
    CHECK_EQ(v, 30 * T_MiB); /* clamped to the device's maximum */
    CHECK_CU(cu.cuCtxSetLimit(CU_LIMIT_MAX_L2_FETCH_GRANULARITY, 256), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cu.cuCtxSetLimit(CU_LIMIT_SHMEM_SIZE, 1), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cu.cuCtxSetLimit((CUlimit)99, 1), CUDA_ERROR_UNSUPPORTED_LIMIT);
    CHECK_CU(cu.cuCtxGetLimit(&v, (CUlimit)99), CUDA_ERROR_UNSUPPORTED_LIMIT);
    CHECK_CU(cu.cuCtxGetLimit(NULL, CU_LIMIT_STACK_SIZE), CUDA_ERROR_INVALID_VALUE);
    CHECK_OK(cu.cuCtxGetFlags(&flags));
    CHECK_EQ(flags, 0);
    CHECK_CU(cu.cuCtxGetFlags(NULL), CUDA_ERROR_INVALID_VALUE);
    CHECK_OK(cu.cuCtxGetStreamPriorityRange(&least, &greatest));
    CHECK(least == 0 && greatest == -5);
    CHECK_OK(cu.cuCtxGetStreamPriorityRange(NULL, NULL));
    int can = 7;
    CHECK_OK(cu.cuDeviceCanAccessPeer(&can, 0, 1));
    CHECK_EQ(can, 0);
    CHECK_CU(cu.cuDeviceCanAccessPeer(&can, 0, 2), CUDA_ERROR_INVALID_DEVICE);
    CHECK_CU(cu.cuDeviceCanAccessPeer(NULL, 0, 1), CUDA_ERROR_INVALID_VALUE);
    char bus[32], small[6];
    CHECK_OK(cu.cuDeviceGetPCIBusId(bus, sizeof bus, 1));
    CHECK(strcmp(bus, "0000:02:00.0") == 0);
    CHECK_OK(cu.cuDeviceGetPCIBusId(small, sizeof small, 0));
    CHECK(strcmp(small, "0000:") == 0);
    CHECK_CU(cu.cuDeviceGetPCIBusId(bus, 0, 0), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cu.cuDeviceGetPCIBusId(bus, sizeof bus, 3), CUDA_ERROR_INVALID_DEVICE);
    /* Without a context, limits and flags have nothing to answer for. */
    CUcontext c;
    CHECK_OK(cu.cuCtxPopCurrent_v2(&c));
    CHECK_CU(cu.cuCtxGetFlags(&flags), CUDA_ERROR_INVALID_CONTEXT);
    CHECK_CU(cu.cuCtxGetLimit(&v, CU_LIMIT_STACK_SIZE), CUDA_ERROR_INVALID_CONTEXT);
    CHECK_OK(cu.cuCtxPushCurrent_v2(c));
}

static void pointers_and_host_memory(void)
{
    CUdeviceptr d, m, dp;
    void *h, *ha;
    uint64_t before = t_free();
    CHECK_OK(cu.cuMemAlloc_v2(&d, 4096));
    CHECK_OK(cu.cuMemAllocManaged(&m, 4096, CU_MEM_ATTACH_GLOBAL));
    CHECK_OK(cu.cuMemHostAlloc(&h, 3 * T_MiB, CU_MEMHOSTALLOC_DEVICEMAP));
    CHECK_EQ(t_free(), before - 4 * T_MiB); /* host memory is not the device's */
    char *reg = aligned_alloc(4096, 8192);
    CHECK_OK(cu.cuMemHostRegister_v2(reg, 8192, CU_MEMHOSTREGISTER_PORTABLE));
    CHECK_EQ(t_free(), before - 4 * T_MiB);

    unsigned type = 0, managed = 9;
    CUcontext ctx = NULL, cur;
    void *hp = (void *)1;
    CHECK_OK(cu.cuCtxGetCurrent(&cur));
    CHECK_OK(cu.cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, d + 10));
    CHECK_EQ(type, CU_MEMORYTYPE_DEVICE);
    CHECK_OK(cu.cuPointerGetAttribute(&ctx, CU_POINTER_ATTRIBUTE_CONTEXT, d));
    CHECK(ctx == cur);
    CHECK_OK(cu.cuPointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, d));
    CHECK_EQ(managed, 0);
    CHECK_CU(cu.cuPointerGetAttribute(&hp, CU_POINTER_ATTRIBUTE_HOST_POINTER, d),
             CUDA_ERROR_INVALID_VALUE);
    CHECK_OK(cu.cuPointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, m));
    CHECK_EQ(managed, 1);
    CHECK_OK(cu.cuPointerGetAttribute(&hp, CU_POINTER_ATTRIBUTE_HOST_POINTER, m));
    CHECK(hp == (void *)(uintptr_t)m);
    CHECK_OK(cu.cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)h));
    CHECK_EQ(type, CU_MEMORYTYPE_HOST);
    CHECK_OK(cu.cuPointerGetAttribute(&dp, CU_POINTER_ATTRIBUTE_DEVICE_POINTER,
                                      (CUdeviceptr)(reg + 100)));
    CHECK_EQ(dp, (CUdeviceptr)(reg + 100));
    CUdeviceptr start = 0;
    size_t size = 0;
    CHECK_OK(cu.cuPointerGetAttribute(&start, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, d + 100));
    CHECK_OK(cu.cuPointerGetAttribute(&size, CU_POINTER_ATTRIBUTE_RANGE_SIZE, d + 100));
    CHECK(start == d && size == 4096);
    int ordinal = -1;
    CHECK_OK(cu.cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, d));
    CHECK_EQ(ordinal, 0);
    unsigned long long id1 = 0, id2 = 0;
    CHECK_OK(cu.cuPointerGetAttribute(&id1, CU_POINTER_ATTRIBUTE_BUFFER_ID, d));
    CHECK_OK(cu.cuPointerGetAttribute(&id2, CU_POINTER_ATTRIBUTE_BUFFER_ID, m));
    CHECK(id1 != 0 && id2 != 0 && id1 != id2);
    int stack;
    CHECK_CU(cu.cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                      (CUdeviceptr)&stack), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cu.cuPointerGetAttribute(NULL, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, d),
             CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cu.cuPointerGetAttribute(&type, (CUpointer_attribute)99, d),
             CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cu.cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_P2P_TOKENS, d),
             CUDA_ERROR_NOT_SUPPORTED);
    /* The plural form: unknown memory is all zeros, and a success. */
    CUpointer_attribute attrs[3] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                    CU_POINTER_ATTRIBUTE_HOST_POINTER,
                                    CU_POINTER_ATTRIBUTE_IS_MANAGED};
    unsigned t2 = 7, im = 7;
    void *hp2 = (void *)1;
    void *data[3] = {&t2, &hp2, &im};
    CHECK_OK(cu.cuPointerGetAttributes(3, attrs, data, (CUdeviceptr)&stack));
    CHECK(t2 == 0 && hp2 == NULL && im == 0);
    CHECK_OK(cu.cuPointerGetAttributes(3, attrs, data, d));
    CHECK(t2 == CU_MEMORYTYPE_DEVICE && hp2 == NULL && im == 0);
    CHECK_CU(cu.cuPointerGetAttributes(0, attrs, data, d), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cu.cuPointerGetAttributes(3, NULL, data, d), CUDA_ERROR_INVALID_VALUE);
    data[1] = NULL;
    CHECK_CU(cu.cuPointerGetAttributes(3, attrs, data, d), CUDA_ERROR_INVALID_VALUE);

    /* Page-locked memory: its own device pointer, flags, usable by copies and kernels. */
    CHECK_OK(cu.cuMemHostGetDevicePointer_v2(&dp, h, 0));
    CHECK_EQ(dp, (CUdeviceptr)h);
    CHECK_CU(cu.cuMemHostGetDevicePointer_v2(&dp, h, 1), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cu.cuMemHostGetDevicePointer_v2(&dp, &stack, 0), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cu.cuMemHostGetDevicePointer_v2(NULL, h, 0), CUDA_ERROR_INVALID_VALUE);
    unsigned hf = 0;
    CHECK_OK(cu.cuMemHostGetFlags(&hf, reg));
    CHECK_EQ(hf, CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP);
    CHECK_CU(cu.cuMemHostGetFlags(&hf, &stack), CUDA_ERROR_INVALID_VALUE);
    memset(reg, 0x5a, 8192);
    CHECK_OK(cu.cuMemcpyDtoDAsync_v2((CUdeviceptr)h, (CUdeviceptr)reg, 8192, NULL));
    CHECK_OK(cu.cuCtxSynchronize());
    CHECK(((unsigned char *)h)[8191] == 0x5a);
    CHECK_OK(cu.cuMemsetD8_v2((CUdeviceptr)h, 0x22, 16));
    CHECK(((unsigned char *)h)[15] == 0x22);
    CHECK_CU(cu.cuMemHostRegister_v2(reg + 4096, 100, 0), CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
    CHECK_CU(cu.cuMemHostRegister_v2(reg, 0, 0), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cu.cuMemHostRegister_v2(NULL, 10, 0), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cu.cuMemHostRegister_v2(&stack, sizeof stack, 0x40), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cu.cuMemHostRegister_v2(&stack, sizeof stack, CU_MEMHOSTREGISTER_IOMEMORY),
             CUDA_ERROR_NOT_SUPPORTED);
    CHECK_CU(cu.cuMemHostRegister_v2((void *)(uintptr_t)4096, 4096, 0), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cu.cuMemHostUnregister(reg + 1), CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
    CHECK_CU(cu.cuMemFree_v2((CUdeviceptr)h), CUDA_ERROR_INVALID_VALUE); /* not device memory */
    CHECK_OK(cu.cuMemHostUnregister(reg));
    CHECK_CU(cu.cuMemHostUnregister(reg), CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
    CHECK_CU(cu.cuMemHostGetFlags(&hf, reg), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cu.cuMemHostAlloc(&ha, 16, 0x8), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cu.cuMemHostAlloc(&ha, 0, 0), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cu.cuMemHostAlloc(NULL, 16, 0), CUDA_ERROR_INVALID_VALUE);
    CHECK_OK(cu.cuMemFreeHost(h));
    CHECK_CU(cu.cuMemFreeHost(h), CUDA_ERROR_INVALID_VALUE);
    free(reg);

    /* Managed memory hints: accepted on managed ranges only. */
    CUmemLocation dev0 = {CU_MEM_LOCATION_TYPE_DEVICE, 0}, host = {CU_MEM_LOCATION_TYPE_HOST, 0};
    CHECK_OK(cu.cuMemAdvise(m, 4096, CU_MEM_ADVISE_SET_READ_MOSTLY, 0));
    CHECK_OK(cu.cuMemAdvise(m, 100, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, CU_DEVICE_CPU));
    CHECK_OK(cu.cuMemAdvise_v2(m, 4096, CU_MEM_ADVISE_SET_ACCESSED_BY, dev0));
    CHECK_CU(cu.cuMemAdvise(d, 4096, CU_MEM_ADVISE_SET_READ_MOSTLY, 0), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cu.cuMemAdvise(m, 8192, CU_MEM_ADVISE_SET_READ_MOSTLY, 0), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cu.cuMemAdvise(m, 4096, (CUmem_advise)9, 0), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cu.cuMemAdvise(m, 4096, CU_MEM_ADVISE_SET_READ_MOSTLY, 5), CUDA_ERROR_INVALID_DEVICE);
    CHECK_OK(cu.cuMemPrefetchAsync(m, 4096, 0, NULL));
    CHECK_OK(cu.cuMemPrefetchAsync_v2(m, 4096, host, 0, NULL));
    CHECK_CU(cu.cuMemPrefetchAsync_v2(m, 4096, host, 1, NULL), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cu.cuMemPrefetchAsync(d, 4096, 0, NULL), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cu.cuMemPrefetchAsync(m, 0, 0, NULL), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cu.cuMemPrefetchAsync(m, 4096, 0, (CUstream)&stack), CUDA_ERROR_INVALID_HANDLE);
    CHECK_OK(cu.cuMemFree_v2(m));
    CHECK_OK(cu.cuMemFree_v2(d));
    CHECK_EQ(t_free(), before);
}

static void copies_and_sets(void)
{
    enum { W = 100, H = 8, PITCH = 512 };
    CUdeviceptr d;
    size_t pitch;
    unsigned char src[H][W], back[H][W];
    CHECK_OK(cu.cuMemAllocPitch_v2(&d, &pitch, W, H, 4));
    CHECK_EQ(pitch, PITCH);
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            src[y][x] = (unsigned char)(y * 16 + x);
    CUDA_MEMCPY2D c;
    memset(&c, 0, sizeof c);
    c.srcMemoryType = CU_MEMORYTYPE_HOST;
    c.srcHost = src;
    c.srcPitch = W;
    c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    c.dstDevice = d;
    c.dstPitch = pitch;
    c.WidthInBytes = W;
    c.Height = H;
    CHECK_OK(cu.cuMemcpy2D_v2(&c));
    /* Back by a 3D copy of one slice, unified addressing on the device side. */
    CUDA_MEMCPY3D c3;
    memset(&c3, 0, sizeof c3);
    c3.srcMemoryType = CU_MEMORYTYPE_UNIFIED;
    c3.srcDevice = d;
    c3.srcPitch = pitch;
    c3.srcHeight = H;
    c3.dstMemoryType = CU_MEMORYTYPE_HOST;
    c3.dstHost = back;
    c3.dstPitch = W;
    c3.dstHeight = H;
    c3.WidthInBytes = W;
    c3.Height = H;
    c3.Depth = 1;
    CHECK_OK(cu.cuMemcpy3D_v2(&c3));
    CHECK(memcmp(src, back, sizeof src) == 0);
    /* An inner rectangle: offsets apply on both sides. */
    c.srcXInBytes = 10;
    c.srcY = 2;
    c.dstXInBytes = 0;
    c.dstY = 0;
    c.WidthInBytes = 5;
    c.Height = 3;
    CHECK_OK(cu.cuMemcpy2DAsync_v2(&c, NULL)); /* pageable: complete on return */
    unsigned char row[5];
    CHECK_OK(cu.cuMemcpyDtoH_v2(row, d + pitch, 5));
    CHECK(row[0] == src[3][10] && row[4] == src[3][14]);
    c.WidthInBytes = W + 1; /* wider than the source pitch */
    CHECK_CU(cu.cuMemcpy2D_v2(&c), CUDA_ERROR_INVALID_VALUE);
    c.WidthInBytes = 5;
    c.dstY = H + 100; /* beyond the allocation */
    CHECK_CU(cu.cuMemcpy2D_v2(&c), CUDA_ERROR_INVALID_VALUE);
    c.dstY = 0;
    c.dstMemoryType = CU_MEMORYTYPE_ARRAY;
    CHECK_CU(cu.cuMemcpy2D_v2(&c), CUDA_ERROR_NOT_SUPPORTED);
    c.dstMemoryType = (CUmemorytype)9;
    CHECK_CU(cu.cuMemcpy2D_v2(&c), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cu.cuMemcpy2D_v2(NULL), CUDA_ERROR_INVALID_VALUE);
    c3.srcLOD = 1;
    CHECK_CU(cu.cuMemcpy3D_v2(&c3), CUDA_ERROR_INVALID_VALUE);
    c3.srcLOD = 0;
    c3.reserved0 = &c3;
    CHECK_CU(cu.cuMemcpy3D_v2(&c3), CUDA_ERROR_INVALID_VALUE);
    c3.reserved0 = NULL;
    c3.Depth = 2; /* two slices of H rows do not fit */
    CHECK_CU(cu.cuMemcpy3D_v2(&c3), CUDA_ERROR_INVALID_VALUE);

    /* Sets: 16-bit and 2D. */
    uint16_t h16[4];
    CHECK_OK(cu.cuMemsetD16_v2(d, 0xbeef, 4));
    CHECK_OK(cu.cuMemcpyDtoH_v2(h16, d, sizeof h16));
    CHECK(h16[0] == 0xbeef && h16[3] == 0xbeef);
    CHECK_OK(cu.cuMemsetD16Async(d + 2, 0x1234, 1, NULL));
    CHECK_OK(cu.cuCtxSynchronize());
    CHECK_OK(cu.cuMemcpyDtoH_v2(h16, d, sizeof h16));
    CHECK(h16[0] == 0xbeef && h16[1] == 0x1234 && h16[2] == 0xbeef);
    CHECK_CU(cu.cuMemsetD16_v2(d + 1, 0, 4), CUDA_ERROR_INVALID_VALUE); /* misaligned */
    CHECK_OK(cu.cuMemsetD8_v2(d, 0, pitch * H));
    CHECK_OK(cu.cuMemsetD2D8_v2(d, pitch, 0xaa, 3, 2));
    CHECK_OK(cu.cuMemcpyDtoH_v2(row, d + pitch, 5));
    CHECK(row[0] == 0xaa && row[2] == 0xaa && row[3] == 0);
    CHECK_OK(cu.cuMemsetD2D16_v2(d, pitch, 0x0102, 2, H));
    CHECK_OK(cu.cuMemsetD2D32_v2(d + 8, pitch, 0x0a0b0c0d, 1, H));
    CHECK_OK(cu.cuMemsetD2D32Async(d + 12, pitch, 0x01010101, 1, H, NULL));
    CHECK_OK(cu.cuCtxSynchronize());
    unsigned char last[16];
    CHECK_OK(cu.cuMemcpyDtoH_v2(last, d + (H - 1) * pitch, 16));
    CHECK(last[0] == 0x02 && last[1] == 0x01 && last[8] == 0x0d && last[11] == 0x0a &&
          last[12] == 0x01);
    CHECK_CU(cu.cuMemsetD2D8_v2(d, 10, 0, 20, 2), CUDA_ERROR_INVALID_VALUE); /* pitch < row */
    CHECK_CU(cu.cuMemsetD2D8_v2(d, pitch, 0, pitch, H + 1), CUDA_ERROR_INVALID_VALUE);
    CHECK_OK(cu.cuMemFree_v2(d));
}

/* Copies between contexts (device 1's own context and device 0's primary one): the bytes, every
 * form, a dead or missing context; the 1D array copies: checked, then not supported (arrays
 * hold no bytes here), a bad handle refused. */
static void peer_and_array_copies(void)
{
    CUcontext c0, c1;
    CUdevice d1;
    CHECK_OK(cu.cuCtxGetCurrent(&c0));
    CHECK_OK(cu.cuDeviceGet(&d1, 1));
    CHECK_OK(cu.cuCtxCreate_v2(&c1, 0, d1));
    CUdeviceptr b1;
    CHECK_OK(cu.cuMemAlloc_v2(&b1, 4096));
    CHECK_OK(cu.cuCtxSetCurrent(c0));
    CUdeviceptr b0;
    CHECK_OK(cu.cuMemAlloc_v2(&b0, 4096));
    unsigned char src[4096], back[4096];
    for (int i = 0; i < 4096; i++)
        src[i] = (unsigned char)(i * 7);
    CHECK_OK(cu.cuMemcpyHtoD_v2(b0, src, sizeof src));
    CHECK_OK(cu.cuMemcpyPeer(b1, c1, b0, c0, 4096));
    CHECK_OK(cu.cuMemsetD8_v2(b0, 0, 4096));
    CHECK_OK(cu.cuMemcpyPeer_ptds(b0, c0, b1, c1, 1024));
    CHECK_OK(cu.cuMemcpyPeerAsync(b0 + 1024, c0, b1 + 1024, c1, 1024, NULL));
    CHECK_OK(cu.cuMemcpyPeerAsync_ptsz(b0 + 2048, c0, b1 + 2048, c1, 1024, NULL));
    CHECK_OK(cu.cuCtxSynchronize());
    CUDA_MEMCPY3D_PEER p;
    memset(&p, 0, sizeof p);
    p.srcMemoryType = p.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    p.srcDevice = b1 + 3072;
    p.srcContext = c1;
    p.dstDevice = b0 + 3072;
    p.dstContext = c0;
    p.WidthInBytes = 512;
    p.Height = p.Depth = 1;
    CHECK_OK(cu.cuMemcpy3DPeer(&p));
    p.srcDevice += 512;
    p.dstDevice += 512;
    CHECK_OK(cu.cuMemcpy3DPeerAsync(&p, NULL));
    CHECK_OK(cu.cuCtxSynchronize());
    CHECK_OK(cu.cuMemcpyDtoH_v2(back, b0, sizeof back));
    CHECK(memcmp(src, back, sizeof src) == 0);
    CHECK_OK(cu.cuMemcpy3DPeer_ptds(&p));
    CHECK_OK(cu.cuMemcpy3DPeerAsync_ptsz(&p, NULL));
    p.srcContext = NULL;
    CHECK_CU(cu.cuMemcpy3DPeer(&p), CUDA_ERROR_INVALID_CONTEXT);
    CHECK_CU(cu.cuMemcpy3DPeer(NULL), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cu.cuMemcpyPeer(b1, NULL, b0, c0, 16), CUDA_ERROR_INVALID_CONTEXT);
    CHECK_CU(cu.cuMemcpyPeer(b1, c1, b0 + 8192, c0, 16), CUDA_ERROR_INVALID_VALUE);
    CHECK_OK(cu.cuCtxSetCurrent(c1));
    CHECK_OK(cu.cuMemFree_v2(b1));
    CHECK_OK(cu.cuCtxSetCurrent(c0));
    CHECK_OK(cu.cuCtxDestroy_v2(c1));
    CHECK_CU(cu.cuMemcpyPeer(b0, c0, b0 + 2048, c1, 16), CUDA_ERROR_INVALID_CONTEXT);

    CUarray a;
    CUDA_ARRAY_DESCRIPTOR ad = {.Width = 256, .Height = 0, .Format = CU_AD_FORMAT_UNSIGNED_INT8,
                                .NumChannels = 1};
    CHECK_OK(cu.cuArrayCreate_v2(&a, &ad));
    CHECK_CU(cu.cuMemcpyAtoD_v2(b0, a, 0, 64), CUDA_ERROR_NOT_SUPPORTED);
    CHECK_CU(cu.cuMemcpyAtoD_v2_ptds(b0, a, 0, 64), CUDA_ERROR_NOT_SUPPORTED);
    CHECK_CU(cu.cuMemcpyDtoA_v2(a, 0, b0, 64), CUDA_ERROR_NOT_SUPPORTED);
    CHECK_CU(cu.cuMemcpyAtoH_v2(back, a, 0, 64), CUDA_ERROR_NOT_SUPPORTED);
    CHECK_CU(cu.cuMemcpyHtoA_v2(a, 0, src, 64), CUDA_ERROR_NOT_SUPPORTED);
    CHECK_CU(cu.cuMemcpyAtoA_v2(a, 0, a, 128, 64), CUDA_ERROR_NOT_SUPPORTED);
    CHECK_CU(cu.cuMemcpyAtoHAsync_v2(back, a, 0, 64, NULL), CUDA_ERROR_NOT_SUPPORTED);
    CHECK_CU(cu.cuMemcpyHtoAAsync_v2(a, 0, src, 64, NULL), CUDA_ERROR_NOT_SUPPORTED);
    CHECK_CU(cu.cuMemcpyHtoAAsync_v2_ptsz(a, 0, src, 64, NULL), CUDA_ERROR_NOT_SUPPORTED);
    CHECK_OK(cu.cuMemcpyAtoD_v2(b0, a, 0, 0));
    CHECK_CU(cu.cuMemcpyAtoH_v2(NULL, a, 0, 64), CUDA_ERROR_INVALID_VALUE);
    CHECK_OK(cu.cuArrayDestroy(a));
    CHECK_CU(cu.cuMemcpyAtoD_v2(b0, a, 0, 64), CUDA_ERROR_INVALID_HANDLE);
    CHECK_CU(cu.cuMemcpyAtoA_v2(a, 0, NULL, 0, 64), CUDA_ERROR_INVALID_HANDLE);
    CHECK_OK(cu.cuMemFree_v2(b0));
}

/* Batched copies (12.8's forms and 13.0's _v2): every copy of a batch lands; a batch with a
 * bad copy or bad attributes is refused whole (nothing moved) and, in the forms that can, names
 * the copy; the legacy stream and array operands as documented. */
static void batched_copies(void)
{
    enum { N = 4, SZ = 1024 };
    CUstream s;
    CHECK_OK(cu.cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CUdeviceptr a, b;
    CHECK_OK(cu.cuMemAlloc_v2(&a, N * SZ));
    CHECK_OK(cu.cuMemAlloc_v2(&b, N * SZ));
    unsigned char src[N * SZ], back[N * SZ], zero[N * SZ];
    for (int i = 0; i < N * SZ; i++)
        src[i] = (unsigned char)(i * 13 + 1);
    memset(zero, 0, sizeof zero);
    CHECK_OK(cu.cuMemsetD8_v2(a, 0, N * SZ));
    CHECK_OK(cu.cuMemsetD8_v2(b, 0, N * SZ));

    /* host -> a in four copies under two attribute sets, then a -> b device to device */
    CUdeviceptr dsts[N], srcs[N];
    size_t sizes[N], idx[2] = {0, 2}, fail = 7;
    CUmemcpyAttributes at[2];
    memset(at, 0, sizeof at);
    at[0].srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
    at[1].srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL;
    for (int i = 0; i < N; i++) {
        dsts[i] = a + (CUdeviceptr)i * SZ;
        srcs[i] = (CUdeviceptr)(uintptr_t)(src + i * SZ);
        sizes[i] = SZ;
    }
    CHECK_OK(cu.cuMemcpyBatchAsync(dsts, srcs, sizes, N, at, idx, 2, &fail, s));
    for (int i = 0; i < N; i++) {
        dsts[i] = b + (CUdeviceptr)i * SZ;
        srcs[i] = a + (CUdeviceptr)i * SZ;
    }
    CHECK_OK(cu.cuMemcpyBatchAsync_v2(dsts, srcs, sizes, N, at, idx, 1, s));
    CHECK_OK(cu.cuStreamSynchronize(s));
    CHECK_OK(cu.cuMemcpyDtoH_v2(back, b, sizeof back));
    CHECK(memcmp(back, src, sizeof src) == 0);
    CHECK_OK(cu.cuMemcpyBatchAsync_ptsz(dsts, srcs, sizes, N, at, idx, 2, NULL, NULL));
    CHECK_OK(cu.cuMemcpyBatchAsync_v2_ptsz(dsts, srcs, sizes, N, at, idx, 2, NULL));
    CHECK_OK(cu.cuStreamSynchronize(NULL));

    /* refused whole: the bad copy is named, and the good ones before it did not run */
    CHECK_OK(cu.cuMemsetD8_v2(b, 0, N * SZ));
    sizes[2] = N * SZ; /* runs past both allocations */
    CHECK_CU(cu.cuMemcpyBatchAsync(dsts, srcs, sizes, N, at, idx, 2, &fail, s),
             CUDA_ERROR_INVALID_VALUE);
    CHECK_EQ(fail, 2);
    CHECK_CU(cu.cuMemcpyBatchAsync_v2(dsts, srcs, sizes, N, at, idx, 2, s),
             CUDA_ERROR_INVALID_VALUE);
    sizes[2] = SZ;
    CHECK_OK(cu.cuStreamSynchronize(s));
    CHECK_OK(cu.cuMemcpyDtoH_v2(back, b, sizeof back));
    CHECK(memcmp(back, zero, sizeof zero) == 0);
    /* the call's own faults: failIdx SIZE_MAX */
    CHECK_CU(cu.cuMemcpyBatchAsync(dsts, srcs, sizes, N, at, idx, 2, &fail, NULL),
             CUDA_ERROR_INVALID_VALUE); /* the legacy stream */
    CHECK(fail == SIZE_MAX);
    CHECK_CU(cu.cuMemcpyBatchAsync(dsts, srcs, sizes, N, at, idx, 2, &fail, CU_STREAM_LEGACY),
             CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cu.cuMemcpyBatchAsync(dsts, srcs, sizes, 0, at, idx, 1, &fail, s),
             CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cu.cuMemcpyBatchAsync(dsts, srcs, sizes, N, at, idx, N + 1, &fail, s),
             CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cu.cuMemcpyBatchAsync(dsts, srcs, NULL, N, at, idx, 2, &fail, s),
             CUDA_ERROR_INVALID_VALUE);
    size_t bad_idx[2] = {1, 2}, dup_idx[2] = {0, 0}, far_idx[2] = {0, N};
    CHECK_CU(cu.cuMemcpyBatchAsync(dsts, srcs, sizes, N, at, bad_idx, 2, &fail, s),
             CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cu.cuMemcpyBatchAsync(dsts, srcs, sizes, N, at, dup_idx, 2, &fail, s),
             CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cu.cuMemcpyBatchAsync(dsts, srcs, sizes, N, at, far_idx, 2, &fail, s),
             CUDA_ERROR_INVALID_VALUE);
    at[1].srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_INVALID;
    CHECK_CU(cu.cuMemcpyBatchAsync(dsts, srcs, sizes, N, at, idx, 2, &fail, s),
             CUDA_ERROR_INVALID_VALUE);
    at[1].srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_ANY;
    at[1].flags = 0x80;
    CHECK_CU(cu.cuMemcpyBatchAsync(dsts, srcs, sizes, N, at, idx, 2, &fail, s),
             CUDA_ERROR_INVALID_VALUE);
    at[1].flags = CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE;
    CHECK_OK(cu.cuMemcpyBatchAsync(dsts, srcs, sizes, N, at, idx, 2, &fail, s));

    /* 3D: a 16 x 8 x 2 box from a (rows of 32, layers of 16) into b packed, and back out */
    CHECK_OK(cu.cuMemsetD8_v2(b, 0, N * SZ));
    CUDA_MEMCPY3D_BATCH_OP op[2];
    memset(op, 0, sizeof op);
    op[0].src.type = CU_MEMCPY_OPERAND_TYPE_POINTER;
    op[0].src.op.ptr.ptr = a + 32 + 3;
    op[0].src.op.ptr.rowLength = 32;
    op[0].src.op.ptr.layerHeight = 16;
    op[0].dst.type = CU_MEMCPY_OPERAND_TYPE_POINTER;
    op[0].dst.op.ptr.ptr = b;
    op[0].extent = (CUextent3D){.width = 16, .height = 8, .depth = 2};
    op[0].srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
    op[1] = op[0];
    op[1].src.op.ptr.ptr = (CUdeviceptr)(uintptr_t)src;
    op[1].dst.op.ptr.ptr = b + 256;
    op[1].extent = (CUextent3D){.width = 64, .height = 1, .depth = 1};
    op[1].src.op.ptr.rowLength = op[1].src.op.ptr.layerHeight = 0;
    CHECK_OK(cu.cuMemcpy3DBatchAsync(2, op, &fail, 0, s));
    CHECK_OK(cu.cuStreamSynchronize(s));
    CHECK_OK(cu.cuMemcpyDtoH_v2(back, b, 256 + 64));
    int same = 1;
    for (int z = 0; z < 2; z++)
        for (int y = 0; y < 8; y++)
            for (int x = 0; x < 16; x++)
                same &= back[(z * 8 + y) * 16 + x] == src[z * 512 + (y + 1) * 32 + 3 + x];
    CHECK(same);
    CHECK(memcmp(back + 256, src, 64) == 0);
    CHECK_OK(cu.cuMemcpy3DBatchAsync_v2(2, op, 0, s));
    CHECK_OK(cu.cuMemcpy3DBatchAsync_ptsz(2, op, &fail, 0, NULL));
    CHECK_OK(cu.cuMemcpy3DBatchAsync_v2_ptsz(2, op, 0, NULL));
    CHECK_OK(cu.cuCtxSynchronize());
    CHECK_CU(cu.cuMemcpy3DBatchAsync(2, op, &fail, 1, s), CUDA_ERROR_INVALID_VALUE);
    CHECK(fail == SIZE_MAX);
    CHECK_CU(cu.cuMemcpy3DBatchAsync(2, op, &fail, 0, NULL), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cu.cuMemcpy3DBatchAsync(0, op, &fail, 0, s), CUDA_ERROR_INVALID_VALUE);
    op[1].extent.depth = 0;
    CHECK_CU(cu.cuMemcpy3DBatchAsync(2, op, &fail, 0, s), CUDA_ERROR_INVALID_VALUE);
    CHECK_EQ(fail, 1);
    op[1].extent.depth = 1;
    op[1].dst.op.ptr.rowLength = 8; /* shorter than a row */
    CHECK_CU(cu.cuMemcpy3DBatchAsync(2, op, &fail, 0, s), CUDA_ERROR_INVALID_VALUE);
    CHECK_EQ(fail, 1);
    op[1].dst.op.ptr.rowLength = 0;
    op[0].src.op.ptr.layerHeight = 1 << 20; /* the second layer lies far past a */
    CHECK_CU(cu.cuMemcpy3DBatchAsync(2, op, &fail, 0, s), CUDA_ERROR_INVALID_VALUE);
    CHECK_EQ(fail, 0);
    op[0].src.op.ptr.layerHeight = 16;
    CUarray arr;
    CUDA_ARRAY_DESCRIPTOR ad = {.Width = 256, .Height = 0, .Format = CU_AD_FORMAT_UNSIGNED_INT8,
                                .NumChannels = 1};
    CHECK_OK(cu.cuArrayCreate_v2(&arr, &ad));
    op[1].src.type = CU_MEMCPY_OPERAND_TYPE_ARRAY;
    op[1].src.op.array.array = arr;
    CHECK_CU(cu.cuMemcpy3DBatchAsync(2, op, &fail, 0, s), CUDA_ERROR_NOT_SUPPORTED);
    CHECK_EQ(fail, 1);
    op[1].src.type = (CUmemcpy3DOperandType)7;
    CHECK_CU(cu.cuMemcpy3DBatchAsync(2, op, &fail, 0, s), CUDA_ERROR_INVALID_VALUE);
    CHECK_OK(cu.cuArrayDestroy(arr));
    CHECK_OK(cu.cuStreamSynchronize(s));
    CHECK_OK(cu.cuStreamDestroy_v2(s));
    CHECK_OK(cu.cuMemFree_v2(a));
    CHECK_OK(cu.cuMemFree_v2(b));
}

static void modules(void)
{
    CUmodule m;
    CUfunction f;
    char info[16] = "x", err[16] = "x";
    CUjit_option opts[5] = {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
                            CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                            CU_JIT_WALL_TIME};
    void *vals[5] = {info, (void *)(uintptr_t)sizeof info, err, (void *)(uintptr_t)sizeof err,
                     NULL};
    CHECK_OK(cu.cuModuleLoadDataEx(&m, ".version 8.0\n.target sm_80\n.entry complement()\n", 5,
                                   opts, vals));
    CHECK(info[0] == '\0' && err[0] == '\0');
    CHECK_OK(cu.cuModuleGetFunction(&f, m, "complement"));
    CHECK_CU(cu.cuModuleLoadDataEx(&m, "nonsense", 0, NULL, NULL), CUDA_ERROR_INVALID_IMAGE);
    CHECK_CU(cu.cuModuleLoadDataEx(&m, ".version 8.0\n.target sm_80\n", 1, NULL, NULL),
             CUDA_ERROR_INVALID_VALUE);
    CUjit_option badopt = (CUjit_option)1000;
    CHECK_CU(cu.cuModuleLoadDataEx(&m, ".version 8.0\n.target sm_80\n", 1, &badopt, vals),
             CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cu.cuModuleLoadDataEx(NULL, ".version 8.0\n.target sm_80\n", 0, NULL, NULL),
             CUDA_ERROR_INVALID_VALUE);
    CUdeviceptr g;
    size_t gsize;
    CHECK_CU(cu.cuModuleGetGlobal_v2(&g, &gsize, m, "counter"), CUDA_ERROR_NOT_FOUND);
    CHECK_CU(cu.cuModuleGetGlobal_v2(&g, &gsize, m, NULL), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cu.cuModuleGetGlobal_v2(&g, &gsize, (CUmodule)&g, "x"), CUDA_ERROR_INVALID_HANDLE);
    int v = -1;
    CHECK_OK(cu.cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, f));
    CHECK_EQ(v, 1024);
    CHECK_OK(cu.cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_BINARY_VERSION, f));
    CHECK_EQ(v, 80);
    CHECK_OK(cu.cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, f));
    CHECK_EQ(v, -1);
    CHECK_CU(cu.cuFuncGetAttribute(&v, (CUfunction_attribute)99, f), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cu.cuFuncGetAttribute(NULL, CU_FUNC_ATTRIBUTE_NUM_REGS, f), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cu.cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, (CUfunction)&v),
             CUDA_ERROR_INVALID_HANDLE);
    CHECK_OK(cu.cuModuleUnload(m));
    CHECK_CU(cu.cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, f), CUDA_ERROR_INVALID_HANDLE);
}

static void nvml_facts(void)
{
    nvmlDevice_t d;
    nvmlPciInfo_t pci;
    unsigned v;
    int major, minor;
    CHECK_NVML(nv.nvmlInit_v2(), NVML_SUCCESS);
    CHECK_NVML(nv.nvmlDeviceGetHandleByIndex_v2(1, &d), NVML_SUCCESS);
    CHECK_NVML(nv.nvmlDeviceGetPciInfo_v3(d, &pci), NVML_SUCCESS);
    CHECK(strcmp(pci.busId, "00000000:02:00.0") == 0);
    CHECK(strcmp(pci.busIdLegacy, "0000:02:00.0") == 0);
    CHECK(pci.bus == 2 && pci.domain == 0 && pci.pciDeviceId == 0x20B010DEu);
    char cbus[32];
    CHECK_OK(cu.cuDeviceGetPCIBusId(cbus, sizeof cbus, 1));
    CHECK(strcasecmp(cbus, pci.busIdLegacy) == 0); /* the driver agrees */
    CHECK_NVML(nv.nvmlDeviceGetPciInfo_v2(d, &pci), NVML_SUCCESS);
    CHECK_NVML(nv.nvmlDeviceGetPciInfo_v3(d, NULL), NVML_ERROR_INVALID_ARGUMENT);
    CHECK_NVML(nv.nvmlDeviceGetMinorNumber(d, &v), NVML_SUCCESS);
    CHECK_EQ(v, 1);
    CHECK_NVML(nv.nvmlDeviceGetMinorNumber(d, NULL), NVML_ERROR_INVALID_ARGUMENT);
    CHECK_NVML(nv.nvmlDeviceGetCudaComputeCapability(d, &major, &minor), NVML_SUCCESS);
    CHECK(major == 8 && minor == 0);
    CHECK_NVML(nv.nvmlDeviceGetCudaComputeCapability(d, &major, NULL),
               NVML_ERROR_INVALID_ARGUMENT);
    CHECK_NVML(nv.nvmlDeviceGetTemperature(d, NVML_TEMPERATURE_GPU, &v), NVML_SUCCESS);
    CHECK_EQ(v, 30); /* idle */
    CHECK_NVML(nv.nvmlDeviceGetTemperature(d, (nvmlTemperatureSensors_t)1, &v),
               NVML_ERROR_INVALID_ARGUMENT);
    CHECK_NVML(nv.nvmlDeviceGetPowerUsage(d, &v), NVML_SUCCESS);
    CHECK_EQ(v, 50000);
    CHECK_NVML(nv.nvmlDeviceGetPowerUsage(d, NULL), NVML_ERROR_INVALID_ARGUMENT);
    CHECK_NVML(nv.nvmlDeviceGetClockInfo(d, NVML_CLOCK_SM, &v), NVML_SUCCESS);
    CHECK_EQ(v, 1410);
    CHECK_NVML(nv.nvmlDeviceGetClockInfo(d, NVML_CLOCK_MEM, &v), NVML_SUCCESS);
    CHECK_EQ(v, 1215);
    CHECK_NVML(nv.nvmlDeviceGetClockInfo(d, (nvmlClockType_t)7, &v), NVML_ERROR_INVALID_ARGUMENT);
    CHECK_NVML(nv.nvmlDeviceGetClockInfo(NULL, NVML_CLOCK_SM, &v), NVML_ERROR_INVALID_ARGUMENT);
    CHECK_NVML(nv.nvmlShutdown(), NVML_SUCCESS);
    CHECK_NVML(nv.nvmlDeviceGetMinorNumber(d, &v), NVML_ERROR_UNINITIALIZED);
}

int main(void)
{
    t_isolate();
    t_load_cuda();
    t_load_nvml();
    t_init_ctx();
    pools();
    context_facts();
    pointers_and_host_memory();
    copies_and_sets();
    peer_and_array_copies();
    batched_copies();
    modules();
    nvml_facts();
    printf("ok\n");
    return 0;
}

/* test_swap.c — the emulator does what swapping needs (docs/SWAP.md), with residency accounted
 * as a device would: memory mapped into a VMM reservation is copied to the host, unmapped and
 * released (the device, cuMemGetInfo and NVML all see it gone, and another process can take
 * it), then new physical memory is mapped at the same addresses and the data copied back is
 * byte-for-byte what it was, including what a kernel queued before the swap-out wrote. */
#include "emu_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define G (2 * T_MiB)
#define N 3
#define PIECE (32 * T_MiB)

struct piece {
    CUdeviceptr va;
    CUmemGenericAllocationHandle h;
    unsigned char *host;
};

static CUmemAllocationProp prop;
static CUmemAccessDesc rw;

static void map_in(struct piece *p)
{
    CHECK_OK(cu.cuMemCreate(&p->h, PIECE, &prop, 0));
    CHECK_OK(cu.cuMemMap(p->va, PIECE, 0, p->h, 0));
    CHECK_OK(cu.cuMemSetAccess(p->va, PIECE, &rw, 1));
}

/* Another process allocates `size` and says whether it got it (convgpu-sample: exit 0 ok, 2
 * out of device memory). */
static int other_process_gets(const char *size)
{
    char *argv[] = {(char *)t_sample(), "--size", (char *)size, "--touch", "1MiB", "--quiet",
                    NULL};
    int st = t_run(argv, NULL, NULL);
    CHECK(st == 0 || st == 2);
    return st == 0;
}

int main(void)
{
    t_isolate();
    t_load_cuda();
    t_load_nvml();
    t_init_ctx();
    CHECK_NVML(nv.nvmlInit_v2(), NVML_SUCCESS);
    t_kernels k;
    t_load_kernels(&k);
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;
    rw.location = prop.location;
    rw.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;

    uint64_t base = t_free(), used0 = t_nvml_used(0), mine0 = t_nvml_proc_used(0, getpid());
    struct piece p[N];
    unsigned char *want = malloc(PIECE);
    CHECK(want);
    for (int i = 0; i < N; i++) {
        CHECK_OK(cu.cuMemAddressReserve(&p[i].va, PIECE, 0, 0, 0));
        map_in(&p[i]);
        memset(want, 0, PIECE);
        for (size_t b = 0; b < PIECE; b += 4096)
            want[b] = (unsigned char)(b / 4096 * 31 + (size_t)i);
        want[PIECE - 1] = (unsigned char)(0xa0 + i);
        CHECK_OK(cu.cuMemcpyHtoD_v2(p[i].va, want, PIECE));
    }
    CHECK_EQ(base - t_free(), N * PIECE);
    CHECK_EQ(t_nvml_used(0) - used0, N * PIECE);
    /* 256 MiB device: our 66 MiB context + 96 MiB leave 94 MiB, short of another process's
     * context and 96 MiB. */
    CHECK(!other_process_gets("96MiB"));

    /* Work queued before the swap-out must land before the copy: complement piece 0, twice on
     * one stream and once on another. */
    CUstream s1, s2;
    CHECK_OK(cu.cuStreamCreate(&s1, 0));
    CHECK_OK(cu.cuStreamCreate(&s2, 0));
    t_complement(&k, s1, p[0].va, PIECE);
    t_complement(&k, s1, p[0].va, PIECE);
    t_complement(&k, s2, p[1].va, PIECE);

    /* Swap-out: everything finished, copied out, physical memory given back. */
    CHECK_OK(cu.cuCtxSynchronize());
    for (int i = 0; i < N; i++) {
        p[i].host = malloc(PIECE);
        CHECK(p[i].host);
        CHECK_OK(cu.cuMemcpyDtoH_v2(p[i].host, p[i].va, PIECE));
        CHECK_OK(cu.cuMemUnmap(p[i].va, PIECE));
        CHECK_OK(cu.cuMemRelease(p[i].h));
    }
    CHECK_EQ(t_free(), base);
    CHECK_EQ(t_nvml_used(0), used0);
    CHECK_EQ(t_nvml_proc_used(0, getpid()), mine0);
    /* The addresses are still ours but hold nothing: no copy reaches them. */
    unsigned char byte = 0;
    CHECK_CU(cu.cuMemcpyHtoD_v2(p[2].va, &byte, 1), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cu.cuMemcpyDtoH_v2(&byte, p[2].va + PIECE - 1, 1), CUDA_ERROR_INVALID_VALUE);
    CUdeviceptr other;
    CHECK_OK(cu.cuMemAddressReserve(&other, PIECE, 0, 0, 0));
    CHECK(other + PIECE <= p[0].va || other >= p[0].va + PIECE);
    CHECK_OK(cu.cuMemAddressFree(other, PIECE));
    /* What left is the device's again: another process gets it. */
    CHECK(other_process_gets("96MiB"));

    /* Swap-in at the same addresses. */
    for (int i = 0; i < N; i++) {
        map_in(&p[i]);
        CHECK_OK(cu.cuMemcpyHtoD_v2(p[i].va, p[i].host, PIECE));
        free(p[i].host);
    }
    CHECK_EQ(base - t_free(), N * PIECE);
    CHECK_EQ(t_nvml_used(0) - used0, N * PIECE);
    unsigned char *got = malloc(PIECE);
    CHECK(got);
    for (int i = 0; i < N; i++) {
        memset(want, 0, PIECE);
        for (size_t b = 0; b < PIECE; b += 4096)
            want[b] = (unsigned char)(b / 4096 * 31 + (size_t)i);
        want[PIECE - 1] = (unsigned char)(0xa0 + i);
        if (i == 1) /* complemented once; piece 0 twice, i.e. unchanged */
            for (size_t b = 0; b < PIECE; b++)
                want[b] = (unsigned char)~want[b];
        CHECK_OK(cu.cuMemcpyDtoH_v2(got, p[i].va, PIECE));
        CHECK(memcmp(got, want, PIECE) == 0);
    }
    for (int i = 0; i < N; i++) {
        CHECK_OK(cu.cuMemUnmap(p[i].va, PIECE));
        CHECK_OK(cu.cuMemRelease(p[i].h));
        CHECK_OK(cu.cuMemAddressFree(p[i].va, PIECE));
    }
    CHECK_EQ(t_free(), base);
    free(got);
    free(want);
    printf("ok\n");
    return 0;
}

/* swap_keep_probe.c — kept memory (src/interpose/swap.c, "Kept memory") from inside a container
 * that may swap, run by test_swap_keep.sh with CONVGPU_LOG=debug. It reads its own slot in the
 * ledger (use, kept pages) and checks what a program sees:
 *
 *   swap_keep_probe keep   a free keeps the memory (use unchanged, cuMemGetInfo counts it free);
 *                          the next allocation of that size gets it back (same address, no new
 *                          charge, its data written anew reads back); an allocation of another
 *                          size drops it first (use = what is live); a swap-out releases kept
 *                          memory without moving it (out_bytes: the live allocation only) and
 *                          the round trip keeps every byte; releasing the primary context drops
 *                          it, and a new context allocates as before
 *
 * Prints "ok" and exits 0, or says what failed and exits 1. Every wait is for a condition,
 * bounded only by a generous deadline. */
#include "cuda_types.h"
#include "ledger_map.h"
#include "swap_orders.h"

#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MiB (1u << 20)

#define X(n) static PFN_##n p_##n;
#define CUDA_FNS(F)                                                                            \
    F(cuInit) F(cuDeviceGet) F(cuDevicePrimaryCtxRetain) F(cuDevicePrimaryCtxRelease_v2)      \
    F(cuCtxSetCurrent) F(cuMemAlloc_v2) F(cuMemFree_v2) F(cuMemcpyHtoD_v2) F(cuMemcpyDtoH_v2) \
    F(cuMemGetInfo_v2)
CUDA_FNS(X)
#undef X

static CUdevice dev;

static void init_ctx(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW);
    if (!h)
        die("dlopen");
#define L(f) if (!(p_##f = (PFN_##f)dlsym(h, #f))) die(#f);
    CUDA_FNS(L)
#undef L
    CUcontext ctx;
    OK(p_cuInit(0));
    OK(p_cuDeviceGet(&dev, 0));
    OK(p_cuDevicePrimaryCtxRetain(&ctx, dev));
    OK(p_cuCtxSetCurrent(ctx));
}

/* ---- what the ledger says of this process ------------------------------------------------------ */

static struct cg_ledger *led;
static long me;

static uint64_t used_bytes(void)
{
    return cg_ledger_used(atomic_load(&led->slots[me].word)) * CG_LEDGER_PAGE;
}

static uint64_t kept_bytes(void)
{
    return (uint64_t)atomic_load(&led->swap_slots[me].kept_pages) * CG_LEDGER_PAGE;
}

static void expect(const char *what, uint64_t got, uint64_t want)
{
    if (got == want)
        return;
    printf("FAIL [%d]: %s: %llu, want %llu\n", (int)getpid(), what, (unsigned long long)got,
           (unsigned long long)want);
    fflush(stdout);
    _exit(1);
}

/* ---- allocations with known contents ------------------------------------------------------------ */

static unsigned word_at(unsigned seed, size_t i) { return (unsigned)(i * 2654435761u) ^ seed; }

static CUdeviceptr fill(size_t n, unsigned seed)
{
    CUdeviceptr p;
    OK(p_cuMemAlloc_v2(&p, n));
    unsigned *h = malloc(n);
    if (!h)
        die("malloc");
    for (size_t i = 0; i < n / 4; i++)
        h[i] = word_at(seed, i);
    OK(p_cuMemcpyHtoD_v2(p, h, n));
    free(h);
    return p;
}

static void verify(CUdeviceptr p, size_t n, unsigned seed)
{
    unsigned *h = malloc(n);
    if (!h)
        die("malloc");
    OK(p_cuMemcpyDtoH_v2(h, p, n));
    for (size_t i = 0; i < n / 4; i++)
        if (h[i] != word_at(seed, i))
            die("a buffer reads back something else");
    free(h);
}

static uint64_t free_bytes(void)
{
    size_t fr, total;
    OK(p_cuMemGetInfo_v2(&fr, &total));
    return fr;
}

static int keep(void)
{
    init_ctx();
    CUdeviceptr a = fill(4 * MiB, 0xa); /* also charges the context */
    led = ledger();
    if ((me = slot_of(led, getpid())) < 0)
        die("no slot of ours in the ledger");
    uint64_t base = used_bytes() - 4 * MiB, free_before = free_bytes();

    OK(p_cuMemFree_v2(a));
    expect("use after a kept free", used_bytes(), base + 4 * MiB);
    expect("kept after a free", kept_bytes(), 4 * MiB);
    expect("cuMemGetInfo's free counts kept memory", free_bytes(), free_before + 4 * MiB);

    CUdeviceptr b = fill(4 * MiB, 0xb);
    if (b != a)
        die("the next allocation of the size did not get the kept memory");
    expect("use after the reuse", used_bytes(), base + 4 * MiB);
    expect("kept after the reuse", kept_bytes(), 0);
    verify(b, 4 * MiB, 0xb);

    OK(p_cuMemFree_v2(b));
    CUdeviceptr c = fill(2 * MiB, 0xc); /* another size: what was kept goes first */
    expect("kept after a miss", kept_bytes(), 0);
    expect("use after a miss: only what is live", used_bytes(), base + 2 * MiB);
    verify(c, 2 * MiB, 0xc);

    /* A round trip with memory kept: it is released, not moved. */
    CUdeviceptr d = fill(6 * MiB, 0xd);
    OK(p_cuMemFree_v2(c));
    expect("kept before the round trip", kept_bytes(), 2 * MiB);
    order(led, CG_SWAP_OUT);
    wait_state(led, getpid(), CG_SWAPST_OUT);
    expect("moved out: the live allocation only", atomic_load(&led->swap_slots[me].out_bytes),
           6 * MiB);
    expect("kept after the swap-out", kept_bytes(), 0);
    expect("use while out", used_bytes(), base);
    order(led, CG_SWAP_IN);
    wait_state(led, getpid(), CG_SWAPST_IN);
    open_gate(led);
    verify(d, 6 * MiB, 0xd);
    expect("use after the round trip", used_bytes(), base + 6 * MiB);

    /* Releasing the context drops kept memory while the driver still knows it. */
    OK(p_cuMemFree_v2(d));
    expect("kept before the release", kept_bytes(), 6 * MiB);
    OK(p_cuDevicePrimaryCtxRelease_v2(dev));
    expect("kept after the release", kept_bytes(), 0);
    expect("use after the release", used_bytes(), base);
    CUcontext ctx;
    OK(p_cuDevicePrimaryCtxRetain(&ctx, dev));
    OK(p_cuCtxSetCurrent(ctx));
    CUdeviceptr e = fill(6 * MiB, 0xe);
    verify(e, 6 * MiB, 0xe);
    OK(p_cuMemFree_v2(e));
    printf("ok\n");
    return 0;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc == 2 && strcmp(argv[1], "keep") == 0)
        return keep();
    fprintf(stderr, "usage: swap_keep_probe keep\n");
    return 2;
}

/* swap_probe.c — a CUDA program under `convgpu run` (daemon started with --swap yes) that
 * checks the interposer's swap mechanism from the inside (docs/SWAP.md). It plays the ordering
 * party itself through its container's ledger (a tenant may write its ledger; the orders are
 * what the daemon will write), so the mechanism is tested apart from the daemon's policy.
 *
 *   swap_probe roundtrip   allocations made by two threads (odd sizes), two streams with kernels
 *                          still queued at the order, a forked child with allocations of its own,
 *                          a thread that keeps launching and one that keeps copying: swap out (the device's per-process
 *                          use drops by what moved, the slot's use too, the launching and
 *                          copying threads wait at the gate and see no error), swap in, every byte checked
 *   swap_probe hold FILE   allocates, swaps itself out, reports, then waits for FILE to exist
 *                          (a test kills it meanwhile)
 *   swap_probe wait FILE   allocates, says "ready", waits for FILE, checks every byte (the
 *                          test orders the swap through the daemon meanwhile)
 *   swap_probe rounds N    N round trips of the same allocations, every byte rewritten after
 *                          each and checked after every swap-in, so a host copy kept from the
 *                          last round (swap.c's spares) not written over whole would show
 * Only `roundtrip` needs the emulator (its kernels); the others run on a real driver too.
 *
 * Prints "ok" and exits 0, or says what failed and exits 1. Every wait is for a condition,
 * bounded only by a generous deadline. */
#include "cuda_types.h"
#include "ledger_map.h"
#include "swap_orders.h"
#include "nvml_types.h"

#include <dlfcn.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>


#define X(n) static PFN_##n p_##n;
#define CUDA_FNS(F)                                                                            \
    F(cuInit) F(cuDeviceGet) F(cuDevicePrimaryCtxRetain) F(cuCtxSetCurrent) F(cuMemAlloc_v2)  \
    F(cuMemFree_v2) F(cuMemcpyHtoD_v2) F(cuMemcpyDtoH_v2) F(cuStreamCreate)                    \
    F(cuStreamSynchronize) F(cuModuleLoadData) F(cuModuleGetFunction) F(cuLaunchKernel)        \
    F(cuCtxSynchronize) F(cuMemAllocPitch_v2) F(cuMemcpyPeer) F(cuMemcpy3DPeer)             \
    F(cuMemcpyBatchAsync_v2) F(cuMemcpy3DBatchAsync_v2)
CUDA_FNS(X)
#undef X
static PFN_nvmlInit_v2 p_nvmlInit_v2;
static PFN_nvmlDeviceGetHandleByIndex_v2 p_nvmlDeviceGetHandleByIndex_v2;
static PFN_nvmlDeviceGetComputeRunningProcesses_v3 p_nvmlDeviceGetComputeRunningProcesses_v3;

static CUcontext ctx;
static CUfunction spin, complement;

static void load(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW), *n = dlopen("libnvidia-ml.so.1", RTLD_NOW);
    if (!h || !n)
        die("dlopen");
#define L(f) if (!(p_##f = (PFN_##f)dlsym(h, #f))) die(#f);
    CUDA_FNS(L)
#undef L
    p_nvmlInit_v2 = (PFN_nvmlInit_v2)dlsym(n, "nvmlInit_v2");
    p_nvmlDeviceGetHandleByIndex_v2 =
        (PFN_nvmlDeviceGetHandleByIndex_v2)dlsym(n, "nvmlDeviceGetHandleByIndex_v2");
    p_nvmlDeviceGetComputeRunningProcesses_v3 = (PFN_nvmlDeviceGetComputeRunningProcesses_v3)dlsym(
        n, "nvmlDeviceGetComputeRunningProcesses_v3");
    if (!p_nvmlInit_v2 || !p_nvmlDeviceGetHandleByIndex_v2 ||
        !p_nvmlDeviceGetComputeRunningProcesses_v3 || p_nvmlInit_v2() != NVML_SUCCESS)
        die("nvml");
}

static void init_ctx(void)
{
    CUdevice d;
    OK(p_cuInit(0));
    OK(p_cuDeviceGet(&d, 0));
    OK(p_cuDevicePrimaryCtxRetain(&ctx, d));
    OK(p_cuCtxSetCurrent(ctx));
}

/* The emulator's built-in kernels (its module format): only `roundtrip` launches any, so the
 * other modes run on a real driver too (tests/gpu/run.sh). */
static void load_kernels(void)
{
    CUmodule m;
    OK(p_cuModuleLoadData(&m, "convgpu-emu-module 1\nkernel spin\nkernel complement\n"));
    OK(p_cuModuleGetFunction(&spin, m, "spin"));
    OK(p_cuModuleGetFunction(&complement, m, "complement"));
}

/* The device's account of this process (NVML, as the watchdog reads it). */
static uint64_t nvml_used(pid_t pid)
{
    nvmlDevice_t d;
    nvmlProcessInfo_t p[64];
    unsigned n = 64;
    if (p_nvmlDeviceGetHandleByIndex_v2(0, &d) != NVML_SUCCESS ||
        p_nvmlDeviceGetComputeRunningProcesses_v3(d, &n, p) != NVML_SUCCESS)
        die("nvml processes");
    for (unsigned i = 0; i < n; i++)
        if (p[i].pid == (unsigned)pid)
            return p[i].usedGpuMemory;
    return 0;
}

/* ---- allocations with known contents ------------------------------------------------------- */

#define NBUF 6
static const size_t sizes[NBUF] = {3u << 20, 1u << 20, (5u << 20) + 17, 4096, 8u << 20, 777};
struct buf {
    CUdeviceptr p;
    size_t n;
    unsigned seed;
    int complemented; /* times */
};

static unsigned char byte_at(const struct buf *b, size_t i)
{
    unsigned char v = (unsigned char)((i * 2654435761u) >> 13 ^ b->seed);
    return b->complemented % 2 ? (unsigned char)~v : v;
}

/* New contents for an allocation, written from the host. */
static void rewrite(struct buf *b, unsigned seed)
{
    b->seed = seed;
    b->complemented = 0;
    unsigned char *h = malloc(b->n);
    for (size_t i = 0; i < b->n; i++)
        h[i] = byte_at(b, i);
    OK(p_cuMemcpyHtoD_v2(b->p, h, b->n));
    free(h);
}

static void fill(struct buf *b, size_t n, unsigned seed)
{
    b->n = n;
    OK(p_cuMemAlloc_v2(&b->p, n));
    rewrite(b, seed);
}

static void verify(const struct buf *b)
{
    unsigned char *h = malloc(b->n);
    OK(p_cuMemcpyDtoH_v2(h, b->p, b->n));
    for (size_t i = 0; i < b->n; i++)
        if (h[i] != byte_at(b, i)) {
            printf("FAIL [%d]: buffer of %zu bytes differs at %zu\n", (int)getpid(), b->n, i);
            fflush(stdout);
            _exit(1);
        }
    free(h);
}

static void queue_complement(struct buf *b, CUstream s)
{
    void *params[] = {&b->p, &b->n};
    OK(p_cuLaunchKernel(complement, 1, 1, 1, 256, 1, 1, 0, s, params, NULL));
    b->complemented++;
}

static struct buf bufs[NBUF];

/* What the slot is charged for bufs: each in whole 2 MiB granules (the emulator's, and a
 * GPU's VMM granularity). */
static uint64_t bufs_charged(void)
{
    uint64_t total = 0;
    for (int i = 0; i < NBUF; i++)
        total += (sizes[i] + (2u << 20) - 1) / (2u << 20) * (2u << 20);
    return total;
}

static void *alloc_half(void *arg)
{
    int first = *(int *)arg;
    OK(p_cuCtxSetCurrent(ctx));
    for (int i = first; i < NBUF; i += 2)
        fill(&bufs[i], sizes[i], 0x40u + (unsigned)i);
    return NULL;
}

/* ---- a thread that keeps launching ---------------------------------------------------------- */

static atomic_int stop_launching;
static atomic_ulong launched, launch_errors;

static void *launcher(void *arg)
{
    (void)arg;
    OK(p_cuCtxSetCurrent(ctx));
    CUstream s;
    OK(p_cuStreamCreate(&s, 0));
    unsigned long long us = 20;
    while (!atomic_load(&stop_launching)) {
        void *params[] = {&us};
        if (p_cuLaunchKernel(spin, 1, 1, 1, 32, 1, 1, 0, s, params, NULL) == CUDA_SUCCESS)
            atomic_fetch_add(&launched, 1);
        else
            atomic_fetch_add(&launch_errors, 1);
        if (atomic_load(&launched) % 64 == 0)
            p_cuStreamSynchronize(s);
    }
    p_cuStreamSynchronize(s);
    return NULL;
}

/* ---- a thread that keeps copying to and from device memory ------------------------------------- */

static atomic_ulong copied, copy_errors;

static void *copier(void *arg)
{
    (void)arg;
    OK(p_cuCtxSetCurrent(ctx));
    CUdeviceptr d;
    OK(p_cuMemAlloc_v2(&d, 4096));
    unsigned out[1024], in[1024];
    while (!atomic_load(&stop_launching)) {
        unsigned k = (unsigned)atomic_load(&copied);
        for (int i = 0; i < 1024; i++)
            out[i] = k * 1024u + (unsigned)i;
        if (p_cuMemcpyHtoD_v2(d, out, sizeof out) != CUDA_SUCCESS ||
            p_cuMemcpyDtoH_v2(in, d, sizeof in) != CUDA_SUCCESS || memcmp(in, out, sizeof in))
            atomic_fetch_add(&copy_errors, 1);
        atomic_fetch_add(&copied, 1);
    }
    OK(p_cuMemFree_v2(d));
    return NULL;
}

/* The two 4 KiB buffers of a copying thread below: e holds a pattern made from `seed`, f is
 * to receive it. */
struct pair {
    CUdeviceptr e, f;
    unsigned pattern[1024];
};

static void pair_open(struct pair *p, unsigned seed)
{
    OK(p_cuCtxSetCurrent(ctx));
    OK(p_cuMemAlloc_v2(&p->e, sizeof p->pattern));
    OK(p_cuMemAlloc_v2(&p->f, sizeof p->pattern));
    for (unsigned i = 0; i < 1024; i++)
        p->pattern[i] = seed + i;
    OK(p_cuMemcpyHtoD_v2(p->e, p->pattern, sizeof p->pattern));
}

/* After the copying: both buffers must hold the pattern (a copy error otherwise); freed. */
static void pair_close(struct pair *p)
{
    unsigned in[1024];
    OK(p_cuMemcpyDtoH_v2(in, p->e, sizeof in));
    if (memcmp(in, p->pattern, sizeof in))
        atomic_fetch_add(&copy_errors, 1);
    OK(p_cuMemcpyDtoH_v2(in, p->f, sizeof in));
    if (memcmp(in, p->pattern, sizeof in))
        atomic_fetch_add(&copy_errors, 1);
    OK(p_cuMemFree_v2(p->e));
    OK(p_cuMemFree_v2(p->f));
}

/* A thread that only copies device to device between contexts (both sides this one): the peer
 * forms touch swappable memory as the others do and must wait while it is out, so it calls
 * nothing else until it is told to stop; then its two buffers must still hold their pattern. */
static atomic_ulong peer_copied;

static void *peer_copier(void *arg)
{
    (void)arg;
    struct pair p;
    pair_open(&p, 0xfeed0000u);
    CUDA_MEMCPY3D_PEER back;
    memset(&back, 0, sizeof back);
    back.srcMemoryType = back.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    back.srcDevice = p.f;
    back.dstDevice = p.e;
    back.srcContext = back.dstContext = ctx;
    back.WidthInBytes = sizeof p.pattern;
    back.Height = back.Depth = 1;
    while (!atomic_load(&stop_launching)) {
        if (p_cuMemcpyPeer(p.f, ctx, p.e, ctx, sizeof p.pattern) != CUDA_SUCCESS ||
            p_cuMemcpy3DPeer(&back) != CUDA_SUCCESS)
            atomic_fetch_add(&copy_errors, 1);
        atomic_fetch_add(&peer_copied, 1);
    }
    pair_close(&p);
    return NULL;
}

/* A thread that only copies in batches (cuMemcpyBatchAsync, cuMemcpy3DBatchAsync: CUDA 12.8),
 * e to f and back, each batch awaited on its stream (which is not gated): the batched forms
 * must wait at the gate like every other copy. Its buffers must still hold their pattern. */
static atomic_ulong batch_copied;

static void *batch_copier(void *arg)
{
    (void)arg;
    struct pair p;
    pair_open(&p, 0xba7c0000u);
    CUstream s;
    OK(p_cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CUdeviceptr dst[2] = {p.f, p.f + 2048}, src[2] = {p.e, p.e + 2048};
    size_t size[2] = {2048, 2048}, first = 0;
    CUmemcpyAttributes attr = {.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM};
    CUDA_MEMCPY3D_BATCH_OP back = {
        .src = {.type = CU_MEMCPY_OPERAND_TYPE_POINTER, .op.ptr.ptr = p.f},
        .dst = {.type = CU_MEMCPY_OPERAND_TYPE_POINTER, .op.ptr.ptr = p.e},
        .extent = {.width = 256, .height = 4, .depth = 4},
        .srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM};
    while (!atomic_load(&stop_launching)) {
        if (p_cuMemcpyBatchAsync_v2(dst, src, size, 2, &attr, &first, 1, s) != CUDA_SUCCESS ||
            p_cuMemcpy3DBatchAsync_v2(1, &back, 0, s) != CUDA_SUCCESS ||
            p_cuStreamSynchronize(s) != CUDA_SUCCESS)
            atomic_fetch_add(&copy_errors, 1);
        atomic_fetch_add(&batch_copied, 1);
    }
    pair_close(&p);
    return NULL;
}

/* ---- the forked child ------------------------------------------------------------------------ */

/* Allocates its own buffers, says so on `ready`, waits for a byte on `go`, then checks them. */
static void child(int ready, int go)
{
    init_ctx();
    struct buf mine[2];
    fill(&mine[0], 6u << 20, 0x77);
    fill(&mine[1], 12345, 0x78);
    if (write(ready, "r", 1) != 1)
        die("child: ready");
    char c;
    if (read(go, &c, 1) != 1)
        die("child: go");
    verify(&mine[0]);
    verify(&mine[1]);
    OK(p_cuMemFree_v2(mine[0].p));
    OK(p_cuMemFree_v2(mine[1].p));
    _exit(0);
}

static int roundtrip(void)
{
    init_ctx();
    load_kernels();
    int rp[2], gp[2];
    if (pipe(rp) || pipe(gp))
        die("pipe");
    pid_t kid = fork();
    if (kid < 0)
        die("fork");
    if (kid == 0) {
        /* Only the parent writes `go`: if it dies, the child's read ends instead of hanging. */
        close(gp[1]);
        close(rp[0]);
        child(rp[1], gp[0]);
    }
    close(gp[0]);
    close(rp[1]);
    char c;
    if (read(rp[0], &c, 1) != 1)
        die("the child did not get ready");

    pthread_t t1, t2, tl;
    int zero = 0, one = 1;
    pthread_create(&t1, NULL, alloc_half, &zero);
    pthread_create(&t2, NULL, alloc_half, &one);
    pthread_join(t1, NULL);
    pthread_join(t2, NULL);
    /* A pitched allocation too: 1000 x 300 rows of 4-byte elements, pitch 1024. */
    struct buf pitched = {.seed = 0x99};
    size_t pitch = 0;
    OK(p_cuMemAllocPitch_v2(&pitched.p, &pitch, 1000, 300, 4));
    if (pitch != 1024)
        die("pitch is not 1024");
    pitched.n = pitch * 300;
    unsigned char *ph = malloc(pitched.n);
    for (size_t i = 0; i < pitched.n; i++)
        ph[i] = byte_at(&pitched, i);
    OK(p_cuMemcpyHtoD_v2(pitched.p, ph, pitched.n));
    free(ph);
    struct cg_ledger *l = ledger();
    long me = slot_of(l, getpid());
    if (me < 0)
        die("no slot of ours");

    /* Work still queued when the order comes: kernels behind a long spin on two non-blocking
     * streams (which a copy on the legacy stream does not wait for). */
    CUstream s1, s2;
    OK(p_cuStreamCreate(&s1, CU_STREAM_NON_BLOCKING));
    OK(p_cuStreamCreate(&s2, CU_STREAM_NON_BLOCKING));
    unsigned long long us = 30000;
    void *sp[] = {&us};
    OK(p_cuLaunchKernel(spin, 1, 1, 1, 32, 1, 1, 0, s1, sp, NULL));
    queue_complement(&bufs[0], s1);
    queue_complement(&bufs[2], s1);
    queue_complement(&bufs[0], s2);
    queue_complement(&bufs[4], s2);
    pthread_t tc, tp, tb;
    pthread_create(&tl, NULL, launcher, NULL);
    pthread_create(&tc, NULL, copier, NULL);
    pthread_create(&tp, NULL, peer_copier, NULL);
    pthread_create(&tb, NULL, batch_copier, NULL);
    while (atomic_load(&launched) < 10 || atomic_load(&copied) < 10 ||
           atomic_load(&peer_copied) < 10 || atomic_load(&batch_copied) < 10)
        nap();
    uint64_t resident = nvml_used(getpid());
    uint64_t slot_used0 = cg_ledger_used(atomic_load(&l->slots[me].word)) * CG_LEDGER_PAGE;

    order(l, CG_SWAP_OUT);
    wait_state(l, getpid(), CG_SWAPST_OUT);
    wait_state(l, kid, CG_SWAPST_OUT);
    uint64_t moved = atomic_load(&l->swap_slots[me].out_bytes);
    /* bufs, the copiers' five buffers and the pitched one */
    uint64_t want_moved = bufs_charged() + 6 * (2u << 20);
    if (moved != want_moved)
        die("out_bytes is not what the allocations were charged");
    if (resident - nvml_used(getpid()) != moved)
        die("the device still holds what was swapped out (NVML)");
    if (slot_used0 - cg_ledger_used(atomic_load(&l->slots[me].word)) * CG_LEDGER_PAGE != moved)
        die("the slot's use did not drop by what was swapped out");
    /* The launching and the copying threads are held at the gate, not failed. */
    double end = now_s() + DEADLINE_S;
    while (atomic_load(&l->slots[me].gate_waiting) < 4)
        if (now_s() > end)
            die("the launching and the three copying threads never all waited at the gate");
        else
            nap();
    unsigned long held = atomic_load(&launched), held_copies = atomic_load(&copied);
    unsigned long held_peer = atomic_load(&peer_copied), held_batch = atomic_load(&batch_copied);

    order(l, CG_SWAP_IN);
    wait_state(l, getpid(), CG_SWAPST_IN);
    wait_state(l, kid, CG_SWAPST_IN);
    if (nvml_used(getpid()) != resident)
        die("the device does not hold the memory again after swap-in");
    if (cg_ledger_used(atomic_load(&l->slots[me].word)) * CG_LEDGER_PAGE != slot_used0)
        die("the slot's use is not back after swap-in");
    if (atomic_load(&launched) != held)
        die("a launch ran while the container was out");
    if (atomic_load(&copied) != held_copies)
        die("a copy ran while the container was out");
    if (atomic_load(&peer_copied) != held_peer)
        die("a copy between contexts ran while the container was out");
    if (atomic_load(&batch_copied) != held_batch)
        die("a batched copy ran while the container was out");
    open_gate(l);
    end = now_s() + DEADLINE_S;
    while (atomic_load(&launched) < held + 10 || atomic_load(&copied) < held_copies + 10)
        if (now_s() > end)
            die("launches or copies did not resume");
        else
            nap();
    atomic_store(&stop_launching, 1);
    pthread_join(tl, NULL);
    pthread_join(tc, NULL);
    pthread_join(tp, NULL);
    pthread_join(tb, NULL);
    if (atomic_load(&launch_errors) != 0)
        die("a launch failed");
    if (atomic_load(&copy_errors) != 0)
        die("a copy failed or read back something else");
    OK(p_cuCtxSynchronize());
    for (int i = 0; i < NBUF; i++)
        verify(&bufs[i]);
    verify(&pitched);
    OK(p_cuMemFree_v2(pitched.p));
    if (write(gp[1], "g", 1) != 1)
        die("go");
    int st;
    if (waitpid(kid, &st, 0) != kid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
        die("the child's data did not survive");
    for (int i = 0; i < NBUF; i++)
        OK(p_cuMemFree_v2(bufs[i].p));
    printf("ok moved=%llu\n", (unsigned long long)moved);
    return 0;
}

static int hold(const char *file)
{
    init_ctx();
    for (int i = 0; i < 3; i++)
        fill(&bufs[i], sizes[i], 0x50u + (unsigned)i);
    struct cg_ledger *l = ledger();
    order(l, CG_SWAP_OUT);
    wait_state(l, getpid(), CG_SWAPST_OUT);
    long me = slot_of(l, getpid());
    printf("out bytes=%llu nvml=%llu\n",
           (unsigned long long)atomic_load(&l->swap_slots[me].out_bytes),
           (unsigned long long)nvml_used(getpid()));
    fflush(stdout);
    while (access(file, F_OK) != 0)
        nap();
    return 0;
}

/* Allocations with known contents, "ready", then after FILE exists every byte is checked: the
 * test swaps the container out and in through the daemon meanwhile. */
static int wait_check(const char *file)
{
    init_ctx();
    for (int i = 0; i < 3; i++)
        fill(&bufs[i], sizes[i], 0x60u + (unsigned)i);
    printf("ready\n");
    fflush(stdout);
    while (access(file, F_OK) != 0)
        nap();
    for (int i = 0; i < 3; i++)
        verify(&bufs[i]);
    printf("ok\n");
    return 0;
}

/* A mode's numeric argument, 1..max; 0 (after saying what it wants) for anything else. */
static unsigned long count_arg(const char *text, unsigned long max, const char *what)
{
    char *end;
    unsigned long n = strtoul(text, &end, 10);
    if (*end || n == 0 || n > max) {
        fprintf(stderr, "swap_probe %s, 1-%lu\n", what, max);
        return 0;
    }
    return n;
}

/* One allocation of `mib` MiB with a known pattern: "ready", then wait for `file`, then check
 * every byte ("ok"). The scheduler may move it out and back meanwhile (test_swap_policy.sh). */
static int big_check(const char *file, const char *mib_text)
{
    unsigned long mib = count_arg(mib_text, 65536, "big: size in MiB");
    if (!mib)
        return 2;
    init_ctx();
    struct buf big;
    fill(&big, (size_t)mib << 20, 0x77u);
    printf("ready\n");
    fflush(stdout);
    while (access(file, F_OK) != 0)
        nap();
    verify(&big);
    printf("ok\n");
    return 0;
}

/* N round trips of one set of allocations; between two, every byte changes. */
static int rounds(const char *n_text)
{
    unsigned long n = count_arg(n_text, 100, "rounds: a count");
    if (!n)
        return 2;
    init_ctx();
    for (int i = 0; i < NBUF; i++)
        fill(&bufs[i], sizes[i], 0x30u + (unsigned)i);
    struct cg_ledger *l = ledger();
    long me = slot_of(l, getpid());
    if (me < 0)
        die("no slot of ours");
    uint64_t want_moved = bufs_charged();
    for (unsigned long r = 0; r < n; r++) {
        order(l, CG_SWAP_OUT);
        wait_state(l, getpid(), CG_SWAPST_OUT);
        if (atomic_load(&l->swap_slots[me].out_bytes) != want_moved)
            die("out_bytes is not what the allocations were charged");
        order(l, CG_SWAP_IN);
        wait_state(l, getpid(), CG_SWAPST_IN);
        open_gate(l);
        for (int i = 0; i < NBUF; i++)
            verify(&bufs[i]);
        for (int i = 0; i < NBUF; i++)
            rewrite(&bufs[i], 0x30u + (unsigned)i + 16u * (unsigned)(r + 1));
    }
    for (int i = 0; i < NBUF; i++) {
        verify(&bufs[i]);
        OK(p_cuMemFree_v2(bufs[i].p));
    }
    printf("ok rounds=%lu moved=%llu\n", n, (unsigned long long)want_moved);
    return 0;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    load();
    if (argc == 2 && strcmp(argv[1], "roundtrip") == 0)
        return roundtrip();
    if (argc == 3 && strcmp(argv[1], "hold") == 0)
        return hold(argv[2]);
    if (argc == 3 && strcmp(argv[1], "wait") == 0)
        return wait_check(argv[2]);
    if (argc == 4 && strcmp(argv[1], "big") == 0)
        return big_check(argv[2], argv[3]);
    if (argc == 3 && strcmp(argv[1], "rounds") == 0)
        return rounds(argv[2]);
    fprintf(stderr,
            "usage: swap_probe roundtrip | hold FILE | wait FILE | big FILE MIB | rounds N\n");
    return 2;
}

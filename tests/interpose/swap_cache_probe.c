/* swap_cache_probe.c — the interposer's two caches (src/interpose/swap.c) from inside a
 * container that may swap (daemon started with --swap yes), run by test_swap_cache.sh with
 * CONVGPU_LOG=debug: the interposer logs every range it keeps, reuses and gives back, and the
 * test reads those lines; the probe checks what a program sees (addresses, contents).
 *
 *   swap_cache_probe reuse    a freed allocation's range serves the next one of its size (same
 *                             address, unless CONVGPU_SWAP_RESERVE_CACHE=0); a swap round trip
 *                             with allocations in reused ranges keeps every byte; a range freed
 *                             after the round trip serves again; no reused range overlaps a
 *                             live allocation
 *   swap_cache_probe bound    allocations of 2, 4 and 12 MiB made and freed so that the cache's
 *                             bounds (the test sets them small) are reached and passed
 *   swap_cache_probe stress   threads allocating, tagging, checking and freeing ranges of two
 *                             sizes at once, with a swap round trip in the middle: no two live
 *                             allocations ever overlap, and every tag reads back
 *   swap_cache_probe fork     a cached range in the parent, then a forked child allocates the
 *                             same size (prints "child PID": the test checks the child reused
 *                             nothing of its parent's), then the parent reuses its own
 *   swap_cache_probe keep     kept memory (test_swap_keep.sh): a free keeps the memory (use
 *                             unchanged, cuMemGetInfo counts it free); the next allocation of
 *                             that size gets it back (same address, no new charge); one of
 *                             another size drops it first; a swap-out releases it without moving
 *                             it (out_bytes: the live allocation only) and the round trip keeps
 *                             every byte; releasing the primary context drops it, and a new
 *                             context allocates as before
 *
 * Prints "ok" and exits 0, or says what failed and exits 1. Every wait is for a condition,
 * bounded only by a generous deadline. */
#include "cuda_types.h"
#include "ledger_map.h"
#include "swap_orders.h"

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

#define MiB (1u << 20)


#define X(n) static PFN_##n p_##n;
#define CUDA_FNS(F)                                                                            \
    F(cuInit) F(cuDeviceGet) F(cuDevicePrimaryCtxRetain) F(cuCtxSetCurrent) F(cuMemAlloc_v2)  \
    F(cuMemFree_v2) F(cuMemcpyHtoD_v2) F(cuMemcpyDtoH_v2) F(cuCtxSynchronize)                  \
    F(cuDevicePrimaryCtxRelease_v2) F(cuMemGetInfo_v2)
CUDA_FNS(X)
#undef X

static CUcontext ctx;
static CUdevice dev;

static void init_ctx(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW);
    if (!h)
        die("dlopen");
#define L(f) if (!(p_##f = (PFN_##f)dlsym(h, #f))) die(#f);
    CUDA_FNS(L)
#undef L
    OK(p_cuInit(0));
    OK(p_cuDeviceGet(&dev, 0));
    OK(p_cuDevicePrimaryCtxRetain(&ctx, dev));
    OK(p_cuCtxSetCurrent(ctx));
}

/* Out (checking that something moved) and back in, then the gate opened as the daemon would. */
static void round_trip(void)
{
    struct cg_ledger *l = ledger();
    order(l, CG_SWAP_OUT);
    wait_state(l, getpid(), CG_SWAPST_OUT);
    long me = slot_of(l, getpid());
    if (atomic_load(&l->swap_slots[me].out_bytes) == 0)
        die("nothing moved out");
    order(l, CG_SWAP_IN);
    wait_state(l, getpid(), CG_SWAPST_IN);
    open_gate(l);
}

/* ---- allocations with known contents ---------------------------------------------------------- */

struct buf {
    CUdeviceptr p;
    size_t n;
    unsigned seed;
};

static unsigned word_at(const struct buf *b, size_t i) { return (unsigned)(i * 2654435761u) ^ b->seed; }

static void fill(struct buf *b, size_t n, unsigned seed)
{
    b->n = n;
    b->seed = seed;
    OK(p_cuMemAlloc_v2(&b->p, n));
    unsigned *h = malloc(n);
    if (!h)
        die("malloc");
    for (size_t i = 0; i < n / 4; i++)
        h[i] = word_at(b, i);
    OK(p_cuMemcpyHtoD_v2(b->p, h, n));
    free(h);
}

static void verify(const struct buf *b)
{
    unsigned *h = malloc(b->n);
    if (!h)
        die("malloc");
    OK(p_cuMemcpyDtoH_v2(h, b->p, b->n));
    for (size_t i = 0; i < b->n / 4; i++)
        if (h[i] != word_at(b, i)) {
            printf("FAIL [%d]: buffer of %zu bytes at %#llx differs at word %zu\n", (int)getpid(),
                   b->n, (unsigned long long)b->p, i);
            fflush(stdout);
            _exit(1);
        }
    free(h);
}

static int overlap(const struct buf *a, const struct buf *b)
{
    return a->p < b->p + b->n && b->p < a->p + a->n;
}

static int cache_on(void)
{
    const char *v = getenv("CONVGPU_SWAP_RESERVE_CACHE");
    return !v || strcmp(v, "0") != 0;
}

/* ---- modes --------------------------------------------------------------------------------- */

static int reuse(void)
{
    init_ctx();
    struct buf a, b, c, d;
    fill(&a, 4 * MiB, 0xa);
    verify(&a);
    CUdeviceptr freed = a.p;
    OK(p_cuMemFree_v2(a.p));
    fill(&b, 4 * MiB, 0xb); /* the 4 MiB range just freed */
    if (cache_on() && b.p != freed)
        die("the next allocation of the same size did not get the freed range");
    fill(&c, 4 * MiB, 0xc); /* nothing cached: a new range */
    if (overlap(&b, &c))
        die("two live allocations overlap");
    verify(&b);
    round_trip();
    verify(&b);
    verify(&c);
    freed = b.p;
    OK(p_cuMemFree_v2(b.p));
    fill(&d, 4 * MiB, 0xd); /* the range that went out and came back in */
    if (cache_on() && d.p != freed)
        die("a range freed after the round trip did not serve again");
    if (overlap(&c, &d))
        die("two live allocations overlap");
    verify(&c);
    verify(&d);
    OK(p_cuMemFree_v2(c.p));
    OK(p_cuMemFree_v2(d.p));
    printf("ok\n");
    return 0;
}

static int bound(void)
{
    init_ctx();
    struct buf b[6];
    for (int round = 0; round < 2; round++) { /* the second round takes what the first kept */
        for (int i = 0; i < 6; i++)
            fill(&b[i], 2 * MiB, 0x100u * (unsigned)round + (unsigned)i);
        for (int i = 0; i < 6; i++) {
            for (int k = 0; k < i; k++)
                if (overlap(&b[i], &b[k]))
                    die("two live allocations overlap");
            verify(&b[i]);
        }
        for (int i = 0; i < 6; i++)
            OK(p_cuMemFree_v2(b[i].p));
    }
    for (int i = 0; i < 2; i++) { /* bigger ones push the small ones out by bytes */
        fill(&b[i], 4 * MiB, 0x200u + (unsigned)i);
        verify(&b[i]);
    }
    for (int i = 0; i < 2; i++)
        OK(p_cuMemFree_v2(b[i].p));
    fill(&b[0], 12 * MiB, 0x300); /* over the byte bound alone */
    verify(&b[0]);
    OK(p_cuMemFree_v2(b[0].p));
    printf("ok\n");
    return 0;
}

/* Threads that allocate and free ranges of two sizes at once, each allocation tagged at its
 * first, middle and last word, checked before it is freed; every live allocation is in one
 * table, checked for overlap as it is added. */
#define THREADS 4
#define LIVE 2
#define ITERS 150
static pthread_mutex_t live_mu = PTHREAD_MUTEX_INITIALIZER;
static struct buf live[THREADS * LIVE];
static atomic_uint progress[THREADS];
/* Set once the round trip is over: until then a thread that is through its iterations keeps its
 * last allocations, so that something is live to move however the threads are scheduled. */
static atomic_int tripped;

static void tag(struct buf *b, int write)
{
    size_t at[3] = {0, b->n / 2, b->n - 4};
    for (int k = 0; k < 3; k++) {
        unsigned v = b->seed ^ (unsigned)k, got;
        if (write) {
            OK(p_cuMemcpyHtoD_v2(b->p + at[k], &v, 4));
        } else {
            OK(p_cuMemcpyDtoH_v2(&got, b->p + at[k], 4));
            if (got != v) {
                printf("FAIL [%d]: allocation at %#llx lost its tag (another one wrote it)\n",
                       (int)getpid(), (unsigned long long)b->p);
                fflush(stdout);
                _exit(1);
            }
        }
    }
}

static void *stresser(void *arg)
{
    int t = (int)(intptr_t)arg;
    OK(p_cuCtxSetCurrent(ctx));
    unsigned rnd = 0x9e3779b9u * (unsigned)(t + 1);
    for (unsigned it = 0; it < ITERS; it++) {
        int slot = t * LIVE + (int)(it % LIVE);
        struct buf *b = &live[slot];
        if (b->p) {
            tag(b, 0);
            pthread_mutex_lock(&live_mu);
            CUdeviceptr p = b->p;
            b->p = 0;
            pthread_mutex_unlock(&live_mu);
            OK(p_cuMemFree_v2(p));
        }
        rnd = rnd * 1103515245u + 12345u;
        struct buf n = {.n = ((rnd >> 16) & 1) ? 4 * MiB : 2 * MiB,
                        .seed = ((unsigned)t << 24) | it};
        OK(p_cuMemAlloc_v2(&n.p, n.n));
        pthread_mutex_lock(&live_mu);
        for (int k = 0; k < THREADS * LIVE; k++)
            if (live[k].p && overlap(&live[k], &n)) {
                printf("FAIL [%d]: %#llx given to two live allocations\n", (int)getpid(),
                       (unsigned long long)n.p);
                fflush(stdout);
                _exit(1);
            }
        *b = n;
        pthread_mutex_unlock(&live_mu);
        tag(b, 1);
        atomic_store(&progress[t], it + 1);
    }
    while (!atomic_load(&tripped))
        nap();
    for (int k = 0; k < LIVE; k++) {
        struct buf *b = &live[t * LIVE + k];
        tag(b, 0);
        pthread_mutex_lock(&live_mu);
        CUdeviceptr p = b->p;
        b->p = 0; /* out of the table before its range can serve another thread */
        pthread_mutex_unlock(&live_mu);
        OK(p_cuMemFree_v2(p));
    }
    return NULL;
}

static unsigned slowest(void)
{
    unsigned m = ITERS;
    for (int t = 0; t < THREADS; t++)
        if (atomic_load(&progress[t]) < m)
            m = atomic_load(&progress[t]);
    return m;
}

static int stress(void)
{
    init_ctx();
    pthread_t th[THREADS];
    for (int t = 0; t < THREADS; t++)
        pthread_create(&th[t], NULL, stresser, (void *)(intptr_t)t);
    /* The round trip while every thread is under way (allocations live, others in flight). */
    double end = now_s() + DEADLINE_S;
    while (slowest() < ITERS / 3)
        if (now_s() > end)
            die("the threads made no progress");
        else
            nap();
    round_trip();
    atomic_store(&tripped, 1);
    for (int t = 0; t < THREADS; t++)
        pthread_join(th[t], NULL);
    printf("ok\n");
    return 0;
}

static int forked(void)
{
    init_ctx();
    struct buf a;
    fill(&a, 2 * MiB, 0xf0);
    CUdeviceptr mine = a.p;
    OK(p_cuMemFree_v2(a.p)); /* kept in the parent's cache */
    pid_t kid = fork();
    if (kid < 0)
        die("fork");
    if (kid == 0) {
        init_ctx();
        struct buf c;
        fill(&c, 2 * MiB, 0xf1);
        verify(&c);
        OK(p_cuMemFree_v2(c.p));
        _exit(0);
    }
    printf("child %d\n", (int)kid);
    int st;
    if (waitpid(kid, &st, 0) != kid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
        die("the child failed");
    fill(&a, 2 * MiB, 0xf2);
    if (a.p != mine)
        die("the parent's cached range did not serve it after the fork");
    verify(&a);
    OK(p_cuMemFree_v2(a.p));
    printf("ok\n");
    return 0;
}

/* ---- kept memory (src/interpose/swap.c, "Kept memory") ------------------------------------- */

static long me;

static uint64_t used_bytes(struct cg_ledger *l)
{
    return cg_ledger_used(atomic_load(&l->slots[me].word)) * CG_LEDGER_PAGE;
}

static uint64_t kept_bytes(struct cg_ledger *l)
{
    return (uint64_t)atomic_load(&l->swap_slots[me].kept_pages) * CG_LEDGER_PAGE;
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

static uint64_t free_bytes(void)
{
    size_t fr, total;
    OK(p_cuMemGetInfo_v2(&fr, &total));
    return fr;
}

static int keep(void)
{
    init_ctx();
    struct buf a, b, c, d, e;
    fill(&a, 4 * MiB, 0xa); /* also charges the context */
    struct cg_ledger *l = ledger();
    if ((me = slot_of(l, getpid())) < 0)
        die("no slot of ours in the ledger");
    uint64_t base = used_bytes(l) - 4 * MiB, free_before = free_bytes();

    OK(p_cuMemFree_v2(a.p));
    expect("use after a kept free", used_bytes(l), base + 4 * MiB);
    expect("kept after a free", kept_bytes(l), 4 * MiB);
    expect("cuMemGetInfo's free counts kept memory", free_bytes(), free_before + 4 * MiB);

    fill(&b, 4 * MiB, 0xb);
    if (b.p != a.p)
        die("the next allocation of the size did not get the kept memory");
    expect("use after the reuse", used_bytes(l), base + 4 * MiB);
    expect("kept after the reuse", kept_bytes(l), 0);
    verify(&b);

    OK(p_cuMemFree_v2(b.p));
    fill(&c, 2 * MiB, 0xc); /* another size: what was kept goes first */
    expect("kept after a miss", kept_bytes(l), 0);
    expect("use after a miss: only what is live", used_bytes(l), base + 2 * MiB);
    verify(&c);

    /* A round trip with memory kept: it is released, not moved. */
    fill(&d, 6 * MiB, 0xd);
    OK(p_cuMemFree_v2(c.p));
    expect("kept before the round trip", kept_bytes(l), 2 * MiB);
    order(l, CG_SWAP_OUT);
    wait_state(l, getpid(), CG_SWAPST_OUT);
    expect("moved out: the live allocation only", atomic_load(&l->swap_slots[me].out_bytes),
           6 * MiB);
    expect("kept after the swap-out", kept_bytes(l), 0);
    expect("use while out", used_bytes(l), base);
    order(l, CG_SWAP_IN);
    wait_state(l, getpid(), CG_SWAPST_IN);
    open_gate(l);
    verify(&d);
    expect("use after the round trip", used_bytes(l), base + 6 * MiB);

    /* Releasing the context drops kept memory while the driver still knows it. */
    OK(p_cuMemFree_v2(d.p));
    expect("kept before the release", kept_bytes(l), 6 * MiB);
    OK(p_cuDevicePrimaryCtxRelease_v2(dev));
    expect("kept after the release", kept_bytes(l), 0);
    expect("use after the release", used_bytes(l), base);
    OK(p_cuDevicePrimaryCtxRetain(&ctx, dev));
    OK(p_cuCtxSetCurrent(ctx));
    fill(&e, 6 * MiB, 0xe);
    verify(&e);
    OK(p_cuMemFree_v2(e.p));
    printf("ok\n");
    return 0;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc == 2 && strcmp(argv[1], "reuse") == 0)
        return reuse();
    if (argc == 2 && strcmp(argv[1], "bound") == 0)
        return bound();
    if (argc == 2 && strcmp(argv[1], "stress") == 0)
        return stress();
    if (argc == 2 && strcmp(argv[1], "fork") == 0)
        return forked();
    if (argc == 2 && strcmp(argv[1], "keep") == 0)
        return keep();
    fprintf(stderr, "usage: swap_cache_probe reuse | bound | stress | fork | keep\n");
    return 2;
}

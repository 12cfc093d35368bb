/* queue_probe.c — does a thread's next launch reach the device while its previous one still
 * runs? The run-ahead bound (src/interpose/gate.c) says that in a container with a share below
 * 100, nothing is queued behind a launch of 10 ms or more: the thread's next launch waits for it
 * first. Shorter launches, and any launch without a share, keep work queued.
 *
 * The probe launches kernel k on stream A (after A_KERNELS - 1 others there: a longer time to
 * look, for short kernels), then kernel k+1 on stream B, from one thread, while a second
 * thread watches both streams: it sees an overlap if stream B has pending work (k+1 was
 * submitted) while stream A still has too (k has not ended). Under the bound that cannot happen,
 * and not by timing: k+1 is submitted only after the interposer's mark behind k, the last item
 * of stream A, has completed, so stream A is idle from before B has anything. Without the bound
 * it happens as soon as the watcher looks while k runs: it looks until k ends, and a launch of
 * many milliseconds leaves it plenty of chances even on a loaded machine.
 *
 * First WARMUP launches on stream A let the bound learn the launches' length (it times the
 * span between two completed marks). With `thread`, a thread of its own launches, and ends
 * before the probe prints (the interposer's count of threads launching very long work must
 * not keep it: CONVGPU_LOG=debug says so).
 * Usage: queue_probe KERNEL_US PAIRS [A_KERNELS [thread]]; prints `overlapped=O pairs=P`. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_open.h"
#include "spin_ptx.h"

#define WARMUP 8

static PFN_cuStreamQuery stream_query;
static PFN_cuCtxSetCurrent set_current;
static CUstream stream_a, stream_b;
static CUcontext context;
static atomic_int launched; /* pair number whose kernel k is on stream A; -1 at the end */
static atomic_int judged;   /* pairs the watcher has decided */
static atomic_int overlapped;

static void *watch(void *arg)
{
    (void)arg;
    if (set_current(context)) {
        fprintf(stderr, "queue_probe: cuCtxSetCurrent failed in the watcher\n");
        exit(1);
    }
    for (int pair = 1;; pair++) {
        int now;
        while ((now = atomic_load(&launched)) != pair && now != -1)
            sched_yield();
        if (now == -1)
            return NULL;
        for (;;) {
            CUresult b = stream_query(stream_b), a = stream_query(stream_a);
            if (b == CUDA_ERROR_NOT_READY && a == CUDA_ERROR_NOT_READY) {
                atomic_fetch_add(&overlapped, 1);
                break;
            }
            if (a == CUDA_SUCCESS)
                break; /* k ended with nothing of the thread's beside it */
            if (a != CUDA_ERROR_NOT_READY) {
                fprintf(stderr, "queue_probe: cuStreamQuery: error %d\n", (int)a);
                exit(1);
            }
            sched_yield();
        }
        atomic_store(&judged, pair);
    }
}

static unsigned long long us;
static int pairs, a_kernels = 1;
static PFN_cuLaunchKernel launch;
static PFN_cuCtxSynchronize sync_all;
static CUfunction spin;

/* Warms up, then launches the pairs: NULL, or non-NULL on a failed call. */
static void *launch_pairs(void *arg)
{
    (void)arg;
    if (set_current(context))
        return (void *)1;
    void *params[] = {&us};
    for (int i = 0; i < WARMUP; i++)
        if (launch(spin, 1, 1, 1, 1, 1, 1, 0, stream_a, params, NULL))
            return (void *)1;
    if (sync_all())
        return (void *)1;
    pthread_t watcher;
    if (pthread_create(&watcher, NULL, watch, NULL) != 0)
        return (void *)1;
    for (int pair = 1; pair <= pairs; pair++) {
        for (int i = 0; i < a_kernels; i++)
            if (launch(spin, 1, 1, 1, 1, 1, 1, 0, stream_a, params, NULL))
                return (void *)1;
        atomic_store(&launched, pair);
        if (launch(spin, 1, 1, 1, 1, 1, 1, 0, stream_b, params, NULL))
            return (void *)1;
        while (atomic_load(&judged) != pair)
            sched_yield();
        if (sync_all())
            return (void *)1;
    }
    atomic_store(&launched, -1);
    pthread_join(watcher, NULL);
    return NULL;
}

/* A whole number in [lo, hi], or -1. */
static long long whole(const char *s, long long lo, long long hi)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    return errno || end == s || *end || v < lo || v > hi ? -1 : v;
}

int main(int argc, char **argv)
{
    bool own_thread = argc == 5 && strcmp(argv[4], "thread") == 0;
    long long k = argc >= 3 ? whole(argv[1], 1, 10000000) : -1;
    long long p = argc >= 3 ? whole(argv[2], 1, 1000) : -1;
    long long a = argc >= 4 ? whole(argv[3], 1, 64) : 1;
    if (argc < 3 || argc > 5 || (argc == 5 && !own_thread) || k < 0 || p < 0 || a < 0) {
        fprintf(stderr, "queue_probe: usage: queue_probe KERNEL_US PAIRS [A_KERNELS [thread]]\n");
        return 2;
    }
    us = (unsigned long long)k;
    pairs = (int)p;
    a_kernels = (int)a;
    void *h = cg_test_cuda_open("queue_probe");
    if (!h)
        return 1;
    PFN_cuStreamCreate create = (PFN_cuStreamCreate)dlsym(h, "cuStreamCreate");
    PFN_cuCtxGetCurrent current = (PFN_cuCtxGetCurrent)dlsym(h, "cuCtxGetCurrent");
    launch = (PFN_cuLaunchKernel)dlsym(h, "cuLaunchKernel");
    sync_all = (PFN_cuCtxSynchronize)dlsym(h, "cuCtxSynchronize");
    set_current = (PFN_cuCtxSetCurrent)dlsym(h, "cuCtxSetCurrent");
    stream_query = (PFN_cuStreamQuery)dlsym(h, "cuStreamQuery");
    spin = cg_test_function(h, "queue_probe", spin_ptx, "spin");
    if (!spin || !launch || !sync_all || !create || !current || !set_current || !stream_query ||
        current(&context) ||
        create(&stream_a, CU_STREAM_NON_BLOCKING) || create(&stream_b, CU_STREAM_NON_BLOCKING)) {
        fprintf(stderr, "queue_probe: driver setup failed\n");
        return 1;
    }
    void *failed = NULL;
    pthread_t own;
    if (own_thread) {
        if (pthread_create(&own, NULL, launch_pairs, NULL) != 0 || pthread_join(own, &failed) != 0)
            return 1;
    } else {
        failed = launch_pairs(NULL);
    }
    if (failed)
        return 1;
    printf("overlapped=%d pairs=%d\n", atomic_load(&overlapped), pairs);
    return 0;
}

/* test_async.c — streams are asynchronous and ordered, as on a real GPU:
 *  - a launch returns before its kernel runs (a stream is NOT_READY right after a 10 s spin is
 *    launched; synchronising then succeeds); events and event waits follow stream order;
 *  - the legacy stream waits for blocking streams, the per-thread stream does not;
 *  - per-stream order: kernels and copies queued behind a gate run in order (an odd number of
 *    complements complements, a copy after them sees their result);
 *  - a stream's queue is bounded: a launch into a full queue waits for room;
 *  - a kernel's illegal address is the context's sticky error;
 *  - destroying a stream and freeing memory wait for the work that uses them;
 *  - host functions and callbacks run in stream order, and one that waits holds its stream only;
 *  - a process exiting with work queued neither hangs nor crashes, and a forked child starts
 *    with empty queues.
 * Gates (host functions the test opens) hold queued work as long as a check needs it; the only
 * time-based expectation is that a 10 s kernel is still running right after its launch. Devices:
 * two of 1GiB. */
#include "emu_test.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LONG_SPIN_US 10000000ull /* outlasts any check made right after its launch */

static t_kernels k;
static CUcontext primary;

static void launch_returns_at_once(void)
{
    CUstream a, b;
    CUevent e, e1, e2;
    CUdeviceptr buf;
    unsigned char back[64];
    CHECK_OK(cu.cuMemAlloc_v2(&buf, sizeof back));
    CHECK_OK(cu.cuStreamCreate(&a, CU_STREAM_DEFAULT));
    CHECK_OK(cu.cuStreamCreate(&b, CU_STREAM_NON_BLOCKING));
    CHECK_OK(cu.cuEventCreate(&e, 0));
    CHECK_OK(cu.cuStreamQuery(a));
    t_spin(&k, a, LONG_SPIN_US);
    CHECK_CU(cu.cuStreamQuery(a), CUDA_ERROR_NOT_READY);
    CHECK_OK(cu.cuEventRecord(e, a));
    CHECK_CU(cu.cuEventQuery(e), CUDA_ERROR_NOT_READY);
    /* An independent stream is idle, until it waits for the event. */
    CHECK_OK(cu.cuStreamQuery(b));
    CHECK_OK(cu.cuStreamWaitEvent(b, e, 0));
    CHECK_CU(cu.cuStreamQuery(b), CUDA_ERROR_NOT_READY);
    /* The per-thread stream does not wait for a blocking stream... */
    CHECK_OK(cu.cuMemsetD8_v2_ptds(buf, 1, sizeof back));
    CHECK_CU(cu.cuStreamQuery(a), CUDA_ERROR_NOT_READY);
    /* ...the legacy stream does: a synchronous set returns after a's kernel. */
    CHECK_OK(cu.cuMemsetD8_v2(buf, 2, sizeof back));
    CHECK_OK(cu.cuStreamQuery(a));
    CHECK_OK(cu.cuEventQuery(e));
    CHECK_OK(cu.cuStreamSynchronize(b));
    CHECK_OK(cu.cuMemcpyDtoH_v2(back, buf, sizeof back));
    CHECK(back[0] == 2 && back[63] == 2);

    /* Elapsed time between two records spans the kernel between them. */
    CHECK_OK(cu.cuEventCreate(&e1, 0));
    CHECK_OK(cu.cuEventCreate(&e2, 0));
    CHECK_OK(cu.cuEventRecord(e1, a));
    t_spin(&k, a, 20000);
    CHECK_OK(cu.cuEventRecord(e2, a));
    CHECK_OK(cu.cuEventSynchronize(e2));
    float ms = 0;
    CHECK_OK(cu.cuEventElapsedTime_v2(&ms, e1, e2));
    if (ms < 19.99f)
        t_fail(__FILE__, __LINE__, "elapsed %.3f ms across a 20 ms kernel", (double)ms);
    CHECK_OK(cu.cuEventDestroy_v2(e));
    CHECK_OK(cu.cuEventDestroy_v2(e1));
    CHECK_OK(cu.cuEventDestroy_v2(e2));
    CHECK_OK(cu.cuStreamDestroy_v2(a));
    CHECK_OK(cu.cuStreamDestroy_v2(b));
    CHECK_OK(cu.cuMemFree_v2(buf));
}

static void order_per_stream(void)
{
    enum { N = 1 << 20, KERNELS = 101 };
    CUstream s;
    CUdeviceptr p;
    unsigned char *in, *out;
    t_gate g;
    t_gate_init(&g);
    CHECK_OK(cu.cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CHECK_OK(cu.cuMemAlloc_v2(&p, N));
    CHECK_OK(cu.cuMemAllocHost_v2((void **)&in, N));
    CHECK_OK(cu.cuMemAllocHost_v2((void **)&out, N));
    for (size_t i = 0; i < N; i++)
        in[i] = (unsigned char)(i * 7 + 3);
    memset(out, 0, N);
    /* Everything waits behind the gate, so the order is the queue's, not the calls'. */
    CHECK_OK(cu.cuLaunchHostFunc(s, t_gate_fn, &g));
    CHECK_OK(cu.cuMemcpyHtoDAsync_v2(p, in, N, s)); /* page-locked: queued, not done */
    for (int i = 0; i < KERNELS; i++)
        t_complement(&k, s, p, N);
    CHECK_OK(cu.cuMemcpyDtoHAsync_v2(out, p, N, s));
    CHECK(t_wait_for(t_gate_reached, &g, T_WAIT_MS));
    CHECK_CU(cu.cuStreamQuery(s), CUDA_ERROR_NOT_READY);
    CHECK(out[0] == 0 && out[N - 1] == 0);
    t_gate_open(&g);
    CHECK_OK(cu.cuStreamSynchronize(s));
    for (size_t i = 0; i < N; i++)
        if (out[i] != (unsigned char)~in[i])
            t_fail(__FILE__, __LINE__, "byte %zu: %u after %d complements of %u", i, out[i],
                   KERNELS, in[i]);
    /* Twice more restores it; a synchronous copy from pageable memory sees it too. */
    t_complement(&k, s, p, N);
    t_complement(&k, s, p, N);
    unsigned char *check = malloc(N);
    CHECK_OK(cu.cuStreamSynchronize(s));
    CHECK_OK(cu.cuMemcpyDtoH_v2(check, p, N));
    for (size_t i = 0; i < N; i++)
        if (check[i] != (unsigned char)~in[i])
            t_fail(__FILE__, __LINE__, "byte %zu after two more complements", i);
    free(check);
    CHECK_OK(cu.cuMemFreeHost(in));
    CHECK_OK(cu.cuMemFreeHost(out));
    CHECK_OK(cu.cuMemFree_v2(p));
    CHECK_OK(cu.cuStreamDestroy_v2(s));
}

/* ---- a full queue makes the launch wait ---- */

static CUstream full_stream;
static atomic_int pushed, pusher_tid;
static int park[2];

static void *pusher(void *arg)
{
    (void)arg;
    char c;
    CHECK_OK(cu.cuCtxSetCurrent(primary));
    atomic_store(&pusher_tid, (int)gettid());
    for (int i = 0; i < 1100; i++) {
        t_spin(&k, full_stream, 0);
        atomic_fetch_add(&pushed, 1);
    }
    /* Asleep here if the queue never held it back: the test sees 1100, not 1023. */
    CHECK(read(park[0], &c, 1) == 1);
    return NULL;
}

static int pusher_parked(void *arg)
{
    (void)arg;
    int tid = atomic_load(&pusher_tid);
    return tid && atomic_load(&pushed) >= 1023 && t_thread_asleep(tid);
}

static void bounded_queue(void)
{
    t_gate g;
    pthread_t th;
    t_gate_init(&g);
    CHECK(pipe(park) == 0);
    CHECK_OK(cu.cuStreamCreate(&full_stream, CU_STREAM_NON_BLOCKING));
    CHECK_OK(cu.cuLaunchHostFunc(full_stream, t_gate_fn, &g));
    CHECK(t_wait_for(t_gate_reached, &g, T_WAIT_MS));
    CHECK(pthread_create(&th, NULL, pusher, NULL) == 0);
    CHECK(t_wait_for(pusher_parked, NULL, T_WAIT_MS));
    /* 1024 entries: the gate and 1023 kernels; the 1024th kernel waits for room. */
    CHECK_EQ(atomic_load(&pushed), 1023);
    t_gate_open(&g);
    CHECK(write(park[1], "g", 1) == 1);
    pthread_join(th, NULL);
    CHECK_EQ(atomic_load(&pushed), 1100);
    CHECK_OK(cu.cuStreamSynchronize(full_stream));
    CHECK_OK(cu.cuStreamDestroy_v2(full_stream));
    close(park[0]);
    close(park[1]);
}

static void sticky_error(void)
{
    CUcontext c;
    CUdeviceptr p, q;
    t_kernels k2;
    uint64_t before = t_free();
    CHECK_OK(cu.cuCtxCreate_v4(&c, NULL, 0, 0));
    t_load_kernels(&k2);
    CHECK_OK(cu.cuMemAlloc_v2(&p, 4096));
    /* The launch is fine; the kernel runs past its buffer. */
    t_complement(&k2, NULL, p, 8192);
    CHECK_CU(cu.cuCtxSynchronize(), CUDA_ERROR_ILLEGAL_ADDRESS);
    /* From then on the context answers the fault. */
    CHECK_CU(cu.cuMemAlloc_v2(&q, 1), CUDA_ERROR_ILLEGAL_ADDRESS);
    CHECK_CU(cu.cuStreamQuery(NULL), CUDA_ERROR_ILLEGAL_ADDRESS);
    unsigned long long us = 0;
    void *params[] = {&us};
    CHECK_CU(cu.cuLaunchKernel(k2.spin, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL),
             CUDA_ERROR_ILLEGAL_ADDRESS);
    CHECK_CU(cu.cuCtxSynchronize(), CUDA_ERROR_ILLEGAL_ADDRESS);
    /* Destroying it gives everything back; other contexts never saw the fault. */
    CHECK_OK(cu.cuCtxDestroy_v2(c));
    CHECK_OK(cu.cuCtxSetCurrent(primary));
    CHECK_OK(cu.cuCtxSynchronize());
    CHECK_EQ(t_free(), before);
    t_spin(&k, NULL, 0);
    CHECK_OK(cu.cuCtxSynchronize());
}

/* ---- stream destruction and cuMemFree wait for the work that uses them ---- */

typedef struct {
    CUstream s;
    CUdeviceptr p;
    atomic_int done, tid;
    int hold[2];
} waiter;

static void *destroyer(void *arg)
{
    waiter *w = arg;
    char c;
    CHECK_OK(cu.cuCtxSetCurrent(primary));
    atomic_store(&w->tid, (int)gettid());
    CHECK_OK(cu.cuStreamDestroy_v2(w->s));
    atomic_store(&w->done, 1);
    CHECK(read(w->hold[0], &c, 1) == 1);
    return NULL;
}

static void *freer(void *arg)
{
    waiter *w = arg;
    char c;
    CHECK_OK(cu.cuCtxSetCurrent(primary));
    atomic_store(&w->tid, (int)gettid());
    CHECK_OK(cu.cuMemFree_v2(w->p));
    atomic_store(&w->done, 1);
    CHECK(read(w->hold[0], &c, 1) == 1);
    return NULL;
}

static int waiter_asleep(void *arg)
{
    waiter *w = arg;
    int tid = atomic_load(&w->tid);
    return tid && t_thread_asleep(tid);
}

static int waiter_done(void *arg) { return atomic_load(&((waiter *)arg)->done); }

/* Runs fn in a thread behind a gate on w->s: it must not return while the gate holds. */
static void check_waits(void *(*fn)(void *), waiter *w, t_gate *g)
{
    pthread_t th;
    CHECK(pipe(w->hold) == 0);
    CHECK(t_wait_for(t_gate_reached, g, T_WAIT_MS));
    CHECK(pthread_create(&th, NULL, fn, w) == 0);
    CHECK(t_wait_for(waiter_asleep, w, T_WAIT_MS));
    CHECK_EQ(atomic_load(&w->done), 0);
    t_gate_open(g);
    CHECK(t_wait_for(waiter_done, w, T_WAIT_MS));
    CHECK(write(w->hold[1], "g", 1) == 1);
    pthread_join(th, NULL);
    close(w->hold[0]);
    close(w->hold[1]);
}

static void teardown_waits(void)
{
    enum { N = 4096 };
    unsigned char back[N];
    CUdeviceptr p;
    CUstream s;
    t_gate g;

    /* cuStreamDestroy: the set queued behind the gate still happens. */
    waiter w = {0};
    t_gate_init(&g);
    CHECK_OK(cu.cuMemAlloc_v2(&p, N));
    CHECK_OK(cu.cuMemsetD8_v2(p, 0, N));
    CHECK_OK(cu.cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CHECK_OK(cu.cuLaunchHostFunc(s, t_gate_fn, &g));
    CHECK_OK(cu.cuMemsetD8Async(p, 7, N, s));
    w.s = s;
    check_waits(destroyer, &w, &g);
    CHECK_OK(cu.cuMemcpyDtoH_v2(back, p, N));
    CHECK(back[0] == 7 && back[N - 1] == 7);

    /* cuMemFree: the kernel using the buffer runs first (without the wait it would fault). */
    waiter f = {0};
    t_gate_init(&g);
    CHECK_OK(cu.cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CHECK_OK(cu.cuLaunchHostFunc(s, t_gate_fn, &g));
    t_complement(&k, s, p, N);
    f.p = p;
    check_waits(freer, &f, &g);
    CHECK_OK(cu.cuCtxSynchronize());
    CHECK_OK(cu.cuStreamDestroy_v2(s));
}

/* ---- host functions and callbacks in stream order ---- */

static int seen[8], nseen;
static CUresult seen_status = CUDA_ERROR_UNKNOWN;

static void note(void *v) { seen[nseen++] = (int)(intptr_t)v; }

static void callback(CUstream s, CUresult status, void *v)
{
    (void)s;
    seen_status = status;
    note(v);
}

static void host_functions(void)
{
    CUstream s;
    CHECK_OK(cu.cuStreamCreate(&s, 0));
    CHECK_OK(cu.cuLaunchHostFunc(s, note, (void *)1));
    t_spin(&k, s, 1000);
    CHECK_OK(cu.cuStreamAddCallback(s, callback, (void *)2, 0));
    t_spin(&k, s, 1000);
    CHECK_OK(cu.cuLaunchHostFunc(s, note, (void *)3));
    CHECK_OK(cu.cuStreamSynchronize(s));
    CHECK_EQ(nseen, 3);
    CHECK(seen[0] == 1 && seen[1] == 2 && seen[2] == 3);
    CHECK_EQ(seen_status, CUDA_SUCCESS);
    /* A host function that waits holds its stream only: a kernel on another stream runs
     * meanwhile (a callback may wait for such work). */
    t_gate g;
    CUstream other;
    t_gate_init(&g);
    CHECK_OK(cu.cuStreamCreate(&other, CU_STREAM_NON_BLOCKING));
    CHECK_OK(cu.cuLaunchHostFunc(s, t_gate_fn, &g));
    t_spin(&k, s, 0);
    CHECK(t_wait_for(t_gate_reached, &g, T_WAIT_MS));
    t_spin(&k, other, 0);
    CHECK_OK(cu.cuStreamSynchronize(other));
    CHECK_CU(cu.cuStreamQuery(s), CUDA_ERROR_NOT_READY);
    t_gate_open(&g);
    CHECK_OK(cu.cuStreamSynchronize(s));
    CHECK_OK(cu.cuStreamDestroy_v2(other));
    CHECK_CU(cu.cuLaunchHostFunc(s, NULL, NULL), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cu.cuStreamAddCallback(s, callback, NULL, 1), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cu.cuLaunchHostFunc((CUstream)&seen, note, NULL), CUDA_ERROR_INVALID_HANDLE);
    CHECK_OK(cu.cuStreamDestroy_v2(s));
}

/* ---- the other launch paths ---- */

static void launch_paths(void)
{
    CUdeviceptr p;
    unsigned char b = 0x0f;
    size_t n = 1;
    void *params[] = {&p, &n};
    CHECK_OK(cu.cuMemAlloc_v2(&p, 1));
    CHECK_OK(cu.cuMemcpyHtoD_v2(p, &b, 1));
    CHECK_OK(cu.cuLaunchCooperativeKernel(k.complement, 1, 1, 1, 1, 1, 1, 0, NULL, params));
    CHECK_OK(cu.cuLaunchKernel_ptsz(k.complement, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL));
    CHECK_OK(cu.cuStreamSynchronize_ptsz(NULL));
    CHECK_OK(cu.cuCtxSynchronize());
    CHECK_OK(cu.cuMemcpyDtoH_v2(&b, p, 1));
    CHECK_EQ(b, 0x0f);

    /* One launch per device, each on a created stream of its own. */
    CUcontext c1;
    CUstream s0, s1;
    t_kernels k1;
    CHECK_OK(cu.cuStreamCreate(&s0, 0));
    CHECK_OK(cu.cuCtxCreate_v4(&c1, NULL, 0, 1));
    t_load_kernels(&k1);
    CHECK_OK(cu.cuStreamCreate(&s1, 0));
    unsigned long long us = 1000;
    void *sp[] = {&us};
    CUDA_LAUNCH_PARAMS lp[2] = {
        {k.complement, 1, 1, 1, 1, 1, 1, 0, s0, params},
        {k1.spin, 1, 1, 1, 1, 1, 1, 0, s1, sp},
    };
    CHECK_OK(cu.cuLaunchCooperativeKernelMultiDevice(lp, 2, 0));
    CHECK_OK(cu.cuStreamSynchronize(s1));
    CHECK_OK(cu.cuCtxSetCurrent(primary));
    CHECK_OK(cu.cuStreamSynchronize(s0));
    CHECK_OK(cu.cuMemcpyDtoH_v2(&b, p, 1));
    CHECK_EQ(b, 0xf0);
    CUDA_LAUNCH_PARAMS same[2] = {lp[0], lp[0]};
    CHECK_CU(cu.cuLaunchCooperativeKernelMultiDevice(same, 2, 0), CUDA_ERROR_INVALID_DEVICE);
    lp[1].hStream = NULL;
    CHECK_CU(cu.cuLaunchCooperativeKernelMultiDevice(lp, 2, 0), CUDA_ERROR_INVALID_HANDLE);
    CHECK_CU(cu.cuLaunchCooperativeKernelMultiDevice(lp, 1, 4), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cu.cuLaunchCooperativeKernelMultiDevice(NULL, 1, 0), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cu.cuLaunchCooperativeKernelMultiDevice(lp, 3, 0), CUDA_ERROR_INVALID_VALUE);
    CHECK_OK(cu.cuStreamDestroy_v2(s0));
    CHECK_OK(cu.cuCtxDestroy_v2(c1));
    CHECK_OK(cu.cuCtxSetCurrent(primary));
    CHECK_OK(cu.cuMemFree_v2(p));
}

/* ---- process exit and fork with work queued ---- */

static int exit_with_work(void)
{
    t_init_ctx();
    t_load_kernels(&k);
    /* Longer than the test's timeout: exit must not wait for it. */
    t_spin(&k, NULL, 1000000000ull);
    CHECK_CU(cu.cuStreamQuery(NULL), CUDA_ERROR_NOT_READY);
    return 0;
}

static void exit_and_fork(const char *self)
{
    char *argv[] = {(char *)self, "exit-with-work", NULL};
    CHECK_EQ(t_run(argv, NULL, NULL), 0);
    /* The device the child held is free again: a kernel here completes. */
    t_spin(&k, NULL, 0);
    CHECK_OK(cu.cuCtxSynchronize());

    /* A child forked with work queued here starts empty and works on its own. */
    CUstream s;
    t_gate g;
    t_gate_init(&g);
    CHECK_OK(cu.cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CHECK_OK(cu.cuLaunchHostFunc(s, t_gate_fn, &g));
    t_spin(&k, s, 0);
    CHECK(t_wait_for(t_gate_reached, &g, T_WAIT_MS));
    fflush(NULL);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        CUcontext c;
        t_kernels kc;
        CHECK_OK(cu.cuCtxCreate_v4(&c, NULL, 0, 0));
        t_load_kernels(&kc);
        t_spin(&kc, NULL, 0);
        CHECK_OK(cu.cuCtxSynchronize());
        _exit(0);
    }
    CHECK_EQ(t_wait(pid), 0);
    CHECK_CU(cu.cuStreamQuery(s), CUDA_ERROR_NOT_READY);
    t_gate_open(&g);
    CHECK_OK(cu.cuStreamSynchronize(s));
    CHECK_OK(cu.cuStreamDestroy_v2(s));
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "exit-with-work") == 0) {
        t_load_cuda();
        return exit_with_work();
    }
    t_isolate();
    t_load_cuda();
    primary = t_init_ctx();
    t_load_kernels(&k);
    launch_returns_at_once();
    order_per_stream();
    bounded_queue();
    sticky_error();
    teardown_waits();
    host_functions();
    launch_paths();
    exit_and_fork(argv[0]);
    printf("ok\n");
    return 0;
}

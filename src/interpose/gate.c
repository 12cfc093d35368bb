/* gate.c — waiting at a closed compute gate (gate.h). */
#include "gate.h"

#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "runahead.h"
#include "table.h"

/* The longest single wait: the gate is re-read at least this often, so a gate whose deadline
 * passes, or a wake that was missed, costs at most this much. */
#define GATE_RECHECK_NS 100000000ull

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void cg_gate_wait(struct cg_session *s, bool counted, uint32_t bits)
{
    struct cg_ledger_compute *g = &s->ledger->compute;
    uint64_t t0 = mono_ns(), now = t0;
    bool waited = false;
    atomic_fetch_add_explicit(&s->slot->gate_waiting, 1, memory_order_relaxed);
    uint32_t v;
    while (((v = atomic_load_explicit(&g->gate, memory_order_seq_cst)) & bits) != 0) {
        uint64_t left = GATE_RECHECK_NS;
        if (!(v & (CG_GATE_SWAPPED | CG_GATE_PAUSED))) {
            uint64_t until = atomic_load_explicit(&g->closed_until, memory_order_relaxed);
            if (now >= until)
                break; /* the daemon stopped renewing it: open */
            if (until - now < left)
                left = until - now;
        }
        /* Out of the in-flight count while waiting, or a swap-out would wait for us. */
        if (counted)
            atomic_fetch_sub_explicit(&cg_swap_inflight, 1, memory_order_release);
        struct timespec ts = {(time_t)(left / 1000000000ull), (long)(left % 1000000000ull)};
        /* A shared (not private) futex: the daemon wakes it through its own mapping. */
        syscall(SYS_futex, (uint32_t *)&g->gate, FUTEX_WAIT, v, &ts, NULL, 0);
        if (counted)
            atomic_fetch_add_explicit(&cg_swap_inflight, 1, memory_order_seq_cst);
        waited = true;
        now = mono_ns();
    }
    atomic_fetch_sub_explicit(&s->slot->gate_waiting, 1, memory_order_relaxed);
    if (waited) {
        atomic_fetch_add_explicit(&g->throttled_ns, now - t0, memory_order_relaxed);
        atomic_fetch_add_explicit(&g->throttled_launches, 1, memory_order_relaxed);
    }
}

/* ---- run-ahead ---------------------------------------------------------------------------------
 * A gate stops new launches, not work already queued: a thread that queued a thousand 50 ms
 * kernels while its gate was open would run for 50 s past its share. So in a container with a
 * share, each thread keeps at most about 2 x RUNAHEAD_NS of launched, unfinished work: every
 * `every` launches it records a mark (an event) after the launch, and before recording a third
 * it waits for the oldest. `every` adapts to the measured time per launch, so marks cost one
 * event per few milliseconds of device work whatever the kernels' lengths.
 *
 * The time per launch is measured between two *completed* marks: the one waited for and the
 * one waited for before it (`done`). (Timing the waited-for mark against the next, which is
 * still queued whenever the queue is deeper than one mark, failed with NOT_READY, and the
 * failure was read as "too fast to time": `every` doubled to its maximum and a synchronising
 * loop of 64 x 20 ms kernels ran 1.3 s past its closed gate, 0% and 50% in alternate seconds.)
 * The span between two marks includes other containers' kernels and the thread's own host
 * time, so it overstates a launch's length: marks come more often, never less.
 *
 * Long launches keep less ahead (issue 39): one at least RUNAHEAD_NS long keeps one mark, at
 * most one launch queued behind the running one; one at least 2 x RUNAHEAD_NS long nothing:
 * the thread's next launch first waits for it (cg_gate_before_launch), so at most the running
 * launch runs past a closed gate. With two marks, 20 ms kernels ran up to 60 ms past a closed
 * gate, and a hard share of 25 went in cycles of about 85 ms of device time (its overshoot,
 * then a long close), a third of its 1-s share each: windows 8 points off; with one launch
 * queued behind the running one, 3.8; with none, 1.1 (the model, 8 x 20 ms per sync). What it
 * costs is the thread's wake-up and the launch between two such launches, against at least
 * RUNAHEAD_NS of work each, and in a thread that launches long kernels on several streams,
 * their overlap; only in a container with a share below 100. Lengths are the span between two
 * marks, which counts other containers' turns on the device: a 5 ms graph beside two busy
 * neighbours spans 10 ms or more and queued nothing, and a neighbour's host hiccup then cost
 * it a window 4 points short, so only launches of 2 x RUNAHEAD_NS go without a queue. */

#define RUNAHEAD_NS ((double)CG_RUNAHEAD_MARK_NS) /* device work per mark */
#define EVERY_MAX 256u

typedef CUresult (*is_capturing_fn)(CUstream, int *);

struct runahead {
    CUevent mark[2];
    unsigned launches[2];   /* launches between the previous mark and this one */
    int n;                  /* marks outstanding, oldest first */
    CUevent done;           /* the last mark waited for (complete), or NULL */
    CUcontext ctx;          /* the context the marks belong to */
    unsigned since, every;
    bool long_launches;     /* the last timed launch took RUNAHEAD_NS or more: one mark */
    bool very_long;         /* ... 2 x RUNAHEAD_NS or more: nothing queued behind it */
    bool keyed;             /* released when the thread ends (release_at_thread_end) */
};

static __thread struct runahead ra;
_Atomic unsigned cg_gate_long_threads;

static _Atomic(void *) c_create, c_record, c_record_ptsz, c_sync, c_elapsed, c_destroy, c_current,
    c_capturing, c_capturing_ptsz;

static void *sym(_Atomic(void *) *cache, const char *name)
{
    return cg_lib_sym(CG_LIB_CUDA, cache, name);
}

static void drop_marks(void)
{
    PFN_cuEventDestroy_v2 destroy = (PFN_cuEventDestroy_v2)sym(&c_destroy, "cuEventDestroy_v2");
    for (int i = 0; i < 2; i++) {
        if (ra.mark[i] && destroy)
            destroy(ra.mark[i]);
        ra.mark[i] = NULL;
    }
    if (ra.done && destroy)
        destroy(ra.done);
    ra.done = NULL;
    ra.n = 0;
    ra.since = 0;
}

/* What a thread holds for its bound goes when the thread ends: its marks (events in the
 * context, up to three), and its place in the count of threads that launch very long work
 * (else every later launch of the process would take the slow path, a call and a
 * thread-local lookup, for good). A pthread key's destructor runs in the ending thread, so
 * `ra` is still its own. Set once per thread, when it makes its first mark. */
static pthread_key_t thread_key;
static pthread_once_t thread_key_once = PTHREAD_ONCE_INIT;
static bool thread_keyed;

static void runahead_thread_ends(void *arg)
{
    (void)arg;
    unsigned marks = (ra.mark[0] != NULL) + (ra.mark[1] != NULL) + (ra.done != NULL);
    drop_marks();
    if (ra.very_long) {
        ra.very_long = false;
        unsigned left = atomic_fetch_sub_explicit(&cg_gate_long_threads, 1, memory_order_relaxed) - 1;
        cg_log(CG_LOG_DEBUG, "run-ahead: a thread that launched very long work ended; threads that do: %u",
               left);
    }
    cg_log(CG_LOG_DEBUG, "run-ahead: a thread ended; %u marks released", marks);
}

static void thread_key_create(void)
{
    thread_keyed = pthread_key_create(&thread_key, runahead_thread_ends) == 0;
}

static void release_at_thread_end(void)
{
    if (ra.keyed)
        return;
    ra.keyed = true;
    pthread_once(&thread_key_once, thread_key_create);
    if (thread_keyed)
        pthread_setspecific(thread_key, &ra);
}

/* The thread's launches became very long, or stopped being. */
static void very_long_changed(bool very_long, double per_launch_ns)
{
    unsigned now = very_long
                       ? atomic_fetch_add_explicit(&cg_gate_long_threads, 1, memory_order_relaxed) + 1
                       : atomic_fetch_sub_explicit(&cg_gate_long_threads, 1, memory_order_relaxed) - 1;
    ra.very_long = very_long;
    cg_log(CG_LOG_DEBUG, "run-ahead: a thread launches %.1f ms per launch: %s; threads that do: %u",
           per_launch_ns / 1e6, very_long ? "nothing queued behind it" : "work queued again", now);
}

/* Waits for the oldest mark, learns the time per launch from it, and moves it to `done`;
 * false when the wait failed (the marks are dropped). */
static bool retire_oldest(void)
{
    PFN_cuEventSynchronize sync = (PFN_cuEventSynchronize)sym(&c_sync, "cuEventSynchronize");
    PFN_cuEventElapsedTime elapsed = (PFN_cuEventElapsedTime)sym(&c_elapsed, "cuEventElapsedTime");
    if (!sync || sync(ra.mark[0]) != CUDA_SUCCESS) {
        drop_marks();
        return false;
    }
    float ms = 0;
    if (ra.done && elapsed && elapsed(&ms, ra.done, ra.mark[0]) == CUDA_SUCCESS) {
        if (ms > 0) {
            double per_launch = (double)ms * 1e6 / (ra.launches[0] ? ra.launches[0] : 1);
            double want = RUNAHEAD_NS / per_launch;
            ra.every = want < 1 ? 1 : want > EVERY_MAX ? EVERY_MAX : (unsigned)want;
            unsigned queued = cg_runahead_queued((uint64_t)per_launch); /* the shared rule */
            ra.long_launches = queued <= 1;
            bool very_long = queued == 0;
            if (very_long != ra.very_long)
                very_long_changed(very_long, per_launch);
        } else if (ra.every < EVERY_MAX) {
            ra.every *= 2; /* too fast to time: mark less often */
        }
    }
    /* mark[0] is now the last one done; the old `done` is the spare for the next mark. */
    CUevent spare = ra.done;
    ra.done = ra.mark[0];
    if (ra.n == 2) {
        ra.mark[0] = ra.mark[1];
        ra.launches[0] = ra.launches[1];
    }
    ra.mark[ra.n - 1] = spare;
    ra.n--;
    return true;
}

void cg_gate_before_launch(void)
{
    if (ra.very_long && ra.n > 0)
        retire_oldest();
}

void cg_gate_runahead(CUstream s, int ptsz)
{
    if (ra.every == 0)
        ra.every = 1;
    if (++ra.since < ra.every)
        return;
    unsigned launches = ra.since;
    ra.since = 0;
    PFN_cuCtxGetCurrent current = (PFN_cuCtxGetCurrent)sym(&c_current, "cuCtxGetCurrent");
    PFN_cuEventCreate create = (PFN_cuEventCreate)sym(&c_create, "cuEventCreate");
    PFN_cuEventRecord record = (PFN_cuEventRecord)(ptsz ? sym(&c_record_ptsz, "cuEventRecord_ptsz")
                                                        : sym(&c_record, "cuEventRecord"));
    PFN_cuEventSynchronize sync = (PFN_cuEventSynchronize)sym(&c_sync, "cuEventSynchronize");
    is_capturing_fn capturing = (is_capturing_fn)(ptsz ? sym(&c_capturing_ptsz, "cuStreamIsCapturing_ptsz")
                                                       : sym(&c_capturing, "cuStreamIsCapturing"));
    CUcontext ctx = NULL;
    if (!current || !create || !record || !sync || current(&ctx) != CUDA_SUCCESS || !ctx)
        return;
    int status = 0;
    if (capturing && (capturing(s, &status) != CUDA_SUCCESS || status != 0))
        return; /* a stream being captured runs nothing now: no mark */
    if (ctx != ra.ctx) {
        drop_marks();
        ra.ctx = ctx;
    }
    /* The next mark waits for the oldest: at most two marks of work are ahead (one for long
     * launches; for very long ones, the running one, which the next launch waits for first). */
    while (ra.n >= (ra.long_launches ? 1 : 2))
        if (!retire_oldest())
            return;
    if (!ra.mark[ra.n] && create(&ra.mark[ra.n], CU_EVENT_DEFAULT) != CUDA_SUCCESS) {
        ra.mark[ra.n] = NULL;
        return;
    }
    release_at_thread_end();
    if (record(ra.mark[ra.n], s) == CUDA_SUCCESS)
        ra.launches[ra.n++] = launches;
}

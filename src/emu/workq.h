/* workq.h — the process's side of the device: ordered queues of work (streams), one worker
 * thread per device that runs them, and waiting for their work, as a real driver's push buffers
 * and the GPU's front end behave.
 *
 * Path of one launch: cuLaunchKernel resolves its stream (taking a reference), builds an item
 * (kernel id and argument values) and emu_submit appends it to the stream's ring under the
 * process's scheduler lock, wakes the device's worker if it sleeps, and returns. No system call
 * when the worker is awake and the ring has room. The worker picks, among the streams of its
 * device with pending work, the oldest ready head item, runs it (a kernel under the device's
 * execution lock, shared.h), then marks it done and wakes whoever waits for it.
 *
 * Ordering rules (the driver's):
 *  - a stream runs its items in order, one at a time;
 *  - the legacy default stream (NULL, CU_STREAM_LEGACY) waits for all earlier work of the other
 *    blocking streams of its context, and they wait for its earlier work; non-blocking streams
 *    and the per-thread default stream (CU_STREAM_PER_THREAD, _ptsz/_ptds, a blocking stream of
 *    its own) do not synchronise with each other;
 *  - an event wait is ready when the record it names has completed;
 *  - host functions and stream callbacks run on the process's host-function thread, in their
 *    stream's order: one that blocks holds its own stream only;
 *  - synchronous calls (copies, sets, stream/context/event synchronisation) wait for their item
 *    or fence. An item that is ready the moment it is submitted and is not a kernel (a copy, a
 *    set, a record) is run by the submitting thread itself: no worker round trip.
 * Kernels of one process run one at a time per device, even on different streams (a real GPU
 * may overlap them; processes are time-sliced either way).
 *
 * Faults: a kernel or copy that touches memory outside any allocation sets the context's sticky
 * error; the context's later work is dropped and every call in it answers that error.
 *
 * Lifetimes: streams and events are reference counted under the scheduler lock (handle,
 * queued items, waiters, events recorded on them), so a handle destroyed while work is pending
 * lives until that work is done. Lock order: g_emu.lock, then the scheduler lock; nobody waits
 * while holding g_emu.lock, and the scheduler lock is held only for bookkeeping. */
#ifndef CONVGPU_EMU_WORKQ_H
#define CONVGPU_EMU_WORKQ_H

#include "driver.h"

#define EMU_QUEUE_MAX 1024u /* a stream's ring: a launch into a full ring waits for room */

enum emu_item_kind {
    EMU_I_KERNEL, EMU_I_COPY, EMU_I_SET, EMU_I_RECORD, EMU_I_WAIT, EMU_I_HOST, EMU_I_CALLBACK,
    EMU_I_GRAPH, EMU_I_MARKER
};

typedef struct {
    int kernel;             /* enum emu_kernel */
    unsigned dims[7];       /* grid x y z, block x y z, shared memory: as launched */
    CUfunction func;        /* as launched (graph nodes report it) */
    uint64_t a0, a1;        /* argument values, copied at launch */
} emu_kcall;

/* A 3D copy; a 1D copy is width bytes, height = depth = 1. */
typedef struct {
    uintptr_t dst, src;
    size_t width, height, depth;
    size_t dpitch, spitch, dheight, sheight;
    int dst_mapped, src_mapped; /* in an allocation (device or page-locked): checked when run */
} emu_copy;

/* A 2D set of elements of esize bytes; a 1D set has height 1. */
typedef struct {
    uintptr_t dst;
    size_t pitch, width, height;
    uint32_t value;
    unsigned esize;
} emu_set;

typedef struct emu_item {
    int kind;
    uint64_t seq;           /* submission order in the process */
    uint64_t t_submit;      /* CLOCK_MONOTONIC ns it was submitted (nothing runs before) */
    union {
        emu_kcall k;
        emu_copy c;
        emu_set s;
        struct { struct CUevent_st *ev; uint64_t gen; } rec;
        struct { struct CUevent_st *ev; struct CUstream_st *s; uint64_t target; } wait;
        struct { CUhostFn fn; void *arg; } host;
        struct { CUstreamCallback fn; void *arg; CUstream handle; } cb;
        struct { struct CUgraphExec_st *g; } graph;
    } u;
} emu_item;

enum emu_stream_kind { EMU_S_USER, EMU_S_LEGACY, EMU_S_PTDS };

struct emu_capture;

struct CUstream_st {
    emu_obj hdr;            /* user streams: on the handle list */
    struct CUctx_st *ctx;
    unsigned phys;
    unsigned flags;
    int priority;
    int kind;
    unsigned long long id;
    /* under the scheduler lock */
    unsigned refs;
    int busy;               /* its head item is running */
    uint64_t vt;            /* where its last item ended on the device's timeline (exec.c);
                             * written by the thread running its head item */
    int dead;               /* its handle is gone */
    uint64_t enq, done;     /* items submitted / completed */
    uint64_t wake_at;       /* wake synchronous waiters when done reaches this */
    unsigned room_waiters;
    emu_item *ring;
    unsigned cap, head, count;
    int on_active;
    struct CUstream_st *act_next, *act_prev; /* streams of the device with pending items */
    struct CUstream_st *dev_next, *dev_prev; /* every stream of the device */
    struct emu_capture *capture;             /* non-NULL while capturing (graph.c) */
};

struct CUevent_st {
    emu_obj hdr;
    unsigned flags;
    /* under the scheduler lock */
    unsigned refs;          /* handle + records in flight */
    uint64_t gen;           /* bumped by every record */
    struct CUstream_st *s;  /* stream of the last record (a reference), NULL if never recorded */
    uint64_t target;        /* the last record has completed when s->done >= target */
    uint64_t ns;            /* CLOCK_MONOTONIC when it completed: where its stream had reached
                             * on the device's timeline (exec.c) */
    int captured;           /* last recorded into a stream capture */
};

void emu_sched_lock(void);
void emu_sched_unlock(void);

/* A new stream of ctx (flags, priority as cuStreamCreateWithPriority takes them), one
 * reference (the handle's). NULL when out of memory. */
struct CUstream_st *emu_stream_new(struct CUctx_st *ctx, int kind, unsigned flags, int prio);
/* Drops the handle's reference: the stream goes when its pending work is done. */
void emu_stream_drop(struct CUstream_st *s);
/* Scheduler lock held: reference counting. */
void emu_stream_ref(struct CUstream_st *s);
void emu_stream_unref(struct CUstream_st *s);

/* The stream an entry point's stream argument names, with a reference (release it with
 * emu_stream_put). ptsz is set for the _ptsz/_ptds forms, where NULL means the calling thread's
 * per-thread stream. Errors: INVALID_HANDLE, INVALID_CONTEXT, the context's sticky error. */
CUresult emu_stream_get(CUstream h, int ptsz, struct CUstream_st **out);
/* The same with g_emu.lock already held (read). */
CUresult emu_stream_get_locked(CUstream h, int ptsz, struct CUstream_st **out);
void emu_stream_put(struct CUstream_st *s);

/* Queues it on s; with sync, returns when it has run. Blocks while s's ring is full. RECORD:
 * it->u.rec.ev set (the event gets a reference and its record state); WAIT: it->u.wait.ev set
 * (snapshot of its last record; a never-recorded event queues nothing). Work submitted to a
 * capturing stream goes into its graph instead (sync work is refused and ends the capture). */
CUresult emu_submit(struct CUstream_st *s, emu_item *it, int sync);

/* Waits for everything submitted to s so far; for the legacy stream also the earlier work of
 * the context's blocking streams. Returns the context's sticky error, if any. */
CUresult emu_stream_sync(struct CUstream_st *s);
/* CUDA_SUCCESS when s has no pending work, CUDA_ERROR_NOT_READY, or the sticky error. */
CUresult emu_stream_query(struct CUstream_st *s);
/* Waits for all work of ctx (of every context of the process on phys). */
CUresult emu_ctx_sync(struct CUctx_st *ctx);
CUresult emu_device_sync(unsigned phys);
/* Event state: complete (1) or not; waiting for it. Scheduler lock held for complete. */
int emu_event_complete(const struct CUevent_st *e);
CUresult emu_event_sync(struct CUevent_st *e, struct CUctx_st *ctx);
void emu_event_unref(struct CUevent_st *e);

/* The context's sticky error (CUDA_SUCCESS if none). */
CUresult emu_sticky(const struct CUctx_st *ctx);
/* Context teardown: drops its queued work and kills its per-thread streams (the caller waited
 * for the work first; what raced in is dropped). */
void emu_ctx_drop_work(struct CUctx_st *ctx);
/* The context's legacy stream, created with it. Returns 0, or -1 when out of memory. */
int emu_ctx_attach_legacy(struct CUctx_st *ctx);

/* In a forked child: no worker survived; forget every queued item. */
void emu_sched_after_fork(void);

/* Running items (exec.c): with the device's execution state of the worker in *holds (1 while
 * it holds the device). Inline callers pass holds = NULL (they never run kernels). */
CUresult emu_exec_item(struct CUstream_st *s, emu_item *it, int *holds);
/* An item that will not run: its references go (callbacks still hear about the error). */
void emu_item_discard(emu_item *it, CUresult why);
/* Releases an item's references once it ran (a record completes at `when`). Scheduler lock
 * held. */
void emu_item_release(emu_item *it, uint64_t when);
/* Whether the host does it (copies, sets, host functions, callbacks): the worker lets the
 * device go first, as it does when it has nothing to run. Records, waits and markers take no
 * time, so they do not end a turn (a process recording an event after every kernel would
 * otherwise get one kernel per turn). */
int emu_item_runs_on_host(const emu_item *it);

/* capture.c and graph.c: stream capture and executable graphs. Scheduler lock held for the
 * capture functions: add records it into the capture (or refuses it and invalidates the
 * capture), invalidate marks the capture failed (cuStreamEndCapture will say so), abandon
 * forgets it (its stream or context goes). */
CUresult emu_capture_add(struct CUstream_st *s, const emu_item *it);
void emu_capture_invalidate(struct CUstream_st *s);
void emu_capture_abandon(struct CUstream_st *s);
void emu_gexec_unref(struct CUgraphExec_st *g);
CUresult emu_gexec_run(struct CUstream_st *s, struct CUgraphExec_st *g, int *holds);

/* Moves every stream of device d to map[d] (0xff or d: stays), for a restore onto other
 * devices (checkpoint.c). The process must be drained. 0, or -1 when work is pending. */
int emu_sched_remap(const uint8_t map[EMU_MAX_DEVICES]);

#endif

/* workq.c — streams' queues, the devices' workers and waiting for work (workq.h tells the
 * rules). Everything here runs under one process-wide scheduler lock, held only for
 * bookkeeping: items run outside it. */
#include "workq.h"

#include <sched.h>
#include <sys/prctl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    struct CUstream_st *all;        /* every stream of the device */
    struct CUstream_st *active;     /* those with pending items */
    pthread_cond_t cv;              /* the worker sleeps here */
    int started, sleeping;
    int holds;                      /* the worker holds the device (worker thread only) */
} emu_devq;

static struct {
    pthread_mutex_t mu;
    pthread_cond_t done_cv;         /* an item completed that someone waits for, or room */
    uint64_t seq, scan;
    emu_devq dq[EMU_MAX_DEVICES];
} g_sched = {.mu = PTHREAD_MUTEX_INITIALIZER, .done_cv = PTHREAD_COND_INITIALIZER};

void emu_sched_lock(void) { pthread_mutex_lock(&g_sched.mu); }
void emu_sched_unlock(void) { pthread_mutex_unlock(&g_sched.mu); }

CUresult emu_sticky(const struct CUctx_st *ctx)
{
    return (CUresult)__atomic_load_n(&ctx->sticky, __ATOMIC_ACQUIRE);
}

static void set_sticky(struct CUctx_st *ctx, CUresult rc)
{
    int none = CUDA_SUCCESS;
    __atomic_compare_exchange_n(&ctx->sticky, &none, (int)rc, 0, __ATOMIC_ACQ_REL,
                                __ATOMIC_ACQUIRE);
}

/* ---- streams ------------------------------------------------------------------------------ */

static struct CUstream_st *stream_new_locked(struct CUctx_st *ctx, int kind, unsigned flags,
                                             int prio)
{
    struct CUstream_st *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->ctx = ctx;
    s->phys = ctx->phys;
    s->flags = flags;
    s->priority = prio;
    s->kind = kind;
    s->id = __atomic_add_fetch(&g_emu.next_id, 1, __ATOMIC_RELAXED);
    s->refs = 1;
    s->wake_at = UINT64_MAX;
    emu_devq *dq = &g_sched.dq[s->phys];
    s->dev_next = dq->all;
    if (dq->all)
        dq->all->dev_prev = s;
    dq->all = s;
    return s;
}

struct CUstream_st *emu_stream_new(struct CUctx_st *ctx, int kind, unsigned flags, int prio)
{
    emu_sched_lock();
    struct CUstream_st *s = stream_new_locked(ctx, kind, flags, prio);
    emu_sched_unlock();
    return s;
}

void emu_stream_ref(struct CUstream_st *s) { s->refs++; }

void emu_stream_unref(struct CUstream_st *s)
{
    if (--s->refs > 0)
        return;
    emu_devq *dq = &g_sched.dq[s->phys];
    if (s->dev_prev)
        s->dev_prev->dev_next = s->dev_next;
    else
        dq->all = s->dev_next;
    if (s->dev_next)
        s->dev_next->dev_prev = s->dev_prev;
    free(s->ring);
    free(s);
}

void emu_stream_drop(struct CUstream_st *s)
{
    emu_sched_lock();
    if (s->capture)
        emu_capture_abandon(s);
    s->dead = 1;
    emu_stream_unref(s);
    emu_sched_unlock();
}

/* The calling thread's per-thread default streams, one per (context, context life). */
#define EMU_PTDS_SLOTS 8

typedef struct {
    struct CUctx_st *ctx;
    unsigned gen;
    struct CUstream_st *s;
} ptds_ent;

static _Thread_local ptds_ent t_ptds[EMU_PTDS_SLOTS];
static pthread_key_t g_ptds_key;
static pthread_once_t g_ptds_once = PTHREAD_ONCE_INIT;

static void ptds_release(ptds_ent *e)
{
    if (e->s) {
        e->s->dead = 1;
        emu_stream_unref(e->s);
        e->s = NULL;
    }
}

/* At thread exit: the thread's streams go once their work is done. */
static void ptds_exit(void *arg)
{
    (void)arg;
    emu_sched_lock();
    for (int i = 0; i < EMU_PTDS_SLOTS; i++)
        ptds_release(&t_ptds[i]);
    emu_sched_unlock();
}

static void ptds_key(void) { pthread_key_create(&g_ptds_key, ptds_exit); }

static struct CUstream_st *ptds_stream(struct CUctx_st *c)
{
    ptds_ent *slot = NULL;
    for (int i = 0; i < EMU_PTDS_SLOTS; i++) {
        ptds_ent *e = &t_ptds[i];
        if (e->s && e->ctx == c && e->gen == c->gen)
            return e->s;
        if (e->s && e->gen != e->ctx->gen)
            ptds_release(e); /* its context was torn down since */
        if (!e->s && !slot)
            slot = e;
    }
    if (!slot) {
        slot = &t_ptds[0];
        ptds_release(slot);
    }
    pthread_once(&g_ptds_once, ptds_key);
    struct CUstream_st *s = stream_new_locked(c, EMU_S_PTDS, 0, 0);
    if (!s)
        return NULL;
    *slot = (ptds_ent){c, c->gen, s};
    pthread_setspecific(g_ptds_key, t_ptds);
    return s;
}

CUresult emu_stream_get_locked(CUstream h, int ptsz, struct CUstream_st **out)
{
    struct CUctx_st *c;
    CUresult rc;
    if (h == NULL)
        h = ptsz ? CU_STREAM_PER_THREAD : CU_STREAM_LEGACY;
    if (h == CU_STREAM_LEGACY || h == CU_STREAM_PER_THREAD) {
        if ((rc = emu_current(&c)) != CUDA_SUCCESS)
            return rc;
        emu_sched_lock();
        struct CUstream_st *s = h == CU_STREAM_LEGACY ? c->legacy : ptds_stream(c);
        if (s)
            emu_stream_ref(s);
        emu_sched_unlock();
        if (!s)
            return CUDA_ERROR_OUT_OF_MEMORY;
        *out = s;
        return CUDA_SUCCESS;
    }
    struct CUstream_st *s = (struct CUstream_st *)emu_obj_find(h, EMU_K_STREAM);
    if (!s)
        return CUDA_ERROR_INVALID_HANDLE;
    if (!emu_ctx_valid(s->ctx))
        return CUDA_ERROR_INVALID_CONTEXT;
    if ((rc = emu_sticky(s->ctx)) != CUDA_SUCCESS)
        return rc;
    emu_sched_lock();
    emu_stream_ref(s);
    emu_sched_unlock();
    *out = s;
    return CUDA_SUCCESS;
}

CUresult emu_stream_get(CUstream h, int ptsz, struct CUstream_st **out)
{
    CUresult rc = emu_enter();
    if (rc != CUDA_SUCCESS)
        return rc;
    emu_rdlock();
    rc = emu_stream_get_locked(h, ptsz, out);
    emu_unlock();
    return rc;
}

void emu_stream_put(struct CUstream_st *s)
{
    emu_sched_lock();
    emu_stream_unref(s);
    emu_sched_unlock();
}

int emu_ctx_attach_legacy(struct CUctx_st *ctx)
{
    if (!ctx->legacy)
        ctx->legacy = emu_stream_new(ctx, EMU_S_LEGACY, 0, 0);
    return ctx->legacy ? 0 : -1;
}

/* ---- the worker --------------------------------------------------------------------------- */

static void activate(emu_devq *dq, struct CUstream_st *s)
{
    if (s->on_active)
        return;
    s->on_active = 1;
    s->act_prev = NULL;
    s->act_next = dq->active;
    if (dq->active)
        dq->active->act_prev = s;
    dq->active = s;
}

static void deactivate(emu_devq *dq, struct CUstream_st *s)
{
    if (!s->on_active)
        return;
    s->on_active = 0;
    if (s->act_prev)
        s->act_prev->act_next = s->act_next;
    else
        dq->active = s->act_next;
    if (s->act_next)
        s->act_next->act_prev = s->act_prev;
}

static int blocking(const struct CUstream_st *s)
{
    return s->kind != EMU_S_LEGACY && !(s->flags & CU_STREAM_NON_BLOCKING);
}

/* Each context's oldest pending legacy item and oldest pending blocking-stream item. */
static void scan_heads(emu_devq *dq)
{
    uint64_t scan = ++g_sched.scan;
    for (struct CUstream_st *s = dq->active; s; s = s->act_next) {
        struct CUctx_st *c = s->ctx;
        if (c->scan != scan) {
            c->scan = scan;
            c->min_blocking = c->legacy_head = UINT64_MAX;
        }
        uint64_t seq = s->ring[s->head].seq;
        if (s->kind == EMU_S_LEGACY)
            c->legacy_head = seq;
        else if (blocking(s) && seq < c->min_blocking)
            c->min_blocking = seq;
    }
}

/* After scan_heads: whether s's head may run now. */
static int head_ready(const struct CUstream_st *s)
{
    const emu_item *it = &s->ring[s->head];
    const struct CUctx_st *c = s->ctx;
    if (s->busy)
        return 0;
    if (s->kind == EMU_S_LEGACY && c->min_blocking < it->seq)
        return 0;
    if (blocking(s) && c->legacy_head < it->seq)
        return 0;
    if (it->kind == EMU_I_WAIT && it->u.wait.s->done < it->u.wait.target)
        return 0;
    return 1;
}

static struct CUstream_st *pick(emu_devq *dq)
{
    scan_heads(dq);
    struct CUstream_st *best = NULL;
    for (struct CUstream_st *s = dq->active; s; s = s->act_next)
        if (head_ready(s) && (!best || s->ring[s->head].seq < best->ring[best->head].seq))
            best = s;
    return best;
}

static int is_fault(CUresult rc)
{
    return rc == CUDA_ERROR_ILLEGAL_ADDRESS || rc == CUDA_ERROR_LAUNCH_FAILED ||
           rc == CUDA_ERROR_MISALIGNED_ADDRESS;
}

/* Work elsewhere may have waited for a completion (an event, the legacy stream's order). */
static void wake_workers(void)
{
    for (unsigned d = 0; d < EMU_MAX_DEVICES; d++) {
        emu_devq *o = &g_sched.dq[d];
        if (o->sleeping && o->active)
            pthread_cond_signal(&o->cv);
    }
}

/* The head of s ran (or was dropped) with rc: pop it, wake who waits. Lock held. */
static void finish(struct CUstream_st *s, emu_item *it, CUresult rc)
{
    emu_devq *dq = &g_sched.dq[s->phys];
    if (is_fault(rc))
        set_sticky(s->ctx, rc);
    emu_item_release(it, s->vt);
    s->head = (s->head + 1) % s->cap;
    s->count--;
    s->done++;
    s->busy = 0;
    if (s->count == 0)
        deactivate(dq, s);
    if (s->done >= s->wake_at || (s->room_waiters && s->count <= EMU_QUEUE_MAX * 3 / 4)) {
        s->wake_at = UINT64_MAX;
        pthread_cond_broadcast(&g_sched.done_cv);
    }
    wake_workers();
}

/* Host functions and stream callbacks run on a thread of their own, as the driver runs them:
 * one that blocks holds its stream, never the device's other streams (a callback may wait
 * for work another stream has to finish). */
typedef struct host_job {
    struct host_job *next;
    struct CUstream_st *s;
    emu_item it;
} host_job;

static struct {
    host_job *head, *tail;
    pthread_cond_t cv;
    int started, sleeping;
} g_host = {.cv = PTHREAD_COND_INITIALIZER};

static void *host_main(void *arg)
{
    (void)arg;
    emu_sched_lock();
    for (;;) {
        host_job *j = g_host.head;
        if (!j) {
            g_host.sleeping = 1;
            pthread_cond_wait(&g_host.cv, &g_sched.mu);
            g_host.sleeping = 0;
            continue;
        }
        g_host.head = j->next;
        if (!g_host.head)
            g_host.tail = NULL;
        emu_sched_unlock();
        CUresult rc = emu_sticky(j->s->ctx);
        if (rc == CUDA_SUCCESS)
            rc = emu_exec_item(j->s, &j->it, NULL);
        else
            emu_item_discard(&j->it, rc);
        emu_sched_lock();
        finish(j->s, &j->it, rc);
        emu_stream_unref(j->s);
        free(j);
    }
    return NULL;
}

static int start_thread(void *(*fn)(void *), void *arg)
{
    pthread_attr_t a;
    pthread_t th;
    sigset_t all, old;
    sigfillset(&all);
    if (pthread_attr_init(&a) != 0)
        return -1;
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    /* The application's signals go to its own threads, never to ours. */
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&th, &a, fn, arg);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&a);
    return rc == 0 ? 0 : -1;
}

/* Hands s's head (a host function) to the host thread. Lock held; 0, or -1 (out of memory:
 * the caller runs it itself). */
static int to_host_thread(struct CUstream_st *s, const emu_item *it)
{
    host_job *j = malloc(sizeof *j);
    if (!j)
        return -1;
    if (!g_host.started) {
        if (start_thread(host_main, NULL) != 0) {
            free(j);
            return -1;
        }
        g_host.started = 1;
    }
    *j = (host_job){NULL, s, *it};
    if (g_host.tail)
        g_host.tail->next = j;
    else
        g_host.head = j;
    g_host.tail = j;
    if (g_host.sleeping)
        pthread_cond_signal(&g_host.cv);
    return 0;
}

static void *worker_main(void *arg)
{
    emu_devq *dq = arg;
    unsigned phys = (unsigned)(dq - g_sched.dq);
    /* A launch wakes this thread; as a batch thread it does not preempt the launcher (which
     * would make every launch into an idle queue cost two context switches). */
    struct sched_param none = {0};
    pthread_setschedparam(pthread_self(), SCHED_BATCH, &none);
    /* Kernels end on time (exec.c sleeps until their end): no 50 us of default slack each. */
    prctl(PR_SET_TIMERSLACK, 1ul, 0, 0, 0);
    emu_sched_lock();
    for (;;) {
        struct CUstream_st *s = pick(dq);
        if (!s) {
            if (dq->holds) {
                /* Nothing runnable: an idle device must not stay held. */
                emu_sched_unlock();
                emu_shared_exec_release(&g_emu.sh, phys);
                dq->holds = 0;
                emu_sched_lock();
                continue;
            }
            dq->sleeping = 1;
            pthread_cond_wait(&dq->cv, &g_sched.mu);
            dq->sleeping = 0;
            continue;
        }
        emu_item it = s->ring[s->head];
        s->busy = 1;
        emu_stream_ref(s);
        if ((it.kind == EMU_I_HOST || it.kind == EMU_I_CALLBACK) && to_host_thread(s, &it) == 0)
            continue; /* the host thread finishes it */
        emu_sched_unlock();
        if (dq->holds && emu_item_runs_on_host(&it)) {
            emu_shared_exec_release(&g_emu.sh, phys);
            dq->holds = 0;
        }
        CUresult rc = emu_sticky(s->ctx);
        if (rc == CUDA_SUCCESS)
            rc = emu_exec_item(s, &it, &dq->holds);
        else
            emu_item_discard(&it, rc);
        emu_sched_lock();
        finish(s, &it, rc);
        emu_stream_unref(s);
    }
    return NULL;
}

static int start_worker(emu_devq *dq)
{
    if (dq->started)
        return 0;
    pthread_cond_init(&dq->cv, NULL);
    if (start_thread(worker_main, dq) != 0)
        return -1;
    dq->started = 1;
    return 0;
}

/* ---- submitting and waiting ----------------------------------------------------------------- */

typedef struct {
    struct CUstream_st *s;
    uint64_t target;
} fence;

/* Lock held: waits until every fence is reached. */
static void wait_fences(const fence *f, size_t n)
{
    for (;;) {
        int pending = 0;
        for (size_t i = 0; i < n; i++) {
            if (f[i].s->done >= f[i].target)
                continue;
            pending = 1;
            if (f[i].target < f[i].s->wake_at)
                f[i].s->wake_at = f[i].target;
        }
        if (!pending)
            return;
        pthread_cond_wait(&g_sched.done_cv, &g_sched.mu);
    }
}

static int ring_push(struct CUstream_st *s, const emu_item *it)
{
    if (s->count == s->cap) {
        unsigned cap = s->cap ? s->cap * 2 : 8;
        emu_item *r = malloc(cap * sizeof *r);
        if (!r)
            return -1;
        for (unsigned i = 0; i < s->count; i++)
            r[i] = s->ring[(s->head + i) % s->cap];
        free(s->ring);
        s->ring = r;
        s->cap = cap;
        s->head = 0;
    }
    s->ring[(s->head + s->count) % s->cap] = *it;
    s->count++;
    s->enq++;
    return 0;
}

static int runs_inline(const emu_item *it)
{
    return it->kind == EMU_I_COPY || it->kind == EMU_I_SET || it->kind == EMU_I_RECORD ||
           it->kind == EMU_I_WAIT || it->kind == EMU_I_MARKER;
}

CUresult emu_submit(struct CUstream_st *s, emu_item *it, int sync)
{
    emu_devq *dq = &g_sched.dq[s->phys];
    CUresult rc;
    emu_sched_lock();
    if ((rc = emu_sticky(s->ctx)) != CUDA_SUCCESS)
        goto out;
    if (s->capture) {
        if (sync) {
            emu_capture_invalidate(s); /* as a real driver does */
            rc = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
        } else {
            rc = emu_capture_add(s, it);
        }
        goto out;
    }
    if (it->kind == EMU_I_WAIT) {
        struct CUevent_st *e = it->u.wait.ev;
        if (e->captured) {
            rc = CUDA_ERROR_CAPTURED_EVENT;
            goto out;
        }
        if (!e->s || e->s->done >= e->target)
            goto out; /* nothing to wait for */
        it->u.wait.s = e->s;
        it->u.wait.target = e->target;
    }
    if (start_worker(dq) != 0) {
        rc = CUDA_ERROR_OUT_OF_MEMORY;
        goto out;
    }
    while (s->count >= EMU_QUEUE_MAX) {
        s->room_waiters++;
        pthread_cond_wait(&g_sched.done_cv, &g_sched.mu);
        s->room_waiters--;
    }
    it->seq = ++g_sched.seq;
    it->t_submit = emu_now_ns();
    if (ring_push(s, it) != 0) {
        rc = CUDA_ERROR_OUT_OF_MEMORY;
        goto out;
    }
    /* References the queued item holds until it ran. */
    if (it->kind == EMU_I_RECORD) {
        struct CUevent_st *e = it->u.rec.ev;
        e->refs++;
        s->ring[(s->head + s->count - 1) % s->cap].u.rec.gen = ++e->gen;
        if (e->s)
            emu_stream_unref(e->s);
        e->s = s;
        emu_stream_ref(s);
        e->target = s->enq;
        e->captured = 0;
    } else if (it->kind == EMU_I_WAIT) {
        emu_stream_ref(it->u.wait.s);
    }
    activate(dq, s);
    uint64_t mine = s->enq;
    if (runs_inline(it) && s->count == 1) {
        scan_heads(dq);
        if (head_ready(s)) {
            /* Ready at once and no kernel: the caller runs it, no worker round trip. */
            emu_item run = s->ring[s->head];
            s->busy = 1;
            emu_stream_ref(s);
            emu_sched_unlock();
            rc = emu_exec_item(s, &run, NULL);
            emu_sched_lock();
            finish(s, &run, rc);
            emu_stream_unref(s);
            if (!is_fault(rc))
                rc = CUDA_SUCCESS;
            goto out;
        }
    }
    int wake = dq->sleeping;
    dq->sleeping = 0; /* one wake-up is enough */
    if (sync) {
        if (wake)
            pthread_cond_signal(&dq->cv);
        fence f = {s, mine};
        wait_fences(&f, 1);
        rc = emu_sticky(s->ctx);
    } else if (wake) {
        /* Signalled after unlocking, so the worker does not wake into a held lock. */
        emu_sched_unlock();
        pthread_cond_signal(&dq->cv);
        return rc;
    }
out:
    emu_sched_unlock();
    return rc;
}

CUresult emu_stream_sync(struct CUstream_st *s)
{
    if (s->kind == EMU_S_LEGACY) {
        /* Ordered after the blocking streams' earlier work too, as the legacy stream is. */
        emu_item m = {.kind = EMU_I_MARKER};
        return emu_submit(s, &m, 1);
    }
    emu_sched_lock();
    CUresult rc = CUDA_SUCCESS;
    if (s->capture) {
        emu_capture_invalidate(s);
        rc = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    } else {
        fence f = {s, s->enq};
        wait_fences(&f, 1);
        rc = emu_sticky(s->ctx);
    }
    emu_sched_unlock();
    return rc;
}

CUresult emu_stream_query(struct CUstream_st *s)
{
    emu_sched_lock();
    CUresult rc = emu_sticky(s->ctx);
    if (rc == CUDA_SUCCESS && s->capture) {
        emu_capture_invalidate(s);
        rc = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    } else if (rc == CUDA_SUCCESS && s->done < s->enq) {
        rc = CUDA_ERROR_NOT_READY;
    }
    emu_sched_unlock();
    return rc;
}

/* Waits for every stream of phys (of ctx only, unless ctx is NULL). Lock held. */
static int sync_streams(unsigned phys, const struct CUctx_st *ctx)
{
    size_t n = 0;
    for (struct CUstream_st *s = g_sched.dq[phys].all; s; s = s->dev_next)
        n += (!ctx || s->ctx == ctx) && s->done < s->enq;
    if (n == 0)
        return 0;
    fence *f = malloc(n * sizeof *f);
    if (!f)
        return -1;
    size_t i = 0;
    for (struct CUstream_st *s = g_sched.dq[phys].all; s; s = s->dev_next) {
        if ((!ctx || s->ctx == ctx) && s->done < s->enq) {
            f[i++] = (fence){s, s->enq};
            emu_stream_ref(s);
        }
    }
    wait_fences(f, n);
    for (i = 0; i < n; i++)
        emu_stream_unref(f[i].s);
    free(f);
    return 0;
}

CUresult emu_ctx_sync(struct CUctx_st *ctx)
{
    emu_sched_lock();
    CUresult rc = sync_streams(ctx->phys, ctx) == 0 ? emu_sticky(ctx) : CUDA_ERROR_OUT_OF_MEMORY;
    emu_sched_unlock();
    return rc;
}

CUresult emu_device_sync(unsigned phys)
{
    emu_sched_lock();
    CUresult rc = sync_streams(phys, NULL) == 0 ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
    emu_sched_unlock();
    return rc;
}

int emu_event_complete(const struct CUevent_st *e)
{
    return !e->s || e->s->done >= e->target;
}

CUresult emu_event_sync(struct CUevent_st *e, struct CUctx_st *ctx)
{
    emu_sched_lock();
    CUresult rc = CUDA_SUCCESS;
    if (e->captured) {
        rc = CUDA_ERROR_CAPTURED_EVENT;
    } else if (e->s) {
        fence f = {e->s, e->target};
        emu_stream_ref(f.s);
        wait_fences(&f, 1);
        rc = emu_sticky(f.s->ctx);
        emu_stream_unref(f.s);
    }
    if (rc == CUDA_SUCCESS && ctx)
        rc = emu_sticky(ctx);
    emu_sched_unlock();
    return rc;
}

void emu_event_unref(struct CUevent_st *e)
{
    if (--e->refs > 0)
        return;
    if (e->s)
        emu_stream_unref(e->s);
    free(e);
}

void emu_ctx_drop_work(struct CUctx_st *ctx)
{
    emu_sched_lock();
    emu_devq *dq = &g_sched.dq[ctx->phys];
    for (struct CUstream_st *s = dq->all; s; s = s->dev_next) {
        if (s->ctx != ctx)
            continue;
        if (s->capture)
            emu_capture_abandon(s);
        unsigned keep = s->busy ? 1u : 0u; /* the running item finishes on its own */
        while (s->count > keep) {
            unsigned last = (s->head + s->count - 1) % s->cap;
            emu_item_release(&s->ring[last], emu_now_ns());
            s->count--;
            s->done++;
        }
        if (s->count == 0)
            deactivate(dq, s);
    }
    pthread_cond_broadcast(&g_sched.done_cv);
    wake_workers();
    emu_sched_unlock();
}

void emu_sched_after_fork(void)
{
    /* The child's only thread: nothing runs the parent's queues here. Queued items are
     * forgotten (their references with them); the structures stay valid for teardown. */
    pthread_mutex_init(&g_sched.mu, NULL);
    pthread_cond_init(&g_sched.done_cv, NULL);
    pthread_cond_init(&g_host.cv, NULL);
    g_host.started = g_host.sleeping = 0;
    g_host.head = g_host.tail = NULL; /* (the jobs are forgotten, like the queues) */
    for (unsigned d = 0; d < EMU_MAX_DEVICES; d++) {
        emu_devq *dq = &g_sched.dq[d];
        dq->started = dq->sleeping = dq->holds = 0;
        dq->active = NULL;
        for (struct CUstream_st *s = dq->all; s; s = s->dev_next) {
            s->count = s->head = 0;
            s->busy = 0;
            s->done = s->enq;
            s->on_active = 0;
            s->wake_at = UINT64_MAX;
            s->room_waiters = 0;
        }
    }
}

int emu_sched_remap(const uint8_t map[EMU_MAX_DEVICES])
{
    /* The process is locked and drained: no stream has pending items; a worker may still be
     * letting go of its device after its last item, which it does at once. */
    emu_sched_lock();
    for (unsigned d = 0; d < EMU_MAX_DEVICES; d++) {
        if (map[d] == 0xff || map[d] == d)
            continue;
        if (g_sched.dq[d].active) {
            emu_sched_unlock();
            return -1;
        }
        while (g_sched.dq[d].holds) {
            emu_sched_unlock();
            sched_yield();
            emu_sched_lock();
        }
    }
    struct CUstream_st *moved = NULL;
    for (unsigned d = 0; d < EMU_MAX_DEVICES; d++) {
        if (map[d] == 0xff || map[d] == d)
            continue;
        struct CUstream_st *s = g_sched.dq[d].all, *next;
        for (; s; s = next) {
            next = s->dev_next;
            s->phys = map[d];
            s->dev_next = moved;
            moved = s;
        }
        g_sched.dq[d].all = NULL;
    }
    for (struct CUstream_st *s = moved, *next; s; s = next) {
        next = s->dev_next;
        emu_devq *dq = &g_sched.dq[s->phys];
        s->dev_prev = NULL;
        s->dev_next = dq->all;
        if (dq->all)
            dq->all->dev_prev = s;
        dq->all = s;
    }
    emu_sched_unlock();
    return 0;
}

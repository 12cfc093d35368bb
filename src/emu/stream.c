/* stream.c — the stream and event entry points over the scheduler (workq.h): creation and
 * destruction, synchronisation and queries, event records and waits, host functions. The
 * _ptsz forms differ only in what a NULL stream means (the calling thread's per-thread stream
 * instead of the legacy one). */
#include "workq.h"

#include <stdlib.h>

/* Stream priorities run from 0 (lowest) to -5 (highest), as on recent GPUs. */
#define EMU_PRIO_LEAST    0
#define EMU_PRIO_GREATEST (-5)

CUresult cuStreamCreateWithPriority(CUstream *phStream, unsigned int flags, int priority)
{
    struct CUctx_st *ctx;
    CUresult rc = emu_enter_current(&ctx);
    if (rc != CUDA_SUCCESS)
        return rc;
    if (!phStream || (flags & ~(unsigned)CU_STREAM_NON_BLOCKING))
        return CUDA_ERROR_INVALID_VALUE;
    int prio = priority > EMU_PRIO_LEAST      ? EMU_PRIO_LEAST
               : priority < EMU_PRIO_GREATEST ? EMU_PRIO_GREATEST
                                              : priority;
    struct CUstream_st *s = emu_stream_new(ctx, EMU_S_USER, flags, prio);
    if (!s)
        return CUDA_ERROR_OUT_OF_MEMORY;
    emu_wrlock();
    emu_obj_add(&s->hdr, EMU_K_STREAM, ctx);
    emu_unlock();
    *phStream = s;
    return CUDA_SUCCESS;
}

CUresult cuStreamCreate(CUstream *phStream, unsigned int Flags)
{
    return cuStreamCreateWithPriority(phStream, Flags, EMU_PRIO_LEAST);
}

CUresult cuCtxGetStreamPriorityRange(int *leastPriority, int *greatestPriority)
{
    struct CUctx_st *ctx;
    CUresult rc = emu_enter_current(&ctx);
    if (rc != CUDA_SUCCESS)
        return rc;
    if (leastPriority)
        *leastPriority = EMU_PRIO_LEAST;
    if (greatestPriority)
        *greatestPriority = EMU_PRIO_GREATEST;
    return CUDA_SUCCESS;
}

void emu_stream_destroy_obj(emu_obj *o)
{
    emu_obj_del(o);
    emu_stream_drop((struct CUstream_st *)o);
}

CUresult cuStreamDestroy_v2(CUstream hStream)
{
    CUresult rc = emu_enter();
    if (rc != CUDA_SUCCESS)
        return rc;
    emu_rdlock();
    struct CUstream_st *s = (struct CUstream_st *)emu_obj_find(hStream, EMU_K_STREAM);
    if (s) {
        emu_sched_lock();
        emu_stream_ref(s);
        emu_sched_unlock();
    }
    emu_unlock();
    if (!s)
        return CUDA_ERROR_INVALID_HANDLE;
    /* Like the driver, its pending work completes first (an error in it is the context's). */
    emu_stream_sync(s);
    emu_wrlock();
    if (emu_obj_find(s, EMU_K_STREAM))
        emu_stream_destroy_obj(&s->hdr);
    else
        rc = CUDA_ERROR_INVALID_HANDLE; /* another thread destroyed it meanwhile */
    emu_unlock();
    emu_stream_put(s);
    return rc;
}

static CUresult stream_sync(CUstream h, int ptsz)
{
    struct CUstream_st *s;
    CUresult rc = emu_stream_get(h, ptsz, &s);
    if (rc != CUDA_SUCCESS)
        return rc;
    rc = emu_stream_sync(s);
    emu_stream_put(s);
    return rc;
}

static CUresult stream_query(CUstream h, int ptsz)
{
    struct CUstream_st *s;
    CUresult rc = emu_stream_get(h, ptsz, &s);
    if (rc != CUDA_SUCCESS)
        return rc;
    rc = emu_stream_query(s);
    emu_stream_put(s);
    return rc;
}

CUresult cuStreamSynchronize(CUstream hStream) { return stream_sync(hStream, 0); }
CUresult cuStreamSynchronize_ptsz(CUstream hStream) { return stream_sync(hStream, 1); }
CUresult cuStreamQuery(CUstream hStream) { return stream_query(hStream, 0); }
CUresult cuStreamQuery_ptsz(CUstream hStream) { return stream_query(hStream, 1); }

/* Submits it to the stream h names; the event (if any) is looked up and held meanwhile. */
static CUresult submit_with_event(CUstream h, int ptsz, CUevent ev, emu_item *it)
{
    struct CUstream_st *s;
    CUresult rc = emu_enter();
    if (rc != CUDA_SUCCESS)
        return rc;
    emu_rdlock();
    rc = emu_stream_get_locked(h, ptsz, &s);
    if (rc != CUDA_SUCCESS) {
        emu_unlock();
        return rc;
    }
    struct CUevent_st *e = (struct CUevent_st *)emu_obj_find(ev, EMU_K_EVENT);
    if (!e || (it->kind == EMU_I_RECORD && e->hdr.ctx != s->ctx)) {
        emu_unlock();
        emu_stream_put(s);
        return CUDA_ERROR_INVALID_HANDLE;
    }
    emu_sched_lock();
    e->refs++;
    emu_sched_unlock();
    emu_unlock();
    if (it->kind == EMU_I_RECORD)
        it->u.rec.ev = e;
    else
        it->u.wait.ev = e;
    rc = emu_submit(s, it, 0);
    emu_sched_lock();
    emu_event_unref(e);
    emu_stream_unref(s);
    emu_sched_unlock();
    return rc;
}

static CUresult record(CUevent e, CUstream h, unsigned flags, int ptsz)
{
    if (flags & ~(unsigned)CU_EVENT_RECORD_EXTERNAL) {
        CUresult rc = emu_enter();
        return rc != CUDA_SUCCESS ? rc : CUDA_ERROR_INVALID_VALUE;
    }
    emu_item it = {.kind = EMU_I_RECORD};
    return submit_with_event(h, ptsz, e, &it);
}

CUresult cuEventRecord(CUevent hEvent, CUstream hStream) { return record(hEvent, hStream, 0, 0); }
CUresult cuEventRecord_ptsz(CUevent hEvent, CUstream hStream)
{
    return record(hEvent, hStream, 0, 1);
}
CUresult cuEventRecordWithFlags(CUevent hEvent, CUstream hStream, unsigned int flags)
{
    return record(hEvent, hStream, flags, 0);
}
CUresult cuEventRecordWithFlags_ptsz(CUevent hEvent, CUstream hStream, unsigned int flags)
{
    return record(hEvent, hStream, flags, 1);
}

static CUresult wait_event(CUstream h, CUevent e, unsigned flags, int ptsz)
{
    if (flags & ~(unsigned)CU_EVENT_WAIT_EXTERNAL) {
        CUresult rc = emu_enter();
        return rc != CUDA_SUCCESS ? rc : CUDA_ERROR_INVALID_VALUE;
    }
    emu_item it = {.kind = EMU_I_WAIT};
    return submit_with_event(h, ptsz, e, &it);
}

CUresult cuStreamWaitEvent(CUstream hStream, CUevent hEvent, unsigned int Flags)
{
    return wait_event(hStream, hEvent, Flags, 0);
}

CUresult cuStreamWaitEvent_ptsz(CUstream hStream, CUevent hEvent, unsigned int Flags)
{
    return wait_event(hStream, hEvent, Flags, 1);
}

static CUresult host_item(CUstream h, int ptsz, emu_item *it)
{
    struct CUstream_st *s;
    CUresult rc = emu_stream_get(h, ptsz, &s);
    if (rc != CUDA_SUCCESS)
        return rc;
    rc = emu_submit(s, it, 0);
    emu_stream_put(s);
    return rc;
}

static CUresult launch_host_func(CUstream h, CUhostFn fn, void *arg, int ptsz)
{
    if (!fn) {
        CUresult rc = emu_enter();
        return rc != CUDA_SUCCESS ? rc : CUDA_ERROR_INVALID_VALUE;
    }
    emu_item it = {.kind = EMU_I_HOST, .u.host = {fn, arg}};
    return host_item(h, ptsz, &it);
}

CUresult cuLaunchHostFunc(CUstream hStream, CUhostFn fn, void *userData)
{
    return launch_host_func(hStream, fn, userData, 0);
}

CUresult cuLaunchHostFunc_ptsz(CUstream hStream, CUhostFn fn, void *userData)
{
    return launch_host_func(hStream, fn, userData, 1);
}

static CUresult add_callback(CUstream h, CUstreamCallback fn, void *arg, unsigned flags,
                             int ptsz)
{
    if (!fn || flags != 0) {
        CUresult rc = emu_enter();
        return rc != CUDA_SUCCESS ? rc : CUDA_ERROR_INVALID_VALUE;
    }
    emu_item it = {.kind = EMU_I_CALLBACK, .u.cb = {fn, arg, h}};
    return host_item(h, ptsz, &it);
}

CUresult cuStreamAddCallback(CUstream hStream, CUstreamCallback callback, void *userData,
                             unsigned int flags)
{
    return add_callback(hStream, callback, userData, flags, 0);
}

CUresult cuStreamAddCallback_ptsz(CUstream hStream, CUstreamCallback callback, void *userData,
                                  unsigned int flags)
{
    return add_callback(hStream, callback, userData, flags, 1);
}

CUresult cuEventCreate(CUevent *phEvent, unsigned int Flags)
{
    struct CUctx_st *ctx;
    CUresult rc = emu_enter_current(&ctx);
    if (rc != CUDA_SUCCESS)
        return rc;
    unsigned known = CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING | CU_EVENT_INTERPROCESS;
    if (!phEvent || (Flags & ~known) ||
        ((Flags & CU_EVENT_INTERPROCESS) && !(Flags & CU_EVENT_DISABLE_TIMING)))
        return CUDA_ERROR_INVALID_VALUE;
    struct CUevent_st *e = calloc(1, sizeof *e);
    if (!e)
        return CUDA_ERROR_OUT_OF_MEMORY;
    e->flags = Flags;
    e->refs = 1;
    emu_wrlock();
    emu_obj_add(&e->hdr, EMU_K_EVENT, ctx);
    emu_unlock();
    *phEvent = e;
    return CUDA_SUCCESS;
}

void emu_event_destroy_obj(emu_obj *o)
{
    emu_obj_del(o);
    emu_sched_lock();
    emu_event_unref((struct CUevent_st *)o); /* records in flight keep it until they ran */
    emu_sched_unlock();
}

CUresult cuEventDestroy_v2(CUevent hEvent)
{
    CUresult rc = emu_enter();
    if (rc != CUDA_SUCCESS)
        return rc;
    emu_wrlock();
    emu_obj *o = emu_obj_find(hEvent, EMU_K_EVENT);
    if (o)
        emu_event_destroy_obj(o);
    emu_unlock();
    return o ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

/* The event h names, with a reference. */
static CUresult event_get(CUevent h, struct CUevent_st **out)
{
    CUresult rc = emu_enter();
    if (rc != CUDA_SUCCESS)
        return rc;
    emu_rdlock();
    struct CUevent_st *e = (struct CUevent_st *)emu_obj_find(h, EMU_K_EVENT);
    if (e) {
        emu_sched_lock();
        e->refs++;
        emu_sched_unlock();
    }
    emu_unlock();
    *out = e;
    return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

static void event_put(struct CUevent_st *e)
{
    emu_sched_lock();
    emu_event_unref(e);
    emu_sched_unlock();
}

CUresult cuEventSynchronize(CUevent hEvent)
{
    struct CUevent_st *e;
    CUresult rc = event_get(hEvent, &e);
    if (rc != CUDA_SUCCESS)
        return rc;
    rc = emu_event_sync(e, e->hdr.ctx);
    event_put(e);
    return rc;
}

CUresult cuEventQuery(CUevent hEvent)
{
    struct CUevent_st *e;
    CUresult rc = event_get(hEvent, &e);
    if (rc != CUDA_SUCCESS)
        return rc;
    emu_sched_lock();
    if (e->captured)
        rc = CUDA_ERROR_CAPTURED_EVENT;
    else if (e->s && (rc = emu_sticky(e->s->ctx)) == CUDA_SUCCESS && !emu_event_complete(e))
        rc = CUDA_ERROR_NOT_READY;
    emu_event_unref(e);
    emu_sched_unlock();
    return rc;
}

CUresult cuEventElapsedTime_v2(float *pMilliseconds, CUevent hStart, CUevent hEnd)
{
    CUresult rc = emu_enter();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (!pMilliseconds)
        return CUDA_ERROR_INVALID_VALUE;
    emu_rdlock();
    struct CUevent_st *a = (struct CUevent_st *)emu_obj_find(hStart, EMU_K_EVENT);
    struct CUevent_st *b = (struct CUevent_st *)emu_obj_find(hEnd, EMU_K_EVENT);
    emu_sched_lock();
    if (!a || !b || !a->s || !b->s || ((a->flags | b->flags) & CU_EVENT_DISABLE_TIMING))
        rc = CUDA_ERROR_INVALID_HANDLE;
    else if (!emu_event_complete(a) || !emu_event_complete(b))
        rc = CUDA_ERROR_NOT_READY;
    else
        *pMilliseconds = (float)((double)((int64_t)(b->ns - a->ns)) / 1e6);
    emu_sched_unlock();
    emu_unlock();
    return rc;
}

/* The pre-12.8 form differs only in resolution guarantees. */
CUresult cuEventElapsedTime(float *pMilliseconds, CUevent hStart, CUevent hEnd)
{
    return cuEventElapsedTime_v2(pMilliseconds, hStart, hEnd);
}

/* stream.c — streams and events. Work runs synchronously at submission, so a stream is
 * always idle and an event completes when recorded (it keeps the time, for elapsed-time). */
#include "driver.h"

#include <stdlib.h>

struct CUstream_st {
    emu_obj hdr;
    unsigned flags;
    int priority;
};

struct CUevent_st {
    emu_obj hdr;
    unsigned flags;
    int recorded;
    uint64_t ns;
};

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
    struct CUstream_st *s = calloc(1, sizeof *s);
    if (!s)
        return CUDA_ERROR_OUT_OF_MEMORY;
    s->flags = flags;
    s->priority = priority > EMU_PRIO_LEAST      ? EMU_PRIO_LEAST
                  : priority < EMU_PRIO_GREATEST ? EMU_PRIO_GREATEST
                                                 : priority;
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

void emu_stream_destroy_obj(emu_obj *o)
{
    emu_obj_del(o);
    free(o);
}

CUresult cuStreamDestroy_v2(CUstream hStream)
{
    CUresult rc = emu_enter();
    if (rc != CUDA_SUCCESS)
        return rc;
    emu_wrlock();
    emu_obj *o = emu_obj_find(hStream, EMU_K_STREAM);
    if (o)
        emu_stream_destroy_obj(o);
    emu_unlock();
    return o ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

static CUresult stream_check(CUstream s)
{
    struct CUctx_st *ctx;
    CUresult rc = emu_enter();
    if (rc != CUDA_SUCCESS)
        return rc;
    emu_rdlock();
    rc = emu_stream_ctx(s, &ctx);
    emu_unlock();
    return rc;
}

CUresult cuStreamSynchronize(CUstream hStream) { return stream_check(hStream); }
CUresult cuStreamQuery(CUstream hStream) { return stream_check(hStream); }

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
    emu_wrlock();
    emu_obj_add(&e->hdr, EMU_K_EVENT, ctx);
    emu_unlock();
    *phEvent = e;
    return CUDA_SUCCESS;
}

void emu_event_destroy_obj(emu_obj *o)
{
    emu_obj_del(o);
    free(o);
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

CUresult cuEventRecord(CUevent hEvent, CUstream hStream)
{
    struct CUctx_st *ctx;
    CUresult rc = emu_enter();
    if (rc != CUDA_SUCCESS)
        return rc;
    emu_wrlock();
    struct CUevent_st *e = (struct CUevent_st *)emu_obj_find(hEvent, EMU_K_EVENT);
    if (!e)
        rc = CUDA_ERROR_INVALID_HANDLE;
    else if ((rc = emu_stream_ctx(hStream, &ctx)) == CUDA_SUCCESS) {
        e->recorded = 1;
        e->ns = emu_now_ns();
    }
    emu_unlock();
    return rc;
}

static CUresult event_check(CUevent hEvent)
{
    CUresult rc = emu_enter();
    if (rc != CUDA_SUCCESS)
        return rc;
    emu_rdlock();
    emu_obj *o = emu_obj_find(hEvent, EMU_K_EVENT);
    emu_unlock();
    return o ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

CUresult cuEventSynchronize(CUevent hEvent) { return event_check(hEvent); }
CUresult cuEventQuery(CUevent hEvent) { return event_check(hEvent); }

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
    if (!a || !b || !a->recorded || !b->recorded ||
        ((a->flags | b->flags) & CU_EVENT_DISABLE_TIMING))
        rc = CUDA_ERROR_INVALID_HANDLE;
    else
        *pMilliseconds = (float)((double)((int64_t)(b->ns - a->ns)) / 1e6);
    emu_unlock();
    return rc;
}

/* The pre-12.8 form differs only in resolution guarantees. */
CUresult cuEventElapsedTime(float *pMilliseconds, CUevent hStart, CUevent hEnd)
{
    return cuEventElapsedTime_v2(pMilliseconds, hStart, hEnd);
}

/* capture.c — stream capture: between cuStreamBeginCapture and cuStreamEndCapture, work
 * submitted to a stream is recorded into a graph (graph.h) instead of being run, each node
 * depending on the one before. Kernels, copies and sets between memory the device can reach,
 * and host functions are captured; work that would have to wait (a synchronous call, a copy
 * from pageable memory, a stream query or synchronisation) is refused with
 * CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED and invalidates the capture, whose end then answers
 * CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, as the driver does. An event recorded during the
 * capture belongs to it; waiting on it inside the capture is a no-op (same stream order), and
 * waiting on an event recorded outside it is CUDA_ERROR_STREAM_CAPTURE_ISOLATION. Captures
 * that join several streams (fork/join through events) and the legacy stream are not
 * supported. */
#include "graph.h"

#include <stdlib.h>

struct emu_capture {
    struct CUgraph_st *g;
    struct CUgraphNode_st *last;  /* what the stream's next node depends on */
    CUstreamCaptureMode mode;
    int invalid;
};

void emu_capture_invalidate(struct CUstream_st *s) { s->capture->invalid = 1; }

void emu_capture_abandon(struct CUstream_st *s)
{
    emu_graph_free(s->capture->g);
    free(s->capture);
    s->capture = NULL;
}

CUresult emu_capture_add(struct CUstream_st *s, const emu_item *it)
{
    struct emu_capture *c = s->capture;
    if (c->invalid)
        return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
    CUgraphNodeType type;
    switch (it->kind) {
    case EMU_I_KERNEL: type = CU_GRAPH_NODE_TYPE_KERNEL; break;
    case EMU_I_COPY: type = CU_GRAPH_NODE_TYPE_MEMCPY; break;
    case EMU_I_SET: type = CU_GRAPH_NODE_TYPE_MEMSET; break;
    case EMU_I_HOST: type = CU_GRAPH_NODE_TYPE_HOST; break;
    case EMU_I_RECORD:
        it->u.rec.ev->captured = 1;
        return CUDA_SUCCESS;
    case EMU_I_WAIT: {
        const struct CUevent_st *e = it->u.wait.ev;
        if (e->captured || !e->s)
            return CUDA_SUCCESS;
        c->invalid = 1;
        return CUDA_ERROR_STREAM_CAPTURE_ISOLATION;
    }
    default: /* stream callbacks, graph launches */
        c->invalid = 1;
        return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    }
    struct CUgraphNode_st *n = emu_graph_add(c->g, type, it, c->last ? &c->last : NULL,
                                             c->last ? 1 : 0);
    if (!n) {
        c->invalid = 1;
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    if (type == CU_GRAPH_NODE_TYPE_KERNEL) {
        n->argv[0] = it->u.k.a0;
        n->argv[1] = it->u.k.a1;
        n->argp[0] = &n->argv[0];
        n->argp[1] = &n->argv[1];
    }
    c->last = n;
    return CUDA_SUCCESS;
}

static CUresult begin(CUstream h, CUstreamCaptureMode mode, int ptsz)
{
    struct CUstream_st *s;
    if ((unsigned)mode > CU_STREAM_CAPTURE_MODE_RELAXED) {
        CUresult rc = emu_enter();
        return rc != CUDA_SUCCESS ? rc : CUDA_ERROR_INVALID_VALUE;
    }
    CUresult rc = emu_stream_get(h, ptsz, &s);
    if (rc != CUDA_SUCCESS)
        return rc;
    struct emu_capture *c = calloc(1, sizeof *c);
    struct CUgraph_st *g = emu_graph_new();
    emu_sched_lock();
    if (s->kind == EMU_S_LEGACY)
        rc = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    else if (s->capture)
        rc = CUDA_ERROR_ILLEGAL_STATE;
    else if (!c || !g)
        rc = CUDA_ERROR_OUT_OF_MEMORY;
    if (rc == CUDA_SUCCESS) {
        c->g = g;
        c->mode = mode;
        s->capture = c;
    }
    emu_stream_unref(s);
    emu_sched_unlock();
    if (rc != CUDA_SUCCESS) {
        free(c);
        if (g)
            emu_graph_free(g);
    }
    return rc;
}

CUresult cuStreamBeginCapture_v2(CUstream hStream, CUstreamCaptureMode mode)
{
    return begin(hStream, mode, 0);
}

CUresult cuStreamBeginCapture_v2_ptsz(CUstream hStream, CUstreamCaptureMode mode)
{
    return begin(hStream, mode, 1);
}

/* The CUDA 10.0 form, before capture modes: global. */
CUresult cuStreamBeginCapture(CUstream hStream)
{
    return begin(hStream, CU_STREAM_CAPTURE_MODE_GLOBAL, 0);
}

CUresult cuStreamBeginCapture_ptsz(CUstream hStream)
{
    return begin(hStream, CU_STREAM_CAPTURE_MODE_GLOBAL, 1);
}

static CUresult end(CUstream h, CUgraph *phGraph, int ptsz)
{
    struct CUstream_st *s;
    CUresult rc = emu_stream_get(h, ptsz, &s);
    if (rc != CUDA_SUCCESS)
        return rc;
    if (!phGraph) {
        emu_stream_put(s);
        return CUDA_ERROR_INVALID_VALUE;
    }
    emu_sched_lock();
    struct emu_capture *c = s->capture;
    s->capture = NULL;
    emu_stream_unref(s);
    emu_sched_unlock();
    if (!c)
        return CUDA_ERROR_ILLEGAL_STATE;
    struct CUgraph_st *g = c->g;
    int invalid = c->invalid;
    free(c);
    *phGraph = NULL;
    if (invalid) {
        emu_graph_free(g);
        return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
    }
    emu_wrlock();
    emu_obj_add(&g->hdr, EMU_K_GRAPH, NULL);
    emu_unlock();
    *phGraph = g;
    return CUDA_SUCCESS;
}

CUresult cuStreamEndCapture(CUstream hStream, CUgraph *phGraph) { return end(hStream, phGraph, 0); }

CUresult cuStreamEndCapture_ptsz(CUstream hStream, CUgraph *phGraph)
{
    return end(hStream, phGraph, 1);
}

static CUresult is_capturing(CUstream h, CUstreamCaptureStatus *status, int ptsz)
{
    struct CUstream_st *s;
    CUresult rc = emu_stream_get(h, ptsz, &s);
    if (rc != CUDA_SUCCESS)
        return rc;
    if (!status) {
        emu_stream_put(s);
        return CUDA_ERROR_INVALID_VALUE;
    }
    emu_sched_lock();
    *status = !s->capture           ? CU_STREAM_CAPTURE_STATUS_NONE
              : s->capture->invalid ? CU_STREAM_CAPTURE_STATUS_INVALIDATED
                                    : CU_STREAM_CAPTURE_STATUS_ACTIVE;
    emu_stream_unref(s);
    emu_sched_unlock();
    return CUDA_SUCCESS;
}

CUresult cuStreamIsCapturing(CUstream hStream, CUstreamCaptureStatus *captureStatus)
{
    return is_capturing(hStream, captureStatus, 0);
}

CUresult cuStreamIsCapturing_ptsz(CUstream hStream, CUstreamCaptureStatus *captureStatus)
{
    return is_capturing(hStream, captureStatus, 1);
}

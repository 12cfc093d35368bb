/* exec.c — what the device does with one queued item: the built-in kernels, copies and sets.
 *
 * Kernels run while the process holds the device (shared.h): the worker takes it with
 * exec_begin and keeps it across back-to-back kernels while its turn lasts or nobody else waits.
 *   complement(CUdeviceptr buf, size_t n)  bitwise NOT of n bytes at buf (the paper's sample)
 *   spin(unsigned long long microseconds)  occupies the device that long, sleeping: a host core
 *                                          stays free, so many busy processes fit on a small host
 * Memory is checked when the item runs, with the allocation table held shared so it cannot be
 * freed underneath: memory freed since the launch is an illegal address (a fault that ends the
 * context, as on a GPU), never a crash. */
#include "copy.h"
#include "image.h"

#include <errno.h>
#include <string.h>
#include <time.h>

static void complement(unsigned char *p, size_t n)
{
    while (n > 0 && ((uintptr_t)p & 7)) {
        *p = (unsigned char)~*p;
        p++;
        n--;
    }
    uint64_t *w = (uint64_t *)(void *)p;
    for (; n >= 8; n -= 8, w++)
        *w = ~*w;
    for (p = (unsigned char *)w; n > 0; n--, p++)
        *p = (unsigned char)~*p;
}

/* The spin kernel's length in ns (microseconds given; absurd lengths are cut to ~146 years). */
static uint64_t spin_length(const emu_kcall *k)
{
    return k->a0 > (1ull << 62) / 1000 ? 1ull << 62 : k->a0 * 1000;
}

/* Sleeps until `t` on CLOCK_MONOTONIC (the clock of emu_now_ns). */
static void sleep_until(uint64_t t)
{
    struct timespec ts = {(time_t)(t / 1000000000u), (long)(t % 1000000000u)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
    }
}

/* A kernel of known length takes its place on the device's timeline (shared.h): when this
 * thread got the device late, the kernel still started where the device's last one ended, and
 * the sleep until its end is shorter. It runs in pieces, one per turn: when its process's
 * timeslice ends while another process waits, the rest waits for the next turn (a GPU preempts
 * a context at the end of its timeslice). */
static CUresult run_kernel(struct CUstream_st *s, const emu_kcall *k, int *holds)
{
    uint64_t left = k->kernel == EMU_KERNEL_COMPLEMENT ? 0 : spin_length(k), start, piece, end;
    CUresult rc = CUDA_SUCCESS;
    do {
        if (emu_shared_exec_begin(&g_emu.sh, s->phys, s->vt, left, &start, &piece) != 0)
            return CUDA_ERROR_LAUNCH_FAILED; /* the state file's lock is unusable */
        *holds = 1;
        if (k->kernel == EMU_KERNEL_COMPLEMENT) {
            emu_rdlock();
            if (emu_range((uintptr_t)k->a0, (size_t)k->a1, 1) != CUDA_SUCCESS)
                rc = CUDA_ERROR_ILLEGAL_ADDRESS;
            else
                complement((unsigned char *)(uintptr_t)k->a0, (size_t)k->a1);
            emu_unlock();
        } else if (piece) {
            sleep_until(start + piece);
        }
        *holds = emu_shared_exec_end(&g_emu.sh, s->phys, 1, &end);
        s->vt = end;
        left -= piece;
    } while (left > 0);
    return rc;
}

static CUresult run_copy(const emu_copy *c)
{
    size_t dn = emu_copy_span(c->width, c->height, c->depth, c->dpitch, c->dheight);
    size_t sn = emu_copy_span(c->width, c->height, c->depth, c->spitch, c->sheight);
    CUresult rc = CUDA_SUCCESS;
    emu_rdlock();
    if ((c->dst_mapped && emu_range(c->dst, dn, 1) != CUDA_SUCCESS) ||
        (c->src_mapped && emu_range(c->src, sn, 0) != CUDA_SUCCESS)) {
        rc = CUDA_ERROR_ILLEGAL_ADDRESS;
    } else {
        for (size_t z = 0; z < c->depth; z++)
            for (size_t y = 0; y < c->height; y++)
                memmove((char *)(c->dst + (z * c->dheight + y) * c->dpitch),
                        (const char *)(c->src + (z * c->sheight + y) * c->spitch), c->width);
    }
    emu_unlock();
    return rc;
}

static CUresult run_set(const emu_set *s)
{
    CUresult rc = CUDA_SUCCESS;
    emu_rdlock();
    if (emu_range(s->dst, emu_copy_span(s->width * s->esize, s->height, 1, s->pitch, 1), 1) !=
        CUDA_SUCCESS) {
        rc = CUDA_ERROR_ILLEGAL_ADDRESS;
    } else {
        for (size_t y = 0; y < s->height; y++) {
            char *row = (char *)(s->dst + y * s->pitch);
            if (s->esize == 1) {
                memset(row, (int)(s->value & 0xff), s->width);
            } else if (s->esize == 2) {
                uint16_t v = (uint16_t)s->value, *p = (uint16_t *)(void *)row;
                for (size_t i = 0; i < s->width; i++)
                    p[i] = v;
            } else {
                uint32_t *p = (uint32_t *)(void *)row;
                for (size_t i = 0; i < s->width; i++)
                    p[i] = s->value;
            }
        }
    }
    emu_unlock();
    return rc;
}

int emu_item_runs_on_host(const emu_item *it)
{
    return it->kind == EMU_I_COPY || it->kind == EMU_I_SET || it->kind == EMU_I_HOST ||
           it->kind == EMU_I_CALLBACK;
}

CUresult emu_exec_item(struct CUstream_st *s, emu_item *it, int *holds)
{
    if (it->t_submit > s->vt)
        s->vt = it->t_submit; /* nothing runs before it was submitted */
    CUresult rc = CUDA_SUCCESS;
    switch (it->kind) {
    case EMU_I_KERNEL:
        return holds ? run_kernel(s, &it->u.k, holds) : CUDA_ERROR_LAUNCH_FAILED;
    case EMU_I_GRAPH:
        return holds ? emu_gexec_run(s, it->u.graph.g, holds) : CUDA_ERROR_LAUNCH_FAILED;
    case EMU_I_COPY:
        /* A pageable host side is the caller's, who waits for the copy. */
        rc = run_copy(&it->u.c);
        break;
    case EMU_I_SET:
        rc = run_set(&it->u.s);
        break;
    case EMU_I_HOST:
        it->u.host.fn(it->u.host.arg);
        break;
    case EMU_I_CALLBACK:
        it->u.cb.fn(it->u.cb.handle, CUDA_SUCCESS, it->u.cb.arg);
        break;
    default:
        return CUDA_SUCCESS; /* records, waits and markers only order the stream */
    }
    s->vt = emu_now_ns(); /* work the host did: it ended now */
    return rc;
}

void emu_item_discard(emu_item *it, CUresult why)
{
    /* A stream callback hears about the error that ended its context; a host function of a
     * failed context is not called (as a real driver does). */
    if (it->kind == EMU_I_CALLBACK)
        it->u.cb.fn(it->u.cb.handle, why, it->u.cb.arg);
}

void emu_item_release(emu_item *it, uint64_t when)
{
    switch (it->kind) {
    case EMU_I_RECORD: {
        struct CUevent_st *e = it->u.rec.ev;
        if (it->u.rec.gen == e->gen)
            e->ns = when;
        emu_event_unref(e);
        break;
    }
    case EMU_I_WAIT:
        emu_stream_unref(it->u.wait.s);
        break;
    case EMU_I_GRAPH:
        emu_gexec_unref(it->u.graph.g);
        break;
    default:
        break;
    }
}

/* samples.c — what NVML reads of a device's time: one sample per (process, completed period),
 * summed from the ring of finished periods, the slots' accumulators and the kernels running now
 * (shared.h). A period is reported only once it has ended, and every source of busy time in it
 * is already visible then, so a sample never changes after it is first seen: a reader that asks
 * only for samples newer than the last one it saw misses nothing and counts nothing twice. */
#include "shared.h"

#include <stdlib.h>
#include <string.h>

static int same_who(const emu_ident *a, const emu_ident *b)
{
    return a->pid == b->pid && a->pidns == b->pidns && a->start_time == b->start_time;
}

static int by_period_then_who(const void *pa, const void *pb)
{
    const emu_sample *a = pa, *b = pb;
    if (a->period != b->period)
        return a->period < b->period ? -1 : 1;
    if (a->who.pidns != b->who.pidns)
        return a->who.pidns < b->who.pidns ? -1 : 1;
    if (a->who.pid != b->who.pid)
        return a->who.pid < b->who.pid ? -1 : 1;
    if (a->who.start_time != b->who.start_time)
        return a->who.start_time < b->who.start_time ? -1 : 1;
    return 0;
}

static uint64_t overlap(uint64_t a0, uint64_t a1, uint64_t b0, uint64_t b1)
{
    uint64_t lo = a0 > b0 ? a0 : b0, hi = a1 < b1 ? a1 : b1;
    return hi > lo ? hi - lo : 0;
}

/* Collects the samples of periods [lo, K) where K is the oldest open period (lo = UINT64_MAX:
 * only K - 1). Lock held. */
static int collect(emu_state *st, unsigned dev, uint64_t lo, emu_sample **out, size_t *n,
                   emu_timebase *tb)
{
    uint64_t now = emu_now_ns();
    uint64_t P = st->sample_ns, K = emu_open_period(st, now);
    uint64_t H = EMU_SAMPLE_HISTORY_NS / P + 1;
    uint64_t first = K > H ? K - H : 0;
    if (lo == UINT64_MAX)
        lo = K ? K - 1 : 0;
    if (lo < first)
        lo = first;
    tb->sample_ns = P;
    tb->epoch_real = st->epoch_real;
    tb->current = K;
    *out = NULL;
    *n = 0;
    if (lo >= K)
        return 0;
    size_t live = 0;
    for (int i = 0; i < EMU_MAX_PROCS; i++)
        live += st->slots[i].id.pid != 0;
    size_t cap = EMU_SAMPLE_RING + live * (size_t)(K - lo + 1);
    emu_sample *v = malloc(cap * sizeof *v);
    if (!v)
        return -1;
    size_t m = 0;
    const emu_devstate *ds = &st->dev[dev];
    for (unsigned r = 0; r < EMU_SAMPLE_RING; r++) {
        const emu_sample_rec *rec = &ds->rec[r];
        if (rec->period && rec->period - 1 >= lo && rec->period - 1 < K)
            v[m++] = (emu_sample){rec->who, rec->period - 1, rec->busy_ns};
    }
    for (int i = 0; i < EMU_MAX_PROCS; i++) {
        const emu_slot *s = &st->slots[i];
        const emu_slot_dev *sd = &s->dev[dev];
        if (!s->id.pid)
            continue;
        if (sd->acc_period && sd->acc_period - 1 >= lo && sd->acc_period - 1 < K)
            v[m++] = (emu_sample){s->id, sd->acc_period - 1, sd->acc_ns};
        if (!sd->run_start)
            continue;
        for (uint64_t k = emu_period_of(st, sd->run_start) > lo ? emu_period_of(st, sd->run_start)
                                                                 : lo;
             k < K; k++) {
            uint64_t p0 = st->epoch_mono + k * P;
            uint64_t busy = overlap(sd->run_start, sd->run_end && sd->run_end < now ? sd->run_end : now,
                                    p0, p0 + P);
            if (busy)
                v[m++] = (emu_sample){s->id, k, busy};
        }
    }
    qsort(v, m, sizeof *v, by_period_then_who);
    size_t w = 0;
    for (size_t i = 0; i < m; i++) {
        if (w > 0 && v[w - 1].period == v[i].period && same_who(&v[w - 1].who, &v[i].who))
            v[w - 1].busy_ns += v[i].busy_ns;
        else
            v[w++] = v[i];
    }
    *out = v;
    *n = w;
    return 0;
}

int emu_shared_samples(emu_shared *sh, unsigned dev, uint64_t from, emu_sample **out, size_t *n,
                       emu_timebase *tb)
{
    if (dev >= EMU_MAX_DEVICES || emu_st_lock(sh->st) != 0)
        return -1;
    emu_reclaim(sh); /* a dead process's kernel stops counting as running */
    int rc = collect(sh->st, dev, from, out, n, tb);
    emu_st_unlock(sh->st);
    return rc;
}

int emu_shared_utilization(emu_shared *sh, unsigned dev, unsigned *percent)
{
    emu_sample *v;
    size_t n;
    emu_timebase tb;
    if (emu_shared_samples(sh, dev, UINT64_MAX, &v, &n, &tb) != 0)
        return -1;
    uint64_t busy = 0;
    for (size_t i = 0; i < n; i++)
        busy += v[i].busy_ns;
    free(v);
    uint64_t p = (busy * 100 + tb.sample_ns / 2) / tb.sample_ns;
    *percent = p > 100 ? 100u : (unsigned)p;
    return 0;
}

/* devlock.c — a device runs one process's kernels at a time, and the record of its busy time
 * (shared.h tells the whole story).
 *
 * Path of one kernel: the process's worker for the device calls exec_begin, which takes a
 * ticket and sleeps on the device's futex word until the device is free and its ticket is the
 * lowest among live waiters; it then owns the device and marks the kernel running from its place
 * on the device's timeline (run_start, and run_end when its length is known: shared.h says why
 * that may lie before now). exec_end accounts [run_start, run_end or now] to the process's
 * period accumulator and hands the device on if anyone waits (or if the worker has no kernel
 * next). Both run under the state lock, so a
 * reader of the samples sees a kernel either running or accounted, never neither or both.
 *
 * Fairness: a holder whose turn is over while others wait hands the device on, at the end of a
 * kernel or in the middle of one (the caller runs a kernel in pieces, one per turn), and must
 * take a new ticket, which is behind theirs; so contending processes take turns of one timeslice
 * of device time each, however long each one's kernels are (a 50 ms kernel neither starves a
 * 10 us one nor takes 50 ms for each of its 10 us). Turns are measured on the device's
 * timeline, so a holder whose host thread runs late is not charged for it.
 *
 * A holder killed mid-kernel leaves owner set: waiters wake every EMU_HOLDER_CHECK_NS, reclaim
 * dead slots (which frees the device and accounts its busy time up to then) and go on. */
#include "shared.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define EMU_HOLDER_CHECK_NS 50000000ull

void emu_futex_wake(uint32_t *word)
{
    syscall(SYS_futex, word, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

void emu_futex_wait(uint32_t *word, uint32_t val, uint64_t timeout_ns)
{
    struct timespec ts = {(time_t)(timeout_ns / 1000000000u), (long)(timeout_ns % 1000000000u)};
    syscall(SYS_futex, word, FUTEX_WAIT, val, &ts, NULL, 0);
}

static void flush_acc(emu_state *st, emu_slot *s, unsigned dev)
{
    emu_slot_dev *sd = &s->dev[dev];
    if (sd->acc_period && sd->acc_ns) {
        emu_devstate *ds = &st->dev[dev];
        emu_sample_rec *r = &ds->rec[ds->rec_head % EMU_SAMPLE_RING];
        r->period = sd->acc_period;
        r->busy_ns = sd->acc_ns;
        r->who = s->id;
        ds->rec_head = (ds->rec_head + 1) % EMU_SAMPLE_RING;
    }
    sd->acc_period = 0;
    sd->acc_ns = 0;
}

void emu_account_busy(emu_state *st, emu_slot *s, unsigned dev, uint64_t a, uint64_t b)
{
    emu_slot_dev *sd = &s->dev[dev];
    if (a < st->epoch_mono)
        a = st->epoch_mono;
    while (a < b) {
        uint64_t k = emu_period_of(st, a);
        uint64_t end = st->epoch_mono + (k + 1) * st->sample_ns;
        if (end > b)
            end = b;
        if (sd->acc_period != k + 1) {
            flush_acc(st, s, dev);
            sd->acc_period = k + 1;
        }
        sd->acc_ns += end - a;
        a = end;
    }
}

void emu_flush_busy(emu_state *st, emu_slot *s, unsigned dev, uint64_t now)
{
    emu_slot_dev *sd = &s->dev[dev];
    if (sd->run_start) {
        uint64_t end = sd->run_end && sd->run_end < now ? sd->run_end : now;
        emu_account_busy(st, s, dev, sd->run_start, end);
        if (end > st->dev[dev].busy_until)
            st->dev[dev].busy_until = end;
        sd->run_start = sd->run_end = 0;
    }
    flush_acc(st, s, dev);
}

/* Whether slot i holds the lowest ticket among the live waiters for dev. */
static int first_in_line(const emu_state *st, unsigned dev, int i)
{
    uint64_t mine = st->slots[i].dev[dev].ticket;
    for (int k = 0; k < EMU_MAX_PROCS; k++) {
        uint64_t t = st->slots[k].dev[dev].ticket;
        if (st->slots[k].id.pid && t && t < mine)
            return 0;
    }
    return 1;
}

static void hand_on(emu_devstate *ds, int *wake)
{
    ds->owner = 0;
    __atomic_add_fetch(&ds->futex, 1, __ATOMIC_RELEASE);
    *wake = ds->nwait > 0;
}

/* Where a kernel that may start at `earliest` starts on dev's timeline, with or without a
 * known length (shared.h). */
static uint64_t timeline_start(const emu_devstate *ds, uint64_t earliest, uint64_t length_ns,
                               uint64_t now)
{
    if (!length_ns)
        return now;
    uint64_t at = earliest > ds->busy_until ? earliest : ds->busy_until;
    return at < now ? at : now;
}

static int turn_over(const emu_state *st, const emu_devstate *ds, uint64_t at)
{
    return st->timeslice_ns == 0 || at >= ds->turn_start + st->timeslice_ns;
}

int emu_shared_exec_begin(emu_shared *sh, unsigned dev, uint64_t earliest, uint64_t length_ns,
                          uint64_t *start, uint64_t *piece)
{
    emu_state *st = sh->st;
    if (sh->slot < 0 || dev >= EMU_MAX_DEVICES || emu_st_lock(st) != 0)
        return -1;
    emu_devstate *ds = &st->dev[dev];
    uint32_t mine = (uint32_t)sh->slot + 1;
    int fresh_turn = ds->owner != mine;
    if (!fresh_turn && ds->nwait > 0 &&
        turn_over(st, ds, timeline_start(ds, earliest, length_ns, emu_now_ns()))) {
        /* Kept between kernels, but its turn ran out meanwhile and somebody waits: in line. */
        int wake = 0;
        hand_on(ds, &wake);
        if (wake)
            emu_futex_wake(&ds->futex);
        fresh_turn = 1;
    }
    if (ds->owner != mine) {
        emu_slot_dev *sd = &st->slots[sh->slot].dev[dev];
        sd->ticket = ++ds->next_ticket;
        ds->nwait++;
        while (ds->owner != 0 || !first_in_line(st, dev, sh->slot)) {
            uint32_t seen = __atomic_load_n(&ds->futex, __ATOMIC_ACQUIRE);
            emu_st_unlock(st);
            uint64_t t0 = emu_now_ns();
            emu_futex_wait(&ds->futex, seen, EMU_HOLDER_CHECK_NS);
            int timed_out = emu_now_ns() - t0 >= EMU_HOLDER_CHECK_NS;
            if (emu_st_lock(st) != 0)
                return -1;
            if (timed_out)
                emu_reclaim(sh); /* a holder or an earlier waiter may have died */
        }
        sd->ticket = 0;
        ds->nwait--;
        ds->owner = mine;
    }
    uint64_t now = emu_now_ns(), at = timeline_start(ds, earliest, length_ns, now);
    if (fresh_turn || turn_over(st, ds, at))
        ds->turn_start = at; /* a new turn; an old one over with nobody waiting renews */
    *piece = length_ns;
    if (st->timeslice_ns && length_ns && ds->turn_start + st->timeslice_ns - at < length_ns)
        *piece = ds->turn_start + st->timeslice_ns - at;
    /* Busy time is accounted from the oldest open sample period on: a period a reader has seen
     * completed never changes (what falls before is not counted: a holder more than a quarter
     * period late, which only a starved host makes). */
    uint64_t period_began = st->epoch_mono + emu_open_period(st, now) * st->sample_ns;
    emu_slot_dev *sd = &st->slots[sh->slot].dev[dev];
    sd->run_start = at > period_began ? at : period_began;
    sd->run_end = length_ns ? at + *piece : 0; /* may precede run_start: nothing counted */
    *start = at;
    emu_st_unlock(st);
    return 0;
}

int emu_shared_exec_end(emu_shared *sh, unsigned dev, int keep, uint64_t *end)
{
    emu_state *st = sh->st;
    *end = emu_now_ns();
    if (sh->slot < 0 || dev >= EMU_MAX_DEVICES || emu_st_lock(st) != 0)
        return 0;
    emu_devstate *ds = &st->dev[dev];
    emu_slot *s = &st->slots[sh->slot];
    emu_slot_dev *sd = &s->dev[dev];
    if (sd->run_start) {
        if (sd->run_end && sd->run_end < *end)
            *end = sd->run_end;
        emu_account_busy(st, s, dev, sd->run_start, *end);
        if (*end > ds->busy_until)
            ds->busy_until = *end;
        sd->run_start = sd->run_end = 0;
    }
    int held = ds->owner == (uint32_t)sh->slot + 1, wake = 0;
    if (held && (!keep || (ds->nwait > 0 && turn_over(st, ds, *end)))) {
        hand_on(ds, &wake);
        held = 0;
    }
    emu_st_unlock(st);
    if (wake)
        emu_futex_wake(&ds->futex);
    return held;
}

void emu_shared_exec_release(emu_shared *sh, unsigned dev)
{
    emu_state *st = sh->st;
    if (sh->slot < 0 || dev >= EMU_MAX_DEVICES || emu_st_lock(st) != 0)
        return;
    emu_devstate *ds = &st->dev[dev];
    int wake = 0;
    if (ds->owner == (uint32_t)sh->slot + 1)
        hand_on(ds, &wake);
    emu_st_unlock(st);
    if (wake)
        emu_futex_wake(&ds->futex);
}

/* shared.h — the one device state every process on the machine shares: a file (by default in
 * /dev/shm) holding the device configuration, a robust process-shared mutex, one slot per
 * process using the emulated GPU with its charges, and per device the execution lock and the
 * record of who kept it busy when.
 *
 * Memory: device usage is never stored as a total; it is the sum over live slots, so a dead
 * process's memory disappears with its slot.
 *
 * Time (devlock.c): a device runs one process's kernels at a time, as a GPU without MPS
 * time-slices between contexts. A process that wants it takes a ticket; the device goes to the
 * lowest ticket among live waiters when its holder lets go. A holder lets go when its turn (a
 * timeslice, CONVGPU_EMU_TIMESLICE_US of device time) is over and somebody waits, even in the
 * middle of a kernel, whose rest then waits for the holder's next turn; or when it has no
 * kernel next. So contending processes share the device's time equally whatever their kernels'
 * lengths, as a GPU's scheduler preempts a context at the end of its timeslice. (With a
 * timeslice of 0, turns are whole kernels: a process of 20 ms kernels beside one of 500 us
 * kernels took 98% of the device.) A holder with nobody waiting keeps the device between
 * kernels (no lock traffic on the fast path). The holder is a slot, so a holder killed mid-kernel
 * is found by the waiters' periodic check and its device handed on.
 *
 * Device time is a timeline, not the lock's wall-clock hold: a kernel whose length is known (the
 * spin kernel) starts where the device's previous kernel ended, or when it was launched if that
 * is later, even when the thread that runs it got the lock late. A GPU runs queued work back to
 * back without waiting for any host thread, so a hand-over that costs the host a wake-up (ms on
 * a busy machine) costs the device nothing; the worker then sleeps until the kernel's end, so no
 * completion is ever seen before it. Busy time is accounted from the oldest open sample period
 * on (emu_open_period), so a period a reader has seen completed never changes.
 *
 * Utilisation (devlock.c, samples.c): time is cut into sample periods of CONVGPU_EMU_SAMPLE_MS
 * on one grid for every process (period k is [epoch + k*P, epoch + (k+1)*P) in CLOCK_MONOTONIC).
 * Busy time is accounted per (process, period): each slot keeps the running kernel's start and an
 * accumulator for its current period; when a process's busy time moves into a later period the
 * finished one is appended to the device's ring of records. A reader sums ring records,
 * accumulators and running kernels for each completed period, so a sample appears a quarter
 * period after its period ends (emu_open_period), is final then, and the sum of all samples equals the busy time exactly (before
 * the rounding to percent). The ring keeps EMU_SAMPLE_RING records per device: at least
 * 2 s of history unless more than EMU_SAMPLE_RING / (2 s / P) processes ran in every period.
 *
 * Pids: a slot records the process's pid in its own pid namespace and that namespace's inode,
 * so a reader in another namespace (the daemon on the host, a process in a container) can
 * translate it (pidns.c). */
#ifndef CONVGPU_EMU_SHARED_H
#define CONVGPU_EMU_SHARED_H

#include "config.h"

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

#define EMU_MAX_PROCS   256
#define EMU_SAMPLE_RING 1024
/* How far back samples are answered: past the 2 s a reader polling every 50-200 ms needs. */
#define EMU_SAMPLE_HISTORY_NS 4000000000ull

/* Who a slot (or a sample record) belongs to. */
typedef struct {
    int32_t pid;                          /* in its own pid namespace; 0 = nobody */
    uint32_t pad_;
    uint64_t pidns;                       /* inode of its /proc/self/ns/pid */
    uint64_t start_time;                  /* /proc/<pid>/stat field 22: tells pid reuse apart */
} emu_ident;

/* A process's use of one device's time. */
typedef struct {
    uint64_t run_start;                   /* CLOCK_MONOTONIC ns its running kernel began (as
                                           * accounted), or 0 */
    uint64_t run_end;                     /* when it ends, if its length is known; else 0 */
    uint64_t acc_period;                  /* period index + 1 of acc_ns; 0 = none */
    uint64_t acc_ns;                      /* busy ns in that period, not yet in the ring */
    uint64_t ticket;                      /* > 0 while waiting for the device */
} emu_slot_dev;

/* The checkpoint conversation with one process (checkpoint.c): a requester in another
 * process claims it, writes op and arguments and bumps req; the process's checkpoint thread
 * answers in result, publishes its new state and bumps done. */
typedef struct {
    uint32_t state;                       /* CUprocessState the process last published */
    uint32_t req;                         /* futex: bumped by a requester */
    uint32_t done;                        /* futex: bumped when a request is answered */
    uint32_t op;                          /* enum emu_ck_op */
    int32_t result;                       /* CUresult of the last request */
    int32_t tid;                          /* the checkpoint thread (0: none runs) */
    uint32_t timeout_ms;                  /* lock */
    uint32_t pad_;
    emu_ident claim;                      /* the requester now talking to it (pid 0: none) */
    uint8_t map[EMU_MAX_DEVICES];         /* restore: physical device -> device, 0xff = same */
} emu_ckpt;

typedef struct {
    emu_ident id;                         /* id.pid == 0: free slot */
    emu_ckpt ck;
    uint64_t used[EMU_MAX_DEVICES];       /* bytes charged for memory (granule multiples) */
    emu_slot_dev dev[EMU_MAX_DEVICES];
    uint8_t ctx[EMU_MAX_DEVICES];         /* 1 while the process holds a context charge */
} emu_slot;

typedef struct {
    uint64_t period;                      /* period index + 1; 0 = empty */
    uint64_t busy_ns;
    emu_ident who;
} emu_sample_rec;

typedef struct {
    uint32_t futex;                       /* bumped whenever a waiter may be able to proceed */
    uint32_t owner;                       /* slot index + 1 of the process holding it; 0 = free */
    uint32_t nwait;                       /* processes waiting for it */
    uint32_t rec_head;                    /* next ring record to write */
    uint64_t next_ticket;
    uint64_t busy_until;                  /* where the device's last kernel ended */
    uint64_t turn_start;                  /* where the holder's turn began on the timeline */
    emu_sample_rec rec[EMU_SAMPLE_RING];
} emu_devstate;

typedef struct {
    uint64_t magic;                       /* written last: a torn initialisation is not valid */
    uint32_t layout;                      /* sizeof(emu_state), so layouts never mix */
    uint32_t ndev;
    uint64_t generation;                  /* bumped by every re-initialisation */
    uint64_t ctx_charge, granularity;
    uint64_t sample_ns;                   /* sample period */
    uint64_t timeslice_ns;                /* a holder's turn while others wait; 0: a kernel */
    uint64_t epoch_mono;                  /* CLOCK_MONOTONIC ns where period 0 begins */
    uint64_t epoch_real;                  /* CLOCK_REALTIME ns at epoch_mono (timestamps) */
    uint64_t total[EMU_MAX_DEVICES];
    unsigned char uuid[EMU_MAX_DEVICES][16];
    pthread_mutex_t lock;
    emu_devstate dev[EMU_MAX_DEVICES];
    emu_slot slots[EMU_MAX_PROCS];
} emu_state;

typedef struct {
    emu_state *st;
    int slot;                             /* our slot, or -1 (NVML never registers) */
    pid_t pid;                            /* the process that registered `slot` */
    int live_fd;                          /* the file, opened for the liveness locks; -1 none */
    char path[EMU_PATH_MAX];
} emu_shared;

/* Opens (creating or repairing) the state file named by want->state_path, adopting the file's
 * configuration into *got when live processes already use it with another one (and saying so
 * on stderr). With reg, also registers the calling process in a slot. Returns 0, or -1 with a
 * one-line reason in err. */
int emu_shared_attach(emu_shared *sh, const emu_config *want, emu_config *got, int reg,
                      char *err, size_t errlen);
void emu_shared_detach(emu_shared *sh);

/* In a forked child, at once: drops the inherited hold on the parent's liveness lock. */
void emu_shared_forked(emu_shared *sh);
/* After fork: the child forgets the parent's slot and takes its own. Returns 0 or -1. */
int emu_shared_reregister(emu_shared *sh);

/* At exit: hands back the devices this process holds (without waiting for anything), so the
 * next process need not wait for its death to be noticed. */
void emu_shared_exit(emu_shared *sh);

/* Reads the current configuration (NVML calls it on every query). Returns 0 or -1. */
int emu_shared_config(emu_shared *sh, emu_config *cfg);

/* Charges bytes of device memory to this process: 0, or -1 when it does not fit. */
int emu_shared_charge(emu_shared *sh, unsigned dev, uint64_t bytes);
void emu_shared_uncharge(emu_shared *sh, unsigned dev, uint64_t bytes);

/* Takes / returns the process's context charge on dev: 0, or -1 when it does not fit. */
int emu_shared_ctx_acquire(emu_shared *sh, unsigned dev);
void emu_shared_ctx_release(emu_shared *sh, unsigned dev);

/* Bytes in use on dev (all live processes' memory and context charges). Returns 0 or -1. */
int emu_shared_used(emu_shared *sh, unsigned dev, uint64_t *used);

/* Device time (devlock.c). exec_begin blocks until this process holds dev in a turn that is
 * not over (FIFO among the processes that want it) and marks a kernel running. With
 * length_ns > 0 the kernel's start (*start) is placed on the device's timeline (see the top of
 * this file): not before `earliest` (its launch, or its stream's previous work), nor before the
 * device's last kernel ended, nor after now; *piece is how much of length_ns runs in this turn
 * (all of it, or up to the turn's end): the caller runs the rest with further calls. Without a
 * length it starts now and lasts until exec_end. exec_end accounts the kernel, tells where it
 * ended (*end) and hands the device on unless keep is set and the holder's turn goes on (it is
 * not over, or nobody waits). Returns whether the process still holds it. exec_release hands it
 * on (a process must not hold an idle device). Only one thread per process and device may call
 * these (the device's worker). */
int emu_shared_exec_begin(emu_shared *sh, unsigned dev, uint64_t earliest, uint64_t length_ns,
                          uint64_t *start, uint64_t *piece);
int emu_shared_exec_end(emu_shared *sh, unsigned dev, int keep, uint64_t *end);
void emu_shared_exec_release(emu_shared *sh, unsigned dev);

/* One process's busy time in one completed period (samples.c). */
typedef struct {
    emu_ident who;
    uint64_t period;                      /* period index */
    uint64_t busy_ns;
} emu_sample;

typedef struct {
    uint64_t sample_ns;                   /* period length */
    uint64_t epoch_real;                  /* CLOCK_REALTIME ns where period 0 begins */
    uint64_t current;                     /* index of the period in progress */
} emu_timebase;

/* The samples of dev's completed periods from `from` on (at most the history), sorted by
 * period: *out is malloc'd (free it), *n its length. Returns 0 or -1. */
int emu_shared_samples(emu_shared *sh, unsigned dev, uint64_t from, emu_sample **out, size_t *n,
                       emu_timebase *tb);

/* Busy percent of dev in the last completed period. Returns 0 or -1. */
int emu_shared_utilization(emu_shared *sh, unsigned dev, unsigned *percent);

typedef struct {
    emu_ident who;
    uint64_t used;                        /* context charge + memory */
} emu_proc_use;

/* Processes holding a context or memory on dev; returns how many (possibly more than max,
 * of which the first max are stored), or -1. */
int emu_shared_processes(emu_shared *sh, unsigned dev, emu_proc_use *out, int max);

uint64_t emu_now_ns(void);

/* Checkpointing (checkpoint.c). Whether slot i's process lives. */
int emu_shared_slot_alive(emu_shared *sh, int i);
/* Takes every charge of the calling process off the devices, telling what they were. */
int emu_shared_ckpt_release(emu_shared *sh, uint64_t used[EMU_MAX_DEVICES],
                            uint8_t ctx[EMU_MAX_DEVICES]);
/* Puts them back (on the devices the caller says): all, or none and -1 when one does not fit. */
int emu_shared_ckpt_charge(emu_shared *sh, const uint64_t used[EMU_MAX_DEVICES],
                           const uint8_t ctx[EMU_MAX_DEVICES]);

/* Internals shared by shared.c, devlock.c and samples.c. */
int emu_st_lock(emu_state *st);
void emu_st_unlock(emu_state *st);
/* Drops every dead slot (flushing its busy time and handing on its devices). Lock held. */
void emu_reclaim(emu_shared *sh);
/* Moves slot s's accumulated and running busy time on dev up to `now` into the ring. */
void emu_flush_busy(emu_state *st, emu_slot *s, unsigned dev, uint64_t now);
/* Adds [a, b) to slot s's busy time on dev, flushing the periods it leaves. Lock held. */
void emu_account_busy(emu_state *st, emu_slot *s, unsigned dev, uint64_t a, uint64_t b);
/* Futex on a word of the shared file (process-shared: no FUTEX_PRIVATE_FLAG). */
void emu_futex_wake(uint32_t *word);
/* Waits while *word == val, at most timeout_ns. */
void emu_futex_wait(uint32_t *word, uint32_t val, uint64_t timeout_ns);
static inline uint64_t emu_period_of(const emu_state *st, uint64_t t)
{
    return t > st->epoch_mono ? (t - st->epoch_mono) / st->sample_ns : 0;
}
/* The oldest period still open at `now`: a kernel whose worker got the device late may still
 * be accounted to it, so readers are shown the periods before it only (final ones). A period
 * stays open a quarter period past its end; a lateness beyond that is not counted. */
static inline uint64_t emu_open_period(const emu_state *st, uint64_t now)
{
    uint64_t grace = st->sample_ns / 4;
    return emu_period_of(st, now > grace ? now - grace : 0);
}

#endif

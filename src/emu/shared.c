/* shared.c — the machine-wide device state file and its lock.
 *
 * Lock choice: a robust, process-shared pthread mutex inside the mapped file. A process killed
 * while holding it (SIGKILL included) hands the next locker EOWNERDEAD, which marks it
 * consistent and carries on. That is safe because every update touches only the updater's own
 * slot, or clears a dead slot (pid first), and device usage is always recomputed as a sum over
 * live slots: whatever a dying owner half-wrote belongs to a slot that is reclaimed anyway.
 * fcntl/flock locks would also die with their owner, but they do not exclude the threads of one
 * process, and an inherited descriptor makes a forked child share its parent's lock. flock is
 * used only while attaching, to serialise creating and repairing the file; the descriptor is
 * closed before any other call.
 *
 * Liveness: a registered process holds an open-file-description lock (F_OFD_SETLK) on one byte
 * past the end of the file, at its slot's index, through a descriptor of its own that is
 * neither mapped nor kept across exec or fork (a forked child closes its copy at once). The
 * kernel drops the lock when the process dies, execs or turns zombie, so a slot whose byte is
 * not locked (F_OFD_GETLK) belongs to a dead process, whatever pid namespace either process is
 * in and whatever pids have been reused. (A real driver frees a process's memory at exit, before
 * it is reaped.) Where the file system has no OFD locks, pid plus start time and the pid
 * namespace (pidns.c) decide instead. Every locker reclaims, so the memory of a dead process is
 * back before the next allocation or query on the machine is answered. The device execution
 * lock and busy time live in devlock.c, their readers in samples.c. */
#include "shared.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "pidns.h"

#define EMU_STATE_MAGIC 0x31554d4555504743ull /* "CGPUEMU1" */

uint64_t emu_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int emu_st_lock(emu_state *st)
{
    int rc = pthread_mutex_lock(&st->lock);
    if (rc == EOWNERDEAD) {
        /* The owner died mid-update; see the file comment for why the state is usable. */
        pthread_mutex_consistent(&st->lock);
        rc = 0;
    }
    return rc == 0 ? 0 : -1;
}

void emu_st_unlock(emu_state *st) { pthread_mutex_unlock(&st->lock); }

static int is_own_slot(const emu_shared *sh, int i) { return i == sh->slot && sh->pid == getpid(); }

/* Frees slot i of a dead process: its busy time goes to the ring, its devices to the next
 * waiter, its charges vanish with it. */
static void drop_slot(emu_state *st, int i)
{
    emu_slot *s = &st->slots[i];
    uint64_t now = emu_now_ns();
    for (unsigned d = 0; d < EMU_MAX_DEVICES; d++) {
        emu_devstate *ds = &st->dev[d];
        emu_flush_busy(st, s, d, now);
        if (s->dev[d].ticket && ds->nwait)
            ds->nwait--;
        if (ds->owner == (uint32_t)i + 1 || s->dev[d].ticket) {
            if (ds->owner == (uint32_t)i + 1)
                ds->owner = 0;
            __atomic_add_fetch(&ds->futex, 1, __ATOMIC_RELEASE);
            emu_futex_wake(&ds->futex);
        }
    }
    s->id.pid = 0; /* first: a half-cleared slot is already free */
    memset(s, 0, sizeof *s);
}

/* The liveness lock of slot i: one byte past the state itself. */
static int live_lock(int fd, int i, int cmd, short type)
{
    struct flock fl = {.l_type = type, .l_whence = SEEK_SET,
                       .l_start = (off_t)sizeof(emu_state) + i, .l_len = 1};
    if (fcntl(fd, cmd, &fl) != 0)
        return -1;
    return cmd == F_OFD_GETLK ? fl.l_type != F_UNLCK : 0;
}

static int slot_alive(const emu_shared *sh, int i)
{
    int held = sh->live_fd >= 0 ? live_lock(sh->live_fd, i, F_OFD_GETLK, F_WRLCK) : -1;
    return held >= 0 ? held : emu_ident_alive(&sh->st->slots[i].id);
}

void emu_reclaim(emu_shared *sh)
{
    emu_state *st = sh->st;
    for (int i = 0; i < EMU_MAX_PROCS; i++) {
        emu_slot *s = &st->slots[i];
        if (s->id.pid == 0 || is_own_slot(sh, i))
            continue;
        if (!slot_alive(sh, i))
            drop_slot(st, i);
    }
}

static int live_slots(emu_shared *sh)
{
    int n = 0;
    for (int i = 0; i < EMU_MAX_PROCS; i++)
        n += sh->st->slots[i].id.pid != 0;
    return n;
}

static void reset_clock(emu_state *st)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    st->epoch_mono = emu_now_ns();
    st->epoch_real = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    for (unsigned d = 0; d < EMU_MAX_DEVICES; d++) {
        memset(st->dev[d].rec, 0, sizeof st->dev[d].rec);
        st->dev[d].rec_head = 0;
    }
}

static void write_config(emu_state *st, const emu_config *c)
{
    st->ndev = c->ndev;
    st->ctx_charge = c->ctx_charge;
    st->granularity = c->granularity;
    st->sample_ns = c->sample_ns;
    st->timeslice_ns = c->timeslice_ns;
    memset(st->total, 0, sizeof st->total);
    memset(st->uuid, 0, sizeof st->uuid);
    for (unsigned i = 0; i < c->ndev; i++) {
        st->total[i] = c->total[i];
        emu_device_uuid(i, c->total[i], st->uuid[i]);
    }
    for (unsigned d = 0; d < EMU_MAX_DEVICES; d++) {
        st->dev[d].owner = st->dev[d].nwait = 0;
        st->dev[d].busy_until = 0;
        __atomic_add_fetch(&st->dev[d].futex, 1, __ATOMIC_RELEASE);
    }
    memset(st->slots, 0, sizeof st->slots);
    reset_clock(st);
    st->generation++;
}

static void read_config(const emu_state *st, emu_config *c, const char *path)
{
    memset(c, 0, sizeof *c);
    c->ndev = st->ndev <= EMU_MAX_DEVICES ? st->ndev : EMU_MAX_DEVICES;
    c->ctx_charge = st->ctx_charge;
    c->granularity = st->granularity;
    c->sample_ns = st->sample_ns;
    c->timeslice_ns = st->timeslice_ns;
    for (unsigned i = 0; i < c->ndev; i++)
        c->total[i] = st->total[i];
    snprintf(c->state_path, sizeof c->state_path, "%s", path);
}

static int init_mutex(pthread_mutex_t *m)
{
    pthread_mutexattr_t a;
    if (pthread_mutexattr_init(&a) != 0)
        return -1;
    int rc = pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED) ||
             pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST) || pthread_mutex_init(m, &a);
    pthread_mutexattr_destroy(&a);
    return rc ? -1 : 0;
}

static int register_slot(emu_shared *sh)
{
    emu_ident me;
    emu_ident_self(&me);
    for (int i = 0; i < EMU_MAX_PROCS; i++) {
        emu_slot *s = &sh->st->slots[i];
        if (s->id.pid != 0)
            continue;
        /* Held by someone (a process whose slot was taken for dead): not this one. */
        if (sh->live_fd >= 0 && live_lock(sh->live_fd, i, F_OFD_SETLK, F_WRLCK) != 0 &&
            (errno == EAGAIN || errno == EACCES))
            continue;
        memset(s, 0, sizeof *s);
        s->id.pidns = me.pidns;
        s->id.start_time = me.start_time;
        s->id.pid = me.pid; /* last: the slot is claimed only when complete */
        sh->slot = i;
        sh->pid = getpid();
        return 0;
    }
    return -1;
}

int emu_shared_attach(emu_shared *sh, const emu_config *want, emu_config *got, int reg,
                      char *err, size_t errlen)
{
    const char *path = want->state_path;
    sh->st = NULL;
    sh->slot = -1;
    sh->pid = getpid();
    snprintf(sh->path, sizeof sh->path, "%s", path);
    /* The liveness descriptor: its own open file description, never mapped (see above). */
    sh->live_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);

    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0 || sh->live_fd < 0) {
        snprintf(err, errlen, "cannot open state file %s: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        if (sh->live_fd >= 0)
            close(sh->live_fd);
        sh->live_fd = -1;
        return -1;
    }
    if (flock(fd, LOCK_EX) != 0) {
        snprintf(err, errlen, "cannot lock state file %s: %s", path, strerror(errno));
        close(fd);
        close(sh->live_fd);
        sh->live_fd = -1;
        return -1;
    }
    struct stat sb;
    int fresh = fstat(fd, &sb) != 0 || sb.st_size != (off_t)sizeof(emu_state);
    emu_state *st = MAP_FAILED;
    if (fresh && (ftruncate(fd, 0) != 0 || ftruncate(fd, sizeof(emu_state)) != 0))
        snprintf(err, errlen, "cannot size state file %s: %s", path, strerror(errno));
    else if ((st = mmap(NULL, sizeof(emu_state), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) ==
             MAP_FAILED)
        snprintf(err, errlen, "cannot map state file %s: %s", path, strerror(errno));
    if (st == MAP_FAILED) {
        flock(fd, LOCK_UN);
        close(fd);
        close(sh->live_fd);
        sh->live_fd = -1;
        return -1;
    }
    sh->st = st;
    if (!fresh && (st->magic != EMU_STATE_MAGIC || st->layout != sizeof(emu_state)))
        fresh = 1;
    if (fresh) {
        memset(st, 0, sizeof *st);
        if (init_mutex(&st->lock) != 0) {
            snprintf(err, errlen, "cannot initialise the lock in %s", path);
            goto fail;
        }
        st->layout = sizeof(emu_state);
        write_config(st, want);
        __atomic_store_n(&st->magic, EMU_STATE_MAGIC, __ATOMIC_RELEASE);
    }
    if (emu_st_lock(st) != 0) {
        snprintf(err, errlen, "the lock in state file %s is unusable; remove the file", path);
        goto fail;
    }
    emu_reclaim(sh);
    emu_config have;
    read_config(st, &have, path);
    if (!emu_config_same_devices(&have, want)) {
        int live = live_slots(sh);
        if (live == 0) {
            write_config(st, want);
            read_config(st, &have, path);
        } else {
            fprintf(stderr,
                    "convgpu-emu: %s is in use by %d process%s with another device "
                    "configuration (%u device%s); keeping it and ignoring this process's "
                    "CONVGPU_EMU_* settings\n",
                    path, live, live == 1 ? "" : "es", have.ndev, have.ndev == 1 ? "" : "s");
        }
    }
    if (live_slots(sh) == 0 && emu_now_ns() < st->epoch_mono)
        reset_clock(st); /* a file kept across a reboot: the monotonic clock started again */
    if (reg && register_slot(sh) != 0) {
        emu_st_unlock(st);
        snprintf(err, errlen, "state file %s has no free process slot (at most %d processes)",
                 path, EMU_MAX_PROCS);
        goto fail;
    }
    emu_st_unlock(st);
    /* Explicit unlock: the mapping keeps the open file description (and so a flock) alive
     * after close(), and a forked child attaching later would wait for it forever. */
    flock(fd, LOCK_UN);
    close(fd); /* the mapping stays; a descriptor would only be inherited by children */
    *got = have;
    return 0;
fail:
    munmap(st, sizeof *st);
    sh->st = NULL;
    flock(fd, LOCK_UN);
    close(fd);
    if (sh->live_fd >= 0)
        close(sh->live_fd);
    sh->live_fd = -1;
    return -1;
}

void emu_shared_detach(emu_shared *sh)
{
    if (!sh->st)
        return;
    if (sh->slot >= 0 && sh->pid == getpid() && emu_st_lock(sh->st) == 0) {
        drop_slot(sh->st, sh->slot);
        emu_st_unlock(sh->st);
    }
    munmap(sh->st, sizeof(emu_state));
    if (sh->live_fd >= 0)
        close(sh->live_fd); /* releases the liveness lock */
    sh->live_fd = -1;
    sh->st = NULL;
    sh->slot = -1;
}

void emu_shared_forked(emu_shared *sh)
{
    /* The child's copy shares the parent's open file description: were it kept, the parent's
     * liveness lock would outlive the parent. */
    if (sh->live_fd >= 0)
        close(sh->live_fd);
    sh->live_fd = -1;
}

int emu_shared_reregister(emu_shared *sh)
{
    sh->slot = -1;
    emu_pidns_forget();
    emu_shared_forked(sh);
    sh->live_fd = open(sh->path, O_RDWR | O_CLOEXEC);
    if (emu_st_lock(sh->st) != 0)
        return -1;
    emu_reclaim(sh);
    int rc = register_slot(sh);
    emu_st_unlock(sh->st);
    return rc;
}

void emu_shared_exit(emu_shared *sh)
{
    if (!sh->st || sh->slot < 0 || sh->pid != getpid() || emu_st_lock(sh->st) != 0)
        return;
    emu_state *st = sh->st;
    emu_slot *s = &st->slots[sh->slot];
    uint64_t now = emu_now_ns();
    for (unsigned d = 0; d < EMU_MAX_DEVICES; d++) {
        emu_devstate *ds = &st->dev[d];
        emu_flush_busy(st, s, d, now);
        if (ds->owner == (uint32_t)sh->slot + 1) {
            ds->owner = 0;
            __atomic_add_fetch(&ds->futex, 1, __ATOMIC_RELEASE);
            emu_futex_wake(&ds->futex);
        }
    }
    emu_st_unlock(st);
}

int emu_shared_config(emu_shared *sh, emu_config *cfg)
{
    if (emu_st_lock(sh->st) != 0)
        return -1;
    read_config(sh->st, cfg, "");
    emu_st_unlock(sh->st);
    return 0;
}

static uint64_t dev_used(const emu_state *st, unsigned dev)
{
    uint64_t used = 0;
    for (int i = 0; i < EMU_MAX_PROCS; i++) {
        const emu_slot *s = &st->slots[i];
        if (s->id.pid)
            used += s->used[dev] + (s->ctx[dev] ? st->ctx_charge : 0);
    }
    return used;
}

static int charge_locked(emu_shared *sh, unsigned dev, uint64_t bytes)
{
    emu_state *st = sh->st;
    emu_reclaim(sh);
    uint64_t used = dev_used(st, dev);
    if (used > st->total[dev] || bytes > st->total[dev] - used)
        return -1;
    return 0;
}

int emu_shared_charge(emu_shared *sh, unsigned dev, uint64_t bytes)
{
    if (sh->slot < 0 || dev >= EMU_MAX_DEVICES || emu_st_lock(sh->st) != 0)
        return -1;
    int rc = charge_locked(sh, dev, bytes);
    if (rc == 0)
        sh->st->slots[sh->slot].used[dev] += bytes;
    emu_st_unlock(sh->st);
    return rc;
}

void emu_shared_uncharge(emu_shared *sh, unsigned dev, uint64_t bytes)
{
    if (sh->slot < 0 || dev >= EMU_MAX_DEVICES || emu_st_lock(sh->st) != 0)
        return;
    emu_slot *s = &sh->st->slots[sh->slot];
    s->used[dev] = s->used[dev] >= bytes ? s->used[dev] - bytes : 0;
    emu_st_unlock(sh->st);
}

int emu_shared_ctx_acquire(emu_shared *sh, unsigned dev)
{
    if (sh->slot < 0 || dev >= EMU_MAX_DEVICES || emu_st_lock(sh->st) != 0)
        return -1;
    emu_slot *s = &sh->st->slots[sh->slot];
    int rc = 0;
    if (!s->ctx[dev]) {
        rc = charge_locked(sh, dev, sh->st->ctx_charge);
        if (rc == 0)
            s->ctx[dev] = 1;
    }
    emu_st_unlock(sh->st);
    return rc;
}

void emu_shared_ctx_release(emu_shared *sh, unsigned dev)
{
    if (sh->slot < 0 || dev >= EMU_MAX_DEVICES || emu_st_lock(sh->st) != 0)
        return;
    sh->st->slots[sh->slot].ctx[dev] = 0;
    emu_st_unlock(sh->st);
}

int emu_shared_used(emu_shared *sh, unsigned dev, uint64_t *used)
{
    if (dev >= EMU_MAX_DEVICES || emu_st_lock(sh->st) != 0)
        return -1;
    emu_reclaim(sh);
    *used = dev_used(sh->st, dev);
    emu_st_unlock(sh->st);
    return 0;
}

int emu_shared_processes(emu_shared *sh, unsigned dev, emu_proc_use *out, int max)
{
    if (dev >= EMU_MAX_DEVICES || emu_st_lock(sh->st) != 0)
        return -1;
    emu_state *st = sh->st;
    emu_reclaim(sh);
    int n = 0;
    for (int i = 0; i < EMU_MAX_PROCS; i++) {
        const emu_slot *s = &st->slots[i];
        if (!s->id.pid || (!s->ctx[dev] && !s->used[dev]))
            continue;
        if (n < max) {
            out[n].who = s->id;
            out[n].used = s->used[dev] + (s->ctx[dev] ? st->ctx_charge : 0);
        }
        n++;
    }
    emu_st_unlock(st);
    return n;
}

int emu_shared_slot_alive(emu_shared *sh, int i) { return slot_alive(sh, i); }

int emu_shared_ckpt_release(emu_shared *sh, uint64_t used[EMU_MAX_DEVICES],
                            uint8_t ctx[EMU_MAX_DEVICES])
{
    if (sh->slot < 0 || emu_st_lock(sh->st) != 0)
        return -1;
    emu_slot *s = &sh->st->slots[sh->slot];
    for (unsigned d = 0; d < EMU_MAX_DEVICES; d++) {
        used[d] = s->used[d];
        ctx[d] = s->ctx[d];
        s->used[d] = 0;
        s->ctx[d] = 0;
    }
    emu_st_unlock(sh->st);
    return 0;
}

int emu_shared_ckpt_charge(emu_shared *sh, const uint64_t used[EMU_MAX_DEVICES],
                           const uint8_t ctx[EMU_MAX_DEVICES])
{
    if (sh->slot < 0 || emu_st_lock(sh->st) != 0)
        return -1;
    emu_state *st = sh->st;
    emu_reclaim(sh);
    int rc = 0;
    for (unsigned d = 0; d < EMU_MAX_DEVICES && rc == 0; d++) {
        uint64_t need = used[d] + (ctx[d] ? st->ctx_charge : 0);
        uint64_t have = dev_used(st, d);
        if (need && (d >= st->ndev || have > st->total[d] || need > st->total[d] - have))
            rc = -1;
    }
    if (rc == 0) {
        emu_slot *s = &st->slots[sh->slot];
        for (unsigned d = 0; d < EMU_MAX_DEVICES; d++) {
            s->used[d] += used[d];
            s->ctx[d] = s->ctx[d] || ctx[d];
        }
    }
    emu_st_unlock(st);
    return rc;
}

/* checkpoint.c — the driver's process checkpoint API (cuCheckpointProcess*), called by one
 * process (cuda-checkpoint, convgpu-checkpoint) about another by pid.
 *
 * Follow one pause: the requester finds the target's slot in the shared state by pid, claims
 * the slot's conversation (emu_ckpt in shared.h), writes the operation and bumps `req`; the
 * target's checkpoint thread, started by cuInit and asleep on that futex word, does the work
 * inside the target and answers (`result`, the new `state`, a bump of `done`). So:
 *   lock        new driver calls of the target block in emu_enter() until unlock; calls
 *               already inside finish (the write lock is taken once, the devices drained).
 *               A timeout that passes leaves the process RUNNING (CUDA_ERROR_NOT_READY).
 *   checkpoint  every device range's bytes are copied to host memory and the range's pages
 *               given back (private mappings: MADV_DONTNEED; VMM memfds: a punched hole), then
 *               every charge of the process (memory and contexts) leaves the shared state:
 *               NVML no longer lists the process. Managed memory stays where it is (host code
 *               may touch it while locked) but its charge goes too.
 *   restore     the charges come back (all or none: CUDA_ERROR_OUT_OF_MEMORY when they do not
 *               fit, the process stays CHECKPOINTED), optionally onto other devices of the
 *               same model (GPU pairs: every object of the old device moves to the new one;
 *               the process keeps its ordinals), and the bytes go back to the same addresses.
 *   unlock      the blocked calls proceed.
 * Wrong states answer CUDA_ERROR_ILLEGAL_STATE, as the real driver does; a pid that is no
 * process of this emulated GPU answers CUDA_ERROR_INVALID_VALUE; a requester that has not
 * called cuInit gets CUDA_ERROR_NOT_INITIALIZED. One requester talks to a process at a time
 * (a second one gets CUDA_ERROR_ILLEGAL_STATE while the first's claim lives). */
#include "pidns.h"
#include "workq.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

enum emu_ck_op { EMU_CK_LOCK = 1, EMU_CK_CHECKPOINT, EMU_CK_RESTORE, EMU_CK_UNLOCK };

#define EMU_CK_SAME 0xff

int g_emu_ckpt_locked; /* atomic: new driver calls wait */

/* What the checkpoint thread keeps of the process while it is checkpointed. */
typedef struct {
    uintptr_t base;
    size_t size, maplen;
    void *copy;
} ck_save;

static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;      /* unlock */
    int started;
    pid_t tid;
    unsigned state;         /* CUprocessState: written by the checkpoint thread only */
    ck_save *saves;
    size_t nsaves;
    uint64_t used[EMU_MAX_DEVICES];
    uint8_t ctx[EMU_MAX_DEVICES];
} g_ck = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

static _Thread_local int t_is_ck_thread;

void emu_ckpt_gate(void)
{
    if (t_is_ck_thread)
        return;
    pthread_mutex_lock(&g_ck.mu);
    while (__atomic_load_n(&g_emu_ckpt_locked, __ATOMIC_ACQUIRE))
        pthread_cond_wait(&g_ck.cv, &g_ck.mu);
    pthread_mutex_unlock(&g_ck.mu);
}

static void set_locked(int on)
{
    pthread_mutex_lock(&g_ck.mu);
    __atomic_store_n(&g_emu_ckpt_locked, on, __ATOMIC_RELEASE);
    if (!on)
        pthread_cond_broadcast(&g_ck.cv);
    pthread_mutex_unlock(&g_ck.mu);
}

/* ---- inside the target ---------------------------------------------------------------- */

static CUresult do_lock(unsigned timeout_ms)
{
    if (g_ck.state != CU_PROCESS_STATE_RUNNING)
        return CUDA_ERROR_ILLEGAL_STATE;
    uint64_t t0 = emu_now_ns();
    set_locked(1);
    /* Calls that passed the gate before it closed hold the lock while they touch the tables;
     * their queued work is what the devices still run. */
    /* A call that never leaves (its thread stopped inside it: SIGSTOP mid-copy) fails the
     * lock at its timeout, as the real driver's, instead of holding the requester forever. */
    if (timeout_ms) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += (time_t)(timeout_ms / 1000);
        until.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        if (pthread_rwlock_timedwrlock(&g_emu.lock, &until) != 0) {
            set_locked(0);
            return CUDA_ERROR_NOT_READY;
        }
    } else {
        emu_wrlock();
    }
    emu_unlock();
    for (unsigned d = 0; d < g_emu.cfg.ndev; d++)
        emu_device_sync(d);
    if (timeout_ms && emu_now_ns() - t0 > (uint64_t)timeout_ms * 1000000u) {
        set_locked(0);
        return CUDA_ERROR_NOT_READY;
    }
    g_ck.state = CU_PROCESS_STATE_LOCKED;
    return CUDA_SUCCESS;
}

static int saved_kind(const emu_alloc *a)
{
    return (a->kind == EMU_A_LINEAR || a->kind == EMU_A_PITCH || a->kind == EMU_A_POOL) &&
           a->maplen > 0;
}

static void put_back(void)
{
    for (size_t i = 0; i < g_ck.nsaves; i++) {
        memcpy((void *)g_ck.saves[i].base, g_ck.saves[i].copy, g_ck.saves[i].size);
        free(g_ck.saves[i].copy);
    }
    free(g_ck.saves);
    g_ck.saves = NULL;
    g_ck.nsaves = 0;
}

static CUresult do_checkpoint(void)
{
    if (g_ck.state != CU_PROCESS_STATE_LOCKED)
        return CUDA_ERROR_ILLEGAL_STATE;
    emu_wrlock();
    size_t n = 0;
    for (size_t i = 0; i < g_emu.nalloc; i++)
        n += saved_kind(&g_emu.allocs[i]);
    g_ck.saves = calloc(n ? n : 1, sizeof *g_ck.saves);
    if (!g_ck.saves) {
        emu_unlock();
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    for (size_t i = 0; i < g_emu.nalloc; i++) {
        const emu_alloc *a = &g_emu.allocs[i];
        if (!saved_kind(a))
            continue;
        ck_save *s = &g_ck.saves[g_ck.nsaves];
        *s = (ck_save){a->base, a->size, a->maplen, malloc(a->size)};
        if (!s->copy) {
            put_back();
            emu_unlock();
            return CUDA_ERROR_OUT_OF_MEMORY;
        }
        memcpy(s->copy, (void *)a->base, a->size);
        g_ck.nsaves++;
    }
    if (emu_vmm_checkpoint() != 0) {
        put_back();
        emu_unlock();
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    /* Only now, with every copy made, are the device pages given back. */
    for (size_t i = 0; i < g_ck.nsaves; i++)
        madvise((void *)g_ck.saves[i].base, g_ck.saves[i].maplen, MADV_DONTNEED);
    emu_shared_ckpt_release(&g_emu.sh, g_ck.used, g_ck.ctx);
    emu_unlock();
    g_ck.state = CU_PROCESS_STATE_CHECKPOINTED;
    return CUDA_SUCCESS;
}

/* Whether the process has anything on physical device d. */
static int uses(unsigned d)
{
    if (g_ck.used[d] || g_ck.ctx[d] || g_emu.ctx_live[d])
        return 1;
    for (unsigned i = 0; i < g_emu.nvis; i++)
        if (g_emu.vis[i] == d)
            return 1;
    return 0;
}

/* Checks a remap against what the process has: every device it was charged on is covered,
 * no two devices go to one, and none goes to a device the process already sees. */
static int remap_valid(const uint8_t map[EMU_MAX_DEVICES])
{
    unsigned char taken[EMU_MAX_DEVICES] = {0};
    for (unsigned d = 0; d < EMU_MAX_DEVICES; d++) {
        if (map[d] == EMU_CK_SAME) {
            if (g_ck.used[d] || g_ck.ctx[d])
                return 0;
            continue;
        }
        if (map[d] >= g_emu.cfg.ndev || taken[map[d]]++)
            return 0;
        if (map[d] != d && uses(map[d]) && map[map[d]] == EMU_CK_SAME)
            return 0;
    }
    return 1;
}

/* Moves every per-device array entry and object of d to map[d]. */
static void remap(const uint8_t in[EMU_MAX_DEVICES])
{
    uint8_t map[EMU_MAX_DEVICES];
    int moves = 0;
    for (unsigned d = 0; d < EMU_MAX_DEVICES; d++) {
        map[d] = in[d] == d ? EMU_CK_SAME : in[d];
        moves += map[d] != EMU_CK_SAME;
    }
    if (!moves)
        return;
#define MOVE_ARRAY(arr, zero)                                       \
    do {                                                            \
        __typeof__(arr[0]) old_[EMU_MAX_DEVICES];                   \
        memcpy(old_, arr, sizeof old_);                             \
        for (unsigned d_ = 0; d_ < EMU_MAX_DEVICES; d_++)           \
            if (map[d_] != EMU_CK_SAME)                             \
                arr[d_] = zero;                                     \
        for (unsigned d_ = 0; d_ < EMU_MAX_DEVICES; d_++)           \
            if (map[d_] != EMU_CK_SAME)                             \
                arr[map[d_]] = old_[d_];                            \
    } while (0)
    MOVE_ARRAY(g_emu.ctx_live, 0);
    MOVE_ARRAY(g_emu.default_pool, NULL);
    MOVE_ARRAY(g_emu.current_pool, NULL);
    MOVE_ARRAY(g_ck.used, 0);
    MOVE_ARRAY(g_ck.ctx, 0);
#undef MOVE_ARRAY
    for (unsigned i = 0; i < g_emu.nvis; i++) {
        if (map[g_emu.vis[i]] != EMU_CK_SAME)
            g_emu.vis[i] = map[g_emu.vis[i]];
        g_emu.primary[i].phys = g_emu.vis[i];
    }
    for (size_t i = 0; i < g_emu.nctx; i++)
        if (map[g_emu.ctxs[i]->phys] != EMU_CK_SAME)
            g_emu.ctxs[i]->phys = map[g_emu.ctxs[i]->phys];
    for (size_t i = 0; i < g_emu.nalloc; i++)
        if (map[g_emu.allocs[i].phys] != EMU_CK_SAME)
            g_emu.allocs[i].phys = map[g_emu.allocs[i].phys];
    emu_pool_remap(map);
    emu_vmm_remap(map);
    emu_array_remap(map);
    emu_sched_remap(map);
}

static CUresult do_restore(const uint8_t map[EMU_MAX_DEVICES])
{
    if (g_ck.state != CU_PROCESS_STATE_CHECKPOINTED)
        return CUDA_ERROR_ILLEGAL_STATE;
    int pairs = 0;
    for (unsigned d = 0; d < EMU_MAX_DEVICES; d++)
        pairs |= map[d] != EMU_CK_SAME;
    if (pairs && !remap_valid(map))
        return CUDA_ERROR_INVALID_VALUE;
    uint64_t used[EMU_MAX_DEVICES] = {0};
    uint8_t ctx[EMU_MAX_DEVICES] = {0};
    for (unsigned d = 0; d < EMU_MAX_DEVICES; d++) {
        unsigned to = pairs ? map[d] : d;
        if (to == EMU_CK_SAME)
            continue;
        used[to] = g_ck.used[d];
        ctx[to] = g_ck.ctx[d];
    }
    emu_wrlock();
    if (emu_shared_ckpt_charge(&g_emu.sh, used, ctx) != 0) {
        emu_unlock();
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    if (pairs)
        remap(map);
    put_back();
    int vmm = emu_vmm_restore();
    memset(g_ck.used, 0, sizeof g_ck.used);
    memset(g_ck.ctx, 0, sizeof g_ck.ctx);
    emu_unlock();
    if (vmm != 0) {
        g_ck.state = CU_PROCESS_STATE_FAILED;
        return CUDA_ERROR_UNKNOWN;
    }
    g_ck.state = CU_PROCESS_STATE_LOCKED;
    return CUDA_SUCCESS;
}

static CUresult do_unlock(void)
{
    if (g_ck.state != CU_PROCESS_STATE_LOCKED)
        return CUDA_ERROR_ILLEGAL_STATE;
    g_ck.state = CU_PROCESS_STATE_RUNNING;
    set_locked(0);
    return CUDA_SUCCESS;
}

static void *ck_main(void *arg)
{
    (void)arg;
    t_is_ck_thread = 1;
    prctl(PR_SET_NAME, "cuda-ckpt", 0, 0, 0);
    emu_state *st = g_emu.sh.st;
    int slot = g_emu.sh.slot;
    if (slot < 0 || emu_st_lock(st) != 0)
        return NULL;
    emu_ckpt *ck = &st->slots[slot].ck;
    ck->tid = (int32_t)g_ck.tid;
    ck->state = g_ck.state;
    uint32_t seen = __atomic_load_n(&ck->req, __ATOMIC_ACQUIRE);
    emu_st_unlock(st);
    for (;;) {
        emu_futex_wait(&ck->req, seen, 1000000000ull);
        uint32_t now = __atomic_load_n(&ck->req, __ATOMIC_ACQUIRE);
        if (now == seen)
            continue;
        seen = now;
        if (emu_st_lock(st) != 0)
            continue;
        unsigned op = ck->op, timeout_ms = ck->timeout_ms;
        uint8_t map[EMU_MAX_DEVICES];
        memcpy(map, ck->map, sizeof map);
        emu_st_unlock(st);
        CUresult rc;
        switch (op) {
        case EMU_CK_LOCK: rc = do_lock(timeout_ms); break;
        case EMU_CK_CHECKPOINT: rc = do_checkpoint(); break;
        case EMU_CK_RESTORE: rc = do_restore(map); break;
        case EMU_CK_UNLOCK: rc = do_unlock(); break;
        default: rc = CUDA_ERROR_INVALID_VALUE; break;
        }
        if (emu_st_lock(st) != 0)
            continue;
        ck->result = (int32_t)rc;
        ck->state = g_ck.state;
        __atomic_add_fetch(&ck->done, 1, __ATOMIC_RELEASE);
        emu_st_unlock(st);
        emu_futex_wake(&ck->done);
    }
    return NULL;
}

static void *ck_start(void *arg)
{
    g_ck.tid = (pid_t)syscall(SYS_gettid);
    return ck_main(arg);
}

void emu_ckpt_start(void)
{
    if (g_ck.started)
        return;
    pthread_attr_t a;
    pthread_t th;
    sigset_t all, old;
    sigfillset(&all);
    if (pthread_attr_init(&a) != 0)
        return;
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    /* The application's signals go to its own threads, never to ours. */
    pthread_sigmask(SIG_SETMASK, &all, &old);
    if (pthread_create(&th, &a, ck_start, NULL) == 0)
        g_ck.started = 1;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&a);
}

void emu_ckpt_forked(void)
{
    /* The child is a new process: running, with no thread of ours yet and nothing saved
     * (a fork cannot happen inside a driver call of a locked process: the caller would be
     * blocked; the parent's copies are its own). */
    pthread_mutex_init(&g_ck.mu, NULL);
    pthread_cond_init(&g_ck.cv, NULL);
    __atomic_store_n(&g_emu_ckpt_locked, 0, __ATOMIC_RELEASE);
    g_ck.started = 0;
    g_ck.state = CU_PROCESS_STATE_RUNNING;
    for (size_t i = 0; i < g_ck.nsaves; i++)
        free(g_ck.saves[i].copy);
    free(g_ck.saves);
    g_ck.saves = NULL;
    g_ck.nsaves = 0;
}

/* ---- in the requester ----------------------------------------------------------------- */

/* The slot of the process the caller knows as pid, or -1. */
static int find_slot(pid_t pid)
{
    emu_state *st = g_emu.sh.st;
    emu_ident ids[EMU_MAX_PROCS];
    if (emu_st_lock(st) != 0)
        return -1;
    for (int i = 0; i < EMU_MAX_PROCS; i++)
        ids[i] = st->slots[i].id;
    emu_st_unlock(st);
    uint64_t self_ns = emu_pidns_self();
    for (int i = 0; i < EMU_MAX_PROCS; i++) {
        if (ids[i].pid == 0)
            continue;
        if (ids[i].pidns == self_ns ? ids[i].pid == pid : emu_ident_visible_pid(&ids[i]) == pid)
            return i;
    }
    return -1;
}

static int same_ident(const emu_ident *a, const emu_ident *b)
{
    return a->pid == b->pid && a->pidns == b->pidns && a->start_time == b->start_time;
}

/* Sends op to pid's checkpoint thread and waits for its answer. */
static CUresult request(int pid, unsigned op, unsigned timeout_ms,
                        const uint8_t map[EMU_MAX_DEVICES])
{
    CUresult rc = emu_enter();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (pid <= 0)
        return CUDA_ERROR_INVALID_VALUE;
    int i = find_slot(pid);
    if (i < 0)
        return CUDA_ERROR_INVALID_VALUE;
    emu_state *st = g_emu.sh.st;
    emu_ident me;
    if (emu_ident_self(&me) != 0)
        return CUDA_ERROR_OPERATING_SYSTEM;
    if (emu_st_lock(st) != 0)
        return CUDA_ERROR_OPERATING_SYSTEM;
    emu_slot *s = &st->slots[i];
    emu_ident target = s->id;
    if (target.pid == 0 || s->ck.tid == 0) {
        emu_st_unlock(st);
        return CUDA_ERROR_INVALID_VALUE;
    }
    if (s->ck.claim.pid && emu_ident_alive(&s->ck.claim)) {
        emu_st_unlock(st);
        return CUDA_ERROR_ILLEGAL_STATE;
    }
    s->ck.claim = me;
    s->ck.op = op;
    s->ck.timeout_ms = timeout_ms;
    memset(s->ck.map, EMU_CK_SAME, sizeof s->ck.map);
    if (map)
        memcpy(s->ck.map, map, sizeof s->ck.map);
    uint32_t done = __atomic_load_n(&s->ck.done, __ATOMIC_ACQUIRE);
    __atomic_add_fetch(&s->ck.req, 1, __ATOMIC_RELEASE);
    emu_st_unlock(st);
    emu_futex_wake(&s->ck.req);
    for (;;) {
        emu_futex_wait(&s->ck.done, done, 100000000ull);
        if (__atomic_load_n(&s->ck.done, __ATOMIC_ACQUIRE) != done) {
            rc = (CUresult)__atomic_load_n(&s->ck.result, __ATOMIC_ACQUIRE);
            break;
        }
        if (emu_st_lock(st) != 0)
            continue;
        int gone = !same_ident(&s->id, &target) || !emu_shared_slot_alive(&g_emu.sh, i);
        emu_st_unlock(st);
        if (gone)
            return CUDA_ERROR_INVALID_VALUE; /* its slot (and the claim) went with it */
    }
    if (emu_st_lock(st) == 0) {
        if (same_ident(&s->id, &target) && same_ident(&s->ck.claim, &me))
            memset(&s->ck.claim, 0, sizeof s->ck.claim);
        emu_st_unlock(st);
    }
    return rc;
}

static int zeroed(const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        if (b[i])
            return 0;
    return 1;
}

CUresult cuCheckpointProcessGetRestoreThreadId(int pid, int *tid)
{
    CUresult rc = emu_enter();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (!tid || pid <= 0)
        return CUDA_ERROR_INVALID_VALUE;
    int i = find_slot(pid);
    if (i < 0 || emu_st_lock(g_emu.sh.st) != 0)
        return CUDA_ERROR_INVALID_VALUE;
    int32_t t = g_emu.sh.st->slots[i].ck.tid;
    emu_st_unlock(g_emu.sh.st);
    if (t == 0)
        return CUDA_ERROR_INVALID_VALUE;
    *tid = t;
    return CUDA_SUCCESS;
}

CUresult cuCheckpointProcessGetState(int pid, CUprocessState *state)
{
    CUresult rc = emu_enter();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (!state || pid <= 0)
        return CUDA_ERROR_INVALID_VALUE;
    int i = find_slot(pid);
    if (i < 0 || emu_st_lock(g_emu.sh.st) != 0)
        return CUDA_ERROR_INVALID_VALUE;
    const emu_ckpt *ck = &g_emu.sh.st->slots[i].ck;
    uint32_t s = ck->state;
    int32_t t = ck->tid;
    emu_st_unlock(g_emu.sh.st);
    if (t == 0)
        return CUDA_ERROR_INVALID_VALUE;
    *state = (CUprocessState)s;
    return CUDA_SUCCESS;
}

CUresult cuCheckpointProcessLock(int pid, CUcheckpointLockArgs *args)
{
    if (args && (args->reserved0 || !zeroed(args->reserved1, sizeof args->reserved1)))
        return CUDA_ERROR_INVALID_VALUE;
    return request(pid, EMU_CK_LOCK, args ? args->timeoutMs : 0, NULL);
}

CUresult cuCheckpointProcessCheckpoint(int pid, CUcheckpointCheckpointArgs *args)
{
    if (args && !zeroed(args->reserved, sizeof args->reserved))
        return CUDA_ERROR_INVALID_VALUE;
    return request(pid, EMU_CK_CHECKPOINT, 0, NULL);
}

/* The physical index of a device by UUID, or -1. */
static int phys_of(const CUuuid *u)
{
    for (unsigned d = 0; d < g_emu.cfg.ndev; d++)
        if (memcmp(g_emu.uuid[d], u->bytes, 16) == 0)
            return (int)d;
    return -1;
}

CUresult cuCheckpointProcessRestore(int pid, CUcheckpointRestoreArgs *args)
{
    CUresult rc = emu_enter();
    if (rc != CUDA_SUCCESS)
        return rc;
    uint8_t map[EMU_MAX_DEVICES];
    memset(map, EMU_CK_SAME, sizeof map);
    if (args) {
        if (!zeroed(args->reserved, sizeof args->reserved) || args->reserved1 ||
            (args->gpuPairsCount && !args->gpuPairs) || args->gpuPairsCount > EMU_MAX_DEVICES)
            return CUDA_ERROR_INVALID_VALUE;
        for (unsigned k = 0; k < args->gpuPairsCount; k++) {
            int from = phys_of(&args->gpuPairs[k].oldUuid);
            int to = phys_of(&args->gpuPairs[k].newUuid);
            if (from < 0 || to < 0 || map[from] != EMU_CK_SAME)
                return CUDA_ERROR_INVALID_VALUE;
            /* The emulated model is a function of the memory size (device.c). */
            if (g_emu.cfg.total[from] != g_emu.cfg.total[to])
                return CUDA_ERROR_NOT_SUPPORTED;
            map[from] = (uint8_t)to;
        }
    }
    return request(pid, EMU_CK_RESTORE, 0, map);
}

CUresult cuCheckpointProcessUnlock(int pid, CUcheckpointUnlockArgs *args)
{
    if (args && !zeroed(args->reserved, sizeof args->reserved))
        return CUDA_ERROR_INVALID_VALUE;
    return request(pid, EMU_CK_UNLOCK, 0, NULL);
}

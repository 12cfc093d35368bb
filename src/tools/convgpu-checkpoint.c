/* convgpu-checkpoint — the daemon's hands on the driver's process checkpoint API
 * (cuCheckpointProcess*, docs/PAUSE.md). convgpud links no GPU library and never loads
 * libcuda into its own process; it runs this small program, which dlopens libcuda.so.1
 * through the loader (a real driver, or the emulator), once per pause, resume or move.
 *
 *   convgpu-checkpoint probe                  exit 0 when the driver has the API
 *   convgpu-checkpoint state PID...           one line per pid: "PID STATE"
 *   convgpu-checkpoint pause [--timeout-ms N] PID...
 *       locks every process, then checkpoints every one; all or nothing: on a failure what
 *       was done is undone (restored, unlocked) before it exits 1
 *   convgpu-checkpoint resume [--map FROM=TO]... PID...
 *       brings every process back to running from wherever it is (checkpointed: restored,
 *       onto device TO for a process checkpointed on FROM; locked: unlocked; running: left),
 *       so a resume after an interrupted pause or resume finishes the job
 *
 * A stopped process (SIGSTOP: Slurm's `scontrol suspend`, a shell's job control; state T in
 * /proc/PID/stat) cannot run the thread the driver answers checkpoint requests on. For such a
 * process only that thread (cuCheckpointProcessGetRestoreThreadId) is set running for the
 * request: PTRACE_SEIZE takes it out of the group stop, PTRACE_CONT runs it alone, and
 * PTRACE_INTERRUPT + PTRACE_DETACH afterwards put it back into the stop (the kernel re-stops a
 * thread detached while its process is stopped). The application's threads never run. Needs
 * the right to trace the process (root, or CAP_SYS_PTRACE).
 *
 * Devices are the node's indices (NVML's order): the helper sets CUDA_DEVICE_ORDER=PCI_BUS_ID
 * and clears CUDA_VISIBLE_DEVICES so that CUDA ordinals are those indices. A pid that is not
 * a CUDA process (the driver knows no state for it) is skipped. Exit: 0 done, 1 failed (one
 * line on stderr per failure), 2 usage, 3 the driver has no checkpoint API, 4 no driver. */
#include "cuda_types.h"

#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>

#define MAX_PIDS 1024
#define MAX_MAP 16

static struct {
    PFN_cuInit init;
    PFN_cuGetErrorName err_name;
    PFN_cuDeviceGet device_get;
    PFN_cuDeviceGetUuid_v2 uuid;
    PFN_cuCheckpointProcessGetState get_state;
    PFN_cuCheckpointProcessLock lock;
    PFN_cuCheckpointProcessCheckpoint checkpoint;
    PFN_cuCheckpointProcessRestore restore;
    PFN_cuCheckpointProcessUnlock unlock;
    PFN_cuCheckpointProcessGetRestoreThreadId restore_tid;
} cu;

static const char *name(CUresult r)
{
    const char *s = NULL;
    if (!cu.err_name || cu.err_name(r, &s) != CUDA_SUCCESS || !s)
        return "CUDA_ERROR_?";
    return s;
}

static const char *state_name(CUprocessState s)
{
    switch (s) {
    case CU_PROCESS_STATE_RUNNING: return "running";
    case CU_PROCESS_STATE_LOCKED: return "locked";
    case CU_PROCESS_STATE_CHECKPOINTED: return "checkpointed";
    case CU_PROCESS_STATE_FAILED: return "failed";
    }
    return "unknown";
}

/* 0; 3 when a symbol is missing; 4 when there is no driver. */
static int load(void)
{
    setenv("CUDA_DEVICE_ORDER", "PCI_BUS_ID", 1);
    unsetenv("CUDA_VISIBLE_DEVICES");
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "convgpu-checkpoint: no driver: %s\n", dlerror());
        return 4;
    }
#define SYM(field, sym)                                                                      \
    do {                                                                                     \
        *(void **)&cu.field = dlsym(h, #sym);                                                \
        if (!cu.field) {                                                                     \
            fprintf(stderr, "convgpu-checkpoint: the driver has no %s (the checkpoint API "  \
                            "needs driver R550 or newer)\n", #sym);                          \
            return 3;                                                                        \
        }                                                                                    \
    } while (0)
    SYM(init, cuInit);
    SYM(err_name, cuGetErrorName);
    SYM(device_get, cuDeviceGet);
    SYM(uuid, cuDeviceGetUuid_v2);
    SYM(get_state, cuCheckpointProcessGetState);
    SYM(lock, cuCheckpointProcessLock);
    SYM(checkpoint, cuCheckpointProcessCheckpoint);
    SYM(restore, cuCheckpointProcessRestore);
    SYM(unlock, cuCheckpointProcessUnlock);
    SYM(restore_tid, cuCheckpointProcessGetRestoreThreadId);
#undef SYM
    CUresult r = cu.init(0);
    if (r != CUDA_SUCCESS) {
        fprintf(stderr, "convgpu-checkpoint: cuInit: %s\n", name(r));
        return 4;
    }
    return 0;
}

static int parse_pid(const char *s, int *pid)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v <= 0 || v > 0x3fffffff)
        return -1;
    *pid = (int)v;
    return 0;
}

static void nap(void)
{
    struct timespec ts = {0, 10000000};
    nanosleep(&ts, NULL);
}

/* The process's state, or -1 when the driver knows none (not a CUDA process). */
static int state_of(int pid)
{
    CUprocessState s;
    return cu.get_state(pid, &s) == CUDA_SUCCESS ? (int)s : -1;
}

static int cmd_state(int n, const int *pids)
{
    for (int i = 0; i < n; i++) {
        int s = state_of(pids[i]);
        printf("%d %s\n", pids[i], s < 0 ? "none" : state_name((CUprocessState)s));
    }
    return 0;
}

/* ---- stopped processes: their restore thread runs alone for the request ------------------ */

/* The tracer: ptrace requests are the seizing thread's alone, and a thawed thread may stop
 * again while the driver call that needs it runs on the main thread (Slurm's SIGSTOP comes a
 * second after its SIGTSTP; a SIGTERM may come): one thread of ours seizes, keeps the thawed
 * threads running (a stop signal is dropped, the group stays stopped; any other is handed on)
 * and puts them back into the stop at the end. */
static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t th;
    int started;
    int ask;       /* a tid to seize (0 none) */
    int answer;    /* 0 seized and running, else an errno */
    int answered;
    int done;      /* refreeze and end */
    int tids[MAX_PIDS], n;
} tr = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

static int stop_signal(int sig)
{
    return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

static void nap_ms(long ms)
{
    struct timespec ts = {0, ms * 1000000L};
    nanosleep(&ts, NULL);
}

static int seize(int tid)
{
    if (ptrace(PTRACE_SEIZE, tid, NULL, NULL) != 0)
        return errno;
    /* Seized in a group stop, it reports a stop (PTRACE_EVENT_STOP) before it takes orders. */
    int st;
    while (waitpid(tid, &st, __WALL) < 0)
        if (errno != EINTR)
            return errno;
    if (ptrace(PTRACE_CONT, tid, NULL, NULL) != 0) {
        int e = errno;
        ptrace(PTRACE_DETACH, tid, NULL, NULL);
        return e;
    }
    return 0;
}

static void refreeze_one(int tid)
{
    int st, sig = 0;
    if (ptrace(PTRACE_INTERRUPT, tid, NULL, NULL) == 0) {
        while (waitpid(tid, &st, __WALL) < 0 && errno == EINTR)
            ;
        if (WIFSTOPPED(st) && (st >> 16) == 0 && !stop_signal(WSTOPSIG(st)) &&
            WSTOPSIG(st) != SIGTRAP)
            sig = WSTOPSIG(st); /* a signal that came meanwhile goes on to the process */
    }
    /* Detached while its process is stopped, the kernel puts it back into the stop. */
    ptrace(PTRACE_DETACH, tid, NULL, (void *)(long)sig);
}

static void *tracer(void *arg)
{
    (void)arg;
    for (;;) {
        pthread_mutex_lock(&tr.mu);
        if (tr.ask) {
            int e = tr.n == MAX_PIDS ? ENOSPC : seize(tr.ask);
            if (e == 0)
                tr.tids[tr.n++] = tr.ask;
            tr.answer = e;
            tr.answered = 1;
            tr.ask = 0;
            pthread_cond_broadcast(&tr.cv);
        }
        if (tr.done) {
            for (int i = 0; i < tr.n; i++)
                refreeze_one(tr.tids[i]);
            tr.n = 0;
            pthread_mutex_unlock(&tr.mu);
            return NULL;
        }
        pthread_mutex_unlock(&tr.mu);
        int st;
        pid_t t = waitpid(-1, &st, __WALL | WNOHANG);
        if (t <= 0) {
            nap_ms(2);
            continue;
        }
        if (!WIFSTOPPED(st))
            continue; /* it ended */
        int sig = WSTOPSIG(st);
        /* An event stop (a group stop) or a stop signal: keep it running; another signal is
         * delivered. */
        long deliver = (st >> 16) == 0 && !stop_signal(sig) && sig != SIGTRAP ? sig : 0;
        ptrace(PTRACE_CONT, t, NULL, (void *)deliver);
    }
}

/* Whether pid is stopped (state T; not t, a debugger's stop, which is left alone). */
static int stopped(int pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *rp = strrchr(buf, ')'); /* the name may hold spaces and parentheses */
    return rp && rp[1] == ' ' && rp[2] == 'T';
}

/* Sets pid's restore thread running when pid is stopped: 0, or -1 (said on stderr). */
static int thaw(int pid)
{
    if (!stopped(pid))
        return 0;
    int tid;
    CUresult r = cu.restore_tid(pid, &tid);
    if (r != CUDA_SUCCESS) {
        fprintf(stderr, "convgpu-checkpoint: pid %d is stopped and the driver names no restore "
                        "thread: %s\n", pid, name(r));
        return -1;
    }
    pthread_mutex_lock(&tr.mu);
    for (int i = 0; i < tr.n; i++)
        if (tr.tids[i] == tid) {
            pthread_mutex_unlock(&tr.mu);
            return 0;
        }
    if (!tr.started) {
        if (pthread_create(&tr.th, NULL, tracer, NULL) != 0) {
            pthread_mutex_unlock(&tr.mu);
            fprintf(stderr, "convgpu-checkpoint: cannot start the tracer thread\n");
            return -1;
        }
        tr.started = 1;
    }
    tr.ask = tid;
    tr.answered = 0;
    while (!tr.answered)
        pthread_cond_wait(&tr.cv, &tr.mu);
    int e = tr.answer;
    pthread_mutex_unlock(&tr.mu);
    if (e != 0) {
        fprintf(stderr, "convgpu-checkpoint: pid %d is stopped and its restore thread %d "
                        "cannot be traced: %s\n", pid, tid, strerror(e));
        return -1;
    }
    return 0;
}

/* Back into the stop, every thread thawed. */
static void refreeze(void)
{
    if (!tr.started)
        return;
    pthread_mutex_lock(&tr.mu);
    tr.done = 1;
    pthread_mutex_unlock(&tr.mu);
    pthread_join(tr.th, NULL);
}

typedef struct {
    int from[MAX_MAP], to[MAX_MAP], n;
} dev_map;

static CUresult restore_one(int pid, const dev_map *m)
{
    CUcheckpointRestoreArgs args;
    CUcheckpointGpuPair pairs[MAX_MAP];
    memset(&args, 0, sizeof args);
    for (int k = 0; k < m->n; k++) {
        CUdevice a, b;
        CUresult r;
        if ((r = cu.device_get(&a, m->from[k])) != CUDA_SUCCESS ||
            (r = cu.device_get(&b, m->to[k])) != CUDA_SUCCESS ||
            (r = cu.uuid(&pairs[k].oldUuid, a)) != CUDA_SUCCESS ||
            (r = cu.uuid(&pairs[k].newUuid, b)) != CUDA_SUCCESS)
            return r;
    }
    args.gpuPairs = m->n ? pairs : NULL;
    args.gpuPairsCount = (unsigned)m->n;
    return cu.restore(pid, m->n ? &args : NULL);
}

/* Brings pid back to running from wherever it is. */
static int resume_one(int pid, const dev_map *m)
{
    if (state_of(pid) > CU_PROCESS_STATE_RUNNING && thaw(pid) != 0)
        return -1;
    for (int tries = 0; tries < 1000; tries++) {
        int s = state_of(pid);
        CUresult r = CUDA_SUCCESS;
        switch (s) {
        case -1:
        case CU_PROCESS_STATE_RUNNING:
            return 0;
        case CU_PROCESS_STATE_LOCKED:
            r = cu.unlock(pid, NULL);
            break;
        case CU_PROCESS_STATE_CHECKPOINTED:
            r = restore_one(pid, m);
            break;
        default:
            fprintf(stderr, "convgpu-checkpoint: pid %d: the driver says it failed\n", pid);
            return -1;
        }
        if (r == CUDA_ERROR_ILLEGAL_STATE) { /* another requester, or a change under us */
            nap();
            continue;
        }
        if (r != CUDA_SUCCESS) {
            fprintf(stderr, "convgpu-checkpoint: pid %d: %s: %s\n", pid,
                    s == CU_PROCESS_STATE_LOCKED ? "unlock" : "restore", name(r));
            return -1;
        }
    }
    fprintf(stderr, "convgpu-checkpoint: pid %d: its state kept changing\n", pid);
    return -1;
}

static int cmd_resume(int n, const int *pids, const dev_map *m)
{
    int bad = 0;
    for (int i = 0; i < n; i++) {
        if (resume_one(pids[i], m) != 0)
            bad = 1;
        else
            printf("%d running\n", pids[i]);
    }
    return bad;
}

static int cmd_pause(int n, const int *pids, unsigned timeout_ms)
{
    static const dev_map none;
    int locked = 0, done = 0;
    CUcheckpointLockArgs la;
    memset(&la, 0, sizeof la);
    la.timeoutMs = timeout_ms;
    for (; locked < n; locked++) {
        if (state_of(pids[locked]) < 0) {
            printf("%d skipped (not a CUDA process)\n", pids[locked]);
            continue;
        }
        if (thaw(pids[locked]) != 0)
            goto undo;
        CUresult r = cu.lock(pids[locked], &la);
        if (r != CUDA_SUCCESS) {
            fprintf(stderr, "convgpu-checkpoint: pid %d: lock: %s\n", pids[locked], name(r));
            goto undo;
        }
    }
    for (; done < n; done++) {
        if (state_of(pids[done]) < 0)
            continue;
        CUresult r = cu.checkpoint(pids[done], NULL);
        if (r != CUDA_SUCCESS) {
            fprintf(stderr, "convgpu-checkpoint: pid %d: checkpoint: %s\n", pids[done],
                    name(r));
            goto undo;
        }
        printf("%d checkpointed\n", pids[done]);
    }
    return 0;
undo:
    for (int i = 0; i < locked; i++)
        resume_one(pids[i], &none);
    return 1;
}

static int usage(void)
{
    fprintf(stderr, "usage: convgpu-checkpoint probe\n"
                    "       convgpu-checkpoint state PID...\n"
                    "       convgpu-checkpoint pause [--timeout-ms N] PID...\n"
                    "       convgpu-checkpoint resume [--map FROM=TO]... PID...\n");
    return 2;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return usage();
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0) {
        usage();
        return 0;
    }
    unsigned timeout_ms = 0;
    dev_map map = {.n = 0};
    static int pids[MAX_PIDS];
    int n = 0;
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--timeout-ms") == 0 && i + 1 < argc) {
            int v;
            if (parse_pid(argv[++i], &v) != 0)
                return usage();
            timeout_ms = (unsigned)v;
        } else if (strcmp(argv[i], "--map") == 0 && i + 1 < argc) {
            int a, b;
            char tail;
            if (map.n == MAX_MAP || sscanf(argv[++i], "%d=%d%c", &a, &b, &tail) != 2 || a < 0 ||
                b < 0)
                return usage();
            map.from[map.n] = a;
            map.to[map.n++] = b;
        } else if (n == MAX_PIDS || parse_pid(argv[i], &pids[n++]) != 0) {
            return usage();
        }
    }
    int probe = strcmp(cmd, "probe") == 0;
    if (!probe && strcmp(cmd, "state") != 0 && strcmp(cmd, "pause") != 0 &&
        strcmp(cmd, "resume") != 0)
        return usage();
    if ((probe && n) || (!probe && !n))
        return usage();
    int rc = load();
    if (rc != 0 || probe)
        return rc;
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (strcmp(cmd, "state") == 0)
        return cmd_state(n, pids);
    rc = strcmp(cmd, "pause") == 0 ? cmd_pause(n, pids, timeout_ms) : cmd_resume(n, pids, &map);
    refreeze();
    return rc;
}

/* pause.c — pause, resume and move through the driver's checkpoint API (pause.h). The helper
 * (convgpu-checkpoint) runs beside the loop: its output is a pipe in the loop, and its end is
 * read there; the daemon never waits for a driver. */
#include "pause.h"
#include "daemon.h"
#include "log.h"
#include "notice.h"
#include "size.h"
#include "store.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef CONVGPU_LIBEXECDIR
#define CONVGPU_LIBEXECDIR "/usr/libexec"
#endif

#define HELPER_OUT_MAX 1024
#define PIDS_MAX 1024

const char *pause_phase_name(enum pause_phase p)
{
    switch (p) {
    case PAUSE_PAUSING: return "pausing";
    case PAUSE_PAUSED: return "paused";
    case PAUSE_RESUMING: return "resuming";
    default: return "running";
    }
}

const char *pause_state_name(struct daemon *d, const struct container *c)
{
    if (c->pause.phase == PAUSE_PAUSED && !c->pause.automatic &&
        cg_swap_hold_of(d->core, c->cid) == CG_HOLD_NONE)
        return "resuming"; /* asked back, waiting for its memory */
    return pause_phase_name(c->pause.phase);
}

static void wake(_Atomic uint32_t *w)
{
    syscall(SYS_futex, (uint32_t *)w, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

static void gate(struct container *c, bool up)
{
    if (up) {
        atomic_fetch_or(&c->ledger->compute.gate, CG_GATE_PAUSED);
    } else {
        atomic_fetch_and(&c->ledger->compute.gate, ~CG_GATE_PAUSED);
        wake(&c->ledger->compute.gate);
    }
}

/* Test-only fault injection: CONVGPUD_TEST_PAUSE_HOLD=STEP:FILE holds the daemon at STEP
 * ("checkpointed": the helper paused every process, nothing stored yet; "restored": the
 * helper resumed them, the core not told) after creating FILE, until it is killed. */
static void hold_at(const char *step)
{
    const char *v = getenv("CONVGPUD_TEST_PAUSE_HOLD");
    size_t n = strlen(step);
    if (!v || strncmp(v, step, n) != 0 || v[n] != ':')
        return;
    int fd = open(v + n + 1, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd >= 0)
        close(fd);
    log_warn("test: held at %s until killed", step);
    for (;;)
        pause();
}

/* ---- the helper ---------------------------------------------------------------------- */

static void helper_path(const struct daemon *d, char *out, size_t len)
{
    if (d->opt.checkpoint_helper[0]) {
        snprintf(out, len, "%s", d->opt.checkpoint_helper);
        return;
    }
    snprintf(out, len, "%s/convgpu-checkpoint", d->exe_dir);
    if (access(out, X_OK) != 0)
        snprintf(out, len, "%s/convgpu/convgpu-checkpoint", CONVGPU_LIBEXECDIR);
}

/* Starts the helper with argv (argv[0] is replaced by its path), its stdout and stderr on a
 * pipe: the child's pid, *fd the pipe; -1 on failure. */
static pid_t spawn(struct daemon *d, char **argv, int *fd)
{
    char path[PATH_MAX + 32];
    helper_path(d, path, sizeof path);
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0)
        return -1;
    pid_t pid = fork();
    if (pid < 0) {
        close(p[0]);
        close(p[1]);
        return -1;
    }
    if (pid == 0) {
        /* Dies with the daemon: a restarted one finishes what it was doing (pause.h). */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        dup2(p[1], 1);
        dup2(p[1], 2);
        if (d->opt.emulate[0])
            setenv("LD_LIBRARY_PATH", d->emu_dir, 1);
        argv[0] = path;
        execv(path, argv);
        dprintf(2, "cannot run %s: %s\n", path, strerror(errno));
        _exit(4);
    }
    close(p[1]);
    *fd = p[0];
    return pid;
}

/* Runs the helper to its end (start-up and restart only): its exit status, its words in out. */
static int run_sync(struct daemon *d, char **argv, char *out, size_t len)
{
    int fd;
    pid_t pid = spawn(d, argv, &fd);
    if (pid < 0) {
        snprintf(out, len, "cannot start the checkpoint helper: %s", strerror(errno));
        return -1;
    }
    size_t at = 0;
    char buf[256];
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR))
        for (ssize_t i = 0; i < n && at + 1 < len; i++)
            out[at++] = buf[i];
    out[at] = '\0';
    while (at && (out[at - 1] == '\n'))
        out[--at] = '\0';
    close(fd);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Whether the driver has the API; asked once. */
static bool api_present(struct daemon *d)
{
    if (d->checkpoint_api == 0) {
        char *argv[] = {"convgpu-checkpoint", "probe", NULL};
        char out[256];
        int rc = run_sync(d, argv, out, sizeof out);
        d->checkpoint_api = rc == 0 ? 1 : 2;
        const char *nl = strrchr(out, '\n');
        snprintf(d->checkpoint_why, sizeof d->checkpoint_why, "%s",
                 rc == 0 ? "" : out[0] ? (nl ? nl + 1 : out) : "the checkpoint helper failed");
        if (rc != 0)
            log_warn("pause: %s", d->checkpoint_why);
    }
    return d->checkpoint_api == 1;
}

bool pause_auto_available(struct daemon *d)
{
    if (!d->opt.auto_pause)
        return false;
    if (!api_present(d)) {
        log_warn("--auto-pause yes: the driver has no checkpoint API (%s): victims are only "
                 "swapped", d->checkpoint_why);
        return false;
    }
    return true;
}

enum op { OP_PAUSE, OP_RESUME };

struct job {
    struct daemon *d;
    char id[65];
    enum op op;
    pid_t pid;
    int fd;
    char out[HELPER_OUT_MAX];
    size_t len;
};

/* The pids of c's processes, as the helper's arguments after `prefix` ones. */
static char **args_for(const struct container *c, char **prefix, size_t nprefix)
{
    size_t n = 0;
    for (const struct proc *p = c->procs; p; p = p->next)
        n += p->welcomed;
    if (n > PIDS_MAX)
        n = PIDS_MAX;
    char **argv = calloc(nprefix + n + 1, sizeof *argv);
    if (!argv)
        return NULL;
    for (size_t i = 0; i < nprefix; i++)
        argv[i] = prefix[i];
    size_t k = nprefix;
    for (const struct proc *p = c->procs; p && k < nprefix + n; p = p->next) {
        if (!p->welcomed)
            continue;
        char b[16];
        snprintf(b, sizeof b, "%d", (int)p->pid);
        if (!(argv[k++] = strdup(b))) {
            for (size_t j = nprefix; j < k - 1; j++)
                free(argv[j]);
            free(argv);
            return NULL;
        }
    }
    return argv;
}

static void free_args(char **argv, size_t nprefix)
{
    for (size_t i = nprefix; argv && argv[i]; i++)
        free(argv[i]);
    free(argv);
}

static void finished(struct daemon *d, struct container *c, enum op op, bool ok, const char *out);

static void on_helper(void *ctx, uint32_t events)
{
    (void)events;
    struct job *j = ctx;
    char buf[512];
    ssize_t n = read(j->fd, buf, sizeof buf);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (n > 0) {
        for (ssize_t i = 0; i < n; i++) {
            if (j->len + 1 >= sizeof j->out) { /* keep the last words */
                memmove(j->out, j->out + sizeof j->out / 2, sizeof j->out / 2);
                j->len -= sizeof j->out / 2;
            }
            j->out[j->len++] = buf[i];
        }
        j->out[j->len] = '\0';
        return;
    }
    loop_del(j->d->loop, j->fd);
    close(j->fd);
    int st = 0;
    while (waitpid(j->pid, &st, 0) < 0 && errno == EINTR)
        ;
    while (j->len && j->out[j->len - 1] == '\n')
        j->out[--j->len] = '\0';
    struct container *c = container_find(j->d, j->id);
    if (c && c->pause.busy) {
        c->pause.busy = false;
        finished(j->d, c, j->op, WIFEXITED(st) && WEXITSTATUS(st) == 0, j->out);
        decide_flush(j->d);
    } else {
        log_info("pause: container %s went while its helper ran", j->id);
    }
    free(j);
}

static int start(struct daemon *d, struct container *c, enum op op, char **argv)
{
    struct job *j = calloc(1, sizeof *j);
    if (!j)
        return -1;
    j->d = d;
    snprintf(j->id, sizeof j->id, "%s", c->ident.id);
    j->op = op;
    j->pid = spawn(d, argv, &j->fd);
    if (j->pid < 0) {
        free(j);
        return -1;
    }
    fcntl(j->fd, F_SETFL, O_NONBLOCK);
    if (loop_add(d->loop, j->fd, EPOLLIN, on_helper, j) != 0) {
        close(j->fd);
        kill(j->pid, SIGKILL);
        waitpid(j->pid, NULL, 0);
        free(j);
        return -1;
    }
    c->pause.busy = true;
    c->pause.since = loop_now_ns();
    return 0;
}

/* ---- the steps ----------------------------------------------------------------------- */

static int store_phase(struct daemon *d, struct container *c)
{
    if (!d->store)
        return 0;
    int rc = store_put_container(d->store, c);
    if (rc != 0)
        log_error("container %s: state.db did not take its phase %s: %s", c->ident.id,
                  pause_phase_name(c->pause.phase), store_error(d->store));
    return rc;
}

static void fail(struct container *c, const char *what, const char *out)
{
    const char *last = strrchr(out, '\n');
    snprintf(c->pause.error, sizeof c->pause.error, "%.40s: %.200s", what,
             out[0] ? (last ? last + 1 : out) : "the checkpoint helper failed");
    log_error("container %s: %s", c->ident.id, c->pause.error);
}

bool pause_carry_out(struct daemon *d, struct container *c)
{
    (void)d;
    if (c->pause.phase != PAUSE_PAUSING)
        return false;
    gate(c, true); /* first: nothing new starts while the processes are being locked */
    c->pause.out_due = true;
    return true;
}

static bool has_processes(const struct container *c)
{
    for (const struct proc *p = c->procs; p; p = p->next)
        if (p->welcomed)
            return true;
    return false;
}


/* After the core call that ordered it: the helper locks and checkpoints the processes. */
static void carry_out(struct daemon *d, struct container *c)
{
    c->pause.since = loop_now_ns();
    if (!has_processes(c)) {
        finished(d, c, OP_PAUSE, true, "");
        return;
    }
    char *prefix[] = {"convgpu-checkpoint", "pause", "--timeout-ms", "60000"};
    char **argv = args_for(c, prefix, 4);
    if (!argv || start(d, c, OP_PAUSE, argv) != 0) {
        free_args(argv, 4);
        finished(d, c, OP_PAUSE, false, "cannot start the checkpoint helper");
        return;
    }
    free_args(argv, 4);
    log_info("container %s: pausing (checkpointing its processes)", c->ident.id);
}

static int do_move(struct daemon *d, struct container *c, unsigned dev, char *err,
                   size_t errlen);

static void paused(struct daemon *d, struct container *c)
{
    hold_at("checkpointed");
    uint64_t now = loop_now_ns();
    /* Stored before the core lets go of the memory: a restart that finds PAUSING knows the
     * memory is still the container's (pause.h). */
    c->pause.phase = PAUSE_PAUSED;
    c->pause.error[0] = '\0';
    store_phase(d, c);
    size_t n = cg_container_processes(d->core, c->cid, NULL, 0);
    cg_process_info *all = n ? calloc(n, sizeof *all) : NULL;
    uint64_t total = 0;
    if (all) {
        n = cg_container_processes(d->core, c->cid, all, n);
        for (size_t i = 0; i < n; i++)
            if (all[i].used && cg_process_swap_out(d->core, c->cid, all[i].pid, all[i].used,
                                                   now) == CG_OK)
                total += all[i].used;
        free(all);
    }
    cg_swap_out_done(d->core, c->cid, now);
    c->pause.bytes = total;
    c->pause.out_ns = now - c->pause.since;
    c->pause.pauses++;
    log_info("container %s: paused, %llu bytes off the device in %.3f s", c->ident.id,
             (unsigned long long)total, (double)c->pause.out_ns / 1e9);
    notice_finding(d, "paused", c, 0, total);
    c->decide.dirty = true;
    if (c->pause.move_asked) {
        c->pause.move_asked = false;
        char err[256];
        if (do_move(d, c, c->pause.move_to, err, sizeof err) != 0) {
            snprintf(c->pause.error, sizeof c->pause.error, "move: %.200s", err);
            log_error("container %s: %s (it stays paused)", c->ident.id, c->pause.error);
        }
    }
}

static void resumed(struct daemon *d, struct container *c)
{
    hold_at("restored");
    uint64_t now = loop_now_ns();
    c->pause.in_ns = now - c->pause.since;
    c->pause.phase = PAUSE_NONE;
    c->pause.automatic = false;
    c->pause.moved = false;
    store_phase(d, c);
    gate(c, false);
    cg_pause_in_done(d->core, c->cid, now);
    log_info("container %s: resumed, %llu bytes back in %.3f s", c->ident.id,
             (unsigned long long)c->pause.bytes, (double)c->pause.in_ns / 1e9);
    notice_finding(d, "resumed", c, 0, c->pause.bytes);
    c->pause.bytes = 0;
    c->decide.dirty = true;
}

static void finished(struct daemon *d, struct container *c, enum op op, bool ok, const char *out)
{
    if (op == OP_PAUSE && ok) {
        paused(d, c);
    } else if (op == OP_PAUSE) {
        /* The helper undid what it did: every process runs. The core's move out ends with
         * nothing moved, and the container comes straight back (pause_flush sees PAUSING). */
        fail(c, "pause failed", out);
        notice_finding(d, "pause-failed", c, 0, 0);
        uint64_t now = loop_now_ns();
        cg_swap_out_done(d->core, c->cid, now);
        cg_pause_resume(d->core, c->cid, now);
    } else if (ok) {
        resumed(d, c);
    } else {
        /* Still checkpointed (the driver could not restore: memory taken outside convgpu?):
         * kept resuming; the next try comes with the next decision or the operator's resume. */
        fail(c, "resume failed", out);
        notice_finding(d, "resume-failed", c, 0, 0);
        c->pause.retry = true; /* the next convgpu resume tries again */
    }
}

bool pause_mark_in(struct container *c)
{
    if (c->pause.phase == PAUSE_NONE)
        return false;
    c->pause.in_due = true;
    return true;
}

static void carry_in(struct daemon *d, struct container *c)
{
    if (c->pause.phase == PAUSE_PAUSING) { /* a failed pause: nothing to restore */
        uint64_t now = loop_now_ns();
        c->pause.phase = PAUSE_NONE;
        c->pause.automatic = false;
        store_phase(d, c);
        gate(c, false);
        cg_pause_in_done(d->core, c->cid, now);
        c->decide.dirty = true;
        return;
    }
    /* Stored after the core reserved the memory back: a restart that finds RESUMING knows it
     * may finish the restore (pause.h). */
    c->pause.phase = PAUSE_RESUMING;
    c->pause.error[0] = '\0';
    store_phase(d, c);
    c->pause.since = loop_now_ns();
    if (!has_processes(c)) {
        finished(d, c, OP_RESUME, true, "");
        return;
    }
    char map[32];
    snprintf(map, sizeof map, "%u=%u", c->pause.from_dev, c->device);
    char *with_map[] = {"convgpu-checkpoint", "resume", "--map", map};
    char *plain[] = {"convgpu-checkpoint", "resume"};
    size_t np = c->pause.moved ? 4 : 2;
    char **argv = args_for(c, c->pause.moved ? with_map : plain, np);
    if (!argv || start(d, c, OP_RESUME, argv) != 0) {
        free_args(argv, np);
        fail(c, "resume failed", "cannot start the checkpoint helper");
        c->pause.retry = true;
        return;
    }
    free_args(argv, np);
    log_info("container %s: resuming (restoring its processes%s)", c->ident.id,
             c->pause.moved ? " onto its new device" : "");
}

void pause_flush(struct daemon *d)
{
    for (struct container *c = d->containers; c; c = c->next) {
        if (c->pause.out_due && !c->pause.busy) {
            c->pause.out_due = false;
            if (c->pause.phase == PAUSE_NONE && c->pause.automatic) {
                /* The scheduler's checkpoint of a victim: as pause_request, after the core
                 * call that ordered it (the slots frozen, the phase stored first). */
                decide_freeze(d, c);
                c->pause.phase = PAUSE_PAUSING;
                c->pause.error[0] = '\0';
                store_phase(d, c);
                log_info("container %s: checkpointed as the scheduler's victim (--auto-pause)",
                         c->ident.id);
            }
            carry_out(d, c);
        }
        if (c->pause.in_due && !c->pause.busy) {
            c->pause.in_due = false;
            carry_in(d, c);
        }
    }
}

/* ---- requests ------------------------------------------------------------------------ */

static int refuse(struct container *c, int status, char *err, size_t errlen, const char *why)
{
    snprintf(err, errlen, "container %s %s", c->ident.id, why);
    return status;
}

int pause_request(struct daemon *d, struct container *c, char *err, size_t errlen)
{
    if (c->pause.phase != PAUSE_NONE)
        return refuse(c, 409, err, errlen, c->pause.phase == PAUSE_PAUSED ? "is paused already"
                                           : c->pause.phase == PAUSE_PAUSING ? "is pausing"
                                                                              : "is resuming");
    if (c->gang.nmembers > 1 || c->gang.leader)
        return refuse(c, 409, err, errlen, "is on several GPUs: it cannot be paused");
    if (c->swap.phase != SWAP_RESIDENT)
        return refuse(c, 409, err, errlen, "is swapped out or moving: swap it in first");
    if (!api_present(d)) {
        if (d->opt.pause_fallback_swap) {
            int rc = swap_request(d, c, CG_HOLD_OPERATOR, err, errlen);
            return rc == 0 ? PAUSE_SWAPPING : rc;
        }
        snprintf(err, errlen, "the driver cannot pause container %s: %s (convgpud "
                              "--pause-fallback swap swaps it out instead)", c->ident.id,
                 d->checkpoint_why);
        return 501;
    }
    decide_freeze(d, c);
    c->pause.phase = PAUSE_PAUSING;
    c->pause.error[0] = '\0';
    int rc = store_phase(d, c);
    if (rc != 0) {
        c->pause.phase = PAUSE_NONE;
        snprintf(err, errlen, "container %s: not paused: the state could not be saved (%s)",
                 c->ident.id, store_error(d->store));
        return rc;
    }
    cg_status st = cg_pause(d->core, c->cid, loop_now_ns()); /* the sink starts the helper */
    if (st != CG_OK) {
        c->pause.phase = PAUSE_NONE;
        store_phase(d, c);
        return refuse(c, 409, err, errlen, st == CG_ERR_STATE ? "cannot be paused now (a gang "
                                                                "member, or moving)"
                                                              : cg_status_str(st));
    }
    decide_flush(d);
    return 0;
}

int pause_resume_request(struct daemon *d, struct container *c, char *err, size_t errlen)
{
    if (c->pause.phase == PAUSE_RESUMING) {
        if (c->pause.retry && !c->pause.busy) {
            c->pause.retry = false;
            c->pause.in_due = true;
            decide_flush(d);
        }
        return 0;
    }
    if (c->pause.phase == PAUSE_PAUSING)
        return refuse(c, 409, err, errlen, "is pausing: resume it once it is paused");
    if (c->pause.phase != PAUSE_PAUSED)
        return refuse(c, 409, err, errlen, "is not paused");
    c->pause.move_asked = false;
    c->pause.since = loop_now_ns();
    cg_status st = cg_pause_resume(d->core, c->cid, loop_now_ns());
    if (st != CG_OK)
        return refuse(c, 409, err, errlen, cg_status_str(st));
    if (d->store)
        store_put_container(d->store, c); /* not held any more */
    decide_flush(d);
    return 0;
}

static int do_move(struct daemon *d, struct container *c, unsigned dev, char *err,
                   size_t errlen)
{
    char b1[CG_SIZE_BUFLEN], b2[CG_SIZE_BUFLEN];
    cg_container_info ci = {0};
    cg_container_get(d->core, c->cid, loop_now_ns(), &ci);
    cg_status st = cg_pause_move_check(d->core, c->cid, dev);
    if (st == CG_ERR_NOT_FREE) {
        cg_device_info di = {0};
        cg_device_get(d->core, dev, &di);
        snprintf(err, errlen, "device %u has not %s free for container %s (%s free now)", dev,
                 cg_format_size(ci.swapped, b1, sizeof b1), c->ident.id,
                 cg_format_size(di.free, b2, sizeof b2));
        return 409;
    }
    if (st != CG_OK) {
        snprintf(err, errlen, "container %s cannot move to device %u: %s", c->ident.id, dev,
                 cg_status_str(st));
        return 409;
    }
    unsigned from = c->device;
    /* Stored first: a restart restores it paused on its new device, its processes to be
     * restored there from where they were checkpointed. */
    struct stored_container row;
    if (d->store) {
        store_row_of(c, &row);
        row.device = (int)dev;
        row.pause = PAUSE_PAUSED;
        row.pause_from = (int)from;
        int rc = store_put_row(d->store, &row);
        if (rc != 0) {
            snprintf(err, errlen, "container %s: not moved: the state could not be saved (%s)",
                     c->ident.id, store_error(d->store));
            return rc;
        }
    }
    if (!c->pause.moved) {
        c->pause.moved = true;
        c->pause.from_dev = from;
    }
    c->device = dev;
    c->ledger->device = dev;
    c->pause.since = loop_now_ns();
    st = cg_pause_move(d->core, c->cid, dev, loop_now_ns());
    if (st != CG_OK) { /* checked just above with nothing in between: not expected */
        c->device = from;
        c->ledger->device = from;
        c->pause.moved = c->pause.from_dev != from;
        if (d->store)
            store_put_container(d->store, c);
        snprintf(err, errlen, "container %s cannot move to device %u: %s", c->ident.id, dev,
                 cg_status_str(st));
        return 409;
    }
    log_info("container %s: moving from device %u to device %u", c->ident.id, from, dev);
    notice_finding(d, "moving", c, 0, ci.swapped);
    decide_flush(d);
    return 0;
}

int pause_move_request(struct daemon *d, struct container *c, int dev, char *err,
                       size_t errlen)
{
    if (dev < 0 || (unsigned)dev >= d->ndevices) {
        snprintf(err, errlen, "no device %d (this node has %u)", dev, d->ndevices);
        return 400;
    }
    if ((unsigned)dev == c->device)
        return refuse(c, 409, err, errlen, "is on that device already");
    const struct device *to = &d->devices[dev], *from = &d->devices[c->device];
    if (strcmp(to->name, from->name) != 0 || to->total != from->total) {
        char b1[CG_SIZE_BUFLEN], b2[CG_SIZE_BUFLEN];
        snprintf(err, errlen, "device %d is a %s (%s), container %s is on a %s (%s): a process "
                              "is restored only onto a GPU of the model it was checkpointed on",
                 dev, to->name, cg_format_size(to->total, b1, sizeof b1), c->ident.id, from->name,
                 cg_format_size(from->total, b2, sizeof b2));
        return 409;
    }
    if (c->pause.phase == PAUSE_PAUSED)
        return cg_paused(d->core, c->cid) && cg_swap_hold_of(d->core, c->cid) != CG_HOLD_NONE
                   ? do_move(d, c, (unsigned)dev, err, errlen)
                   : refuse(c, 409, err, errlen, "is resuming");
    if (c->pause.phase != PAUSE_NONE)
        return refuse(c, 409, err, errlen, "is pausing or resuming: move it once paused");
    int rc = pause_request(d, c, err, errlen);
    if (rc == 0 && c->pause.phase != PAUSE_NONE) {
        c->pause.move_asked = true;
        c->pause.move_to = (unsigned)dev;
    } else if (rc == PAUSE_SWAPPING) {
        return refuse(c, 409, err, errlen, "was swapped out instead of paused (no checkpoint "
                                           "API): it cannot move");
    }
    return rc;
}

/* ---- restart ------------------------------------------------------------------------- */

void pause_recover(struct daemon *d, struct container *c, const struct stored_container *sc)
{
    c->pause.stop_seen = sc->pause_stop; /* a followed stop outlives the daemon */
    if (sc->pause == PAUSE_PAUSED) {
        c->pause.phase = PAUSE_PAUSED;
        c->pause.resume_asked = sc->swap_held == CG_HOLD_NONE;
        if (sc->pause_from >= 0 && (unsigned)sc->pause_from != c->device) {
            c->pause.moved = true;
            c->pause.from_dev = (unsigned)sc->pause_from;
        }
        gate(c, true);
        return;
    }
    if (sc->pause != PAUSE_PAUSING && sc->pause != PAUSE_RESUMING)
        return;
    /* Every process back to running, from wherever the dead daemon left it. */
    size_t n = 0;
    for (uint32_t i = 0; i < CG_LEDGER_SLOTS; i++)
        n += c->rec->slots[i].pid != 0;
    char **argv = calloc(n + 5, sizeof *argv);
    char map[32];
    size_t k = 0;
    if (argv) {
        argv[k++] = "convgpu-checkpoint";
        argv[k++] = "resume";
        if (sc->pause == PAUSE_RESUMING && sc->pause_from >= 0 &&
            (unsigned)sc->pause_from != c->device) {
            snprintf(map, sizeof map, "%d=%u", sc->pause_from, c->device);
            argv[k++] = "--map";
            argv[k++] = map;
        }
    }
    size_t first = k;
    for (uint32_t i = 0; argv && i < CG_LEDGER_SLOTS; i++) {
        char b[16];
        if (!c->rec->slots[i].pid)
            continue;
        snprintf(b, sizeof b, "%u", (unsigned)c->rec->slots[i].pid);
        argv[k++] = strdup(b);
    }
    char out[HELPER_OUT_MAX];
    int rc = k > first ? run_sync(d, argv, out, sizeof out) : 0;
    for (size_t i = first; argv && i < k; i++)
        free(argv[i]);
    free(argv);
    if (rc != 0)
        log_error("container %s: was %s when the daemon stopped; bringing its processes back "
                  "failed: %s (counted as running)", c->ident.id, pause_phase_name(sc->pause),
                  argv ? out : "out of memory");
    else
        log_warn("container %s: was %s when the daemon stopped; its processes run again",
                 c->ident.id, pause_phase_name(sc->pause));
    gate(c, false);
    c->pause.phase = PAUSE_NONE;
    store_phase(d, c);
}

bool pause_restoring_paused(const struct container *c) { return c->pause.phase == PAUSE_PAUSED; }

void pause_adopt(struct daemon *d, struct container *c, uint64_t key, uint64_t used)
{
    cg_status st = cg_process_set_use(d->core, c->cid, key, 0, loop_now_ns());
    if (st == CG_OK)
        st = cg_process_restore_swapped(d->core, c->cid, key, used);
    if (st != CG_OK)
        log_error("container %s: a paused process's %llu bytes could not be restored: %s",
                  c->ident.id, (unsigned long long)used, cg_status_str(st));
    c->pause.bytes += used;
}

void pause_restored(struct daemon *d, struct container *c)
{
    cg_status st = cg_pause_restore(d->core, c->cid, loop_now_ns());
    if (st != CG_OK) {
        log_error("container %s: cannot restore it paused: %s", c->ident.id, cg_status_str(st));
        return;
    }
    log_info("container %s: restored paused (%llu bytes on the host%s)", c->ident.id,
             (unsigned long long)c->pause.bytes, c->pause.moved ? ", moving" : "");
    if (c->pause.resume_asked) {
        c->pause.resume_asked = false;
        cg_pause_resume(d->core, c->cid, loop_now_ns());
    }
    c->decide.dirty = true;
}

/* ---- the decision sink's carrier (daemon.h, struct decide_swap_ops) ------------------------
 * The core's orders out and in are a pause's or a swap's: pause.c sits above swap.c and hands
 * a swap's on, so decide.c reaches both through one set of calls and calls neither by name. */

static void ops_carry_out(struct daemon *d, struct container *c)
{
    if (pause_carry_out(d, c))
        return;
    /* A victim the core chose to checkpoint (cg_config.auto_pause, victim_backend.c): a read
     * of the core's state, no call that changes it; the gate first, the rest after the core
     * call (pause_flush). */
    if (c->pause.phase == PAUSE_NONE && d->opt.auto_pause && cg_paused(d->core, c->cid)) {
        gate(c, true);
        c->pause.automatic = true;
        c->pause.out_due = true;
        return;
    }
    swap_for_decide.carry_out(d, c);
}

static void ops_mark_in(struct container *c, uint64_t bytes)
{
    if (!pause_mark_in(c))
        swap_for_decide.mark_in(c, bytes);
}

static void ops_flush(struct daemon *d)
{
    swap_for_decide.flush(d);
    pause_flush(d);
}

static void ops_wake_kept(struct container *c) { swap_for_decide.wake_kept(c); }

const struct decide_swap_ops pause_for_decide = {
    .carry_out = ops_carry_out,
    .mark_in = ops_mark_in,
    .flush = ops_flush,
    .wake_kept = ops_wake_kept,
};

/* gates.c — see gates.h. */
#include "gates.h"

#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core.h"
#include "daemon.h"
#include "notice.h"
#include "gpu.h"
#include "log.h"
#include "loop.h"

#include "compute.h" /* the core's controller */

#define DEFAULT_SAMPLE_US 166667ull /* NVML's period on recent GPUs, until we have seen ours */

#define PID_MEMORY 256

struct device_meter {
    unsigned long long last_seen;   /* newest sample timestamp consumed (us, wall clock) */
    uint64_t period_us;             /* the sample period: the smallest gap seen between two
                                     * samples of one process (samples of different processes
                                     * need not share a timestamp on a real GPU) */
    struct { pid_t pid; unsigned long long ts; } seen[PID_MEMORY]; /* last sample per process */
    unsigned seen_next;
    uint64_t measured_until;        /* monotonic ns: samples are complete up to here */
    uint64_t busy_total, busy_at_last;  /* every process's device time (for the device figure) */
    uint64_t until_at_last;
    uint32_t util_permille;
};

struct compute {
    cg_compute *cc;
    PFN_nvmlDeviceGetProcessUtilization util;
    uint64_t next_due;
    bool off;
    struct device_meter dev[CG_MAX_DEVICES];
    nvmlProcessUtilizationSample_t *samples;
    unsigned scap;
    cg_compute_input *in;
    cg_compute_gate *out;
    struct container **who;
    size_t cap;
    FILE *trace;                    /* CONVGPU_COMPUTE_TRACE, or NULL */
    bool trace_checked;
};

static struct compute *get(struct daemon *d)
{
    if (d->compute)
        return d->compute;
    struct compute *k = calloc(1, sizeof *k);
    if (!k)
        return NULL;
    d->compute = k;
    if (!d->nvml ||
        !(*(void **)&k->util = dlsym(d->nvml->h, "nvmlDeviceGetProcessUtilization"))) {
        log_warn("compute shares are not enforced: NVML has no per-process utilisation");
        k->off = true;
        return k;
    }
    if (!(k->cc = cg_compute_new(NULL))) {
        log_warn("compute shares are not enforced: out of memory");
        k->off = true;
        return k;
    }
    for (unsigned i = 0; i < CG_MAX_DEVICES; i++)
        k->dev[i].period_us = DEFAULT_SAMPLE_US;
    return k;
}

static uint64_t wall_minus_mono_ns(void)
{
    struct timespec w, m;
    clock_gettime(CLOCK_REALTIME, &w);
    clock_gettime(CLOCK_MONOTONIC, &m);
    return ((uint64_t)w.tv_sec - (uint64_t)m.tv_sec) * 1000000000ull + (uint64_t)w.tv_nsec -
           (uint64_t)m.tv_nsec;
}

static void learn_period(struct device_meter *m, pid_t pid, unsigned long long ts)
{
    for (unsigned i = 0; i < PID_MEMORY; i++) {
        if (m->seen[i].pid != pid)
            continue;
        unsigned long long gap = ts > m->seen[i].ts ? ts - m->seen[i].ts : 0;
        if (gap >= 10000 && gap < m->period_us)
            m->period_us = gap;
        m->seen[i].ts = ts;
        return;
    }
    m->seen[m->seen_next].pid = pid;
    m->seen[m->seen_next].ts = ts;
    m->seen_next = (m->seen_next + 1) % PID_MEMORY;
}

/* Reads the samples NVML has for `device` newer than the last ones and adds their device time
 * to the owning containers. */
static void measure(struct daemon *d, struct compute *k, unsigned device, uint64_t now)
{
    struct device_meter *m = &k->dev[device];
    nvmlDevice_t nd;
    if (d->nvml->handle(device, &nd) != NVML_SUCCESS)
        return;
    unsigned count = k->scap;
    nvmlReturn_t r = k->util(nd, k->samples, &count, m->last_seen);
    if (r == NVML_ERROR_INSUFFICIENT_SIZE && count > k->scap && count <= 65536) {
        void *bigger = realloc(k->samples, (size_t)count * 2 * sizeof *k->samples);
        if (!bigger)
            return;
        k->samples = bigger;
        k->scap = count * 2;
        count = k->scap;
        r = k->util(nd, k->samples, &count, m->last_seen);
    }
    uint64_t offset = wall_minus_mono_ns();
    if (r == NVML_ERROR_NOT_FOUND) {
        /* No sample newer than the last: nothing ran in the periods that ended since, except
         * those whose samples are not out yet. A period's sample may appear up to a period
         * after it ends (the emulated GPU: a quarter period; a real driver: its own delay), so
         * only time that ended two periods ago is taken as idle. Claiming the last period idle
         * before its sample came made a saturating container measure 0% for a step, look as if
         * it wanted nothing, and hand spare time to a container above its share (elastic 30/70
         * ran 40/60 with 50 ms kernels). */
        uint64_t done = now > 2 * m->period_us * 1000 ? now - 2 * m->period_us * 1000 : 0;
        if (done > m->measured_until)
            m->measured_until = done;
        return;
    }
    if (r != NVML_SUCCESS)
        return;
    unsigned long long newest = m->last_seen;
    for (unsigned i = 0; i < count && i < k->scap; i++) {
        const nvmlProcessUtilizationSample_t *s = &k->samples[i];
        if (s->timeStamp <= m->last_seen)
            continue;
        learn_period(m, (pid_t)s->pid, s->timeStamp);
        if (s->timeStamp > newest)
            newest = s->timeStamp;
        unsigned pct = s->smUtil > 100 ? 100 : s->smUtil;
        uint64_t busy = m->period_us * 1000 / 100 * pct;
        m->busy_total += busy;
        struct proc *p = proc_by_pid(d, (pid_t)s->pid);
        if (p && p->c->device == device)
            p->c->compute.busy_ns += busy;
    }
    if (newest > m->last_seen) {
        m->last_seen = newest;
        uint64_t until = newest * 1000 > offset ? newest * 1000 - offset : 0;
        if (until > now)
            until = now;
        if (until > m->measured_until)
            m->measured_until = until;
    }
}

static void futex_wake_all(_Atomic uint32_t *word)
{
    syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

static void write_gate(struct container *c, const cg_compute_gate *g, unsigned pct,
                       cg_compute_mode mode, uint64_t now)
{
    struct cg_ledger_compute *lc = &c->ledger->compute;
    atomic_store_explicit(&lc->share_pct, pct, memory_order_relaxed);
    atomic_store_explicit(&lc->mode, (uint32_t)mode, memory_order_relaxed);
    /* Only the compute bit is ours: a swap's bit (ledger.h) stays as it is. */
    if (g->open) {
        if (atomic_fetch_and_explicit(&lc->gate, ~CG_GATE_CLOSED, memory_order_release) ==
            CG_GATE_CLOSED)
            futex_wake_all(&lc->gate);
    } else {
        atomic_store_explicit(&lc->closed_until, now + COMPUTE_GATE_LEASE_NS, memory_order_relaxed);
        atomic_fetch_or_explicit(&lc->gate, CG_GATE_CLOSED, memory_order_release);
    }
    c->compute.util_permille = g->util_permille;
    c->compute.throttled_ns = atomic_load_explicit(&lc->throttled_ns, memory_order_relaxed);
    c->compute.throttled_launches =
        atomic_load_explicit(&lc->throttled_launches, memory_order_relaxed);
}

/* Whether a live process of the container waits at its gate: slots the daemon's record says
 * are held (a waiting count left in a free slot is not read). A claim: it only tells the
 * controller that the container wants time, which never raises a container above its share. */
static bool anyone_waiting(const struct container *c)
{
    uint32_t high = c->rec->high < CG_LEDGER_SLOTS ? c->rec->high : CG_LEDGER_SLOTS;
    for (uint32_t i = 0; i < high; i++)
        if (c->rec->slots[i].pid != 0 &&
            atomic_load_explicit(&c->ledger->slots[i].gate_waiting, memory_order_relaxed))
            return true;
    return false;
}

/* The gate is cooperative: a process that ignores it (a tenant that opens its own gate word, or
 * a program that reaches the driver without the interposer) keeps running while its container's
 * debt grows. A hard container deep in debt is reported once per episode, like the watchdog's
 * findings, and its processes are killed in the watchdog's kill mode. Legitimate debt is small:
 * the run-ahead bound keeps queued work to a few milliseconds, and kernels are not seconds long. */
#define OVER_SHARE_DEBT_NS (-1000000000ll)

static void over_share(struct daemon *d, struct container *c, const cg_compute_input *in,
                       const cg_compute_gate *g)
{
    bool deep = in->share_pct != 0 && in->mode == CG_COMPUTE_HARD && g->credit_ns < OVER_SHARE_DEBT_NS;
    if (!deep) {
        if (g->credit_ns >= 0)
            c->compute.over_reported = false;
        return;
    }
    if (c->compute.over_reported)
        return;
    c->compute.over_reported = true;
    log_warn("container %s runs past its hard compute share of %u%% with its gate closed "
             "(%.1f s of debt): a process ignores the gate%s",
             c->ident.id, in->share_pct, (double)-g->credit_ns / 1e9,
             d->opt.watchdog_kill ? "; killing its processes" : "");
    notice_finding(d, "watchdog-over-share", c, 0, 0);
    if (d->opt.watchdog_kill)
        for (struct proc *p = c->procs; p; p = p->next)
            if (p->welcomed && kill(p->pid, SIGKILL) != 0 && errno != ESRCH)
                log_warn("cannot kill pid %d: %s", (int)p->pid, strerror(errno));
}

/* CONVGPU_COMPUTE_TRACE=FILE in the daemon's environment: one line per container and step, what
 * the controller was told and what it decided (docs/OPERATIONS.md). A diagnostic for "why was
 * my container throttled": the operator's file, opened once; nothing else reads it. */
static void trace_step(struct compute *k, uint64_t now, size_t n)
{
    if (!k->trace_checked) {
        k->trace_checked = true;
        const char *path = getenv("CONVGPU_COMPUTE_TRACE");
        if (path && *path && !(k->trace = fopen(path, "we")))
            log_warn("CONVGPU_COMPUTE_TRACE: cannot open %s: %s", path, strerror(errno));
        if (k->trace)
            fprintf(k->trace, "# now_ns container share mode busy_ns measured_until_ns waiting "
                              "open spare credit_ns util_permille\n");
    }
    if (!k->trace)
        return;
    for (size_t j = 0; j < n; j++)
        fprintf(k->trace, "%llu %s %u %s %llu %llu %d %d %d %lld %u\n", (unsigned long long)now,
                k->who[j]->ident.id, k->in[j].share_pct, cg_compute_mode_name(k->in[j].mode),
                (unsigned long long)k->in[j].busy_total_ns,
                (unsigned long long)k->in[j].measured_until, (int)k->in[j].waiting,
                (int)k->out[j].open, (int)k->out[j].spare, (long long)k->out[j].credit_ns,
                k->out[j].util_permille);
    fflush(k->trace);
}

static void step(struct daemon *d, struct compute *k, uint64_t now)
{
    for (unsigned dev = 0; dev < d->ndevices && dev < CG_MAX_DEVICES; dev++) {
        struct device_meter *m = &k->dev[dev];
        measure(d, k, dev, now);
        if (m->measured_until > m->until_at_last) {
            uint64_t span = m->measured_until - m->until_at_last, busy = m->busy_total - m->busy_at_last;
            if (m->until_at_last)
                m->util_permille = (uint32_t)(busy >= span ? 1000 : busy * 1000 / span);
            d->devices[dev].compute_util_permille = m->util_permille;
            m->until_at_last = m->measured_until;
            m->busy_at_last = m->busy_total;
        }
    }
    size_t n = 0;
    for (struct container *c = d->containers; c; c = c->next)
        n++;
    if (n > k->cap) {
        size_t cap = n * 2;
        cg_compute_input *in = realloc(k->in, cap * sizeof *in);
        if (in)
            k->in = in;
        cg_compute_gate *out = realloc(k->out, cap * sizeof *out);
        if (out)
            k->out = out;
        struct container **who = realloc(k->who, cap * sizeof *who);
        if (who)
            k->who = who;
        if (!in || !out || !who)
            return; /* the gates stay as they are, their leases run out: no freeze */
        k->cap = cap;
    }
    size_t i = 0;
    for (struct container *c = d->containers; c; c = c->next) {
        cg_container_info info;
        if (!c->ledger || !c->rec || cg_container_get(d->core, c->cid, now, &info) != CG_OK)
            continue;
        k->who[i] = c;
        k->in[i] = (cg_compute_input){.key = c->cid, .device = c->device,
                                      .share_pct = info.compute_pct, .mode = info.compute_mode,
                                      .busy_total_ns = c->compute.busy_ns,
                                      .measured_until = k->dev[c->device].measured_until,
                                      .waiting = anyone_waiting(c)};
        i++;
    }
    cg_status s = cg_compute_step(k->cc, now, k->in, i, k->out);
    if (s != CG_OK) {
        log_warn("compute step: %s", cg_status_str(s));
        return;
    }
    trace_step(k, now, i);
    for (size_t j = 0; j < i; j++) {
        write_gate(k->who[j], &k->out[j], k->in[j].share_pct, k->in[j].mode, now);
        over_share(d, k->who[j], &k->in[j], &k->out[j]);
    }
}

int compute_tick(struct daemon *d)
{
    struct compute *k = get(d);
    if (!k || k->off)
        return -1;
    uint64_t now = loop_now_ns();
    if (now >= k->next_due) {
        step(d, k, now);
        k->next_due = now + COMPUTE_STEP_NS;
    }
    uint64_t left = k->next_due > now ? k->next_due - now : 0;
    return (int)(left / 1000000) + 1;
}

bool compute_measuring(struct daemon *d)
{
    struct compute *k = get(d);
    return k && !k->off;
}

void compute_stop(struct daemon *d)
{
    struct compute *k = d->compute;
    if (!k)
        return;
    for (struct container *c = d->containers; c; c = c->next) {
        if (c->ledger &&
            atomic_fetch_and_explicit(&c->ledger->compute.gate, ~CG_GATE_CLOSED,
                                      memory_order_release) == CG_GATE_CLOSED)
            futex_wake_all(&c->ledger->compute.gate);
    }
    if (k->trace)
        fclose(k->trace);
    cg_compute_free(k->cc);
    free(k->samples);
    free(k->in);
    free(k->out);
    free(k->who);
    free(k);
    d->compute = NULL;
}

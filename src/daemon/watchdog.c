/* watchdog.c — see watchdog.h. A finding is reported when it appears and again only after it
 * went away, so a long-running offender costs one log line, not one per check. */
#include "watchdog.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpu.h"
#include "log.h"
#include "size.h"

#define MAX_PROCS 1024

struct seen {
    pid_t pid;          /* unregistered process, or 0 */
    char container[CONTAINER_ID_MAX + 1]; /* over-limit container, or "" */
    bool still;         /* found again in this check */
};

struct watchdog {
    uint64_t next_due;
    struct seen seen[MAX_PROCS];
    unsigned nseen;
    uint64_t counts[2];
};

static struct watchdog *get(struct daemon *d)
{
    if (!d->watchdog)
        d->watchdog = calloc(1, sizeof(struct watchdog));
    return d->watchdog;
}

uint64_t watchdog_count(struct daemon *d, int kind)
{
    return d->watchdog && kind >= 0 && kind < 2 ? d->watchdog->counts[kind] : 0;
}

/* True the first time (pid, container) is found in a row of checks. */
static bool first_sighting(struct watchdog *w, pid_t pid, const char *container)
{
    for (unsigned i = 0; i < w->nseen; i++) {
        if (w->seen[i].pid == pid && strcmp(w->seen[i].container, container) == 0) {
            w->seen[i].still = true;
            return false;
        }
    }
    if (w->nseen < MAX_PROCS) {
        struct seen *s = &w->seen[w->nseen++];
        s->pid = pid;
        snprintf(s->container, sizeof s->container, "%s", container);
        s->still = true;
    }
    return true;
}

static void finding(struct daemon *d, const char *kind, struct container *c, pid_t pid,
                    uint64_t bytes)
{
    notice_finding(d, kind, c, pid, bytes);
}

static void watchdog_check(struct daemon *d)
{
    struct watchdog *w = get(d);
    struct nvml *n = d->nvml;
    if (!w || !n)
        return;
    for (unsigned i = 0; i < w->nseen; i++)
        w->seen[i].still = false;

    /* Per container: what NVML says its processes use, summed over devices. */
    for (struct container *c = d->containers; c; c = c->next)
        c->nvml_used = 0;
    static nvmlProcessInfo_t infos[MAX_PROCS];
    for (unsigned dev = 0; dev < d->ndevices; dev++) {
        nvmlDevice_t nd;
        unsigned count = MAX_PROCS;
        if (n->handle(dev, &nd) != NVML_SUCCESS || n->procs(nd, &count, infos) != NVML_SUCCESS)
            continue;
        for (unsigned i = 0; i < count && i < MAX_PROCS; i++) {
            pid_t pid = (pid_t)infos[i].pid;
            uint64_t used = infos[i].usedGpuMemory;
            if (used == ~0ull || used == 0xffffffffull)
                used = 0; /* NVML hides per-process figures here: presence is still a finding */
            if (pid <= 0 || pid == getpid())
                continue;
            struct proc *p = proc_by_pid(d, pid);
            if (p) {
                p->c->nvml_used += used;
                continue;
            }
            if (!first_sighting(w, pid, ""))
                continue;
            w->counts[0]++;
            char b[CG_SIZE_BUFLEN];
            log_warn("watchdog: pid %d uses %s on device %u without being registered with "
                     "convgpu (interposer bypassed?)%s", (int)pid,
                     cg_format_size(used, b, sizeof b), dev,
                     d->opt.watchdog_kill ? "; killing it" : "");
            finding(d, "watchdog-unregistered", NULL, pid, used);
            if (d->opt.watchdog_kill && kill(pid, SIGKILL) != 0 && errno != ESRCH)
                log_warn("watchdog: cannot kill pid %d: %s", (int)pid, strerror(errno));
        }
    }
    for (struct container *c = d->containers; c; c = c->next) {
        if (c->nvml_used <= c->limit + d->opt.watchdog_tolerance)
            continue;
        if (!first_sighting(w, 0, c->ident.id))
            continue;
        w->counts[1]++;
        char b1[CG_SIZE_BUFLEN], b2[CG_SIZE_BUFLEN];
        log_warn("watchdog: container %s uses %s by NVML, over its limit %s%s", c->ident.id,
                 cg_format_size(c->nvml_used, b1, sizeof b1),
                 cg_format_size(c->limit, b2, sizeof b2),
                 d->opt.watchdog_kill ? "; killing its processes" : "");
        finding(d, "watchdog-over-limit", c, 0, c->nvml_used);
        if (d->opt.watchdog_kill)
            for (struct proc *p = c->procs; p; p = p->next)
                if (p->welcomed && kill(p->pid, SIGKILL) != 0 && errno != ESRCH)
                    log_warn("watchdog: cannot kill pid %d: %s", (int)p->pid, strerror(errno));
    }
    /* Findings that went away may be reported again if they come back. */
    unsigned k = 0;
    for (unsigned i = 0; i < w->nseen; i++)
        if (w->seen[i].still)
            w->seen[k++] = w->seen[i];
    w->nseen = k;
}

int watchdog_tick(struct daemon *d)
{
    if (d->opt.watchdog_interval <= 0 || !d->nvml)
        return -1;
    struct watchdog *w = get(d);
    if (!w)
        return -1;
    uint64_t now = loop_now_ns(), period = (uint64_t)(d->opt.watchdog_interval * 1e9);
    if (now >= w->next_due) {
        watchdog_check(d);
        w->next_due = now + period;
    }
    uint64_t left = w->next_due > now ? w->next_due - now : 0;
    return (int)(left / 1000000) + 1;
}

void watchdog_free(struct daemon *d)
{
    free(d->watchdog);
    d->watchdog = NULL;
}

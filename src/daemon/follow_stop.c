/* follow_stop.c — pause on SIGSTOP, resume on SIGCONT, for containers matching --follow-stop
 * (follow_stop.h). */
#include "follow_stop.h"

#include <stdio.h>
#include <string.h>

#include "daemon.h"
#include "log.h"
#include "loop.h"
#include "pause.h"
#include "store.h"
#include "swap.h"

enum run_state { RS_NONE, RS_STOPPED, RS_RUNNING, RS_UNKNOWN };

/* One process: stopped (T), running (anything else alive), unknown (gone, unreadable). */
static enum run_state state_of(pid_t pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return RS_UNKNOWN;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *rp = strrchr(buf, ')'); /* the command name may hold ")" */
    if (!rp || rp[1] != ' ' || !rp[2] || rp[2] == 'Z' || rp[2] == 'X')
        return RS_UNKNOWN;
    return rp[2] == 'T' ? RS_STOPPED : RS_RUNNING;
}

/* The container's processes together: none, all stopped, some running, or unknown. */
static enum run_state container_state(const struct container *c)
{
    enum run_state all = RS_NONE;
    for (const struct proc *p = c->procs; p; p = p->next) {
        if (!p->welcomed)
            continue;
        enum run_state s = state_of(p->pid);
        if (s == RS_UNKNOWN)
            return RS_UNKNOWN;
        if (s == RS_RUNNING)
            all = RS_RUNNING;
        else if (all == RS_NONE)
            all = RS_STOPPED;
    }
    return all;
}

static void follow(struct daemon *d, struct container *c)
{
    char err[256];
    enum run_state s = container_state(c);
    if (s == RS_STOPPED) {
        if (!c->pause.stop_seen && c->pause.phase != PAUSE_NONE && d->store) {
            /* Paused already (by the operator): kept with the row, so that a daemon restarted
             * after SIGCONT still resumes it (a pause of our own stores it with its phase). */
            c->pause.stop_seen = true;
            if (store_put_container(d->store, c) != 0)
                log_warn("container %s: state.db did not take its stop: %s", c->ident.id,
                         store_error(d->store));
        }
        c->pause.stop_seen = true;
        if (c->pause.phase != PAUSE_NONE || c->pause.busy || c->pause.stop_refused)
            return;
        int rc = pause_request(d, c, err, sizeof err);
        if (rc == 0 || rc == PAUSE_SWAPPING) {
            log_info("container %s: its processes are stopped: pausing it", c->ident.id);
        } else {
            c->pause.stop_refused = true; /* said once per stop */
            log_warn("container %s: its processes are stopped but it cannot be paused: %s",
                     c->ident.id, err);
        }
        return;
    }
    if (s != RS_RUNNING)
        return;
    c->pause.stop_refused = false;
    if (!c->pause.stop_seen)
        return;
    if (c->pause.phase == PAUSE_PAUSING || c->pause.busy)
        return; /* resumed once the pause is done */
    c->pause.stop_seen = false;
    if (c->pause.phase != PAUSE_PAUSED)
        return;
    if (pause_resume_request(d, c, err, sizeof err) == 0)
        log_info("container %s: its processes run again: resuming it", c->ident.id);
    else
        log_warn("container %s: its processes run again but it cannot be resumed: %s", c->ident.id,
                 err);
}

int follow_stop_tick(struct daemon *d)
{
    size_t plen = strlen(d->opt.follow_stop);
    if (!plen)
        return -1;
    uint64_t now = loop_now_ns();
    if (now >= d->follow_stop_due) {
        d->follow_stop_due = now + (uint64_t)FOLLOW_STOP_PERIOD_MS * 1000000u;
        for (struct container *c = d->containers; c; c = c->next)
            if (strncmp(c->ident.id, d->opt.follow_stop, plen) == 0)
                follow(d, c);
    }
    return (int)((d->follow_stop_due - now) / 1000000u) + 1;
}

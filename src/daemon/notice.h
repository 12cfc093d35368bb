/* notice.h — what happened in the daemon, told to whoever listens. The model and the services
 * (containers, processes, decisions, swap, gates, the watchdog) report here and know nothing of
 * who listens; the control API subscribes at start and turns notices into its event stream. So
 * no lower file calls up into the API (docs/DESIGN.md, "Layers"). */
#ifndef CONVGPUD_NOTICE_H
#define CONVGPUD_NOTICE_H

#include <stdint.h>
#include <sys/types.h>

#include "core.h"

struct daemon;
struct container;
struct proc;

enum notice_kind {
    NOTICE_CORE_EVENT,        /* the scheduling core decided something (ev) */
    NOTICE_PROCESS,           /* a process connected or went away (what: "connect", "exit") */
    NOTICE_CONTAINER_REMOVED, /* c is about to be freed */
    NOTICE_FINDING,           /* a named finding about c and/or pid (what: "swap-out",
                               * "watchdog-over-limit", ...), with bytes where it has some */
    NOTICE_REQUEST_ANSWERED,  /* a process's request answered after waited_ns (granted at once,
                               * resumed after a suspension, or refused) */
};

struct notice {
    enum notice_kind kind;
    struct container *c;  /* may be NULL for a finding about a process alone */
    struct proc *p;       /* NOTICE_CORE_EVENT (may be NULL), NOTICE_PROCESS */
    const cg_event *ev;   /* NOTICE_CORE_EVENT */
    const char *what;     /* NOTICE_PROCESS, NOTICE_FINDING */
    pid_t pid;            /* NOTICE_FINDING (0: none) */
    uint64_t bytes;       /* NOTICE_FINDING */
    uint64_t waited_ns;   /* NOTICE_REQUEST_ANSWERED */
};

typedef void (*notice_fn)(struct daemon *d, const struct notice *n, void *ctx);

#define NOTICE_MAX_LISTENERS 4
struct notice_listeners {
    struct { notice_fn fn; void *ctx; } v[NOTICE_MAX_LISTENERS];
    unsigned n;
};

/* 0, or -1 when NOTICE_MAX_LISTENERS listen already. */
int notice_listen(struct daemon *d, notice_fn fn, void *ctx);
void notice_unlisten(struct daemon *d, notice_fn fn, void *ctx);
void notice_send(struct daemon *d, const struct notice *n);

/* The four kinds, spelled at the call sites. */
void notice_core_event(struct daemon *d, struct container *c, struct proc *p, const cg_event *ev);
void notice_process(struct daemon *d, struct container *c, struct proc *p, const char *what);
void notice_container_removed(struct daemon *d, struct container *c);
void notice_finding(struct daemon *d, const char *what, struct container *c, pid_t pid,
                    uint64_t bytes);
void notice_request_answered(struct daemon *d, struct container *c, uint64_t waited_ns);

#endif

/* notice.c — delivering notices to their listeners (notice.h), in the order they subscribed. */
#include "notice.h"

#include "daemon.h"

int notice_listen(struct daemon *d, notice_fn fn, void *ctx)
{
    struct notice_listeners *l = &d->listeners;
    if (l->n == NOTICE_MAX_LISTENERS)
        return -1;
    l->v[l->n].fn = fn;
    l->v[l->n].ctx = ctx;
    l->n++;
    return 0;
}

void notice_unlisten(struct daemon *d, notice_fn fn, void *ctx)
{
    struct notice_listeners *l = &d->listeners;
    for (unsigned i = 0; i < l->n; i++) {
        if (l->v[i].fn == fn && l->v[i].ctx == ctx) {
            for (unsigned j = i + 1; j < l->n; j++)
                l->v[j - 1] = l->v[j];
            l->n--;
            return;
        }
    }
}

void notice_send(struct daemon *d, const struct notice *n)
{
    for (unsigned i = 0; i < d->listeners.n; i++)
        d->listeners.v[i].fn(d, n, d->listeners.v[i].ctx);
}

void notice_core_event(struct daemon *d, struct container *c, struct proc *p, const cg_event *ev)
{
    notice_send(d, &(struct notice){.kind = NOTICE_CORE_EVENT, .c = c, .p = p, .ev = ev});
}

void notice_process(struct daemon *d, struct container *c, struct proc *p, const char *what)
{
    notice_send(d, &(struct notice){.kind = NOTICE_PROCESS, .c = c, .p = p, .what = what});
}

void notice_container_removed(struct daemon *d, struct container *c)
{
    notice_send(d, &(struct notice){.kind = NOTICE_CONTAINER_REMOVED, .c = c});
}

void notice_finding(struct daemon *d, const char *what, struct container *c, pid_t pid,
                    uint64_t bytes)
{
    notice_send(d, &(struct notice){.kind = NOTICE_FINDING, .c = c, .pid = pid, .what = what,
                                    .bytes = bytes});
}

void notice_request_answered(struct daemon *d, struct container *c, uint64_t waited_ns)
{
    notice_send(d, &(struct notice){.kind = NOTICE_REQUEST_ANSWERED, .c = c,
                                    .waited_ns = waited_ns});
}

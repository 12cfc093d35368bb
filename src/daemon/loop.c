/* loop.c — epoll dispatch. Callbacks may add or delete watches, even their own, while a round is
 * running: a deleted watch is marked dead and its pending event in this round is skipped. The
 * event buffer holds as many events as there are watches, so one busy tenant with a thousand
 * ready connections cannot push another tenant's fd (or the control API's) into a later round. */
#include "loop.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

struct watch {
    int fd;
    loop_fn fn;
    void *ctx;
    int dead;
    struct watch *next_dead;
};

struct loop {
    int epfd;
    struct watch **by_fd;  /* indexed by fd */
    int cap;
    int nwatch;
    struct epoll_event *evs;
    int evcap;
    uint64_t round;
    uint64_t defer_seq;
    struct loop_deferred *dhead, *dtail;
    struct watch *graveyard; /* freed after the round, so pending events never see freed memory */
};

struct loop *loop_new(void)
{
    struct loop *l = calloc(1, sizeof *l);
    if (!l)
        return NULL;
    l->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (l->epfd < 0) {
        free(l);
        return NULL;
    }
    return l;
}

void loop_free(struct loop *l)
{
    if (!l)
        return;
    for (int i = 0; i < l->cap; i++)
        free(l->by_fd[i]);
    while (l->graveyard) {
        struct watch *w = l->graveyard;
        l->graveyard = w->next_dead;
        free(w);
    }
    free(l->by_fd);
    free(l->evs);
    close(l->epfd);
    free(l);
}

int loop_add(struct loop *l, int fd, uint32_t events, loop_fn fn, void *ctx)
{
    if (fd < 0)
        return -1;
    if (fd >= l->cap) {
        int ncap = l->cap ? l->cap : 64;
        while (ncap <= fd)
            ncap *= 2;
        struct watch **n = realloc(l->by_fd, (size_t)ncap * sizeof *n);
        if (!n)
            return -1;
        for (int i = l->cap; i < ncap; i++)
            n[i] = NULL;
        l->by_fd = n;
        l->cap = ncap;
    }
    if (l->by_fd[fd])
        return -1;
    struct watch *w = calloc(1, sizeof *w);
    if (!w)
        return -1;
    w->fd = fd;
    w->fn = fn;
    w->ctx = ctx;
    struct epoll_event ev = {.events = events, .data.ptr = w};
    if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, fd, &ev) != 0) {
        free(w);
        return -1;
    }
    l->by_fd[fd] = w;
    l->nwatch++;
    return 0;
}

void loop_del(struct loop *l, int fd)
{
    if (fd < 0 || fd >= l->cap || !l->by_fd[fd])
        return;
    struct watch *w = l->by_fd[fd];
    epoll_ctl(l->epfd, EPOLL_CTL_DEL, fd, NULL);
    l->by_fd[fd] = NULL;
    l->nwatch--;
    w->dead = 1;
    w->next_dead = l->graveyard;
    l->graveyard = w;
}

uint64_t loop_round(const struct loop *l) { return l->round; }

void loop_defer(struct loop *l, struct loop_deferred *dw, void (*fn)(void *ctx), void *ctx)
{
    if (dw->queued)
        return;
    dw->fn = fn;
    dw->ctx = ctx;
    dw->queued = true;
    dw->seq = ++l->defer_seq;
    dw->next = NULL;
    if (l->dtail)
        l->dtail->next = dw;
    else
        l->dhead = dw;
    l->dtail = dw;
}

void loop_cancel(struct loop *l, struct loop_deferred *dw)
{
    if (!dw->queued)
        return;
    struct loop_deferred *prev = NULL;
    for (struct loop_deferred *q = l->dhead; q; prev = q, q = q->next) {
        if (q != dw)
            continue;
        if (prev)
            prev->next = dw->next;
        else
            l->dhead = dw->next;
        if (l->dtail == dw)
            l->dtail = prev;
        break;
    }
    dw->queued = false;
    dw->next = NULL;
}

/* Runs what was deferred before this call; what those runs defer waits for the next call. */
static void run_deferred(struct loop *l)
{
    uint64_t upto = l->defer_seq;
    while (l->dhead && l->dhead->seq <= upto) {
        struct loop_deferred *dw = l->dhead;
        l->dhead = dw->next;
        if (!l->dhead)
            l->dtail = NULL;
        dw->queued = false;
        dw->next = NULL;
        dw->fn(dw->ctx);
    }
}

int loop_run_once(struct loop *l, int timeout_ms)
{
    run_deferred(l); /* deferred between rounds */
    if (l->evcap < l->nwatch || !l->evs) {
        int ncap = l->evcap ? l->evcap : 64;
        while (ncap < l->nwatch)
            ncap *= 2;
        struct epoll_event *n = realloc(l->evs, (size_t)ncap * sizeof *n);
        if (n) {
            l->evs = n;
            l->evcap = ncap;
        } else if (!l->evs) {
            return -1;
        }
    }
    int n = epoll_wait(l->epfd, l->evs, l->evcap, l->dhead ? 0 : timeout_ms);
    if (n < 0)
        return errno == EINTR ? 0 : -1;
    l->round++;
    /* Epoll reports ready fds in a stable order; start somewhere else each round (a golden-ratio
     * stride spreads the starts over the buffer) so that budgets per round are not always spent
     * by the same fds. */
    unsigned start = n ? (unsigned)((l->round * 0x9e3779b97f4a7c15ull) >> 40) % (unsigned)n : 0;
    for (int k = 0; k < n; k++) {
        struct epoll_event *ev = &l->evs[((unsigned)k + start) % (unsigned)n];
        struct watch *w = ev->data.ptr;
        if (!w->dead)
            w->fn(w->ctx, ev->events);
    }
    run_deferred(l);
    while (l->graveyard) {
        struct watch *w = l->graveyard;
        l->graveyard = w->next_dead;
        free(w);
    }
    return n;
}

uint64_t loop_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

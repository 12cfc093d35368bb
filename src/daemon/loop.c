/* loop.c — epoll dispatch. Callbacks may add or delete watches, even their own, while a round is
 * running: a deleted watch is marked dead and its pending event in this round is skipped. */
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
    return 0;
}

void loop_del(struct loop *l, int fd)
{
    if (fd < 0 || fd >= l->cap || !l->by_fd[fd])
        return;
    struct watch *w = l->by_fd[fd];
    epoll_ctl(l->epfd, EPOLL_CTL_DEL, fd, NULL);
    l->by_fd[fd] = NULL;
    w->dead = 1;
    w->next_dead = l->graveyard;
    l->graveyard = w;
}

int loop_run_once(struct loop *l, int timeout_ms)
{
    struct epoll_event evs[64];
    int n = epoll_wait(l->epfd, evs, 64, timeout_ms);
    if (n < 0)
        return errno == EINTR ? 0 : -1;
    for (int i = 0; i < n; i++) {
        struct watch *w = evs[i].data.ptr;
        if (!w->dead)
            w->fn(w->ctx, evs[i].events);
    }
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

/* loop.h — the daemon's single-threaded epoll event loop: fds with callbacks, work deferred to
 * the end of a round, plus deadlines.
 *
 * A round is one loop_run_once: one epoll_wait, then every ready fd's callback, then the
 * deferred work. Every ready fd is dispatched in every round (the event buffer grows with the
 * number of watched fds), starting at a position that moves from round to round, so no fd is
 * always served last; callbacks that share a budget per round (loop_round) read only their share
 * and leave the rest queued in the kernel, where level-triggered epoll reports it again. */
#ifndef CONVGPUD_LOOP_H
#define CONVGPUD_LOOP_H

#include <stdbool.h>
#include <stdint.h>

struct loop;
typedef void (*loop_fn)(void *ctx, uint32_t events);

/* Work to run once at the end of a round; embedded in the object it is about. */
struct loop_deferred {
    void (*fn)(void *ctx);
    void *ctx;
    bool queued;
    uint64_t seq;
    struct loop_deferred *next;
};

struct loop *loop_new(void);
void loop_free(struct loop *l);
/* Watch fd for events (EPOLLIN, ...). ctx must stay valid until loop_del. */
int loop_add(struct loop *l, int fd, uint32_t events, loop_fn fn, void *ctx);
void loop_del(struct loop *l, int fd);
/* Runs one round: waits at most timeout_ms (-1 = forever) and dispatches ready fds. */
int loop_run_once(struct loop *l, int timeout_ms);
/* The current round's number; changes once per loop_run_once. */
uint64_t loop_round(const struct loop *l);
/* Runs fn(ctx) at the end of this round (at the start of the next one when called between
 * rounds); does nothing when it is already queued. */
void loop_defer(struct loop *l, struct loop_deferred *dw, void (*fn)(void *ctx), void *ctx);
/* Unqueues dw (before the object holding it is freed). */
void loop_cancel(struct loop *l, struct loop_deferred *dw);

/* Monotonic clock in nanoseconds: the `now` passed to the scheduling core. */
uint64_t loop_now_ns(void);

#endif

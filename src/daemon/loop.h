/* loop.h — the daemon's single-threaded epoll event loop: fds with callbacks, plus deadlines. */
#ifndef CONVGPUD_LOOP_H
#define CONVGPUD_LOOP_H

#include <stdint.h>

struct loop;
typedef void (*loop_fn)(void *ctx, uint32_t events);

struct loop *loop_new(void);
void loop_free(struct loop *l);
/* Watch fd for events (EPOLLIN, ...). ctx must stay valid until loop_del. */
int loop_add(struct loop *l, int fd, uint32_t events, loop_fn fn, void *ctx);
void loop_del(struct loop *l, int fd);
/* Runs one round: waits at most timeout_ms (-1 = forever) and dispatches ready fds. */
int loop_run_once(struct loop *l, int timeout_ms);

/* Monotonic clock in nanoseconds: the `now` passed to the scheduling core. */
uint64_t loop_now_ns(void);

#endif

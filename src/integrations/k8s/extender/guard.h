/* guard.h — what any local client may make the extender hold, and for how long.
 *
 * The extender's socket is reachable by every local user (TCP on 127.0.0.1 by default), so a
 * client that opens many connections and trickles bytes, or sends large bodies and never
 * finishes them, must not keep kube-scheduler's filter requests out nor grow the process
 * without bound. Follow one connection through the guard:
 *
 *   opened   -> RECEIVING: its request (headers, then body) must have fully arrived within
 *               `deadline_ns` of the connection's start, however slowly it trickles; late, it
 *               is closed. The body is kept here (guard_append), counted against one budget
 *               shared by all connections.
 *   answered -> ANSWERING: the body is dropped; the answer's size is counted instead until the
 *               answer has gone out (guard_done), because it lives as long as a slow reader
 *               takes to read it.
 *   done     -> RECEIVING again (keep-alive): the next request's clock starts now, so an idle
 *               kept-alive connection is closed at its deadline too.
 *
 * Invariants (checked by guard_check, used by the unit test):
 * - at most `max_conns` connections are open and not closing. A connection beyond it makes
 *   room by closing one still RECEIVING: of the peer (UNIX: uid; TCP: address) with the most
 *   connections, its oldest; none RECEIVING: the newcomer itself is closed.
 * - the bytes held for bodies and answers never exceed `budget`. A body that would go over
 *   closes other connections holding bytes — of the peer holding the most, its oldest — and
 *   their bodies are freed at once. `max_body <= budget`, so one request always fits alone;
 *   an answer is counted but never refused (it is at most a few times its own request).
 * - a closed ("kicked") connection is shut down through the `kick` callback and only
 *   forgotten when its server says it is gone (guard_closed): the descriptor stays valid, and
 *   cannot be reused under the kick, until then.
 * kube-scheduler's requests arrive whole within milliseconds and come from one peer, so under
 * attack they are the youngest and the least held: the last to be chosen.
 *
 * All functions take the guard's lock; time is an argument (monotonic nanoseconds). */
#ifndef CONVGPU_K8S_EXT_GUARD_H
#define CONVGPU_K8S_EXT_GUARD_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct guard_limits {
    size_t max_conns;     /* connections open at once */
    size_t budget;        /* bytes of bodies and answers held at once, over all connections */
    size_t max_body;      /* one request's body (larger: the caller answers 413) */
    uint64_t deadline_ns; /* a request's headers and body must arrive within this */
};

enum guard_state { GUARD_RECEIVING, GUARD_ANSWERING };

struct guard_conn {
    struct guard_conn *prev, *next; /* by age: the head started first */
    int fd;
    uint64_t peer;       /* who is behind it (guard_peer_*) */
    uint64_t started_ns; /* when its current request's clock started */
    enum guard_state state;
    bool kicked;    /* shut down; waiting for guard_closed */
    char *body;     /* the request body so far (NUL-terminated), owned here until taken */
    size_t len;     /* bytes of body */
    size_t cap;     /* bytes allocated for body: grows by half at a time (guard_append) */
    size_t held;    /* bytes counted against the budget: the body, or the answer */
};

struct guard_stats {
    uint64_t late;    /* closed at their deadline */
    uint64_t crowded; /* closed to make room for a new connection */
    uint64_t heavy;   /* closed to make room in the budget */
};

struct guard {
    pthread_mutex_t lock;
    struct guard_limits lim;
    void (*kick)(int fd); /* shuts a connection down; the server then reports it closed */
    struct guard_conn *head, *tail;
    size_t open;  /* connections not kicked */
    size_t total; /* bytes held */
    struct guard_stats stats;
};

/* Peer identities, distinct by construction: a UNIX client's uid, a TCP client's address. */
uint64_t guard_peer_uid(unsigned uid);
uint64_t guard_peer_addr(const void *addr, size_t len);

void guard_init(struct guard *g, const struct guard_limits *lim, void (*kick)(int fd));
void guard_destroy(struct guard *g);
/* A new connection; NULL when out of memory (the caller refuses it). */
struct guard_conn *guard_open(struct guard *g, int fd, uint64_t peer, uint64_t now_ns);
/* Adds n bytes to c's body. 0; 1: the body would pass max_body, so it is dropped (the caller
 * answers 413 and reads the rest away); -1: c was kicked, or out of memory (the caller closes
 * it). */
int guard_append(struct guard *g, struct guard_conn *c, const char *data, size_t n);
/* c's request has fully arrived: its body (NUL-terminated, *len bytes) is the caller's to free,
 * still counted until guard_answering, and c is past its deadline's reach. NULL: c was kicked,
 * or out of memory. */
char *guard_take(struct guard *g, struct guard_conn *c, size_t *len);
/* c's answer is queued (answer_bytes long); it is counted instead of the body. */
void guard_answering(struct guard *g, struct guard_conn *c, size_t answer_bytes);
/* c's answer went out (or the request ended): nothing held, the next request's clock starts. */
void guard_done(struct guard *g, struct guard_conn *c, uint64_t now_ns);
/* c is gone (its descriptor closed right after): forgotten and freed. */
void guard_closed(struct guard *g, struct guard_conn *c);
/* Kicks every connection past its deadline; returns when the next deadline falls (or
 * now + deadline when none is pending), for the caller's timer. */
uint64_t guard_expire(struct guard *g, uint64_t now_ns);
struct guard_stats guard_stats(struct guard *g);
/* 0, or -1 with why when an invariant above does not hold. */
int guard_check(struct guard *g, char *why, size_t whylen);

#endif

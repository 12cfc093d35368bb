/* guard.c — the extender's bounds on connections, body memory and request time (guard.h). */
#include "guard.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PEER_UID_TAG (1ull << 63)

uint64_t guard_peer_uid(unsigned uid)
{
    return PEER_UID_TAG | uid;
}

uint64_t guard_peer_addr(const void *addr, size_t len)
{
    /* FNV-1a over the address bytes; a collision only merges two peers' counts. */
    const unsigned char *p = addr;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < len; i++)
        h = (h ^ p[i]) * 1099511628211ull;
    return h & ~PEER_UID_TAG;
}

void guard_init(struct guard *g, const struct guard_limits *lim, void (*kick)(int fd))
{
    memset(g, 0, sizeof *g);
    pthread_mutex_init(&g->lock, NULL);
    g->lim = *lim;
    g->kick = kick;
}

void guard_destroy(struct guard *g)
{
    struct guard_conn *c = g->head;
    while (c) {
        struct guard_conn *next = c->next;
        free(c->body);
        free(c);
        c = next;
    }
    pthread_mutex_destroy(&g->lock);
    memset(g, 0, sizeof *g);
}

static void unlink_conn(struct guard *g, struct guard_conn *c)
{
    *(c->prev ? &c->prev->next : &g->head) = c->next;
    *(c->next ? &c->next->prev : &g->tail) = c->prev;
    c->prev = c->next = NULL;
}

static void append_conn(struct guard *g, struct guard_conn *c)
{
    c->prev = g->tail;
    c->next = NULL;
    *(g->tail ? &g->tail->next : &g->head) = c;
    g->tail = c;
}

static void release(struct guard *g, struct guard_conn *c)
{
    g->total -= c->held;
    c->held = 0;
    free(c->body);
    c->body = NULL;
    c->len = c->cap = 0;
}

/* Shuts c down and frees what it holds now: the budget is back at once, the descriptor stays
 * c's until the server reports it closed. */
static void kick_conn(struct guard *g, struct guard_conn *c, uint64_t *counter)
{
    if (c->kicked)
        return;
    c->kicked = true;
    g->open--;
    release(g, c); /* an answer's bytes are the server's until the close, a moment later */
    (*counter)++;
    g->kick(c->fd);
}

/* What a peer has, to choose whom to close: its connections, or its bytes held. */
static size_t peer_weight(const struct guard *g, uint64_t peer, bool bytes)
{
    size_t w = 0;
    for (const struct guard_conn *c = g->head; c; c = c->next)
        if (!c->kicked && c->peer == peer)
            w += bytes ? c->held : 1;
    return w;
}

/* The connection to close (not `spare`): among those that qualify, the heaviest peer's oldest.
 * receiving_only: only connections still receiving (crowding); else any holding bytes. */
static struct guard_conn *victim(const struct guard *g, const struct guard_conn *spare,
                                 bool receiving_only)
{
    struct guard_conn *best = NULL;
    size_t best_weight = 0;
    for (struct guard_conn *c = g->head; c; c = c->next) { /* oldest first: ties keep it */
        if (c == spare || c->kicked)
            continue;
        if (receiving_only ? c->state != GUARD_RECEIVING : c->held == 0)
            continue;
        size_t w = peer_weight(g, c->peer, !receiving_only);
        if (!best || w > best_weight) {
            best = c;
            best_weight = w;
        }
    }
    return best;
}

struct guard_conn *guard_open(struct guard *g, int fd, uint64_t peer, uint64_t now_ns)
{
    struct guard_conn *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->fd = fd;
    c->peer = peer;
    c->started_ns = now_ns;
    c->state = GUARD_RECEIVING;
    pthread_mutex_lock(&g->lock);
    append_conn(g, c);
    g->open++;
    while (g->open > g->lim.max_conns) {
        struct guard_conn *v = victim(g, c, true);
        kick_conn(g, v ? v : c, &g->stats.crowded);
        if (!v)
            break;
    }
    pthread_mutex_unlock(&g->lock);
    return c;
}

/* Makes room for `need` more bytes for c by closing others; false when c itself was closed
 * meanwhile or nothing more can be freed. */
static bool make_room(struct guard *g, struct guard_conn *c, size_t need)
{
    while (g->total + need > g->lim.budget) {
        struct guard_conn *v = victim(g, c, false);
        if (!v)
            return false;
        kick_conn(g, v, &g->stats.heavy);
    }
    return true;
}

int guard_append(struct guard *g, struct guard_conn *c, const char *data, size_t n)
{
    pthread_mutex_lock(&g->lock);
    int rc = -1;
    if (c->kicked)
        goto out;
    if (c->len + n > g->lim.max_body) {
        release(g, c); /* the answer is 413: nothing of the body is needed */
        rc = 1;
        goto out;
    }
    if (!make_room(g, c, n))
        goto out;
    size_t want = c->len + n + 1;
    if (want > c->cap) {
        /* Bodies arrive in pieces of a few KiB: growing to the exact size each time copied
         * the whole body per piece (quadratic: a 60 MiB body took minutes where realloc cannot
         * grow in place, as under the sanitizers). Half again at a time keeps it linear; the
         * budget still counts the body's bytes, and the unwritten rest of a large block is
         * address space, not memory. */
        size_t grown = c->cap + c->cap / 2, limit = g->lim.max_body + 1;
        size_t cap = grown > want ? grown : want;
        if (cap < 4096)
            cap = 4096;
        if (cap > limit)
            cap = limit > want ? limit : want;
        char *nb = realloc(c->body, cap);
        if (!nb)
            goto out;
        c->body = nb;
        c->cap = cap;
    }
    memcpy(c->body + c->len, data, n);
    c->len += n;
    c->body[c->len] = '\0';
    g->total -= c->held;
    c->held = c->len + 1;
    g->total += c->held;
    rc = 0;
out:
    pthread_mutex_unlock(&g->lock);
    return rc;
}

char *guard_take(struct guard *g, struct guard_conn *c, size_t *len)
{
    pthread_mutex_lock(&g->lock);
    char *body = NULL;
    *len = 0;
    if (!c->kicked) {
        body = c->body ? c->body : strdup("");
        *len = c->len;
        c->body = NULL; /* still counted in held until guard_answering */
        c->len = c->cap = 0;
        c->state = GUARD_ANSWERING;
    }
    pthread_mutex_unlock(&g->lock);
    return body;
}

void guard_answering(struct guard *g, struct guard_conn *c, size_t answer_bytes)
{
    pthread_mutex_lock(&g->lock);
    release(g, c);
    c->state = GUARD_ANSWERING;
    if (!c->kicked) {
        make_room(g, c, answer_bytes); /* counted even when it does not fit: one answer */
        c->held = answer_bytes;
        g->total += c->held;
    }
    pthread_mutex_unlock(&g->lock);
}

void guard_done(struct guard *g, struct guard_conn *c, uint64_t now_ns)
{
    pthread_mutex_lock(&g->lock);
    release(g, c);
    c->state = GUARD_RECEIVING;
    c->started_ns = now_ns;
    unlink_conn(g, c); /* the youngest again */
    append_conn(g, c);
    pthread_mutex_unlock(&g->lock);
}

void guard_closed(struct guard *g, struct guard_conn *c)
{
    pthread_mutex_lock(&g->lock);
    release(g, c);
    if (!c->kicked)
        g->open--;
    unlink_conn(g, c);
    pthread_mutex_unlock(&g->lock);
    free(c);
}

uint64_t guard_expire(struct guard *g, uint64_t now_ns)
{
    pthread_mutex_lock(&g->lock);
    uint64_t next = now_ns + g->lim.deadline_ns;
    for (struct guard_conn *c = g->head; c; c = c->next) {
        if (c->kicked || c->state != GUARD_RECEIVING)
            continue;
        uint64_t due = c->started_ns + g->lim.deadline_ns;
        if (due <= now_ns)
            kick_conn(g, c, &g->stats.late);
        else if (due < next)
            next = due;
    }
    pthread_mutex_unlock(&g->lock);
    return next;
}

struct guard_stats guard_stats(struct guard *g)
{
    pthread_mutex_lock(&g->lock);
    struct guard_stats s = g->stats;
    pthread_mutex_unlock(&g->lock);
    return s;
}

int guard_check(struct guard *g, char *why, size_t whylen)
{
    pthread_mutex_lock(&g->lock);
    size_t open = 0, total = 0, holders = 0;
    int rc = -1;
    for (const struct guard_conn *c = g->head; c; c = c->next) {
        open += !c->kicked;
        total += c->held;
        holders += c->held > 0;
        if (c->next && c->next->prev != c) {
            snprintf(why, whylen, "the age list is broken");
            goto out;
        }
        if (c->body ? c->cap < c->len + 1 : c->cap != 0) {
            snprintf(why, whylen, "a body of %zu bytes in %zu allocated", c->len, c->cap);
            goto out;
        }
        if (c->state == GUARD_RECEIVING && c->held != (c->body ? c->len + 1 : 0)) {
            snprintf(why, whylen, "a receiving connection holds %zu bytes for a body of %zu",
                     c->held, c->len);
            goto out;
        }
        if (c->kicked && c->held) {
            snprintf(why, whylen, "a closed connection still holds %zu bytes", c->held);
            goto out;
        }
    }
    if (open != g->open || total != g->total) {
        snprintf(why, whylen, "counted %zu open, %zu bytes; kept %zu, %zu", open, total, g->open,
                 g->total);
    } else if (open > g->lim.max_conns) {
        snprintf(why, whylen, "%zu open over the limit of %zu", open, g->lim.max_conns);
    } else if (total > g->lim.budget && holders > 1) { /* one answer alone may exceed it */
        snprintf(why, whylen, "%zu bytes held by %zu connections, over the budget of %zu", total,
                 holders, g->lim.budget);
    } else {
        rc = 0;
    }
out:
    pthread_mutex_unlock(&g->lock);
    return rc;
}

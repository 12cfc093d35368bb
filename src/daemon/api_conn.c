/* api_conn.c — the control socket's connection table and its bounds (api_conn.h says the rules).
 * A connection is counted from admission until it is closed or cut; a cut one stays in the
 * table, uncounted, until its socket is really closed, so its fd is never mistaken for a new
 * connection's. */
#include "api_conn.h"

#include <stdlib.h>

void api_conns_init(struct api_conns *t, const struct api_conn_limits *lim)
{
    *t = (struct api_conns){.lim = *lim};
    if (t->lim.reserve >= t->lim.total)
        t->lim.reserve = t->lim.total / 2;
    if (t->lim.followers_reserve >= t->lim.followers)
        t->lim.followers_reserve = t->lim.followers / 2;
}

void api_conns_free(struct api_conns *t)
{
    struct api_conn *c = t->oldest;
    while (c) {
        struct api_conn *next = c->next;
        free(c);
        c = next;
    }
    free(t->by_fd);
    uidcount_free(&t->users);
    *t = (struct api_conns){0};
}

const char *api_refusal_text(enum api_refusal r)
{
    switch (r) {
    case API_ADMITTED:
        return "admitted";
    case API_REFUSED_USER:
        return "this user holds as many control-API connections as it may (api-user-connections)";
    case API_REFUSED_FULL:
        return "the control API holds as many connections as it may; try again later";
    case API_REFUSED_MEMORY:
        return "out of memory";
    }
    return "refused";
}

/* Stops counting c (it is closing, or cut). */
static void uncount(struct api_conns *t, struct api_conn *c)
{
    if (c->cut)
        return;
    c->cut = true;
    t->n--;
    if (c->follower)
        t->nfollow--;
    if (!c->all) {
        t->n_tenants--;
        if (c->follower)
            t->nfollow_tenants--;
        uidcount_add(&t->users, c->cred.uid, -1, c->follower ? -1 : 0);
    }
}

/* The oldest connection of uid that is waiting for a request (not being answered, not a
 * stream): the one whose loss costs its owner least. */
static struct api_conn *oldest_idle_of(struct api_conns *t, uid_t uid)
{
    for (struct api_conn *c = t->oldest; c; c = c->next)
        if (!c->cut && !c->all && !c->follower && c->deadline && c->cred.uid == uid)
            return c;
    return NULL;
}

enum api_refusal api_conns_admit(struct api_conns *t, int fd, const struct ucred *cred, bool all,
                                 uint64_t now, struct api_conn **out, struct api_conn **displace)
{
    *out = NULL;
    *displace = NULL;
    if (fd < 0)
        return API_REFUSED_MEMORY;
    if (t->n >= t->lim.total)
        return API_REFUSED_FULL;
    struct api_conn *victim = NULL;
    if (!all) {
        const struct uid_count *u = uidcount_get(&t->users, cred->uid);
        unsigned held = u ? u->n : 0;
        if (held >= t->lim.per_user)
            return API_REFUSED_USER;
        if (t->n_tenants >= t->lim.total - t->lim.reserve) {
            /* Full: only a user holding clearly less than the heaviest one gets in, at the
             * heaviest one's expense, so holding connections never keeps another user out. */
            const struct uid_count *heavy = uidcount_heaviest(&t->users, cred->uid);
            if (heavy && heavy->n > held + 1)
                victim = oldest_idle_of(t, heavy->uid);
            if (!victim)
                return API_REFUSED_FULL;
        }
    }
    if (fd >= t->cap) {
        int ncap = t->cap ? t->cap : 64;
        while (ncap <= fd)
            ncap *= 2;
        struct api_conn **nv = realloc(t->by_fd, (size_t)ncap * sizeof *nv);
        if (!nv)
            return API_REFUSED_MEMORY;
        for (int i = t->cap; i < ncap; i++)
            nv[i] = NULL;
        t->by_fd = nv;
        t->cap = ncap;
    }
    if (t->by_fd[fd])
        return API_REFUSED_MEMORY; /* a closed fd the table still holds: a caller's bug */
    struct api_conn *c = calloc(1, sizeof *c);
    if (!c || (!all && uidcount_add(&t->users, cred->uid, 1, 0) != 0)) {
        free(c);
        return API_REFUSED_MEMORY;
    }
    c->fd = fd;
    c->cred = *cred;
    c->all = all;
    c->deadline = now + t->lim.request_timeout_ns;
    c->prev = t->newest;
    if (t->newest)
        t->newest->next = c;
    else
        t->oldest = c;
    t->newest = c;
    t->by_fd[fd] = c;
    t->n++;
    t->n_tenants += !all;
    t->accepted++;
    if (victim) {
        uncount(t, victim);
        t->displaced++;
        *displace = victim;
    }
    *out = c;
    return API_ADMITTED;
}

struct api_conn *api_conns_find(const struct api_conns *t, int fd)
{
    return fd >= 0 && fd < t->cap ? t->by_fd[fd] : NULL;
}

void api_conns_closed(struct api_conns *t, struct api_conn *c)
{
    if (!c)
        return;
    uncount(t, c);
    if (c->prev)
        c->prev->next = c->next;
    else
        t->oldest = c->next;
    if (c->next)
        c->next->prev = c->prev;
    else
        t->newest = c->prev;
    if (c->fd >= 0 && c->fd < t->cap && t->by_fd[c->fd] == c)
        t->by_fd[c->fd] = NULL;
    free(c);
}

void api_conns_request_arrived(struct api_conn *c)
{
    if (c)
        c->deadline = 0;
}

void api_conns_answered(struct api_conns *t, struct api_conn *c, uint64_t now)
{
    if (c && !c->cut && !c->follower)
        c->deadline = now + t->lim.request_timeout_ns;
}

enum api_refusal api_conns_follow(struct api_conns *t, struct api_conn *c)
{
    if (!c || c->cut)
        return API_REFUSED_FULL;
    if (c->follower)
        return API_ADMITTED;
    if (!c->all) {
        const struct uid_count *u = uidcount_get(&t->users, c->cred.uid);
        if (u && u->aux >= t->lim.per_user_followers)
            return API_REFUSED_USER;
        if (t->nfollow_tenants >= t->lim.followers - t->lim.followers_reserve)
            return API_REFUSED_FULL;
    }
    if (t->nfollow >= t->lim.followers)
        return API_REFUSED_FULL;
    c->follower = true;
    c->deadline = 0;
    t->nfollow++;
    if (!c->all) {
        t->nfollow_tenants++;
        uidcount_add(&t->users, c->cred.uid, 0, 1);
    }
    return API_ADMITTED;
}

uint64_t api_conns_expire(struct api_conns *t, uint64_t now, void (*cut)(int fd, void *ctx),
                          void *ctx)
{
    uint64_t next = 0;
    for (struct api_conn *c = t->oldest; c; c = c->next) {
        if (c->cut || !c->deadline)
            continue;
        if (c->deadline <= now) {
            uncount(t, c);
            c->deadline = 0;
            t->timed_out++;
            cut(c->fd, ctx);
        } else if (!next || c->deadline < next) {
            next = c->deadline;
        }
    }
    return next;
}

/* test_api_conns.c — the control socket's connection rules (src/daemon/api_conn.h) and the
 * descriptor plan (src/daemon/fdbudget.h), alone: each rule by example, then a random walk of
 * admissions, streams, answers, expiries and closes whose every step is checked against a
 * recount of the table (the counters, per user and in all, and every bound). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_conn.h"
#include "fdbudget.h"

#include "check.h"

static const struct api_conn_limits LIM = {.total = 40, .reserve = 8, .per_user = 10,
                                           .followers = 8, .followers_reserve = 2,
                                           .per_user_followers = 3,
                                           .request_timeout_ns = 1000};

static struct ucred who(unsigned uid) { return (struct ucred){.pid = 100, .uid = uid, .gid = uid}; }

static int next_fd = 3;
static int cut[64], ncut;
static void record_cut(int fd, void *ctx)
{
    (void)ctx;
    if (ncut < 64)
        cut[ncut++] = fd;
}
static struct api_conn *admit(struct api_conns *t, unsigned uid, bool all, uint64_t now,
                              enum api_refusal *why, struct api_conn **displaced)
{
    struct api_conn *c = NULL, *d = NULL;
    struct ucred cr = who(uid);
    *why = api_conns_admit(t, next_fd, &cr, all, now, &c, &d);
    if (*why == API_ADMITTED)
        next_fd++;
    if (displaced)
        *displaced = d;
    return c;
}

/* Every counter equals a recount of the table, and no bound is exceeded. */
static void invariants(const struct api_conns *t)
{
    unsigned n = 0, nt = 0, nf = 0, nft = 0;
    for (const struct api_conn *c = t->oldest; c; c = c->next) {
        CHECK(api_conns_find(t, c->fd) == c, "fd %d not found", c->fd);
        if (c->cut)
            continue;
        n++;
        nt += !c->all;
        nf += c->follower;
        nft += c->follower && !c->all;
        if (!c->all) {
            const struct uid_count *u = uidcount_get(&t->users, c->cred.uid);
            CHECK(u != NULL, "uid %u counted nowhere", (unsigned)c->cred.uid);
        }
    }
    CHECK(n == t->n, "n %u, recount %u", t->n, n);
    CHECK(nt == t->n_tenants, "tenants %u, recount %u", t->n_tenants, nt);
    CHECK(nf == t->nfollow, "followers %u, recount %u", t->nfollow, nf);
    CHECK(nft == t->nfollow_tenants, "tenant followers %u, recount %u", t->nfollow_tenants, nft);
    CHECK(t->n <= t->lim.total, "%u > total", t->n);
    CHECK(t->nfollow <= t->lim.followers, "%u streams > %u", t->nfollow, t->lim.followers);
    unsigned sum = 0, sumf = 0;
    for (unsigned i = 0; i < t->users.len; i++) {
        const struct uid_count *u = &t->users.v[i];
        unsigned rn = 0, rf = 0;
        for (const struct api_conn *c = t->oldest; c; c = c->next)
            if (!c->cut && !c->all && c->cred.uid == u->uid) {
                rn++;
                rf += c->follower;
            }
        CHECK(rn == u->n && rf == u->aux, "uid %u: %u/%u, recount %u/%u", (unsigned)u->uid, u->n,
              u->aux, rn, rf);
        CHECK(u->n <= t->lim.per_user, "uid %u holds %u", (unsigned)u->uid, u->n);
        CHECK(u->aux <= t->lim.per_user_followers, "uid %u follows %u", (unsigned)u->uid, u->aux);
        sum += u->n;
        sumf += u->aux;
    }
    CHECK(sum == t->n_tenants && sumf == t->nfollow_tenants, "per-user sums %u/%u", sum, sumf);
}

static void test_rules(void)
{
    struct api_conns t;
    api_conns_init(&t, &LIM);
    enum api_refusal why;
    struct api_conn *first = NULL;
    for (int i = 0; i < 10; i++) {
        struct api_conn *c = admit(&t, 1001, false, 0, &why, NULL);
        CHECK(why == API_ADMITTED, "uid 1001's connection %d refused", i);
        if (i == 0)
            first = c;
    }
    admit(&t, 1001, false, 0, &why, NULL);
    CHECK(why == API_REFUSED_USER, "an 11th connection of one user: %d", why);
    /* Two more users fill the tenants' 32. */
    for (int i = 0; i < 10; i++)
        admit(&t, 1002, false, 0, &why, NULL);
    for (int i = 0; i < 10; i++)
        admit(&t, 1003, false, 0, &why, NULL);
    admit(&t, 1004, false, 0, &why, NULL);
    admit(&t, 1004, false, 0, &why, NULL);
    CHECK(t.n_tenants == 32, "tenants hold %u", t.n_tenants);
    invariants(&t);
    /* Full for tenants: a newcomer gets in at the heaviest one's oldest idle connection. */
    struct api_conn *gone = NULL;
    admit(&t, 1005, false, 0, &why, &gone);
    CHECK(why == API_ADMITTED && gone == first, "the newcomer displaces uid 1001's oldest (%d)",
          why);
    CHECK(gone && gone->cut, "the displaced connection is no longer counted");
    invariants(&t);
    /* A user as heavy as the rest does not get in at another's expense. */
    admit(&t, 1004, false, 0, &why, &gone);
    admit(&t, 1004, false, 0, &why, &gone);
    invariants(&t);
    /* Root's share stays: 8 more for root, then nobody. */
    for (int i = 0; i < 8; i++) {
        admit(&t, 0, true, 0, &why, NULL);
        CHECK(why == API_ADMITTED, "root's connection %d refused with the tenants full", i);
    }
    while (t.n < t.lim.total)
        admit(&t, 0, true, 0, &why, NULL);
    admit(&t, 0, true, 0, &why, NULL);
    CHECK(why == API_REFUSED_FULL, "past the total even root is refused: %d", why);
    invariants(&t);
    /* Closing the displaced one (as MHD will) changes no count twice. */
    api_conns_closed(&t, gone ? gone : first);
    invariants(&t);
    api_conns_free(&t);
}

static void test_streams_and_deadlines(void)
{
    struct api_conns t;
    api_conns_init(&t, &LIM);
    enum api_refusal why;
    struct api_conn *c[6];
    for (int i = 0; i < 6; i++)
        c[i] = admit(&t, 2001, false, 100, &why, NULL);
    for (int i = 0; i < 3; i++)
        CHECK(api_conns_follow(&t, c[i]) == API_ADMITTED, "stream %d refused", i);
    CHECK(api_conns_follow(&t, c[3]) == API_REFUSED_USER, "a 4th stream of one user");
    invariants(&t);
    /* c[4] trickles: it never completes a request. c[5] completes one and is answered. */
    api_conns_request_arrived(c[5]);
    CHECK(c[5]->deadline == 0, "a request being answered has no deadline");
    api_conns_answered(&t, c[5], 600);
    CHECK(c[5]->deadline == 1600, "the next request's clock starts at the answer");
    ncut = 0;
    uint64_t next = api_conns_expire(&t, 1100, record_cut, NULL);
    /* c[0..2] follow (no deadline), c[5] is due at 1600; c[3] and c[4] were due at 1100. */
    CHECK(ncut == 2, "%d cut at 1100", ncut);
    CHECK(ncut == 2 && cut[0] == c[3]->fd && cut[1] == c[4]->fd, "the two idle ones are cut");
    CHECK(next == 1600, "next deadline %llu", (unsigned long long)next);
    invariants(&t);
    /* Cut connections stay in the table until closed, and are not cut again. */
    ncut = 0;
    next = api_conns_expire(&t, 1200, record_cut, NULL);
    CHECK(ncut == 0 && next == 1600, "nothing more before 1600 (%d)", ncut);
    api_conns_closed(&t, c[3]);
    api_conns_closed(&t, c[4]);
    invariants(&t);
    next = api_conns_expire(&t, 1600, record_cut, NULL);
    CHECK(ncut == 1 && next == 0, "c[5] cut at 1600, then nothing is due");
    api_conns_free(&t);
}

/* A random walk; every step keeps the invariants. */
static void test_walk(void)
{
    struct api_conns t;
    api_conns_init(&t, &LIM);
    struct api_conn *live[256];
    int nlive = 0;
    uint64_t now = 0;
    unsigned seed = 12345;
    for (int step = 0; step < 20000; step++) {
        seed = seed * 1103515245u + 12345u;
        unsigned r = (seed >> 8) % 100;
        now += (seed >> 20) % 50;
        if (r < 40 && nlive < 256) {
            enum api_refusal why;
            struct api_conn *gone = NULL;
            unsigned uid = 3000 + (seed >> 12) % 6;
            struct api_conn *c = admit(&t, uid % 6 == 0 ? 0 : uid, uid % 6 == 0, now, &why,
                                       &gone);
            if (c)
                live[nlive++] = c;
        } else if (r < 55 && nlive) {
            api_conns_follow(&t, live[(seed >> 4) % (unsigned)nlive]);
        } else if (r < 70 && nlive) {
            struct api_conn *c = live[(seed >> 4) % (unsigned)nlive];
            api_conns_request_arrived(c);
            api_conns_answered(&t, c, now);
        } else if (r < 80) {
            ncut = 0;
            api_conns_expire(&t, now, record_cut, NULL);
        } else if (nlive) {
            int i = (int)((seed >> 4) % (unsigned)nlive);
            api_conns_closed(&t, live[i]);
            live[i] = live[--nlive];
        }
        invariants(&t);
        if (failures)
            break;
    }
    api_conns_free(&t);
}

static void test_fdbudget(void)
{
    char w[512];
    struct fdbudget b = {.nofile = 65536, .api_max_connections = 512};
    CHECK(fdbudget_plan(&b, w, sizeof w) == 0, "the shipped unit's limit fits: %s", w);
    CHECK(b.max_client_connections == 65536 - 512 - FDBUDGET_DAEMON -
                                          FDBUDGET_CONTAINERS * FDBUDGET_PER_CONTAINER,
          "derived total %u", b.max_client_connections);
    CHECK(b.user_max_connections == b.max_client_connections / 4, "derived per user %u",
          b.user_max_connections);
    struct fdbudget small = {.nofile = 1024, .api_max_connections = 512};
    CHECK(fdbudget_plan(&small, w, sizeof w) == 1 && strstr(w, "descriptor limit (1024)"),
          "1024 does not fit, and says so: %s", w);
    CHECK(small.max_client_connections == 512 && small.user_max_connections == 128,
          "a tiny limit still leaves a usable plan (%u, %u)", small.max_client_connections,
          small.user_max_connections);
    struct fdbudget greedy = {.nofile = 65536, .api_max_connections = 512,
                              .max_client_connections = 1000, .user_max_connections = 900};
    CHECK(fdbudget_plan(&greedy, w, sizeof w) == 1 && strstr(w, "more than half"),
          "one user allowed most of the total is said: %s", w);
    struct fdbudget over = {.nofile = 4096, .api_max_connections = 512,
                            .max_client_connections = 100000};
    CHECK(fdbudget_plan(&over, w, sizeof w) == 1 && strstr(w, "max-client-connections 100000"),
          "a total beyond the limit is said with its numbers: %s", w);
}

int main(void)
{
    test_rules();
    test_streams_and_deadlines();
    test_walk();
    test_fdbudget();
    printf("%s\n", failures ? "FAILED" : "ok");
    return failures ? 1 : 0;
}

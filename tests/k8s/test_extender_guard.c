/* test_extender_guard.c — the scheduler extender's connection guard (guard.h) alone, with a
 * recording kick instead of sockets: whom it closes when connections or body bytes run out,
 * when a request's deadline falls, and that its counts stay exact through a long random run
 * checked by guard_check after every step. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guard.h"

#include "../common/check.h"

#define S 1000000000ull
#define MAX_FD 4096

static int kicked[MAX_FD]; /* how often each descriptor was kicked */

static void record_kick(int fd)
{
    kicked[fd]++;
}

static void reset_kicks(void)
{
    memset(kicked, 0, sizeof kicked);
}

static void checked(struct guard *g, const char *when)
{
    char why[256] = "";
    CHECK(guard_check(g, why, sizeof why) == 0, "%s: %s", when, why);
}

static void fill(struct guard *g, struct guard_conn *c, size_t n)
{
    static char bytes[4096];
    while (n) {
        size_t part = n < sizeof bytes ? n : sizeof bytes;
        CHECK(guard_append(g, c, bytes, part) == 0, "append of %zu", part);
        n -= part;
    }
}

/* Past the connection limit the newcomer closes a request still arriving: the peer with the
 * most connections loses its oldest, and kube-scheduler's one connection is never the one. */
static void test_crowding(void)
{
    struct guard g;
    struct guard_limits lim = {.max_conns = 4, .budget = 1 << 20, .max_body = 1 << 20,
                               .deadline_ns = 10 * S};
    guard_init(&g, &lim, record_kick);
    reset_kicks();
    uint64_t attacker = guard_peer_uid(1101), scheduler = guard_peer_uid(0);
    struct guard_conn *sched = guard_open(&g, 10, scheduler, 0); /* the oldest of all */
    struct guard_conn *a[8];
    for (int i = 0; i < 3; i++)
        a[i] = guard_open(&g, 20 + i, attacker, (uint64_t)(i + 1) * S);
    CHECK(!kicked[10] && !kicked[20], "within the limit nobody is closed");
    a[3] = guard_open(&g, 23, attacker, 5 * S);
    CHECK(kicked[20] == 1 && !kicked[10], "the attacker's oldest goes, not the older scheduler");
    struct guard_conn *sched2 = guard_open(&g, 11, scheduler, 6 * S);
    CHECK(kicked[21] == 1 && !kicked[10] && !kicked[11], "again the attacker's (3 against 2)");
    checked(&g, "crowding");
    /* Answering connections are not closed to make room; none left receiving: the newcomer. */
    size_t len;
    free(guard_take(&g, sched, &len));
    guard_answering(&g, sched, 10);
    free(guard_take(&g, sched2, &len));
    guard_answering(&g, sched2, 10);
    free(guard_take(&g, a[2], &len));
    guard_answering(&g, a[2], 10);
    free(guard_take(&g, a[3], &len));
    guard_answering(&g, a[3], 10);
    struct guard_conn *late = guard_open(&g, 30, attacker, 7 * S);
    CHECK(kicked[30] == 1, "nothing receiving to close: the newcomer is refused");
    CHECK(guard_append(&g, late, "x", 1) == -1, "and a refused one takes no body");
    checked(&g, "all answering");
    for (struct guard_conn *c = g.head; c;) {
        struct guard_conn *next = c->next;
        guard_closed(&g, c);
        c = next;
    }
    CHECK(g.open == 0 && g.total == 0 && !g.head, "all forgotten");
    guard_destroy(&g);
}

/* A body over the budget closes others holding bytes — the heaviest peer's oldest — and their
 * bytes are back at once; a body over max_body is dropped, not counted. */
static void test_budget(void)
{
    struct guard g;
    struct guard_limits lim = {.max_conns = 64, .budget = 100000, .max_body = 60000,
                               .deadline_ns = 10 * S};
    guard_init(&g, &lim, record_kick);
    reset_kicks();
    uint64_t attacker = guard_peer_addr("\x7f\0\0\x02", 4);
    uint64_t other = guard_peer_addr("\x0a\0\0\x01", 4);
    struct guard_conn *a1 = guard_open(&g, 1, attacker, 0);
    struct guard_conn *a2 = guard_open(&g, 2, attacker, 1);
    struct guard_conn *o = guard_open(&g, 3, other, 2);
    fill(&g, o, 30000);  /* older than a2, but its peer holds less */
    fill(&g, a1, 40000);
    fill(&g, a2, 25000); /* 95,003 held with the NULs */
    CHECK(!kicked[1] && !kicked[2] && !kicked[3], "within the budget");
    struct guard_conn *n = guard_open(&g, 4, other, 3);
    fill(&g, n, 10000);
    CHECK(kicked[1] == 1 && !kicked[2] && !kicked[3], "the heaviest peer's oldest upload went");
    CHECK(g.total <= lim.budget, "%zu held", g.total);
    CHECK(guard_append(&g, a1, "x", 1) == -1, "the closed one takes no more");
    checked(&g, "budget");
    CHECK(guard_append(&g, n, (char[60000]){0}, 55000) == 1 && n->held == 0,
          "past max_body: dropped, nothing held");
    checked(&g, "too big");
    /* An answer is counted and makes room too, but is never refused. */
    size_t len;
    char *body = guard_take(&g, o, &len);
    CHECK(body && len == 30000, "the body handed over whole (%zu)", len);
    free(body);
    guard_answering(&g, o, 90000);
    CHECK(kicked[2] == 1, "the answer's bytes pushed the last other upload out");
    checked(&g, "answer");
    guard_done(&g, o, 4);
    CHECK(o->held == 0 && o->state == GUARD_RECEIVING, "answered: nothing held, receiving again");
    checked(&g, "done");
    guard_destroy(&g);
}

/* A body that arrives in small pieces costs time linear in its size: the buffer grows by half
 * at a time, never past max_body, and the budget counts the body's bytes, not the slack. Before,
 * it grew to the exact size per piece, copying the whole body each time where realloc cannot
 * grow in place (so a 60 MiB upload under ASan outlasted the flood test's limits in CI). */
static void test_growth(void)
{
    struct guard g;
    struct guard_limits lim = {.max_conns = 4, .budget = 64u << 20, .max_body = 60u << 20,
                               .deadline_ns = 10 * S};
    guard_init(&g, &lim, record_kick);
    reset_kicks();
    struct guard_conn *c = guard_open(&g, 1, guard_peer_uid(1101), 0);
    static char piece[4096];
    size_t grows = 0, last_cap = 0;
    for (size_t sent = 0; sent + sizeof piece <= lim.max_body; sent += sizeof piece) {
        if (guard_append(&g, c, piece, sizeof piece) != 0) {
            CHECK(0, "append at %zu refused", sent);
            break;
        }
        if (c->cap != last_cap) {
            grows++;
            last_cap = c->cap;
        }
    }
    CHECK(c->len == lim.max_body, "the whole body kept (%zu)", c->len);
    CHECK(grows <= 40, "%zu pieces, the buffer grew %zu times", c->len / sizeof piece, grows);
    CHECK(c->cap <= lim.max_body + 1, "never past max_body (%zu)", c->cap);
    CHECK(c->held == c->len + 1 && g.total == c->held, "the budget counts the bytes (%zu)", c->held);
    checked(&g, "growth");
    CHECK(guard_append(&g, c, "x", 1) == 1 && c->held == 0 && c->cap == 0,
          "one byte past max_body: dropped, nothing held or allocated");
    checked(&g, "growth, too big");
    guard_destroy(&g);
}

/* A request is closed at its deadline however it trickles; its clock restarts with each
 * answered request; answering connections are not timed. */
static void test_deadline(void)
{
    struct guard g;
    struct guard_limits lim = {.max_conns = 64, .budget = 1 << 20, .max_body = 1 << 20,
                               .deadline_ns = 10 * S};
    guard_init(&g, &lim, record_kick);
    reset_kicks();
    struct guard_conn *slow = guard_open(&g, 1, guard_peer_uid(5), 0);
    struct guard_conn *busy = guard_open(&g, 2, guard_peer_uid(5), 0);
    struct guard_conn *kept = guard_open(&g, 3, guard_peer_uid(5), 0);
    size_t len;
    free(guard_take(&g, busy, &len));
    guard_answering(&g, busy, 100);
    free(guard_take(&g, kept, &len));
    guard_answering(&g, kept, 100);
    guard_done(&g, kept, 8 * S); /* kept alive from 8 s */
    for (uint64_t t = 1; t < 10; t++) {
        fill(&g, slow, 1);
        CHECK(guard_expire(&g, t * S) == 10 * S, "at %llus the next deadline is 10 s",
              (unsigned long long)t);
    }
    CHECK(!kicked[1], "not before its deadline");
    CHECK(guard_expire(&g, 10 * S) == 18 * S && kicked[1] == 1 && slow->held == 0,
          "closed at 10 s, its body freed; the next deadline is the kept-alive one's");
    CHECK(guard_expire(&g, 100 * S) == 110 * S && kicked[3] == 1 && !kicked[2],
          "the idle kept-alive connection closes too; the one answering does not");
    CHECK(guard_stats(&g).late == 2, "two late");
    checked(&g, "deadline");
    guard_destroy(&g);
}

/* Random operations against the invariants. */
static void test_random(void)
{
    struct guard g;
    struct guard_limits lim = {.max_conns = 32, .budget = 200000, .max_body = 50000,
                               .deadline_ns = 10 * S};
    guard_init(&g, &lim, record_kick);
    reset_kicks();
    struct guard_conn *live[MAX_FD] = {0};
    int next_fd = 0;
    uint64_t now = 0;
    srand(35);
    for (int step = 0; step < 20000; step++) {
        int fd = rand() % (next_fd ? next_fd : 1);
        struct guard_conn *c = live[fd];
        size_t len;
        switch (rand() % 8) {
        case 0:
        case 1:
            if (next_fd < MAX_FD) {
                uint64_t peer = guard_peer_uid((unsigned)(rand() % 4));
                live[next_fd] = guard_open(&g, next_fd, peer, now);
                next_fd++;
            }
            break;
        case 2:
        case 3:
            if (c && c->state == GUARD_RECEIVING)
                (void)guard_append(&g, c, (char[8192]){0}, (size_t)(rand() % 8192) + 1);
            break;
        case 4:
            if (c && c->state == GUARD_RECEIVING) {
                char *b = guard_take(&g, c, &len);
                free(b);
                guard_answering(&g, c, (size_t)(rand() % 60000));
            }
            break;
        case 5:
            if (c && c->state == GUARD_ANSWERING)
                guard_done(&g, c, now);
            break;
        case 6:
            if (c && (c->kicked || rand() % 4 == 0)) { /* the server reaps what was kicked */
                guard_closed(&g, c);
                live[fd] = NULL;
            }
            break;
        case 7:
            now += (uint64_t)(rand() % 3) * S;
            guard_expire(&g, now);
            break;
        }
        char why[256] = "";
        if (guard_check(&g, why, sizeof why) != 0) {
            CHECK(0, "step %d: %s", step, why);
            break;
        }
    }
    guard_destroy(&g);
}

int main(void)
{
    test_crowding();
    test_budget();
    test_growth();
    test_deadline();
    test_random();
    if (!failures)
        printf("extender guard: all checks passed\n");
    return failures != 0;
}

/* test_decide.c — decide.c without the API: requests put to the core, the replies and the slot
 * charges its decisions make, and daemon.h's invariants after every step (check_invariants:
 * the core's use of a process == its slot's quota, quotas within the assignment, the requests
 * held here == those the core holds).
 *
 * Each scenario is a table row: devices and containers, which container each process is in,
 * then steps. A step is one process's allocation, free (its ledger lowered, then FREED) or exit,
 * or a container's removal, with the reply it must get at once (WAITS: none yet) and the other processes it resumes
 * (granted), each by bit; every other process must have got no reply. */
#include "daemon_test.h"

enum op { ALLOC, FREE, EXIT, REMOVE };
#define WAITS (-1)
#define P(i) (1u << (i))

struct step {
    int proc;         /* REMOVE: the container */
    enum op op;
    uint64_t bytes;
    int expect;       /* ALLOC: the reply's status now, or WAITS */
    unsigned resumed; /* P(i): process i is granted what it waited for by this step */
};

struct scenario {
    const char *name;
    uint64_t device;
    uint64_t limits[3];  /* containers c0.. (0 ends) */
    int procs[4];        /* the container of process i (-1 ends) */
    struct step steps[8];
    int nsteps;
};

static const struct scenario scenarios[] = {
    {"grants within the limit, refuses beyond it", 1024 * MiB, {256 * MiB}, {0, -1},
     {{0, ALLOC, 64 * MiB, CG_ALLOC_GRANTED, 0},
      /* bigger than the limit can ever be: answered without the core */
      {0, ALLOC, 1024 * MiB, CG_ALLOC_OVER_LIMIT, 0},
      /* 64 + 250 > 256: the core refuses it as over the limit */
      {0, ALLOC, 250 * MiB, CG_ALLOC_OVER_LIMIT, 0},
      {0, ALLOC, 192 * MiB, CG_ALLOC_GRANTED, 0}},
     4},
    /* A process's exit returns its use to its container, which keeps its assignment: the
     * waiter in the other container is resumed once that container is removed. */
    {"a waiter resumed when the container holding the device goes", 1024 * MiB,
     {768 * MiB, 768 * MiB}, {0, 1, -1},
     {{0, ALLOC, 700 * MiB, CG_ALLOC_GRANTED, 0},
      {1, ALLOC, 600 * MiB, WAITS, 0},
      {0, EXIT, 0, 0, 0},
      {0, REMOVE, 0, 0, P(1)},
      {1, ALLOC, 100 * MiB, CG_ALLOC_GRANTED, 0}},
     5},
    /* c1 has 256 MiB of the device: process 2's request waits until its sibling frees. */
    {"a waiter resumed by its sibling's free", 1024 * MiB, {768 * MiB, 768 * MiB},
     {0, 1, 1, -1},
     {{0, ALLOC, 760 * MiB, CG_ALLOC_GRANTED, 0},
      {1, ALLOC, 200 * MiB, CG_ALLOC_GRANTED, 0},
      {2, ALLOC, 100 * MiB, WAITS, 0},
      {1, FREE, 100 * MiB, 0, P(2)},
      {2, ALLOC, 60 * MiB, WAITS, 0},
      {1, EXIT, 0, 0, P(2)}},
     6},
    {"siblings share their container's limit", 1024 * MiB, {512 * MiB}, {0, 0, -1},
     {{0, ALLOC, 100 * MiB, CG_ALLOC_GRANTED, 0},
      /* the hand-out gave process 0 the container's slack; the freeze takes it back */
      {1, ALLOC, 100 * MiB, CG_ALLOC_GRANTED, 0},
      {1, ALLOC, 400 * MiB, CG_ALLOC_OVER_LIMIT, 0},
      {0, EXIT, 0, 0, 0},
      {1, ALLOC, 400 * MiB, CG_ALLOC_GRANTED, 0}},
     5},
    {"two waiters on one device, both resumed", 1024 * MiB,
     {1024 * MiB, 512 * MiB, 512 * MiB}, {0, 1, 2, -1},
     {{0, ALLOC, 1000 * MiB, CG_ALLOC_GRANTED, 0},
      {1, ALLOC, 400 * MiB, WAITS, 0},
      {2, ALLOC, 400 * MiB, WAITS, 0},
      {0, REMOVE, 0, 0, P(1) | P(2)},
      {2, ALLOC, 1 * MiB, CG_ALLOC_GRANTED, 0}},
     5},
};

static void run(const struct scenario *s)
{
    struct daemon *d = test_daemon_new(&s->device, 1);
    struct container *cs[3] = {0};
    for (int i = 0; i < 3 && s->limits[i]; i++) {
        char id[16];
        snprintf(id, sizeof id, "c%d", i);
        cs[i] = test_container(d, id, 0, s->limits[i]);
    }
    struct proc *ps[4] = {0};
    int peers[4] = {-1, -1, -1, -1};
    for (int i = 0; i < 4 && s->procs[i] >= 0; i++) {
        ps[i] = test_proc(d, cs[s->procs[i]], &peers[i]);
        CHECK(ps[i]->welcomed, "%s: process %d has a slot", s->name, i);
    }
    check_invariants(d, s->name);
    uint64_t msg = 100;
    for (int k = 0; k < s->nsteps; k++) {
        const struct step *st = &s->steps[k];
        struct proc *p = st->op == REMOVE ? NULL : ps[st->proc];
        char when[160];
        snprintf(when, sizeof when, "%s, step %d", s->name, k);
        switch (st->op) {
        case ALLOC: {
            decide_alloc(d, p, ++msg, st->bytes);
            uint64_t id = 0;
            int got = test_reply(peers[st->proc], &id);
            CHECK(got == st->expect, "%s: reply %d, expected %d", when, got, st->expect);
            CHECK(got < 0 || id == msg, "%s: reply to %llu, asked %llu", when,
                  (unsigned long long)id, (unsigned long long)msg);
            if (st->expect == WAITS)
                CHECK(pending_count_proc(p) >= 1, "%s: the request waits", when);
            break;
        }
        case FREE:
            test_free(p, st->bytes);
            decide_freed(d, p);
            loop_run_once(d->loop, 0); /* FREED notices re-decide at the round's end */
            break;
        case EXIT:
            close(peers[st->proc]);
            peers[st->proc] = -1;
            proc_drop(d, p, "test exit");
            ps[st->proc] = NULL;
            break;
        case REMOVE:
            for (int i = 0; i < 4; i++)
                if (ps[i] && ps[i]->c == cs[st->proc]) {
                    close(peers[i]);
                    peers[i] = -1;
                    ps[i] = NULL;
                }
            char id[16];
            snprintf(id, sizeof id, "c%d", st->proc);
            container_remove(d, cs[st->proc], "test remove");
            cs[st->proc] = NULL;
            CHECK(container_find(d, id) == NULL, "%s: %s is gone", when, id);
            break;
        }
        for (int i = 0; i < 4; i++) {
            if (peers[i] < 0 || (i == st->proc && st->op == ALLOC))
                continue;
            int got = test_reply(peers[i], NULL);
            int want = st->resumed & P(i) ? CG_ALLOC_GRANTED : WAITS;
            CHECK(got == want, "%s: process %d's reply %d, expected %d", when, i, got, want);
        }
        check_invariants(d, when);
    }
    for (int i = 0; i < 4; i++)
        if (peers[i] >= 0)
            close(peers[i]);
    test_daemon_free(d);
}

/* A request granted and charged by a daemon that died before answering it comes again: it is
 * answered from the record's note, and nothing is charged twice. */
static void answered_from_note(void)
{
    uint64_t dev = 1024 * MiB;
    struct daemon *d = test_daemon_new(&dev, 1);
    struct container *c = test_container(d, "noted", 0, 256 * MiB);
    int peer;
    struct proc *p = test_proc(d, c, &peer);
    decide_alloc(d, p, 7, 10 * MiB);
    CHECK(test_reply(peer, NULL) == CG_ALLOC_GRANTED, "the first grant");
    struct cg_record_slot *r = &c->rec->slots[p->slot];
    uint32_t quota = r->quota;
    uint64_t use = core_use(d, p, NULL);
    r->notes[0] = (struct cg_ledger_grant){77, CG_LEDGER_CHARGED, 2560};
    r->noted = 1;
    uint64_t id = 0;
    decide_alloc(d, p, 77, 10 * MiB);
    CHECK(test_reply(peer, &id) == CG_ALLOC_GRANTED && id == 77, "answered from the note");
    CHECK(r->noted == 0, "the note is used up (%u left)", r->noted);
    CHECK(r->quota == quota && core_use(d, p, NULL) == use && pending_count(c) == 0,
          "nothing charged again: quota %u -> %u", quota, r->quota);
    check_invariants(d, "answered from the note");
    close(peer);
    test_daemon_free(d);
}

int main(void)
{
    for (size_t i = 0; i < sizeof scenarios / sizeof scenarios[0]; i++)
        run(&scenarios[i]);
    answered_from_note();
    if (!failures)
        printf("decide: %zu scenarios and the restart note: every invariant held\n",
               sizeof scenarios / sizeof scenarios[0]);
    return failures != 0;
}

/* test_pending.c — the daemon's pending-request bookkeeping (src/daemon/pending.c) against a
 * plain model: random adds, takes by id (answered in any order, unknown ids included), drops of
 * a process's requests and of a whole container, with table growth, wrap-around and the table
 * given back when a flood ends. After every step: every waiting request is found by its id and
 * nothing else is, the container's list is in arrival order, each process's list holds exactly
 * its requests, and every count agrees with the model. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"

#define NPROC 8
#define MAXREQ 20000

static uint64_t rs = 1;
static uint64_t rnd(void)
{
    uint64_t z = (rs += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* The model: requests waiting, in arrival order. */
static struct {
    uint64_t req;
    int proc;
} model[MAXREQ];
static size_t nmodel;

static int fails;
#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "FAIL line %d: ", __LINE__);                                           \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, "\n");                                                                 \
            fails++;                                                                               \
            return;                                                                                \
        }                                                                                          \
    } while (0)

static void verify(struct container *c, struct proc *procs, uint64_t next_req)
{
    CHECK(pending_count(c) == nmodel, "count %u, model %zu", pending_count(c), nmodel);
    size_t i = 0;
    struct pending *prev = NULL;
    for (struct pending *r = c->pending.head; r; prev = r, r = r->next, i++) {
        CHECK(i < nmodel && r->req == model[i].req && r->proc == &procs[model[i].proc],
              "list entry %zu is request %" PRIu64, i, r->req);
        CHECK(r->prev == prev, "back link of %" PRIu64, r->req);
        CHECK(r->msg_id == r->req * 3 && r->bytes == r->req * 4096, "fields of %" PRIu64, r->req);
    }
    CHECK(i == nmodel && c->pending.tail == prev, "list length %zu, tail", i);
    for (int p = 0; p < NPROC; p++) {
        unsigned want = 0, seen = 0;
        for (size_t k = 0; k < nmodel; k++)
            want += model[k].proc == p;
        for (struct pending *r = procs[p].pending; r; r = r->proc_next, seen++)
            CHECK(r->proc == &procs[p] && (!r->proc_next || r->proc_next->proc_prev == r),
                  "process %d's list", p);
        CHECK(seen == want && pending_count_proc(&procs[p]) == want,
              "process %d: %u listed, count %u, model %u", p, seen, pending_count_proc(&procs[p]),
              want);
    }
    for (size_t k = 0; k < nmodel; k++)
        CHECK(pending_find(c, model[k].req) && pending_find(c, model[k].req)->req == model[k].req,
              "request %" PRIu64 " not found", model[k].req);
    /* A few ids that are not waiting: answered long ago, or never issued. */
    for (int k = 0; k < 8; k++) {
        uint64_t req = 1 + rnd() % (next_req + 100);
        bool waiting = false;
        for (size_t j = 0; j < nmodel; j++)
            waiting |= model[j].req == req;
        CHECK(waiting == (pending_find(c, req) != NULL), "request %" PRIu64 " found: %d", req,
              !waiting);
    }
}

static void model_remove(size_t k)
{
    memmove(&model[k], &model[k + 1], (nmodel - k - 1) * sizeof model[0]);
    nmodel--;
}

static struct container c;
static struct proc procs[NPROC];
static unsigned long adds, takes, drops, shrinks, steps, most;

static void run(void)
{
    for (int p = 0; p < NPROC; p++)
        procs[p].c = &c;
    uint64_t next_req = 0;
    for (int phase = 0; phase < 6 && !fails; phase++) {
        /* Floods (mostly adds) alternate with drains (mostly answers). */
        bool flood = phase % 2 == 0;
        for (int s = 0; s < 6000 && !fails; s++, steps++) {
            uint64_t x = rnd() % 1000;
            if (((flood ? x < 700 : x < 250) || (x < 995 && !nmodel)) && nmodel < MAXREQ) {
                int p = (int)(rnd() % NPROC);
                uint64_t req = ++next_req;
                struct pending *r = pending_add(&c, &procs[p], req, req * 3, req * 4096, 0);
                CHECK(r && r->req == req, "add %" PRIu64, req);
                model[nmodel].req = req;
                model[nmodel++].proc = p;
                adds++;
            } else if (x < 995 && nmodel) {
                size_t k = (size_t)(rnd() % nmodel);
                uint64_t req = model[k].req;
                struct pending *r = pending_take(&c, req);
                CHECK(r && r->req == req && r->proc == &procs[model[k].proc], "take %" PRIu64, req);
                free(r);
                CHECK(!pending_take(&c, req), "request %" PRIu64 " taken twice", req);
                model_remove(k);
                takes++;
            } else {
                int p = (int)(rnd() % NPROC);
                pending_drop_proc(&procs[p]);
                for (size_t k = nmodel; k-- > 0;)
                    if (model[k].proc == p)
                        model_remove(k);
                drops++;
            }
            size_t cap = c.pending.by_req.cap;
            if (nmodel > most)
                most = nmodel;
            if ((s & 63) == 0 || nmodel < 4)
                verify(&c, procs, next_req);
            if (nmodel == 0 && cap == 0)
                shrinks++;
        }
    }
    verify(&c, procs, next_req);
    pending_drop_all(&c);
    nmodel = 0;
    verify(&c, procs, next_req);
    CHECK(!c.pending.by_req.slots && !c.pending.by_req.cap, "the table was kept after drop_all");
}

int main(void)
{
    run();
    printf("%lu steps: %lu adds, %lu answers, %lu process drops; up to %lu waiting; %lu times "
           "empty with no table; %d failures\n",
           steps, adds, takes, drops, most, shrinks, fails);
    return fails ? 1 : 0;
}

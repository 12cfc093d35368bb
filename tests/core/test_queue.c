/* test_queue.c — a long queue of suspended requests (src/core/waitq.c) decides exactly what a
 * plain walk of the queue would.
 *
 * One container with 4096 suspended requests of random sizes from 64 processes, then random use
 * changes (cg_process_set_use up and down, cg_release) and process exits. After each, a model
 * that walks the queue the obvious way — grant in arrival order every request that fits what is
 * left of the assignment, then reject every request that no longer fits the limit; an exit first
 * cancels the process's own requests in arrival order — must produce the very RESUME and REJECT
 * events the core emitted, in the same order, and cg_core_check must hold. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"

#define NREQ 4096
#define NPROC 64
#define K 1024ull /* sizes in units of 1 KiB so that every request is a few of them */
#define PID(i) ((cg_pid)(i) + 1) /* process i's key (0 means "no process" in events) */

#include "../common/check.h"

static struct {
    cg_event ev[2 * NREQ + 64];
    unsigned n;
} rec;

static void record(void *ctx, const cg_event *ev)
{
    (void)ctx;
    if (ev->kind != CG_EV_RESUME && ev->kind != CG_EV_REJECT)
        return;
    if (rec.n < sizeof rec.ev / sizeof rec.ev[0])
        rec.ev[rec.n] = *ev;
    rec.n++;
}

/* The model: the queue in arrival order, and each process's use. */
static struct {
    cg_reqid req;
    unsigned proc;
    cg_bytes bytes;
} q[NREQ];
static unsigned nq;
static cg_bytes use[NPROC + 1];
static cg_bytes U, A, L;

static cg_event want[2 * NREQ + 64];
static unsigned nwant;

static void expect(cg_event_kind kind, unsigned i)
{
    want[nwant++] = (cg_event){.kind = kind, .pid = PID(q[i].proc), .req = q[i].req,
                               .bytes = q[i].bytes};
}

static void model_remove(unsigned i)
{
    memmove(&q[i], &q[i + 1], (nq - i - 1) * sizeof q[0]);
    nq--;
}

/* The obvious drain: a walk per pass. */
static void model_drain(void)
{
    for (unsigned i = 0; i < nq;) {
        if (U + q[i].bytes <= A) {
            U += q[i].bytes;
            use[q[i].proc] += q[i].bytes;
            expect(CG_EV_RESUME, i);
            model_remove(i);
        } else {
            i++;
        }
    }
    for (unsigned i = 0; i < nq;) {
        if (q[i].bytes > L - U) {
            expect(CG_EV_REJECT, i);
            model_remove(i);
        } else {
            i++;
        }
    }
}

static uint64_t rs = 7;
static uint64_t rnd(void)
{
    uint64_t z = (rs += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void compare(const char *what, int step)
{
    CHECK(rec.n == nwant, "%s (step %d): %u events, the model %u", what, step, rec.n, nwant);
    for (unsigned i = 0; i < rec.n && i < nwant; i++) {
        const cg_event *e = &rec.ev[i], *w = &want[i];
        if (e->kind != w->kind || e->req != w->req || e->pid != w->pid || e->bytes != w->bytes) {
            CHECK(false, "%s (step %d): event %u is %s of request %" PRIu64
                  ", the model's %s of request %" PRIu64, what, step, i,
                  cg_event_kind_name(e->kind), e->req, cg_event_kind_name(w->kind), w->req);
            break;
        }
    }
    rec.n = nwant = 0;
}

int main(void)
{
    cg_config cfg = {.sink = record};
    cg_core *core = cg_core_new(&cfg);
    CHECK(core && cg_device_add(core, 4096 * K, 0, 0, NULL) == CG_OK, "setup");
    /* B holds 2560 KiB, so A (limit 4096 KiB) is assigned the 1536 KiB left and can get no more:
     * whatever A asks beyond its assignment waits. */
    cg_cid b = CG_CID_NONE, a = CG_CID_NONE;
    CHECK(cg_container_create(core, 0, 2560 * K, 0, &b) == CG_OK &&
              cg_container_create(core, 0, 4096 * K, 0, &a) == CG_OK, "containers");
    cg_container_info ci;
    cg_container_get(core, a, 0, &ci);
    A = ci.assigned;
    L = ci.limit;
    CHECK(A == 1536 * K && L == 4096 * K, "A's assignment %" PRIu64, A);
    /* Process 0 holds 1024 KiB; the queue: sizes between 513 KiB (never fits while process 0
     * holds its use) and 3072 KiB (fits the limit at that use), from processes 1..64. */
    cg_outcome o;
    CHECK(cg_request(core, a, PID(0), 1, 1024 * K, 0, &o) == CG_OK && o == CG_GRANTED,
          "process 0");
    use[0] = U = 1024 * K;
    for (unsigned i = 0; i < NREQ; i++) {
        unsigned proc = 1 + (unsigned)(rnd() % NPROC);
        cg_bytes bytes = (513 + rnd() % (3072 - 513 + 1)) * K;
        cg_reqid req = 100 + i;
        CHECK(cg_request(core, a, PID(proc), req, bytes, 0, &o) == CG_OK && o == CG_SUSPENDED,
              "request %u", i);
        q[nq].req = req;
        q[nq].proc = proc;
        q[nq++].bytes = bytes;
    }
    rec.n = 0;
    const char *why = cg_core_check(core);
    CHECK(!why, "check after the queue: %s", why ? why : "");

    unsigned resumed = 0, rejected = 0, exits = 0;
    for (int step = 0; step < 400 && nq && !failures; step++) {
        uint64_t x = rnd() % 100;
        /* Half the time the process that holds the most (it frees), else any. */
        unsigned proc = (unsigned)(rnd() % (NPROC + 1));
        if (rnd() % 2)
            for (unsigned i = 0; i <= NPROC; i++)
                if (use[i] > use[proc])
                    proc = i;
        const char *what;
        if (x < 70) {
            /* A use sync: any use from 0 to what A leaves the process; mostly all or much of it
             * freed (so that requests fit), now and then more (so that some no longer fit the
             * limit). */
            cg_bytes most = (A - (U - use[proc])) / K;
            cg_bytes to = x < 35 ? 0 : (rnd() % (x < 55 ? most / 8 + 1 : most + 1)) * K;
            CHECK(cg_process_set_use(core, a, PID(proc), to, 0) == CG_OK, "set_use");
            U = U - use[proc] + to;
            use[proc] = to;
            what = "set_use";
        } else if (x < 95) {
            if (!use[proc])
                continue;
            cg_bytes by = (1 + rnd() % (use[proc] / K)) * K;
            CHECK(cg_release(core, a, PID(proc), by, 0) == CG_OK, "release");
            U -= by;
            use[proc] -= by;
            what = "release";
        } else {
            if (proc == 0 || cg_process_exit(core, a, PID(proc), 0) != CG_OK)
                continue;
            for (unsigned i = 0; i < nq;) {
                if (q[i].proc == proc) {
                    expect(CG_EV_REJECT, i);
                    model_remove(i);
                } else {
                    i++;
                }
            }
            U -= use[proc];
            use[proc] = 0;
            exits++;
            what = "exit";
        }
        model_drain();
        for (unsigned i = 0; i < nwant; i++) {
            resumed += want[i].kind == CG_EV_RESUME;
            rejected += want[i].kind == CG_EV_REJECT;
        }
        compare(what, step);
        why = cg_core_check(core);
        CHECK(!why, "check after %s (step %d): %s", what, step, why ? why : "");
        cg_container_get(core, a, 0, &ci);
        CHECK(ci.npending == nq && ci.used == U, "step %d: %u waiting (model %u)", step,
              ci.npending, nq);
    }
    CHECK(resumed > 100 && rejected > 100 && exits > 10,
          "too little happened: %u resumed, %u rejected, %u exits", resumed, rejected, exits);
    printf("queue: %u resumed, %u rejected (%u process exits), %u still waiting; %d failures\n",
           resumed, rejected, exits, nq, failures);
    cg_core_free(core);
    return failures ? 1 : 0;
}

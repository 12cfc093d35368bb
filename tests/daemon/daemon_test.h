/* daemon_test.h — a daemon below its control API, for the unit tests of tests/daemon: a runtime
 * directory of its own, the core with decide.c's sink, the loop, devices of chosen sizes, and
 * no store, API, metrics or NVML. Processes are made here, not by connecting: each is a
 * socketpair whose far end the test reads the daemon's replies from, and whose pid is the test's
 * own (alive, with a start time), so slot_claim and restore take it for a live process.
 *
 * These tests link libconvgpud_below alone (src/daemon/CMakeLists.txt): decide, container,
 * restore and slot link without the API, and the invariants of daemon.h are checked after every
 * step (check_invariants). Header-only; each test is one program. */
#ifndef CONVGPU_DAEMON_TEST_H
#define CONVGPU_DAEMON_TEST_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check.h"
#include "daemon.h"
#include "log.h"
#include "proto.h"

#define MiB (1024ull * 1024ull)

/* A daemon over the runtime directory `dir` (an existing one: a restarted daemon's), with
 * ndevices devices of the given bytes. */
static inline struct daemon *test_daemon_at(const char *dir, const uint64_t *device_bytes,
                                            unsigned ndevices)
{
    struct daemon *d = calloc(1, sizeof *d);
    char err[256];
    if (!d || rundir_open(dir, &d->rd, err, sizeof err) != 0) {
        fprintf(stderr, "cannot open the runtime directory %s\n", dir);
        exit(2);
    }
    log_set_level(getenv("TEST_DEBUG") ? LOG_DEBUG : LOG_ERROR);
    d->control_fd = d->spare_fd = -1;
    d->opt.granularity = CG_LEDGER_PAGE;
    d->swap_ops = &swap_for_decide; /* as main.c gives it */
    cg_config cfg = {.sink = decide_sink, .sink_ctx = d};
    d->core = cg_core_new(&cfg);
    d->loop = loop_new();
    if (!d->core || !d->loop)
        exit(2);
    d->ndevices = ndevices;
    for (unsigned i = 0; i < ndevices; i++) {
        unsigned idx;
        snprintf(d->devices[i].name, sizeof d->devices[i].name, "test device %u", i);
        d->devices[i].total = device_bytes[i];
        if (cg_device_add(d->core, device_bytes[i], 0, 0, &idx) != CG_OK)
            exit(2);
    }
    return d;
}

/* The same over a fresh runtime directory under /tmp. */
static inline struct daemon *test_daemon_new(const uint64_t *device_bytes, unsigned ndevices)
{
    char dir[64];
    snprintf(dir, sizeof dir, "/tmp/convgpu-daemon-test.XXXXXX");
    if (!mkdtemp(dir)) {
        fprintf(stderr, "cannot make a runtime directory\n");
        exit(2);
    }
    return test_daemon_at(dir, device_bytes, ndevices);
}

/* Removes every container (as the API's DELETE would) and the runtime directory. */
static inline void test_daemon_free(struct daemon *d)
{
    while (d->containers)
        container_remove(d, d->containers, "test over");
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s", d->rd.path);
    rundir_close(&d->rd);
    int parent = open("/tmp", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    rundir_remove(parent, strrchr(path, '/') + 1);
    close(parent);
    tenant_free(d);
    cg_core_free(d->core);
    loop_free(d->loop);
    free(d);
}

static inline struct container *test_container(struct daemon *d, const char *id, int device,
                                               uint64_t limit)
{
    cg_container_spec spec = {.device = device, .limit = limit};
    struct container *c = NULL;
    char err[256];
    int rc = container_create(d, id, "", NULL, &spec, getuid(), getgid(), 0, false, NULL, NULL,
                              &c, err, sizeof err);
    CHECK(rc == 0 && c, "create %s: %d %s", id, rc, err);
    return c;
}

/* A process of c, welcomed into a slot as client.c would: *peer is the end the test reads. */
static inline struct proc *test_proc(struct daemon *d, struct container *c, int *peer)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) != 0)
        exit(2);
    struct proc *p = calloc(1, sizeof *p);
    p->c = c;
    p->fd = sv[0];
    p->pid = getpid();
    p->uid = getuid();
    p->key = ++d->next_key;
    p->slot = slot_claim(c, p->pid);
    p->welcomed = p->slot != UINT32_MAX;
    p->next = c->procs;
    c->procs = p;
    d->client_conns++;
    *peer = sv[1];
    return p;
}

/* The reply waiting on peer: its status, or -1 when none came (the request waits). */
static inline int test_reply(int peer, uint64_t *msg_id)
{
    unsigned char buf[CG_MSG_MAX];
    ssize_t n = recv(peer, buf, sizeof buf, MSG_DONTWAIT);
    if (n <= 0)
        return -1;
    union cg_msg m;
    const char *why = NULL;
    if (cg_proto_decode(buf, (size_t)n, &m, &why) != 0 || m.hdr.type != CG_MSG_ALLOC_REPLY)
        return -2;
    if (msg_id)
        *msg_id = m.hdr.id;
    return (int)m.alloc_reply.status;
}

/* The process lowers its own use, as the interposer does on a free (the ledger's used half). */
static inline void test_free(struct proc *p, uint64_t bytes)
{
    _Atomic uint64_t *w = &p->c->ledger->slots[p->slot].word;
    uint64_t old = atomic_load(w), pages = bytes / CG_LEDGER_PAGE;
    uint64_t used = cg_ledger_used(old) > pages ? cg_ledger_used(old) - pages : 0;
    atomic_store(w, cg_ledger_pack(cg_ledger_quota(old), used));
}

/* The core's figure of one process's use (bytes), and whether it knows the process. */
static inline uint64_t core_use(struct daemon *d, struct proc *p, bool *known)
{
    cg_process_info all[64];
    size_t n = cg_container_processes(d->core, p->c->cid, all, 64);
    for (size_t i = 0; i < n && i < 64; i++)
        if (all[i].pid == p->key) {
            if (known)
                *known = true;
            return all[i].used;
        }
    if (known)
        *known = false;
    return 0;
}

/* daemon.h's invariants, for every container and process the daemon knows:
 *   - core's use of p == quota half of p's slot (bytes), for a process known to the core;
 *   - the ledger's quota half == the record's quota (the record is what the daemon granted);
 *   - sum of quotas <= the container's assignment, and its assignment <= its limit;
 *   - the requests the daemon holds for the core == those the core holds (none held back). */
static inline void check_invariants(struct daemon *d, const char *when)
{
    const char *why = cg_core_check(d->core);
    CHECK(why == NULL, "%s: the core's invariant: %s", when, why ? why : "");
    for (struct container *c = d->containers; c; c = c->next) {
        cg_container_info ci;
        CHECK(cg_container_get(d->core, c->cid, 0, &ci) == CG_OK, "%s: %s in the core", when,
              c->ident.id);
        uint64_t quotas = 0;
        unsigned waiting = 0;
        for (struct proc *p = c->procs; p; p = p->next) {
            if (!p->welcomed)
                continue;
            uint64_t q = c->rec->slots[p->slot].quota;
            uint64_t w = atomic_load(&c->ledger->slots[p->slot].word);
            quotas += q;
            CHECK(cg_ledger_quota(w) == q, "%s: %s slot %u: ledger quota %llu, record %llu",
                  when, c->ident.id, p->slot, (unsigned long long)cg_ledger_quota(w),
                  (unsigned long long)q);
            bool known;
            uint64_t use = core_use(d, p, &known);
            CHECK(known == p->known_to_core, "%s: %s slot %u: known to the core %d, thought %d",
                  when, c->ident.id, p->slot, known, p->known_to_core);
            if (known)
                CHECK(use == q * CG_LEDGER_PAGE, "%s: %s slot %u: core use %llu != quota %llu",
                      when, c->ident.id, p->slot, (unsigned long long)use,
                      (unsigned long long)(q * CG_LEDGER_PAGE));
            waiting += pending_count_proc(p);
        }
        CHECK(quotas * CG_LEDGER_PAGE <= ci.assigned, "%s: %s quotas %llu > assigned %llu", when,
              c->ident.id, (unsigned long long)(quotas * CG_LEDGER_PAGE),
              (unsigned long long)ci.assigned);
        CHECK(ci.assigned <= ci.limit, "%s: %s assigned over its limit", when, c->ident.id);
        CHECK(waiting == pending_count(c), "%s: %s: %u waiting by process, %u by container",
              when, c->ident.id, waiting, pending_count(c));
        if (!c->decide.held)
            CHECK(pending_count(c) == ci.npending, "%s: %s: %u waiting here, %u in the core",
                  when, c->ident.id, pending_count(c), ci.npending);
    }
}

#endif

/* test_restore.c — restore.c without the API: a daemon that died is replaced by another over the
 * same runtime directory, which takes the container back from its stored row and its record.
 *
 * The first daemon grants a live process (this test) some memory, then "dies" in one of the
 * states a grant can be caught in (decide.c's charge_slot: noted, then recorded, then charged to
 * the ledger); a second slot belongs to a process that has exited since. The second daemon
 * restores the container (restore_container), and each table row says what it must find:
 *   - the live process adopted in its slot, the exited one's slot free again;
 *   - the grant caught half-way settled as restore.c says (the process's use after it is the
 *     first grant plus the caught one where that was charged): never charged -> its note dropped;
 *     recorded and charged -> kept (answered again without a second charge); recorded but the
 *     ledger had not followed -> the ledger brought level (only when the ledger was found again,
 *     which needs the daemon to be root; otherwise the slot is counted at what was granted);
 *   - daemon.h's invariants (the core's use of the process == its slot's quota).
 * Nothing but the two daemons' own code runs: no API, no store, no socket traffic. */
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "daemon_test.h"

/* The first daemon's end: it died, so nothing of what it left on disk or in the ledger is
 * touched (the second daemon owns it now); only this process's memory and descriptors go. */
static void abandon(struct daemon *d)
{
    while (d->containers) {
        struct container *c = d->containers;
        d->containers = c->next;
        while (c->procs) {
            struct proc *p = c->procs;
            c->procs = p->next;
            if (p->fd >= 0)
                close(p->fd);
            free(p);
        }
        pending_drop_all(c);
        loop_del(d->loop, c->endpoint.listen_fd);
        munmap(c->ledger, CG_LEDGER_SIZE);
        record_close(c->rec);
        close(c->ledger_fd);
        close(c->endpoint.listen_fd);
        close(c->endpoint.dir_fd);
        free(c->gang.members);
        free(c);
    }
    tenant_free(d);
    cg_core_free(d->core);
    loop_free(d->loop);
    rundir_close(&d->rd);
    free(d);
}

enum caught { NO_NOTE, NOTED_NOT_CHARGED, CHARGED, RECORDED_LEDGER_BEHIND };

static const struct {
    const char *what;
    enum caught state;
    uint32_t want_noted;   /* notes left after the restore */
    uint32_t want_used_plus; /* pages of use above what was granted before the caught grant */
} rows[] = {
    {"no grant under way", NO_NOTE, 0, 0},
    {"a grant noted, never charged", NOTED_NOT_CHARGED, 0, 0},
    {"a grant recorded and charged, not answered", CHARGED, 1, 100},
    {"a grant recorded, the ledger behind", RECORDED_LEDGER_BEHIND, 1, 100},
};

static void restart(size_t k)
{
    const char *what = rows[k].what;
    uint64_t dev = 1024 * MiB;
    struct daemon *a = test_daemon_new(&dev, 1);
    struct container *c = test_container(a, "r", 0, 256 * MiB);
    int peer;
    struct proc *p = test_proc(a, c, &peer);
    decide_alloc(a, p, 1, 40 * MiB);
    CHECK(test_reply(peer, NULL) == CG_ALLOC_GRANTED, "%s: the first grant", what);
    decide_freeze(a, c); /* quota := use: room for the caught grant below the limit */
    /* A process that exits after it took a slot. */
    int gate[2];
    if (pipe(gate) != 0)
        exit(2);
    pid_t child = fork();
    if (child == 0) {
        char b;
        close(gate[1]);
        _exit(read(gate[0], &b, 1) < 0);
    }
    close(gate[0]);
    uint32_t dead_slot = slot_claim(c, child);
    CHECK(dead_slot != UINT32_MAX, "%s: a slot for the child", what);
    close(gate[1]);
    waitpid(child, NULL, 0);

    /* The grant the first daemon is caught in (charge_slot's order). */
    struct cg_record_slot *r = &c->rec->slots[p->slot];
    _Atomic uint64_t *word = &c->ledger->slots[p->slot].word;
    uint32_t q0 = r->quota;
    uint64_t w0 = atomic_load(word);
    switch (rows[k].state) {
    case NO_NOTE:
        break;
    case NOTED_NOT_CHARGED:
        r->notes[0] = (struct cg_ledger_grant){9, q0, 100};
        r->noted = 1;
        break;
    case CHARGED:
        r->notes[0] = (struct cg_ledger_grant){9, q0, 100};
        r->noted = 1;
        r->quota = q0 + 100;
        atomic_store(word, cg_ledger_pack(q0 + 100, cg_ledger_used(w0) + 100));
        break;
    case RECORDED_LEDGER_BEHIND:
        r->notes[0] = (struct cg_ledger_grant){9, q0, 100};
        r->noted = 1;
        r->quota = q0 + 100;
        break;
    }
    struct stored_container row;
    store_row_of(c, &row);
    struct stat ledger_st;
    fstat(c->ledger_fd, &ledger_st);
    uint32_t slot = p->slot;

    /* The first daemon is gone (its state left as it was); the second takes over. */
    struct daemon *b = test_daemon_at(a->rd.path, &dev, 1);
    CHECK(restore_container(b, &row) == 0, "%s: restored", what);
    struct container *c2 = container_find(b, "r");
    CHECK(c2 != NULL, "%s: found after the restore", what);
    if (!c2)
        return;
    struct stat st2;
    bool ledger_found = fstat(c2->ledger_fd, &st2) == 0 && st2.st_ino == ledger_st.st_ino &&
                        st2.st_dev == ledger_st.st_dev;
    if (geteuid() == 0)
        CHECK(ledger_found, "%s: as root, the ledger is found in this process's mappings", what);
    unsigned adopted = 0;
    struct proc *p2 = NULL;
    for (struct proc *q = c2->procs; q; q = q->next) {
        adopted++;
        p2 = q;
    }
    CHECK(adopted == 1 && p2 && p2->slot == slot && p2->fd == -1 && p2->welcomed,
          "%s: the live process adopted in slot %u (%u adopted)", what, slot, adopted);
    CHECK(c2->rec->slots[dead_slot].pid == 0, "%s: the exited process's slot is free", what);
    const struct cg_record_slot *r2 = &c2->rec->slots[slot];
    CHECK(r2->noted == rows[k].want_noted, "%s: %u notes left, expected %u", what, r2->noted,
          rows[k].want_noted);
    if (r2->noted)
        CHECK(r2->notes[0].quota_before == CG_LEDGER_CHARGED && r2->notes[0].id == 9,
              "%s: the kept note is marked charged", what);
    /* Its use is what it was granted, the caught grant included where it was charged; the
     * restore then hands the container's slack to it (decide_hand_out), so its quota is the
     * container's whole assignment. */
    uint64_t w = atomic_load(&c2->ledger->slots[slot].word);
    cg_container_info ci = {0};
    cg_container_get(b->core, c2->cid, 0, &ci);
    CHECK(cg_ledger_used(w) == q0 + rows[k].want_used_plus, "%s: use %llu pages, expected %u",
          what, (unsigned long long)cg_ledger_used(w), q0 + rows[k].want_used_plus);
    CHECK(r2->quota == ci.assigned / CG_LEDGER_PAGE && cg_ledger_quota(w) == r2->quota &&
              ci.assigned == 256 * MiB,
          "%s: quota %u pages, the assignment %llu bytes", what, r2->quota,
          (unsigned long long)ci.assigned);
    if (p2)
        CHECK(p2->known_to_core && core_use(b, p2, NULL) == (uint64_t)r2->quota * CG_LEDGER_PAGE,
              "%s: the core counts the process at its quota", what);
    check_invariants(b, what);
    /* A re-sent request the note answers: granted again, not charged again. */
    if (p2 && rows[k].want_noted) {
        int sv[2];
        socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv);
        p2->fd = sv[0];
        b->client_conns++;
        uint32_t quota = r2->quota;
        decide_alloc(b, p2, 9, 100 * CG_LEDGER_PAGE);
        CHECK(test_reply(sv[1], NULL) == CG_ALLOC_GRANTED && r2->quota == quota &&
                  r2->noted == 0 && cg_ledger_used(atomic_load(&c2->ledger->slots[slot].word)) ==
                                        q0 + rows[k].want_used_plus,
              "%s: the re-sent request answered from its note", what);
        close(sv[1]);
    }
    test_daemon_free(b); /* removes the container and the runtime directory */
    abandon(a);
    close(peer);
}

int main(void)
{
    for (size_t k = 0; k < sizeof rows / sizeof rows[0]; k++)
        restart(k);
    if (!failures)
        printf("restore: %zu restarts, each settled as restore.c says (%s)\n",
               sizeof rows / sizeof rows[0],
               geteuid() == 0 ? "ledgers found again" : "not root: ledgers made afresh");
    return failures != 0;
}

/* restore.c — a restarted daemon takes its containers back.
 *
 * What it believes comes from its own state: the container rows in SQLite (limit, compute share,
 * owner, device) and each container's record (record.h: assignment, which process holds which
 * slot, what each was granted, unanswered grants). The ledger the container's processes still
 * map is read only for what a process may lower on its own — its use — and that is bounded by
 * the record. Nothing is opened by a path a tenant can write: the record is in a 0700 directory
 * of the daemon's, and the ledger, a sealed memfd that lives in no directory, is found again in
 * the memory maps of a process the record names, and accepted only if it is the very same object
 * (device and inode recorded at creation) with its seals in place.
 *
 * The processes themselves notice nothing: they keep charging their slot in the same ledger and
 * reconnect (HELLO with RECONNECT) on their next request. If no live process still maps the
 * ledger (or the daemon may not look: not root), a fresh one is made; each live process is then
 * counted as using all it was granted until it exits, since its own count is out of sight. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon.h"
#include "gang.h"
#include "log.h"
#include "profile.h"
#include "swap.h"

static void remove_leftovers(struct daemon *d, const char *id)
{
    rundir_remove(d->rd.containers_fd, id);
    record_unlink(d->rd.records_fd, id);
}

/* Opens the ledger memfd through process pid's mapping of it; -1 when it has none. */
static int ledger_from(pid_t pid, const char *id, const struct cg_record *rec)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return -1;
    char want[CONTAINER_ID_MAX + 48];
    snprintf(want, sizeof want, "/memfd:" CG_LEDGER_MEMFD_PREFIX "%s", id);
    char line[512];
    int fd = -1;
    while (fd < 0 && fgets(line, sizeof line, f)) {
        unsigned long lo, hi, ino;
        int name_at = 0;
        if (sscanf(line, "%lx-%lx %*s %*x %*x:%*x %lu %n", &lo, &hi, &ino, &name_at) != 3 ||
            name_at == 0 || ino != rec->ledger_ino)
            continue;
        const char *name = line + name_at;
        size_t wl = strlen(want);
        if (strncmp(name, want, wl) != 0 || (name[wl] != ' ' && name[wl] != '\n'))
            continue;
        char mf[96];
        snprintf(mf, sizeof mf, "/proc/%d/map_files/%lx-%lx", (int)pid, lo, hi);
        int cand = open(mf, O_RDWR | O_CLOEXEC);
        if (cand < 0)
            continue;
        struct stat st;
        int seals = fcntl(cand, F_GET_SEALS);
        if (fstat(cand, &st) == 0 && (uint64_t)st.st_ino == rec->ledger_ino &&
            (uint64_t)st.st_dev == rec->ledger_dev && (size_t)st.st_size == CG_LEDGER_SIZE &&
            seals >= 0 && (seals & (F_SEAL_SHRINK | F_SEAL_GROW)) == (F_SEAL_SHRINK | F_SEAL_GROW))
            fd = cand;
        else
            close(cand);
    }
    fclose(f);
    return fd;
}

static int find_ledger(const char *id, const struct cg_record *rec)
{
    uint32_t high = rec->high < CG_LEDGER_SLOTS ? rec->high : CG_LEDGER_SLOTS;
    for (uint32_t i = 0; i < high; i++) {
        const struct cg_record_slot *r = &rec->slots[i];
        if (!r->pid)
            continue;
        int fd = ledger_from((pid_t)r->pid, id, rec);
        if (fd >= 0)
            return fd;
    }
    return -1;
}

/* The last grant noted by the dead daemon: charged or not? (decide.c's charge_slot order.) */
static void settle_note(struct container *c, uint32_t i, bool ledger_found)
{
    struct cg_record_slot *r = &c->rec->slots[i];
    uint32_t noted = r->noted < CG_LEDGER_NOTES ? r->noted : CG_LEDGER_NOTES;
    if (noted > 0 && r->notes[noted - 1].quota_before != CG_LEDGER_CHARGED) {
        struct cg_ledger_grant *g = &r->notes[noted - 1];
        if (r->quota == g->quota_before) {
            noted--; /* never charged: the re-sent request will be decided afresh */
        } else {
            uint64_t lq = cg_ledger_quota(atomic_load(&c->ledger->slots[i].word));
            if (ledger_found && lq == g->quota_before)
                slot_charge(c, i, g->pages); /* recorded, but the ledger had not followed */
            g->quota_before = CG_LEDGER_CHARGED;
        }
    }
    r->noted = noted;
}

int restore_container(void *ctx, const struct stored_container *sc)
{
    struct daemon *d = ctx;
    /* An owner recorded by an older daemon without its start time is checked by pid alone. */
    bool owner_alive = sc->owner_start ? proc_alive(sc->owner_pid, sc->owner_start)
                                       : cg_proc_start_time(sc->owner_pid) != 0;
    if (sc->auto_remove && !owner_alive) {
        log_info("container %s: owner pid %d exited while the daemon was down; removed", sc->id,
                 (int)sc->owner_pid);
        remove_leftovers(d, sc->id);
        store_delete_container(d->store, sc->id);
        return 0;
    }
    /* A gang member comes back beside its leader (restored before it); without one it is
     * gone with it. */
    struct container *leader = sc->gang[0] ? container_find(d, sc->gang) : NULL;
    if (sc->gang[0] && (!leader || strcmp(leader->ident.id, sc->gang) != 0)) {
        log_info("container %s: member %u of %s, which is gone; removed", sc->id, sc->member,
                 sc->gang);
        remove_leftovers(d, sc->id);
        store_delete_container(d->store, sc->id);
        return 0;
    }
    char err[256];
    bool found = false;
    struct cg_record *rec = record_open(d->rd.records_fd, sc->id, true, &found, err, sizeof err);
    if (!rec) {
        log_error("container %s: cannot restore: %s", sc->id, err);
        return -1;
    }
    if (!found)
        log_warn("container %s: no account record (first start of this version, or lost): its "
                 "processes, if any, are not counted until they reconnect", sc->id);
    /* Slots whose process is gone (or never was what the record says) are free again. */
    uint32_t high = rec->high < CG_LEDGER_SLOTS ? rec->high : CG_LEDGER_SLOTS;
    for (uint32_t i = 0; i < high; i++) {
        struct cg_record_slot *r = &rec->slots[i];
        if (r->pid && !proc_alive((pid_t)r->pid, r->start))
            *r = (struct cg_record_slot){.generation = r->generation};
    }
    struct container_restore ri = {
        .assigned = rec->assigned < sc->limit ? rec->assigned : sc->limit,
        .created_mono = sc->created_mono,
        .owner_start = sc->owner_start,
        .init_pid = sc->init_pid,
        .start_by_unix = sc->start_by_unix,
        .rec = rec,
        .ledger_fd = find_ledger(sc->id, rec),
    };
    bool ledger_found = ri.ledger_fd >= 0;
    struct container *c = NULL;
    cg_container_spec spec = {.device = sc->device, .limit = sc->limit,
                              .compute_pct = sc->compute_pct, .compute_mode = sc->compute_mode,
                              .priority = sc->priority, .no_swap = sc->no_swap,
                              .exclusive = sc->exclusive};
    /* Its tenant as stored; a row of an older daemon (or an unreadable name): its owner's. */
    char tenant[TENANT_NAME_MAX + 1];
    if (tenant_name_valid(sc->tenant))
        snprintf(tenant, sizeof tenant, "%s", sc->tenant);
    else
        tenant_of_uid(sc->uid, tenant);
    if (tenant_intern(d, tenant, &spec.tenant) != 0) {
        log_error("container %s: cannot restore: out of memory for its tenant", sc->id);
        record_close(ri.rec);
        if (ri.ledger_fd >= 0)
            close(ri.ledger_fd);
        return -1;
    }
    /* What placement knew of its application (utilisation, the key's hash): the next
     * container placed beside it is weighed against it as before the restart. */
    profile_placement_hint(d, tenant, sc->profile_key, &spec.util_pct, &spec.app);
    struct container_member member = {.leader = leader, .index = sc->member};
    int rc = container_create(d, sc->id, sc->name, sc->profile_key, &spec, sc->uid, sc->gid,
                              sc->owner_pid, sc->auto_remove, &ri, leader ? &member : NULL, &c,
                              err, sizeof err);
    if (rc != 0) {
        record_close(ri.rec);
        if (ri.ledger_fd >= 0)
            close(ri.ledger_fd);
        log_error("container %s: cannot restore: %s (kept in state.db for the next start)",
                  sc->id, err);
        return -1;
    }
    c->ident.created_unix = sc->created_unix;
    if (leader && gang_restore_member(d, c, sc->gang, sc->member) != 0) {
        log_error("container %s: cannot rejoin %s as its member %u; removed", c->ident.id, sc->gang,
                  sc->member);
        c->gang.leader = NULL; /* not a member after all: its own directory is none to remove */
        container_remove(d, c, "its gang's place was taken");
        return 0;
    }
    if (ledger_found) /* the ledger's copies of freed slots follow the record */
        for (uint32_t i = 0; i < high; i++)
            if (!c->rec->slots[i].pid && atomic_load(&c->ledger->slots[i].pid))
                slot_release(c, i);
    pause_recover(d, c, sc); /* a pause or resume cut short is finished first */
    bool paused = pause_restoring_paused(c);
    unsigned adopted = 0;
    for (uint32_t i = 0; i < high; i++) {
        struct cg_record_slot *r = &c->rec->slots[i];
        if (!r->pid)
            continue;
        struct proc *p = calloc(1, sizeof *p);
        if (!p) {
            log_error("container %s: out of memory restoring its processes", c->ident.id);
            break;
        }
        p->c = c;
        p->fd = -1;
        p->pid = (pid_t)r->pid;
        p->key = ++d->next_key;
        p->slot = i;
        p->welcomed = true;
        p->connected_at = loop_now_ns();
        p->next = c->procs;
        c->procs = p;
        struct cg_ledger_slot *s = &c->ledger->slots[i];
        if (!ledger_found) {
            /* The process's own count is out of sight: it uses at most what it was granted. */
            atomic_store(&s->word, cg_ledger_pack(r->quota, r->quota));
            s->owner_start = r->start;
            atomic_store(&s->generation, r->generation);
            atomic_store(&s->pid, r->pid);
        }
        settle_note(c, i, ledger_found);
        /* Freeze, then tell the core the exact use; the context charge is part of it. */
        uint64_t used = slot_freeze(c, i);
        if (used && paused) {
            /* Checkpointed: its use is on the host (pause.h). */
            p->known_to_core = true;
            pause_adopt(d, c, p->key, used);
        } else if (used) {
            p->known_to_core = true;
            cg_status st = cg_process_set_use(d->core, c->cid, p->key, used, loop_now_ns());
            if (st != CG_OK) {
                /* The recorded assignment did not cover it: ask like a request would. */
                uint64_t ctxc = c->ledger->context_charge;
                cg_outcome out = CG_REJECTED;
                st = cg_request(d->core, c->cid, p->key, ++d->next_req,
                                used > ctxc ? used - ctxc : CG_LEDGER_PAGE, loop_now_ns(), &out);
                if (st != CG_OK || out != CG_GRANTED)
                    log_error("container %s: pid %d: use of %" PRIu64
                              " bytes could not be restored",
                              c->ident.id, (int)p->pid, used);
            }
        }
        adopted++;
    }
    if (adopted)
        log_info("container %s: %u live process account(s) restored%s", c->ident.id, adopted,
                 ledger_found ? "" : " (ledger not found: counted at what they were granted)");
    if (paused)
        pause_restored(d, c);
    if (c->swap.found)
        swap_restore(d, c, sc->swap_held);
    decide_hand_out(d, c, NULL);
    return 0;
}

void restore_reap(struct daemon *d)
{
    /* A removal takes a gang's members too, which may be the next ones: start over. */
    for (struct container *c = d->containers; c;) {
        if (container_owner_gone(c)) {
            log_info("container %s: owner pid %d exited; removing", c->ident.id,
                     (int)c->life.owner_pid);
            container_remove(d, c, "owner exited");
            c = d->containers;
        } else {
            c = c->next;
        }
    }
    for (struct container *c = d->containers; c; c = c->next) {
        struct proc *next;
        for (struct proc *p = c->procs; p; p = next) {
            next = p->next;
            if (p->fd < 0 && !proc_alive(p->pid, c->rec->slots[p->slot].start))
                proc_drop(d, p, "process exited while disconnected");
        }
    }
}

/* slot.c — one process's account: the ledger word it shares with the process (ledger.h) and the
 * daemon's record of what it granted (record.h). Every write of the daemon to a slot goes through
 * here, so the two stay in step, and every read is bounded: the process may lower its use at
 * will (its own loss), but the daemon never counts more than it granted nor believes a pid,
 * generation or quota that the process wrote. */
#include <stdatomic.h>

#include "daemon.h"
#include "proc_start.h"

uint64_t slot_used_pages(const struct container *c, uint32_t i)
{
    uint64_t used = cg_ledger_used(atomic_load(&c->ledger->slots[i].word));
    uint64_t granted = c->rec->slots[i].quota;
    return used < granted ? used : granted;
}

uint64_t slot_freeze(struct container *c, uint32_t i)
{
    struct cg_ledger_slot *s = &c->ledger->slots[i];
    struct cg_record_slot *r = &c->rec->slots[i];
    uint64_t w = atomic_load(&s->word), used;
    do {
        used = cg_ledger_used(w);
        if (used > r->quota)
            used = r->quota;
    } while (!atomic_compare_exchange_weak(&s->word, &w, cg_ledger_pack(used, used)));
    r->quota = (uint32_t)used;
    return used * CG_LEDGER_PAGE;
}

void slot_set_quota(struct container *c, uint32_t i, uint64_t quota)
{
    if (quota > CG_LEDGER_MAX_PAGES)
        quota = CG_LEDGER_MAX_PAGES;
    struct cg_ledger_slot *s = &c->ledger->slots[i];
    c->rec->slots[i].quota = (uint32_t)quota;
    atomic_signal_fence(memory_order_seq_cst); /* recorded before the process can spend it */
    uint64_t w = atomic_load(&s->word), used;
    do {
        used = cg_ledger_used(w);
        if (used > quota)
            used = quota;
    } while (!atomic_compare_exchange_weak(&s->word, &w, cg_ledger_pack(quota, used)));
}

void slot_charge(struct container *c, uint32_t i, uint64_t pages)
{
    struct cg_ledger_slot *s = &c->ledger->slots[i];
    uint64_t quota = c->rec->slots[i].quota; /* already raised by the caller (decide.c) */
    uint64_t w = atomic_load(&s->word), used;
    do {
        used = cg_ledger_used(w) + pages;
        if (used > quota)
            used = quota;
    } while (!atomic_compare_exchange_weak(&s->word, &w, cg_ledger_pack(quota, used)));
}

uint32_t slot_claim(struct container *c, pid_t pid)
{
    uint64_t start = cg_proc_start_time(pid);
    if (start == 0)
        return UINT32_MAX; /* gone already: nothing to account */
    for (uint32_t i = 0; i < CG_LEDGER_SLOTS; i++) {
        struct cg_record_slot *r = &c->rec->slots[i];
        if (r->pid != 0)
            continue;
        struct cg_ledger_slot *s = &c->ledger->slots[i];
        r->generation++;
        r->start = start;
        r->quota = 0;
        r->noted = 0;
        atomic_signal_fence(memory_order_seq_cst);
        r->pid = (uint32_t)pid; /* last: a half-made record slot is a free one */
        if (c->rec->high < i + 1)
            c->rec->high = i + 1;
        /* The ledger's copies are for the process and for people reading it; never read back. */
        atomic_store(&s->word, 0);
        atomic_store(&s->noted, 0);
        atomic_store(&s->gate_waiting, 0);
        /* A new owner keeps nothing yet (its predecessor's claim would hold its siblings). */
        atomic_store(&c->ledger->swap_slots[i].kept_pages, 0);
        s->owner_start = start;
        atomic_store(&s->generation, r->generation);
        atomic_store(&s->pid, (uint32_t)pid);
        if (atomic_load(&c->ledger->high_slot) < c->rec->high)
            atomic_store(&c->ledger->high_slot, c->rec->high);
        return i;
    }
    return UINT32_MAX;
}

void slot_release(struct container *c, uint32_t i)
{
    struct cg_ledger_slot *s = &c->ledger->slots[i];
    struct cg_record_slot *r = &c->rec->slots[i];
    r->pid = 0;
    r->quota = 0;
    r->noted = 0;
    atomic_store(&s->word, 0);
    atomic_store(&s->noted, 0);
    atomic_store(&s->gate_waiting, 0);
    atomic_store(&c->ledger->swap_slots[i].kept_pages, 0);
    atomic_store(&s->pid, 0);
}

bool slot_held_by(const struct container *c, uint32_t i, pid_t pid, uint32_t generation)
{
    if (i >= CG_LEDGER_SLOTS)
        return false;
    const struct cg_record_slot *r = &c->rec->slots[i];
    return r->pid == (uint32_t)pid && r->generation == generation && r->start != 0 &&
           r->start == cg_proc_start_time(pid);
}

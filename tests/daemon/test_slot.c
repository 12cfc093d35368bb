/* test_slot.c — slot.c alone: a process's account is the ledger word it shares (a claim, which
 * it may write anything into) bounded by the daemon's record (what the daemon granted). Tables
 * of what the process wrote and what the daemon granted, against slot.c's rules:
 *   - a use is read as min(ledger used, record quota): never more than was granted;
 *   - a freeze makes quota := that use, in both the record and the ledger;
 *   - a quota set or a charge keeps used <= quota in the ledger, and the record says the quota;
 *   - a slot is held by the very process it was given to (pid, start time, generation), and a
 *     claim for a process that is gone is refused.
 * The container here is bare memory: no daemon, core, socket or file. */
#include <sys/wait.h>

#include "daemon_test.h"

static struct container *bare_container(void)
{
    struct container *c = calloc(1, sizeof *c);
    c->ledger = calloc(1, CG_LEDGER_SIZE);
    c->rec = calloc(1, sizeof *c->rec);
    if (!c->ledger || !c->rec)
        exit(2);
    return c;
}

static void bare_free(struct container *c)
{
    free(c->ledger);
    free(c->rec);
    free(c);
}

static void set_word(struct container *c, uint32_t i, uint64_t quota, uint64_t used)
{
    atomic_store(&c->ledger->slots[i].word, cg_ledger_pack(quota, used));
}

/* What the process wrote (ledger quota and used) and what the daemon granted (record quota). */
static const struct {
    const char *what;
    uint64_t ledger_quota, ledger_used, granted;
    uint64_t use; /* slot_used_pages: min(used, granted) */
} readings[] = {
    {"honest, within its quota", 100, 40, 100, 40},
    {"all of its quota", 100, 100, 100, 100},
    {"claims more used than granted", 100, 5000, 100, 100},
    {"raised its own quota half", 1u << 20, 900, 100, 100},
    {"lowered its use to nothing", 100, 0, 100, 0},
    {"nothing granted", 0, 7, 0, 0},
    {"the largest page count a word holds", CG_LEDGER_MAX_PAGES, CG_LEDGER_MAX_PAGES,
     CG_LEDGER_MAX_PAGES, CG_LEDGER_MAX_PAGES},
};

static void reading_and_freeze(void)
{
    struct container *c = bare_container();
    for (size_t k = 0; k < sizeof readings / sizeof readings[0]; k++) {
        const uint32_t i = 3;
        set_word(c, i, readings[k].ledger_quota, readings[k].ledger_used);
        c->rec->slots[i].quota = (uint32_t)readings[k].granted;
        uint64_t use = slot_used_pages(c, i);
        CHECK(use == readings[k].use, "%s: use %llu, expected %llu", readings[k].what,
              (unsigned long long)use, (unsigned long long)readings[k].use);
        uint64_t frozen = slot_freeze(c, i);
        uint64_t w = atomic_load(&c->ledger->slots[i].word);
        CHECK(frozen == readings[k].use * CG_LEDGER_PAGE, "%s: freeze says %llu bytes",
              readings[k].what, (unsigned long long)frozen);
        CHECK(c->rec->slots[i].quota == readings[k].use && cg_ledger_quota(w) == readings[k].use &&
                  cg_ledger_used(w) == readings[k].use,
              "%s: frozen to quota %u (ledger %llu/%llu), expected %llu", readings[k].what,
              c->rec->slots[i].quota, (unsigned long long)cg_ledger_quota(w),
              (unsigned long long)cg_ledger_used(w), (unsigned long long)readings[k].use);
        CHECK(slot_freeze(c, i) == frozen, "%s: a second freeze changes nothing",
              readings[k].what);
    }
    bare_free(c);
}

/* slot_set_quota and slot_charge: the ledger's used half never above its quota half. */
static const struct {
    const char *what;
    uint64_t used, set_quota;   /* slot_set_quota(set_quota) over a slot using `used` */
    uint64_t want_quota, want_used;
} quotas[] = {
    {"a hand-out above the use", 10, 50, 50, 10},
    {"a quota lowered below the use", 80, 30, 30, 30},
    {"a quota past the word's range", 1, CG_LEDGER_MAX_PAGES + 5, CG_LEDGER_MAX_PAGES, 1},
    {"nothing", 0, 0, 0, 0},
};

static const struct {
    const char *what;
    uint64_t quota, used, raised_to, pages; /* the caller raised the record's quota first */
    uint64_t want_used;
} charges[] = {
    {"a grant charged to both halves", 10, 10, 30, 20, 30},
    {"a process that lowered its use meanwhile", 10, 4, 30, 20, 24},
    {"a charge that would pass the quota stops at it", 10, 10, 15, 20, 15},
};

static void quota_and_charge(void)
{
    struct container *c = bare_container();
    for (size_t k = 0; k < sizeof quotas / sizeof quotas[0]; k++) {
        set_word(c, 0, quotas[k].used, quotas[k].used);
        c->rec->slots[0].quota = (uint32_t)quotas[k].used;
        slot_set_quota(c, 0, quotas[k].set_quota);
        uint64_t w = atomic_load(&c->ledger->slots[0].word);
        CHECK(c->rec->slots[0].quota == quotas[k].want_quota &&
                  cg_ledger_quota(w) == quotas[k].want_quota &&
                  cg_ledger_used(w) == quotas[k].want_used,
              "%s: record %u, ledger %llu/%llu", quotas[k].what, c->rec->slots[0].quota,
              (unsigned long long)cg_ledger_quota(w), (unsigned long long)cg_ledger_used(w));
    }
    for (size_t k = 0; k < sizeof charges / sizeof charges[0]; k++) {
        set_word(c, 1, charges[k].quota, charges[k].used);
        c->rec->slots[1].quota = (uint32_t)charges[k].raised_to;
        slot_charge(c, 1, charges[k].pages);
        uint64_t w = atomic_load(&c->ledger->slots[1].word);
        CHECK(cg_ledger_quota(w) == charges[k].raised_to && cg_ledger_used(w) == charges[k].want_used,
              "%s: ledger %llu/%llu, expected %llu/%llu", charges[k].what,
              (unsigned long long)cg_ledger_quota(w), (unsigned long long)cg_ledger_used(w),
              (unsigned long long)charges[k].raised_to, (unsigned long long)charges[k].want_used);
    }
    bare_free(c);
}

static void claim_and_hold(void)
{
    struct container *c = bare_container();
    pid_t me = getpid();
    uint32_t a = slot_claim(c, me), b = slot_claim(c, me);
    CHECK(a == 0 && b == 1 && c->rec->high == 2, "first free slots: %u %u (high %u)", a, b,
          c->rec->high);
    uint32_t gen = c->rec->slots[a].generation;
    CHECK(atomic_load(&c->ledger->slots[a].pid) == (uint32_t)me &&
              atomic_load(&c->ledger->high_slot) == 2,
          "the ledger's copies say who holds it");
    /* Who holds it: the daemon's record decides, whatever the ledger says. */
    const struct {
        const char *what;
        uint32_t slot;
        pid_t pid;
        uint32_t generation;
        bool held;
    } holds[] = {
        {"its process", a, me, gen, true},
        {"an older generation", a, me, gen - 1, false},
        {"another pid", a, me + 1, gen, false},
        {"a slot past the ledger", CG_LEDGER_SLOTS, me, gen, false},
        {"a free slot", 5, me, 0, false},
    };
    atomic_store(&c->ledger->slots[a].pid, (uint32_t)me + 1); /* a tenant's write: ignored */
    for (size_t k = 0; k < sizeof holds / sizeof holds[0]; k++)
        CHECK(slot_held_by(c, holds[k].slot, holds[k].pid, holds[k].generation) == holds[k].held,
              "held by %s: expected %d", holds[k].what, holds[k].held);
    slot_charge(c, a, 0);
    slot_set_quota(c, a, 9);
    slot_release(c, a);
    CHECK(!slot_held_by(c, a, me, gen) && c->rec->slots[a].quota == 0 &&
              atomic_load(&c->ledger->slots[a].word) == 0,
          "a released slot is held by nobody and keeps nothing");
    CHECK(slot_claim(c, me) == a && c->rec->slots[a].generation == gen + 1,
          "reclaimed with the next generation");
    /* A process that is gone gets no slot. */
    pid_t child = fork();
    if (child == 0)
        _exit(0);
    waitpid(child, NULL, 0);
    CHECK(slot_claim(c, child) == UINT32_MAX, "no slot for pid %d, which is gone", (int)child);
    bare_free(c);
}

int main(void)
{
    reading_and_freeze();
    quota_and_charge();
    claim_and_hold();
    if (!failures)
        printf("slot: every reading, freeze, quota, charge and claim as slot.c says\n");
    return failures != 0;
}

/* ledger.h — the per-container ledger: a small shared file that lets a container allocate within
 * what the daemon already assigned it without a round trip, while the daemon stays the authority.
 *
 * The daemon creates one ledger per container, a memfd sealed against shrinking and growing (it
 * lives in no directory), and hands each connected process an fd to it in WELCOME. Each process
 * owns one slot: a single 64-bit atomic word packing its quota and its use, in 4 KiB pages:
 *
 *     word = quota_pages << 32 | used_pages        (used <= quota, always)
 *
 * A process charges an allocation with a CAS on its own word when used + pages <= quota (the fast
 * path: no system call, no lock, no sharing with other processes), and otherwise asks the daemon,
 * which decides through the scheduling core and, on a grant, adds the pages to both halves of the
 * word itself. The daemon keeps sum(quota) <= the container's assignment; it reclaims unused quota
 * with a CAS (quota := used), which freezes a slot's fast path at once. Because use is one word,
 * a process that dies (SIGKILL included) leaves an exact account behind; a restarted daemon finds
 * the same memfd again in a live process's memory map and every process's use where it was.
 *
 * Everything here is writable by the container's processes, so to the daemon it is a claim: it
 * keeps its own record of owners, grants and assignment (src/daemon/record.h) and reads a slot's
 * use as min(used, what it granted). The pid, generation, owner_start and notes fields of a slot
 * are written by the daemon for readers' information and never read back; grant notes (a grant
 * whose reply a dying daemon never sent is not charged twice) live in the record.
 *
 * Frees never wait: a process lowers its own used half; when `waiters` is non-zero (a request of
 * this container is suspended) it also sends the daemon a FREED notice so it can re-decide.
 * In a container that swaps, a process may keep a freed allocation's memory for its next
 * allocation of that size; kept memory stays in its use (it is still on the device) until the
 * process drops it, which it does before asking the daemon for anything, whenever `waiters` is
 * non-zero, and on every swap order.
 *
 * Memory information is virtualised from the ledger alone: total = limit,
 * free = limit - sum(used) + sum(kept) (clamped at 0).
 */
#ifndef CONVGPU_LEDGER_H
#define CONVGPU_LEDGER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CG_LEDGER_MAGIC 0x4c475643u /* "CVGL" */
/* 2: the compute gate; 3: swap (docs/SWAP.md). A daemon adopts the ledger of a container an
 * older daemon made, and an interposer accepts a ledger, from CG_LEDGER_MIN_VERSION up to
 * CG_LEDGER_VERSION (the layout is the same across that range; a change of layout raises MIN).
 * Upgrades: docs/OPERATIONS.md; proto.h says the same of the protocol. */
#ifndef CG_LEDGER_VERSION
#define CG_LEDGER_VERSION 3u
#endif
#define CG_LEDGER_MIN_VERSION 3u
static inline bool cg_ledger_version_ok(uint32_t v)
{
    return v >= CG_LEDGER_MIN_VERSION && v <= CG_LEDGER_VERSION;
}
#define CG_LEDGER_PAGE 4096ull
#define CG_LEDGER_SLOTS 1024u       /* processes per container that may hold a slot at once */
#define CG_LEDGER_MAX_PAGES 0xffffffffull

/* A grant the daemon charged to a slot and has not answered yet (written by the daemon only).
 * Only the daemon changes a slot's quota, so after a crash "quota still quota_before" tells
 * whether the charge of the last noted grant happened. */
struct cg_ledger_grant {
    uint64_t id;                /* the request's id (the process's own numbering) */
    uint32_t quota_before;      /* the slot's quota just before the charge */
    uint32_t pages;             /* what the charge adds to both halves */
};

#define CG_LEDGER_NOTES 2
#define CG_LEDGER_CHARGED 0xffffffffu /* quota_before once the charge is known to be done */

struct cg_ledger_slot {
    _Atomic uint64_t word;      /* quota_pages << 32 | used_pages */
    _Atomic uint32_t pid;       /* host pid of the owner (0 = free); written by the daemon */
    _Atomic uint32_t generation;/* bumped by the daemon each time the slot is handed out */
    uint64_t owner_start;       /* owner's start time (clock ticks since boot, /proc/pid/stat) */
    _Atomic uint32_t noted;     /* notes[0, noted) are valid */
    _Atomic uint32_t gate_waiting; /* the owner's threads waiting at the compute gate (a claim:
                                    * it only tells the daemon that the container wants time) */
    struct cg_ledger_grant notes[CG_LEDGER_NOTES]; /* grants whose replies are not sent yet */
};

/* The compute gate. The daemon decides it every step from measured device time (src/core/compute.h)
 * and writes it here; every launch hook reads `gate` (one load: open is 0) and, when closed, waits
 * in its own thread on the word (a futex; the daemon wakes the waiters when it opens the gate).
 * A closed gate counts as open from `closed_until` on (CLOCK_MONOTONIC ns): the daemon renews it
 * every step, so a daemon that dies or stalls cannot freeze a container's launches. */
struct cg_ledger_compute {
    _Atomic uint32_t gate;      /* 0: open; else CG_GATE_* bits. Written by the daemon */
    _Atomic uint32_t share_pct; /* 0: no compute limit; for readers */
    _Atomic uint64_t closed_until;
    _Atomic uint32_t mode;      /* cg_compute_mode; for readers */
    uint32_t pad0_;
    _Atomic uint64_t throttled_ns;       /* summed by the interposer: time launches waited */
    _Atomic uint64_t throttled_launches; /* launches that waited (claims, shown, never trusted) */
    uint8_t pad_[24];
};

/* The gate is a set of reasons to wait: launches pass only when it is 0 (still one load). The
 * compute controller owns CG_GATE_CLOSED (with its lease); a swap owns CG_GATE_SWAPPED, which
 * has no lease: while the container's memory is on the host nothing may touch it, whether or
 * not a daemon is there to renew anything. Each writer sets and clears only its own bit. */
#define CG_GATE_OPEN 0u
#define CG_GATE_CLOSED 1u
#define CG_GATE_SWAPPED 2u
/* A pause (docs/PAUSE.md) owns CG_GATE_PAUSED, without a lease either: from before the driver
 * locks the container's processes until after they are unlocked, no hooked launch, allocation
 * or free starts (and so none asks the daemon for anything), whether or not a daemon runs. */
#define CG_GATE_PAUSED 4u

/* Swap (docs/SWAP.md). The daemon orders, each process's swap thread obeys and reports.
 *
 *   daemon: sets CG_GATE_SWAPPED in the gate, then order := OUT, epoch += 1, futex-wakes epoch
 *   process: waits for its calls in flight and its queued work, copies its swappable
 *            allocations to host memory, releases their device memory, lowers its slot's use by
 *            what it charged for them, then state := OUT, done := epoch, out_bytes := moved,
 *            futex-wakes state
 *   daemon: order := IN, epoch += 1, wake; each process charges its slot again (the normal
 *           path: it may wait for the daemon), maps new device memory at the same addresses,
 *           copies back, state := IN, done := epoch, wake; once all are in, the daemon clears
 *           CG_GATE_SWAPPED and wakes the gate.
 *
 * A process reports only after it has started its swap thread (`ready`): one that never made a
 * swappable allocation has nothing to move and is not waited for. Everything here is a claim to
 * the daemon, like the rest of the ledger: it bounds what it believes by what it granted. */
enum cg_swap_order { CG_SWAP_IN = 0, CG_SWAP_OUT = 1 };
enum cg_swap_state {
    CG_SWAPST_IN = 0,       /* resident */
    CG_SWAPST_MOVING = 1,   /* copying, either way */
    CG_SWAPST_OUT = 2,      /* on the host */
    CG_SWAPST_FAILED = 3,   /* the order could not be carried out; what moved was moved back */
};

/* Page-locked host copies kept between moves (CONVGPU_SWAP_PIN=keep, the default; docs/SWAP.md
 * "Page-locked copies"): the daemon gives the container `pin_budget` bytes, its share of what
 * --swap-limit leaves beside the swapped-out containers; its processes add what they keep
 * locked to `pinned` (a claim, bounded by the budget when the daemon reads it) and unlock what
 * is over the budget when it shrinks (the daemon bumps the epoch without a new order). */
struct cg_ledger_swap {
    _Atomic uint32_t enabled;   /* 1: this container's allocations are made swappable; daemon */
    _Atomic uint32_t order;     /* cg_swap_order; daemon */
    _Atomic uint32_t epoch;     /* bumped with every order; the swap threads' futex */
    uint32_t pad0_;
    _Atomic uint64_t pin_budget; /* bytes the processes may keep page-locked; daemon */
    _Atomic uint64_t pinned;     /* bytes they keep page-locked between moves; processes */
    uint8_t pad_[32];
};

/* One per slot, beside the slots (a slot is one full cache line already). Written by the
 * slot's process. */
struct cg_ledger_swap_slot {
    _Atomic uint32_t ready;     /* the process's swap thread runs */
    _Atomic uint32_t state;     /* cg_swap_state; futex the daemon (or a test) may wait on */
    _Atomic uint32_t done;      /* the epoch of the last order carried out */
    _Atomic uint32_t kept_pages;/* freed memory the process keeps mapped for reuse, still in
                                 * its slot's use (swap.c in the interposer, "Kept memory") */
    _Atomic uint64_t out_bytes; /* device memory moved to the host (charged sizes) */
    _Atomic uint64_t swaps;     /* completed swap-outs (display) */
};

struct cg_ledger {
    uint32_t magic;
    uint32_t version;
    uint32_t nslots;
    uint32_t device;            /* the node's device index this container lives on */
    _Atomic uint64_t limit;     /* bytes; written by the daemon */
    _Atomic uint64_t assigned;  /* bytes; written by the daemon */
    _Atomic uint32_t waiters;   /* suspended requests in this container */
    _Atomic uint32_t high_slot; /* slots [0, high_slot) may be in use */
    uint64_t granularity;       /* allocation charges are rounded up to this */
    uint64_t context_charge;    /* bytes a process's first allocation costs */
    uint8_t pad_[8];
    struct cg_ledger_slot slots[CG_LEDGER_SLOTS];
    struct cg_ledger_compute compute;
    struct cg_ledger_swap swap;
    struct cg_ledger_swap_slot swap_slots[CG_LEDGER_SLOTS];
};

_Static_assert(sizeof(struct cg_ledger_slot) == 64, "one slot per cache line");
_Static_assert(offsetof(struct cg_ledger, slots) == 64, "header is one cache line");
_Static_assert(sizeof(struct cg_ledger_compute) == 64, "the gate is one cache line");
_Static_assert(sizeof(struct cg_ledger_swap) == 64, "the swap order is one cache line");
_Static_assert(sizeof(struct cg_ledger_swap_slot) == 32, "two swap reports per cache line");

#define CG_LEDGER_SIZE sizeof(struct cg_ledger)
/* The ledger is a sealed memfd of this name + the container id (no file in any directory). */
#define CG_LEDGER_MEMFD_PREFIX "convgpu-ledger:"

static inline uint64_t cg_ledger_pack(uint64_t quota_pages, uint64_t used_pages)
{
    return quota_pages << 32 | used_pages;
}
static inline uint64_t cg_ledger_quota(uint64_t word) { return word >> 32; }
static inline uint64_t cg_ledger_used(uint64_t word) { return word & 0xffffffffull; }

/* Bytes -> pages, rounding up; false when it does not fit in a slot half. */
static inline bool cg_ledger_pages(uint64_t bytes, uint64_t *pages)
{
    uint64_t p = bytes / CG_LEDGER_PAGE + (bytes % CG_LEDGER_PAGE != 0);
    if (p > CG_LEDGER_MAX_PAGES)
        return false;
    *pages = p;
    return true;
}

/* Fast path: charge `pages` against the slot's quota. False = not enough quota (ask the daemon). */
static inline bool cg_ledger_try_charge(struct cg_ledger_slot *s, uint64_t pages)
{
    uint64_t w = atomic_load_explicit(&s->word, memory_order_relaxed);
    for (;;) {
        uint64_t used = cg_ledger_used(w), quota = cg_ledger_quota(w);
        if (pages > quota || used > quota - pages)
            return false;
        if (atomic_compare_exchange_weak_explicit(&s->word, &w, cg_ledger_pack(quota, used + pages),
                                                  memory_order_acq_rel, memory_order_relaxed))
            return true;
    }
}

/* Return `pages` of use; the quota stays with the process for reuse. Clamps at zero so a
 * corrupted caller cannot wrap the counter. */
static inline void cg_ledger_uncharge(struct cg_ledger_slot *s, uint64_t pages)
{
    uint64_t w = atomic_load_explicit(&s->word, memory_order_relaxed);
    for (;;) {
        uint64_t used = cg_ledger_used(w), quota = cg_ledger_quota(w);
        uint64_t nu = used >= pages ? used - pages : 0;
        if (atomic_compare_exchange_weak_explicit(&s->word, &w, cg_ledger_pack(quota, nu),
                                                  memory_order_acq_rel, memory_order_relaxed))
            return;
    }
}

/* Sum over live slots of the memory their processes keep for reuse (a claim, bounded by each
 * slot's use): to the container's own programs it is free, since an allocation takes it back. */
static inline uint64_t cg_ledger_kept_bytes(struct cg_ledger *l)
{
    uint32_t high = atomic_load_explicit(&l->high_slot, memory_order_acquire);
    if (high > CG_LEDGER_SLOTS)
        high = CG_LEDGER_SLOTS;
    uint64_t pages = 0;
    for (uint32_t i = 0; i < high; i++) {
        uint64_t kept = atomic_load_explicit(&l->swap_slots[i].kept_pages, memory_order_relaxed);
        uint64_t used = cg_ledger_used(atomic_load_explicit(&l->slots[i].word,
                                                            memory_order_relaxed));
        pages += kept < used ? kept : used;
    }
    return pages * CG_LEDGER_PAGE;
}

/* Sum of use over live slots, in bytes: what the container uses now. */
static inline uint64_t cg_ledger_used_bytes(struct cg_ledger *l)
{
    uint32_t high = atomic_load_explicit(&l->high_slot, memory_order_acquire);
    if (high > CG_LEDGER_SLOTS)
        high = CG_LEDGER_SLOTS;
    uint64_t pages = 0;
    for (uint32_t i = 0; i < high; i++)
        pages += cg_ledger_used(atomic_load_explicit(&l->slots[i].word, memory_order_relaxed));
    return pages * CG_LEDGER_PAGE;
}

#endif

/* swap.c — swappable allocations (VMM-backed) and the swap thread that obeys the daemon's
 * orders (swap.h says how one allocation travels; ledger.h gives the order protocol).
 *
 * Records live in an mmap'd array (not the program's malloc, and a fork child drops it with
 * munmap), found by index; one mutex guards it, held for O(1) work on the allocation path and
 * for the whole copy by the swap thread, which only runs while the gate holds every other
 * caller back.
 *
 * Freed reservations are kept for the next allocation of the same size (the reservation
 * cache, below): a free still unmaps and releases the physical memory, so the device and the
 * daemon's accounts drop exactly as before; only the address range, which holds nothing, is
 * kept, and the next allocation of that size maps into it instead of paying
 * cuMemAddressReserve, as its free does not pay cuMemAddressFree. A cached range is in the
 * cache or in one record, never both, both moves made under mu.
 *
 * In front of it, freed allocations may be kept whole (kept memory, below): still mapped and
 * still charged, so the next allocation of the same size costs a lookup and its free nothing
 * but the synchronize cuMemFree owes. Kept memory is the process's own use, within the
 * container's assignment; it is dropped whenever anyone could want it (see "Kept memory").
 *
 * A swap-in keeps each host copy, lazily freed (MADV_FREE), with its record (the spare): the
 * kernel takes those pages back whenever it needs memory, and until then the record's next
 * swap-out writes into pages that are already there instead of faulting in new ones, which is
 * what a swap-out's time goes to (docs/SWAP.md). A reclaimed page reads as zero and is written
 * over like any other: the copy always covers the whole record. With CONVGPU_SWAP_PIN=keep the
 * host copy is page-locked once and stays so, spare included, until it is unmapped: the
 * driver then copies at the speed of pinned memory from the second move on, and those pages
 * are the host's for as long (they cannot be lazily freed). */
#include "swap.h"
#include "account.h"
#include "client.h"
#include "config.h"
#include "log.h"
#include "table.h"

#include <errno.h>
#include <inttypes.h>
#include <linux/futex.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

_Atomic int cg_swap_armed;
_Atomic uint64_t cg_swap_inflight;

struct rec {
    CUdeviceptr va;
    size_t size;                        /* mapped: a whole number of granules */
    uint64_t charged;                   /* what the slot was charged for it */
    CUmemGenericAllocationHandle h;     /* 0 while out */
    CUcontext ctx;
    CUdevice dev;
    void *host;                         /* the host copy while out */
    void *spare;                        /* while in: the last host copy, lazily freed */
    bool locked;                        /* host (or spare) stays page-locked (PIN_KEEP) */
    uint32_t live;
    uint32_t next_free;                 /* free list, index + 1 */
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct rec *recs;
static uint32_t cap, used_n, free_head; /* free_head: index + 1, 0 = none */
static bool thread_started;

/* The reservation cache (mu guards it): unmapped address ranges, oldest first. Bounded by a
 * count and by the address space it holds (CONVGPU_SWAP_RESERVE_CACHE=COUNT[,MIB]: 0 turns it
 * off; read once, at the first swappable allocation). */
#define RESV_SLOTS 256
#define RESV_DEFAULT_COUNT 64
#define RESV_DEFAULT_BYTES (64ull << 30)
struct resv {
    CUdeviceptr va;
    size_t size;
};
static struct resv resv[RESV_SLOTS];
static uint32_t resv_n, resv_max;
static uint64_t resv_bytes, resv_max_bytes;
static bool resv_configured;

/* Kept memory (mu guards it): freed records still mapped and charged, oldest first. Dropped
 * (unmapped, released, uncharged, the range to the reservation cache) by an allocation that
 * misses, so a slot's use never exceeds what it would be without keeping (a free only moves
 * memory from live to kept, a hit back, a miss empties the set first); before a charge asks
 * the daemon (account.c); while a request of the container waits (the swap thread, which the
 * daemon wakes); by a swap-out; and before a context is torn down. Bounded by a count.
 * CONVGPU_SWAP_KEEP_FREED=0 turns it off (read once). */
#define KEEP_SLOTS 64
static struct rec kept[KEEP_SLOTS];
static uint32_t kept_n;
static uint64_t kept_charged;
static _Atomic uint32_t kept_count; /* kept_n, for a look without mu */
static int keep_mode = -1;          /* -1: not read yet; 0: off; 1: on */
/* Whether a swap-in keeps its host copies as spares (CONVGPU_SWAP_KEEP_HOST, read once by the
 * swap thread): -1 not read yet; 0 off; 1 on; 2 on, and each spare dropped at once as a
 * reclaim by the kernel would (CONVGPU_SWAP_KEEP_HOST=test-reclaim: fault injection). */
static int keep_host_mode = -1;
/* Whether each host copy is page-locked (cuMemHostRegister), so that the driver copies it
 * directly instead of through its own staging buffers (CONVGPU_SWAP_PIN, read once by the swap
 * thread): -1 not read yet; 0 off (the default); 1 for the length of each copy; 2 the same,
 * with every registration failing (CONVGPU_SWAP_PIN=test-fail: fault injection); PIN_KEEP
 * (CONVGPU_SWAP_PIN=keep) locked at its first copy and kept locked until it is unmapped.
 * Which is faster depends on the driver and the machine (pinning costs too): docs/SWAP.md. */
#define PIN_KEEP 3
static int pin_mode = -1;
/* Set while the swap thread holds mu and charges (swap_in): a drop must not take mu then. */
static _Thread_local bool holding_mu;

/* ---- the driver functions we call ourselves (the real ones: ours would charge again) ------ */

static _Atomic(void *) c_getcur, c_setcur, c_getdev, c_gran, c_reserve, c_afree, c_map, c_unmap,
    c_access, c_sync, c_dtoh, c_htod, c_hreg, c_hunreg;
/* Each device's granularity (index: the ordinal), 0 until asked once: it never changes. */
static _Atomic size_t gran_of[32];
#define SYM(cache, name) ((PFN_##name)cg_lib_sym(CG_LIB_CUDA, &cache, #name))

static CUmemAllocationProp prop_for(CUdevice dev)
{
    CUmemAllocationProp p;
    memset(&p, 0, sizeof p);
    p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    p.location.id = dev;
    return p;
}

/* Physical memory mapped read-write at r->va (r->h set). The driver's error otherwise, with
 * nothing left mapped. */
static CUresult map_in(struct rec *r)
{
    PFN_cuMemCreate create = CG_REAL(cuMemCreate);
    PFN_cuMemRelease release = CG_REAL(cuMemRelease);
    PFN_cuMemMap map = SYM(c_map, cuMemMap);
    PFN_cuMemUnmap unmap = SYM(c_unmap, cuMemUnmap);
    PFN_cuMemSetAccess access = SYM(c_access, cuMemSetAccess);
    if (!create || !release || !map || !unmap || !access)
        return CUDA_ERROR_NOT_SUPPORTED;
    CUmemAllocationProp prop = prop_for(r->dev);
    CUmemAccessDesc rw = {prop.location, CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
    CUmemGenericAllocationHandle h;
    CUresult rc = create(&h, r->size, &prop, 0);
    if (rc != CUDA_SUCCESS)
        return rc;
    if ((rc = map(r->va, r->size, 0, h, 0)) != CUDA_SUCCESS) {
        release(h);
        return rc;
    }
    if ((rc = access(r->va, r->size, &rw, 1)) != CUDA_SUCCESS) {
        unmap(r->va, r->size);
        release(h);
        return rc;
    }
    r->h = h;
    return CUDA_SUCCESS;
}

static CUresult map_out(struct rec *r)
{
    PFN_cuMemUnmap unmap = SYM(c_unmap, cuMemUnmap);
    PFN_cuMemRelease release = CG_REAL(cuMemRelease);
    if (!unmap || !release)
        return CUDA_ERROR_NOT_SUPPORTED;
    CUresult rc = unmap(r->va, r->size);
    if (rc == CUDA_SUCCESS) {
        release(r->h);
        r->h = 0;
    }
    return rc;
}

/* ---- the record table ------------------------------------------------------------------------ */

/* A free record's index (mu held), or -1 when the table cannot grow. */
static long take_rec(void)
{
    if (free_head) {
        uint32_t i = free_head - 1;
        free_head = recs[i].next_free;
        return i;
    }
    if (used_n == cap) {
        uint32_t nc = cap ? cap * 2 : 256;
        void *m = mmap(NULL, (size_t)nc * sizeof *recs, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED)
            return -1;
        if (recs) {
            memcpy(m, recs, (size_t)cap * sizeof *recs);
            munmap(recs, (size_t)cap * sizeof *recs);
        }
        recs = m;
        cap = nc;
    }
    return used_n++;
}

static void put_rec(uint32_t i)
{
    memset(&recs[i], 0, sizeof recs[i]);
    recs[i].next_free = free_head;
    free_head = i + 1;
}

/* ---- the reservation cache ------------------------------------------------------------------- */

/* The bounds, from the environment or the defaults (mu held). */
static void resv_configure(void)
{
    if (resv_configured)
        return;
    resv_configured = true;
    resv_max = RESV_DEFAULT_COUNT;
    resv_max_bytes = RESV_DEFAULT_BYTES;
    const char *v = getenv("CONVGPU_SWAP_RESERVE_CACHE");
    if (!v || !*v)
        return;
    char *end;
    errno = 0;
    unsigned long n = strtoul(v, &end, 10), mib = RESV_DEFAULT_BYTES >> 20;
    bool bad = end == v;
    if (*end == ',') {
        bad |= end[1] < '0' || end[1] > '9';
        mib = strtoul(end + 1, &end, 10);
    }
    if (bad || errno || *end || n > RESV_SLOTS || mib > (UINT64_MAX >> 20)) {
        cg_log(CG_LOG_WARN, "ignoring CONVGPU_SWAP_RESERVE_CACHE=%s (want COUNT[,MIB], "
                            "COUNT at most %d)", v, RESV_SLOTS);
        return;
    }
    resv_max = (uint32_t)n;
    resv_max_bytes = (uint64_t)mib << 20;
}

/* A cached range of exactly `size` bytes, the most recently kept (mu held). */
static bool resv_take(size_t size, CUdeviceptr *va)
{
    for (uint32_t i = resv_n; i-- > 0;) {
        if (resv[i].size != size)
            continue;
        *va = resv[i].va;
        memmove(&resv[i], &resv[i + 1], (resv_n - i - 1) * sizeof *resv);
        resv_n--;
        resv_bytes -= size;
        cg_log(CG_LOG_DEBUG, "swap: reservation 0x%" PRIx64 " (%zu bytes) reused, %u cached",
               (uint64_t)*va, size, resv_n);
        return true;
    }
    return false;
}

/* Keeps an unmapped range for reuse, making room by giving back the oldest ones; what does
 * not fit goes back to the driver. Takes and drops mu. */
static void resv_put(CUdeviceptr va, size_t size)
{
    PFN_cuMemAddressFree afree = SYM(c_afree, cuMemAddressFree);
    struct resv out[RESV_SLOTS + 1];
    uint32_t nout = 0;
    pthread_mutex_lock(&mu);
    resv_configure();
    if (resv_max == 0 || size > resv_max_bytes) {
        out[nout++] = (struct resv){va, size};
    } else {
        while (resv_n > 0 && (resv_n >= resv_max || resv_bytes + size > resv_max_bytes)) {
            out[nout++] = resv[0];
            resv_bytes -= resv[0].size;
            memmove(&resv[0], &resv[1], (--resv_n) * sizeof *resv);
        }
        resv[resv_n++] = (struct resv){va, size};
        resv_bytes += size;
        cg_log(CG_LOG_DEBUG, "swap: reservation 0x%" PRIx64 " (%zu bytes) kept, %u cached "
                             "(%" PRIu64 " bytes)", (uint64_t)va, size, resv_n, resv_bytes);
    }
    pthread_mutex_unlock(&mu);
    for (uint32_t i = 0; i < nout; i++) {
        cg_log(CG_LOG_DEBUG, "swap: reservation 0x%" PRIx64 " (%zu bytes) given back",
               (uint64_t)out[i].va, out[i].size);
        if (afree)
            afree(out[i].va, out[i].size);
    }
}

/* ---- kept memory -------------------------------------------------------------------------------- */

/* An on/off setting from the environment: `dflt` when unset or empty, 1 for "1", 0 for "0",
 * other_value for `other` (if not NULL); anything else is named in a warning and gives `dflt`
 * (`dflt_means` says what that is). */
static int env_switch(const char *name, int dflt, const char *other, int other_value,
                      const char *dflt_means)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return dflt;
    if (strcmp(v, "1") == 0 || strcmp(v, "0") == 0)
        return v[0] == '1';
    if (other && strcmp(v, other) == 0)
        return other_value;
    cg_log(CG_LOG_WARN, "ignoring %s=%s (want 0 or 1): %s", name, v, dflt_means);
    return dflt;
}

static void keep_configure(void)
{
    if (keep_mode < 0)
        keep_mode = env_switch("CONVGPU_SWAP_KEEP_FREED", 1, NULL, 0, "freed memory is kept");
}

/* The set's size where the daemon and the container's other processes can see it (mu held). */
static void kept_publish(void)
{
    atomic_store_explicit(&kept_count, kept_n, memory_order_release);
    struct cg_session s;
    if (cg_session_get(&s))
        atomic_store_explicit(&s.ledger->swap_slots[s.slot - s.ledger->slots].kept_pages,
                              (uint32_t)(kept_charged / CG_LEDGER_PAGE), memory_order_relaxed);
}

/* Takes entry i out of the set (mu held). */
static struct rec kept_take(uint32_t i)
{
    struct rec r = kept[i];
    kept_charged -= r.charged;
    memmove(&kept[i], &kept[i + 1], (kept_n - i - 1) * sizeof *kept);
    kept_n--;
    kept_publish();
    return r;
}

/* Empties the set into v (mu held); returns how many. */
static uint32_t kept_detach(struct rec *v)
{
    uint32_t n = kept_n;
    memcpy(v, kept, (size_t)n * sizeof *v);
    kept_n = 0;
    kept_charged = 0;
    if (n)
        kept_publish();
    return n;
}

/* Gives back records taken out of the set: the device memory to the driver, the range to the
 * reservation cache, the charge to the slot. Takes mu (resv_put): call without it. */
static void kept_release(struct rec *v, uint32_t n, const char *why)
{
    PFN_cuMemAddressFree afree = SYM(c_afree, cuMemAddressFree);
    uint64_t charged = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (map_out(&v[i]) == CUDA_SUCCESS)
            resv_put(v[i].va, v[i].size);
        else if (afree)
            afree(v[i].va, v[i].size);
        charged += v[i].charged;
    }
    if (n)
        cg_log(CG_LOG_DEBUG, "swap: %u kept (%" PRIu64 " bytes) dropped: %s", n, charged, why);
    cg_uncharge_on(0, charged);
}

bool cg_swap_drop_kept(const char *why)
{
    if (holding_mu || atomic_load_explicit(&kept_count, memory_order_acquire) == 0)
        return false;
    struct rec v[KEEP_SLOTS];
    pthread_mutex_lock(&mu);
    uint32_t n = kept_detach(v);
    pthread_mutex_unlock(&mu);
    kept_release(v, n, why);
    return n != 0;
}

/* Whether a free may keep its memory now: no request of the container waits for memory and
 * no swap is ordered (either would want it back at once). */
static bool keeping_allowed(void)
{
    struct cg_session s;
    if (!cg_session_get(&s))
        return false;
    struct cg_ledger *l = s.ledger;
    return atomic_load_explicit(&l->waiters, memory_order_acquire) == 0 &&
           atomic_load_explicit(&l->swap.order, memory_order_acquire) == CG_SWAP_IN &&
           !(atomic_load_explicit(&l->compute.gate, memory_order_acquire) & CG_GATE_SWAPPED);
}

/* ---- the swap thread --------------------------------------------------------------------------- */

static long futex(_Atomic uint32_t *w, int op, uint32_t val, const struct timespec *ts)
{
    return syscall(SYS_futex, (uint32_t *)w, op, val, ts, NULL, 0);
}

static void pause_ms(long ms)
{
    nanosleep(&(struct timespec){ms / 1000, (ms % 1000) * 1000000L}, NULL);
}

/* Every thread of this process has finished its stores (membarrier), and no hooked call is
 * between its gate check and the driver's return. */
static void wait_quiet(void)
{
    if (syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) != 0)
        syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0);
    while (atomic_load_explicit(&cg_swap_inflight, memory_order_seq_cst) != 0)
        pause_ms(1);
}

/* Every context that holds a record has finished its work. mu held. */
static void sync_contexts(void)
{
    PFN_cuCtxSetCurrent setcur = SYM(c_setcur, cuCtxSetCurrent);
    PFN_cuCtxSynchronize sync = SYM(c_sync, cuCtxSynchronize);
    CUcontext done[16];
    int ndone = 0;
    for (uint32_t i = 0; i < used_n; i++) {
        if (!recs[i].live)
            continue;
        bool seen = false;
        for (int k = 0; k < ndone; k++)
            seen |= done[k] == recs[i].ctx;
        if (seen)
            continue;
        if (setcur(recs[i].ctx) == CUDA_SUCCESS)
            sync();
        if (ndone < 16)
            done[ndone++] = recs[i].ctx;
    }
}

/* The swap thread's settings, read by it alone when it starts (once per process). */
static void host_settings(void)
{
    if (keep_host_mode < 0)
        keep_host_mode = env_switch("CONVGPU_SWAP_KEEP_HOST", 1, "test-reclaim", 2,
                                    "host copies are kept, lazily freed, after a swap-in");
    if (pin_mode < 0) {
        /* keep by default: its locked copies are bounded by the container's pin budget. */
        const char *v = getenv("CONVGPU_SWAP_PIN");
        pin_mode = !v || !*v || strcmp(v, "keep") == 0
                       ? PIN_KEEP
                       : env_switch("CONVGPU_SWAP_PIN", PIN_KEEP, "test-fail", 2,
                                    "host copies are page-locked and kept so (keep)");
    }
}

/* Host memory for r's copy: its spare if it has one, else new; populated in one call (a fault
 * per huge page, not per 4 KiB; for a spare, only the pages the kernel took back). *spare says
 * which. */
/* The container's budget for page-locked spares (ledger.h): reserve n bytes of it, or give
 * them back. */
static bool pin_reserve(uint64_t n)
{
    struct cg_session s;
    if (!cg_session_get(&s))
        return false;
    struct cg_ledger_swap *w = &s.ledger->swap;
    uint64_t cur = atomic_load_explicit(&w->pinned, memory_order_relaxed);
    do {
        uint64_t budget = atomic_load_explicit(&w->pin_budget, memory_order_acquire);
        if (cur > budget || n > budget - cur)
            return false;
    } while (!atomic_compare_exchange_weak_explicit(&w->pinned, &cur, cur + n,
                                                    memory_order_acq_rel, memory_order_relaxed));
    return true;
}

static void pin_release(uint64_t n)
{
    struct cg_session s;
    if (!cg_session_get(&s))
        return;
    _Atomic uint64_t *w = &s.ledger->swap.pinned;
    uint64_t cur = atomic_load_explicit(w, memory_order_relaxed);
    while (!atomic_compare_exchange_weak_explicit(w, &cur, cur > n ? cur - n : 0,
                                                  memory_order_acq_rel, memory_order_relaxed))
        ;
}

static void *host_copy(struct rec *r, bool *spare)
{
    void *p = r->spare;
    *spare = p != NULL;
    r->spare = NULL;
    if (p && r->locked) /* a counted spare becomes a host copy, which swap counts */
        pin_release(r->size);
    if (!p) {
        p = mmap(NULL, r->size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            return NULL;
        madvise(p, r->size, MADV_HUGEPAGE);
    }
#ifdef MADV_POPULATE_WRITE
    madvise(p, r->size, MADV_POPULATE_WRITE); /* only a hint: the copy faults in what is left */
#endif
    return p;
}

/* After a swap-in: r's host copy becomes its spare, or is unmapped. */
static void unlock(void *p);

static void host_done(struct rec *r)
{
    /* Kept locked only within the container's budget (and when copies are kept at all); else
     * unlocked, and kept as any spare. */
    if (r->locked && (keep_host_mode == 0 || !pin_reserve(r->size))) {
        unlock(r->host);
        r->locked = false;
    }
    if (r->locked) { /* locked pages cannot be lazily freed: it stays whole, and locked */
        r->spare = r->host;
    } else if (keep_host_mode == 0 || madvise(r->host, r->size, MADV_FREE) != 0) {
        munmap(r->host, r->size);
    } else {
        if (keep_host_mode == 2) /* what the kernel's reclaim leaves: pages that read as zero */
            madvise(r->host, r->size, MADV_DONTNEED);
        r->spare = r->host;
    }
    r->host = NULL;
}

static void unlock(void *p)
{
    PFN_cuMemHostUnregister unreg = SYM(c_hunreg, cuMemHostUnregister);
    if (!unreg || unreg(p) != CUDA_SUCCESS)
        cg_log(CG_LOG_WARN, "swap: a host copy could not be unlocked");
}

/* Unmaps r's host copy or spare p, unlocking it first if it was kept locked (in any context:
 * it was registered portable; the caller's current context is left as it was). */
static void host_unmap(struct rec *r, void *p)
{
    if (r->locked) {
        PFN_cuCtxGetCurrent getcur = SYM(c_getcur, cuCtxGetCurrent);
        PFN_cuCtxSetCurrent setcur = SYM(c_setcur, cuCtxSetCurrent);
        CUcontext cur = NULL;
        bool switched = getcur && setcur && getcur(&cur) == CUDA_SUCCESS && !cur &&
                        setcur(r->ctx) == CUDA_SUCCESS;
        unlock(p);
        if (switched)
            setcur(NULL);
        r->locked = false;
    }
    munmap(p, r->size);
}

static void spare_drop(struct rec *r)
{
    if (r->spare) {
        bool counted = r->locked;
        host_unmap(r, r->spare);
        if (counted)
            pin_release(r->size);
    }
    r->spare = NULL;
}

/* The budget shrank below what this process keeps locked: its locked spares go until the
 * container is within it again (the next swap-out copies into new memory for those). */
static void pin_trim(struct cg_ledger *l)
{
    if (atomic_load_explicit(&l->swap.pinned, memory_order_acquire) <=
        atomic_load_explicit(&l->swap.pin_budget, memory_order_acquire))
        return;
    pthread_mutex_lock(&mu);
    uint64_t freed = 0;
    for (uint32_t i = 0; i < used_n; i++) {
        struct rec *r = &recs[i];
        if (atomic_load_explicit(&l->swap.pinned, memory_order_acquire) <=
            atomic_load_explicit(&l->swap.pin_budget, memory_order_acquire))
            break;
        if (r->live && r->spare && r->locked && !r->host) {
            freed += r->size;
            spare_drop(r);
        }
    }
    pthread_mutex_unlock(&mu);
    if (freed)
        cg_log(CG_LOG_DEBUG, "swap: %" PRIu64 " page-locked bytes released: the container's "
                             "pin budget shrank", freed);
}

/* Page-locks r's host copy p for its copy when CONVGPU_SWAP_PIN asks (the current context is
 * the record's); with PIN_KEEP a copy locked before stays so, and r->locked records it. True if
 * p is locked; a copy it could not lock goes through pageable memory, as without the setting. */
static bool pin(struct rec *r, void *p)
{
    if (pin_mode <= 0)
        return false;
    if (r->locked)
        return true;
    PFN_cuMemHostRegister_v2 reg = SYM(c_hreg, cuMemHostRegister_v2);
    /* Kept locked, it may be unlocked later from another context (a free on another thread). */
    unsigned flags = pin_mode == PIN_KEEP ? CU_MEMHOSTREGISTER_PORTABLE : 0;
    CUresult rc = pin_mode == 2 || !reg ? CUDA_ERROR_OPERATING_SYSTEM : reg(p, r->size, flags);
    if (rc != CUDA_SUCCESS)
        cg_log(CG_LOG_DEBUG, "swap: cannot page-lock %zu bytes (%d): copied from pageable memory",
               r->size, (int)rc);
    r->locked = rc == CUDA_SUCCESS && pin_mode == PIN_KEEP;
    return rc == CUDA_SUCCESS;
}

/* Only after the copy is complete: the memory stays the host copy (or the spare). Kept locked
 * with PIN_KEEP: host_unmap unlocks it. */
static void unpin(void *p, bool pinned)
{
    if (pinned && pin_mode != PIN_KEEP)
        unlock(p);
}

/* "; N page-locked for the copy" for a move's log line when CONVGPU_SWAP_PIN is on, else "". */
static const char *locked_text(char *buf, size_t len, uint64_t bytes)
{
    buf[0] = '\0';
    if (pin_mode > 0)
        snprintf(buf, len, "; %" PRIu64 " page-locked%s", bytes,
                 pin_mode == PIN_KEEP ? " (kept locked)" : " for the copy");
    return buf;
}

/* Copies every resident record out and releases its device memory; returns what its slot was
 * charged for them, *into_spares how much of that went into spares. A record that cannot be
 * copied stays resident. */
static uint64_t swap_out(struct cg_ledger *l, uint64_t *into_spares, uint64_t *pinned_bytes)
{
    PFN_cuCtxSetCurrent setcur = SYM(c_setcur, cuCtxSetCurrent);
    PFN_cuMemcpyDtoH_v2 dtoh = SYM(c_dtoh, cuMemcpyDtoH_v2);
    uint64_t moved = 0;
    *into_spares = *pinned_bytes = 0;
    if (!setcur || !dtoh || !SYM(c_sync, cuCtxSynchronize))
        return 0;
    /* Our own bit too, whoever ordered: nothing may run on memory that is leaving. */
    atomic_fetch_or_explicit(&l->compute.gate, CG_GATE_SWAPPED, memory_order_seq_cst);
    wait_quiet();
    struct rec drop[KEEP_SLOTS];
    pthread_mutex_lock(&mu);
    /* Kept memory is released, not copied: nobody holds a pointer into it. */
    uint32_t ndrop = kept_detach(drop);
    sync_contexts();
    for (uint32_t i = 0; i < used_n; i++) {
        struct rec *r = &recs[i];
        if (!r->live || r->host)
            continue;
        bool spare;
        void *host = host_copy(r, &spare); /* a spare kept locked is still locked */
        if (!host) {
            cg_log(CG_LOG_WARN, "swap-out: no host memory for %zu bytes: stays on the device",
                   r->size);
            continue;
        }
        CUresult rc = setcur(r->ctx);
        bool pinned = rc == CUDA_SUCCESS && pin(r, host);
        if (rc == CUDA_SUCCESS)
            rc = dtoh(host, r->va, r->size); /* synchronous: done when it returns */
        unpin(host, pinned);
        if (rc == CUDA_SUCCESS)
            rc = map_out(r);
        if (rc != CUDA_SUCCESS) {
            cg_log(CG_LOG_WARN, "swap-out of %zu bytes failed (%d): stays on the device",
                   r->size, (int)rc);
            host_unmap(r, host);
            continue;
        }
        r->host = host;
        moved += r->charged;
        if (spare)
            *into_spares += r->charged;
        if (pinned)
            *pinned_bytes += r->charged;
    }
    pthread_mutex_unlock(&mu);
    kept_release(drop, ndrop, "swap-out");
    cg_uncharge_on(0, moved); /* only a container on one GPU swaps */
    return moved;
}

/* Brings every record that is out back at its address; false if some could not come back yet
 * (the caller tries again). */
static bool swap_in(uint64_t *pinned_bytes)
{
    PFN_cuCtxSetCurrent setcur = SYM(c_setcur, cuCtxSetCurrent);
    PFN_cuMemcpyHtoD_v2 htod = SYM(c_htod, cuMemcpyHtoD_v2);
    PFN_cuCtxSynchronize sync = SYM(c_sync, cuCtxSynchronize);
    if (!setcur || !htod || !sync)
        return false;
    bool all = true;
    pthread_mutex_lock(&mu);
    holding_mu = true; /* our charges below must not try to drop kept memory (there is none) */
    for (uint32_t i = 0; i < used_n; i++) {
        struct rec *r = &recs[i];
        if (!r->live || !r->host)
            continue;
        /* Charged first, as any allocation: the daemon may make us wait for the memory. */
        uint64_t charged;
        if (cg_charge_on(0, r->charged, &charged) < 0) {
            all = false;
            continue;
        }
        CUresult rc = setcur(r->ctx);
        int attempt = 0;
        if (rc == CUDA_SUCCESS)
            while ((rc = map_in(r)) == CUDA_ERROR_OUT_OF_MEMORY && cg_driver_retry(&attempt))
                ;
        bool pinned = rc == CUDA_SUCCESS && pin(r, r->host);
        if (rc == CUDA_SUCCESS && (rc = htod(r->va, r->host, r->size)) != CUDA_SUCCESS)
            map_out(r);
        if (rc == CUDA_SUCCESS)
            rc = sync();
        unpin(r->host, pinned); /* the copy is complete, or failed and mapped out */
        if (pinned && rc == CUDA_SUCCESS)
            *pinned_bytes += r->charged;
        if (rc != CUDA_SUCCESS) {
            cg_log(CG_LOG_WARN, "swap-in of %zu bytes failed (%d): will try again", r->size,
                   (int)rc);
            cg_uncharge_on(0, charged);
            all = false;
            continue;
        }
        host_done(r);
    }
    holding_mu = false;
    pthread_mutex_unlock(&mu);
    return all;
}

static void report(struct cg_ledger_swap_slot *me, uint32_t state, uint32_t epoch)
{
    atomic_store_explicit(&me->done, epoch, memory_order_relaxed);
    atomic_store_explicit(&me->state, state, memory_order_release);
    futex(&me->state, FUTEX_WAKE, INT32_MAX, NULL);
    cg_client_notify_swapped();
}

static void *swap_main(void *arg)
{
    (void)arg;
    uint64_t out = 0, in_pinned = 0; /* in_pinned: over the tries of one swap-in */
    char locked[64];                 /* the log's page-locked figure, with the setting on */
    host_settings();
    for (;;) {
        struct cg_session s;
        if (!cg_session_get(&s)) {
            pause_ms(100);
            continue;
        }
        struct cg_ledger *l = s.ledger;
        struct cg_ledger_swap_slot *me = &l->swap_slots[s.slot - l->slots];
        atomic_store_explicit(&me->ready, 1, memory_order_release);
        uint32_t epoch = atomic_load_explicit(&l->swap.epoch, memory_order_acquire);
        uint32_t order = atomic_load_explicit(&l->swap.order, memory_order_acquire);
        if (order == CG_SWAP_OUT &&
            atomic_load_explicit(&me->state, memory_order_relaxed) != CG_SWAPST_OUT) {
            atomic_store_explicit(&me->state, CG_SWAPST_MOVING, memory_order_relaxed);
            uint64_t into_spares, pinned;
            out = swap_out(l, &into_spares, &pinned);
            atomic_store_explicit(&me->out_bytes, out, memory_order_relaxed);
            atomic_fetch_add_explicit(&me->swaps, 1, memory_order_relaxed);
            cg_log(CG_LOG_INFO, "swapped out %" PRIu64 " bytes (%" PRIu64 " into host memory "
                                "kept since the last swap-in)%s", out, into_spares,
                   locked_text(locked, sizeof locked, pinned));
            report(me, CG_SWAPST_OUT, epoch);
        } else if (order == CG_SWAP_IN &&
                   atomic_load_explicit(&me->state, memory_order_relaxed) != CG_SWAPST_IN) {
            atomic_store_explicit(&me->state, CG_SWAPST_MOVING, memory_order_relaxed);
            if (!swap_in(&in_pinned)) {
                pause_ms(100);
                continue;
            }
            cg_log(CG_LOG_INFO, "swapped in %" PRIu64 " bytes%s; the container keeps %" PRIu64
                                " page-locked (pin budget %" PRIu64 ")", out,
                   locked_text(locked, sizeof locked, in_pinned),
                   (uint64_t)atomic_load_explicit(&l->swap.pinned, memory_order_relaxed),
                   (uint64_t)atomic_load_explicit(&l->swap.pin_budget, memory_order_relaxed));
            out = in_pinned = 0;
            atomic_store_explicit(&me->out_bytes, 0, memory_order_relaxed);
            report(me, CG_SWAPST_IN, epoch);
        } else {
            /* The daemon wakes us when a request of the container waits: what we keep may be
             * what it waits for (ledger.h). The timeout below covers a lost wake-up. */
            if (order == CG_SWAP_IN && atomic_load_explicit(&l->waiters, memory_order_acquire))
                cg_swap_drop_kept("a request of the container waits");
            if (order == CG_SWAP_IN)
                pin_trim(l);
            atomic_store_explicit(&me->done, epoch, memory_order_relaxed);
        }
        /* Asleep until the next order; re-read now and then in case the session changed. */
        struct timespec ts = {1, 0};
        futex(&l->swap.epoch, FUTEX_WAIT, epoch, &ts);
    }
    return NULL;
}

/* Starts the swap thread once per process (mu held). Its signals stay the application's. */
static bool start_thread(void)
{
    if (thread_started)
        return true;
    pthread_attr_t a;
    pthread_t t;
    sigset_t all, old;
    sigfillset(&all);
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&a, 256 * 1024);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int e = pthread_create(&t, &a, swap_main, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&a);
    if (e != 0) {
        cg_log(CG_LOG_WARN, "cannot start the swap thread: %s", strerror(e));
        return false;
    }
    syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0);
    thread_started = true;
    atomic_store_explicit(&cg_swap_armed, 1, memory_order_seq_cst);
    return true;
}

/* ---- the allocation path ----------------------------------------------------------------------- */

bool cg_swap_wanted(void)
{
    struct cg_session s;
    return cg_session_get(&s) &&
           atomic_load_explicit(&s.ledger->swap.enabled, memory_order_relaxed) == 1;
}

/* The calling thread's context and device, and `bytes` in whole granules of that device. */
static CUresult placement(struct rec *r, size_t bytes)
{
    PFN_cuCtxGetCurrent getcur = SYM(c_getcur, cuCtxGetCurrent);
    PFN_cuCtxGetDevice getdev = SYM(c_getdev, cuCtxGetDevice);
    PFN_cuMemGetAllocationGranularity gran = SYM(c_gran, cuMemGetAllocationGranularity);
    if (!getcur || !getdev || !gran)
        return CUDA_ERROR_NOT_SUPPORTED;
    CUresult rc = getcur(&r->ctx);
    if (rc == CUDA_SUCCESS && !r->ctx)
        rc = CUDA_ERROR_INVALID_CONTEXT;
    if (rc == CUDA_SUCCESS)
        rc = getdev(&r->dev);
    size_t g = 0;
    bool known = rc == CUDA_SUCCESS && r->dev >= 0 &&
                 (size_t)r->dev < sizeof gran_of / sizeof *gran_of;
    if (known)
        g = atomic_load_explicit(&gran_of[r->dev], memory_order_relaxed);
    if (rc == CUDA_SUCCESS && g == 0) {
        CUmemAllocationProp prop = prop_for(r->dev);
        rc = gran(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM);
        if (rc == CUDA_SUCCESS && known)
            atomic_store_explicit(&gran_of[r->dev], g, memory_order_relaxed);
    }
    if (rc != CUDA_SUCCESS)
        return rc;
    if (g == 0 || bytes > SIZE_MAX - (g - 1))
        return CUDA_ERROR_OUT_OF_MEMORY;
    r->size = (bytes + g - 1) / g * g;
    return CUDA_SUCCESS;
}

CUresult cg_swap_reuse(CUdeviceptr *dptr, size_t bytes, uint64_t *charged, uint64_t *id)
{
    if (atomic_load_explicit(&kept_count, memory_order_acquire) == 0)
        return CUDA_ERROR_NOT_FOUND;
    struct rec want = {0};
    if (placement(&want, bytes) != CUDA_SUCCESS)
        return CUDA_ERROR_NOT_FOUND;
    struct rec v[KEEP_SLOTS];
    uint32_t ndrop = 0;
    long k = -1;
    pthread_mutex_lock(&mu);
    for (uint32_t i = kept_n; i-- > 0;) {
        if (kept[i].size != want.size || kept[i].dev != want.dev)
            continue;
        if ((k = take_rec()) < 0)
            break;
        recs[k] = kept_take(i);
        recs[k].ctx = want.ctx; /* the one that allocates now is the one to sync and copy in */
        recs[k].live = 1;
        break;
    }
    if (k < 0) /* a miss: what is kept is not what this program reuses now */
        ndrop = kept_detach(v);
    pthread_mutex_unlock(&mu);
    if (k < 0) {
        kept_release(v, ndrop, "an allocation of another size");
        return CUDA_ERROR_NOT_FOUND;
    }
    cg_log(CG_LOG_DEBUG, "swap: kept 0x%" PRIx64 " (%zu bytes) reused", (uint64_t)recs[k].va,
           recs[k].size);
    *dptr = recs[k].va;
    *charged = recs[k].charged;
    *id = (uint64_t)k + 1;
    return CUDA_SUCCESS;
}

CUresult cg_swap_alloc(CUdeviceptr *dptr, size_t bytes, uint64_t charged, uint64_t *id)
{
    PFN_cuMemAddressReserve reserve = SYM(c_reserve, cuMemAddressReserve);
    PFN_cuMemAddressFree afree = SYM(c_afree, cuMemAddressFree);
    if (!reserve || !afree)
        return CUDA_ERROR_NOT_SUPPORTED;
    struct rec r = {.charged = charged};
    CUresult rc = placement(&r, bytes);
    if (rc != CUDA_SUCCESS)
        return rc;
    pthread_mutex_lock(&mu);
    resv_configure();
    bool cached = resv_take(r.size, &r.va);
    pthread_mutex_unlock(&mu);
    if (cached && (rc = map_in(&r)) != CUDA_SUCCESS) {
        if (rc == CUDA_ERROR_OUT_OF_MEMORY) { /* the range is fine, the device is full */
            resv_put(r.va, r.size);
            return rc;
        }
        /* The driver no longer knows the range (every context was destroyed, which takes
         * the process's reservations with it): forget it, without freeing what may by now
         * be someone else's range, and take a new one as if it had never been cached. */
        cg_log(CG_LOG_DEBUG, "swap: cached reservation 0x%" PRIx64 " unusable (%d): dropped",
               (uint64_t)r.va, (int)rc);
        cached = false;
    }
    if (!cached) {
        if ((rc = reserve(&r.va, r.size, 0, 0, 0)) != CUDA_SUCCESS)
            return rc;
        if ((rc = map_in(&r)) != CUDA_SUCCESS) {
            afree(r.va, r.size);
            return rc;
        }
    }
    r.live = 1;
    pthread_mutex_lock(&mu);
    long i = start_thread() ? take_rec() : -1;
    if (i >= 0)
        recs[i] = r;
    pthread_mutex_unlock(&mu);
    if (i < 0) {
        if (map_out(&r) == CUDA_SUCCESS)
            resv_put(r.va, r.size);
        else
            afree(r.va, r.size);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    *dptr = r.va;
    *id = (uint64_t)i + 1;
    return CUDA_SUCCESS;
}

CUresult cg_swap_free(uint64_t id, bool *kept_it)
{
    PFN_cuCtxSynchronize sync = SYM(c_sync, cuCtxSynchronize);
    PFN_cuMemAddressFree afree = SYM(c_afree, cuMemAddressFree);
    if (kept_it)
        *kept_it = false;
    if (!sync || !afree)
        return CUDA_ERROR_NOT_SUPPORTED;
    pthread_mutex_lock(&mu);
    if (id == 0 || id > used_n || !recs[id - 1].live) {
        pthread_mutex_unlock(&mu);
        return CUDA_ERROR_INVALID_VALUE;
    }
    struct rec r = recs[id - 1];
    put_rec((uint32_t)(id - 1));
    pthread_mutex_unlock(&mu);
    spare_drop(&r); /* kept memory, reused or not, starts without one */
    /* As cuMemFree: the device's work that may still use it finishes first. */
    sync();
    if (kept_it && !r.host && keeping_allowed()) {
        struct rec oldest;
        bool evict = false;
        pthread_mutex_lock(&mu);
        keep_configure();
        if (keep_mode == 1) {
            if (kept_n == KEEP_SLOTS) {
                oldest = kept_take(0);
                evict = true;
            }
            r.live = 0;
            r.next_free = 0;
            kept[kept_n++] = r;
            kept_charged += r.charged;
            kept_publish();
            *kept_it = true;
        }
        pthread_mutex_unlock(&mu);
        if (evict)
            kept_release(&oldest, 1, "more than the kept count");
        if (*kept_it) {
            cg_log(CG_LOG_DEBUG, "swap: 0x%" PRIx64 " (%zu bytes) kept", (uint64_t)r.va, r.size);
            return CUDA_SUCCESS;
        }
    }
    bool unmapped = true;
    if (r.host)
        host_unmap(&r, r.host); /* freed while out: only its host copy and address remain */
    else
        unmapped = map_out(&r) == CUDA_SUCCESS;
    /* Only a range with nothing mapped in it may serve another allocation. */
    if (unmapped)
        resv_put(r.va, r.size);
    else
        afree(r.va, r.size);
    return CUDA_SUCCESS;
}

/* ---- fork: the child is a new process; the parent's records are the parent's -------------- */

void cg_swap_fork_prepare(void) { pthread_mutex_lock(&mu); }
void cg_swap_fork_parent(void) { pthread_mutex_unlock(&mu); }

void cg_swap_fork_child(void)
{
    for (uint32_t i = 0; i < used_n; i++) {
        if (!recs[i].live)
            continue;
        recs[i].locked = false; /* the driver's registrations are the parent's */
        if (recs[i].host)
            munmap(recs[i].host, recs[i].size);
        spare_drop(&recs[i]);
    }
    if (recs)
        munmap(recs, (size_t)cap * sizeof *recs);
    recs = NULL;
    cap = used_n = free_head = 0;
    /* The cached ranges and kept memory are the parent's, as the driver knows them, not ours
     * (and their charges are in the parent's slot). */
    resv_n = 0;
    resv_bytes = 0;
    kept_n = 0;
    kept_charged = 0;
    atomic_store_explicit(&kept_count, 0, memory_order_relaxed);
    thread_started = false;
    atomic_store_explicit(&cg_swap_armed, 0, memory_order_relaxed);
    atomic_store_explicit(&cg_swap_inflight, 0, memory_order_relaxed);
    pthread_mutex_init(&mu, NULL);
}

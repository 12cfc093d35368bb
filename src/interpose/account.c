/* account.c — charge and uncharge against the ledger slot (see ledger.h for the design). */
#include "account.h"
#include "gate.h"
#include "client.h"
#include "config.h"
#include "log.h"
#include "hooks.h"
#include "proto.h"
#include "swap.h"

#include <time.h>

static bool session(unsigned m, struct cg_session *s)
{
    return cg_session_get_on(m, s) || cg_session_open_on(m, cg_cfg.daemon_timeout_s, s);
}

static bool round_up(uint64_t bytes, uint64_t g, uint64_t *out)
{
    uint64_t r = bytes % g;
    if (r && bytes > UINT64_MAX - (g - r))
        return false;
    *out = r ? bytes + (g - r) : bytes;
    return true;
}

uint64_t cg_charge_size(uint64_t bytes)
{
    struct cg_session s;
    uint64_t r;
    if (!round_up(bytes, cg_session_get_on(0, &s) ? s.granularity : CG_LEDGER_PAGE, &r))
        return 0;
    return r;
}

/* ---- which GPU ------------------------------------------------------------------------------ */

static _Atomic(void *) c_ctx_device;

unsigned cg_member_of_ordinal(int dev)
{
    unsigned n = cg_client_members();
    if (n <= 1)
        return 0; /* one GPU: every allocation is its (as before several GPUs existed) */
    return dev >= 0 && (unsigned)dev < n ? (unsigned)dev : CG_MEMBER_NONE;
}

unsigned cg_member_several(void)
{
    PFN_cuCtxGetDevice f = (PFN_cuCtxGetDevice)cg_lib_sym(CG_LIB_CUDA, &c_ctx_device,
                                                          "cuCtxGetDevice");
    CUdevice dev;
    if (!f || f(&dev) != CUDA_SUCCESS)
        return 0; /* no context: the driver's default device, ordinal 0 */
    return cg_member_of_ordinal(dev);
}

unsigned cg_alloc_member(void)
{
    struct cg_session s;
    /* Member 0's WELCOME says how many GPUs there are. */
    if (cg_client_members() == 0 && !session(0, &s))
        return CG_MEMBER_UNREACHABLE;
    return cg_member();
}

unsigned cg_member_of_node_device(unsigned index)
{
    struct cg_session s;
    unsigned n = cg_client_members();
    if (n == 0)
        return cg_session_get_on(0, &s) ? CG_MEMBER_NONE : 0;
    for (unsigned m = 0; m < n && m < CG_IP_MEMBERS; m++)
        if ((cg_session_get_on(m, &s) || cg_session_open_on(m, 0, &s)) &&
            s.ledger->device == index)
            return m;
    return CG_MEMBER_NONE;
}

/* ---- charging ------------------------------------------------------------------------------- */

int cg_charge_on(unsigned m, uint64_t bytes, uint64_t *charged)
{
    *charged = 0;
    if (bytes == 0)
        return 0;
    if (m == CG_MEMBER_NONE) {
        cg_log(CG_LOG_WARN, "an allocation of %llu bytes on a GPU the container does not have: "
                            "refused", (unsigned long long)bytes);
        return -1;
    }
    struct cg_session s;
    if (m == CG_MEMBER_UNREACHABLE || !session(m, &s)) {
        cg_log(CG_LOG_WARN, "no daemon: refusing an allocation of %llu bytes",
               (unsigned long long)bytes);
        return -1;
    }
    uint64_t rounded, pages;
    if (!round_up(bytes, s.granularity, &rounded) || !cg_ledger_pages(rounded, &pages))
        return -1; /* larger than any ledger can account: certainly over the limit */
    /* A paused container (docs/PAUSE.md) charges nothing and asks the daemon nothing until it
     * is resumed: the allocation waits here, before the driver, which is locked anyway. */
    if (CG_UNLIKELY(atomic_load_explicit(&s.ledger->compute.gate, memory_order_acquire) &
                    CG_GATE_PAUSED))
        cg_gate_wait(&s, false, CG_GATE_PAUSED);
    if (cg_ledger_try_charge(s.slot, pages)) {
        *charged = pages * CG_LEDGER_PAGE;
        return 0;
    }
    /* Memory this process keeps for reuse (a container that swaps, swap.c) is ours to take
     * before anyone is asked for more. */
    if (m == 0 && cg_swap_drop_kept("a charge wants its quota") &&
        cg_ledger_try_charge(s.slot, pages)) {
        *charged = pages * CG_LEDGER_PAGE;
        return 0;
    }
    int st = cg_client_request(m, pages * CG_LEDGER_PAGE);
    if (st == CG_ALLOC_GRANTED) {
        *charged = pages * CG_LEDGER_PAGE;
        return 0;
    }
    cg_log(CG_LOG_INFO, "allocation of %llu bytes refused: %s", (unsigned long long)bytes,
           st == CG_ALLOC_OVER_LIMIT   ? "over the container's limit"
           : st == CG_ALLOC_CANCELLED  ? "cancelled"
           : st == CG_REQ_TIMEOUT      ? "daemon unreachable"
                                       : "invalid");
    return -1;
}

bool cg_context_charged_on(unsigned m)
{
    struct cg_session s;
    return cg_session_get_on(m, &s) &&
           cg_ledger_used(atomic_load_explicit(&s.slot->word, memory_order_acquire)) != 0;
}

void cg_uncharge_on(unsigned m, uint64_t charged)
{
    struct cg_session s;
    if (charged == 0 || !cg_session_get_on(m, &s))
        return;
    cg_ledger_uncharge(s.slot, charged / CG_LEDGER_PAGE);
    if (atomic_load_explicit(&s.ledger->waiters, memory_order_acquire) != 0)
        cg_client_notify_freed(m);
}

bool cg_meminfo_on(unsigned m, uint64_t *free_bytes, uint64_t *total_bytes)
{
    struct cg_session s;
    if (m == CG_MEMBER_NONE || (!cg_session_get_on(m, &s) && !cg_session_open_on(m, 0, &s)))
        return false;
    uint64_t limit = atomic_load_explicit(&s.ledger->limit, memory_order_acquire);
    uint64_t used = cg_ledger_used_bytes(s.ledger), kept = cg_ledger_kept_bytes(s.ledger);
    used = kept < used ? used - kept : 0; /* kept memory goes to the next allocation that asks */
    *total_bytes = limit;
    *free_bytes = used >= limit ? 0 : limit - used;
    return true;
}

bool cg_driver_retry(int *attempt)
{
    if (++*attempt > 10)
        return false;
    nanosleep(&(struct timespec){0, 20 * 1000 * 1000}, NULL);
    return true;
}

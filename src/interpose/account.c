/* account.c — charge and uncharge against the ledger slot (see ledger.h for the design). */
#include "account.h"
#include "client.h"
#include "config.h"
#include "log.h"
#include "proto.h"

#include <time.h>

static bool session(struct cg_session *s)
{
    return cg_session_get(s) || cg_session_open(cg_cfg.daemon_timeout_s, s);
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
    if (!round_up(bytes, cg_session_get(&s) ? s.granularity : CG_LEDGER_PAGE, &r))
        return 0;
    return r;
}

int cg_charge(uint64_t bytes, uint64_t *charged)
{
    *charged = 0;
    if (bytes == 0)
        return 0;
    struct cg_session s;
    if (!session(&s)) {
        cg_log(CG_LOG_WARN, "no daemon: refusing an allocation of %llu bytes",
               (unsigned long long)bytes);
        return -1;
    }
    uint64_t rounded, pages;
    if (!round_up(bytes, s.granularity, &rounded) || !cg_ledger_pages(rounded, &pages))
        return -1; /* larger than any ledger can account: certainly over the limit */
    if (cg_ledger_try_charge(s.slot, pages)) {
        *charged = pages * CG_LEDGER_PAGE;
        return 0;
    }
    int st = cg_client_request(pages * CG_LEDGER_PAGE);
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

bool cg_context_charged(void)
{
    struct cg_session s;
    return cg_session_get(&s) &&
           cg_ledger_used(atomic_load_explicit(&s.slot->word, memory_order_acquire)) != 0;
}

void cg_uncharge(uint64_t charged)
{
    struct cg_session s;
    if (charged == 0 || !cg_session_get(&s))
        return;
    cg_ledger_uncharge(s.slot, charged / CG_LEDGER_PAGE);
    if (atomic_load_explicit(&s.ledger->waiters, memory_order_acquire) != 0)
        cg_client_notify_freed();
}

bool cg_meminfo(uint64_t *free_bytes, uint64_t *total_bytes)
{
    struct cg_session s;
    /* Information calls do not wait for a daemon that is down. */
    if (!cg_session_get(&s) && !cg_session_open(0, &s))
        return false;
    uint64_t limit = atomic_load_explicit(&s.ledger->limit, memory_order_acquire);
    uint64_t used = cg_ledger_used_bytes(s.ledger);
    *total_bytes = limit;
    *free_bytes = used >= limit ? 0 : limit - used;
    return true;
}

int cg_container_device(void)
{
    struct cg_session s;
    if (!cg_session_get(&s))
        return -1;
    return (int)s.ledger->device;
}

bool cg_driver_retry(int *attempt)
{
    if (++*attempt > 10)
        return false;
    nanosleep(&(struct timespec){0, 20 * 1000 * 1000}, NULL);
    return true;
}

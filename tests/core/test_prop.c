/* test_prop.c — property test: random event sequences against the core, with cg_core_check()
 * after every event, plus an independent ledger built only from the emitted events.
 *
 * Each episode draws 1-3 devices, a policy of each kind, and then a mix of creations, requests
 * of any size, frees, set-use, process exits, cancels, removals, limit changes and policy
 * changes, compute-share changes. Sizes are small integers so that contention, partial assignments and unsafe states
 * are common. After every event: every invariant of cg_core_check() holds (no device with all
 * containers suspended, nothing over capacity, safety, conservation), and the ledger of
 * ASSIGN/UNASSIGN/GRANT/RESUME/RELEASE events agrees with the core's totals, and so does the
 * sum of hard shares per device rebuilt from COMPUTE and REMOVE events. At the end of an
 * episode everything is removed and every total must be zero.
 *
 * CONVGPU_PROPTEST_EVENTS scales the run (default 200000 events); CONVGPU_PROPTEST_SEED picks
 * the first seed.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "core.h"

#define MAXC 64
#define MAXCID 8192 /* cids handed out in one episode stay below this (creations < events) */

typedef struct {
    int64_t assigned[CG_MAX_DEVICES], used[CG_MAX_DEVICES], hard[CG_MAX_DEVICES];
    unsigned hard_of[MAXCID];  /* each container's hard share, from its COMPUTE events */
    bool bad_cid;
} ledger;

/* How often each interesting thing happened, over the whole run (coverage evidence). */
static unsigned long n_suspend, n_unsafe, n_resume, n_policy_assign, n_over, n_limit, n_compute,
    n_no_compute, n_exclusive, n_no_exclusive;

static void sink(void *ctx, const cg_event *ev)
{
    ledger *l = ctx;
    switch (ev->kind) {
    case CG_EV_ASSIGN: l->assigned[ev->device] += (int64_t)ev->bytes; break;
    case CG_EV_UNASSIGN: l->assigned[ev->device] -= (int64_t)ev->bytes; break;
    case CG_EV_GRANT:
    case CG_EV_RESUME: l->used[ev->device] += (int64_t)ev->bytes; break;
    case CG_EV_RELEASE: l->used[ev->device] -= (int64_t)ev->bytes; break;
    case CG_EV_COMPUTE:
    case CG_EV_REMOVE:
        if (ev->cid >= MAXCID) {
            l->bad_cid = true;
            break;
        }
        l->hard[ev->device] -= l->hard_of[ev->cid];
        l->hard_of[ev->cid] = ev->kind == CG_EV_COMPUTE && ev->compute_mode == CG_COMPUTE_HARD
                                  ? ev->compute_pct : 0;
        l->hard[ev->device] += l->hard_of[ev->cid];
        break;
    default: break;
    }
    n_compute += ev->kind == CG_EV_COMPUTE;
    n_suspend += ev->kind == CG_EV_SUSPEND;
    n_unsafe += ev->kind == CG_EV_SUSPEND && ev->reason == CG_WHY_UNSAFE;
    n_resume += ev->kind == CG_EV_RESUME;
    n_policy_assign += ev->kind == CG_EV_ASSIGN && ev->reason == CG_WHY_POLICY;
    n_over += ev->kind == CG_EV_REJECT && ev->reason == CG_WHY_OVER_LIMIT;
    n_limit += ev->kind == CG_EV_LIMIT;
}

static uint64_t rs;
static uint64_t rnd(void)
{
    uint64_t z = (rs += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
static uint64_t below(uint64_t n) { return n ? rnd() % n : 0; }

static int fail(uint64_t seed, long ev, const char *what)
{
    fprintf(stderr, "FAIL seed %" PRIu64 " event %ld: %s\n", seed, ev, what);
    return 1;
}

static int episode(uint64_t seed, long events)
{
    rs = seed;
    static ledger led;
    led = (ledger){0};
    cg_config cfg = {.resume = (cg_resume_policy)below(CG_RESUME__COUNT),
                     .placement = (cg_placement_policy)below(CG_PLACE__COUNT),
                     .seed = seed, .sink = sink, .sink_ctx = &led};
    cg_core *core = cg_core_new(&cfg);
    if (!core)
        return fail(seed, 0, "core_new");
    unsigned ndev = 1 + (unsigned)below(3);
    for (unsigned i = 0; i < ndev; i++)
        if (cg_device_add(core, 40 + below(100), below(8), below(6), NULL) != CG_OK)
            return fail(seed, 0, "device_add");
    cg_cid live[MAXC];
    unsigned nlive = 0;
    uint64_t reqid = 1;
    cg_time now = 0;
    for (long e = 0; e < events; e++) {
        now += below(1000);
        unsigned op = (unsigned)below(100);
        cg_cid cid = nlive ? live[below(nlive)] : CG_CID_NONE;
        cg_pid pid = 1 + below(3);
        cg_status st = CG_OK;
        if (op < 12 || nlive == 0) {
            if (nlive < MAXC) {
                cg_device_info di;
                int dev = below(3) ? -1 : (int)below(ndev);
                cg_device_get(core, dev < 0 ? 0 : (unsigned)dev, &di);
                cg_cid n;
                cg_container_spec spec = {.device = dev, .limit = 1 + below(di.capacity + 4)};
                if (below(2)) {
                    spec.compute_pct = 1 + (unsigned)below(60);
                    spec.compute_mode = below(2) ? CG_COMPUTE_HARD : CG_COMPUTE_ELASTIC;
                }
                if (below(10) == 0) { /* a whole device; without a limit: its capacity */
                    spec.exclusive = true;
                    spec.limit = below(2) ? 0 : spec.limit;
                }
                st = cg_container_create_spec(core, &spec, now, &n);
                n_no_compute += st == CG_ERR_NO_COMPUTE;
                n_exclusive += st == CG_OK && spec.exclusive;
                n_no_exclusive += st == CG_ERR_BUSY || st == CG_ERR_EXCLUSIVE;
                if (st == CG_OK)
                    live[nlive++] = n;
                else if (st != CG_ERR_TOO_LARGE && st != CG_ERR_NO_COMPUTE && st != CG_ERR_BUSY &&
                         st != CG_ERR_EXCLUSIVE)
                    return fail(seed, e, "create");
            }
        } else if (op < 50) {
            cg_outcome out;
            uint64_t size = below(4) ? 1 + below(20) : 1 + below(150);
            /* Now and then reuse a recent request id to exercise CG_ERR_EXISTS. */
            cg_reqid r = below(20) ? reqid++ : reqid - 1 - below(3);
            st = cg_request(core, cid, pid, r, size, now, &out);
            if (st != CG_OK && st != CG_ERR_EXISTS)
                return fail(seed, e, "request");
        } else if (op < 68) {
            cg_process_info pi[8];
            size_t np = cg_container_processes(core, cid, pi, 8);
            if (np) {
                cg_process_info *p = &pi[below(np < 8 ? np : 8)];
                if (p->used)
                    st = cg_release(core, cid, p->pid, 1 + below(p->used), now);
            }
        } else if (op < 74) {
            st = cg_process_exit(core, cid, pid, now);
            if (st != CG_OK && st != CG_ERR_NOT_FOUND)
                return fail(seed, e, "exit");
        } else if (op < 77) {
            cg_container_info ci;
            cg_container_get(core, cid, now, &ci);
            st = cg_process_set_use(core, cid, pid, below(ci.assigned + 3), now);
            if (st != CG_OK && st != CG_ERR_INVALID)
                return fail(seed, e, "set_use");
        } else if (op < 80) {
            st = cg_request_cancel(core, cid, reqid - 1 - below(5), now);
            if (st != CG_OK && st != CG_ERR_NOT_FOUND)
                return fail(seed, e, "cancel");
        } else if (op < 90) {
            st = cg_container_remove(core, cid, now);
            if (st != CG_OK)
                return fail(seed, e, "remove");
            for (unsigned i = 0; i < nlive; i++)
                if (live[i] == cid) {
                    live[i] = live[--nlive];
                    break;
                }
        } else if (op < 95) {
            cg_container_info ci;
            cg_container_get(core, cid, now, &ci);
            cg_device_info di;
            cg_device_get(core, ci.device, &di);
            bool pend;
            st = cg_container_set_limit(core, cid, 1 + below(di.capacity + 2), now, &pend);
            if (st != CG_OK && st != CG_ERR_BELOW_USE && st != CG_ERR_TOO_LARGE)
                return fail(seed, e, "set_limit");
        } else if (op < 98) {
            cg_compute_mode m = below(2) ? CG_COMPUTE_HARD : CG_COMPUTE_ELASTIC;
            st = cg_container_set_compute(core, cid, (unsigned)below(70), m, now);
            n_no_compute += st == CG_ERR_NO_COMPUTE;
            if (st != CG_OK && st != CG_ERR_NO_COMPUTE)
                return fail(seed, e, "set_compute");
        } else {
            st = cg_set_resume_policy(core, (cg_resume_policy)below(CG_RESUME__COUNT), now);
            if (below(2))
                cg_set_placement_policy(core, (cg_placement_policy)below(CG_PLACE__COUNT));
        }
        const char *why = cg_core_check(core);
        if (why)
            return fail(seed, e, why);
        for (unsigned i = 0; i < ndev; i++) {
            cg_device_info di;
            cg_device_get(core, i, &di);
            if ((int64_t)di.assigned != led.assigned[i] || (int64_t)di.used != led.used[i] ||
                (int64_t)di.compute_hard_pct != led.hard[i] || led.bad_cid)
                return fail(seed, e, "event ledger disagrees with the core");
            if (di.assigned + di.free != di.capacity)
                return fail(seed, e, "free not conserved");
        }
    }
    while (nlive)
        if (cg_container_remove(core, live[--nlive], now) != CG_OK)
            return fail(seed, events, "final remove");
    for (unsigned i = 0; i < ndev; i++) {
        cg_device_info di;
        cg_device_get(core, i, &di);
        if (di.assigned || di.used || di.ncontainers || di.nsuspended || led.assigned[i] ||
            led.used[i] || di.free != di.capacity || di.compute_hard_pct || led.hard[i] ||
            di.exclusive != CG_CID_NONE)
            return fail(seed, events, "totals not zero at the end");
    }
    if (cg_core_check(core))
        return fail(seed, events, cg_core_check(core));
    cg_core_free(core);
    return 0;
}

int main(void)
{
    const char *env = getenv("CONVGPU_PROPTEST_EVENTS");
    long total = env ? atol(env) : 200000;
    const char *s = getenv("CONVGPU_PROPTEST_SEED");
    uint64_t seed = s ? strtoull(s, NULL, 0) : 1;
    long done = 0;
    unsigned episodes = 0;
    while (done < total) {
        long len = 200 + (long)((seed * 7919) % 3000);
        if (episode(seed, len))
            return 1;
        done += len;
        seed++;
        episodes++;
    }
    printf("prop: %ld events in %u episodes, all invariants held\n"
           "  suspends %lu (unsafe %lu), resumes %lu, policy assigns %lu, over-limit %lu, "
           "limit changes %lu, share changes %lu (refused by admission %lu), exclusive "
           "containers %lu (refused %lu, or refused beside one)\n",
           done, episodes, n_suspend, n_unsafe, n_resume, n_policy_assign, n_over, n_limit,
           n_compute, n_no_compute, n_exclusive, n_no_exclusive);
    /* A generator that stopped producing a kind of step would let every invariant hold
     * vacuously: each kind must have happened. */
    int vacuous = 0;
    const struct { const char *what; unsigned long n; } seen[] = {
        {"suspensions", n_suspend}, {"resumptions", n_resume}, {"policy assigns", n_policy_assign},
        {"over-limit answers", n_over}, {"limit changes", n_limit}, {"share changes", n_compute},
        {"exclusive containers", n_exclusive},
    };
    for (size_t i = 0; i < sizeof seen / sizeof seen[0]; i++)
        if (seen[i].n == 0) {
            fprintf(stderr, "prop: FAIL: the generator produced no %s\n", seen[i].what);
            vacuous = 1;
        }
    return vacuous;
}

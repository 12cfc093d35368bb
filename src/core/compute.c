/* compute.c — the compute controller: shares and measured device time in, gates out
 * (compute.h has the rule and why it holds). Pure: the caller passes time and measurements. */
#include "compute.h"
#include "compute_log.h"

#include <stdlib.h>
#include <string.h>

/* What the controller remembers of one container between steps. */
typedef struct {
    uint64_t key;
    unsigned device;
    bool measured;           /* a baseline measurement exists */
    bool open, spare;        /* the last decision */
    bool forgive;            /* spare on time nobody had reserved: its debt is forgiven */
    int64_t credit;          /* at measured_until */
    cg_time measured_until;
    cg_time busy_total;      /* the cumulative figure at measured_until */
    uint32_t rate_permille;  /* busy share of the last measured interval */
    uint32_t open_rate;      /* permille: its use of the time its gate was open, lately */
    cg_gate_log log;         /* the gate's decisions not yet covered by a measurement */
} entry;

struct cg_compute {
    cg_compute_params p;
    entry *e;                /* sorted by key */
    size_t n;
    cg_time last_now;
    bool stepped;
};

static void *cc_alloc(const cg_compute_params *p, size_t size)
{
    return p->mem_alloc ? p->mem_alloc(p->mem_ctx, size) : malloc(size);
}

static void cc_free(const cg_compute_params *p, void *ptr)
{
    if (!ptr)
        return;
    if (p->mem_free)
        p->mem_free(p->mem_ctx, ptr);
    else
        free(ptr);
}

cg_compute *cg_compute_new(const cg_compute_params *params)
{
    cg_compute_params p = {0};
    if (params)
        p = *params;
    if (p.elastic_cap_pct > 100 || (p.mem_alloc == NULL) != (p.mem_free == NULL))
        return NULL;
    if (p.burst_ns == 0)
        p.burst_ns = CG_COMPUTE_BURST_NS_DEFAULT;
    if (p.debt_ns == 0)
        p.debt_ns = CG_COMPUTE_DEBT_NS_DEFAULT;
    if (p.burst_ns > INT64_MAX / 4 || p.debt_ns > INT64_MAX / 4)
        return NULL;
    if (p.elastic_cap_pct == 0)
        p.elastic_cap_pct = 100;
    cg_compute *cc = cc_alloc(&p, sizeof *cc);
    if (!cc)
        return NULL;
    memset(cc, 0, sizeof *cc);
    cc->p = p;
    return cc;
}

void cg_compute_free(cg_compute *cc)
{
    if (!cc)
        return;
    cg_compute_params p = cc->p;
    cc_free(&p, cc->e);
    cc_free(&p, cc);
}

static const entry *find(const cg_compute *cc, uint64_t key)
{
    size_t lo = 0, hi = cc->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cc->e[mid].key < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < cc->n && cc->e[lo].key == key ? &cc->e[lo] : NULL;
}

static int cmp_key(const void *a, const void *b)
{
    uint64_t x = ((const entry *)a)->key, y = ((const entry *)b)->key;
    return (x > y) - (x < y);
}

/* share% of `ns` nanoseconds, without overflow for any ns below 2^63. */
static int64_t share_of(unsigned pct, cg_time ns)
{
    return (int64_t)(ns / 100 * pct + ns % 100 * pct / 100);
}

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* Folds a new measurement into the entry's credit (see compute.h for the clamps), and learns
 * the container's rate while its gate was open in the measured span: its use of the time it
 * could launch (gated time is not its choice, so it does not count). */
static void absorb(const cg_compute_params *p, entry *e, const cg_compute_input *in)
{
    if (in->measured_until == 0)
        return;
    if (!e->measured || in->measured_until < e->measured_until ||
        in->busy_total_ns < e->busy_total) {
        /* A first measurement, or the measurer started over: a new baseline. */
        e->measured = true;
        e->measured_until = in->measured_until;
        e->busy_total = in->busy_total_ns;
        e->rate_permille = 0;
        cg_gate_log_forget(&e->log, e->measured_until);
        return;
    }
    cg_time span = in->measured_until - e->measured_until;
    if (span == 0)
        return;
    cg_time busy = in->busy_total_ns - e->busy_total;
    if (busy > span)
        busy = span;
    int64_t floor = e->forgive && in->mode == CG_COMPUTE_ELASTIC ? -(int64_t)p->burst_ns
                                                                 : -(int64_t)p->debt_ns;
    int64_t credit = e->credit + share_of(in->share_pct, span) - (int64_t)busy;
    e->credit = clamp64(credit, floor, (int64_t)p->burst_ns);
    e->rate_permille = (uint32_t)(busy * 1000 / span);
    /* Its rate while open: over an eighth of the span open at least, or the figure is noise
     * (work queued before a close runs on while it is closed). */
    cg_time open = cg_gate_log_open_ns(&e->log, e->measured_until, in->measured_until);
    if (open >= span / 8 && open > 0) {
        cg_time r = busy * 1000 / open;
        e->open_rate = r > 1000 ? 1000 : (uint32_t)r;
    }
    e->measured_until = in->measured_until;
    e->busy_total = in->busy_total_ns;
    cg_gate_log_forget(&e->log, e->measured_until);
}

/* The credit at `now`: the measured credit, plus the share of the unmeasured span, minus what
 * the container is predicted to have used in it: its rate while open, over the time its gate
 * was open in that span (compute_log.h: the gate's state now says nothing of the span). */
static int64_t estimate(const entry *e, const cg_compute_input *in, cg_time now)
{
    if (!e->measured)
        return 0;
    cg_time span = now > e->measured_until ? now - e->measured_until : 0;
    cg_time open = cg_gate_log_open_ns(&e->log, e->measured_until, now);
    int64_t predicted = (int64_t)(open / 1000 * e->open_rate);
    return e->credit + share_of(in->share_pct, span) - predicted;
}

static bool wants_time(const entry *e, const cg_compute_input *in)
{
    return in->waiting || e->rate_permille > 0;
}

/* Whether an elastic container may be opened on spare time at all (below GaiaGPU's cap). */
static bool may_take_spare(const cg_compute_params *p, const entry *e, const cg_compute_input *in)
{
    return in->mode == CG_COMPUTE_ELASTIC &&
           (p->elastic_cap_pct >= 100 || e->rate_permille < p->elastic_cap_pct * 10);
}

cg_status cg_compute_step(cg_compute *cc, cg_time now, const cg_compute_input *in, size_t n,
                          cg_compute_gate *out)
{
    if (!cc || (n && (!in || !out)) || (cc->stepped && now < cc->last_now))
        return CG_ERR_INVALID;
    for (size_t i = 0; i < n; i++) {
        if (in[i].share_pct > 100 || (unsigned)in[i].mode >= CG_COMPUTE__COUNT ||
            in[i].measured_until > now)
            return CG_ERR_INVALID;
    }
    entry *next = NULL;
    if (n) {
        if (n > SIZE_MAX / sizeof *next || !(next = cc_alloc(&cc->p, n * sizeof *next)))
            return CG_ERR_NOMEM;
        for (size_t i = 0; i < n; i++) {
            const entry *old = find(cc, in[i].key);
            /* A container first seen now had no gate before: its log reads closed until now,
             * so the span it may already be measured in is not predicted as open at full rate
             * (that read a fresh container as (100 - share)% of the measurement's lag in debt,
             * -250 ms at 25%, and closed it for its first step). */
            next[i] = old ? *old
                          : (entry){.key = in[i].key, .open = true, .open_rate = 1000,
                                    .log = cg_gate_log_init(false)};
        }
        qsort(next, n, sizeof *next, cmp_key);
        for (size_t i = 1; i < n; i++) {
            if (next[i].key == next[i - 1].key) {
                cc_free(&cc->p, next);
                return CG_ERR_INVALID;
            }
        }
    }
    /* Valid: from here on nothing fails. Index the new entries by input order. */
    entry **by_in = NULL;
    int64_t *credit = NULL;
    if (n) {
        by_in = cc_alloc(&cc->p, n * sizeof *by_in);
        credit = cc_alloc(&cc->p, n * sizeof *credit);
        if (!by_in || !credit) {
            cc_free(&cc->p, by_in);
            cc_free(&cc->p, credit);
            cc_free(&cc->p, next);
            return CG_ERR_NOMEM;
        }
    }
    cg_compute old = *cc;
    cc->e = next;
    cc->n = n;
    for (size_t i = 0; i < n; i++) {
        by_in[i] = (entry *)find(cc, in[i].key);
        by_in[i]->device = in[i].device;
        absorb(&cc->p, by_in[i], &in[i]);
        credit[i] = estimate(by_in[i], &in[i], now);
    }
    for (size_t i = 0; i < n; i++) {
        entry *e = by_in[i];
        bool open = true, spare = false;
        if (in[i].share_pct != 0 && credit[i] < 0) {
            open = false;
            if (may_take_spare(&cc->p, e, &in[i])) {
                /* Spare time: no container of this device that wants time deserves it more,
                 * being within its share, or elastic and less in debt. Among elastic
                 * containers in debt only the least indebted run on spare, so contending
                 * ones even out their credits, and even credits are exact shares (credit_i =
                 * s_i t - used_i): letting every indebted one run would split the device by
                 * kernel turns instead (30/70 became 37.5/62.5 with 50 ms kernels). */
                bool contested = false;
                for (size_t j = 0; j < n && !contested; j++)
                    contested = j != i && in[j].device == in[i].device && in[j].share_pct != 0 &&
                                wants_time(by_in[j], &in[j]) &&
                                (credit[j] >= 0 || (credit[j] > credit[i] &&
                                                    may_take_spare(&cc->p, by_in[j], &in[j])));
                open = spare = !contested;
            }
        }
        /* Debt run up on spare time is forgiven only where the time was nobody's: while the
         * shares of the containers that want this device's time sum below 100. Where they
         * reach 100 every moment is somebody's share, and forgiving would let measurement
         * lag pin contending credits at -burst, a tie that splits the device by kernel turns
         * (30/70 ran 42/58 with 50 ms kernels on the emulated GPU). */
        unsigned reserved = 0;
        for (size_t j = 0; spare && j < n; j++)
            if (in[j].device == in[i].device && (j == i || wants_time(by_in[j], &in[j])))
                reserved += in[j].share_pct;
        e->forgive = spare && reserved < 100;
        e->open = open;
        e->spare = spare;
        out[i] = (cg_compute_gate){.key = in[i].key, .open = open, .spare = spare,
                                   .credit_ns = credit[i], .util_permille = e->rate_permille};
    }
    /* Hard shares that add up to 100 among the containers wanting a device cannot all be
     * overdrawn: their credits sum to the device's idle time since they began (every moment is
     * somebody's share), so when every one of them reads closed the estimates are wrong, not
     * the containers, and a device idle with work waiting would be the controller's doing. The
     * one least in debt goes on. */
    for (size_t i = 0; i < n; i++) {
        if (in[i].share_pct == 0 || in[i].mode != CG_COMPUTE_HARD || out[i].open ||
            !wants_time(by_in[i], &in[i]))
            continue;
        unsigned wanting = 0;
        bool someone_open = false, best = true;
        for (size_t j = 0; j < n; j++) {
            if (in[j].device != in[i].device)
                continue;
            if (out[j].open) {
                someone_open = true; /* (containers without a share are always open) */
            } else if (in[j].mode == CG_COMPUTE_HARD && wants_time(by_in[j], &in[j])) {
                wanting += in[j].share_pct;
                if (credit[j] > credit[i] || (credit[j] == credit[i] && j < i))
                    best = false;
            }
        }
        if (!someone_open && wanting >= 100 && best)
            out[i].open = by_in[i]->open = true;
    }
    for (size_t i = 0; i < n; i++)
        cg_gate_log_set(&by_in[i]->log, now, by_in[i]->open);
    cc->last_now = now;
    cc->stepped = true;
    cc_free(&cc->p, old.e);
    cc_free(&cc->p, by_in);
    cc_free(&cc->p, credit);
    return CG_OK;
}

const char *cg_compute_check(const cg_compute *cc)
{
    if (!cc)
        return "no controller";
    for (size_t i = 0; i < cc->n; i++) {
        const entry *e = &cc->e[i];
        if (i && cc->e[i - 1].key >= e->key)
            return "entries not sorted by key, or a key twice";
        if (e->credit > (int64_t)cc->p.burst_ns || e->credit < -(int64_t)cc->p.debt_ns)
            return "credit outside [-debt, burst]";
        if (e->rate_permille > 1000)
            return "utilisation above 100%";
        if (e->spare && !e->open)
            return "a spare gate that is closed";
        if (e->forgive && !e->spare)
            return "debt forgiven on a gate that is not spare";
        if (!e->measured && (e->credit != 0 || e->rate_permille != 0))
            return "credit or rate without a measurement";
        if (e->open_rate > 1000)
            return "a rate while open above 100%";
        if (cg_gate_log_check(&e->log))
            return cg_gate_log_check(&e->log);
    }
    return NULL;
}

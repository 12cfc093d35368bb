/* compute_log.c — the gate's recent history (compute_log.h). */
#include "compute_log.h"

#include <string.h>

cg_gate_log cg_gate_log_init(bool open)
{
    cg_gate_log l;
    memset(&l, 0, sizeof l);
    l.open0 = open;
    return l;
}

static bool state_at(const cg_gate_log *l, unsigned k) /* the state from at[k] on */
{
    return (l->open_bits >> k) & 1u;
}

static bool last_state(const cg_gate_log *l)
{
    return l->n ? state_at(l, l->n - 1u) : l->open0;
}

static void drop_oldest(cg_gate_log *l)
{
    l->open0 = state_at(l, 0);
    memmove(l->at, l->at + 1, (size_t)(l->n - 1u) * sizeof l->at[0]);
    l->open_bits >>= 1;
    l->n--;
}

void cg_gate_log_set(cg_gate_log *l, cg_time now, bool open)
{
    if (last_state(l) == open)
        return;
    if (l->n && now <= l->at[l->n - 1u]) {
        /* Not later than the last change: that change is replaced by this state. */
        l->n--;
        l->open_bits &= ~(1u << l->n);
        if (last_state(l) == open)
            return;
        now = l->n && now <= l->at[l->n - 1u] ? l->at[l->n - 1u] + 1 : now;
    }
    if (l->n == CG_GATE_LOG)
        drop_oldest(l);
    l->at[l->n] = now;
    if (open)
        l->open_bits |= 1u << l->n;
    else
        l->open_bits &= ~(1u << l->n);
    l->n++;
}

cg_time cg_gate_log_open_ns(const cg_gate_log *l, cg_time a, cg_time b)
{
    if (b <= a)
        return 0;
    cg_time open = 0, from = a;
    bool state = l->open0;
    for (unsigned k = 0; k < l->n && l->at[k] < b; k++) {
        if (l->at[k] > from) {
            if (state)
                open += l->at[k] - from;
            from = l->at[k];
        }
        state = state_at(l, k);
    }
    if (state)
        open += b - from;
    return open;
}

void cg_gate_log_forget(cg_gate_log *l, cg_time t)
{
    while (l->n && l->at[0] <= t)
        drop_oldest(l);
}

const char *cg_gate_log_check(const cg_gate_log *l)
{
    if (!l)
        return "no log";
    if (l->n > CG_GATE_LOG)
        return "more entries than the log holds";
    if (l->n < 32 && (l->open_bits >> l->n) != 0)
        return "state bits beyond the entries";
    for (unsigned k = 0; k < l->n; k++) {
        if (k && l->at[k] <= l->at[k - 1])
            return "instants not increasing";
        if (state_at(l, k) == (k ? state_at(l, k - 1) : l->open0))
            return "an entry that changes nothing";
    }
    return NULL;
}

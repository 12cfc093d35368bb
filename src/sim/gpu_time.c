/* gpu_time.c — the time-shared GPU model of gpu_time.h, event by event. */
#include "gpu_time.h"

#include <stdio.h>
#include <string.h>

typedef struct {
    unsigned queued;           /* launched, not started */
    uint64_t left;             /* what is left of its started kernel (0: none started) */
    bool open;
    bool draining;             /* a synchronising loop waits for its step's kernels */
    unsigned step_left;        /* kernels of its step not launched yet */
    uint64_t ready_at;         /* its host launches again from here (turnaround) */
    uint64_t busy_total;       /* completed kernels' time */
    uint64_t sampled_busy[8], sampled_at[8]; /* the last samples, newest at [next - 1] */
    unsigned next;
} ct_state;

/* The newest sample of `c` visible at t (taken at least `delay` ago), as busy and instant. */
static void visible_sample(const ct_state *c, uint64_t t, uint64_t delay, uint64_t *busy,
                           uint64_t *at)
{
    *busy = *at = 0;
    for (unsigned k = 1; k <= 8; k++) {
        unsigned j = (c->next + 8 - k) % 8;
        if (c->sampled_at[j] && c->sampled_at[j] + delay <= t) {
            *busy = c->sampled_busy[j];
            *at = c->sampled_at[j];
            return;
        }
    }
}

static bool active(const cg_gt_container *c, uint64_t t)
{
    return t >= c->start_ns && (c->stop_ns == 0 || t < c->stop_ns);
}

static void add_busy(cg_gt_result *r, const cg_gt_config *cfg, unsigned i, uint64_t s, uint64_t e)
{
    while (s < e) {
        uint64_t w = s / cfg->window_ns;
        uint64_t wend = (w + 1) * cfg->window_ns;
        uint64_t upto = e < wend ? e : wend;
        if (w < CG_GT_MAX_WINDOWS)
            r->busy[w][i] += upto - s;
        s = upto;
    }
}

static void add_idle(cg_gt_result *r, const cg_gt_config *cfg, uint64_t s, uint64_t e)
{
    while (s < e) {
        uint64_t w = s / cfg->window_ns;
        uint64_t upto = e < (w + 1) * cfg->window_ns ? e : (w + 1) * cfg->window_ns;
        if (w < CG_GT_MAX_WINDOWS)
            r->idle[w] += upto - s;
        s = upto;
    }
}

static uint64_t min_u64(uint64_t a, uint64_t b) { return a < b ? a : b; }

/* How many more kernels a container may queue now: up to `depth` not started; with depth 0,
 * one, once its last one has ended (the interposer's bound for long launches: the next launch
 * waits for the running one; the model counts no wake-up between them). */
static unsigned room_for(const cg_gt_container *c, const ct_state *s)
{
    if (c->depth == 0)
        return s->queued == 0 && s->left == 0;
    return c->depth > s->queued ? c->depth - s->queued : 0;
}

int cg_gt_run(const cg_gt_config *cfg, cg_gt_result *out, char *err, size_t errlen)
{
    if (!cfg || !out || cfg->n == 0 || cfg->n > CG_GT_MAX || !cfg->window_ns || !cfg->sample_ns ||
        !cfg->step_ns || !cfg->duration_ns || cfg->duration_ns / cfg->window_ns > CG_GT_MAX_WINDOWS ||
        cfg->sample_delay_ns >= 7 * cfg->sample_ns) {
        snprintf(err, errlen, "invalid model configuration");
        return -1;
    }
    for (unsigned i = 0; i < cfg->n; i++) {
        if (cfg->c[i].kernel_ns == 0 || cfg->c[i].share_pct > 100) {
            snprintf(err, errlen, "container %u: kernel length must be > 0, share <= 100", i);
            return -1;
        }
    }
    cg_compute *cc = cg_compute_new(&cfg->params);
    if (!cc) {
        snprintf(err, errlen, "invalid controller parameters");
        return -1;
    }
    memset(out, 0, sizeof *out);
    out->nwindows = (unsigned)(cfg->duration_ns / cfg->window_ns);
    ct_state st[CG_GT_MAX];
    memset(st, 0, sizeof st);
    for (unsigned i = 0; i < cfg->n; i++)
        st[i].open = true;
    int running = -1;
    unsigned last_owner = cfg->n - 1;
    uint64_t run_start = 0, run_end = 0, turn_start = 0;
    uint64_t next_sample = cfg->sample_ns, next_step = cfg->step_ns;
    uint64_t t = 0;
    int rc = 0;
    uint64_t idle_from = 0;
    for (;;) {
        /* Launch: open gates fill their queues (a synchronising loop its whole step, once its
         * host is back); then the device takes the next kernel. */
        for (unsigned i = 0; i < cfg->n; i++) {
            const cg_gt_container *c = &cfg->c[i];
            if (!active(c, t) || !st[i].open || t < st[i].ready_at || st[i].draining)
                continue;
            if (c->sync_every) {
                /* A new step, or the rest of one: as much as the run-ahead bound lets ahead. */
                if (st[i].step_left == 0)
                    st[i].step_left = c->sync_every;
                unsigned room = room_for(c, &st[i]);
                unsigned n = room < st[i].step_left ? room : st[i].step_left;
                st[i].queued += n;
                st[i].step_left -= n;
                st[i].draining = st[i].step_left == 0;
            } else {
                st[i].queued += room_for(c, &st[i]);
            }
        }
        if (running < 0) {
            /* The holder goes on while its turn lasts, or while nobody else has work (a new
             * turn); else the next container with work, round robin, starts a turn. */
            int next = -1;
            bool others = false;
            for (unsigned k = 1; k < cfg->n; k++) {
                unsigned i = (last_owner + k) % cfg->n;
                if (st[i].queued || st[i].left) {
                    others = true;
                    if (next < 0)
                        next = (int)i;
                }
            }
            bool holder_has = st[last_owner].queued || st[last_owner].left;
            bool turn_lasts = cfg->slice_ns && t < turn_start + cfg->slice_ns;
            if (holder_has && (turn_lasts || !others)) {
                if (!turn_lasts)
                    turn_start = t;
                next = (int)last_owner;
            } else if (next >= 0) {
                turn_start = t;
            }
            if (next >= 0) {
                unsigned i = (unsigned)next;
                if (!st[i].left) {
                    st[i].queued--;
                    st[i].left = cfg->c[i].kernel_ns;
                }
                add_idle(out, cfg, idle_from, t);
                running = (int)i;
                last_owner = i;
                run_start = t;
                uint64_t piece = st[i].left;
                if (cfg->slice_ns && turn_start + cfg->slice_ns - t < piece)
                    piece = turn_start + cfg->slice_ns - t;
                run_end = t + piece;
            }
        }
        /* The next event. */
        uint64_t next = min_u64(cfg->duration_ns, min_u64(next_sample, next_step));
        if (running >= 0)
            next = min_u64(next, run_end);
        for (unsigned i = 0; i < cfg->n; i++) {
            if (cfg->c[i].start_ns > t)
                next = min_u64(next, cfg->c[i].start_ns);
            if (cfg->c[i].stop_ns > t)
                next = min_u64(next, cfg->c[i].stop_ns);
            if (st[i].ready_at > t)
                next = min_u64(next, st[i].ready_at);
        }
        t = next;
        if (running >= 0 && t == run_end) {
            add_busy(out, cfg, (unsigned)running, run_start, run_end);
            st[running].busy_total += run_end - run_start;
            st[running].left -= run_end - run_start;
            if (!st[running].left) { /* else its turn ended mid-kernel */
                out->kernels[running]++;
                if (st[running].draining && st[running].queued == 0) {
                    st[running].draining = false; /* its synchronisation returns */
                    st[running].ready_at = t + cfg->c[running].host_ns;
                }
            }
            running = -1;
            idle_from = t;
        }
        if (t >= cfg->duration_ns)
            break;
        if (t == next_sample) {
            for (unsigned i = 0; i < cfg->n; i++) {
                unsigned j = st[i].next;
                st[i].sampled_busy[j] = st[i].busy_total + ((int)i == running ? t - run_start : 0);
                st[i].sampled_at[j] = t;
                st[i].next = (j + 1) % 8;
            }
            next_sample += cfg->sample_ns;
        }
        if (t == next_step) {
            cg_compute_input in[CG_GT_MAX];
            cg_compute_gate gate[CG_GT_MAX];
            for (unsigned i = 0; i < cfg->n; i++) {
                uint64_t busy, at;
                visible_sample(&st[i], t, cfg->sample_delay_ns, &busy, &at);
                in[i] = (cg_compute_input){.key = i + 1, .device = 0,
                                           .share_pct = cfg->c[i].share_pct,
                                           .mode = cfg->c[i].mode,
                                           .busy_total_ns = busy,
                                           .measured_until = at,
                                           .waiting = active(&cfg->c[i], t) && !st[i].open &&
                                                      !st[i].draining};
            }
            cg_status s = cg_compute_step(cc, t, in, cfg->n, gate);
            if (s != CG_OK) {
                snprintf(err, errlen, "controller step failed: %s", cg_status_str(s));
                rc = -1;
                break;
            }
            for (unsigned i = 0; i < cfg->n; i++) {
                if (gate[i].open && !st[i].open && st[i].ready_at < t + cfg->c[i].host_ns)
                    st[i].ready_at = t + cfg->c[i].host_ns; /* the waiting thread wakes */
                st[i].open = gate[i].open;
            }
            next_step += cfg->step_ns;
        }
    }
    if (running >= 0 && rc == 0)
        add_busy(out, cfg, (unsigned)running, run_start, cfg->duration_ns);
    else if (rc == 0)
        add_idle(out, cfg, idle_from, cfg->duration_ns);
    cg_compute_free(cc);
    return rc;
}

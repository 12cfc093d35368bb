/* engine.c — one simulated run: containers arrive, run a program that allocates its memory (in
 * one step, the paper's sample program, or in several, each followed by part of its work), then
 * frees it and exits, and are removed; all through the real core. A suspended request's job goes
 * on when the core's RESUME for it arrives.
 *
 * Swap: the core orders containers out and in (SWAP_OUT, SWAP_IN); a move takes its bytes over
 * the swap bandwidth, then the engine reports it as the daemon does (cg_process_swap_out +
 * cg_swap_out_done, cg_swap_in_done). A job does no work while it is not all in.
 *
 * Interference: with ps:k, the containers running on one GPU share it as a processor-sharing
 * server that runs up to k of them at full speed: each progresses at min(1, k/m) with m
 * running. The next event is the earliest arrival, step completion or move completion; between
 * events all running jobs advance at their current rates (O(jobs) per event, fine here). */
#include <math.h>
#include <stdlib.h>

#include "sim.h"

enum { WAITING, SUSPENDED, RUNNING, DONE };
enum { IN, MOVING_OUT, OUT, MOVING_IN };

typedef struct {
    sim_job job;
    double remaining;            /* work left in the current step */
    unsigned step;               /* allocation steps granted so far */
    cg_bytes held;               /* bytes its allocations hold (context charge not included) */
    cg_cid cid;
    unsigned dev;
    int state;
    int where;                   /* IN..MOVING_IN */
    double move_done;            /* when the current move ends (INFINITY: none) */
    cg_bytes asked;              /* the step's request */
    bool granted;                /* asked was granted; its step starts after this event */
} slot;

typedef struct {
    slot *s;
    unsigned n;
    double bandwidth;
    unsigned swaps;
} run_ctx;

static cg_time ns(double t) { return (cg_time)llround(t * 1e9); }

/* Request ids: job i's step k is i * 64 + k + 1. */
#define REQ(i, k) ((cg_reqid)(i) * 64 + (k) + 1)

static slot *by_cid(run_ctx *r, cg_cid cid)
{
    for (unsigned i = 0; i < r->n; i++)
        if (r->s[i].cid == cid && r->s[i].state != WAITING && r->s[i].state != DONE)
            return &r->s[i];
    return NULL;
}

static void sink(void *ctx, const cg_event *ev)
{
    run_ctx *r = ctx;
    if (ev->kind == CG_EV_RESUME && ev->req >= 1) {
        unsigned i = (unsigned)((ev->req - 1) / 64);
        if (i < r->n) {
            r->s[i].state = RUNNING;
            r->s[i].granted = true;
        }
        return;
    }
    slot *j = ev->kind == CG_EV_SWAP_OUT || ev->kind == CG_EV_SWAP_IN ? by_cid(r, ev->cid) : NULL;
    if (!j)
        return;
    double now = (double)ev->now / 1e9;
    double took = r->bandwidth > 0 ? (double)j->held / r->bandwidth : 0;
    if (ev->kind == CG_EV_SWAP_OUT) {
        j->where = MOVING_OUT;
        r->swaps++;
    } else {
        j->where = MOVING_IN;
    }
    j->move_done = now + took;
}

static bool works(const slot *j) { return j->state == RUNNING && j->where == IN; }

/* Asks for job i's next step: all of it in one step, else equal chunks (the last takes what
 * rounding left). The grant may come now or with a later RESUME. */
static int ask(cg_core *core, const sim_params *p, slot *s, unsigned i, unsigned steps, double t)
{
    slot *j = &s[i];
    cg_bytes total = j->job.limit - p->context, chunk = total / steps;
    j->asked = j->step + 1 == steps ? total - j->held : chunk;
    j->state = SUSPENDED;
    cg_outcome o;
    if (cg_request(core, j->cid, i + 1, REQ(i, j->step), j->asked, ns(t), &o) != CG_OK ||
        o == CG_REJECTED)
        return -1;
    if (o == CG_GRANTED) {
        j->state = RUNNING;
        j->granted = true;
    }
    return 0;
}

int sim_run(const sim_params *p, sim_result *out)
{
    unsigned steps = p->steps > 1 ? p->steps : 1;
    slot *s = calloc(p->containers ? p->containers : 1, sizeof *s);
    sim_job *jobs = calloc(p->containers ? p->containers : 1, sizeof *jobs);
    unsigned *running = calloc(p->ngpus, sizeof *running);
    run_ctx rc = {s, p->containers, p->swap_bandwidth, 0};
    cg_config cfg = {.resume = p->policy, .placement = p->placement, .seed = p->seed,
                     .sink = sink, .sink_ctx = &rc, .swap_limit = p->swap_limit};
    cg_core *core = s && jobs && running ? cg_core_new(&cfg) : NULL;
    int rv = -1;
    if (!core)
        goto out;
    for (unsigned g = 0; g < p->ngpus; g++)
        if (cg_device_add(core, p->gpu_total, 0, p->context, NULL) != CG_OK)
            goto out;
    sim_make_jobs(p, jobs);
    for (unsigned i = 0; i < p->containers; i++)
        s[i] = (slot){.job = jobs[i], .cid = CG_CID_NONE, .state = WAITING, .where = IN,
                      .move_done = INFINITY};

    double t = 0, used_area = 0, susp_sum = 0, susp_max = 0, turn_sum = 0, urgent_sum = 0;
    unsigned urgent_n = 0;
    double capacity = (double)p->gpu_total * p->ngpus;
    unsigned next_arrival = 0, done = 0;
    while (done < p->containers) {
        for (unsigned g = 0; g < p->ngpus; g++)
            running[g] = 0;
        for (unsigned i = 0; i < next_arrival; i++)
            running[s[i].dev] += works(&s[i]);
        /* Earliest step completion at current rates, and earliest move completion. */
        double t_done = INFINITY, t_move = INFINITY;
        unsigned who = 0, mover = 0;
        for (unsigned i = 0; i < next_arrival; i++) {
            if (s[i].move_done < t_move) {
                t_move = s[i].move_done;
                mover = i;
            }
            if (!works(&s[i]))
                continue;
            unsigned m = running[s[i].dev];
            double rate = p->ps_k > 0 && m > p->ps_k ? p->ps_k / m : 1.0;
            double at = t + s[i].remaining / rate;
            if (at < t_done) {
                t_done = at;
                who = i;
            }
        }
        double t_arr = next_arrival < p->containers ? s[next_arrival].job.arrive : INFINITY;
        double t_next = fmin(fmin(t_done, t_arr), t_move);
        if (isinf(t_next))
            goto out;   /* nothing can ever happen again: a deadlock, which the core forbids */
        double dt = t_next - t;
        uint64_t used = 0;
        for (unsigned g = 0; g < p->ngpus; g++) {
            cg_device_info di;
            cg_device_get(core, g, &di);
            used += di.used;
        }
        used_area += (double)used * dt;
        for (unsigned i = 0; i < next_arrival; i++)
            if (works(&s[i])) {
                unsigned m = running[s[i].dev];
                double rate = p->ps_k > 0 && m > p->ps_k ? p->ps_k / m : 1.0;
                s[i].remaining = fmax(0.0, s[i].remaining - rate * dt);
            }
        t = t_next;
        if (t_move <= t_done && t_move <= t_arr) {
            slot *j = &s[mover];
            cg_pid pid = mover + 1;
            j->move_done = INFINITY;
            if (j->where == MOVING_OUT) {
                j->where = OUT;
                if ((j->held && cg_process_swap_out(core, j->cid, pid, j->held, ns(t)) != CG_OK) ||
                    cg_swap_out_done(core, j->cid, ns(t)) != CG_OK)
                    goto out;
            } else {
                j->where = IN;
                if (cg_swap_in_done(core, j->cid, ns(t)) != CG_OK)
                    goto out;
            }
        } else if (t_done <= t_arr) {
            slot *j = &s[who];
            cg_pid pid = who + 1;
            if (j->step < steps) {
                if (ask(core, p, s, who, steps, t) != 0)
                    goto out;
            } else {
                cg_container_info ci;
                cg_container_get(core, j->cid, ns(t), &ci);
                double susp = (double)ci.total_suspended / 1e9;
                susp_sum += susp;
                susp_max = fmax(susp_max, susp);
                turn_sum += t - j->job.arrive;
                if (j->job.priority) {
                    urgent_sum += t - j->job.arrive;
                    urgent_n++;
                }
                j->state = DONE;
                done++;
                if (cg_release(core, j->cid, pid, j->held, ns(t)) != CG_OK ||
                    cg_process_exit(core, j->cid, pid, ns(t)) != CG_OK ||
                    cg_container_remove(core, j->cid, ns(t)) != CG_OK)
                    goto out;
            }
        } else {
            slot *j = &s[next_arrival];
            unsigned i = next_arrival++;
            cg_container_info ci;
            cg_container_spec spec = {.device = -1, .limit = j->job.limit,
                                      .priority = j->job.priority};
            if (cg_container_create_spec(core, &spec, ns(t), &j->cid) != CG_OK ||
                cg_container_get(core, j->cid, ns(t), &ci) != CG_OK)
                goto out;
            j->dev = ci.device;
            if (ask(core, p, s, i, steps, t) != 0)
                goto out;
        }
        /* Grants of this event (at once or by RESUME): their steps start now. */
        for (unsigned i = 0; i < next_arrival; i++)
            if (s[i].granted) {
                s[i].granted = false;
                s[i].held += s[i].asked;
                s[i].step++;
                s[i].remaining = s[i].job.work / steps;
            }
    }
    out->finished = t;
    out->avg_suspended = p->containers ? susp_sum / p->containers : 0;
    out->max_suspended = susp_max;
    out->mem_util = t > 0 ? used_area / (capacity * t) : 0;
    out->avg_turnaround = p->containers ? turn_sum / p->containers : 0;
    out->urgent_turnaround = urgent_n ? urgent_sum / urgent_n : 0;
    out->swaps = rc.swaps;
    rv = 0;
out:
    cg_core_free(core);
    free(running);
    free(jobs);
    free(s);
    return rv;
}

/* engine.c — one simulated run: containers arrive, run a program that allocates its memory (in
 * one step, the paper's sample program, in several equal ones, each followed by part of its
 * work, or in an application's phases), then frees it and exits, and are removed; all through
 * the real core. A suspended request's job goes on when the core's RESUME for it arrives.
 *
 * Swap: the core orders containers out and in (SWAP_OUT, SWAP_IN); a move takes its bytes over
 * the swap bandwidth, then the engine reports it as the daemon does (cg_process_swap_out +
 * cg_swap_out_done, cg_swap_in_done). A job does no work while it is not all in. With
 * auto_pause the core may checkpoint a victim instead (cg_paused): its allocations and its
 * context move, at the checkpoint's speeds, and the process reports both.
 *
 * Tenants and fair share (seed 001's Section 4.2): a job's container carries its user as the
 * tenant; the run sets the core's fair-share mode, and under ADAPTIVE hands the core, every
 * fair_interval seconds, what the daemon's profile store would hold by then: per tenant, the
 * runs finished so far, their mean peak use and mean duration (creation to removal). Under
 * DEFAULT a container's limit is the whole GPU and its first request takes all of it.
 *
 * Interference: with ps:k, the containers running on one GPU share it as a processor-sharing
 * server that runs up to k of them at full speed: each progresses at min(1, k/m) with m
 * running. The next event is the earliest arrival, step completion, move completion or fair
 * update; between events all running jobs advance at their current rates (O(jobs) per event,
 * fine here). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

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
    bool paused;                 /* its current move is a checkpoint's (context included) */
    bool granted;                /* asked was granted; its step starts after this event */
} slot;

typedef struct {
    slot *s;
    unsigned n;
    double bandwidth;
    unsigned swaps;
    const cg_core *core;         /* read only, to tell a checkpoint from a swap */
    cg_bytes context;
    double ckpt_out, ckpt_in;    /* bytes per second */
    unsigned checkpoints;
    double moved;                /* bytes */
} run_ctx;

/* What the profile store would know of one tenant: its finished runs. */
typedef struct {
    uint32_t tenant;
    unsigned runs;
    double peak_sum, duration_sum;
} learned;

static const char *const share_names[SIM_SHARE__COUNT] = {"default", "none", "static",
                                                          "adaptive"};

const char *sim_share_name(sim_share s)
{
    return (unsigned)s < SIM_SHARE__COUNT ? share_names[s] : "unknown";
}

bool sim_share_parse(const char *name, sim_share *out)
{
    for (unsigned i = 0; name && i < SIM_SHARE__COUNT; i++)
        if (strcmp(name, share_names[i]) == 0) {
            *out = (sim_share)i;
            return true;
        }
    return false;
}

static cg_fair_mode fair_mode_of(sim_share s)
{
    return s == SIM_SHARE_STATIC ? CG_FAIR_STATIC : s == SIM_SHARE_ADAPTIVE ? CG_FAIR_ADAPTIVE
                                                                            : CG_FAIR_NONE;
}

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
    bool whole = r->core && cg_paused(r->core, ev->cid);
    if (whole) {
        double bytes = (double)(j->held + r->context);
        double bw = ev->kind == CG_EV_SWAP_OUT ? r->ckpt_out : r->ckpt_in;
        took = bw > 0 ? bytes / bw : 0;
    }
    j->paused = whole;
    r->moved += (double)j->held + (whole ? (double)r->context : 0);
    if (ev->kind == CG_EV_SWAP_OUT) {
        j->where = MOVING_OUT;
        r->swaps++;
        r->checkpoints += whole;
    } else {
        j->where = MOVING_IN;
    }
    j->move_done = now + took;
}

static bool works(const slot *j) { return j->state == RUNNING && j->where == IN; }

static unsigned nsteps(const sim_params *p, const slot *j)
{
    return j->job.nphases ? j->job.nphases : p->steps > 1 ? p->steps : 1;
}

/* Bytes the job's application holds (context charge not included) once step k is granted: its
 * phase's footprint, or equal chunks of its limit (the last takes what rounding left). */
static cg_bytes app_bytes(const sim_params *p, const slot *j, unsigned k)
{
    if (j->job.nphases)
        return j->job.phase[k].foot - p->context;
    unsigned steps = nsteps(p, j);
    cg_bytes total = j->job.limit - p->context;
    return k + 1 == steps ? total : total / steps * (k + 1);
}

static double step_work(const sim_params *p, const slot *j, unsigned k)
{
    return j->job.nphases ? j->job.phase[k].work : j->job.work / nsteps(p, j);
}

/* What the GPU shows of the job: its application's footprint once a step runs. */
static cg_bytes footprint(const sim_params *p, const slot *j)
{
    return j->step && j->state != DONE && j->where == IN ? app_bytes(p, j, j->step - 1) + p->context
                                                         : 0;
}

/* Asks for job i's next step: its growth, or under DEFAULT the whole GPU at the first step and
 * nothing after (the step is granted at once without the core). The grant may come now or with
 * a later RESUME. */
static int ask(cg_core *core, const sim_params *p, slot *s, unsigned i, double t)
{
    slot *j = &s[i];
    cg_bytes target = p->share == SIM_SHARE_DEFAULT ? p->gpu_total - p->context
                                                    : app_bytes(p, j, j->step);
    j->asked = target - j->held;
    j->state = SUSPENDED;
    if (j->asked == 0) {
        j->state = RUNNING;
        j->granted = true;
        return 0;
    }
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

/* Algorithm 1's periodic step: the profiles of the tenants with a finished run. */
static int fair_update(cg_core *core, const learned *l, size_t nl, cg_tenant_profile *buf,
                       double t, unsigned *updates)
{
    size_t n = 0;
    for (size_t k = 0; k < nl; k++)
        if (l[k].runs)
            buf[n++] = (cg_tenant_profile){l[k].tenant, l[k].runs, l[k].peak_sum / l[k].runs,
                                           l[k].duration_sum / l[k].runs};
    if (cg_fair_share_update(core, ns(t), buf, n) != CG_OK)
        return -1;
    *updates += n > 0;
    return 0;
}

/* The tenant's record in l[0..*nl), added when new. */
static learned *learned_of(learned *l, size_t *nl, uint32_t tenant)
{
    for (size_t k = 0; k < *nl; k++)
        if (l[k].tenant == tenant)
            return &l[k];
    l[*nl] = (learned){.tenant = tenant};
    return &l[(*nl)++];
}

int sim_run(const sim_params *p, sim_result *out)
{
    size_t cap = p->containers ? p->containers : 1;
    slot *s = calloc(cap, sizeof *s);
    sim_job *jobs = calloc(cap, sizeof *jobs);
    unsigned *running = calloc(p->ngpus, sizeof *running);
    learned *learn = calloc(cap, sizeof *learn);
    cg_tenant_profile *profs = calloc(cap, sizeof *profs);
    size_t nlearn = 0;
    double swap_bw = p->swap_bandwidth > 0 ? p->swap_bandwidth : 12e9;
    run_ctx rc = {s, p->containers, p->swap_bandwidth, 0, NULL, p->context,
                  p->checkpoint_out_bandwidth > 0 ? p->checkpoint_out_bandwidth
                                                  : swap_bw * SIM_CHECKPOINT_OUT_RATIO,
                  p->checkpoint_in_bandwidth > 0 ? p->checkpoint_in_bandwidth
                                                 : swap_bw * SIM_CHECKPOINT_IN_RATIO,
                  0, 0};
    cg_config cfg = {.resume = p->policy, .placement = p->placement, .seed = p->seed,
                     .sink = sink, .sink_ctx = &rc, .swap_limit = p->swap_limit,
                     .no_step_aside = !p->step_aside, .auto_pause = p->auto_pause};
    cg_core *core = s && jobs && running && learn && profs ? cg_core_new(&cfg) : NULL;
    rc.core = core;
    int rv = -1;
    *out = (sim_result){0};
    if (!core)
        goto out;
    for (unsigned g = 0; g < p->ngpus; g++)
        if (cg_device_add(core, p->gpu_total, 0, p->context, NULL) != CG_OK)
            goto out;
    if (cg_set_fair_share(core, fair_mode_of(p->share), 0) != CG_OK)
        goto out;
    sim_make_jobs(p, jobs);
    for (unsigned i = 0; i < p->containers; i++)
        s[i] = (slot){.job = jobs[i], .cid = CG_CID_NONE, .state = WAITING, .where = IN,
                      .move_done = INFINITY};

    double t = 0, used_area = 0, foot_area = 0, susp_sum = 0, susp_max = 0, turn_sum = 0,
           urgent_sum = 0;
    unsigned urgent_n = 0;
    double capacity = (double)p->gpu_total * p->ngpus;
    bool adaptive = p->share == SIM_SHARE_ADAPTIVE && p->fair_interval > 0;
    double t_fair = adaptive ? p->fair_interval : INFINITY;
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
        bool update = t_fair < t_next;
        t_next = fmin(t_next, t_fair);
        double dt = t_next - t;
        uint64_t used = 0, foot = 0;
        for (unsigned g = 0; g < p->ngpus; g++) {
            cg_device_info di;
            cg_device_get(core, g, &di);
            used += di.used;
        }
        for (unsigned i = 0; i < next_arrival; i++)
            foot += footprint(p, &s[i]);
        used_area += (double)used * dt;
        foot_area += (double)foot * dt;
        for (unsigned i = 0; i < next_arrival; i++)
            if (works(&s[i])) {
                unsigned m = running[s[i].dev];
                double rate = p->ps_k > 0 && m > p->ps_k ? p->ps_k / m : 1.0;
                s[i].remaining = fmax(0.0, s[i].remaining - rate * dt);
            }
        t = t_next;
        if (update) {
            if (fair_update(core, learn, nlearn, profs, t, &out->fair_updates) != 0)
                goto out;
            t_fair += p->fair_interval;
        } else if (t_move <= t_done && t_move <= t_arr) {
            slot *j = &s[mover];
            cg_pid pid = mover + 1;
            j->move_done = INFINITY;
            if (j->where == MOVING_OUT) {
                j->where = OUT;
                cg_bytes moved = j->held + (j->paused ? p->context : 0);
                if ((moved && cg_process_swap_out(core, j->cid, pid, moved, ns(t)) != CG_OK) ||
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
            if (j->step < nsteps(p, j)) {
                if (ask(core, p, s, who, t) != 0)
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
                /* The daemon's profile run: peak use, creation to removal. */
                learned *l = learned_of(learn, &nlearn, j->job.tenant);
                l->runs++;
                l->peak_sum += (double)(j->held + p->context);
                l->duration_sum += t - j->job.arrive;
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
            cg_container_spec spec = {.device = -1, .priority = j->job.priority,
                                      .tenant = j->job.tenant,
                                      .limit = p->share == SIM_SHARE_DEFAULT ? p->gpu_total
                                                                             : j->job.limit};
            if (cg_container_create_spec(core, &spec, ns(t), &j->cid) != CG_OK ||
                cg_container_get(core, j->cid, ns(t), &ci) != CG_OK)
                goto out;
            j->dev = ci.device;
            if (ask(core, p, s, i, t) != 0)
                goto out;
        }
        /* Grants of this event (at once or by RESUME): their steps start now. */
        for (unsigned i = 0; i < next_arrival; i++)
            if (s[i].granted) {
                s[i].granted = false;
                s[i].held += s[i].asked;
                s[i].remaining = step_work(p, &s[i], s[i].step);
                s[i].step++;
            }
        if (p->check && (out->violation = cg_core_check(core)) != NULL)
            goto out;
    }
    out->finished = t;
    out->avg_suspended = p->containers ? susp_sum / p->containers : 0;
    out->max_suspended = susp_max;
    out->mem_util = t > 0 ? used_area / (capacity * t) : 0;
    out->mem_footprint = t > 0 ? foot_area / (capacity * t) : 0;
    out->avg_turnaround = p->containers ? turn_sum / p->containers : 0;
    out->urgent_turnaround = urgent_n ? urgent_sum / urgent_n : 0;
    out->swaps = rc.swaps;
    out->checkpoints = rc.checkpoints;
    out->moved_gib = rc.moved / (double)SIM_GIB;
    rv = 0;
out:
    cg_core_free(core);
    free(profs);
    free(learn);
    free(running);
    free(jobs);
    free(s);
    return rv;
}

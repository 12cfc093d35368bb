/* engine.c — one simulated run: containers arrive, run the paper's sample program (one
 * allocation of limit - context charge, GPU work, free, exit) and are removed, all through the
 * real core. Suspended requests start when the core's RESUME event for them arrives.
 *
 * Interference: with ps:k, the containers running on one GPU share it as a processor-sharing
 * server that runs up to k of them at full speed: each progresses at min(1, k/m) with m
 * running. The next event is the earliest arrival or completion; between events all running
 * jobs advance at their current rates (O(running) per event, fine for these sizes). */
#include <math.h>
#include <stdlib.h>

#include "sim.h"

enum { WAITING, SUSPENDED, RUNNING, DONE };

typedef struct {
    sim_job job;
    double remaining;
    cg_cid cid;
    unsigned dev;
    int state;
} slot;

typedef struct {
    slot *s;
    unsigned n;
} run_ctx;

static cg_time ns(double t) { return (cg_time)llround(t * 1e9); }

static void sink(void *ctx, const cg_event *ev)
{
    run_ctx *r = ctx;
    /* Request ids are job index + 1; a RESUME starts that job's GPU work. */
    if (ev->kind == CG_EV_RESUME && ev->req >= 1 && ev->req <= r->n)
        r->s[ev->req - 1].state = RUNNING;
}

int sim_run(const sim_params *p, sim_result *out)
{
    slot *s = calloc(p->containers ? p->containers : 1, sizeof *s);
    sim_job *jobs = calloc(p->containers ? p->containers : 1, sizeof *jobs);
    unsigned *running = calloc(p->ngpus, sizeof *running);
    run_ctx rc = {s, p->containers};
    cg_config cfg = {.resume = p->policy, .placement = p->placement, .seed = p->seed,
                     .sink = sink, .sink_ctx = &rc};
    cg_core *core = s && jobs && running ? cg_core_new(&cfg) : NULL;
    int rv = -1;
    if (!core)
        goto out;
    for (unsigned g = 0; g < p->ngpus; g++)
        if (cg_device_add(core, p->gpu_total, 0, p->context, NULL) != CG_OK)
            goto out;
    sim_make_jobs(p, jobs);
    for (unsigned i = 0; i < p->containers; i++)
        s[i] = (slot){jobs[i], jobs[i].work, CG_CID_NONE, 0, WAITING};

    double t = 0, used_area = 0, susp_sum = 0, susp_max = 0;
    double capacity = (double)p->gpu_total * p->ngpus;
    unsigned next_arrival = 0, done = 0;
    while (done < p->containers) {
        for (unsigned g = 0; g < p->ngpus; g++)
            running[g] = 0;
        for (unsigned i = 0; i < next_arrival; i++)
            running[s[i].dev] += s[i].state == RUNNING;
        /* Earliest completion at current rates. */
        double t_done = INFINITY;
        unsigned who = 0;
        for (unsigned i = 0; i < next_arrival; i++) {
            if (s[i].state != RUNNING)
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
        double t_next = t_done <= t_arr ? t_done : t_arr;
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
            if (s[i].state == RUNNING) {
                unsigned m = running[s[i].dev];
                double rate = p->ps_k > 0 && m > p->ps_k ? p->ps_k / m : 1.0;
                s[i].remaining = fmax(0.0, s[i].remaining - rate * dt);
            }
        t = t_next;
        if (t_done <= t_arr) {
            slot *j = &s[who];
            cg_container_info ci;
            cg_container_get(core, j->cid, ns(t), &ci);
            double susp = (double)ci.total_suspended / 1e9;
            susp_sum += susp;
            susp_max = fmax(susp_max, susp);
            j->state = DONE;
            done++;
            cg_pid pid = who + 1;
            if (cg_release(core, j->cid, pid, j->job.limit - p->context, ns(t)) != CG_OK ||
                cg_process_exit(core, j->cid, pid, ns(t)) != CG_OK ||
                cg_container_remove(core, j->cid, ns(t)) != CG_OK)
                goto out;
        } else {
            slot *j = &s[next_arrival];
            unsigned i = next_arrival++;
            cg_container_info ci;
            cg_outcome o;
            if (cg_container_create(core, -1, j->job.limit, ns(t), &j->cid) != CG_OK ||
                cg_container_get(core, j->cid, ns(t), &ci) != CG_OK)
                goto out;
            j->dev = ci.device;
            j->state = SUSPENDED;   /* the sink flips it to RUNNING on a grant via RESUME */
            if (cg_request(core, j->cid, i + 1, i + 1, j->job.limit - p->context, ns(t), &o) !=
                    CG_OK ||
                o == CG_REJECTED)
                goto out;
            if (o == CG_GRANTED)
                j->state = RUNNING;
        }
    }
    out->finished = t;
    out->avg_suspended = p->containers ? susp_sum / p->containers : 0;
    out->max_suspended = susp_max;
    out->mem_util = t > 0 ? used_area / (capacity * t) : 0;
    rv = 0;
out:
    cg_core_free(core);
    free(running);
    free(jobs);
    free(s);
    return rv;
}

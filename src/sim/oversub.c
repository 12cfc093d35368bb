/* oversub.c — issue 37's cluster-scale evidence: what a memory sharing factor F buys and costs
 * when every node runs the real scheduling core (`convgpu sim --experiment oversub`).
 *
 * One job, start to end: it arrives in a Poisson stream and queues at the cluster scheduler
 * (Kubernetes' or Slurm's part), which sees each GPU's promised memory, capacity x F, and places
 * the job, in queue order, on the first GPU whose promise not yet handed out holds the job's
 * requested limit (every queued job that fits is placed, as kube-scheduler retries pending
 * pods). The job's node, one cg_core per node with G devices (convgpud's part), creates its
 * container on that GPU with the requested limit. The job then asks for its first phase's
 * footprint, does that phase's work, asks for the growth to its peak, does the rest, frees
 * everything and ends; the container is removed. A request the core suspends waits; swap is on
 * (a host budget per node), and the core orders moves, which take bytes / bandwidth. A job that
 * runs beside others on its GPU runs at 1/slowdown (seed 002's sharing-factor model; 1: none).
 *
 * The requested limit is not the peak: the distributions (docs/SCHEDULING.md, "Oversubscription
 * at cluster scale") come from seed 001's application profiles (workload.c) with users padding
 * their request, and from a heavy-tailed variant. Out-of-memory kills count what would kill a job:
 * a request refused over its limit, or a device whose use exceeds its capacity; both must stay 0.
 * Adaptive F is the core's own rule (cg_oversub_adaptive) over the runs finished so far. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "oversub.h"
#include "pressure.h"

enum { QUEUED, ASKED, RUNNING, DONE };
enum { IN, MOVING_OUT, OUT, MOVING_IN };

typedef struct {
    double arrive, start, end;
    cg_bytes limit, foot[2];
    double work[2];
    unsigned phase;              /* phases granted so far */
    cg_bytes held, asked;
    double remaining;
    unsigned node, gpu;          /* gpu: index on its node */
    cg_cid cid;
    int state, where;
    double move_done;
    bool granted;
    double suspended;            /* the core's total_suspended at the end */
} job;

typedef struct {
    job *j;
    unsigned node;
    struct ov_run *run;
} node_ctx;

typedef struct ov_run {
    const sim_ov_params *p;
    job *jobs;
    unsigned *active, nactive;
    double bandwidth;
    sim_ov_result *out;
    unsigned *lender_req;        /* per job: the request a step aside was for (+1), 0: none */
} ov_run;

/* splitmix64 */
static uint64_t rnd(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
static double u01(uint64_t *s) { return ((double)(rnd(s) >> 11) + 0.5) * 0x1.0p-53; }

static const char *const dist_names[SIM_OV_DIST__COUNT] = {"profiles", "heavy"};
const char *sim_ov_dist_name(sim_ov_dist d)
{
    return (unsigned)d < SIM_OV_DIST__COUNT ? dist_names[d] : "?";
}
bool sim_ov_dist_parse(const char *s, sim_ov_dist *out)
{
    for (unsigned i = 0; s && i < SIM_OV_DIST__COUNT; i++)
        if (strcmp(s, dist_names[i]) == 0) {
            *out = (sim_ov_dist)i;
            return true;
        }
    return false;
}

static cg_bytes mib(double m) { return (cg_bytes)ceil(m) * SIM_MIB; }

/* Seed 001's profiles (workload.c): LAMMPS 1741 MiB for 1180 s then 8499 MiB for 15 s; GROMACS
 * 539 MiB, 715 s; QMCPACK 5389 MiB, 190 s; CNN-MNIST 2207 MiB, 222 s, whose users ask for the
 * 8518 MiB TensorFlow takes unlimited. Others pad their peak by a factor uniform in [1, 2]. Run
 * times vary +-20%. */
static void profile_job(const sim_ov_params *p, uint64_t *s, job *j)
{
    static const double foot1[4] = {1741, 539, 5389, 2207}, peak[4] = {8499, 539, 5389, 2207},
                        w1[4] = {1180, 715, 190, 222}, w2[4] = {15, 0, 0, 0};
    unsigned a = (unsigned)(rnd(s) % 4);
    double scale = 0.8 + 0.4 * u01(s);
    j->foot[0] = mib(foot1[a]);
    j->foot[1] = mib(peak[a]);
    j->work[0] = w1[a] * scale;
    j->work[1] = w2[a] * scale;
    double pad = a == 3 ? 8518.0 / 2207.0 : 1 + u01(s);
    cg_bytes lim = mib(peak[a] * pad);
    j->limit = lim < p->gpu_total ? lim : p->gpu_total;
}

/* Heavy tails: peak 256 MiB x Pareto(1.2), capped at the GPU; the request the peak x 1/U, U
 * uniform in [0.25, 1] (most pad a little, some 4x), capped at the GPU; run time 60 s x
 * Pareto(1.5), capped at 6 h; 70% of it at 30% of the peak, then the peak. */
static void heavy_job(const sim_ov_params *p, uint64_t *s, job *j)
{
    double cap = (double)(p->gpu_total / SIM_MIB);
    double peak = fmin(cap, 256 * pow(u01(s), -1 / 1.2));
    double pad = 1 / (0.25 + 0.75 * u01(s));
    double t = fmin(6 * 3600, 60 * pow(u01(s), -1 / 1.5));
    j->foot[1] = mib(peak);
    j->foot[0] = mib(peak * 0.3);
    j->work[0] = 0.7 * t;
    j->work[1] = 0.3 * t;
    cg_bytes lim = mib(peak * pad);
    j->limit = lim < p->gpu_total ? lim : p->gpu_total;
    if (j->limit < j->foot[1])
        j->limit = j->foot[1];
}

/* The jobs, arrivals scaled so the stream offers `load` x the cluster's memory-time at F = 1
 * (requested limit x run time): a queue forms at F = 1, so a factor can show what it buys. */
static void make_jobs(const sim_ov_params *p, job *js)
{
    uint64_t s = p->seed * 0x9e3779b97f4a7c15ull + p->jobs;
    double demand = 0, t = 0;
    for (unsigned i = 0; i < p->jobs; i++) {
        job *j = &js[i];
        *j = (job){.cid = CG_CID_NONE, .state = QUEUED, .where = IN, .move_done = INFINITY};
        if (p->dist == SIM_OV_HEAVY)
            heavy_job(p, &s, j);
        else
            profile_job(p, &s, j);
        demand += (double)j->limit * (j->work[0] + j->work[1]);
        t += -log(u01(&s));
        j->arrive = t;
    }
    double gpus = (double)p->nodes * p->gpus_per_node;
    /* Mean gap so that demand / (capacity x span) = load. */
    double span = demand / ((double)p->gpu_total * gpus * p->load);
    for (unsigned i = 0; i < p->jobs; i++)
        js[i].arrive *= span / t;
}

#define REQ(i, k) ((cg_reqid)(i) * 4 + (k) + 1)

static void sink(void *ctx, const cg_event *ev)
{
    node_ctx *nc = ctx;
    ov_run *r = nc->run;
    if (ev->kind == CG_EV_RESUME && ev->req >= 1) {
        unsigned i = (unsigned)((ev->req - 1) / 4);
        r->jobs[i].state = RUNNING;
        r->jobs[i].granted = true;
        /* A job that a lender stepped aside for runs while the lender waits. */
        for (unsigned k = 0; k < r->nactive; k++) {
            job *l = &r->jobs[r->active[k]];
            if (l->node == nc->node && r->lender_req[r->active[k]] == ev->req &&
                l->where != IN && l->where != MOVING_IN) {
                r->out->backfills++;
                r->lender_req[r->active[k]] = 0;
            }
        }
        return;
    }
    if (ev->kind == CG_EV_REJECT && ev->reason == CG_WHY_OVER_LIMIT) {
        r->out->oom_kills++;
        return;
    }
    if (ev->kind != CG_EV_SWAP_OUT && ev->kind != CG_EV_SWAP_IN)
        return;
    for (unsigned k = 0; k < r->nactive; k++) {
        unsigned i = r->active[k];
        job *j = &r->jobs[i];
        if (j->node != nc->node || j->cid != ev->cid)
            continue;
        double now = (double)ev->now / 1e9;
        if (ev->kind == CG_EV_SWAP_OUT) {
            j->where = MOVING_OUT;
            r->out->bytes_swapped += (double)j->held;
            r->out->swap_outs++;
            if (ev->reason == CG_WHY_STEP_ASIDE) {
                r->out->step_asides++;
                r->lender_req[i] = (unsigned)ev->req;
            }
        } else {
            j->where = MOVING_IN;
        }
        j->move_done = now + (double)j->held / r->bandwidth;
        return;
    }
}

static cg_time ns(double t) { return (cg_time)llround(t * 1e9); }

/* The GPU (flat index) for a job of `limit`: the first whose promise left holds it, or, with
 * pressure_place, the one of those with the least pressure penalty (ties: the first). ngpus
 * when none holds it. */
static unsigned pick_gpu(const sim_ov_params *p, cg_core **cores, const cg_bytes *promised_left,
                         unsigned ngpus, cg_bytes limit)
{
    unsigned best = ngpus;
    uint32_t best_pen = 0;
    for (unsigned g = 0; g < ngpus; g++) {
        if (promised_left[g] < limit)
            continue;
        if (!p->pressure_place)
            return g;
        cg_core *core = cores[g / p->gpus_per_node];
        cg_device_info di = {0};
        cg_device_get(core, g % p->gpus_per_node, &di);
        cg_bytes host = cg_swap_host_bytes(core);
        cg_gpu_pressure pr = {
            .known = true, .capacity_bytes = di.capacity, .free_bytes = di.free,
            .waiting = di.nsuspended,
            .swap_left_bytes = p->swap_limit > host ? p->swap_limit - host : 0,
            .slowdown_milli = di.ncontainers ? (uint32_t)llround(p->slowdown * 1000) : 1000};
        cg_pressure_need need = {.bytes = limit};
        uint32_t pen = cg_pressure_penalty(&pr, &need, NULL);
        if (best == ngpus || pen < best_pen) {
            best = g;
            best_pen = pen;
        }
    }
    return best;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Asks for the job's next phase: its growth to that phase's footprint. */
static int ask(cg_core *core, job *j, unsigned i, double t)
{
    j->asked = j->foot[j->phase] > j->held ? j->foot[j->phase] - j->held : 0;
    j->state = ASKED;
    if (j->asked == 0) {
        j->state = RUNNING;
        j->granted = true;
        return 0;
    }
    cg_outcome o;
    if (cg_request(core, j->cid, i + 1, REQ(i, j->phase), j->asked, ns(t), &o) != CG_OK)
        return -1;
    if (o == CG_GRANTED) {
        j->state = RUNNING;
        j->granted = true;
    }
    return 0;
}

int sim_ov_run(const sim_ov_params *p, sim_ov_result *out)
{
    *out = (sim_ov_result){0};
    unsigned ngpus = p->nodes * p->gpus_per_node;
    job *js = calloc(p->jobs ? p->jobs : 1, sizeof *js);
    unsigned *active = calloc(p->jobs ? p->jobs : 1, sizeof *active);
    unsigned *lreq = calloc(p->jobs ? p->jobs : 1, sizeof *lreq);
    cg_bytes *promised_left = calloc(ngpus, sizeof *promised_left);
    unsigned *working = calloc(ngpus, sizeof *working);
    unsigned *resident = calloc(ngpus, sizeof *resident);
    cg_core **cores = calloc(p->nodes, sizeof *cores);
    node_ctx *ncs = calloc(p->nodes, sizeof *ncs);
    cg_oversub_run *runs = calloc(p->jobs ? p->jobs : 1, sizeof *runs);
    double *jct = calloc(p->jobs ? p->jobs : 1, sizeof *jct);
    ov_run r = {p, js, active, 0, p->swap_bandwidth, out, lreq};
    int rv = -1;
    if (!js || !active || !lreq || !promised_left || !working || !resident || !cores || !ncs ||
        !runs || !jct || p->gpus_per_node > CG_MAX_DEVICES)
        goto done;
    for (unsigned n = 0; n < p->nodes; n++) {
        ncs[n] = (node_ctx){js, n, &r};
        cg_config cfg = {.resume = p->policy, .placement = CG_PLACE_FIRST_FIT, .seed = p->seed,
                         .sink = sink, .sink_ctx = &ncs[n], .swap_limit = p->swap_limit,
                         .no_step_aside = !p->step_aside};
        if (!(cores[n] = cg_core_new(&cfg)))
            goto done;
        for (unsigned g = 0; g < p->gpus_per_node; g++)
            if (cg_device_add(cores[n], p->gpu_total, 0, 0, NULL) != CG_OK)
                goto done;
    }
    make_jobs(p, js);
    double factor = p->adaptive ? cg_oversub_defaults.min_factor : p->factor;
    for (unsigned g = 0; g < ngpus; g++)
        promised_left[g] = cg_oversub_promised(p->gpu_total, factor);
    double factor_sum = 0;
    unsigned nruns = 0, next = 0, head = 0, done_n = 0;
    double t = 0, used_area = 0, conc_area = 0, cap_all = (double)p->gpu_total * ngpus;
    while (done_n < p->jobs) {
        /* The cluster scheduler: queued jobs in order, each on the first GPU whose promise
         * left holds its limit. A job never goes on a GPU whose capacity cannot hold it. */
        cg_bytes best_left = 0;
        for (unsigned g = 0; g < ngpus; g++)
            best_left = promised_left[g] > best_left ? promised_left[g] : best_left;
        for (unsigned i = head; i < next; i++) {
            job *j = &js[i];
            if (j->state != QUEUED || j->limit > best_left)
                continue;
            unsigned g = pick_gpu(p, cores, promised_left, ngpus, j->limit);
            if (g == ngpus)
                continue;
            promised_left[g] -= j->limit;
            j->node = g / p->gpus_per_node;
            j->gpu = g % p->gpus_per_node;
            j->start = t;
            cg_container_spec spec = {.device = (int)j->gpu, .limit = j->limit};
            if (cg_container_create_spec(cores[j->node], &spec, ns(t), &j->cid) != CG_OK)
                goto done;
            active[r.nactive++] = i;
            if (ask(cores[j->node], j, i, t) != 0)
                goto done;
            best_left = 0;
            for (unsigned h = 0; h < ngpus; h++)
                best_left = promised_left[h] > best_left ? promised_left[h] : best_left;
        }
        while (head < next && js[head].state != QUEUED)
            head++;
        for (unsigned k = 0; k < r.nactive; k++)
            if (js[active[k]].granted) {
                job *j = &js[active[k]];
                j->granted = false;
                j->held += j->asked;
                j->remaining = j->work[j->phase];
                j->phase++;
            }
        if (r.nactive > out->max_concurrent)
            out->max_concurrent = r.nactive;
        /* Next event: an arrival, a phase's end, a move's end. */
        memset(working, 0, ngpus * sizeof *working);
        memset(resident, 0, ngpus * sizeof *resident);
        cg_bytes used = 0;
        for (unsigned k = 0; k < r.nactive; k++) {
            job *j = &js[active[k]];
            unsigned g = j->node * p->gpus_per_node + j->gpu;
            working[g] += j->state == RUNNING && j->where == IN;
            if (j->where == IN || j->where == MOVING_OUT)
                used += j->held;
        }
        double t_next = next < p->jobs ? js[next].arrive : INFINITY;
        int kind = 0;
        unsigned who = 0;
        for (unsigned k = 0; k < r.nactive; k++) {
            job *j = &js[active[k]];
            if (j->move_done < t_next) {
                t_next = j->move_done;
                kind = 1;
                who = k;
            }
            if (j->state != RUNNING || j->where != IN)
                continue;
            unsigned g = j->node * p->gpus_per_node + j->gpu;
            double rate = working[g] > 1 ? 1 / p->slowdown : 1;
            double at = t + j->remaining / rate;
            if (at < t_next) {
                t_next = at;
                kind = 2;
                who = k;
            }
        }
        if (isinf(t_next))
            goto done;   /* nothing can happen any more: a deadlock, which the core forbids */
        double dt = t_next - t;
        used_area += (double)used * dt;
        conc_area += (double)r.nactive * dt;
        for (unsigned k = 0; k < r.nactive; k++) {
            job *j = &js[active[k]];
            if (j->state == RUNNING && j->where == IN) {
                unsigned g = j->node * p->gpus_per_node + j->gpu;
                j->remaining = fmax(0, j->remaining - dt * (working[g] > 1 ? 1 / p->slowdown : 1));
            }
        }
        t = t_next;
        if (kind == 0) {
            next++;
            continue;
        }
        unsigned i = active[who];
        job *j = &js[i];
        cg_core *core = cores[j->node];
        if (kind == 1) {
            j->move_done = INFINITY;
            if (j->where == MOVING_OUT) {
                j->where = OUT;
                if ((j->held && cg_process_swap_out(core, j->cid, i + 1, j->held, ns(t)) != CG_OK) ||
                    cg_swap_out_done(core, j->cid, ns(t)) != CG_OK)
                    goto done;
            } else {
                j->where = IN;
                if (cg_swap_in_done(core, j->cid, ns(t)) != CG_OK)
                    goto done;
            }
        } else if (j->phase < 2) {
            if (ask(core, j, i, t) != 0)
                goto done;
        } else {
            cg_container_info ci;
            cg_container_get(core, j->cid, ns(t), &ci);
            j->suspended = (double)ci.total_suspended / 1e9;
            j->end = t;
            j->state = DONE;
            jct[done_n++] = t - j->arrive;
            out->mean_suspended += j->suspended;
            runs[nruns++] = (cg_oversub_run){.peak = j->foot[1], .limit = j->limit};
            active[who] = active[--r.nactive];
            promised_left[j->node * p->gpus_per_node + j->gpu] += j->limit;
            if ((j->held && cg_release(core, j->cid, i + 1, j->held, ns(t)) != CG_OK) ||
                cg_process_exit(core, j->cid, i + 1, ns(t)) != CG_OK ||
                cg_container_remove(core, j->cid, ns(t)) != CG_OK)
                goto done;
            if (p->adaptive) {
                /* The daemon recomputes F when a run ends; the promise moves by the change. */
                double f = cg_oversub_adaptive(runs, nruns, p->gpu_total,
                                               p->swap_limit / p->gpus_per_node,
                                               &cg_oversub_defaults);
                cg_bytes was = cg_oversub_promised(p->gpu_total, factor),
                         now_p = cg_oversub_promised(p->gpu_total, f);
                for (unsigned g = 0; g < ngpus; g++)
                    promised_left[g] = promised_left[g] + now_p >= was
                                           ? promised_left[g] + now_p - was : 0;
                factor = f;
            }
            factor_sum += factor;
        }
        for (unsigned n = 0; n < p->nodes && p->check; n++)
            if ((out->violation = cg_core_check(cores[n])) != NULL)
                goto done;
        for (unsigned n = 0; n < p->nodes; n++)
            for (unsigned g = 0; g < p->gpus_per_node; g++) {
                cg_device_info di;
                cg_device_get(cores[n], g, &di);
                out->oom_kills += di.used > di.capacity;
            }
    }
    out->makespan = t;
    out->jobs_per_hour = t > 0 ? 3600.0 * p->jobs / t : 0;
    qsort(jct, p->jobs, sizeof *jct, cmp_double);
    double sum = 0;
    for (unsigned k = 0; k < p->jobs; k++)
        sum += jct[k];
    out->mean_jct = p->jobs ? sum / p->jobs : 0;
    out->p95_jct = p->jobs ? jct[(size_t)ceil(0.95 * p->jobs) - 1] : 0;
    out->mean_suspended = p->jobs ? out->mean_suspended / p->jobs : 0;
    out->mem_util = t > 0 ? used_area / (cap_all * t) : 0;
    out->mean_concurrent = t > 0 ? conc_area / t : 0;
    out->factor = p->adaptive ? (p->jobs ? factor_sum / p->jobs : 0) : p->factor;
    rv = 0;
done:
    for (unsigned n = 0; cores && n < p->nodes; n++)
        cg_core_free(cores[n]);
    free(jct);
    free(runs);
    free(ncs);
    free(cores);
    free(resident);
    free(working);
    free(promised_left);
    free(lreq);
    free(active);
    free(js);
    return rv;
}

/* partition.c — seed 002's production projection (GSaaS Section V, Table 3 and Figure 13) on
 * our core: four 8 GB GPUs cut into equal partitions (cGPUs), a Lublin-Feitelson-like workload
 * of jobs asking for k single-GPU nodes each, first come first served without backfilling.
 *
 * The workload (deterministic in (jobs, seed), the same under every configuration), after
 * Lublin and Feitelson's model as GSaaS restricts it (at most 4 nodes, at most 1 GB each):
 *   - size: serial (k = 1) with probability 0.244; otherwise log2(k) uniform in [0.8, 2], rounded
 *     to a power of two with probability 0.75, else k = round(2^x): k in 1..4;
 *   - run time: log-normal, a short class (median e^3.65 = 38 s) and a long one (median e^6.65
 *     = 773 s, sigma 1 both), the long one likelier for wider jobs (0.3 + 0.1 (k - 1)), as the
 *     model's size-dependent hyper-gamma mixes its two; clamped to [10 s, 36 h]. The medians
 *     are set so that 400 jobs take about the paper's 53 h on 4x8 GB (the paper does not
 *     publish its workload: only the shape across partitionings is comparable);
 *   - arrivals: Poisson, one every 10 s on average, so a backlog forms at once as in the
 *     paper's run (its times halve as the cGPUs double: the pool, not the arrivals, bounds
 *     them);
 *   - memory per node: uniform in [128 MiB, 1 GiB].
 *
 * Gang start: the queue's head job of k nodes starts when k partitions are free (on any GPUs,
 * two of a job's nodes may share one); then its k containers are created together, each with
 * the partition's size as its limit and placed by the core, and each asks for its memory,
 * granted at once. Until then nothing behind it starts (no backfilling). This is the simulator's
 * own gang rule (seed 002's GSaaS simulator's); the daemon's multi-GPU containers are separate.
 *
 * Sharing factor: a node progresses at 1 while it is the only container running on its GPU,
 * at 1/overhead while another runs there; a job progresses at its slowest node's pace. The
 * paper applies its factor to every job once GPUs are shared; on a saturated pool the two
 * agree, ours also spares the jobs that happen to run alone. */
#include <math.h>
#include <stdlib.h>

#include "sim.h"

#define MAX_NODES 4
#define GPU_BYTES (8 * SIM_GIB)

const unsigned sim_part_configs[SIM_PART_CONFIGS] = {1, 2, 4, 8};
const double sim_part_paper_hours[SIM_PART_CONFIGS] = {53.35, 26.73, 12.71, 6.89};

enum { FUTURE, QUEUED, RUNNING, DONE };

typedef struct {
    double arrive, work, remaining;
    unsigned k;
    cg_bytes mem;
    int state;
    cg_cid cid[MAX_NODES];
    unsigned dev[MAX_NODES];
} pjob;

static uint64_t next_u64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Uniform in [0, 1). */
static double unif(uint64_t *s) { return (double)(next_u64(s) >> 11) * 0x1.0p-53; }

static double normal(uint64_t *s)
{
    double u = 1 - unif(s), v = unif(s);
    return sqrt(-2 * log(u)) * cos(2 * M_PI * v);
}

static void make_jobs(unsigned n, uint64_t seed, pjob *jobs)
{
    uint64_t s = seed * 0x2545f4914f6cdd1dull + 22;
    double t = 0;
    for (unsigned i = 0; i < n; i++) {
        pjob *j = &jobs[i];
        unsigned k = 1;
        if (unif(&s) >= 0.244) {
            double x = 0.8 + 1.2 * unif(&s);
            k = unif(&s) < 0.75 ? 1u << (unsigned)lround(x) : (unsigned)lround(pow(2, x));
        }
        k = k < 1 ? 1 : k > MAX_NODES ? MAX_NODES : k;
        double p_long = 0.3 + 0.1 * (k - 1);
        double ln = unif(&s) < p_long ? 6.65 + normal(&s) : 3.65 + normal(&s);
        t += -10.0 * log(1 - unif(&s));
        *j = (pjob){.arrive = t, .work = fmin(fmax(exp(ln), 10), 36 * 3600.0), .k = k,
                    .mem = 128 * SIM_MIB + (cg_bytes)(unif(&s) * 896) * SIM_MIB, .state = FUTURE};
        j->remaining = j->work;
    }
}

static cg_time ns(double t) { return (cg_time)llround(t * 1e9); }

/* Partitions free now: what each GPU's free memory holds of whole partitions. */
static unsigned free_parts(const cg_core *core, cg_bytes part)
{
    unsigned n = 0;
    for (unsigned g = 0; g < SIM_PART_GPUS; g++) {
        cg_device_info di;
        if (cg_device_get(core, g, &di) == CG_OK)
            n += (unsigned)(di.free / part);
    }
    return n;
}

/* Creates the job's k containers and grants each its memory; -1 when the core refuses or
 * would make one wait (free_parts said they fit: that would be a bug). */
static int gang_start(cg_core *core, pjob *j, unsigned id, cg_bytes part, double t)
{
    for (unsigned n = 0; n < j->k; n++) {
        cg_container_spec spec = {.device = -1, .limit = part};
        cg_container_info ci;
        cg_outcome o;
        cg_pid pid = id * MAX_NODES + n + 1;
        if (cg_container_create_spec(core, &spec, ns(t), &j->cid[n]) != CG_OK ||
            cg_container_get(core, j->cid[n], ns(t), &ci) != CG_OK || ci.assigned != part ||
            cg_request(core, j->cid[n], pid, pid, j->mem, ns(t), &o) != CG_OK ||
            o != CG_GRANTED)
            return -1;
        j->dev[n] = ci.device;
    }
    j->state = RUNNING;
    return 0;
}

/* The job's pace: its slowest node's, 1/overhead on a GPU that runs another container. */
static double job_rate(const pjob *j, const unsigned on_gpu[SIM_PART_GPUS], double overhead)
{
    for (unsigned n = 0; n < j->k; n++)
        if (on_gpu[j->dev[n]] > 1)
            return 1 / overhead;
    return 1;
}

static int gang_end(cg_core *core, pjob *j, unsigned id, double t)
{
    for (unsigned n = 0; n < j->k; n++) {
        cg_pid pid = id * MAX_NODES + n + 1;
        if (cg_release(core, j->cid[n], pid, j->mem, ns(t)) != CG_OK ||
            cg_process_exit(core, j->cid[n], pid, ns(t)) != CG_OK ||
            cg_container_remove(core, j->cid[n], ns(t)) != CG_OK)
            return -1;
    }
    j->state = DONE;
    return 0;
}

int sim_part_run(const sim_part_params *p, sim_part_result *out)
{
    *out = (sim_part_result){0};
    if (p->parts == 0 || GPU_BYTES % p->parts || !(p->overhead >= 1) || p->jobs == 0)
        return -1;
    cg_bytes part = GPU_BYTES / p->parts;
    pjob *jobs = calloc(p->jobs, sizeof *jobs);
    cg_config cfg = {.resume = CG_RESUME_FIFO, .placement = p->placement};
    cg_core *core = jobs ? cg_core_new(&cfg) : NULL;
    int rv = -1;
    if (!core)
        goto out;
    for (unsigned g = 0; g < SIM_PART_GPUS; g++)
        if (cg_device_add(core, GPU_BYTES, 0, 0, NULL) != CG_OK)
            goto out;
    make_jobs(p->jobs, p->seed, jobs);
    double t = 0;
    unsigned arrived = 0, head = 0, done = 0;
    while (done < p->jobs) {
        unsigned on_gpu[SIM_PART_GPUS] = {0};
        for (unsigned i = 0; i < arrived; i++)
            if (jobs[i].state == RUNNING)
                for (unsigned n = 0; n < jobs[i].k; n++)
                    on_gpu[jobs[i].dev[n]]++;
        for (unsigned g = 0; g < SIM_PART_GPUS; g++)
            out->max_per_gpu = on_gpu[g] > out->max_per_gpu ? on_gpu[g] : out->max_per_gpu;
        double t_done = INFINITY;
        unsigned who = 0;
        for (unsigned i = 0; i < arrived; i++) {
            if (jobs[i].state != RUNNING)
                continue;
            double r = job_rate(&jobs[i], on_gpu, p->overhead);
            if (t + jobs[i].remaining / r < t_done) {
                t_done = t + jobs[i].remaining / r;
                who = i;
            }
        }
        double t_arr = arrived < p->jobs ? jobs[arrived].arrive : INFINITY;
        double t_next = fmin(t_done, t_arr);
        if (isinf(t_next))
            goto out;   /* the head can never start: nothing runs and nothing arrives */
        for (unsigned i = 0; i < arrived; i++)
            if (jobs[i].state == RUNNING)
                jobs[i].remaining = fmax(0, jobs[i].remaining -
                                                job_rate(&jobs[i], on_gpu, p->overhead) *
                                                    (t_next - t));
        t = t_next;
        if (t_done <= t_arr) {
            if (gang_end(core, &jobs[who], who, t) != 0)
                goto out;
            done++;
        } else {
            jobs[arrived++].state = QUEUED;
        }
        /* First come first served, no backfilling: only the head may start. */
        while (head < arrived && jobs[head].state != QUEUED)
            head++;
        while (head < arrived && free_parts(core, part) >= jobs[head].k) {
            if (gang_start(core, &jobs[head], head, part, t) != 0)
                goto out;
            out->gang_max = jobs[head].k > out->gang_max ? jobs[head].k : out->gang_max;
            head++;
        }
        if (p->check && (out->violation = cg_core_check(core)) != NULL)
            goto out;
    }
    out->finished = t;
    rv = 0;
out:
    cg_core_free(core);
    free(jobs);
    return rv;
}

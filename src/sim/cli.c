/* cli.c — `convgpu sim`: argument parsing, the experiment loop (policies x placements x N x
 * seeds) and the three outputs: CSV (a contract), human tables next to the paper's, SVG plots.
 * Bad arguments print one clear line on stderr and exit 2 with nothing on stdout. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sim.h"
#include "size.h"

/* ps:k that brings the simulated finished times of the paper's four policies closest to its
 * Table IV (docs/SCHEDULING.md, "Calibration"). */
#define SIM_PAPER_PS_K 1.75

/* Seed 001's conditions: a 12 GB Titan Xp (Table 2), and ps:2, the interference of its
 * Figure 18 setting (a CNN container keeps about half the GPU busy; LAMMPS's profile averages
 * 23.8%): docs/SCHEDULING.md, "Seed 001's Figures 15 and 16". */
#define SIM_APP_PS_K 2.0
#define SIM_FAIR_INTERVAL_S 60.0

typedef struct {
    sim_workload workload;       /* the first of `workloads` (its defaults apply) */
    bool workloads[SIM_WORKLOAD__COUNT];
    bool shares[SIM_SHARE__COUNT];
    bool share_set;
    double fair_interval;
    sim_runtime runtime;
    bool policies[CG_RESUME__COUNT], placements[CG_PLACE__COUNT];
    bool policy_set, placement_set, containers_set, gpus_set, interference_set;
    unsigned n_from, n_to, n_step, seeds, ngpus;
    cg_bytes gpu_total, context;
    double ps_k;
    bool csv;
    const char *svg_dir;
    cg_bytes swap_limit;
    double swap_bandwidth;
    bool auto_pause;
    unsigned steps, urgent_every;
    bool steps_set;
} options;

/* The experiments table lives in experiments.c; the preset's options are parsed first. */
#define MAX_ARGS 64

static const char usage[] =
    "usage: convgpu sim [options]\n"
    "       convgpu sim compute --containers SHARE:MODE[,...] [options]   (see --help there)\n"
    "Discrete-event simulation of GPU-memory scheduling, driving the real scheduling core.\n"
    "Defaults reproduce the ConVGPU paper's evaluation (one 5 GiB GPU, Table III containers,\n"
    "one every 5 s, N = 4..38, 6 seeds).\n"
    "  --workload paper|gsaas|alexnet  job mix (paper); gsaas: 1-4 GiB jobs, Poisson arrivals;\n"
    "                              alexnet: seed 001's Figure 18, 2.6 GiB CNN containers every\n"
    "                              5 s on one 11 GiB GPU, allocating in 4 steps, ps:2, N = 1..8\n"
    "  --workload homogeneous|heterogeneous|lammps|gromacs|qmcpack|cnn-mnist[,...]\n"
    "                              seed 001's Figures 15/16: 4 users (40/30/20/10% of the jobs,\n"
    "                              one every 10 s) of its application profiles on one 12 GiB GPU,\n"
    "                              ps:2, fifo, N = 40; homogeneous: one application per seed,\n"
    "                              heterogeneous: one per user; a list runs each\n"
    "  --fair-share default|none|static|adaptive[,...]|all\n"
    "                              sharing conditions (none): default = nvidia-docker, each\n"
    "                              container takes the whole GPU; the others: the core's fair-share\n"
    "                              mode, containers limited to their application's peak\n"
    "  --fair-interval S           adaptive: seconds between profile updates (60)\n"
    "  --swap-limit SIZE|off       let the core swap containers out, within this host budget\n"
    "                              (off, the default: suspend only)\n"
    "  --swap-bandwidth GB/s       how fast a move runs (12)\n"
    "  --auto-pause yes|no         the scheduler may checkpoint a victim whole (context too) where\n"
    "                              swap frees too little (no); a checkpoint runs at 0.19 (out) and\n"
    "                              1.40 (in) of the swap bandwidth, bench/pause.sh's ratios\n"
    "  --steps K                   allocation steps per job, each followed by 1/K of its work\n"
    "                              (1; alexnet: 4)\n"
    "  --urgent-every K            every K-th container has priority 5, the rest 0 (off)\n"
    "  --runtime linear|log        paper run time from size: linear 5..45 s (default), or log\n"
    "                              (equal steps per doubling, the model before issue 21)\n"
    "  --policy NAME[,NAME]|all    resume policies: fifo, best-fit, recent, random, aging-fit (all)\n"
    "  --placement NAME|all        first-fit, least-loaded, binpack, load-balance, standalone\n"
    "                              (paper: first-fit; gsaas: all)\n"
    "  --containers N|A..B[/S]     containers per run; A..B steps by 2 unless /S is given\n"
    "                              (paper: 4..38; gsaas: 200)\n"
    "  --seeds K                   runs per point, seeds 1..K (6)\n"
    "  --interference none|ps:K    GPU sharing: none, or processor sharing running K at full\n"
    "                              speed (paper: ps:1.75, calibrated to Table IV; gsaas: none)\n"
    "  --gpus SPEC                 GPUs: SIZE or COUNTxSIZE, e.g. 5GiB, 4x8GiB\n"
    "  --context SIZE              per-process context charge (66MiB)\n"
    "  --format table|csv          output (table); csv header:\n"
    "                              policy,containers,seed,finished_s,avg_suspended_s,max_suspended_s,\n"
    "                              mem_util,avg_turnaround_s,urgent_turnaround_s,swaps\n"
    "                              (+ workload,share,mem_footprint,fair_updates with seed 001's\n"
    "                              workloads or --fair-share)\n"
    "  --svg DIR                   also write DIR/finished.svg and DIR/suspended.svg\n"
    "  --experiment NAME|list      a named preset of these options and its CSV output (list:\n"
    "                              the table); options given beside it override the preset;\n"
    "                              coexec-table4 (seed 003's Table 4) and gsaas-partitions (seed\n"
    "                              002's Table 3, Figure 13) run engines of their own and take\n"
    "                              only --svg DIR, and gsaas-partitions --seeds K (10) and\n"
    "                              --jobs N (400)\n"
    "  --help                      this text\n";

static int bad(const char *what, const char *arg)
{
    fprintf(stderr, "convgpu sim: %s: '%s' (see convgpu sim --help)\n", what, arg ? arg : "");
    return 2;
}

static bool parse_uint(const char *s, unsigned lo, unsigned hi, unsigned *out)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || end == s || *end || *s == '-' || v < lo || v > hi)
        return false;
    *out = (unsigned)v;
    return true;
}

static bool parse_containers(const char *s, options *o)
{
    char buf[64];
    if (strlen(s) >= sizeof buf)
        return false;
    strcpy(buf, s);
    char *dots = strstr(buf, "..");
    if (!dots) {
        if (!parse_uint(buf, 1, 1000000, &o->n_from))
            return false;
        o->n_to = o->n_from;
        o->n_step = 1;
        return true;
    }
    *dots = 0;
    char *to = dots + 2, *slash = strchr(to, '/');
    o->n_step = 2;
    if (slash) {
        *slash = 0;
        if (!parse_uint(slash + 1, 1, 1000000, &o->n_step))
            return false;
    }
    return parse_uint(buf, 1, 1000000, &o->n_from) && parse_uint(to, 1, 1000000, &o->n_to) &&
           o->n_from <= o->n_to;
}

/* A comma-separated list of resume-policy names, each known, none empty. */
static bool parse_policies(const char *s, bool *policies)
{
    char buf[128];
    if (strlen(s) >= sizeof buf)
        return false;
    strcpy(buf, s);
    for (char *p = buf, *comma;; p = comma + 1) {
        cg_resume_policy pol;
        comma = strchr(p, ',');
        if (comma)
            *comma = 0;
        if (!cg_resume_policy_parse(p, &pol))
            return false;
        policies[pol] = true;
        if (!comma)
            return true;
    }
}

/* A comma-separated list of names, each known to `parse_one`, none empty; marks them in `set`. */
static bool parse_list(const char *s, bool *set, bool (*parse_one)(const char *, unsigned *))
{
    char buf[160];
    if (strlen(s) >= sizeof buf)
        return false;
    strcpy(buf, s);
    for (char *p = buf, *comma;; p = comma + 1) {
        unsigned v;
        comma = strchr(p, ',');
        if (comma)
            *comma = 0;
        if (!parse_one(p, &v))
            return false;
        set[v] = true;
        if (!comma)
            return true;
    }
}

static bool one_workload(const char *name, unsigned *out)
{
    sim_workload w;
    if (!sim_workload_parse(name, &w))
        return false;
    *out = (unsigned)w;
    return true;
}

static bool one_share(const char *name, unsigned *out)
{
    sim_share sh;
    if (!sim_share_parse(name, &sh))
        return false;
    *out = (unsigned)sh;
    return true;
}

static bool parse_gpus(const char *s, options *o)
{
    const char *x = strchr(s, 'x');
    unsigned n = 1;
    if (x) {
        char buf[16];
        size_t len = (size_t)(x - s);
        if (len == 0 || len >= sizeof buf)
            return false;
        memcpy(buf, s, len);
        buf[len] = 0;
        if (!parse_uint(buf, 1, CG_MAX_DEVICES, &n))
            return false;
        s = x + 1;
    }
    uint64_t size;
    if (cg_parse_size(s, &size, NULL) != 0 || size == 0 || size > ((uint64_t)1 << 50))
        return false;
    o->ngpus = n;
    o->gpu_total = size;
    return true;
}

static int parse(int argc, char **argv, options *o)
{
    *o = (options){.workload = SIM_PAPER, .seeds = 6, .context = 66 * SIM_MIB,
                   .swap_bandwidth = 12e9, .steps = 1, .fair_interval = SIM_FAIR_INTERVAL_S};
    o->workloads[SIM_PAPER] = true;
    o->shares[SIM_SHARE_NONE] = true;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        char name[32];
        const char *eq = strchr(a, '=');
        if (strncmp(a, "--", 2) != 0)
            return bad("unexpected argument", a);
        size_t len = eq ? (size_t)(eq - a) : strlen(a);
        if (len >= sizeof name)
            return bad("unknown option", a);
        memcpy(name, a, len);
        name[len] = 0;
        if (strcmp(name, "--help") == 0) {
            fputs(usage, stdout);
            return -1;
        }
        if (eq)
            v = eq + 1;
        else if (i + 1 < argc)
            v = argv[++i];
        else
            return bad("option needs a value", a);
        if (strcmp(name, "--workload") == 0) {
            memset(o->workloads, 0, sizeof o->workloads);
            if (!parse_list(v, o->workloads, one_workload))
                return bad("unknown workload (paper, gsaas, alexnet, or seed 001's homogeneous, "
                           "heterogeneous, lammps, gromacs, qmcpack, cnn-mnist)", v);
            unsigned nw = 0, napp = 0;
            for (unsigned w = SIM_WORKLOAD__COUNT; w-- > 0;)
                if (o->workloads[w]) {
                    o->workload = (sim_workload)w;
                    nw++;
                    napp += sim_workload_is_app((sim_workload)w);
                }
            if (nw > 1 && napp != nw)
                return bad("only seed 001's workloads combine in a list", v);
        } else if (strcmp(name, "--fair-share") == 0) {
            memset(o->shares, 0, sizeof o->shares);
            if (strcmp(v, "all") == 0)
                memset(o->shares, 1, sizeof o->shares);
            else if (!parse_list(v, o->shares, one_share))
                return bad("unknown sharing condition (default, none, static, adaptive, all)", v);
            o->share_set = true;
        } else if (strcmp(name, "--fair-interval") == 0) {
            char *end;
            errno = 0;
            double sec = strtod(v, &end);
            if (errno || end == v || *end || !(sec > 0 && sec <= 1e6))
                return bad("bad fair-share interval (seconds, above 0)", v);
            o->fair_interval = sec;
        } else if (strcmp(name, "--swap-limit") == 0) {
            uint64_t c;
            if (strcmp(v, "off") == 0)
                o->swap_limit = 0;
            else if (cg_parse_size(v, &c, NULL) != 0 || c == 0)
                return bad("bad swap limit (a size, or off)", v);
            else
                o->swap_limit = c;
        } else if (strcmp(name, "--swap-bandwidth") == 0) {
            char *end;
            errno = 0;
            double g = strtod(v, &end);
            if (errno || end == v || *end || !(g > 0 && g <= 10000))
                return bad("bad swap bandwidth (GB/s, above 0)", v);
            o->swap_bandwidth = g * 1e9;
        } else if (strcmp(name, "--auto-pause") == 0) {
            if (strcmp(v, "yes") != 0 && strcmp(v, "no") != 0)
                return bad("bad --auto-pause (yes or no)", v);
            o->auto_pause = strcmp(v, "yes") == 0;
        } else if (strcmp(name, "--urgent-every") == 0) {
            if (!parse_uint(v, 1, 1000, &o->urgent_every))
                return bad("bad --urgent-every (1-1000)", v);
        } else if (strcmp(name, "--steps") == 0) {
            if (!parse_uint(v, 1, 64, &o->steps))
                return bad("bad step count (1-64)", v);
            o->steps_set = true;
        } else if (strcmp(name, "--runtime") == 0) {
            if (strcmp(v, "linear") == 0)
                o->runtime = SIM_RUNTIME_LINEAR;
            else if (strcmp(v, "log") == 0)
                o->runtime = SIM_RUNTIME_LOG;
            else
                return bad("unknown run-time model (linear or log)", v);
        } else if (strcmp(name, "--policy") == 0) {
            memset(o->policies, 0, sizeof o->policies);
            if (strcmp(v, "all") == 0)
                memset(o->policies, 1, sizeof o->policies);
            else if (!parse_policies(v, o->policies))
                return bad("unknown resume policy", v);
            o->policy_set = true;
        } else if (strcmp(name, "--placement") == 0) {
            cg_placement_policy p;
            memset(o->placements, 0, sizeof o->placements);
            if (strcmp(v, "all") == 0)
                memset(o->placements, 1, sizeof o->placements);
            else if (cg_placement_policy_parse(v, &p))
                o->placements[p] = true;
            else
                return bad("unknown placement policy", v);
            o->placement_set = true;
        } else if (strcmp(name, "--containers") == 0) {
            if (!parse_containers(v, o))
                return bad("bad container count (N, A..B or A..B/S)", v);
            o->containers_set = true;
        } else if (strcmp(name, "--seeds") == 0) {
            if (!parse_uint(v, 1, 100000, &o->seeds))
                return bad("bad seed count", v);
        } else if (strcmp(name, "--interference") == 0) {
            char *end;
            if (strcmp(v, "none") == 0) {
                o->ps_k = 0;
            } else if (strncmp(v, "ps:", 3) == 0 && (o->ps_k = strtod(v + 3, &end)) > 0 &&
                       end != v + 3 && !*end && o->ps_k < 1e6) {
            } else {
                return bad("bad interference (none or ps:K, K > 0)", v);
            }
            o->interference_set = true;
        } else if (strcmp(name, "--gpus") == 0) {
            if (!parse_gpus(v, o))
                return bad("bad GPU spec (SIZE or COUNTxSIZE, e.g. 4x8GiB)", v);
            o->gpus_set = true;
        } else if (strcmp(name, "--context") == 0) {
            uint64_t c;
            if (cg_parse_size(v, &c, NULL) != 0)
                return bad("bad context size", v);
            o->context = c;
        } else if (strcmp(name, "--format") == 0) {
            if (strcmp(v, "csv") == 0)
                o->csv = true;
            else if (strcmp(v, "table") == 0)
                o->csv = false;
            else
                return bad("unknown format (table or csv)", v);
        } else if (strcmp(name, "--svg") == 0) {
            if (!*v)
                return bad("empty directory", v);
            o->svg_dir = v;
        } else {
            return bad("unknown option", a);
        }
    }
    bool paper = o->workload == SIM_PAPER, alex = o->workload == SIM_ALEXNET;
    bool app = sim_workload_is_app(o->workload);
    if (!o->steps_set && alex)
        o->steps = 4;
    if (!o->policy_set && app)
        o->policies[CG_RESUME_FIFO] = true;
    else if (!o->policy_set)
        memset(o->policies, 1, sizeof o->policies);
    if (!o->placement_set) {
        if (paper || alex || app)
            o->placements[CG_PLACE_FIRST_FIT] = true;
        else
            memset(o->placements, 1, sizeof o->placements);
    }
    if (!o->containers_set) {
        o->n_from = alex ? 1 : paper ? 4 : app ? 40 : 200;
        o->n_to = alex ? 8 : paper ? 38 : app ? 40 : 200;
        o->n_step = alex ? 1 : 2;
    }
    if (!o->gpus_set) {
        o->ngpus = paper || alex || app ? 1 : 4;
        o->gpu_total = alex ? 11 * SIM_GIB : paper ? 5 * SIM_GIB : app ? 12 * SIM_GIB : 8 * SIM_GIB;
    }
    if (!o->interference_set)
        o->ps_k = alex ? 2.0 : paper ? SIM_PAPER_PS_K : app ? SIM_APP_PS_K : 0;
    /* Every container of the workload must fit a GPU, and hold its own context charge. */
    for (unsigned w = 0; w < SIM_WORKLOAD__COUNT; w++)
        if (o->workloads[w] && sim_workload_largest((sim_workload)w) > o->gpu_total)
            return bad("the workload's largest container does not fit a GPU of", argv[0]);
    if (o->context >= 128 * SIM_MIB)
        return bad("context charge must be below the smallest container (128MiB)", argv[0]);
    return 0;
}

static unsigned count(const bool *v, unsigned n)
{
    unsigned k = 0;
    for (unsigned i = 0; i < n; i++)
        k += v[i];
    return k;
}

static void print_paper_tables(const options *o, const sim_point *pts, size_t npts)
{
    static const char *const titles[] = {
        "Finished time of all containers (s): simulated mean [paper's Table IV]",
        "Average suspended time per container (s): simulated mean [paper's Table V]",
        "Maximum suspended time (s) / mean GPU-memory utilization"};
    unsigned npol = count(o->policies, CG_RESUME__COUNT);
    for (int t = 0; t < 3; t++) {
        printf("%s\n%4s", titles[t], "N");
        for (unsigned p = 0; p < CG_RESUME__COUNT; p++)
            if (o->policies[p])
                printf("  %-16s", cg_resume_policy_name((cg_resume_policy)p));
        printf("\n");
        for (size_t i = 0; i < npts; i += npol) {
            printf("%4u", pts[i].containers);
            int col = sim_paper_col(pts[i].containers);
            for (size_t k = i; k < i + npol && k < npts; k++) {
                char cell[32];
                const sim_point *q = &pts[k];
                if (t == 2)
                    snprintf(cell, sizeof cell, "%.1f / %.0f%%", q->max_suspended,
                             100 * q->mem_util);
                else if (col >= 0 && q->policy < 4)
                    snprintf(cell, sizeof cell, "%.1f [%.1f]",
                             t == 0 ? q->finished : q->avg_suspended,
                             (t == 0 ? sim_paper_finished : sim_paper_suspended)[q->policy][col]);
                else
                    snprintf(cell, sizeof cell, "%.1f", t == 0 ? q->finished : q->avg_suspended);
                printf("  %-16s", cell);
            }
            printf("\n");
        }
        printf("\n");
    }
}

/* Whether the run speaks of seed 001's conditions: the output gains their columns. */
static bool extended(const options *o)
{
    for (unsigned w = 0; w < SIM_WORKLOAD__COUNT; w++)
        if (o->workloads[w] && sim_workload_is_app((sim_workload)w))
            return true;
    return o->share_set;
}

static void print_generic_table(const options *o, const sim_point *pts, size_t npts)
{
    bool ext = extended(o);
    printf("%u GPU(s) x %.1f GiB, %s workload, %u seed(s), swap %s\n", o->ngpus,
           (double)o->gpu_total / SIM_GIB, sim_workload_name(o->workload), o->seeds,
           o->swap_limit ? "on" : "off");
    printf("%-14s %-11s %6s %11s %9s %13s %13s %8s %12s %13s %7s", "placement", "policy", "N",
           "finished_s", "jobs/h", "avg_susp_s", "max_susp_s", "util", "avg_turn_s",
           "urgent_turn_s", "swaps");
    printf(ext ? " %9s %-9s %s\n" : "\n", "footprint", "share", "workload");
    for (size_t i = 0; i < npts; i++) {
        const sim_point *q = &pts[i];
        printf("%-14s %-11s %6u %11.1f %9.1f %13.1f %13.1f %7.1f%% %12.1f %13.1f %7.1f",
               cg_placement_policy_name(q->placement), cg_resume_policy_name(q->policy),
               q->containers, q->finished, q->finished > 0 ? 3600.0 * q->containers / q->finished : 0,
               q->avg_suspended, q->max_suspended, 100 * q->mem_util, q->avg_turnaround,
               q->urgent_turnaround, q->swaps);
        if (ext)
            printf(" %8.1f%% %-9s %s", 100 * q->mem_footprint, sim_share_name(q->share),
                   sim_workload_name(q->workload));
        printf("\n");
    }
}

static void list_experiments(void)
{
    for (size_t i = 0; i < sim_nexperiments; i++) {
        const sim_experiment *e = &sim_experiments[i];
        printf("%-16s %s\n%-16s convgpu sim", e->name, e->summary, "");
        if (e->run)
            printf(" --experiment %s", e->name);
        for (const char *const *a = e->args; *a; a++)
            printf(" %s", *a);
        printf("\n");
    }
}

/* `--experiment NAME` anywhere in argv: the preset's options go first, then the user's others,
 * into `out` (argv[0] kept). Returns 0 (no experiment: `out` is argv), 1 (*exp set), -1 (list
 * printed), or 2 (bad name or too many options, reported). */
static int expand_experiment(int argc, char **argv, int *out_argc, char **out,
                             const sim_experiment **exp)
{
    const char *name = NULL;
    int at = -1, width = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--experiment") == 0) {
            if (i + 1 >= argc)
                return bad("option needs a value", argv[i]);
            name = argv[i + 1];
            at = i;
            width = 2;
        } else if (strncmp(argv[i], "--experiment=", 13) == 0) {
            name = argv[i] + 13;
            at = i;
            width = 1;
        }
    }
    *exp = NULL;
    if (!name) {
        if (argc > MAX_ARGS)
            return bad("too many options", argv[MAX_ARGS]);
        for (int i = 0; i < argc; i++)
            out[i] = argv[i];
        *out_argc = argc;
        return 0;
    }
    if (strcmp(name, "list") == 0) {
        list_experiments();
        return -1;
    }
    if (!(*exp = sim_experiment_find(name)))
        return bad("unknown experiment (see --experiment list)", name);
    int n = 0;
    out[n++] = argv[0];
    for (const char *const *a = (*exp)->args; *a && n < MAX_ARGS; a++)
        out[n++] = (char *)*a;
    for (int i = 1; i < argc; i++) {
        if (i >= at && i < at + width)
            continue;
        if (n >= MAX_ARGS)
            return bad("too many options", argv[i]);
        out[n++] = argv[i];
    }
    *out_argc = n;
    return 1;
}

int cg_sim_main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "compute") == 0)
        return cg_sim_compute_main(argc - 1, argv + 1);
    options o;
    char *args[MAX_ARGS];
    int nargs;
    const sim_experiment *exp;
    int rc = expand_experiment(argc, argv, &nargs, args, &exp);
    if (rc == 1 && exp->run)
        return exp->run(nargs, args);
    if (rc == 1)
        rc = 0;
    else if (rc)
        return rc < 0 ? 0 : rc;
    rc = parse(nargs, args, &o);
    if (rc)
        return rc < 0 ? 0 : rc;
    /* An experiment's output is CSV: its report's, or the per-run rows. */
    if (exp)
        o.csv = !exp->report;
    unsigned npol = count(o.policies, CG_RESUME__COUNT);
    unsigned nplace = count(o.placements, CG_PLACE__COUNT);
    unsigned nwork = count(o.workloads, SIM_WORKLOAD__COUNT);
    unsigned nshare = count(o.shares, SIM_SHARE__COUNT);
    bool ext = extended(&o);
    size_t nn = (o.n_to - o.n_from) / o.n_step + 1;
    size_t npts = (size_t)npol * nplace * nn * nwork * nshare;
    sim_point *pts = calloc(npts, sizeof *pts);
    unsigned long checkpoints = 0;   /* over every run (--auto-pause) */
    double moved_gib = 0;
    if (!pts) {
        fprintf(stderr, "convgpu sim: out of memory\n");
        return 1;
    }
    /* Several placements are told apart in the CSV's policy column as resume+placement. */
    bool tag_place = nplace > 1 || !o.placements[CG_PLACE_FIRST_FIT];
    if (o.csv)
        printf("policy,containers,seed,finished_s,avg_suspended_s,max_suspended_s,mem_util,"
               "avg_turnaround_s,urgent_turnaround_s,swaps%s\n",
               ext ? ",workload,share,mem_footprint,fair_updates" : "");
    /* Points in (workload, placement, N, share, policy) order: the tables print a row per N. */
    size_t k = 0;
    for (unsigned w = 0; w < SIM_WORKLOAD__COUNT; w++)
    for (unsigned pl = 0; pl < CG_PLACE__COUNT; pl++) {
        if (!o.workloads[w] || !o.placements[pl])
            continue;
        for (unsigned n = o.n_from; n <= o.n_to; n += o.n_step)
        for (unsigned sh = 0; sh < SIM_SHARE__COUNT; sh++) {
            if (!o.shares[sh])
                continue;
            for (unsigned p = 0; p < CG_RESUME__COUNT; p++) {
                if (!o.policies[p])
                    continue;
                sim_point *q = &pts[k++];
                *q = (sim_point){.policy = (cg_resume_policy)p,
                                 .placement = (cg_placement_policy)pl, .containers = n,
                                 .workload = (sim_workload)w, .share = (sim_share)sh};
                for (unsigned s = 1; s <= o.seeds; s++) {
                    sim_params sp = {(sim_workload)w, (cg_resume_policy)p,
                                     (cg_placement_policy)pl, o.ngpus, o.gpu_total, o.context,
                                     o.ps_k, n, s, o.runtime, o.swap_limit, o.swap_bandwidth,
                                     o.steps, o.urgent_every, (sim_share)sh, o.fair_interval,
                                     false, false, o.auto_pause, 0, 0};
                    sim_result r;
                    if (sim_run(&sp, &r) != 0) {
                        fprintf(stderr, "convgpu sim: run failed (%s workload, %s, policy %s, "
                                        "N %u, seed %u)\n", sim_workload_name(sp.workload),
                                sim_share_name(sp.share), cg_resume_policy_name(sp.policy), n, s);
                        free(pts);
                        return 1;
                    }
                    q->finished += r.finished / o.seeds;
                    q->avg_suspended += r.avg_suspended / o.seeds;
                    q->max_suspended += r.max_suspended / o.seeds;
                    q->mem_util += r.mem_util / o.seeds;
                    q->avg_turnaround += r.avg_turnaround / o.seeds;
                    q->urgent_turnaround += r.urgent_turnaround / o.seeds;
                    q->swaps += (double)r.swaps / o.seeds;
                    checkpoints += r.checkpoints;
                    moved_gib += r.moved_gib;
                    q->mem_footprint += r.mem_footprint / o.seeds;
                    q->fair_updates += (double)r.fair_updates / o.seeds;
                    if (o.csv) {
                        if (tag_place)
                            printf("%s+%s", cg_resume_policy_name(sp.policy),
                                   cg_placement_policy_name(sp.placement));
                        else
                            printf("%s", cg_resume_policy_name(sp.policy));
                        printf(",%u,%u,%.3f,%.3f,%.3f,%.4f,%.3f,%.3f,%u", n, s, r.finished,
                               r.avg_suspended, r.max_suspended, r.mem_util, r.avg_turnaround,
                               r.urgent_turnaround, r.swaps);
                        if (ext)
                            printf(",%s,%s,%.4f,%u", sim_workload_name(sp.workload),
                                   sim_share_name(sp.share), r.mem_footprint, r.fair_updates);
                        printf("\n");
                    }
                }
            }
        }
    }
    bool paper_view = o.workload == SIM_PAPER && nplace == 1 && o.ngpus == 1 && nwork == 1 &&
                      nshare == 1 && o.shares[SIM_SHARE_NONE];
    if (exp && exp->report && exp->report(pts, npts, stdout) != 0) {
        free(pts);
        return bad("the options leave out a policy the experiment compares", exp->name);
    }
    if (!o.csv && !exp) {
        if (paper_view)
            print_paper_tables(&o, pts, npts);
        else
            print_generic_table(&o, pts, npts);
    }
    if (!o.csv && o.swap_limit + o.auto_pause)
        printf("back ends: %lu checkpoints over all runs (auto-pause %s), %.1f GiB moved to the "
               "host and back\n", checkpoints, o.auto_pause ? "yes" : "no", moved_gib);
    rc = 0;
    if (o.svg_dir && exp && exp->plot) {
        if (mkdir(o.svg_dir, 0777) != 0 && errno != EEXIST) {
            fprintf(stderr, "convgpu sim: cannot create %s: %s\n", o.svg_dir, strerror(errno));
            rc = 1;
        } else if (exp->plot(pts, npts, o.svg_dir) != 0) {
            fprintf(stderr, "convgpu sim: cannot write the plots in %s: %s\n", o.svg_dir,
                    strerror(errno));
            rc = 1;
        }
    } else if (o.svg_dir) {
        /* Plots want points grouped by policy, in N order. */
        sim_point *by = malloc(npts * sizeof *by);
        char path[4096];
        if (!by || (mkdir(o.svg_dir, 0777) != 0 && errno != EEXIST)) {
            fprintf(stderr, "convgpu sim: cannot create %s: %s\n", o.svg_dir, strerror(errno));
            free(by);
            free(pts);
            return 1;
        }
        size_t m = 0;
        for (unsigned w = 0; w < SIM_WORKLOAD__COUNT; w++)
            for (unsigned sh = 0; sh < SIM_SHARE__COUNT; sh++)
                for (unsigned pl = 0; pl < CG_PLACE__COUNT; pl++)
                    for (unsigned p = 0; p < CG_RESUME__COUNT; p++)
                        for (size_t i = 0; i < npts; i++)
                            if (pts[i].policy == p && pts[i].placement == pl &&
                                pts[i].share == sh && pts[i].workload == w)
                                by[m++] = pts[i];
        static const struct { const char *file, *title, *ylabel; bool fin; } plots[] = {
            {"finished.svg", "Finished time of all containers", "Finished time (s)", true},
            {"suspended.svg", "Average suspended time per container", "Suspended time (s)",
             false}};
        for (int i = 0; i < 2 && rc == 0; i++) {
            snprintf(path, sizeof path, "%s/%s", o.svg_dir, plots[i].file);
            if (sim_svg_write(path, plots[i].title, plots[i].ylabel, by, m, plots[i].fin,
                              paper_view) != 0) {
                fprintf(stderr, "convgpu sim: cannot write %s: %s\n", path, strerror(errno));
                rc = 1;
            }
        }
        free(by);
    }
    free(pts);
    return rc;
}

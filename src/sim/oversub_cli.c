/* oversub_cli.c — `convgpu sim --experiment oversub`: every (workload, factor, step aside) of
 * oversub.c on one cluster, means over --seeds runs, as a table or, with --format csv, as
 *   workload,factor,step_aside,jobs_per_hour,mean_jct_s,p95_jct_s,mem_util,mean_suspended_s,
 *   swapped_gib,swap_outs,step_asides,backfills,oom_kills,max_concurrent,mean_concurrent
 * (factor: the static F, or "adaptive" with its mean F in the table). Options: --nodes N (64),
 * --gpus-per-node G (8), --gpu-memory SIZE (12GiB, seed 001's Titan Xp), --jobs N (3000),
 * --seeds K (1), --workload profiles|heavy|all, --factors LIST (1,1.5,2,adaptive),
 * --step-aside yes|no|both, --slowdown S (1: none), --load L (1.5), --swap-limit SIZE per node
 * (64GiB), --policy NAME (fifo), --placement first|pressure (the cluster scheduler's GPU: the
 * first whose promise holds the job, or the least pressed of those, core/pressure.h), --check.
 * Bad options: one line on stderr, exit 2, nothing on
 * stdout. Exit 1 when a run fails or an out-of-memory kill happened. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oversub.h"
#include "size.h"

#define MAXF 8

static int bad(const char *what, const char *arg)
{
    fprintf(stderr, "convgpu sim: oversub: %s: '%s' (see convgpu sim --help)\n", what,
            arg ? arg : "");
    return 2;
}

static bool num(const char *s, double lo, double hi, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !(v >= lo && v <= hi))
        return false;
    *out = v;
    return true;
}

typedef struct {
    sim_ov_params base;
    unsigned seeds;
    bool dists[SIM_OV_DIST__COUNT];
    double factors[MAXF];        /* 0: adaptive */
    unsigned nfactors;
    bool aside[2];               /* [0] without, [1] with */
    bool csv;
} opts;

static int parse_factors(const char *v, opts *o)
{
    char buf[256];
    if (strlen(v) >= sizeof buf)
        return bad("bad --factors", v);
    strcpy(buf, v);
    o->nfactors = 0;
    for (char *tok = buf, *comma; tok; tok = comma ? comma + 1 : NULL) {
        if ((comma = strchr(tok, ',')))
            *comma = '\0';
        double f = 0;
        if (o->nfactors == MAXF ||
            (strcmp(tok, "adaptive") != 0 && !num(tok, CG_OVERSUB_MIN, CG_OVERSUB_MAX, &f)))
            return bad("bad --factors (a list of 1..4 or adaptive)", v);
        o->factors[o->nfactors++] = f;
    }
    return o->nfactors ? 0 : bad("bad --factors", v);
}

static int parse(int argc, char **argv, opts *o)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        double d;
        uint64_t sz;
        if (strcmp(a, "--check") == 0) {
            o->base.check = true;
            continue;
        }
        if (!v)
            return bad("option needs a value, or is unknown", a);
        i++;
        if (strcmp(a, "--nodes") == 0 && num(v, 1, 4096, &d))
            o->base.nodes = (unsigned)d;
        else if (strcmp(a, "--gpus-per-node") == 0 && num(v, 1, CG_MAX_DEVICES, &d))
            o->base.gpus_per_node = (unsigned)d;
        else if (strcmp(a, "--jobs") == 0 && num(v, 1, 1000000, &d))
            o->base.jobs = (unsigned)d;
        else if (strcmp(a, "--seeds") == 0 && num(v, 1, 1000, &d))
            o->seeds = (unsigned)d;
        else if (strcmp(a, "--slowdown") == 0 && num(v, 1, 10, &d))
            o->base.slowdown = d;
        else if (strcmp(a, "--load") == 0 && num(v, 0.01, 100, &d))
            o->base.load = d;
        else if (strcmp(a, "--gpu-memory") == 0 && cg_parse_size(v, &sz, NULL) == 0 &&
                 sz >= SIM_GIB)
            o->base.gpu_total = sz;
        else if (strcmp(a, "--swap-limit") == 0 && cg_parse_size(v, &sz, NULL) == 0 && sz > 0)
            o->base.swap_limit = sz;
        else if (strcmp(a, "--policy") == 0 && cg_resume_policy_parse(v, &o->base.policy))
            ;
        else if (strcmp(a, "--placement") == 0 &&
                 (strcmp(v, "first") == 0 || strcmp(v, "pressure") == 0))
            o->base.pressure_place = strcmp(v, "pressure") == 0;
        else if (strcmp(a, "--factors") == 0) {
            int rc = parse_factors(v, o);
            if (rc)
                return rc;
        } else if (strcmp(a, "--workload") == 0) {
            sim_ov_dist w;
            memset(o->dists, 0, sizeof o->dists);
            if (strcmp(v, "all") == 0)
                o->dists[0] = o->dists[1] = true;
            else if (sim_ov_dist_parse(v, &w))
                o->dists[w] = true;
            else
                return bad("bad --workload (profiles, heavy, all)", v);
        } else if (strcmp(a, "--step-aside") == 0) {
            bool y = strcmp(v, "yes") == 0, n = strcmp(v, "no") == 0, b = strcmp(v, "both") == 0;
            if (!y && !n && !b)
                return bad("bad --step-aside (yes, no, both)", v);
            o->aside[0] = n || b;
            o->aside[1] = y || b;
        } else if (strcmp(a, "--format") == 0 && (strcmp(v, "csv") == 0 || strcmp(v, "table") == 0))
            o->csv = strcmp(v, "csv") == 0;
        else
            return bad("bad or unknown option", a);
    }
    return 0;
}

int sim_ov_main(int argc, char **argv)
{
    opts o = {.base = {.nodes = 64, .gpus_per_node = 8, .gpu_total = 12 * SIM_GIB, .jobs = 3000,
                       .dist = SIM_OV_PROFILES, .swap_limit = 64 * SIM_GIB,
                       .swap_bandwidth = 12e9, .slowdown = 1, .load = 1.5,
                       .policy = CG_RESUME_FIFO},
              .seeds = 1, .dists = {true, true}, .factors = {1, 1.5, 2, 0}, .nfactors = 4,
              .aside = {true, true}};
    int rc = parse(argc, argv, &o);
    if (rc)
        return rc;
    if (o.csv)
        printf("workload,factor,step_aside,jobs_per_hour,mean_jct_s,p95_jct_s,mem_util,"
               "mean_suspended_s,swapped_gib,swap_outs,step_asides,backfills,oom_kills,"
               "max_concurrent,mean_concurrent\n");
    else
        printf("%d nodes x %u GPUs of %.0f GiB, %u jobs, %u seed(s), load %.2f, slowdown %.2f\n"
               "%-8s %-13s %-5s %8s %9s %9s %5s %8s %8s %6s %7s %4s %8s %8s\n",
               (int)o.base.nodes, o.base.gpus_per_node, (double)o.base.gpu_total / SIM_GIB,
               o.base.jobs, o.seeds, o.base.load, o.base.slowdown, "workload", "factor", "aside",
               "jobs/h", "mean JCT", "p95 JCT", "util", "susp s", "GiB swp", "asides",
               "backfil", "OOM", "max conc", "mean con");
    bool oom = false;
    for (unsigned w = 0; w < SIM_OV_DIST__COUNT; w++) {
        if (!o.dists[w])
            continue;
        for (unsigned f = 0; f < o.nfactors; f++)
            for (unsigned sa = 0; sa < 2; sa++) {
                if (!o.aside[sa])
                    continue;
                sim_ov_result m = {0};
                double fsum = 0;
                for (unsigned s = 1; s <= o.seeds; s++) {
                    sim_ov_params p = o.base;
                    p.dist = (sim_ov_dist)w;
                    p.factor = o.factors[f] > 0 ? o.factors[f] : 1;
                    p.adaptive = o.factors[f] == 0;
                    p.step_aside = sa == 1;
                    p.seed = s;
                    sim_ov_result r;
                    if (sim_ov_run(&p, &r) != 0) {
                        fprintf(stderr, "convgpu sim: oversub: run failed (%s, factor %g, "
                                        "step aside %s, seed %u)%s%s\n",
                                sim_ov_dist_name(p.dist), p.factor, sa ? "yes" : "no", s,
                                r.violation ? ": " : "", r.violation ? r.violation : "");
                        return 1;
                    }
                    double k = 1.0 / o.seeds;
                    m.jobs_per_hour += r.jobs_per_hour * k;
                    m.mean_jct += r.mean_jct * k;
                    m.p95_jct += r.p95_jct * k;
                    m.mem_util += r.mem_util * k;
                    m.mean_suspended += r.mean_suspended * k;
                    m.bytes_swapped += r.bytes_swapped * k;
                    m.mean_concurrent += r.mean_concurrent * k;
                    m.swap_outs += r.swap_outs;
                    m.step_asides += r.step_asides;
                    m.backfills += r.backfills;
                    m.oom_kills += r.oom_kills;
                    m.max_concurrent = r.max_concurrent > m.max_concurrent ? r.max_concurrent
                                                                          : m.max_concurrent;
                    fsum += r.factor * k;
                }
                oom |= m.oom_kills > 0;
                char fname[32];
                if (o.factors[f] > 0)
                    snprintf(fname, sizeof fname, "%.1f", o.factors[f]);
                else if (o.csv)
                    snprintf(fname, sizeof fname, "adaptive");
                else
                    snprintf(fname, sizeof fname, "adaptive(%.2f)", fsum);
                if (o.csv)
                    printf("%s,%s,%s,%.2f,%.1f,%.1f,%.4f,%.1f,%.2f,%u,%u,%u,%u,%u,%.1f\n",
                           sim_ov_dist_name((sim_ov_dist)w), fname, sa ? "yes" : "no",
                           m.jobs_per_hour, m.mean_jct, m.p95_jct, m.mem_util, m.mean_suspended,
                           m.bytes_swapped / SIM_GIB, m.swap_outs, m.step_asides, m.backfills,
                           m.oom_kills, m.max_concurrent, m.mean_concurrent);
                else
                    printf("%-8s %-13s %-5s %8.1f %9.1f %9.1f %5.3f %8.1f %8.1f %6u %7u %4u "
                           "%8u %8.1f\n",
                           sim_ov_dist_name((sim_ov_dist)w), fname, sa ? "yes" : "no",
                           m.jobs_per_hour, m.mean_jct, m.p95_jct, m.mem_util, m.mean_suspended,
                           m.bytes_swapped / SIM_GIB, m.step_asides, m.backfills, m.oom_kills,
                           m.max_concurrent, m.mean_concurrent);
            }
    }
    if (oom)
        fprintf(stderr, "convgpu sim: oversub: out-of-memory kills happened\n");
    return oom ? 1 : 0;
}

/* coexec_cli.c — `convgpu sim --experiment coexec-table4`: seed 003's Table 4 from our core and
 * interference model (coexec.c), as CSV beside the paper's numbers, and with --svg DIR the bars
 * DIR/coexec-table4.svg (ours filled, the paper's hollow). CSV, one row per (policy, job):
 *   policy,job,device,co_located,ours_s,paper_s
 * where co_located names the jobs that shared the job's GPU ("alone" when none), then per
 * policy a `total` row (the paper's total: the last job's end) and a `sum` row (the jobs' times
 * added up; the paper's computed from its row). */
#include <stdio.h>
#include <string.h>

#include "sim.h"

#define NGROUPS (SIM_COEXEC_JOBS + 1)

static void job_name(const sim_coexec_job *j, char *buf, size_t cap)
{
    snprintf(buf, cap, "%c%u", sim_coexec_apps[j->app].tag, j->copy);
}

static void co_located(const sim_coexec_result *r, unsigned j, char *buf, size_t cap)
{
    size_t n = 0;
    buf[0] = 0;
    for (unsigned k = 0; k < SIM_COEXEC_JOBS; k++) {
        if (k == j || r->job[k].device != r->job[j].device || n >= cap)
            continue;
        char name[8];
        job_name(&r->job[k], name, sizeof name);
        n += (size_t)snprintf(buf + n, cap - n, "%s%s", n ? "+" : "", name);
    }
    if (n == 0)
        snprintf(buf, cap, "alone");
}

int sim_coexec_main(int argc, char **argv)
{
    sim_exp_opts o = {0};
    int rc = sim_exp_opts_parse(argc, argv, "coexec-table4", false, &o);
    if (rc)
        return rc;
    sim_coexec_result r[SIM_COEXEC_POLICIES];
    for (unsigned p = 0; p < SIM_COEXEC_POLICIES; p++)
        if (sim_coexec_run(sim_coexec_policies[p], false, &r[p]) != 0) {
            fprintf(stderr, "convgpu sim: coexec-table4: the %s run failed\n",
                    cg_placement_policy_name(sim_coexec_policies[p]));
            return 1;
        }
    printf("policy,job,device,co_located,ours_s,paper_s\n");
    double ours[NGROUPS * SIM_COEXEC_POLICIES], paper[NGROUPS * SIM_COEXEC_POLICIES];
    for (unsigned p = 0; p < SIM_COEXEC_POLICIES; p++) {
        const char *pol = cg_placement_policy_name(sim_coexec_policies[p]);
        double paper_sum = 0;
        for (unsigned j = 0; j < SIM_COEXEC_JOBS; j++) {
            char name[8], with[64];
            job_name(&r[p].job[j], name, sizeof name);
            co_located(&r[p], j, with, sizeof with);
            printf("%s,%s,%u,%s,%.1f,%.0f\n", pol, name, r[p].job[j].device, with,
                   r[p].job[j].finished, sim_table4_paper[p][j]);
            paper_sum += sim_table4_paper[p][j];
            ours[j * SIM_COEXEC_POLICIES + p] = r[p].job[j].finished;
            paper[j * SIM_COEXEC_POLICIES + p] = sim_table4_paper[p][j];
        }
        printf("%s,total,,,%.1f,%.0f\n", pol, r[p].makespan, sim_table4_paper[p][SIM_COEXEC_JOBS]);
        printf("%s,sum,,,%.1f,%.0f\n", pol, r[p].sum, paper_sum);
        ours[SIM_COEXEC_JOBS * SIM_COEXEC_POLICIES + p] = r[p].makespan;
        paper[SIM_COEXEC_JOBS * SIM_COEXEC_POLICIES + p] = sim_table4_paper[p][SIM_COEXEC_JOBS];
    }
    if (!o.svg_dir)
        return 0;
    static const char *const groups[NGROUPS] = {"L1", "L2", "G1", "G2", "T1", "T2", "Q1", "Q2",
                                                "total"};
    const char *series[SIM_COEXEC_POLICIES];
    for (unsigned p = 0; p < SIM_COEXEC_POLICIES; p++)
        series[p] = cg_placement_policy_name(sim_coexec_policies[p]);
    char path[4096];
    if (sim_exp_svg_path(o.svg_dir, "coexec-table4.svg", path, sizeof path) != 0)
        return 1;
    if (sim_svg_bars(path, "Seed 003, Table 4: run time by placement (paper hollow)",
                     "Run time (s)", NGROUPS, groups, SIM_COEXEC_POLICIES, series, ours,
                     paper) != 0) {
        fprintf(stderr, "convgpu sim: cannot write %s\n", path);
        return 1;
    }
    return 0;
}

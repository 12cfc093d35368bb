/* test_sim_place.c — the papers' placement experiments in the simulator (issue 22 item 4),
 * through the real core with cg_core_check after every event:
 *   coexec-table4 (seed 003): the placements of its Figure 4 (binpack's and load-balance's
 *   exactly; standalone's groups, with the two LAMMPS apart because 2 x 8.3 GB exceed 12 GB),
 *   and the shapes of its Table 4 that our model reproduces: the totals rank standalone,
 *   load-balance, binpack; LAMMPS, GROMACS and QMCPACK fare best under standalone, TensorFlow
 *   worst there;
 *   gsaas-partitions (seed 002): at 1X the time falls as the partitions rise (Table 3), a larger
 *   sharing factor never helps and leaves 4x8 GB alone, gangs of 4 nodes start, no GPU holds
 *   more containers than partitions, and at 16 cGPUs the speedup lies in the paper's 2-4X
 *   (Figure 13);
 * and the CLI contract of both experiments and of --placement load-balance|standalone, through
 * the convgpu-sim executable given as argv[1]. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "sim.h"
#include "sim_exec.h"

enum { L1, L2, G1, G2, T1, T2, Q1, Q2 };

static bool coexec(cg_placement_policy pl, sim_coexec_result *r)
{
    if (sim_coexec_run(pl, true, r) == 0)
        return true;
    fprintf(stderr, "FAIL coexec %s: %s\n", cg_placement_policy_name(pl),
            r->violation ? r->violation : "run failed");
    failures++;
    return false;
}

#define DEV(r, j) ((r).job[j].device)
#define TIME(r, j) ((r).job[j].finished)

static void coexec_shapes(void)
{
    sim_coexec_result bp, sa, lb;
    if (!coexec(CG_PLACE_BINPACK, &bp) || !coexec(CG_PLACE_STANDALONE, &sa) ||
        !coexec(CG_PLACE_LOAD_BALANCE, &lb))
        return;
    /* Figure 4(c): each LAMMPS with a TensorFlow, both QMCPACK and GROMACS on one GPU. */
    expect(DEV(bp, L1) != DEV(bp, L2) && DEV(bp, T1) == DEV(bp, L1) && DEV(bp, T2) == DEV(bp, L2),
           "binpack: LAMMPS apart, each with a TensorFlow");
    expect(DEV(bp, Q1) == DEV(bp, Q2) && DEV(bp, G1) == DEV(bp, Q1) && DEV(bp, G2) == DEV(bp, Q1) &&
               DEV(bp, Q1) != DEV(bp, L1) && DEV(bp, Q1) != DEV(bp, L2),
           "binpack: QMCPACK x2 + GROMACS x2 on the third GPU");
    /* Figure 4(a): TensorFlow + LAMMPS twice, GROMACS + QMCPACK twice. */
    expect(DEV(lb, T1) != DEV(lb, T2) && DEV(lb, L1) == DEV(lb, T1) && DEV(lb, L2) == DEV(lb, T2),
           "load-balance: each TensorFlow with a LAMMPS");
    expect(DEV(lb, G1) != DEV(lb, G2) && DEV(lb, Q1) == DEV(lb, G1) && DEV(lb, Q2) == DEV(lb, G2),
           "load-balance: each GROMACS with a QMCPACK");
    /* Figure 4(b): equal applications together where memory allows. */
    expect(DEV(sa, T1) == DEV(sa, T2) && DEV(sa, Q1) == DEV(sa, Q2) && DEV(sa, T1) != DEV(sa, Q1),
           "standalone: the TensorFlow pair and the QMCPACK pair each on a GPU of their own");
    expect(DEV(sa, L1) != DEV(sa, L2), "standalone: 2 x 8.3 GB LAMMPS cannot share 12 GB");
    /* Table 4's totals: standalone < load-balance < binpack. */
    expect(sa.makespan < lb.makespan && lb.makespan < bp.makespan,
           "total: standalone < load-balance < binpack, as in Table 4");
    for (unsigned j = L1; j <= Q2; j++) {
        if (j == T1 || j == T2)
            continue;
        expect(TIME(sa, j) <= TIME(lb, j) && TIME(sa, j) <= TIME(bp, j),
               "LAMMPS, GROMACS, QMCPACK: standalone best");
    }
    expect(TIME(sa, T1) > TIME(lb, T1) && TIME(sa, T1) > TIME(bp, T1) &&
               TIME(lb, T1) <= TIME(bp, T1),
           "TensorFlow: standalone worst, load-balance best");
}

static bool part(unsigned parts, double f, uint64_t seed, sim_part_result *r)
{
    sim_part_params p = {.parts = parts, .overhead = f, .jobs = 400, .seed = seed,
                         .placement = CG_PLACE_LEAST_LOADED, .check = true};
    if (sim_part_run(&p, r) == 0)
        return true;
    fprintf(stderr, "FAIL gsaas %u/GPU %.1fX seed %llu: %s\n", parts, f,
            (unsigned long long)seed, r->violation ? r->violation : "run failed");
    failures++;
    return false;
}

static void partition_shapes(void)
{
    static const double fs[3] = {1.0, 1.5, 2.0};
    double mean[3][SIM_PART_CONFIGS] = {{0}};
    const unsigned seeds = 3;
    for (unsigned f = 0; f < 3; f++)
        for (unsigned c = 0; c < SIM_PART_CONFIGS; c++)
            for (uint64_t s = 1; s <= seeds; s++) {
                sim_part_result r;
                if (!part(sim_part_configs[c], fs[f], s, &r))
                    return;
                mean[f][c] += r.finished / seeds;
                expect(r.max_per_gpu <= sim_part_configs[c], "no GPU above its partitions");
                expect(r.max_per_gpu == sim_part_configs[c], "a backlog fills every partition");
                expect(r.gang_max == 4, "4-node jobs gang-start");
            }
    for (unsigned c = 1; c < SIM_PART_CONFIGS; c++)
        expect(mean[0][c] < mean[0][c - 1], "1X: more partitions, less time (Table 3)");
    for (unsigned c = 0; c < SIM_PART_CONFIGS; c++)
        expect(mean[0][c] <= mean[1][c] && mean[1][c] <= mean[2][c],
               "a larger sharing factor never helps");
    expect(mean[0][0] == mean[2][0], "4x8 GB never shares a GPU: no overhead");
    for (unsigned f = 0; f < 3; f++) {
        double speedup = mean[0][0] / mean[f][2];
        expect(speedup >= 2 && speedup <= 4.5, "16 cGPUs: speedup in the paper's 2-4X");
    }
    sim_part_params bad[] = {{.parts = 0, .overhead = 1, .jobs = 1},
                             {.parts = 3, .overhead = 1, .jobs = 1},
                             {.parts = 2, .overhead = 0.5, .jobs = 1},
                             {.parts = 2, .overhead = 1, .jobs = 0}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        sim_part_result r;
        expect(sim_part_run(&bad[i], &r) == -1, "bad partition parameters refused");
    }
}

static bool has_file(const char *name, const char *head)
{
    char path[256], buf[8] = {0};
    snprintf(path, sizeof path, "%s/svg/%s", dir, name);
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    size_t n = fread(buf, 1, 5, f);
    fclose(f);
    return n == 5 && strncmp(buf, head, 5) == 0;
}

static unsigned lines(const char *s)
{
    unsigned n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

static void cli(void)
{
    static char out[1 << 16];
    char args[512];
    long err;
    expect(run("--experiment list", out, sizeof out, &err) == 0 &&
               strstr(out, "coexec-table4") && strstr(out, "gsaas-partitions"),
           "list names both experiments");
    snprintf(args, sizeof args, "--experiment coexec-table4 --svg %s/svg", dir);
    expect(run(args, out, sizeof out, &err) == 0 && err == 0, "coexec-table4 runs quietly");
    expect(strncmp(out, "policy,job,device,co_located,ours_s,paper_s\n", 44) == 0,
           "coexec-table4 CSV header");
    expect(lines(out) == 1 + 3 * 10, "coexec-table4: 3 policies x (8 jobs + total + sum)");
    expect(strstr(out, "binpack,total,") && strstr(out, ",3450\n") &&
               strstr(out, "standalone,total,") && strstr(out, ",3067\n") &&
               strstr(out, "load-balance,total,") && strstr(out, ",3111\n"),
           "coexec-table4: the paper's totals beside ours");
    expect(has_file("coexec-table4.svg", "<?xml"), "coexec-table4.svg written");
    snprintf(args, sizeof args, "--experiment gsaas-partitions --seeds 2 --jobs 100 --svg %s/svg",
             dir);
    expect(run(args, out, sizeof out, &err) == 0 && err == 0, "gsaas-partitions runs quietly");
    expect(strncmp(out, "overhead,cgpus,partition_gb,hours,paper_hours,speedup,paper_speedup,"
                        "max_per_gpu\n", 78) == 0 && lines(out) == 13,
           "gsaas-partitions CSV: header + 3 factors x 4 partitionings");
    expect(strstr(out, "1.0,32,1,") && strstr(out, ",6.89,"), "Table 3's 6.89 h beside ours");
    expect(has_file("gsaas-table3.svg", "<?xml") && has_file("gsaas-fig13.svg", "<?xml"),
           "gsaas SVGs written");
    static const char *const refused[] = {
        "--experiment gsaas-partitions --seeds 0", "--experiment gsaas-partitions --jobs x",
        "--experiment coexec-table4 --seeds 3", "--experiment coexec-table4 --format table",
        "--experiment coexec-table4 --svg", "--placement worst-fit"};
    for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
        char what[128];
        snprintf(what, sizeof what, "refused with exit 2, one line, nothing on stdout: %s",
                 refused[i]);
        expect(run(refused[i], out, sizeof out, &err) == 2 && out[0] == 0 && err > 0, what);
    }
    expect(run("--workload gsaas --placement load-balance --containers 30 --seeds 1 --format csv",
               out, sizeof out, &err) == 0 && strstr(out, "+load-balance,30,1,"),
           "--placement load-balance in the generic simulator");
    expect(run("--workload gsaas --placement standalone --containers 30 --seeds 1 --format csv",
               out, sizeof out, &err) == 0 && strstr(out, "+standalone,30,1,"),
           "--placement standalone in the generic simulator");
}

int main(int argc, char **argv)
{
    int rc = sim_exec_start(argc, argv, "sim_place");
    if (rc)
        return rc;
    coexec_shapes();
    partition_shapes();
    cli();
    return sim_exec_end("test_sim_place: ok");
}

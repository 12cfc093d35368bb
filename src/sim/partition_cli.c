/* partition_cli.c — `convgpu sim --experiment gsaas-partitions`: seed 002's Table 3 (the
 * workload's processing time with the pool cut into 4x8, 8x4, 16x2 and 32x1 GB) and Figure 13
 * (the speedup over 4x8 with sharing factors 1X, 1.5X and 2X) from partition.c, means over
 * --seeds K (10) workloads of --jobs N (400) jobs, as CSV:
 *   overhead,cgpus,partition_gb,hours,paper_hours,speedup,paper_speedup,max_per_gpu
 * The paper's hours are its Table 3 (1X only); its speedups at 1X are computed from them; for
 * 1.5X and 2X the paper gives a figure and no numbers ("2-4X" at 16 cGPUs), so those cells are
 * empty. --svg DIR writes DIR/gsaas-table3.svg (hours, 1X, paper hollow) and
 * DIR/gsaas-fig13.svg (speedup per configuration and factor). Placement: least-loaded (GSaaS's
 * Algorithm 1). */
#include <stdio.h>

#include "sim.h"

#define NFACTORS 3
static const double factors[NFACTORS] = {1.0, 1.5, 2.0};

int sim_part_main(int argc, char **argv)
{
    sim_exp_opts o = {.seeds = 10, .jobs = 400};
    int rc = sim_exp_opts_parse(argc, argv, "gsaas-partitions", true, &o);
    if (rc)
        return rc;
    double hours[NFACTORS][SIM_PART_CONFIGS] = {{0}};
    unsigned most[NFACTORS][SIM_PART_CONFIGS] = {{0}};
    for (unsigned f = 0; f < NFACTORS; f++)
        for (unsigned c = 0; c < SIM_PART_CONFIGS; c++)
            for (unsigned s = 1; s <= o.seeds; s++) {
                sim_part_params p = {.parts = sim_part_configs[c], .overhead = factors[f],
                                     .jobs = o.jobs, .seed = s,
                                     .placement = CG_PLACE_LEAST_LOADED};
                sim_part_result r;
                if (sim_part_run(&p, &r) != 0) {
                    fprintf(stderr, "convgpu sim: gsaas-partitions: run failed (%u cGPUs, "
                                    "%.1fX, seed %u)\n",
                            SIM_PART_GPUS * p.parts, p.overhead, s);
                    return 1;
                }
                hours[f][c] += r.finished / 3600 / o.seeds;
                most[f][c] = r.max_per_gpu > most[f][c] ? r.max_per_gpu : most[f][c];
            }
    printf("overhead,cgpus,partition_gb,hours,paper_hours,speedup,paper_speedup,max_per_gpu\n");
    double speed[NFACTORS * SIM_PART_CONFIGS], paper_speed[NFACTORS * SIM_PART_CONFIGS];
    double table3[SIM_PART_CONFIGS], paper3[SIM_PART_CONFIGS];
    for (unsigned f = 0; f < NFACTORS; f++)
        for (unsigned c = 0; c < SIM_PART_CONFIGS; c++) {
            unsigned cg = SIM_PART_GPUS * sim_part_configs[c];
            double sp = hours[0][0] / hours[f][c];
            double psp = f == 0 ? sim_part_paper_hours[0] / sim_part_paper_hours[c] : -1;
            printf("%.1f,%u,%u,%.2f,", factors[f], cg, 8 / sim_part_configs[c], hours[f][c]);
            if (f == 0)
                printf("%.2f", sim_part_paper_hours[c]);
            printf(",%.2f,", sp);
            if (psp > 0)
                printf("%.2f", psp);
            printf(",%u\n", most[f][c]);
            speed[c * NFACTORS + f] = sp;
            paper_speed[c * NFACTORS + f] = psp;
            if (f == 0) {
                table3[c] = hours[0][c];
                paper3[c] = sim_part_paper_hours[c];
            }
        }
    if (!o.svg_dir)
        return 0;
    static const char *const groups[SIM_PART_CONFIGS] = {"4x8 GB", "8x4 GB", "16x2 GB",
                                                         "32x1 GB"};
    static const char *const one[1] = {"1X"}, *const series[NFACTORS] = {"1X", "1.5X", "2X"};
    char path[4096];
    if (sim_exp_svg_path(o.svg_dir, "gsaas-table3.svg", path, sizeof path) != 0)
        return 1;
    if (sim_svg_bars(path, "Seed 002, Table 3: workload time by partitioning (paper hollow)",
                     "Processing time (h)", SIM_PART_CONFIGS, groups, 1, one, table3,
                     paper3) != 0) {
        fprintf(stderr, "convgpu sim: cannot write %s\n", path);
        return 1;
    }
    if (sim_exp_svg_path(o.svg_dir, "gsaas-fig13.svg", path, sizeof path) != 0)
        return 1;
    if (sim_svg_bars(path, "Seed 002, Figure 13: speedup over 4x8 GB by sharing factor",
                     "Speedup", SIM_PART_CONFIGS, groups, NFACTORS, series, speed,
                     paper_speed) != 0) {
        fprintf(stderr, "convgpu sim: cannot write %s\n", path);
        return 1;
    }
    return 0;
}

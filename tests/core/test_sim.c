/* test_sim.c — the `convgpu sim` contract, run through the convgpu-sim executable: the CSV
 * header and row count, determinism (same arguments, same bytes), bad arguments (exit 2,
 * nothing on stdout), --help, the GSaaS workload, SVG output, policy lists, the experiments
 * table, and two measured properties: issue 21's challenge and the paper's Table V finding. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "sim_exec.h"

static int lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

/* Issue 21's challenge, measured: at every N = 18..38 (100 seeds) aging-fit finishes no later
 * than Best-Fit and keeps the average suspended time at or below FIFO's. */
static void challenge(void)
{
    static char out[1 << 16];
    long el;
    expect(run("--experiment challenge", out, sizeof out, &el) == 0, "challenge runs");
    static const char head[] = "containers,finished_best_fit_s,finished_aging_fit_s,";
    expect(strncmp(out, head, sizeof head - 1) == 0, "challenge header");
    expect(lines(out) == 1 + 11 + 1, "challenge: 11 sizes and the worst row");
    for (char *line = strchr(out, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
        char *end = strchr(line + 1, '\n');
        if (!end || end - line < 4 || strncmp(end - 4, ",yes", 4) != 0) {
            fprintf(stderr, "FAIL challenge row not met: %.*s\n",
                    end ? (int)(end - line - 1) : 80, line + 1);
            failures++;
        }
    }
}

/* The paper's finding on waiting (Table V, N >= 26): Best-Fit waits longer than FIFO. With
 * the linear run-time model and ps:2 the mean over N = 26..38 (30 seeds) shows it (+12.7%);
 * with the old equal-steps-per-doubling model (--runtime log) Best-Fit waited 11.5% less. At
 * the calibrated ps:1.5 the gap is +2.1%, too small to assert (docs/SCHEDULING.md, Results). */
static void paper_waiting(void)
{
    static char out[1 << 20];
    long el;
    expect(run("--format csv --containers 26..38 --seeds 30 --policy fifo,best-fit "
               "--interference ps:2", out,
               sizeof out, &el) == 0, "paper waiting run");
    double sum[2] = {0, 0};
    for (char *l = strchr(out, '\n'); l && l[1]; l = strchr(l + 1, '\n')) {
        char pol[32];
        unsigned n, seed;
        double fin, avg;
        if (sscanf(l + 1, "%31[^,],%u,%u,%lf,%lf", pol, &n, &seed, &fin, &avg) == 5)
            sum[strcmp(pol, "best-fit") == 0] += avg;
    }
    expect(sum[0] > 0 && sum[1] > 1.05 * sum[0],
           "best-fit waits at least 5% longer than fifo over N = 26..38");
}

/* The urgent-container turnaround of the last table row (N = 8): the 10th column. */
static double urgent_turnaround(const char *table, double *swaps)
{
    const char *last = NULL;
    for (const char *q = table; (q = strstr(q, "\nfirst-fit")); q++)
        last = q + 1;
    double v[11] = {0};
    char pl[32], pol[32];
    if (!last || sscanf(last, "%31s %31s %lf %lf %lf %lf %lf %lf%% %lf %lf %lf", pl, pol, &v[0],
                        &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8]) != 11)
        return -1;
    *swaps = v[8];
    return v[7];
}

/* Issue 20 (seed 001's Figure 18 setting): CNN containers every 5 s on one GPU, every third of
 * priority 5. With swap, the urgent ones move lower-priority running containers out and finish
 * much sooner; without, they wait behind them. Nothing deadlocks either way. */
static void swap_priorities(void)
{
    static char a[1 << 16], b[1 << 16];
    long el;
    const char *base = "--workload alexnet --policy fifo --seeds 3 --urgent-every 3";
    char args[256];
    snprintf(args, sizeof args, "%s --swap-limit off", base);
    expect(run(args, a, sizeof a, &el) == 0, "alexnet, suspend only");
    snprintf(args, sizeof args, "%s --swap-limit 64GiB --swap-bandwidth 12", base);
    expect(run(args, b, sizeof b, &el) == 0, "alexnet, swap");
    double s_off, s_on, off = urgent_turnaround(a, &s_off), on = urgent_turnaround(b, &s_on);
    fprintf(stderr, "alexnet N=8: urgent turnaround %.1f s suspend-only, %.1f s with swap (%.1f "
                    "swaps)\n", off, on, s_on);
    expect(off > 0 && s_off == 0, "suspend only: no swap");
    expect(on > 0 && s_on >= 1, "swap: the core ordered swaps");
    expect(on < 0.85 * off, "swap: urgent containers finish at least 15% sooner");
}

/* Issue 38 item 3: the same setting with a 2 GiB swap budget, below one victim's 2.6 GiB: swap
 * alone cannot preempt anybody; with the scheduler's choice of back end the victims are
 * checkpointed whole (outside the budget) and the urgent containers finish sooner. */
static void checkpoint_choice(void)
{
    static char a[1 << 16], b[1 << 16];
    long el;
    const char *base = "--workload alexnet --policy fifo --seeds 1 --urgent-every 3 "
                       "--swap-limit 2GiB";
    char args[256];
    snprintf(args, sizeof args, "%s --auto-pause no", base);
    expect(run(args, a, sizeof a, &el) == 0, "alexnet, 2 GiB budget, swap only");
    snprintf(args, sizeof args, "%s --auto-pause yes", base);
    expect(run(args, b, sizeof b, &el) == 0, "alexnet, 2 GiB budget, the choice");
    double s_off, s_on, off = urgent_turnaround(a, &s_off), on = urgent_turnaround(b, &s_on);
    fprintf(stderr, "alexnet N=8, 2 GiB budget: urgent turnaround %.1f s swap only, %.1f s with "
                    "the choice (%.1f moves)\n", off, on, s_on);
    expect(off > 0 && s_off == 0, "swap only: the budget holds no victim");
    expect(on > 0 && s_on >= 1, "the choice: victims checkpointed");
    expect(on < 0.85 * off, "the choice: urgent containers finish at least 15% sooner");
    expect(run("--experiment fig18-checkpoint", b, sizeof b, &el) == 0, "fig18-checkpoint runs");
}

/* Mean of CSV column `col` (1-based) over the rows of a per-run CSV, and the sum of column 10
 * (swaps). */
static double csv_mean(const char *csv, int col, double *swaps)
{
    double sum = 0;
    int n = 0;
    *swaps = 0;
    for (const char *l = strchr(csv, '\n'); l && l[1]; l = strchr(l + 1, '\n')) {
        const char *f = l + 1;
        for (int i = 1; i < col && f; i++)
            f = strchr(f, ',') ? strchr(f, ',') + 1 : NULL;
        const char *g = f;
        for (int i = col; i < 10 && g; i++)
            g = strchr(g, ',') ? strchr(g, ',') + 1 : NULL;
        if (!f || !g)
            break;
        sum += strtod(f, NULL);
        *swaps += strtod(g, NULL);
        n++;
    }
    return n ? sum / n : -1;
}

/* With equal priorities, swap gives Random back the partial assignments it strands: less
 * waiting at N = 30 (docs/SCHEDULING.md, "Priorities and swap"); FIFO orders no swap. */
static void swap_reclaims(void)
{
    static char a[1 << 16], b[1 << 16];
    long el;
    double sa, sb;
    expect(run("--format csv --policy random --containers 30 --seeds 6", a, sizeof a, &el) == 0,
           "random, suspend only");
    expect(run("--format csv --policy random --containers 30 --seeds 6 --swap-limit 64GiB", b,
               sizeof b, &el) == 0, "random, swap");
    double off = csv_mean(a, 5, &sa), on = csv_mean(b, 5, &sb);
    fprintf(stderr, "random N=30: avg suspended %.1f s suspend-only, %.1f s with swap (%.0f swaps)\n",
            off, on, sb);
    expect(sa == 0 && sb > 0, "random: swaps only with swap on");
    expect(on < off, "random: swap shortens the waiting");
    expect(run("--format csv --policy fifo --containers 30 --seeds 6 --swap-limit 64GiB", b,
               sizeof b, &el) == 0 && csv_mean(b, 5, &sb) > 0 && sb == 0,
           "fifo: no swap with equal priorities");
}

int main(int argc, char **argv)
{
    int start = sim_exec_start(argc, argv, "test-sim");
    if (start != 0)
        return start;
    swap_priorities();
    checkpoint_choice();
    swap_reclaims();
    static char a[1 << 20], b[1 << 20];
    long el;
    const char *args = "--format csv --containers 4..10 --seeds 2";
    expect(run(args, a, sizeof a, &el) == 0, "csv run exits 0");
    static const char header[] =
        "policy,containers,seed,finished_s,avg_suspended_s,max_suspended_s,mem_util,"
        "avg_turnaround_s,urgent_turnaround_s,swaps\n";
    expect(strncmp(a, header, sizeof header - 1) == 0, "csv header");
    expect(lines(a) == 1 + 5 * 4 * 2, "csv rows: 5 policies x 4 sizes x 2 seeds");
    expect(strstr(a, "\nbest-fit,10,2,") != NULL, "csv row naming");
    expect(run(args, b, sizeof b, &el) == 0 && strcmp(a, b) == 0, "same seed, same CSV");
    expect(run("--format csv --containers 6 --seeds 3 --policy random", a, sizeof a, &el) == 0 &&
           lines(a) == 4, "single N and policy");

    static const char *const bad[] = {
        "--policy nope", "--placement worst", "--containers 0", "--containers 9..3",
        "--containers x", "--seeds 0", "--interference ps:0", "--interference ps:",
        "--interference fair", "--gpus 1GiB", "--gpus 0x8GiB", "--gpus 4xbig", "--format xml",
        "--workload hpc", "--bogus 1", "stray", "--seeds", "--context 1GiB", "--runtime cubic",
        "--policy fifo,", "--policy fifo,nope", "--experiment nope", "--experiment",
        "--experiment challenge --policy fifo", "--swap-limit 0", "--swap-limit lots",
        "--swap-bandwidth 0", "--swap-bandwidth -3", "--steps 0", "--steps 65",
        "--urgent-every 0", "--workload alexnets"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        int rc = run(bad[i], a, sizeof a, &el);
        if (rc != 2 || a[0] || el == 0) {
            fprintf(stderr, "FAIL bad args '%s': rc %d, stdout %zu bytes, stderr %ld bytes\n",
                    bad[i], rc, strlen(a), el);
            failures++;
        }
    }
    expect(run("--help", a, sizeof a, &el) == 0 && strstr(a, "--interference"), "--help");
    expect(run("--containers 8 --seeds 1", a, sizeof a, &el) == 0 && strstr(a, "Table IV"),
           "paper tables");
    expect(run("--workload gsaas --containers 40 --seeds 1 --policy fifo", a, sizeof a, &el) == 0 &&
               strstr(a, "least-loaded") && strstr(a, "binpack") && strstr(a, "jobs/h"),
           "gsaas placements");
    expect(run("--workload gsaas --containers 30 --seeds 2 --format csv --policy fifo "
               "--placement binpack", a, sizeof a, &el) == 0 && strstr(a, "\nfifo+binpack,30,2,"),
           "placement tagged in csv");
    char cmd[256];
    snprintf(cmd, sizeof cmd, "--containers 4..8 --seeds 1 --svg %s/svg", dir);
    expect(run(cmd, a, sizeof a, &el) == 0, "svg run");
    expect(run("--format csv --containers 6 --seeds 1 --policy fifo,best-fit", a, sizeof a, &el) ==
               0 && lines(a) == 3 && strstr(a, "\nfifo,6,1,") && strstr(a, "\nbest-fit,6,1,"),
           "policy list");
    expect(run("--experiment list", a, sizeof a, &el) == 0 && strstr(a, "convgpu-paper") &&
               strstr(a, "\nchallenge "), "experiment list");
    expect(run("--experiment convgpu-paper --containers 4..6 --seeds 1", a, sizeof a, &el) == 0 &&
               strncmp(a, header, sizeof header - 1) == 0 && lines(a) == 1 + 5 * 2,
           "convgpu-paper: per-run CSV, options beside it override the preset");
    challenge();
    paper_waiting();
    snprintf(cmd, sizeof cmd, "%s/svg/finished.svg", dir);
    FILE *f = fopen(cmd, "r");
    expect(f && fread(b, 1, 200, f) > 0 && strstr(b, "<svg"), "finished.svg written");
    if (f)
        fclose(f);
    return sim_exec_end("sim contract tests passed");
}

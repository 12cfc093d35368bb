/* bench_ab.c — interleaved wall-clock timing of whole commands: A, B (, C ...) run one after
 * another, REPS times, alternating the order every repetition (A B C, C B A, ...) so drift and
 * order effects hit every command alike. Prints, per command, the median and spread of its run
 * times and, against the first command, the ratio of medians, the median of the paired ratios
 * (each repetition's B / A) and of the paired differences (each repetition's B - A), each
 * with a distribution-free 95% confidence interval of that median (order statistics: no
 * assumption about the shape of the noise):
 *   cmd=K label=L n=REPS med_ms=... p25_ms=... p75_ms=... min_ms=... max_ms=...
 *         [ratio=... pratio=... pratio_p25=... pratio_p75=... pratio_lo95=... pratio_hi95=...
 *          diff_med_ms=... diff_p25_ms=... diff_p75_ms=... diff_lo95_ms=... diff_hi95_ms=...]
 * On a shared, noisy machine the paired figures are the steadier ones: both runs of a pair are
 * adjacent in time, so load that comes and goes cancels out of their ratio.
 * A command that fails (non-zero exit) stops the run with exit status 1. --raw FILE also writes
 * every repetition's times (rep, then one column per command, ms), to see drift in a run.
 *
 * Usage: bench_ab [--reps N] [--warmup W] [--labels a,b,...] [--raw FILE] -- CMD_A ARGS --- CMD_B
 *        ARGS [--- ...] */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define MAXCMD 8

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double quant(double *v, int n, double q) /* v sorted */
{
    int i = (int)(q * (n - 1) + 0.5);
    return v[i];
}

/* The 95% confidence interval of the median of n sorted values: the values of ranks
 * (n+1)/2 -+ 0.98 sqrt(n) (1-based; the normal approximation of the binomial ranks, fine from
 * n of about 10), clamped to the sample. */
static void median_ci(const double *v, int n, double *lo, double *hi)
{
    double half = 0.98 * sqrt((double)n), mid = (n + 1) / 2.0;
    int r = (int)floor(mid - half), s = (int)ceil(mid + half);
    if (r < 1)
        r = 1;
    if (s > n)
        s = n;
    *lo = v[r - 1];
    *hi = v[s - 1];
}

static double run(char **cmd)
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    pid_t pid;
    double t0 = now_ms();
    int e = posix_spawnp(&pid, cmd[0], &fa, NULL, cmd, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (e != 0) {
        fprintf(stderr, "bench_ab: cannot run %s: %s\n", cmd[0], strerror(e));
        exit(1);
    }
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    double t1 = now_ms();
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        fprintf(stderr, "bench_ab: %s failed (status %d)\n", cmd[0], st);
        exit(1);
    }
    return t1 - t0;
}

int main(int argc, char **argv)
{
    int reps = 20, warmup = 2;
    char *labels = NULL;
    const char *raw_path = NULL;
    int i = 1;
    for (; i < argc; i++) {
        if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (strcmp(argv[i], "--warmup") == 0 && i + 1 < argc)
            warmup = atoi(argv[++i]);
        else if (strcmp(argv[i], "--labels") == 0 && i + 1 < argc)
            labels = argv[++i];
        else if (strcmp(argv[i], "--raw") == 0 && i + 1 < argc)
            raw_path = argv[++i];
        else if (strcmp(argv[i], "--") == 0) {
            i++;
            break;
        } else {
            fprintf(stderr, "usage: bench_ab [--reps N] [--warmup W] [--labels a,b] [--raw FILE] "
                            "-- A --- B\n");
            return 2;
        }
    }
    char **cmds[MAXCMD];
    int ncmd = 0;
    if (i < argc)
        cmds[ncmd++] = argv + i;
    for (; i < argc; i++) {
        if (strcmp(argv[i], "---") == 0) {
            argv[i] = NULL;
            if (ncmd == MAXCMD || i + 1 >= argc)
                return 2;
            cmds[ncmd++] = argv + i + 1;
        }
    }
    if (ncmd < 1 || reps < 1)
        return 2;
    const char *label[MAXCMD] = {0};
    for (int k = 0; k < ncmd; k++) {
        label[k] = labels ? strsep(&labels, ",") : NULL;
        if (!label[k])
            label[k] = cmds[k][0];
    }
    FILE *raw = NULL;
    if (raw_path && !(raw = fopen(raw_path, "we"))) {
        fprintf(stderr, "bench_ab: cannot write %s: %s\n", raw_path, strerror(errno));
        return 1;
    }
    double *t[MAXCMD], *d[MAXCMD], *q[MAXCMD];
    for (int k = 0; k < ncmd; k++) {
        t[k] = calloc((size_t)reps, sizeof(double));
        d[k] = calloc((size_t)reps, sizeof(double));
        q[k] = calloc((size_t)reps, sizeof(double));
        if (!t[k] || !d[k] || !q[k])
            return 1;
    }
    for (int r = -warmup; r < reps; r++) {
        double one[MAXCMD];
        for (int j = 0; j < ncmd; j++) {
            int k = (r & 1) ? ncmd - 1 - j : j;
            one[k] = run(cmds[k]);
        }
        if (r < 0)
            continue;
        if (raw) {
            fprintf(raw, "%d", r);
            for (int k = 0; k < ncmd; k++)
                fprintf(raw, " %.3f", one[k]);
            fprintf(raw, "\n");
        }
        for (int k = 0; k < ncmd; k++) {
            t[k][r] = one[k];
            d[k][r] = one[k] - one[0];
            q[k][r] = one[0] > 0 ? one[k] / one[0] : 0;
        }
    }
    if (raw && fclose(raw) != 0) {
        fprintf(stderr, "bench_ab: cannot write %s: %s\n", raw_path, strerror(errno));
        return 1;
    }
    double med0 = 0;
    for (int k = 0; k < ncmd; k++) {
        qsort(t[k], (size_t)reps, sizeof(double), cmp_double);
        qsort(d[k], (size_t)reps, sizeof(double), cmp_double);
        qsort(q[k], (size_t)reps, sizeof(double), cmp_double);
        double med = quant(t[k], reps, 0.5);
        if (k == 0)
            med0 = med;
        printf("cmd=%d label=%s n=%d med_ms=%.3f p25_ms=%.3f p75_ms=%.3f min_ms=%.3f max_ms=%.3f",
               k, label[k], reps, med, quant(t[k], reps, 0.25), quant(t[k], reps, 0.75), t[k][0],
               t[k][reps - 1]);
        if (k > 0) {
            double qlo, qhi, dlo, dhi;
            median_ci(q[k], reps, &qlo, &qhi);
            median_ci(d[k], reps, &dlo, &dhi);
            printf(" ratio=%.4f pratio=%.4f pratio_p25=%.4f pratio_p75=%.4f pratio_lo95=%.4f "
                   "pratio_hi95=%.4f diff_med_ms=%.3f diff_p25_ms=%.3f diff_p75_ms=%.3f "
                   "diff_lo95_ms=%.3f diff_hi95_ms=%.3f",
                   med / med0, quant(q[k], reps, 0.5), quant(q[k], reps, 0.25),
                   quant(q[k], reps, 0.75), qlo, qhi, quant(d[k], reps, 0.5),
                   quant(d[k], reps, 0.25), quant(d[k], reps, 0.75), dlo, dhi);
        }
        printf("\n");
    }
    return 0;
}

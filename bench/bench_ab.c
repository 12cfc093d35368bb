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
 * --base K compares against command K (0-based) instead of the first; --replay FILE reads the
 * times from such a raw file instead of running anything, so that one run can be compared
 * against two of its commands (each figure still paired within a repetition).
 *
 * Usage: bench_ab [--reps N] [--warmup W] [--labels a,b,...] [--raw FILE] [--base K] -- CMD_A
 *        ARGS --- CMD_B ARGS [--- ...]
 *        bench_ab --replay FILE [--labels a,b,...] [--base K] */
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

/* The whole-number argument of an option, or -1 when it is not one (the caller says so). */
static int count_arg(const char *s)
{
    char *end = NULL;
    errno = 0;
    long v = strtol(s, &end, 10);
    return errno || end == s || *end || v < 0 || v > 1000000 ? -1 : (int)v;
}

/* Reads a file --raw wrote: "REP T0 T1 ..." per line, the same number of times on each.
 * Fills t[k][r] (allocated here) and returns the number of repetitions, or -1 (said why). */
static int load_raw(const char *path, double *t[MAXCMD], int *ncmd)
{
    FILE *f = fopen(path, "re");
    if (!f) {
        fprintf(stderr, "bench_ab: cannot read %s: %s\n", path, strerror(errno));
        return -1;
    }
    int reps = 0, cap = 0, line = 0;
    char buf[1024];
    *ncmd = 0;
    while (fgets(buf, sizeof buf, f)) {
        line++;
        double v[MAXCMD];
        int n = 0;
        char *save = NULL, *tok = strtok_r(buf, " \t\n", &save); /* the repetition's number */
        for (tok = tok ? strtok_r(NULL, " \t\n", &save) : NULL; tok;
             tok = strtok_r(NULL, " \t\n", &save)) {
            char *end = NULL;
            double x = strtod(tok, &end);
            if (n == MAXCMD || end == tok || *end || !(x >= 0)) {
                n = -1;
                break;
            }
            v[n++] = x;
        }
        if (n < 1 || (*ncmd && n != *ncmd)) {
            fprintf(stderr, "bench_ab: %s:%d: not a line of times as --raw writes them\n", path,
                    line);
            fclose(f);
            return -1;
        }
        *ncmd = n;
        if (reps == cap) {
            cap = cap ? 2 * cap : 64;
            for (int k = 0; k < n; k++) {
                double *grown = realloc(t[k], (size_t)cap * sizeof(double));
                if (!grown) {
                    fprintf(stderr, "bench_ab: out of memory reading %s\n", path);
                    fclose(f);
                    return -1;
                }
                t[k] = grown;
            }
        }
        for (int k = 0; k < n; k++)
            t[k][reps] = v[k];
        reps++;
    }
    fclose(f);
    if (reps == 0)
        fprintf(stderr, "bench_ab: %s holds no repetitions\n", path);
    return reps ? reps : -1;
}

/* Runs the commands REPS times, the order reversed every repetition; fills t[k][r]. */
static int run_all(char **cmds[MAXCMD], int ncmd, int reps, int warmup, FILE *raw,
                   double *t[MAXCMD])
{
    for (int k = 0; k < ncmd; k++)
        if (!(t[k] = calloc((size_t)reps, sizeof(double))))
            return -1;
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
        for (int k = 0; k < ncmd; k++)
            t[k][r] = one[k];
    }
    return 0;
}

/* Prints each command's line: its spread, and its paired figures against command `base`. */
static int report(double *t[MAXCMD], int ncmd, int reps, int base, const char *label[MAXCMD])
{
    double *d = calloc((size_t)reps, sizeof(double)), *q = calloc((size_t)reps, sizeof(double));
    double *sorted = calloc((size_t)reps, sizeof(double));
    if (!d || !q || !sorted) {
        free(d);
        free(q);
        free(sorted);
        return -1;
    }
    memcpy(sorted, t[base], (size_t)reps * sizeof(double));
    qsort(sorted, (size_t)reps, sizeof(double), cmp_double);
    double med_base = quant(sorted, reps, 0.5);
    for (int k = 0; k < ncmd; k++) {
        for (int r = 0; r < reps; r++) {
            d[r] = t[k][r] - t[base][r];
            q[r] = t[base][r] > 0 ? t[k][r] / t[base][r] : 0;
        }
        memcpy(sorted, t[k], (size_t)reps * sizeof(double));
        qsort(sorted, (size_t)reps, sizeof(double), cmp_double);
        qsort(d, (size_t)reps, sizeof(double), cmp_double);
        qsort(q, (size_t)reps, sizeof(double), cmp_double);
        double med = quant(sorted, reps, 0.5);
        printf("cmd=%d label=%s n=%d med_ms=%.3f p25_ms=%.3f p75_ms=%.3f min_ms=%.3f max_ms=%.3f",
               k, label[k], reps, med, quant(sorted, reps, 0.25), quant(sorted, reps, 0.75),
               sorted[0], sorted[reps - 1]);
        if (k != base) {
            double qlo, qhi, dlo, dhi;
            median_ci(q, reps, &qlo, &qhi);
            median_ci(d, reps, &dlo, &dhi);
            printf(" ratio=%.4f pratio=%.4f pratio_p25=%.4f pratio_p75=%.4f pratio_lo95=%.4f "
                   "pratio_hi95=%.4f diff_med_ms=%.3f diff_p25_ms=%.3f diff_p75_ms=%.3f "
                   "diff_lo95_ms=%.3f diff_hi95_ms=%.3f",
                   med / med_base, quant(q, reps, 0.5), quant(q, reps, 0.25),
                   quant(q, reps, 0.75), qlo, qhi, quant(d, reps, 0.5), quant(d, reps, 0.25),
                   quant(d, reps, 0.75), dlo, dhi);
        }
        printf("\n");
    }
    free(d);
    free(q);
    free(sorted);
    return 0;
}

static int usage(void)
{
    fprintf(stderr, "usage: bench_ab [--reps N] [--warmup W] [--labels a,b] [--raw FILE] "
                    "[--base K] -- A --- B\n"
                    "       bench_ab --replay FILE [--labels a,b] [--base K]\n");
    return 2;
}

/* Runs the commands (or reads a replay's times) into t, then reports; the exit status. t is
 * the caller's to free, whatever happened. */
static int compare(char **cmds[MAXCMD], int ncmd, const char *replay, const char *raw_path,
                   char *labels, int reps, int warmup, int base, double *t[MAXCMD])
{
    if (replay) {
        reps = load_raw(replay, t, &ncmd);
        if (reps < 0)
            return 1;
    } else if (ncmd < 1)
        return usage();
    if (base >= ncmd) {
        fprintf(stderr, "bench_ab: --base %d, but there are %d commands\n", base, ncmd);
        return 2;
    }
    const char *label[MAXCMD] = {0};
    for (int k = 0; k < ncmd; k++) {
        label[k] = labels ? strsep(&labels, ",") : NULL;
        if (!label[k])
            label[k] = replay ? "?" : cmds[k][0];
    }
    if (!replay) {
        FILE *raw = NULL;
        if (raw_path && !(raw = fopen(raw_path, "we"))) {
            fprintf(stderr, "bench_ab: cannot write %s: %s\n", raw_path, strerror(errno));
            return 1;
        }
        if (run_all(cmds, ncmd, reps, warmup, raw, t) != 0) {
            if (raw)
                fclose(raw);
            return 1;
        }
        if (raw && fclose(raw) != 0) {
            fprintf(stderr, "bench_ab: cannot write %s: %s\n", raw_path, strerror(errno));
            return 1;
        }
    }
    return report(t, ncmd, reps, base, label) == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    int reps = 20, warmup = 2, base = 0;
    char *labels = NULL;
    const char *raw_path = NULL, *replay = NULL;
    int i = 1;
    for (; i < argc; i++) {
        if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc)
            reps = count_arg(argv[++i]);
        else if (strcmp(argv[i], "--warmup") == 0 && i + 1 < argc)
            warmup = count_arg(argv[++i]);
        else if (strcmp(argv[i], "--base") == 0 && i + 1 < argc)
            base = count_arg(argv[++i]);
        else if (strcmp(argv[i], "--labels") == 0 && i + 1 < argc)
            labels = argv[++i];
        else if (strcmp(argv[i], "--raw") == 0 && i + 1 < argc)
            raw_path = argv[++i];
        else if (strcmp(argv[i], "--replay") == 0 && i + 1 < argc)
            replay = argv[++i];
        else if (strcmp(argv[i], "--") == 0) {
            i++;
            break;
        } else
            return usage();
    }
    if (reps < 1 || warmup < 0 || base < 0) {
        fprintf(stderr, "bench_ab: --reps takes a count from 1, --warmup and --base one from 0\n");
        return 2;
    }
    if (replay && (i < argc || raw_path))
        return usage(); /* a replay runs nothing and writes nothing */
    char **cmds[MAXCMD];
    int ncmd = 0;
    if (i < argc)
        cmds[ncmd++] = argv + i;
    for (; i < argc; i++) {
        if (strcmp(argv[i], "---") == 0) {
            argv[i] = NULL;
            if (ncmd == MAXCMD || i + 1 >= argc)
                return usage();
            cmds[ncmd++] = argv + i + 1;
        }
    }
    double *t[MAXCMD] = {0};
    int rc = compare(replay ? NULL : cmds, ncmd, replay, raw_path, labels, reps, warmup, base, t);
    for (int k = 0; k < MAXCMD; k++)
        free(t[k]);
    return rc;
}

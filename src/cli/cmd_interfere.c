/* cmd_interfere.c — `convgpu interfere`: how much workloads that share one GPU slow each other
 * down (seed 003's co-execution study, its Figure 5). Each workload runs alone, then beside every
 * workload (itself included) as a background, in its own convgpu container on one GPU; its wall
 * time beside a background over its wall time alone is the slowdown. Rounds interleave every
 * measurement, so a machine that drifts (load, clocks) touches all of them alike; the report
 * takes medians. Reports: a table, and optionally CSV and an SVG heatmap (interfere_report.c).
 *
 * Profiles: each workload has a profile key (--key, else its command's first word's basename).
 * Its runs alone are created with that key, so they become runs of its profile as any job's do
 * (the daemon's profile.h); the pairs are created with "profile": false, so a run slowed down on
 * purpose never enters the profile of the job alone. --save stores the slowdowns by key in the
 * daemon (PUT /v1/interference, the daemon's api_interference.h) once everything is measured.
 *
 * A background starts first and runs for the whole of the foreground's run: started again each
 * time it ends, killed (its whole process group) once the foreground ends. Signals are blocked
 * and taken with sigwaitinfo, so an interrupt stops both workloads and removes their containers
 * before convgpu exits. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "convgpu_client.h"
#include "interfere.h"
#include "profile_key.h"
#include "size.h"

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: convgpu interfere [--gpu-memory SIZE] [--runs K] [--gpu-compute PCT\n"
            "                         [--compute-mode MODE]] [--device N] [--csv FILE]\n"
            "                         [--svg FILE] [--log FILE] [--quiet] [--key NAME]...\n"
            "                         [--save] -- CMD...\n\n"
            "Measures how workloads sharing one GPU slow each other down. Each CMD is one\n"
            "argument, a shell command line (sh -c). Each runs alone, then beside every\n"
            "workload (itself included) running as a background, each in its own container\n"
            "on one GPU; the table gives the foreground's wall time beside the background\n"
            "over its wall time alone (median of K rounds; rounds interleave everything).\n"
            "A background is started again whenever it ends before the foreground does.\n"
            "The runs alone are recorded in each workload's profile (convgpu profile); the\n"
            "pairs are not.\n\n"
            "  --gpu-memory SIZE     every container's limit (each pair holds two; default:\n"
            "                        the daemon's, a workload's profile where the daemon\n"
            "                        has profile-limits)\n"
            "  --runs K              rounds, 1-%d (default 3)\n"
            "  --gpu-compute PCT     every container's compute share, 1-100 (default none)\n"
            "  --compute-mode MODE   elastic (default) or hard\n"
            "  --device N            the GPU (default: where the placement policy puts the\n"
            "                        first container; every later one goes there too)\n"
            "  --csv FILE            write the pairs as CSV\n"
            "  --svg FILE            write the slowdown matrix as an SVG heatmap\n"
            "  --log FILE            append the workloads' output to FILE (default: discarded)\n"
            "  --quiet               no progress lines on stderr\n"
            "  --key NAME            a workload's profile key, once per workload in order\n"
            "                        (default: the basename of its command's first word)\n"
            "  --save                store the slowdowns by key in the daemon (convgpu\n"
            "                        profile interference shows them)\n\n"
            "Exit status: 0 measured; 1 a workload failed, the daemon refused a container or\n"
            "the matrix could not be saved; 2 bad arguments; 128+n interrupted by signal n\n"
            "(containers removed).\n",
            INTERFERE_MAX_RUNS);
}

struct job {
    struct cg_client_spec spec; /* the create request, without a device or a profile key */
    long device;       /* -1 until known */
    const char *log;
    bool quiet;
    sigset_t waited;   /* SIGCHLD and the interrupts, blocked */
    sigset_t old_mask; /* what the workloads start with */
    int interrupted;   /* the signal that stopped the measurement */
};

/* A container for one workload run, under its profile key; recorded in the profile only when
 * `record` (a run alone). Returns its create answer (id, env), NULL on a refusal. */
static json_t *container_new(struct job *j, const char *key, bool record)
{
    struct cg_client_spec spec = j->spec;
    spec.image = key;
    spec.no_profile = !record;
    spec.has_device = j->device >= 0;
    spec.device = j->device;
    struct cgc_error err;
    json_t *ans = cgc_create(&spec, &err);
    if (ans && !json_is_string(json_object_get(ans, "id"))) {
        cgc_error_set(&err, 201, ans, "");
        json_decref(ans);
        ans = NULL;
    }
    if (!ans) {
        if (!cli_report_missing_limit("interfere", &err)) {
            fprintf(stderr, "convgpu interfere: cannot create a container: ");
            cli_report(&err);
        }
        return NULL;
    }
    if (j->device < 0)
        j->device = (long)json_integer_value(json_object_get(ans, "device"));
    return ans;
}

static void container_remove(json_t *c)
{
    if (!c)
        return;
    struct cgc_error err;
    cgc_remove(json_string_value(json_object_get(c, "id")), &err);
    json_decref(c);
}

static pid_t start(struct job *j, json_t *c, const char *cmd)
{
    char *argv[] = {"/bin/sh", "-c", (char *)cmd, NULL};
    struct cli_spawn_opts so = {.mask = &j->old_mask, .own_group = true};
    pid_t pid = cli_spawn(json_object_get(c, "env"), argv, j->log ? j->log : "/dev/null", &so);
    if (pid < 0)
        fprintf(stderr, "convgpu interfere: fork: %s\n", strerror(errno));
    return pid;
}

/* The next child to end (its status in *status), or -1 when an interrupt came first. */
static pid_t next_exit(struct job *j, int *status)
{
    for (;;) {
        pid_t r = waitpid(-1, status, WNOHANG);
        if (r > 0)
            return r;
        if (r < 0 && errno != EINTR)
            return -1;
        siginfo_t si;
        int sig = sigwaitinfo(&j->waited, &si);
        if (sig > 0 && sig != SIGCHLD) {
            j->interrupted = sig;
            return -1;
        }
    }
}

/* Kills a workload's process group and reaps its leader. */
static void stop(pid_t pid)
{
    if (pid <= 0)
        return;
    kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static bool succeeded(int status)
{
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static void report_failure(const char *what, const char *cmd, int status)
{
    if (WIFEXITED(status))
        fprintf(stderr, "convgpu interfere: %s failed (exit %d): %s\n", what,
                WEXITSTATUS(status), cmd);
    else
        fprintf(stderr, "convgpu interfere: %s failed (signal %d): %s\n", what,
                WIFSIGNALED(status) ? WTERMSIG(status) : 0, cmd);
}

/* One run of cmd alone: its wall time in *secs. 0, or 1 on a failure (reported). */
static int run_alone(struct job *j, const char *cmd, const char *key, double *secs)
{
    json_t *c = container_new(j, key, true);
    if (!c)
        return 1;
    double t0 = now_s();
    pid_t pid = start(j, c, cmd);
    int status = 0, rc = 1;
    pid_t r = 0;
    while (pid > 0 && (r = next_exit(j, &status)) > 0 && r != pid)
        ;
    if (pid > 0 && r == pid) {
        *secs = now_s() - t0;
        kill(-pid, SIGKILL); /* whatever it left running in its group */
        if (succeeded(status))
            rc = 0;
        else
            report_failure("a workload alone", cmd, status);
    } else if (pid > 0) {
        stop(pid);
    }
    container_remove(c);
    return rc;
}

/* One run of fg beside bg: fg's wall time in *secs. 0, or 1 on a failure (reported). */
static int run_pair(struct job *j, const char *fg_cmd, const char *bg_cmd, const char *fg_key,
                    const char *bg_key, double *secs)
{
    json_t *cb = container_new(j, bg_key, false);
    json_t *cf = cb ? container_new(j, fg_key, false) : NULL;
    int rc = 1;
    if (!cf) {
        container_remove(cb);
        return 1;
    }
    pid_t bg = start(j, cb, bg_cmd);
    double t0 = now_s();
    pid_t fg = bg > 0 ? start(j, cf, fg_cmd) : -1;
    int status = 0;
    while (fg > 0) {
        pid_t r = next_exit(j, &status);
        if (r < 0)
            break;
        if (r == fg) {
            *secs = now_s() - t0;
            kill(-fg, SIGKILL);
            fg = -1;
            if (succeeded(status))
                rc = 0;
            else
                report_failure("a workload in the foreground", fg_cmd, status);
        } else if (r == bg) {
            kill(-bg, SIGKILL);
            bg = -1;
            if (!succeeded(status)) {
                report_failure("a workload in the background", bg_cmd, status);
                break;
            }
            bg = start(j, cb, bg_cmd);
            if (bg < 0)
                break;
        }
    }
    stop(fg);
    stop(bg);
    container_remove(cf);
    container_remove(cb);
    return rc;
}

static int parse_count(const char *s, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

static int measure(struct job *j, interfere_results *r)
{
    for (unsigned k = 0; k < r->runs; k++) {
        for (unsigned i = 0; i < r->n; i++) {
            if (run_alone(j, r->cmd[i], r->key[i], &r->alone[i][k]) != 0)
                return 1;
            if (!j->quiet)
                fprintf(stderr, "round %u/%u: W%u alone %.3f s\n", k + 1, r->runs, i + 1,
                        r->alone[i][k]);
        }
        for (unsigned i = 0; i < r->n; i++)
            for (unsigned b = 0; b < r->n; b++) {
                if (run_pair(j, r->cmd[i], r->cmd[b], r->key[i], r->key[b],
                             &r->together[i][b][k]) != 0)
                    return 1;
                if (!j->quiet)
                    fprintf(stderr, "round %u/%u: W%u beside W%u %.3f s\n", k + 1, r->runs,
                            i + 1, b + 1, r->together[i][b][k]);
            }
    }
    return 0;
}

/* The key of a workload given none: its command line's first word's basename ("" when it has
 * none, which no key rule accepts). */
static void default_key(const char *cmd, char *out, size_t len)
{
    while (*cmd == ' ' || *cmd == '\t' || *cmd == '\n')
        cmd++;
    size_t n = strcspn(cmd, " \t\n");
    const char *base = cmd;
    for (size_t i = 0; i < n; i++)
        if (cmd[i] == '/')
            base = cmd + i + 1;
    n -= (size_t)(base - cmd);
    snprintf(out, len, "%.*s", (int)(n < len ? n : len - 1), base);
}

/* Every workload's key: given (as many as workloads) or derived; valid and distinct, since the
 * runs alone of two workloads under one key would make one profile of two jobs. 0, or 2 after
 * a message. */
static int choose_keys(const char *const *given, int ngiven, int n, char *const *cmd,
                       char keys[][CG_PROFILE_KEY_MAX + 1])
{
    if (ngiven && ngiven != n) {
        fprintf(stderr, "convgpu interfere: %d --key for %d workload%s: give one per workload, "
                        "in order, or none\n", ngiven, n, n == 1 ? "" : "s");
        return 2;
    }
    for (int i = 0; i < n; i++) {
        if (ngiven)
            snprintf(keys[i], CG_PROFILE_KEY_MAX + 1, "%s", given[i]);
        else
            default_key(cmd[i], keys[i], CG_PROFILE_KEY_MAX + 1);
        if ((ngiven && strlen(given[i]) > CG_PROFILE_KEY_MAX) || !cg_profile_key_valid(keys[i])) {
            fprintf(stderr, "convgpu interfere: workload %d: bad profile key '%s': 1-%d printable "
                            "characters without spaces, quotes or backslashes%s\n", i + 1,
                    ngiven ? given[i] : keys[i], CG_PROFILE_KEY_MAX,
                    ngiven ? "" : " (give --key NAME for each workload)");
            return 2;
        }
        for (int k = 0; k < i; k++)
            if (strcmp(keys[k], keys[i]) == 0) {
                fprintf(stderr, "convgpu interfere: workloads %d and %d have the same profile key "
                                "'%s': give --key NAME for each workload\n", k + 1, i + 1, keys[i]);
                return 2;
            }
    }
    return 0;
}

/* PUT /v1/interference: every ordered pair's slowdown by key. 0, or 1 after a message. */
static int save(const interfere_results *r)
{
    json_t *rows = json_array();
    for (unsigned i = 0; rows && i < r->n; i++)
        for (unsigned b = 0; b < r->n; b++) {
            double s = interfere_slowdown(r, i, b);
            if (!isfinite(s) || s <= 0 || s >= 1000) {
                fprintf(stderr, "convgpu interfere: W%u beside W%u: slowdown %g cannot be saved "
                                "(above 0 and below 1000)\n", i + 1, b + 1, s);
                json_decref(rows);
                return 1;
            }
            json_array_append_new(rows, json_pack("{s:s,s:s,s:f,s:i}", "foreground", r->key[i],
                                                  "background", r->key[b], "slowdown", s, "runs",
                                                  (int)r->runs));
        }
    json_t *ans = NULL;
    char err[512];
    long st = rows ? cli_request("PUT", "/v1/interference", json_pack("{s:o}", "rows", rows),
                                 &ans, err, sizeof err)
                   : 0;
    if (st != 200) {
        fprintf(stderr, "convgpu interfere: the matrix was not saved: ");
        cli_report_error(st, ans, rows ? err : "out of memory");
        json_decref(ans);
        return 1;
    }
    printf("saved %lld slowdowns as tenant %s's (convgpu profile interference)\n",
           (long long)json_integer_value(json_object_get(ans, "stored")),
           json_string_value(json_object_get(ans, "tenant")));
    json_decref(ans);
    return 0;
}

int cmd_interfere(int argc, char **argv)
{
    static const struct option opts[] = {
        {"gpu-memory", required_argument, NULL, 'm'}, {"runs", required_argument, NULL, 'r'},
        {"gpu-compute", required_argument, NULL, 'c'}, {"compute-mode", required_argument, NULL, 'M'},
        {"device", required_argument, NULL, 'd'},     {"csv", required_argument, NULL, 'C'},
        {"svg", required_argument, NULL, 'S'},        {"log", required_argument, NULL, 'l'},
        {"quiet", no_argument, NULL, 'q'},            {"help", no_argument, NULL, 'h'},
        {"key", required_argument, NULL, 'k'},        {"save", no_argument, NULL, 's'},
        {NULL, 0, NULL, 0},
    };
    const char *given[INTERFERE_MAX_WORKLOADS];
    static char keys[INTERFERE_MAX_WORKLOADS][CG_PROFILE_KEY_MAX + 1];
    const char *key_of[INTERFERE_MAX_WORKLOADS];
    int ngiven = 0;
    bool to_save = false;
    const char *mem = NULL, *pct = NULL, *mode = NULL, *csv = NULL, *svg = NULL;
    static struct job j;
    static interfere_results res;
    memset(&j, 0, sizeof j);
    memset(&res, 0, sizeof res);
    j.device = -1;
    long runs = 3, v;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
        switch (c) {
        case 'm': mem = optarg; break;
        case 'c': pct = optarg; break;
        case 'M': mode = optarg; break;
        case 'C': csv = optarg; break;
        case 'S': svg = optarg; break;
        case 'l': j.log = optarg; break;
        case 'q': j.quiet = true; break;
        case 's': to_save = true; break;
        case 'k':
            if (ngiven == INTERFERE_MAX_WORKLOADS) {
                fprintf(stderr, "convgpu interfere: more than %d --key\n",
                        INTERFERE_MAX_WORKLOADS);
                return 2;
            }
            given[ngiven++] = optarg;
            break;
        case 'r':
            if (parse_count(optarg, 1, INTERFERE_MAX_RUNS, &runs) != 0) {
                fprintf(stderr, "convgpu interfere: bad --runs '%s': a whole number 1-%d\n",
                        optarg, INTERFERE_MAX_RUNS);
                return 2;
            }
            break;
        case 'd':
            if (parse_count(optarg, 0, 1024, &v) != 0) {
                fprintf(stderr, "convgpu interfere: --device takes a GPU index such as 0\n");
                return 2;
            }
            j.device = v;
            break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    /* Without --gpu-memory the daemon decides, as for run: the workload's profile on a daemon
     * with profile-limits, else a refusal that says what to give. */
    uint64_t limit = 0;
    const char *err = NULL; /* set only when the size does not parse */
    if (mem && (cg_parse_size(mem, &limit, &err) != 0 || limit == 0)) {
        fprintf(stderr, "convgpu interfere: bad --gpu-memory '%s': %s\n", mem,
                limit == 0 && !err ? "must be greater than zero" : err);
        return 2;
    }
    int n = argc - optind;
    if (n < 1 || n > INTERFERE_MAX_WORKLOADS) {
        fprintf(stderr, "convgpu interfere: give 1 to %d workloads after --, each one shell "
                        "command line (convgpu interfere --gpu-memory 1GiB -- 'CMD1' 'CMD2')\n",
                INTERFERE_MAX_WORKLOADS);
        return 2;
    }
    for (int i = optind; i < argc; i++)
        if (!argv[i][0]) {
            fprintf(stderr, "convgpu interfere: workload %d is an empty command line\n",
                    i - optind + 1);
            return 2;
        }
    if (choose_keys(given, ngiven, n, argv + optind, keys) != 0)
        return 2;
    for (int i = 0; i < n; i++)
        key_of[i] = keys[i];
    j.spec = (struct cg_client_spec){.gpu_memory = limit, .auto_remove = true};
    if (cli_parse_compute("interfere", pct, mode, false, false, &j.spec, NULL) != 0)
        return 2;
    res.n = (unsigned)n;
    res.runs = (unsigned)runs;
    res.cmd = argv + optind;
    res.key = key_of;

    sigemptyset(&j.waited);
    sigaddset(&j.waited, SIGCHLD);
    sigaddset(&j.waited, SIGINT);
    sigaddset(&j.waited, SIGTERM);
    sigaddset(&j.waited, SIGHUP);
    sigprocmask(SIG_BLOCK, &j.waited, &j.old_mask);
    int rc = measure(&j, &res);
    if (j.interrupted) {
        fprintf(stderr, "convgpu interfere: interrupted by signal %d; containers removed\n",
                j.interrupted);
        return 128 + j.interrupted;
    }
    if (rc != 0)
        return 1;
    printf("convgpu interfere: %u workload%s on GPU %ld, %u round%s\n", res.n,
           res.n == 1 ? "" : "s", j.device, res.runs, res.runs == 1 ? "" : "s");
    interfere_print_table(stdout, &res);
    if (csv && interfere_write_csv(csv, &res) != 0) {
        fprintf(stderr, "convgpu interfere: cannot write %s: %s\n", csv, strerror(errno));
        rc = 1;
    }
    if (svg && interfere_write_svg(svg, &res) != 0) {
        fprintf(stderr, "convgpu interfere: cannot write %s: %s\n", svg, strerror(errno));
        rc = 1;
    }
    if (to_save && save(&res) != 0)
        rc = 1;
    return rc;
}

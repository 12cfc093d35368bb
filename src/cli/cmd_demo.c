/* cmd_demo.c — `convgpu demo`: convgpu's value in one command, on a machine with no GPU.
 *
 * Starts a private daemon on an emulated 5 GiB GPU (the paper's K20m), plays the paper's
 * Figure 3 scenario with real processes, then a short, time-scaled version of the paper's
 * evaluation workload under every resume policy (CONVGPU_DEMO_KEEP=1 keeps its logs), printing a live timeline of who runs, who is
 * suspended and who resumes, and a summary per policy. Everything runs from a temporary
 * directory that is removed at the end; nothing is left running. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "convgpu_client.h"
#include "size.h"

#define MiB (1ull << 20)
#define MAX_JOBS 16

struct job {
    char id[16];
    uint64_t limit, size;
    unsigned hold_ms;
    double start_at;          /* seconds after the phase starts */
    pid_t pid;
    bool started, done, was_suspended;
    int status;
    double began, ended, suspended_s;
    char last_state[16];
};

static char tmpdir[PATH_MAX];
static char bindir[PATH_MAX];
static pid_t daemon_pid = -1;
static volatile sig_atomic_t interrupted;
static pid_t children[64];
static int nchildren;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_ms(unsigned ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR && !interrupted)
        ;
}

static void on_interrupt(int sig)
{
    (void)sig;
    interrupted = 1;
}

static void remove_tree(const char *dir)
{
    pid_t pid = fork();
    if (pid == 0) {
        execlp("rm", "rm", "-rf", dir, (char *)NULL);
        _exit(127);
    }
    if (pid > 0)
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
            ;
}

static void stop_daemon(void)
{
    if (daemon_pid > 0) {
        kill(daemon_pid, SIGTERM);
        while (waitpid(daemon_pid, NULL, 0) < 0 && errno == EINTR)
            ;
        daemon_pid = -1;
    }
}

static int start_daemon(void)
{
    char run[PATH_MAX + 8], log[PATH_MAX + 16], exe[PATH_MAX + 16];
    snprintf(run, sizeof run, "%s/run", tmpdir);
    snprintf(log, sizeof log, "%s/daemon.log", tmpdir);
    snprintf(exe, sizeof exe, "%s/convgpud", bindir);
    daemon_pid = fork();
    if (daemon_pid < 0)
        return -1;
    if (daemon_pid == 0) {
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd >= 0) {
            dup2(fd, STDOUT_FILENO);
            dup2(fd, STDERR_FILENO);
        }
        setenv("CONVGPU_EMU_CONTEXT", "66MiB", 1);
        execl(exe, exe, "--runtime-dir", run, "--emulate", "5GiB", "--foreground", "--policy",
              "fifo", "--log-level", "info", (char *)NULL);
        _exit(127);
    }
    cli_set_runtime_dir(run);
    char sock[PATH_MAX + 32];
    snprintf(sock, sizeof sock, "%s/control.sock", run);
    for (int i = 0; i < 500 && !interrupted; i++) {
        struct stat st;
        if (stat(sock, &st) == 0)
            return 0;
        int status;
        if (waitpid(daemon_pid, &status, WNOHANG) == daemon_pid) {
            daemon_pid = -1;
            return -1;
        }
        sleep_ms(10);
    }
    return -1;
}

static int set_policy(const char *name)
{
    json_t *ans = NULL;
    char err[512];
    long st = cli_request("PUT", "/v1/policy", json_pack("{s:s}", "resume", name), &ans, err,
                          sizeof err);
    json_decref(ans);
    return st == 200 ? 0 : -1;
}

/* Registers the job's container and starts the sample program in it. */
static int launch(struct job *j, double t0)
{
    struct cg_client_spec spec = {.id = j->id, .gpu_memory = j->limit};
    struct cgc_error err;
    json_t *ans = cgc_create(&spec, &err);
    if (!ans) {
        cli_report(&err);
        return -1;
    }
    char exe[PATH_MAX + 32], size[32], hold[32], out[PATH_MAX + 32];
    snprintf(exe, sizeof exe, "%s/convgpu-sample", bindir);
    snprintf(size, sizeof size, "%lluMiB", (unsigned long long)(j->size / MiB));
    snprintf(hold, sizeof hold, "%u", j->hold_ms);
    snprintf(out, sizeof out, "%s/%s.log", tmpdir, j->id);
    /* Moving every byte would measure this machine's page faults, not the scheduler. */
    char *argv[] = {exe, "--size", size, "--touch", "4MiB", "--hold-ms", hold, "--quiet", NULL};
    j->pid = cli_spawn_in_container(json_object_get(ans, "env"), argv, out);
    json_decref(ans);
    if (j->pid < 0)
        return -1;
    if (nchildren < (int)(sizeof children / sizeof children[0]))
        children[nchildren++] = j->pid;
    j->started = true;
    j->began = now_s() - t0;
    return 0;
}

static void finish_job(struct job *j, int status, double t0)
{
    j->done = true;
    j->status = status;
    j->ended = now_s() - t0;
    struct cgc_error err;
    cgc_remove(j->id, &err);
}

static const char *fmt(uint64_t b, char *buf)
{
    return cg_format_size(b, buf, CG_SIZE_BUFLEN);
}

/* Polls the daemon and prints a line whenever a container's state changes. */
static void poll_states(struct job *jobs, int n, double t0, bool verbose)
{
    json_t *ans = NULL;
    char err[512];
    if (cli_request("GET", "/v1/containers", NULL, &ans, err, sizeof err) != 200) {
        json_decref(ans);
        return;
    }
    size_t i;
    json_t *c;
    json_array_foreach(ans, i, c) {
        const char *id = json_string_value(json_object_get(c, "id"));
        for (int k = 0; k < n; k++) {
            struct job *j = &jobs[k];
            if (!id || strcmp(id, j->id) != 0 || j->done)
                continue;
            const char *state = json_string_value(json_object_get(c, "state"));
            j->suspended_s = json_real_value(json_object_get(c, "suspended_total_s"));
            if (state && strcmp(state, "suspended") == 0)
                j->was_suspended = true;
            if (state && strcmp(state, j->last_state) != 0) {
                char a[CG_SIZE_BUFLEN], l[CG_SIZE_BUFLEN], u[CG_SIZE_BUFLEN];
                if (verbose)
                    printf("  %6.2fs  %-3s %-9s limit %-7s assigned %-7s using %s\n", now_s() - t0,
                           j->id, strcmp(state, "suspended") == 0 ? "SUSPENDED" :
                                  j->last_state[0] ? "RESUMED" : "running",
                           fmt((uint64_t)json_integer_value(json_object_get(c, "limit")), l),
                           fmt((uint64_t)json_integer_value(json_object_get(c, "assigned")), a),
                           fmt((uint64_t)json_integer_value(json_object_get(c, "used")), u));
                snprintf(j->last_state, sizeof j->last_state, "%s", state);
            }
        }
    }
    json_decref(ans);
}

/* Runs jobs to completion: launches each at its time, reaps exits, prints changes. */
static int run_jobs(struct job *jobs, int n, bool verbose)
{
    double t0 = now_s();
    int left = n;
    while (left > 0 && !interrupted) {
        double t = now_s() - t0;
        for (int k = 0; k < n; k++) {
            if (!jobs[k].started && t >= jobs[k].start_at) {
                if (launch(&jobs[k], t0) != 0)
                    return -1;
                if (verbose) {
                    char l[CG_SIZE_BUFLEN], s[CG_SIZE_BUFLEN];
                    printf("  %6.2fs  %-3s starts: limit %s, allocates %s + context, holds %.1fs\n",
                           now_s() - t0, jobs[k].id, fmt(jobs[k].limit, l), fmt(jobs[k].size, s),
                           jobs[k].hold_ms / 1000.0);
                }
            }
        }
        poll_states(jobs, n, t0, verbose);
        int status;
        pid_t pid;
        while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
            for (int k = 0; k < n; k++) {
                if (jobs[k].pid == pid && !jobs[k].done) {
                    finish_job(&jobs[k], status, t0);
                    left--;
                    if (verbose)
                        printf("  %6.2fs  %-3s exits (%s); its memory returns\n", jobs[k].ended,
                               jobs[k].id,
                               WIFEXITED(status) && WEXITSTATUS(status) == 0 ? "ok" : "FAILED");
                }
            }
        }
        sleep_ms(50);
    }
    return interrupted ? -1 : 0;
}

static int figure3(void)
{
    printf("\n== The paper's Figure 3, with real processes (policy: fifo) ==\n"
           "A and B run; C gets a partial assignment and is suspended when it needs more;\n"
           "D gets nothing and is suspended at its first request; when B exits, the\n"
           "policy decides who resumes.\n\n");
    struct job jobs[4] = {
        {.id = "A", .limit = 2048 * MiB, .size = 1500 * MiB, .hold_ms = 5000, .start_at = 0.0},
        {.id = "B", .limit = 1024 * MiB, .size = 900 * MiB, .hold_ms = 1500, .start_at = 0.0},
        {.id = "C", .limit = 3584 * MiB, .size = 2500 * MiB, .hold_ms = 1000, .start_at = 0.6},
        {.id = "D", .limit = 768 * MiB, .size = 500 * MiB, .hold_ms = 800, .start_at = 0.9},
    };
    if (run_jobs(jobs, 4, true) != 0)
        return -1;
    int failed = 0;
    for (int k = 0; k < 4; k++)
        if (!WIFEXITED(jobs[k].status) || WEXITSTATUS(jobs[k].status) != 0)
            failed++;
    printf("\n  Every process finished %s; nobody crashed with out-of-memory: C and D waited.\n",
           failed ? "— BUT SOME FAILED (see above)" : "successfully");
    return failed ? -1 : 0;
}

/* The paper's evaluation (IV.A) scaled down: its six container types, one arrival every
 * 0.25 s instead of 5 s, holding 0.3-2.7 s instead of 5-45 s. Same seed for every policy. */
static int evaluation(void)
{
    static const char *policies[] = {"fifo", "best-fit", "recent", "random", "aging-fit"};
    static const unsigned mib[] = {128, 256, 512, 1024, 2048, 4096};
    enum { N = 8 };
    printf("\n== The paper's evaluation, time-scaled: %d containers, each policy ==\n", N);
    struct {
        double finished, avg_susp, max_susp;
        int failed;
    } res[5];
    uint64_t seed = 20170905;
    int types[N];
    for (int k = 0; k < N; k++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        types[k] = (int)((seed >> 33) % 6);
    }
    for (unsigned p = 0; p < 5 && !interrupted; p++) {
        if (set_policy(policies[p]) != 0)
            return -1;
        struct job jobs[N];
        memset(jobs, 0, sizeof jobs);
        for (int k = 0; k < N; k++) {
            snprintf(jobs[k].id, sizeof jobs[k].id, "%c%d", 'a' + (int)p, k);
            jobs[k].limit = mib[types[k]] * MiB;
            jobs[k].size = jobs[k].limit - 66 * MiB;
            jobs[k].hold_ms = 250 + 350 * (unsigned)types[k];
            jobs[k].start_at = 0.2 * k;
        }
        printf("  %-10s ", policies[p]);
        fflush(stdout);
        if (run_jobs(jobs, N, false) != 0)
            return -1;
        double last = 0, sum = 0, max = 0;
        int failed = 0;
        for (int k = 0; k < N; k++) {
            if (jobs[k].ended > last)
                last = jobs[k].ended;
            sum += jobs[k].suspended_s;
            if (jobs[k].suspended_s > max)
                max = jobs[k].suspended_s;
            if (!WIFEXITED(jobs[k].status) || WEXITSTATUS(jobs[k].status) != 0)
                failed++;
        }
        for (int k = 0; k < N; k++) {
            if (WIFEXITED(jobs[k].status) && WEXITSTATUS(jobs[k].status) == 0)
                continue;
            char path[PATH_MAX + 64], line[256];
            snprintf(path, sizeof path, "%s/%.15s.log", tmpdir, jobs[k].id);
            fprintf(stderr, "  %s failed (status %d):\n", jobs[k].id, jobs[k].status);
            FILE *f = fopen(path, "r");
            while (f && fgets(line, sizeof line, f))
                fprintf(stderr, "    | %s", line);
            if (f)
                fclose(f);
        }
        res[p].finished = last;
        res[p].avg_susp = sum / N;
        res[p].max_susp = max;
        res[p].failed = failed;
        printf("done in %.1fs\n", last);
    }
    printf("\n  %-10s %12s %16s %16s %8s\n", "policy", "finished (s)", "avg suspended (s)",
           "max suspended (s)", "failed");
    for (unsigned p = 0; p < 5; p++)
        printf("  %-10s %12.2f %16.2f %16.2f %8d\n", policies[p], res[p].finished,
               res[p].avg_susp, res[p].max_susp, res[p].failed);
    printf("\n  (Suspended times are sampled every 50 ms. `convgpu sim` runs the full-scale\n"
           "   experiment in simulation, on the same scheduling code.)\n");
    for (unsigned p = 0; p < 5; p++)
        if (res[p].failed)
            return -1;
    return 0;
}

int cmd_demo(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        printf("Usage: convgpu demo\n\nRuns a private convgpu daemon on an emulated 5 GiB GPU and shows,\n"
               "with real processes: the paper's Figure 3 scenario (suspend and resume instead of\n"
               "out-of-memory), then a short version of its evaluation under every policy.\n"
               "Needs no GPU and no setup; takes under a minute; leaves nothing behind.\n");
        return 0;
    }
    if (argc > 1) {
        fprintf(stderr, "convgpu demo: takes no arguments (see --help)\n");
        return 2;
    }
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) {
        fprintf(stderr, "convgpu demo: cannot find my own binary\n");
        return 1;
    }
    exe[n] = '\0';
    snprintf(bindir, sizeof bindir, "%s", dirname(exe));
    snprintf(tmpdir, sizeof tmpdir, "/tmp/convgpu-demo.XXXXXX");
    if (!mkdtemp(tmpdir)) {
        fprintf(stderr, "convgpu demo: cannot create a temporary directory: %s\n", strerror(errno));
        return 1;
    }
    struct sigaction sa = {.sa_handler = on_interrupt};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);

    printf("convgpu demo: a private daemon on an emulated 5 GiB GPU (66 MiB context per process)\n");
    int rc = 1;
    double t0 = now_s();
    if (start_daemon() != 0) {
        fprintf(stderr, "convgpu demo: the daemon did not start; its log:\n");
        char cmd[PATH_MAX + 32];
        snprintf(cmd, sizeof cmd, "%s/daemon.log", tmpdir);
        FILE *f = fopen(cmd, "r");
        char line[512];
        while (f && fgets(line, sizeof line, f))
            fputs(line, stderr);
        if (f)
            fclose(f);
    } else if (figure3() == 0 && evaluation() == 0) {
        printf("\nconvgpu demo: finished in %.1fs.\n", now_s() - t0);
        rc = 0;
    } else if (!interrupted) {
        fprintf(stderr, "convgpu demo: something failed; logs were in %s\n", tmpdir);
    }
    /* Whatever happened, stop everything we started. */
    for (int i = 0; i < nchildren; i++)
        kill(children[i], SIGKILL);
    int status;
    while (waitpid(-1, &status, WNOHANG) > 0)
        ;
    stop_daemon();
    if (getenv("CONVGPU_DEMO_KEEP"))
        fprintf(stderr, "convgpu demo: logs kept in %s\n", tmpdir);
    else
        remove_tree(tmpdir);
    return interrupted ? 130 : rc;
}

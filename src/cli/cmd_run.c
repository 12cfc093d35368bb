/* cmd_run.c — `convgpu run`: register a container with a limit (and a compute share), run the
 * command in it under the interposer, remove the container when the command exits, exit with
 * the command's status. The daemon removes the container by itself if this process dies first
 * (auto_remove). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "core.h"
#include "convgpu_client.h"
#include "size.h"

static void usage(FILE *f)
{
    fprintf(f, "Usage: convgpu run --gpu-memory SIZE [--gpu-compute PCT [--compute-mode MODE]]\n"
               "                   [--priority N] [--no-swap] [--limit profile] [--exclusive]\n"
               "                   [--device N | --gpus N [--devices LIST]] [--name NAME]\n"
               "                   [--tenant NAME] [--quiet]\n"
               "                   -- CMD [ARGS...]\n\n"
               "Runs CMD as a container with a GPU-memory limit. Allocations within the limit\n"
               "that do not fit in free memory right now wait (the container is suspended)\n"
               "until the scheduling policy resumes it; allocations beyond the limit fail\n"
               "with CUDA_ERROR_OUT_OF_MEMORY. Exits with CMD's status.\n\n"
               "  --gpu-memory SIZE     the limit: 512MiB, 1GiB, 1G, 1.5GiB or bytes\n"
               "  --gpu-compute PCT     its share of the GPU's time, a whole percent 1-100\n"
               "                        (default: the daemon's default-gpu-compute, else none)\n"
               "  --compute-mode MODE   elastic (default): may use time nobody else wants;\n"
               "                        hard: never more than its share. Hard shares on one\n"
               "                        GPU add up to at most 100\n"
               "  --priority N          0-9, higher goes first when memory is short (default 0);\n"
               "                        with swap on, a higher priority may move lower ones\n"
               "                        out to host memory (docs/SWAP.md)\n"
               "  --no-swap             never move this container's memory to the host\n"
               "  --limit profile       the limit from past runs of CMD (convgpu profile): their\n"
               "                        peak plus a margin; --gpu-memory is then the first run's\n"
               "                        (a daemon with profile-limits set does this for any run\n"
               "                        without --gpu-memory)\n"
               "  --exclusive           a whole GPU: refused when the GPU has other containers,\n"
               "                        and none joins it while this one runs; the limit is the\n"
               "                        GPU's capacity unless --gpu-memory gives one\n"
               "  --device N            the GPU (default: the placement policy chooses)\n"
               "  --gpus N              N GPUs, the limit and share on each; the container takes\n"
               "                        its whole limit on each when it starts, and is refused\n"
               "                        when N GPUs do not have it free (default 1)\n"
               "  --devices LIST        which GPUs, e.g. 0,2 (CUDA device k is the k-th listed;\n"
               "                        default: the daemon picks the best-connected ones)\n"
               "  --name NAME           a name for convgpu ps / inspect / rm\n"
               "  --tenant NAME         its tenant (default: your user name; another: root only)\n"
               "  --quiet               do not print the container id\n");
}

int cli_parse_compute(const char *cmd, const char *pct, const char *mode, bool allow_none,
                      bool mode_alone, struct cg_client_spec *spec, bool *none)
{
    unsigned v = 0;
    cg_compute_mode m;
    if (pct && !(allow_none && strcmp(pct, "none") == 0) && !cg_compute_pct_parse(pct, &v)) {
        fprintf(stderr, "convgpu %s: bad --gpu-compute '%s': a whole percentage from 1 to 100%s\n",
                cmd, pct, allow_none ? ", or none" : "");
        return 2;
    }
    if (mode && !cg_compute_mode_parse(mode, &m)) {
        fprintf(stderr, "convgpu %s: bad --compute-mode '%s': hard or elastic\n", cmd, mode);
        return 2;
    }
    if (mode && (pct ? v == 0 : !mode_alone)) {
        fprintf(stderr, "convgpu %s: --compute-mode needs a share: give --gpu-compute PCT too\n",
                cmd);
        return 2;
    }
    spec->compute_pct = v;
    spec->compute_mode = mode;
    if (none)
        *none = pct && v == 0;
    return 0;
}

bool cli_report_missing_limit(const char *cmd, const struct cgc_error *e)
{
    /* The daemon names API fields ("profile_limit": true); a person typed flags. Without a
     * limit the daemon refuses only when no profile and no exclusive GPU could give one. */
    if (e->status != 400 || e->local || strncmp(e->text, "gpu_memory is required", 22) != 0)
        return false;
    fprintf(stderr, "convgpu %s: no limit given: add --gpu-memory SIZE (e.g. --gpu-memory 1GiB)%s\n",
            cmd, strcmp(cmd, "run") == 0
                     ? ", or --limit profile to take it from past runs of the command, or "
                       "--exclusive for a whole GPU"
                 : strcmp(cmd, "interfere") == 0
                     ? " (a daemon with profile-limits takes each workload's from its profile)"
                     : ", or --exclusive for a whole GPU");
    return true;
}

void cli_report(const struct cgc_error *e)
{
    if (e->status == 0 || e->local)
        fprintf(stderr, "convgpu: %s\n", e->text);
    else
        fprintf(stderr, "convgpu: %s (HTTP %ld)\n",
                e->text[0] ? e->text : "unexpected answer from the daemon", e->status);
}

size_t cli_parse_index_list(const char *text, unsigned *out, size_t max)
{
    size_t n = 0;
    const char *p = text;
    while (*p) {
        char *end;
        errno = 0;
        long v = strtol(p, &end, 10);
        if (errno || end == p || v < 0 || v >= CG_MAX_DEVICES || (*end && *end != ',') ||
            (*end == ',' && !end[1]) || p[0] == '-' || p[0] == '+' || p[0] == ' ' || n == max)
            return 0;
        for (size_t i = 0; i < n; i++)
            if (out[i] == (unsigned)v)
                return 0;
        out[n++] = (unsigned)v;
        p = *end ? end + 1 : end;
    }
    return n;
}

int cli_parse_priority(const char *cmd, const char *priority, struct cg_client_spec *spec)
{
    if (!priority)
        return 0;
    if (strlen(priority) != 1 || priority[0] < '0' || priority[0] > '9') {
        fprintf(stderr, "convgpu %s: bad --priority '%s': a whole number from 0 to 9 "
                        "(higher goes first)\n", cmd, priority);
        return 2;
    }
    spec->has_priority = true;
    spec->priority = priority[0] - '0';
    return 0;
}

/* The runner's own environment, which the workload inherits through exec. */
static int env_get(void *ctx, const char *name, const char **value)
{
    (void)ctx;
    *value = getenv(name);
    return 0;
}

/* A variable that cannot be set is left out (the workload runs, as after a failed export). */
static int env_set(void *ctx, const char *name, const char *value)
{
    (void)ctx;
    setenv(name, value, 1);
    return 0;
}

pid_t cli_spawn_in_container(json_t *env, char **cmd, const char *output)
{
    return cli_spawn(env, cmd, output, NULL);
}

pid_t cli_spawn(json_t *env, char **cmd, const char *output, const struct cli_spawn_opts *o)
{
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid != 0)
        return pid;
    if (o && o->mask)
        sigprocmask(SIG_SETMASK, o->mask, NULL);
    if (o && o->own_group)
        setpgid(0, 0);
    /* The container lives as long as its runner: if the runner dies, the daemon removes the
     * container, and its workload must not keep GPU memory nobody accounts for. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)
        _exit(137);
    static const struct cgc_env_ops ops = {env_get, env_set};
    const char *failed;
    cgc_env_apply(env, &ops, NULL, &failed);
    if (output) {
        int fd = open(output, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (fd >= 0) {
            dup2(fd, STDOUT_FILENO);
            dup2(fd, STDERR_FILENO);
        }
    }
    execvp(cmd[0], cmd);
    fprintf(stderr, "convgpu: cannot run %s: %s\n", cmd[0], strerror(errno));
    _exit(errno == ENOENT ? 127 : 126);
}

int cli_take_option(const char *cmd, unsigned door, int argc, char **argv, int *i,
                    struct cgc_option_values *v)
{
    const char *arg = argv[*i];
    if (strncmp(arg, "--", 2) != 0 || !arg[2])
        return 0;
    char flag[64];
    const char *eq = strchr(arg, '=');
    size_t n = eq ? (size_t)(eq - arg - 2) : strlen(arg + 2);
    if (n >= sizeof flag)
        return 0;
    memcpy(flag, arg + 2, n);
    flag[n] = '\0';
    const struct cgc_option *o = cgc_option_find(door, flag);
    if (!o)
        return 0;
    const char *value = NULL;
    if (o->type == CGC_TYPE_FLAG) {
        if (eq) {
            fprintf(stderr, "convgpu %s: --%s takes no value\n", cmd, flag);
            return 2;
        }
    } else if (eq) {
        value = eq + 1;
    } else if (*i + 1 < argc) {
        value = argv[++*i];
    } else {
        fprintf(stderr, "convgpu %s: --%s needs a value (%s)\n", cmd, flag, o->arg);
        return 2;
    }
    char where[80], err[256];
    snprintf(where, sizeof where, "--%s", flag);
    if (cgc_option_apply(o, where, value, v, err, sizeof err) != 0) {
        fprintf(stderr, "convgpu %s: %s\n", cmd, err);
        return 2;
    }
    return 1;
}

int cli_check_options(const char *cmd, const struct cgc_option_values *v)
{
    char err[256];
    if (cgc_options_check(v, err, sizeof err) == 0)
        return 0;
    fprintf(stderr, "convgpu %s: %s\n", cmd, err);
    return 2;
}

int cmd_run(int argc, char **argv)
{
    /* The container's options come from the table (container_options.h); --quiet is the
     * runner's own. The command starts at the first argument that is not an option, or after
     * "--". */
    struct cgc_option_values v = {.spec = {.auto_remove = true}};
    bool quiet = false;
    int i = 1;
    for (; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0) {
            i++;
            break;
        }
        if (argv[i][0] != '-')
            break;
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            return 0;
        }
        if (strcmp(argv[i], "--quiet") == 0) {
            quiet = true;
            continue;
        }
        int rc = cli_take_option("run", CGC_DOOR_RUN, argc, argv, &i, &v);
        if (rc == 2)
            return 2;
        if (rc == 0) {
            fprintf(stderr, "convgpu run: unknown option '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        }
    }
    if (cli_check_options("run", &v) != 0)
        return 2;
    if (i >= argc) {
        fprintf(stderr, "convgpu run: no command given (convgpu run --gpu-memory 1GiB -- CMD ...)\n");
        return 2;
    }
    char **cmd = argv + i;
    struct cg_client_spec spec = v.spec;
    spec.command = cmd[0];
    /* Without --gpu-memory the daemon decides: the profile (--limit profile, or a daemon with
     * --profile-limits), the GPU's capacity (--exclusive), or a refusal that says what to give. */

    struct cgc_error cerr;
    json_t *ans = cgc_create(&spec, &cerr);
    if (!ans) {
        if (!cli_report_missing_limit("run", &cerr))
            cli_report(&cerr);
        return 125; /* like docker run: the runner failed, not the command */
    }
    const char *id = json_string_value(json_object_get(ans, "id"));
    char cid[128];
    snprintf(cid, sizeof cid, "%s", id ? id : "");
    if (!quiet) {
        char share[64] = "";
        json_t *gc = json_object_get(ans, "gpu_compute");
        if (json_is_integer(gc))
            snprintf(share, sizeof share, ", compute %lld%% %s", (long long)json_integer_value(gc),
                     json_is_string(json_object_get(ans, "compute_mode"))
                         ? json_string_value(json_object_get(ans, "compute_mode"))
                         : "?");
        char lim[CG_SIZE_BUFLEN], from[96] = "";
        json_t *prof = json_object_get(ans, "profile");
        if (prof)
            snprintf(from, sizeof from, " from profile: peak %s + %lld%%",
                     cg_format_size((uint64_t)json_integer_value(json_object_get(prof, "peak")),
                                    lim, sizeof lim),
                     (long long)json_integer_value(json_object_get(prof, "margin_pct")));
        cg_format_size((uint64_t)json_integer_value(json_object_get(ans, "limit")), lim, sizeof lim);
        char devs[256];
        size_t ngpus = cli_format_devices(ans, devs, sizeof devs);
        fprintf(stderr, "convgpu: container %s (limit %s%s%s%s, device%s %s%s)\n", cid, lim,
                ngpus > 1 ? " per GPU" : "", from, share, ngpus > 1 ? "s" : "", devs,
                json_is_true(json_object_get(ans, "exclusive")) ? ", exclusive" : "");
    }

    /* The signals a terminal or a supervisor sends are forwarded to the workload, which decides
     * what they mean; the runner stays until it exits, to remove the container. They are blocked
     * from before the fork and taken synchronously (sigwaitinfo), with SIGCHLD for the exit: none
     * is lost between the fork and a handler's installation, and none waits on a handler that a
     * blocked waitpid never runs (ThreadSanitizer defers handlers until its next interceptor). */
    sigset_t forwarded, waited, workload_mask;
    sigemptyset(&forwarded);
    sigaddset(&forwarded, SIGINT);
    sigaddset(&forwarded, SIGTERM);
    sigaddset(&forwarded, SIGHUP);
    sigaddset(&forwarded, SIGQUIT);
    waited = forwarded;
    sigaddset(&waited, SIGCHLD);
    sigprocmask(SIG_BLOCK, &waited, &workload_mask);
    struct cli_spawn_opts so = {.mask = &workload_mask};
    pid_t child = cli_spawn(json_object_get(ans, "env"), cmd, NULL, &so);
    json_decref(ans);
    if (child < 0) {
        fprintf(stderr, "convgpu run: fork: %s\n", strerror(errno));
        return 125;
    }
    int status = 0;
    for (;;) {
        pid_t r = waitpid(child, &status, WNOHANG);
        if (r == child || (r < 0 && errno != EINTR))
            break;
        siginfo_t si;
        int sig = sigwaitinfo(&waited, &si);
        if (sig > 0 && sig != SIGCHLD)
            kill(child, sig);
    }

    if (cgc_remove(cid, &cerr) != 0)
        cli_report(&cerr);
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return 1;
}

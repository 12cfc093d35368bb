/* main.c — convgpu-runtime, an OCI runtime shim in front of runc (or crun): on create/run of a
 * container that asks for GPU memory it registers the container with convgpud first (the
 * paper's order), rewrites the bundle's config.json to wire the container to it, runs the real
 * runtime with the same arguments and tells the daemon the container's init pid (the daemon
 * releases the container when that process exits; delete releases it otherwise). Containers
 * that ask for nothing, and every other command, go to the real runtime untouched. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "args.h"
#include "bundle.h"
#include "control.h"
#include "hook.h"
#include "http.h"
#include "log.h"
#include "size.h"
#include "spec.h"
#include "state.h"

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: convgpu-runtime [--runtime PATH] [--runtime-dir DIR] [RUNTIME OPTIONS] COMMAND ...\n\n"
            "An OCI runtime that gives containers a GPU-memory limit through convgpud, in\n"
            "front of runc or crun: every command and option goes to the real runtime.\n"
            "On create (and run), a container whose config.json asks for GPU memory is\n"
            "registered with convgpud first, then wired to it (mounts, environment, hooks):\n"
            "  process env   " OCI_ENV_MEMORY "=SIZE  (e.g. 1GiB); optional\n"
            "                " OCI_ENV_DEVICE "=N, " OCI_ENV_COMPUTE "=PCT (1-100),\n"
            "                " OCI_ENV_COMPUTE_MODE "=hard|elastic, " OCI_ENV_GPUS "=N,\n"
            "                " OCI_ENV_EXCLUSIVE "=yes\n"
            "  annotations   " OCI_ANN_MEMORY ", " OCI_ANN_PAPER ",\n"
            "                " OCI_ANN_DEVICE ", " OCI_ANN_COMPUTE ",\n"
            "                " OCI_ANN_COMPUTE_MODE ", " OCI_ANN_GPUS ",\n"
            "                " OCI_ANN_EXCLUSIVE ", " OCI_ANN_IMAGE " (its profile key)\n"
            "The environment wins over the annotations. When its init process exits (or at\n"
            "delete) it is released. Others pass through unchanged. On Kubernetes the limits\n"
            "come from the device plugin instead (docs/KUBERNETES.md).\n\n"
            "  --runtime PATH     the real runtime (default $CONVGPU_RUNC, else runc in PATH)\n"
            "  --runtime-dir DIR  convgpud's runtime directory (default $CONVGPU_RUNTIME_DIR,\n"
            "                     else /run/convgpu)\n"
            "  --log FILE         (runc's own) the log; default DIR/oci/runtime.log\n"
            "  hook NAME          the OCI hooks the shim installs (see: hook --help)\n"
            "  --help             this help; the real runtime's: convgpu-runtime help\n"
            "  --version, -v      convgpu-runtime's version, then the real runtime's\n"
            "Install for Docker or Podman with: convgpu setup docker|podman\n");
}

static pid_t child = -1;

/* For the durations the log reports: an operator sees a slow daemon or runtime in them. */
static double mono_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static void forward(int sig)
{
    if (child > 0)
        kill(child, sig);
}

/* Starts argv[0] with every signal at its default and none blocked, stdout and stderr to
 * /dev/null when quiet. posix_spawn, not fork: it shares the address space until the exec
 * (vfork), so neither process pays a copy-on-write fault for each page it touches after the
 * fork, which was a measurable part of a container's start (docs/BENCHMARKS.md). Returns
 * the pid, or -1 with errno (the runtime's exec failure included). */
static pid_t spawn_runtime(char **argv, bool quiet)
{
    posix_spawnattr_t attr;
    posix_spawn_file_actions_t fa;
    sigset_t all, none;
    sigfillset(&all);
    sigemptyset(&none);
    int err = posix_spawnattr_init(&attr);
    if (err)
        goto fail;
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
    posix_spawnattr_setsigdefault(&attr, &all);
    posix_spawnattr_setsigmask(&attr, &none);
    err = posix_spawn_file_actions_init(&fa);
    if (!err && quiet) {
        err = posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
        if (!err)
            err = posix_spawn_file_actions_adddup2(&fa, STDOUT_FILENO, STDERR_FILENO);
    }
    pid_t pid = -1;
    if (!err)
        err = posix_spawnp(&pid, argv[0], &fa, &attr, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    if (!err)
        return pid;
fail:
    errno = err;
    return -1;
}

/* Runs the real runtime and waits; returns its exit status the way a shell reports it. */
static int run_runtime(char **argv, bool foreground)
{
    child = spawn_runtime(argv, false);
    if (child < 0) {
        oci_log(OCI_LOG_ERROR, "cannot run %s: %s (set --runtime PATH or $CONVGPU_RUNC)",
                argv[0], strerror(errno));
        return 127;
    }
    struct sigaction sa = {.sa_handler = forward, .sa_flags = SA_RESTART};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    if (!foreground) { /* in the foreground, the terminal signals the runtime itself */
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGQUIT, &sa, NULL);
    } else {
        signal(SIGINT, SIG_IGN);
        signal(SIGQUIT, SIG_IGN);
    }
    int status = 0;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR)
        ;
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

static void exec_runtime(char **argv)
{
    execvp(argv[0], argv);
    oci_log(OCI_LOG_ERROR, "cannot run %s: %s (set --runtime PATH or $CONVGPU_RUNC)", argv[0],
            strerror(errno));
    exit(127);
}

static void release(const char *id, const char *why)
{
    char err[1024];
    if (oci_release(id, err, sizeof err) != 0)
        oci_log(OCI_LOG_WARN, "%s", err);
    else
        oci_log(OCI_LOG_INFO, "container %s released (%s)", id, why);
    oci_state_remove(id);
}

/* The options placed before "hook" in the hooks' arguments: the same daemon and log. */
static void hook_args(const struct oci_args *a, const char **out)
{
    int n = 0;
    out[n++] = "--runtime-dir";
    out[n++] = cli_runtime_dir();
    if (a->log_path) {
        out[n++] = "--log";
        out[n++] = a->log_path;
        if (a->log_format) {
            out[n++] = "--log-format";
            out[n++] = a->log_format;
        }
    }
    out[n] = NULL;
}

/* `create --pid-file`, which is how containerd and CRI-O call every runtime: the shim learns
 * the init pid from that file once the runtime has created the container, and tells the daemon
 * itself. Otherwise (`run`, or a caller that asks for no pid file) runc's createRuntime hook
 * must: a process more, and another daemon client to load, per container. */
static bool reports_pid(const struct oci_args *a)
{
    return a->pid_file && *a->pid_file && strcmp(a->command, "create") == 0;
}

/* Runs the real runtime's COMMAND ID with the same global options, output discarded; returns
 * its exit status, or -1 when it could not run. */
static int runtime_quietly(const struct oci_args *a, const char *command, const char *opt)
{
    char **argv = calloc((size_t)a->nglobal + 5, sizeof *argv);
    if (!argv)
        return -1;
    int n = 0;
    for (int i = 0; i <= a->nglobal; i++)
        argv[n++] = a->fwd[i];
    argv[n++] = (char *)command;
    if (opt)
        argv[n++] = (char *)opt;
    argv[n++] = (char *)a->id;
    pid_t p = spawn_runtime(argv, true);
    int status = 0;
    if (p > 0)
        while (waitpid(p, &status, 0) < 0 && errno == EINTR)
            ;
    free(argv);
    return p > 0 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* The init pid the runtime wrote, or -1 (logged). */
static long read_pid_file(const char *path)
{
    FILE *f = fopen(path, "re");
    char buf[32] = "";
    bool got = f && fgets(buf, sizeof buf, f);
    if (f)
        fclose(f);
    char *end = NULL;
    errno = 0;
    long pid = got ? strtol(buf, &end, 10) : -1;
    if (!got || errno || end == buf || (*end && *end != '\n') || pid <= 0 || pid > 0x3fffffff) {
        oci_log(OCI_LOG_ERROR, "cannot read the init pid from %s", path);
        return -1;
    }
    return pid;
}

/* After `create --pid-file`: the daemon learns the init pid (and removes the container when it
 * exits). 0, or -1 when the container must not run: its registration is gone. */
static int report_init(const struct oci_args *a, double runtime_ms)
{
    char err[1024];
    double t0 = mono_ms();
    long pid = read_pid_file(a->pid_file);
    int rc = pid > 0 ? oci_started(a->id, pid, err, sizeof err) : -1;
    if (rc == 0) {
        if (oci_state_touch(a->id, OCI_STATE_WATCHED) != 0)
            oci_log(OCI_LOG_WARN, "container %s: cannot mark it watched: %s (delete will ask "
                                  "the daemon)", a->id, strerror(errno));
        oci_log(OCI_LOG_INFO, "container %s: init pid %ld reported (runtime create %.1f ms, "
                              "report %.2f ms)", a->id, pid, runtime_ms, mono_ms() - t0);
        return 0;
    }
    if (rc == 1) {
        oci_log(OCI_LOG_ERROR, "container %s was removed from convgpud while it was being "
                               "created (convgpu rm?); deleting it", a->id);
        runtime_quietly(a, "delete", "--force");
        oci_state_remove(a->id);
        return -1;
    }
    /* The daemon did not take it: the container still has its limit; delete releases it. */
    if (pid > 0)
        oci_log(OCI_LOG_WARN, "container %s: %s", a->id, err);
    return 0;
}

/* Registers the container and rewrites its config.json. Returns 0, or -1 with nothing left
 * registered and config.json untouched. Edits config (the caller's copy in memory) in place:
 * only a complete edit is ever saved. */
static int prepare(const struct oci_args *a, const char *bundle, json_t *config, bool pretty,
                   const struct oci_request *req)
{
    char err[2048], size[CG_SIZE_BUFLEN], preload[PATH_MAX], exe[PATH_MAX];
    const char *id = a->id;
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) {
        oci_log(OCI_LOG_ERROR, "cannot find my own path: %s", strerror(errno));
        return -1;
    }
    exe[n] = '\0';
    if (!oci_state_path(id, "ld.so.preload", preload, sizeof preload)) {
        oci_log(OCI_LOG_ERROR, "container id '%.80s': %s", id, oci_state_id_problem(id));
        return -1;
    }
    /* The image is checked before anything is registered: a registration must never wait on
     * what an image holds (issue 42). */
    char *image = NULL;
    if (oci_bundle_image_preload(bundle, config, &image, err, sizeof err) != 0) {
        oci_log(OCI_LOG_ERROR, "container %s: %s; nothing registered", id, err);
        return -1;
    }
    char *text = oci_preload_text(image);
    free(image);
    if (!text) {
        oci_log(OCI_LOG_ERROR, "container %s: out of memory", id);
        return -1;
    }
    double t0 = mono_ms();
    json_t *ans = oci_register(id, req, err, sizeof err);
    double t_registered = mono_ms();
    if (!ans) {
        oci_log(OCI_LOG_ERROR, "%s", err);
        free(text);
        return -1;
    }
    json_t *env = json_object_get(ans, "env");
    const char *hargs[8];
    hook_args(a, hargs);
    struct oci_inject in = {
        .container_dir = json_string_value(json_object_get(ans, "dir")),
        .preload_file = preload,
        .env = env,
        .hook_path = exe,
        .hook_args = hargs,
        .nvidia = !json_object_get(env, "CONVGPU_EMU_STATE"),
        .hooks = !reports_pid(a),
    };
    int rc = -1;
    if (oci_write_file(preload, text, err, sizeof err) == 0 &&
        oci_spec_inject(config, &in, err, sizeof err) == 0 &&
        oci_bundle_save(bundle, config, pretty, err, sizeof err) == 0)
        rc = 0;
    if (rc == 0) {
        json_t *gc = json_object_get(ans, "gpu_compute");
        const char *mode = json_string_value(json_object_get(ans, "compute_mode"));
        char share[96] = "";
        if (json_is_integer(gc))
            snprintf(share, sizeof share, " and a %lld%% %s compute share",
                     (long long)json_integer_value(gc), mode ? mode : "?");
        oci_log(OCI_LOG_INFO, "container %s: registered with %s of GPU memory (from %s)%s on "
                              "device %lld; %s/config.json rewritten (register %.2f ms, "
                              "rewrite %.2f ms)",
                id, cg_format_size(req->bytes ? req->bytes
                                              : (uint64_t)json_integer_value(
                                                    json_object_get(ans, "limit")),
                                   size, sizeof size), req->source, share,
                (long long)json_integer_value(json_object_get(ans, "device")), bundle,
                t_registered - t0, mono_ms() - t_registered);
    } else {
        oci_log(OCI_LOG_ERROR, "container %s: %s", id, err);
        release(id, "setup failed");
    }
    free(text);
    json_decref(ans);
    return rc;
}

static int cmd_create(struct oci_args *a, bool run)
{
    char cwd[PATH_MAX], err[2048];
    const char *bundle = a->bundle;
    if (!bundle || !*bundle) {
        if (!getcwd(cwd, sizeof cwd)) {
            oci_log(OCI_LOG_ERROR, "getcwd: %s", strerror(errno));
            return 1;
        }
        bundle = cwd;
    }
    if (!a->id) {
        exec_runtime(a->fwd); /* let the runtime say what is missing */
    }
    bool pretty = false;
    json_t *config = oci_bundle_load(bundle, &pretty, err, sizeof err);
    if (!config) {
        oci_log(OCI_LOG_ERROR, "container %s: %s", a->id, err);
        return 1;
    }
    struct oci_request req;
    /* On Kubernetes only the device plugin's allocation counts: a pod writes its own env. */
    const char *mode = getenv(OCI_SHIM_MODE_ENV);
    bool k8s = mode && strcmp(mode, "kubernetes") == 0;
    if ((k8s ? oci_spec_k8s_request : oci_spec_request)(config, &req, err, sizeof err) != 0) {
        oci_log(OCI_LOG_ERROR, "container %s: %s; config.json left unchanged", a->id, err);
        json_decref(config);
        return 1;
    }
    if (!req.wanted) {
        json_decref(config);
        oci_log(OCI_LOG_DEBUG, "container %s asks for no GPU memory: passed through", a->id);
        exec_runtime(a->fwd);
    }
    int rc = prepare(a, bundle, config, pretty, &req);
    json_decref(config);
    if (rc != 0)
        return 1;
    double t0 = mono_ms();
    rc = run_runtime(a->fwd, run && !a->detach);
    double runtime_ms = mono_ms() - t0;
    if (run && !a->detach)
        release(a->id, "run ended");
    else if (rc != 0)
        release(a->id, "the runtime failed to create it");
    else if (reports_pid(a) && report_init(a, runtime_ms) != 0)
        rc = 1;
    return rc;
}

static int cmd_delete(struct oci_args *a)
{
    if (!a->id || !oci_state_exists(a->id))
        exec_runtime(a->fwd);
    /* The daemon removes the container when its init exits: nothing to tell it. The state goes
     * first so the runtime can be exec'd: a container that survives a failed delete keeps its
     * mounted ld.so.preload (a mount holds the file), and is watched all the same. */
    if (oci_state_has(a->id, OCI_STATE_WATCHED)) {
        oci_state_remove(a->id);
        exec_runtime(a->fwd);
    }
    int rc = run_runtime(a->fwd, false);
    /* Failed: release only if the runtime no longer knows the container. */
    if (rc != 0 && runtime_quietly(a, "state", NULL) == 0)
        return rc;
    release(a->id, "deleted");
    return rc;
}

int main(int argc, char **argv)
{
    struct oci_args a;
    char err[512];
    if (oci_args_parse(argc, argv, &a, err, sizeof err) != 0) {
        fprintf(stderr, "convgpu-runtime: %s (see convgpu-runtime --help)\n", err);
        return 2;
    }
    if (a.runtime_dir)
        cli_set_runtime_dir(a.runtime_dir);
    const char *cmd = a.command;
    if (!cmd && argc > 1 && (strcmp(argv[argc - 1], "--help") == 0 ||
                             strcmp(argv[argc - 1], "-h") == 0)) {
        usage(stdout);
        oci_args_free(&a);
        return 0;
    }
    if (!cmd && argc > 1 && (strcmp(argv[argc - 1], "--version") == 0 ||
                             strcmp(argv[argc - 1], "-v") == 0)) {
        /* Ours first, then the runtime's own (Docker and Podman read the lines they know). */
        printf("convgpu-runtime version %s\n", CONVGPU_VERSION);
        fflush(stdout);
        exec_runtime(a.fwd);
    }
    if (cmd && strcmp(cmd, "hook") == 0) {
        oci_log_open(a.log_path, a.log_format, cli_runtime_dir());
        int rc = oci_hook_main(argc - a.cmd_index, argv + a.cmd_index);
        oci_args_free(&a);
        return rc;
    }
    bool create = cmd && strcmp(cmd, "create") == 0, run = cmd && strcmp(cmd, "run") == 0;
    bool del = cmd && strcmp(cmd, "delete") == 0;
    if (!create && !run && !del)
        exec_runtime(a.fwd);
    oci_log_open(a.log_path, a.log_format, cli_runtime_dir());
    int rc = del ? cmd_delete(&a) : cmd_create(&a, run);
    oci_args_free(&a);
    return rc;
}

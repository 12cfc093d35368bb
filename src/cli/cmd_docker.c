/* cmd_docker.c — `convgpu docker run --gpu-memory SIZE ...`: the paper's customised
 * nvidia-docker. The limit comes from --gpu-memory (or the paper's --nvidia-memory), else the
 * image label com.convgpu.gpu-memory or com.nvidia.memory.limit, else 1 GiB; a compute share
 * from --gpu-compute/--compute-mode, else (when the labels are read) the image labels
 * com.convgpu.gpu-compute/com.convgpu.compute-mode, else none. They reach convgpu-runtime
 * (installed by `convgpu setup docker`) as CONVGPU_GPU_MEMORY, CONVGPU_GPU_COMPUTE and
 * CONVGPU_COMPUTE_MODE in the container's environment, and the shim registers the container
 * before it exists. Everything else goes to `docker run` untouched. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "daemon_hint.h"
#include "core.h"
#include "http.h"
#include "size.h"

#define DEFAULT_LIMIT "1GiB"
#define PAPER_LABEL "com.nvidia.memory.limit"
#define MEMORY_LABEL "com.convgpu.gpu-memory"
#define COMPUTE_LABEL "com.convgpu.gpu-compute"
#define MODE_LABEL "com.convgpu.compute-mode"

static void usage(FILE *f)
{
    fprintf(f, "Usage: convgpu [--runtime-dir DIR] docker run [--gpu-memory SIZE] [--gpu-compute PCT]\n"
               "       [--compute-mode hard|elastic] [--priority N] [--no-swap] [--exclusive]\n"
               "       [DOCKER RUN OPTIONS] IMAGE [CMD...]\n\n"
               "Runs a Docker container with a GPU-memory limit through the convgpu runtime\n"
               "(install it once with: convgpu setup docker). The limit is --gpu-memory (or\n"
               "--nvidia-memory, the ConVGPU paper's spelling), else the image's label\n"
               MEMORY_LABEL " or " PAPER_LABEL ", else " DEFAULT_LIMIT ". Without --gpu-memory\n"
               "the image's labels are read (docker image inspect), and its labels\n"
               COMPUTE_LABEL " and " MODE_LABEL " give the compute share\n"
               "and mode the options do not. Every other argument goes to docker run untouched;\n"
               "convgpu adds --runtime convgpu and -e CONVGPU_GPU_MEMORY=SIZE (and\n"
               "CONVGPU_GPU_COMPUTE, CONVGPU_COMPUTE_MODE), and on a real GPU host (convgpud not\n"
               "emulating) --gpus all unless you pass --gpus: the runtime then exposes only the\n"
               "GPU convgpud placed the container on.\n\n"
               "  --gpu-memory SIZE     the limit: 512MiB, 1GiB, 1.5GiB or bytes\n"
               "  --gpu-compute PCT     its share of the GPU's time, a whole percent 1-100\n"
               "  --compute-mode MODE   elastic (default) or hard (never more than its share)\n"
               "  --priority N          0-9, higher goes first when memory is short\n"
               "                        (-e CONVGPU_PRIORITY=N)\n"
               "  --no-swap             never move its memory to the host (-e CONVGPU_NO_SWAP=yes)\n"
               "  --exclusive           a whole GPU (-e CONVGPU_EXCLUSIVE=yes)\n"
               "  $CONVGPU_DOCKER       the docker client to run (default: docker in PATH)\n");
}

/* docker run's long options that take no value (all others take one, unless given with =). */
static const char *const bool_long[] = {
    "detach", "interactive", "tty", "rm", "init", "privileged", "read-only", "publish-all",
    "no-healthcheck", "oom-kill-disable", "sig-proxy", "help", "quiet", "disable-content-trust",
    "use-api-socket", NULL};
static const char bool_short[] = "ditPq";

static bool is_bool_long(const char *name, size_t len)
{
    for (const char *const *b = bool_long; *b; b++)
        if (strlen(*b) == len && strncmp(*b, name, len) == 0)
            return true;
    return false;
}

static const char *docker_bin(void)
{
    const char *d = getenv("CONVGPU_DOCKER");
    return d && *d ? d : "docker";
}

/* The image's labels (a JSON object, maybe empty), or NULL when the image is not here. One
 * `docker image inspect` reads them all. */
static json_t *image_labels(const char *image)
{
    char buf[16384], sink[4096];
    size_t len = sizeof buf;
    int fds[2];
    if (pipe(fds) != 0)
        return NULL;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], STDOUT_FILENO);
        close(fds[0]);
        close(fds[1]);
        /* open + dup2, not freopen: only async-signal-safe calls between fork and exec. */
        int devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
        if (devnull >= 0)
            dup2(devnull, STDERR_FILENO);
        execlp(docker_bin(), docker_bin(), "image", "inspect", "--format",
               "{{json .Config.Labels}}", image, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    /* Read to the end (what does not fit is drained, so docker never blocks writing it). */
    size_t n = 0;
    bool whole = true;
    ssize_t r;
    while (pid > 0) {
        bool room = n + 1 < len;
        r = room ? read(fds[0], buf + n, len - n - 1) : read(fds[0], sink, sizeof sink);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        if (room)
            n += (size_t)r;
        else
            whole = false;
    }
    close(fds[0]);
    buf[n] = '\0';
    int status = 1;
    if (pid > 0)
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
            ;
    if (pid <= 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return NULL;
    /* "null" for an image without labels; a truncated or odd answer reads as no labels. */
    json_t *labels = whole ? json_loads(buf, JSON_DECODE_ANY, NULL) : NULL;
    if (!json_is_object(labels)) {
        json_decref(labels);
        labels = json_object();
    }
    return labels;
}

/* A label's value when it is a non-empty string, else NULL. */
static const char *label(json_t *labels, const char *key)
{
    const char *v = json_string_value(json_object_get(labels, key));
    return v && *v ? v : NULL;
}

/* Whether convgpud runs on NVIDIA GPUs (1) or emulates them (0); -1 (reported) when it does
 * not run. Read from the file the daemon keeps while it runs, held valid by the lock it holds
 * on its pid file: no HTTP client to load, which is most of what this command costs before it
 * execs docker. An older daemon without the file is asked over the control API. */
static int daemon_is_nvidia(void)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/convgpud.pid", cli_runtime_dir());
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    int open_errno = fd < 0 ? errno : 0;
    bool running = fd >= 0 && flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
    if (fd >= 0)
        close(fd); /* also drops the shared lock, if we got it */
    if (fd < 0 && open_errno != ENOENT) {
        running = true; /* cannot tell from here: ask below */
    } else if (!running) {
        char hint[PATH_MAX + 160];
        cgc_daemon_start_hint(getenv("CONVGPU_HOST_ROOT"), cli_runtime_dir(), hint,
                              sizeof hint);
        fprintf(stderr, "convgpu: convgpud is not running on %s (if it runs with another "
                        "--runtime-dir, give the same one: convgpu --runtime-dir DIR docker run "
                        "... or CONVGPU_RUNTIME_DIR=DIR; otherwise %s)\n",
                cli_runtime_dir(), hint);
        return -1;
    }
    snprintf(path, sizeof path, "%s/convgpud.json", cli_runtime_dir());
    json_t *ver = json_load_file(path, 0, NULL);
    if (!json_is_object(ver)) {
        json_decref(ver);
        char terr[512];
        long st = cli_request("GET", "/v1/version", NULL, &ver, terr, sizeof terr);
        if (st != 200) {
            cli_report_error(st, ver, terr);
            json_decref(ver);
            return -1;
        }
    }
    const char *mode = json_string_value(json_object_get(ver, "mode"));
    int nvidia = mode && strcmp(mode, "nvidia") == 0;
    json_decref(ver);
    return nvidia;
}

int cmd_docker(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (strcmp(argv[1], "run") != 0) {
        fprintf(stderr, "convgpu docker: only 'run' is handled (convgpu docker run --gpu-memory SIZE "
                        "...); use docker itself for '%s'\n", argv[1]);
        return 2;
    }
    char **out = calloc((size_t)argc + 24, sizeof *out);
    if (!out)
        return 125;
    int n = 0;
    out[n++] = (char *)docker_bin();
    out[n++] = "run";
    int fixed = n; /* our options go here, before the user's */
    enum { OURS = 16 };
    n += OURS;
    const char *size = NULL, *image = NULL, *pct = NULL, *mode = NULL;
    bool runtime_given = false, gpus_given = false;
    /* The option table's other rows this door offers as flags (container_options.h), passed on
     * as -e VARIABLE=VALUE for the shim; docker's own --gpus and --device stay docker's. */
    static const enum cgc_opt_id passed[] = {CGC_OPT_PRIORITY, CGC_OPT_NO_SWAP,
                                             CGC_OPT_EXCLUSIVE};
    enum { NPASSED = sizeof passed / sizeof passed[0] };
    char passed_env[NPASSED][64];
    bool passed_given[NPASSED] = {false};
    int i = 2;
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            free(out);
            return 0;
        }
        if (a[0] != '-' || strcmp(a, "-") == 0) {
            image = a;
            break;
        }
        if (strcmp(a, "--") == 0) {
            out[n++] = argv[i++];
            image = i < argc ? argv[i] : NULL;
            break;
        }
        if (a[1] == '-') {
            const char *name = a + 2, *eq = strchr(name, '=');
            size_t len = eq ? (size_t)(eq - name) : strlen(name);
            int row = -1;
            for (int r = 0; r < NPASSED; r++)
                if (strlen(cgc_options[passed[r]].flag) == len &&
                    strncmp(cgc_options[passed[r]].flag, name, len) == 0)
                    row = r;
            if (row >= 0) {
                const struct cgc_option *o = &cgc_options[passed[row]];
                int was = i;
                struct cgc_option_values v = {0};
                int rc = cli_take_option("docker run", CGC_DOOR_RUN, argc, argv, &i, &v);
                if (rc != 1) {
                    free(out);
                    return 125;
                }
                const char *value = o->type == CGC_TYPE_FLAG ? "yes"
                                    : eq                     ? eq + 1
                                                             : argv[was + 1];
                snprintf(passed_env[row], sizeof passed_env[row], "%s=%s", o->env, value);
                passed_given[row] = true;
                continue;
            }
            bool memory = (len == 10 && strncmp(name, "gpu-memory", 10) == 0) ||
                          (len == 13 && strncmp(name, "nvidia-memory", 13) == 0);
            bool compute = len == 11 && strncmp(name, "gpu-compute", 11) == 0;
            bool cmode = len == 12 && strncmp(name, "compute-mode", 12) == 0;
            bool ours = memory || compute || cmode;
            runtime_given |= len == 7 && strncmp(name, "runtime", 7) == 0;
            gpus_given |= len == 4 && strncmp(name, "gpus", 4) == 0;
            const char *value = eq ? eq + 1 : NULL;
            bool takes = !eq && !is_bool_long(name, len);
            if (takes && i + 1 >= argc) {
                fprintf(stderr, "convgpu docker run: %s needs a value\n", a);
                free(out);
                return 125;
            }
            if (takes)
                value = argv[i + 1];
            if (ours) {
                *(memory ? &size : compute ? &pct : &mode) = value;
            } else {
                out[n++] = argv[i];
                if (takes)
                    out[n++] = argv[i + 1];
            }
            if (takes)
                i++;
            continue;
        }
        /* Short options, possibly clustered (-it, -dit, -eFOO=1). */
        out[n++] = argv[i];
        for (const char *p = a + 1; *p; p++) {
            if (strchr(bool_short, *p))
                continue;
            if (p[1] == '\0') { /* the value is the next argument */
                if (i + 1 >= argc) {
                    fprintf(stderr, "convgpu docker run: %s needs a value\n", a);
                    free(out);
                    return 125;
                }
                out[n++] = argv[++i];
            }
            break;
        }
    }
    for (; i < argc; i++)
        out[n++] = argv[i];
    if (!image) {
        fprintf(stderr, "convgpu docker run: no image given (convgpu docker run --gpu-memory 1GiB "
                        "IMAGE [CMD...])\n");
        free(out);
        return 125;
    }

    /* The limit: the option, else the image label, else the default. Without the option the
     * labels are read (one docker run of its own), and they also give the compute share and
     * mode the options do not; a caller who sized the container pays no inspect. */
    json_t *labels = NULL;
    const char *from = "--gpu-memory", *pct_from = "--gpu-compute", *mode_from = "--compute-mode";
    if (!size) {
        labels = image_labels(image);
        if ((size = label(labels, MEMORY_LABEL))) {
            from = "image label " MEMORY_LABEL;
        } else if ((size = label(labels, PAPER_LABEL))) {
            from = "image label " PAPER_LABEL;
        } else {
            size = DEFAULT_LIMIT;
            from = "default";
            if (!labels)
                fprintf(stderr, "convgpu: image %s is not here yet, so its labels cannot be read; "
                                "using %s (docker pull it first to use its labels)\n", image,
                        DEFAULT_LIMIT);
        }
        if (!pct && (pct = label(labels, COMPUTE_LABEL)))
            pct_from = "image label " COMPUTE_LABEL;
        if (!mode && (mode = label(labels, MODE_LABEL)))
            mode_from = "image label " MODE_LABEL;
    }
    uint64_t bytes;
    const char *why = NULL;
    unsigned share = 0;
    cg_compute_mode cm;
    int bad = 0;
    if (cg_parse_size(size, &bytes, &why) != 0 || bytes == 0) {
        fprintf(stderr, "convgpu docker run: bad GPU-memory size '%s' (%s): %s\n", size, from,
                why ? why : "must be greater than zero");
        bad = 1;
    } else if (pct && !cg_compute_pct_parse(pct, &share)) {
        fprintf(stderr, "convgpu docker run: bad compute share '%s' (%s): a whole percentage from "
                        "1 to 100\n", pct, pct_from);
        bad = 1;
    } else if (mode && !cg_compute_mode_parse(mode, &cm)) {
        fprintf(stderr, "convgpu docker run: bad compute mode '%s' (%s): hard or elastic\n", mode,
                mode_from);
        bad = 1;
    } else if (mode && !pct) {
        fprintf(stderr, "convgpu docker run: a compute mode (%s) needs a share: give --gpu-compute "
                        "PCT too\n", mode_from);
        bad = 1;
    }
    if (bad) {
        json_decref(labels);
        free(out);
        return 125;
    }

    /* The daemon must run; its mode says whether the NVIDIA toolkit must be asked for the GPU. */
    int nvidia = daemon_is_nvidia();
    if (nvidia < 0) {
        json_decref(labels);
        free(out);
        return 125;
    }

    char env[sizeof "CONVGPU_GPU_MEMORY=" + 256], env_pct[48], env_mode[48];
    snprintf(env, sizeof env, "CONVGPU_GPU_MEMORY=%s", size);
    snprintf(env_pct, sizeof env_pct, "CONVGPU_GPU_COMPUTE=%u", share);
    snprintf(env_mode, sizeof env_mode, "CONVGPU_COMPUTE_MODE=%s",
             mode ? cg_compute_mode_name(cm) : "");
    int k = fixed;
    if (!runtime_given) {
        out[k++] = "--runtime";
        out[k++] = "convgpu";
    } else {
        fprintf(stderr, "convgpu: keeping your --runtime; it must be convgpu-runtime for the limit "
                        "to apply\n");
    }
    out[k++] = "-e";
    out[k++] = env;
    if (pct) {
        out[k++] = "-e";
        out[k++] = env_pct;
    }
    if (mode) {
        out[k++] = "-e";
        out[k++] = env_mode;
    }
    for (int r = 0; r < NPASSED; r++)
        if (passed_given[r]) {
            out[k++] = "-e";
            out[k++] = passed_env[r];
        }
    if (nvidia == 1 && !gpus_given) {
        out[k++] = "--gpus";
        out[k++] = "all";
    }
    /* Close the gap left for our options. */
    int gap = fixed + OURS - k;
    memmove(out + k, out + fixed + OURS, (size_t)(n - fixed - OURS + 1) * sizeof *out);
    n -= gap;
    out[n] = NULL;
    if (strcmp(from, "--gpu-memory") != 0)
        fprintf(stderr, "convgpu: GPU-memory limit %s (%s)\n", size, from);
    if (pct && strcmp(pct_from, "--gpu-compute") != 0)
        fprintf(stderr, "convgpu: compute share %u%% (%s)\n", share, pct_from);
    json_decref(labels);
    execvp(out[0], out);
    fprintf(stderr, "convgpu docker run: cannot run %s: %s (install docker, or set $CONVGPU_DOCKER)\n",
            out[0], strerror(errno));
    free(out);
    return 127;
}

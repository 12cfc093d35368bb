/* main.c — convgpu-device-plugin: flags, then three things until SIGTERM: a poller that reads
 * convgpud's devices (state.c), the gRPC endpoints (rpc.cc), and a watch on the plugin directory
 * that serves and registers again whenever kubelet.sock is created (a kubelet restart) (plugin.h
 * has the whole story). */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "container_options.h"
#include "http.h"
#include "plugin.h"
#include "size.h"

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: convgpu-device-plugin [OPTIONS]\n\n"
            "The kubelet device plugin (API " DP_API_VERSION ") for convgpu: offers convgpud's GPUs as\n"
            "  " DP_RESOURCE_MEMORY "   one device ID per memory unit (gpu<INDEX>-mem-<N>)\n"
            "  " DP_RESOURCE_COMPUTE "  one device ID per 1%% of a GPU (gpu<INDEX>-compute-<N>)\n"
            "  " DP_RESOURCE_GPU "          --gpu-slots IDs per GPU (gpu<INDEX>-slot-<N>): a container\n"
            "                          asking for N of them gets N GPUs that talk fastest\n"
            "serving " DP_ENDPOINT_MEMORY ", " DP_ENDPOINT_COMPUTE " and " DP_ENDPOINT_GPU " in the\n"
            "plugin directory and registering them with " DP_KUBELET_SOCKET " there (again whenever\n"
            "kubelet restarts). A one-GPU container's units come from one GPU; Allocate records\n"
            "what the units grant with convgpud and answers its token in " DP_ENV_ALLOCATION ",\n"
            DP_ENV_ALLOCATION_COMPUTE " or " DP_ENV_ALLOCATION_GPUS ", from which\n"
            "convgpu-runtime registers the container (memory and compute are the pod's totals,\n"
            "split evenly over the GPUs of its slots).\n\n"
            "  --plugin-dir DIR    kubelet's device plugin directory\n"
            "                      (default /var/lib/kubelet/device-plugins)\n"
            "  --runtime-dir DIR   convgpud's runtime directory (default $CONVGPU_RUNTIME_DIR,\n"
            "                      else /run/convgpu)\n"
            "  --memory-unit SIZE  one memory unit (default 256MiB)\n"
            "  --gpu-slots N       " DP_RESOURCE_GPU " IDs per GPU: how many multi-GPU containers\n"
            "                      may share one GPU (1 to 1000, default 8)\n"
            "  --poll-ms N         how often convgpud's devices are read (default 1000)\n"
            "  --help              this help\n"
            "  --version           the version\n\n"
            "The node operator's options for every container whose memory this plugin allocates\n"
            "(recorded with convgpud beside the memory; a pod's own variables are never read):\n");
    char rows[1024];
    cgc_options_usage(CGC_DOOR_K8S, rows, sizeof rows);
    fputs(rows, f);
}

/* --priority N, --no-swap, --exclusive: the option table's rows for this door, parsed by its
 * one parser (the same words as convgpu run's). Returns 0, or 2 after saying why. */
static int operator_option(const char *flag, const char *value, struct dp_config *c)
{
    const struct cgc_option *o = cgc_option_find(CGC_DOOR_K8S, flag);
    struct cgc_option_values v = {0};
    char where[64], err[256];
    snprintf(where, sizeof where, "--%s", flag);
    if (!o || cgc_option_apply(o, where, value, &v, err, sizeof err) != 0) {
        fprintf(stderr, "convgpu-device-plugin: %s\n", o ? err : "unknown option");
        return 2;
    }
    if (v.spec.has_priority) {
        c->has_priority = true;
        c->priority = (unsigned)v.spec.priority;
    }
    c->no_swap |= v.spec.no_swap;
    c->exclusive |= v.spec.exclusive;
    return 0;
}

__attribute__((format(printf, 1, 2))) static void say(const char *fmt, ...)
{
    char when[32];
    time_t t = time(NULL);
    struct tm tm;
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", gmtime_r(&t, &tm));
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s convgpu-device-plugin: ", when);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static int parse_args(int argc, char **argv, struct dp_config *c)
{
    enum { O_PLUGIN_DIR = 256, O_RUNTIME_DIR, O_UNIT, O_SLOTS, O_POLL, O_VERSION, O_PRIORITY,
           O_NO_SWAP, O_EXCLUSIVE };
    static const struct option opts[] = {
        {"plugin-dir", required_argument, NULL, O_PLUGIN_DIR},
        {"runtime-dir", required_argument, NULL, O_RUNTIME_DIR},
        {"memory-unit", required_argument, NULL, O_UNIT},
        {"gpu-slots", required_argument, NULL, O_SLOTS},
        {"poll-ms", required_argument, NULL, O_POLL},
        {"priority", required_argument, NULL, O_PRIORITY},
        {"no-swap", no_argument, NULL, O_NO_SWAP},
        {"exclusive", no_argument, NULL, O_EXCLUSIVE},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, O_VERSION},
        {0},
    };
    *c = (struct dp_config){.unit_bytes = 256u << 20, .gpu_slots = DP_DEFAULT_SLOTS,
                            .poll_ms = 1000};
    snprintf(c->plugin_dir, sizeof c->plugin_dir, "/var/lib/kubelet/device-plugins");
    int o;
    opterr = 0;
    while ((o = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        const char *why = NULL;
        char *end;
        long v;
        switch (o) {
        case O_PLUGIN_DIR:
            if (optarg[0] != '/' || strlen(optarg) >= sizeof c->plugin_dir - 32) {
                fprintf(stderr, "convgpu-device-plugin: --plugin-dir needs an absolute path "
                                "shorter than %zu characters\n", sizeof c->plugin_dir - 32);
                return 2;
            }
            snprintf(c->plugin_dir, sizeof c->plugin_dir, "%s", optarg);
            break;
        case O_RUNTIME_DIR:
            if (!optarg[0] || strlen(optarg) >= PATH_MAX - 32) {
                fprintf(stderr, "convgpu-device-plugin: --runtime-dir needs a directory\n");
                return 2;
            }
            cli_set_runtime_dir(optarg);
            break;
        case O_UNIT:
            if (cg_parse_size(optarg, &c->unit_bytes, &why) != 0 || c->unit_bytes < (1u << 20)) {
                fprintf(stderr, "convgpu-device-plugin: --memory-unit %s: %s\n", optarg,
                        why ? why : "a unit is at least 1MiB");
                return 2;
            }
            break;
        case O_SLOTS:
            errno = 0;
            v = strtol(optarg, &end, 10);
            if (errno || *end || end == optarg || optarg[0] == '+' || optarg[0] == ' ' || v < 1 ||
                v > (long)DP_MAX_SLOTS) {
                fprintf(stderr, "convgpu-device-plugin: --gpu-slots %s: give 1 to %u\n", optarg,
                        DP_MAX_SLOTS);
                return 2;
            }
            c->gpu_slots = (unsigned)v;
            break;
        case O_POLL:
            errno = 0;
            v = strtol(optarg, &end, 10);
            if (errno || *end || end == optarg || v < 10 || v > 60000) {
                fprintf(stderr, "convgpu-device-plugin: --poll-ms %s: give 10 to 60000\n", optarg);
                return 2;
            }
            c->poll_ms = (int)v;
            break;
        case O_PRIORITY:
            if (operator_option("priority", optarg, c) != 0)
                return 2;
            break;
        case O_NO_SWAP:
            if (operator_option("no-swap", NULL, c) != 0)
                return 2;
            break;
        case O_EXCLUSIVE:
            if (operator_option("exclusive", NULL, c) != 0)
                return 2;
            break;
        case 'h':
            usage(stdout);
            exit(0);
        case O_VERSION:
            printf("convgpu-device-plugin %s (device plugin API %s)\n", CONVGPU_VERSION,
                   DP_API_VERSION);
            exit(0);
        default:
            fprintf(stderr, "convgpu-device-plugin: unknown or incomplete option %s\n",
                    argv[optind - 1]);
            usage(stderr);
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "convgpu-device-plugin: unexpected argument %s\n", argv[optind]);
        usage(stderr);
        return 2;
    }
    return 0;
}

/* ---- the poller ---------------------------------------------------------------------------- */
static pthread_mutex_t poll_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t poll_stop = PTHREAD_COND_INITIALIZER;
static int poll_stopping;

static void *poller(void *arg)
{
    (void)arg;
    int was_up = -1;
    pthread_mutex_lock(&poll_lock);
    while (!poll_stopping) {
        pthread_mutex_unlock(&poll_lock);
        struct dp_inventory inv;
        char err[512];
        int up = dp_refresh(&inv, err, sizeof err) == 0;
        if (up != was_up) {
            if (up)
                say("convgpud answers: %zu GPU(s)", inv.ngpus);
            else
                say("convgpud unreachable, every unit Unhealthy: %s", err);
            was_up = up;
        }
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        long ns = until.tv_nsec + (long)dp_config_get()->poll_ms * 1000000L;
        until.tv_sec += ns / 1000000000L;
        until.tv_nsec = ns % 1000000000L;
        pthread_mutex_lock(&poll_lock);
        if (!poll_stopping)
            pthread_cond_timedwait(&poll_stop, &poll_lock, &until);
    }
    pthread_mutex_unlock(&poll_lock);
    return NULL;
}

/* ---- serving and registering ---------------------------------------------------------------- */
static int serving;

/* (Re)starts the endpoints and registers them. kubelet removes the plugins' sockets when it
 * starts, so the endpoints are served afresh before every registration. */
static void serve_and_register(void)
{
    char err[512];
    if (serving)
        dp_rpc_stop();
    serving = 0;
    if (dp_rpc_serve(err, sizeof err) != 0) {
        say("%s", err);
        return;
    }
    serving = 1;
    if (dp_rpc_register(err, sizeof err) != 0) {
        say("%s; registering again when %s is created", err, DP_KUBELET_SOCKET);
        return;
    }
    say("registered %s and %s with %s/%s", DP_RESOURCE_MEMORY, DP_RESOURCE_COMPUTE,
        dp_config_get()->plugin_dir, DP_KUBELET_SOCKET);
}

static int kubelet_present(void)
{
    char path[PATH_MAX];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", dp_config_get()->plugin_dir, DP_KUBELET_SOCKET);
    return stat(path, &st) == 0 && S_ISSOCK(st.st_mode);
}

int main(int argc, char **argv)
{
    struct dp_config c;
    int rc = parse_args(argc, argv, &c);
    if (rc)
        return rc;
    dp_configure(&c);

    struct stat st;
    if (stat(c.plugin_dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        fprintf(stderr, "convgpu-device-plugin: the plugin directory %s does not exist\n",
                c.plugin_dir);
        return 1;
    }
    sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL); /* before any thread: they all inherit it */
    signal(SIGPIPE, SIG_IGN);
    int sfd = signalfd(-1, &sigs, SFD_CLOEXEC);
    int ifd = inotify_init1(IN_CLOEXEC);
    if (sfd < 0 || ifd < 0 || inotify_add_watch(ifd, c.plugin_dir, IN_CREATE | IN_MOVED_TO) < 0) {
        fprintf(stderr, "convgpu-device-plugin: cannot watch %s: %s\n", c.plugin_dir,
                strerror(errno));
        return 1;
    }
    struct dp_inventory first;
    char why[512];
    if (dp_refresh(&first, why, sizeof why) != 0) /* Allocate's view, before anything is served */
        say("convgpud unreachable for now: %s", why);
    pthread_t poll_thread;
    if (pthread_create(&poll_thread, NULL, poller, NULL) != 0) {
        fprintf(stderr, "convgpu-device-plugin: cannot start the poller\n");
        return 1;
    }
    say("watching %s (memory unit %llu bytes, %u GPU slots per GPU)", c.plugin_dir,
        (unsigned long long)c.unit_bytes, c.gpu_slots);
    if (kubelet_present())
        serve_and_register();
    else
        say("waiting for %s/%s", c.plugin_dir, DP_KUBELET_SOCKET);

    for (;;) {
        struct pollfd p[2] = {{.fd = sfd, .events = POLLIN}, {.fd = ifd, .events = POLLIN}};
        if (poll(p, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        if (p[0].revents)
            break;
        char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
        ssize_t n = read(ifd, buf, sizeof buf);
        int kubelet_new = 0;
        for (ssize_t off = 0; off < n;) {
            const struct inotify_event *e = (const struct inotify_event *)(buf + off);
            if (e->len && strcmp(e->name, DP_KUBELET_SOCKET) == 0)
                kubelet_new = 1;
            off += (ssize_t)(sizeof *e + e->len);
        }
        if (kubelet_new && kubelet_present()) {
            say("%s created (kubelet started): serving and registering again", DP_KUBELET_SOCKET);
            serve_and_register();
        }
    }
    say("stopping");
    pthread_mutex_lock(&poll_lock);
    poll_stopping = 1;
    pthread_cond_signal(&poll_stop);
    pthread_mutex_unlock(&poll_lock);
    pthread_join(poll_thread, NULL);
    if (serving)
        dp_rpc_stop();
    return 0;
}

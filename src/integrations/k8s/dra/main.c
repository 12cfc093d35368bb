/* main.c — convgpu-dra-driver: flags, then serve (rpc.cc) and publish this node's ResourceSlices
 * (prepare.c) until SIGTERM; the slices are published again whenever convgpud's GPUs change
 * (read every --poll-ms) and after a failed attempt. See dra.h for what the driver does. */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <time.h>

#include "convgpu_client.h"
#include "dra.h"

__attribute__((format(printf, 1, 2))) static void say(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "convgpu-dra-driver: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: convgpu-dra-driver [OPTIONS]\n"
            "The DRA kubelet plugin of driver " DRA_DRIVER ": publishes this node's GPUs as\n"
            "ResourceSlices (" DRA_API_GROUP ") and turns prepared claims into convgpud containers.\n"
            "  --node NAME            this node (default: $NODE_NAME)\n"
            "  --api-server URL       the API server (default: the in-cluster one)\n"
            "  --token-file FILE      bearer token (default: the service account's; \"\" for none)\n"
            "  --ca-file FILE         CA of the API server (default: the service account's)\n"
            "  --plugin-dir DIR       where dra.sock is served (default: "
            "/var/lib/kubelet/plugins/" DRA_DRIVER ")\n"
            "  --registry-dir DIR     kubelet's plugin registry (default: "
            "/var/lib/kubelet/plugins_registry)\n"
            "  --cdi-dir DIR          where claims' CDI specs are written (default: /var/run/cdi)\n"
            "  --state-dir DIR        prepared claims' records (default: /var/lib/convgpu-dra)\n"
            "  --runtime-dir DIR      convgpud's runtime directory (default: /run/convgpu)\n"
            "  --partitions N         publish N fixed partitions per GPU over shared counters\n"
            "                         instead of consumable capacity (1-16; default: 0, off)\n"
            "  --socket-owner UID[:GID] who owns the claim containers' sockets (default: 0:0)\n"
            "  --priority-map VALUE:PRIORITY[,...]\n"
            "                         a claim's convgpu priority (0-9) from its pods' PriorityClass\n"
            "                         values (spec.priority): the row with the highest VALUE at\n"
            "                         most the pod's wins, the highest of its pods counts\n"
            "                         (e.g. 1000000000:9,1000:5,0:0; default: none, priority 0)\n"
            "  --no-publish           do not publish ResourceSlices\n"
            "  --poll-ms N            how often convgpud's GPUs are read (default: 10000)\n"
            "  -h, --help             this text\n"
            "  --version              the version\n");
}

static int dir_arg(const char *opt, const char *v, char *out, size_t len)
{
    if (v[0] != '/' || strlen(v) >= len - 64) {
        fprintf(stderr, "convgpu-dra-driver: --%s needs an absolute path shorter than %zu "
                        "characters\n", opt, len - 64);
        return -1;
    }
    snprintf(out, len, "%s", v);
    return 0;
}

static int parse_uint(const char *s, unsigned long max, unsigned long *out)
{
    char *end;
    errno = 0;
    unsigned long v = s[0] >= '0' && s[0] <= '9' ? strtoul(s, &end, 10) : max + 1;
    if (errno || v > max || (s[0] >= '0' && s[0] <= '9' && *end))
        return -1;
    *out = v;
    return 0;
}

static int parse_args(int argc, char **argv, struct dra_config *c, struct k8s_api *a, int *poll_ms)
{
    enum { O_NODE = 256, O_API, O_TOKEN, O_CA, O_PLUGIN, O_REG, O_CDI, O_STATE, O_RUN, O_PARTS,
           O_OWNER, O_NOPUB, O_POLL, O_VERSION, O_PRIO };
    static const struct option opts[] = {
        {"node", required_argument, NULL, O_NODE},
        {"api-server", required_argument, NULL, O_API},
        {"token-file", required_argument, NULL, O_TOKEN},
        {"ca-file", required_argument, NULL, O_CA},
        {"plugin-dir", required_argument, NULL, O_PLUGIN},
        {"registry-dir", required_argument, NULL, O_REG},
        {"cdi-dir", required_argument, NULL, O_CDI},
        {"state-dir", required_argument, NULL, O_STATE},
        {"runtime-dir", required_argument, NULL, O_RUN},
        {"partitions", required_argument, NULL, O_PARTS},
        {"socket-owner", required_argument, NULL, O_OWNER},
        {"no-publish", no_argument, NULL, O_NOPUB},
        {"priority-map", required_argument, NULL, O_PRIO},
        {"poll-ms", required_argument, NULL, O_POLL},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, O_VERSION},
        {0},
    };
    *c = (struct dra_config){.publish = true};
    *a = (struct k8s_api){0};
    *poll_ms = 10000;
    snprintf(c->plugin_dir, sizeof c->plugin_dir, "/var/lib/kubelet/plugins/" DRA_DRIVER);
    snprintf(c->registry_dir, sizeof c->registry_dir, "/var/lib/kubelet/plugins_registry");
    snprintf(c->cdi_dir, sizeof c->cdi_dir, "/var/run/cdi");
    snprintf(c->state_dir, sizeof c->state_dir, "/var/lib/convgpu-dra");
    k8s_api_sa_defaults(a);
    const char *node = getenv("NODE_NAME");
    snprintf(c->node, sizeof c->node, "%s", node ? node : "");
    int o;
    unsigned long v;
    opterr = 0;
    while ((o = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        int bad = 0;
        switch (o) {
        case O_NODE: snprintf(c->node, sizeof c->node, "%s", optarg); break;
        case O_API:
            if (strncmp(optarg, "http://", 7) != 0 && strncmp(optarg, "https://", 8) != 0) {
                fprintf(stderr, "convgpu-dra-driver: --api-server needs an http(s) URL\n");
                return 2;
            }
            snprintf(a->server, sizeof a->server, "%s", optarg);
            break;
        case O_TOKEN: snprintf(a->token_file, sizeof a->token_file, "%s", optarg); break;
        case O_CA: snprintf(a->ca_file, sizeof a->ca_file, "%s", optarg); break;
        case O_PLUGIN: bad = dir_arg("plugin-dir", optarg, c->plugin_dir, sizeof c->plugin_dir); break;
        case O_REG: bad = dir_arg("registry-dir", optarg, c->registry_dir, sizeof c->registry_dir); break;
        case O_CDI: bad = dir_arg("cdi-dir", optarg, c->cdi_dir, sizeof c->cdi_dir); break;
        case O_STATE: bad = dir_arg("state-dir", optarg, c->state_dir, sizeof c->state_dir); break;
        case O_RUN: cli_set_runtime_dir(optarg); break;
        case O_PARTS:
            if (parse_uint(optarg, 16, &v) != 0) {
                fprintf(stderr, "convgpu-dra-driver: --partitions %s: give 0 to 16\n", optarg);
                return 2;
            }
            c->partitions = (unsigned)v;
            break;
        case O_OWNER: {
            char uid[16] = "", *colon = strchr(optarg, ':');
            unsigned long u, g = 0;
            snprintf(uid, sizeof uid, "%.*s", colon ? (int)(colon - optarg) : 15, optarg);
            if (parse_uint(uid, 0x7fffffff, &u) != 0 ||
                (colon && parse_uint(colon + 1, 0x7fffffff, &g) != 0)) {
                fprintf(stderr, "convgpu-dra-driver: --socket-owner %s: give UID[:GID]\n", optarg);
                return 2;
            }
            c->owner_uid = (unsigned)u;
            c->owner_gid = colon ? (unsigned)g : (unsigned)u;
            break;
        }
        case O_NOPUB: c->publish = false; break;
        case O_PRIO: {
            char why[256];
            if (dra_priority_map_parse(optarg, &c->priority_map, why, sizeof why) != 0) {
                fprintf(stderr, "convgpu-dra-driver: %s\n", why);
                return 2;
            }
            break;
        }
        case O_POLL:
            if (parse_uint(optarg, 3600000, &v) != 0 || v < 10) {
                fprintf(stderr, "convgpu-dra-driver: --poll-ms %s: give 10 to 3600000\n", optarg);
                return 2;
            }
            *poll_ms = (int)v;
            break;
        case 'h': usage(stdout); exit(0);
        case O_VERSION:
            printf("convgpu-dra-driver %s (DRA v1.DRAPlugin, v1beta1.DRAPlugin; %s)\n",
                   CONVGPU_VERSION, DRA_API_GROUP);
            exit(0);
        default:
            fprintf(stderr, "convgpu-dra-driver: unknown or incomplete option %s\n",
                    argv[optind - 1]);
            usage(stderr);
            return 2;
        }
        if (bad)
            return 2;
    }
    if (optind < argc) {
        fprintf(stderr, "convgpu-dra-driver: unexpected argument %s\n", argv[optind]);
        return 2;
    }
    if (!c->node[0]) {
        fprintf(stderr, "convgpu-dra-driver: give --node (or NODE_NAME): this node's name\n");
        return 2;
    }
    char err[256];
    if (!a->server[0] && k8s_api_in_cluster(a, err, sizeof err) != 0) {
        fprintf(stderr, "convgpu-dra-driver: %s\n", err);
        return 2;
    }
    return 0;
}

int main(int argc, char **argv)
{
    struct dra_config c;
    struct k8s_api a;
    int poll_ms;
    int rc = parse_args(argc, argv, &c, &a, &poll_ms);
    if (rc)
        return rc;
    char claims[512];
    snprintf(claims, sizeof claims, "%s/claims", c.state_dir);
    mkdir(c.state_dir, 0700);
    mkdir(claims, 0700);
    mkdir(c.cdi_dir, 0755);
    mkdir(c.plugin_dir, 0750);
    struct stat st;
    if (stat(claims, &st) != 0 || !S_ISDIR(st.st_mode) || stat(c.registry_dir, &st) != 0) {
        fprintf(stderr, "convgpu-dra-driver: cannot use %s or the registry %s\n", claims,
                c.registry_dir);
        return 1;
    }
    dra_configure(&c, &a);

    sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGINT);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL); /* before gRPC's threads: they inherit it */
    signal(SIGPIPE, SIG_IGN);
    int sfd = signalfd(-1, &sigs, SFD_CLOEXEC);
    char err[1024];
    if (sfd < 0 || dra_rpc_serve(err, sizeof err) != 0) {
        fprintf(stderr, "convgpu-dra-driver: %s\n", sfd < 0 ? "signalfd failed" : err);
        return 1;
    }
    say("serving %s/dra.sock and %s/%s-reg.sock for node %s (%s)", c.plugin_dir, c.registry_dir,
        DRA_DRIVER, c.node, c.partitions ? "partitions" : "consumable capacity");
    bool ok = false;
    for (;;) {
        if (c.publish) {
            bool was = ok;
            ok = dra_refresh_slices(!ok, err, sizeof err) == 0;
            if (ok && !was)
                say("published the ResourceSlices of pool %s", c.node);
            else if (!ok)
                say("cannot publish the ResourceSlices yet: %s", err);
        }
        struct pollfd p = {.fd = sfd, .events = POLLIN};
        int n = poll(&p, 1, poll_ms);
        if (n > 0)
            break;
        if (n < 0 && errno != EINTR)
            break;
    }
    say("stopping");
    dra_rpc_stop();
    return 0;
}

/* main.c — convgpu-scheduler-extender: kube-scheduler's HTTP extender that keeps a pod off nodes
 * where no single GPU (or, for a container on convgpu.io/gpu: N, no N GPUs) holds its convgpu
 * units and ranks the rest by binpack or spread (docs/KUBERNETES.md, "Scheduler extender").
 * Flags, the listening socket, and a clean stop on SIGTERM/SIGINT; the requests are served by
 * server.c. */
#include <errno.h>
#include <malloc.h>
#include <netdb.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "cluster_fit.h"
#include "server.h"
#include "size.h"

#define DEFAULT_LISTEN "127.0.0.1:8888"
#define DEFAULT_MAX_BODY (64ull << 20)
#define DEFAULT_BODY_BUDGET (64ull << 20)
#define DEFAULT_MAX_CONNS 256u
#define MAX_CONNS_CEILING 768u /* with the server's slack, under the usual 1024 descriptors */
#define DEFAULT_REQUEST_TIMEOUT_S 10u
/* kube-scheduler (in its group) may connect; no one else. */
#define SOCKET_MODE 0660

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: convgpu-scheduler-extender [--listen HOST:PORT | --socket PATH]\n"
            "                                  [--policy binpack|spread] [--max-body SIZE]\n"
            "                                  [--body-budget SIZE] [--max-connections N]\n"
            "                                  [--request-timeout SECONDS]\n\n"
            "kube-scheduler's HTTP extender for convgpu: filter keeps only nodes where one GPU\n"
            "has the pod's convgpu.io/gpu-memory and convgpu.io/gpu-compute units free, or, for\n"
            "a container that asks for convgpu.io/gpu: N, N GPUs have 1/N of them free each\n"
            "(from each Node's convgpu.io/gpus annotation, kept by `convgpu k8s publish`);\n"
            "prioritize ranks them 0-10 by the placement policy. Configure kube-scheduler with\n"
            "filterVerb: filter, prioritizeVerb: prioritize, nodeCacheCapable: false and no\n"
            "bindVerb (docs/KUBERNETES.md).\n\n"
            "  --listen HOST:PORT  TCP address to serve on (default " DEFAULT_LISTEN "; port 0:\n"
            "                      any free port, printed when listening)\n"
            "  --socket PATH       serve on a UNIX socket instead (mode 0660: owner and group)\n"
            "  --policy P          binpack (default: the fullest GPU(s) that fit, least\n"
            "                      fragmentation) or spread (the emptiest)\n"
            "  --max-body SIZE     largest request body (default 64MiB: kube-scheduler sends\n"
            "                      whole Node objects); larger ones are answered 413\n"
            "  --body-budget SIZE  request bodies (and answers) held at once over all\n"
            "                      connections (default 64MiB, at least --max-body); past it\n"
            "                      the oldest upload of the peer holding most is closed\n"
            "  --max-connections N connections at once (default 256, 16-768); past it a new\n"
            "                      one closes the oldest unfinished request of the peer with\n"
            "                      the most connections (peer: UNIX uid, TCP address)\n"
            "  --request-timeout S seconds a request's headers and body have to arrive in,\n"
            "                      however slowly they trickle (default 10, 1-600); also how\n"
            "                      long an idle kept-alive connection or a stalled reader stays\n"
            "  -h, --help          this help\n"
            "  --version           print the version and exit\n");
}

static int parse_uint(const char *v, unsigned lo, unsigned hi, unsigned *out)
{
    char *end;
    errno = 0;
    unsigned long n = strtoul(v, &end, 10);
    if (v[0] < '0' || v[0] > '9' || *end || errno || n < lo || n > hi)
        return -1;
    *out = (unsigned)n;
    return 0;
}

static int listen_tcp(const char *addr, char *shown, size_t shownlen)
{
    char host[256];
    const char *colon = strrchr(addr, ':');
    if (!colon || colon == addr || (size_t)(colon - addr) >= sizeof host || !colon[1]) {
        fprintf(stderr, "convgpu-scheduler-extender: --listen wants HOST:PORT, not '%s'\n", addr);
        return -1;
    }
    memcpy(host, addr, (size_t)(colon - addr));
    host[colon - addr] = '\0';
    if (host[0] == '[' && host[strlen(host) - 1] == ']') { /* [::1]:8888 */
        memmove(host, host + 1, strlen(host));
        host[strlen(host) - 1] = '\0';
    }
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_PASSIVE | AI_NUMERICSERV}, *res = NULL;
    int rc = getaddrinfo(host, colon + 1, &hints, &res);
    if (rc != 0) {
        fprintf(stderr, "convgpu-scheduler-extender: --listen %s: %s\n", addr, gai_strerror(rc));
        return -1;
    }
    int fd = -1, saved = 0;
    for (struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, 0);
        int one = 1;
        if (fd >= 0 && (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
                        bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(fd, 128) != 0)) {
            saved = errno;
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(res);
    if (fd < 0) {
        fprintf(stderr, "convgpu-scheduler-extender: cannot listen on %s: %s\n", addr,
                strerror(saved));
        return -1;
    }
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    char h[NI_MAXHOST], p[NI_MAXSERV];
    if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0 &&
        getnameinfo((struct sockaddr *)&ss, sl, h, sizeof h, p, sizeof p,
                    NI_NUMERICHOST | NI_NUMERICSERV) == 0)
        snprintf(shown, shownlen, ss.ss_family == AF_INET6 ? "[%s]:%s" : "%s:%s", h, p);
    else
        snprintf(shown, shownlen, "%s", addr);
    return fd;
}

static int listen_unix(const char *path)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof sa.sun_path) {
        fprintf(stderr, "convgpu-scheduler-extender: --socket path too long\n");
        return -1;
    }
    strcpy(sa.sun_path, path);
    struct stat st;
    /* A socket left by an earlier run is replaced; anything else at the path is not ours. */
    if (lstat(path, &st) == 0) {
        if (!S_ISSOCK(st.st_mode)) {
            fprintf(stderr, "convgpu-scheduler-extender: %s exists and is not a socket\n", path);
            return -1;
        }
        unlink(path);
    }
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    /* bind creates the file with the umask's mode: set it to give exactly SOCKET_MODE (no
     * thread runs yet), rather than chmod after, when the socket already accepts. */
    mode_t old_mask = umask(0777 & ~SOCKET_MODE);
    int bound = fd >= 0 ? bind(fd, (struct sockaddr *)&sa, sizeof sa) : -1;
    umask(old_mask);
    if (fd < 0 || bound != 0 || listen(fd, 128) != 0) {
        fprintf(stderr, "convgpu-scheduler-extender: cannot listen on %s: %s\n", path,
                strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

int main(int argc, char **argv)
{
    const char *listen_addr = NULL, *sock = NULL;
    cg_cluster_policy policy = CG_CLUSTER_BINPACK;
    uint64_t max_body = DEFAULT_MAX_BODY, body_budget = DEFAULT_BODY_BUDGET;
    unsigned max_conns = DEFAULT_MAX_CONNS, request_timeout = DEFAULT_REQUEST_TIMEOUT_S;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(a, "--version") == 0) {
            printf("convgpu-scheduler-extender %s\n", CONVGPU_VERSION);
            return 0;
        } else if (strcmp(a, "--listen") == 0 && v) {
            const char *colon = strrchr(v, ':');
            if (!colon || colon == v || !colon[1]) {
                fprintf(stderr, "convgpu-scheduler-extender: --listen wants HOST:PORT, not "
                                "'%s'\n", v);
                return 2;
            }
            listen_addr = v;
            i++;
        } else if (strcmp(a, "--socket") == 0 && v) {
            if (v[0] != '/') {
                fprintf(stderr, "convgpu-scheduler-extender: --socket wants an absolute path\n");
                return 2;
            }
            sock = v;
            i++;
        } else if (strcmp(a, "--policy") == 0 && v) {
            if (cg_cluster_policy_parse(v, &policy) != 0) {
                fprintf(stderr, "convgpu-scheduler-extender: --policy is binpack or spread, not "
                                "'%s'\n", v);
                return 2;
            }
            i++;
        } else if (strcmp(a, "--max-body") == 0 && v) {
            const char *why = NULL;
            if (cg_parse_size(v, &max_body, &why) != 0 || max_body < 1024 ||
                max_body > (1ull << 30)) {
                fprintf(stderr, "convgpu-scheduler-extender: --max-body wants a size from 1KiB "
                                "to 1GiB, not '%s'\n", v);
                return 2;
            }
            i++;
        } else if (strcmp(a, "--body-budget") == 0 && v) {
            const char *why = NULL;
            if (cg_parse_size(v, &body_budget, &why) != 0 || body_budget < 1024 ||
                body_budget > (16ull << 30)) {
                fprintf(stderr, "convgpu-scheduler-extender: --body-budget wants a size from "
                                "1KiB to 16GiB, not '%s'\n", v);
                return 2;
            }
            i++;
        } else if (strcmp(a, "--max-connections") == 0 && v) {
            if (parse_uint(v, 16, MAX_CONNS_CEILING, &max_conns) != 0) {
                fprintf(stderr, "convgpu-scheduler-extender: --max-connections wants a number "
                                "from 16 to %u, not '%s'\n", MAX_CONNS_CEILING, v);
                return 2;
            }
            i++;
        } else if (strcmp(a, "--request-timeout") == 0 && v) {
            if (parse_uint(v, 1, 600, &request_timeout) != 0) {
                fprintf(stderr, "convgpu-scheduler-extender: --request-timeout wants seconds "
                                "from 1 to 600, not '%s'\n", v);
                return 2;
            }
            i++;
        } else {
            fprintf(stderr, "convgpu-scheduler-extender: unknown or incomplete argument '%s' "
                            "(see --help)\n", a);
            return 2;
        }
    }
    if (listen_addr && sock) {
        fprintf(stderr, "convgpu-scheduler-extender: give --listen or --socket, not both\n");
        return 2;
    }
    if (max_body > body_budget) {
        fprintf(stderr, "convgpu-scheduler-extender: --max-body (%llu bytes) is larger than "
                        "--body-budget (%llu): no such request could ever be read\n",
                (unsigned long long)max_body, (unsigned long long)body_budget);
        return 2;
    }
    /* Bodies are large and short-lived: from their own mappings, so that a freed one goes
     * back to the system at once and the budget bounds the process's memory, not just the
     * bytes in use (glibc would otherwise raise its threshold to the largest freed block and
     * keep such blocks in its heap). */
    mallopt(M_MMAP_THRESHOLD, 256 << 10);
    char shown[320];
    int fd;
    if (sock) {
        fd = listen_unix(sock);
        snprintf(shown, sizeof shown, "unix:%s", sock);
    } else {
        fd = listen_tcp(listen_addr ? listen_addr : DEFAULT_LISTEN, shown, sizeof shown);
    }
    if (fd < 0)
        return 1;

    /* The server's thread inherits this mask, so SIGTERM/SIGINT reach sigwait below. */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);

    char err[256];
    struct k8s_server_limits lim = {.max_body = (size_t)max_body,
                                    .body_budget = (size_t)body_budget,
                                    .max_conns = max_conns,
                                    .request_timeout_s = request_timeout};
    struct k8s_server *s = k8s_server_start(fd, &lim, policy, err, sizeof err);
    if (!s) {
        fprintf(stderr, "convgpu-scheduler-extender: %s\n", err);
        return 1;
    }
    printf("convgpu-scheduler-extender: listening on %s (policy %s)\n", shown,
           cg_cluster_policy_name(policy));
    fflush(stdout);
    int sig = 0;
    sigwait(&set, &sig);
    k8s_server_stop(s);
    if (sock)
        unlink(sock);
    return 0;
}

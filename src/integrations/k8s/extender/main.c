/* main.c — convgpu-scheduler-extender: kube-scheduler's HTTP extender that keeps a pod off nodes
 * where no single GPU (or, for a container on convgpu.io/gpu: N, no N GPUs) holds its convgpu
 * units and ranks the rest by binpack or spread (docs/KUBERNETES.md, "Scheduler extender").
 * Flags, the listening socket, and a clean stop on SIGTERM/SIGINT; the requests are served by
 * server.c. */
#include <errno.h>
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

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: convgpu-scheduler-extender [--listen HOST:PORT | --socket PATH]\n"
            "                                  [--policy binpack|spread] [--max-body SIZE]\n\n"
            "kube-scheduler's HTTP extender for convgpu: filter keeps only nodes where one GPU\n"
            "has the pod's convgpu.io/gpu-memory and convgpu.io/gpu-compute units free, or, for\n"
            "a container that asks for convgpu.io/gpu: N, N GPUs have 1/N of them free each\n"
            "(from each Node's convgpu.io/gpus annotation, kept by `convgpu k8s publish`);\n"
            "prioritize ranks them 0-10 by the placement policy. Configure kube-scheduler with\n"
            "filterVerb: filter, prioritizeVerb: prioritize, nodeCacheCapable: false and no\n"
            "bindVerb (docs/KUBERNETES.md).\n\n"
            "  --listen HOST:PORT  TCP address to serve on (default " DEFAULT_LISTEN "; port 0:\n"
            "                      any free port, printed when listening)\n"
            "  --socket PATH       serve on a UNIX socket instead\n"
            "  --policy P          binpack (default: the fullest GPU(s) that fit, least\n"
            "                      fragmentation) or spread (the emptiest)\n"
            "  --max-body SIZE     largest request body (default 64MiB: kube-scheduler sends\n"
            "                      whole Node objects); larger ones are answered 413\n"
            "  -h, --help          this help\n"
            "  --version           print the version and exit\n");
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
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(fd, 128) != 0) {
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
    uint64_t max_body = DEFAULT_MAX_BODY;
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
    struct k8s_server *s = k8s_server_start(fd, policy, (size_t)max_body, err, sizeof err);
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

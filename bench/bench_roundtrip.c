/* bench_roundtrip.c — the slow path against its floor, measured in the same process.
 *
 *   bare   one SOCK_SEQPACKET request/reply (an ALLOC-sized datagram and an ALLOC_REPLY-sized
 *          answer) with a forked server process that waits in epoll, like the daemon, on a
 *          listening UNIX socket of its own. This is the floor any daemon round trip pays.
 *   proto  the real protocol against a real convgpud container socket: HELLO -> WELCOME (+ the
 *          ledger fd via SCM_RIGHTS), then ALLOC(granularity) -> ALLOC_REPLY(GRANTED). The daemon
 *          freezes the container's quotas, decides through the scheduling core and charges our
 *          ledger slot before it replies; between requests we uncharge the slot locally
 *          (cg_ledger_uncharge, what a free does) so every ALLOC crosses the socket and decides
 *          again. That is the interposer's slow path minus the driver call.
 *   ledger the fast path's own work: cg_ledger_try_charge + cg_ledger_uncharge on our slot (one
 *          CAS each), timed per batch of 1000 pairs.
 *
 * The three run interleaved, batch by batch, so drift on a noisy VM hits them alike. Every
 * round trip is timed on its own; the output gives the median and spread over all of them:
 *   kind=bare|proto n=... med_ns=... p25_ns=... p75_ns=... p99_ns=... min_ns=...
 *   kind=ledger ...           (ns per charge+uncharge pair)
 *   kind=hello n=1 med_ns=... (connect + HELLO -> WELCOME + mmap of the ledger)
 *   ratio_proto_over_bare=...  (ratio of the medians)
 *   server_cpu_ns_per_req=BARE daemon_cpu_ns_per_req=PROTO   (CPU the server side spent per
 *          request, from /proc/PID/schedstat; the daemon's pid comes from SO_PEERCRED)
 *
 * Usage: bench_roundtrip --socket CONTAINER_SOCK [--rounds R] [--batch B] [--proto-only]
 *        bench_roundtrip --bare-only [--rounds R] [--batch B]     (no daemon needed) */
#include "ledger.h"
#include "proto.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static inline double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double quantile(const double *v, size_t n, double q)
{
    if (n == 0)
        return 0;
    size_t i = (size_t)(q * (double)(n - 1) + 0.5);
    return v[i < n ? i : n - 1];
}

/* Time a process has spent on a CPU, in ns (/proc/PID/schedstat, first field); -1 if unknown. */
static double cpu_ns(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/schedstat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    unsigned long long v;
    int ok = fscanf(f, "%llu", &v) == 1;
    fclose(f);
    return ok ? (double)v : -1;
}

static void die(const char *what)
{
    fprintf(stderr, "bench_roundtrip: %s: %s\n", what, strerror(errno));
    exit(1);
}

/* ---- the bare server: epoll on a listening socket and its one connection ------------------ */

static void bare_server(int lfd)
{
    int ep = epoll_create1(EPOLL_CLOEXEC);
    if (ep < 0)
        die("epoll_create1");
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = lfd};
    if (epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev) < 0)
        die("epoll_ctl");
    for (;;) {
        struct epoll_event got[4];
        int n = epoll_wait(ep, got, 4, -1);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            die("epoll_wait");
        }
        for (int i = 0; i < n; i++) {
            int fd = got[i].data.fd;
            if (fd == lfd) {
                int c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
                if (c < 0)
                    continue;
                struct epoll_event cev = {.events = EPOLLIN, .data.fd = c};
                if (epoll_ctl(ep, EPOLL_CTL_ADD, c, &cev) < 0)
                    die("epoll_ctl");
                continue;
            }
            unsigned char buf[CG_MSG_MAX];
            ssize_t r = recv(fd, buf, sizeof buf, 0);
            if (r <= 0) {
                if (r < 0 && errno == EAGAIN)
                    continue;
                _exit(0); /* the client hung up */
            }
            union cg_msg reply;
            struct cg_msg_hdr *h = (struct cg_msg_hdr *)buf;
            cg_proto_init(&reply, CG_MSG_ALLOC_REPLY, h->id);
            if (send(fd, &reply, sizeof reply.alloc_reply, MSG_NOSIGNAL) < 0)
                _exit(0);
        }
    }
}

static int start_bare(pid_t *pid, char *path, size_t pathlen)
{
    snprintf(path, pathlen, "/tmp/bench_roundtrip.%d.sock", (int)getpid());
    unlink(path);
    int lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (lfd < 0)
        die("socket");
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
    if (bind(lfd, (struct sockaddr *)&a, sizeof a) < 0 || listen(lfd, 8) < 0)
        die("bind/listen");
    *pid = fork();
    if (*pid < 0)
        die("fork");
    if (*pid == 0)
        bare_server(lfd);
    close(lfd);
    int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) < 0)
        die("connect (bare)");
    unlink(path);
    return fd;
}

static int connect_path(const char *path)
{
    int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof a.sun_path) {
        errno = ENAMETOOLONG;
        die(path);
    }
    snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) < 0)
        die(path);
    return fd;
}

/* One datagram out, one back; returns the decoded reply's type (or exits). */
static void roundtrip(int fd, const void *msg, size_t len, union cg_msg *reply, int *ledger_fd)
{
    if (send(fd, msg, len, MSG_NOSIGNAL) != (ssize_t)len)
        die("send");
    unsigned char buf[CG_MSG_MAX];
    union {
        struct cmsghdr h;
        char b[CMSG_SPACE(sizeof(int))];
    } ctl;
    struct iovec iov = {.iov_base = buf, .iov_len = sizeof buf};
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
    if (ledger_fd) {
        mh.msg_control = ctl.b;
        mh.msg_controllen = sizeof ctl.b;
    }
    ssize_t n;
    do
        n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC);
    while (n < 0 && errno == EINTR);
    if (n <= 0) {
        if (n == 0)
            errno = ECONNRESET;
        die("recv");
    }
    const char *why;
    if (cg_proto_decode(buf, (size_t)n, reply, &why) != 0) {
        fprintf(stderr, "bench_roundtrip: bad reply: %s\n", why);
        exit(1);
    }
    if (ledger_fd) {
        *ledger_fd = -1;
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
            if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
                memcpy(ledger_fd, CMSG_DATA(c), sizeof(int));
    }
}

struct series {
    double *v;
    size_t n;
};

static void report(const char *kind, struct series *s)
{
    qsort(s->v, s->n, sizeof *s->v, cmp_double);
    printf("kind=%s n=%zu med_ns=%.1f p25_ns=%.1f p75_ns=%.1f p99_ns=%.1f min_ns=%.1f\n", kind,
           s->n, quantile(s->v, s->n, 0.5), quantile(s->v, s->n, 0.25),
           quantile(s->v, s->n, 0.75), quantile(s->v, s->n, 0.99), s->n ? s->v[0] : 0.0);
}

int main(int argc, char **argv)
{
    const char *sock = NULL;
    int rounds = 100, batch = 50, proto_only = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--socket") == 0 && i + 1 < argc)
            sock = argv[++i];
        else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else if (strcmp(argv[i], "--batch") == 0 && i + 1 < argc)
            batch = atoi(argv[++i]);
        else if (strcmp(argv[i], "--bare-only") == 0)
            sock = NULL;
        else if (strcmp(argv[i], "--proto-only") == 0)
            proto_only = 1;
        else {
            fprintf(stderr, "usage: bench_roundtrip --socket PATH [--proto-only] | --bare-only "
                            "[--rounds R] [--batch B]\n");
            return 2;
        }
    }
    if (rounds < 1 || batch < 1)
        return 2;
    signal(SIGPIPE, SIG_IGN);

    pid_t server;
    char bare_path[108];
    int bfd = start_bare(&server, bare_path, sizeof bare_path);

    int pfd = -1;
    struct cg_ledger_slot *slot = NULL;
    uint64_t pages = 0, gran = 0;
    if (sock) {
        double t0 = now_ns();
        pfd = connect_path(sock);
        union cg_msg m, r;
        cg_proto_init(&m, CG_MSG_HELLO, 0);
        int lfd = -1;
        roundtrip(pfd, &m, sizeof m.hello, &r, &lfd);
        if (r.hdr.type != CG_MSG_WELCOME || lfd < 0) {
            fprintf(stderr, "bench_roundtrip: no WELCOME with a ledger fd (got %s)\n",
                    cg_msg_type_name(r.hdr.type));
            return 1;
        }
        struct cg_ledger *l = mmap(NULL, CG_LEDGER_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, lfd, 0);
        if (l == MAP_FAILED)
            die("mmap ledger");
        close(lfd);
        double t1 = now_ns();
        printf("kind=hello n=1 med_ns=%.1f\n", t1 - t0);
        if (r.welcome.slot >= CG_LEDGER_SLOTS)
            return 1;
        slot = &l->slots[r.welcome.slot];
        gran = r.welcome.granularity ? r.welcome.granularity : (2u << 20);
        if (!cg_ledger_pages(gran, &pages))
            return 1;
    }

    size_t cap = (size_t)rounds * (size_t)batch;
    struct series bare = {calloc(cap, sizeof(double)), 0};
    struct series proto = {calloc(cap, sizeof(double)), 0};
    struct series led = {calloc((size_t)rounds, sizeof(double)), 0};
    if (!bare.v || !proto.v || !led.v)
        die("calloc");
    pid_t dpid = 0;
    if (sock) {
        struct ucred cr;
        socklen_t crl = sizeof cr;
        if (getsockopt(pfd, SOL_SOCKET, SO_PEERCRED, &cr, &crl) == 0)
            dpid = cr.pid;
    }
    double scpu = 0, dcpu = 0;
    uint64_t id = 1;
    for (int r = -1; r < rounds; r++) { /* round -1: warm-up, not recorded */
        union cg_msg m, rep;
        double c0 = cpu_ns(server);
        for (int i = 0; i < (proto_only && sock ? 0 : batch); i++) {
            cg_proto_init(&m, CG_MSG_ALLOC, id++);
            m.alloc.bytes = 2u << 20;
            double a = now_ns();
            roundtrip(bfd, &m, sizeof m.alloc, &rep, NULL);
            double b = now_ns();
            if (r >= 0)
                bare.v[bare.n++] = b - a;
        }
        if (r >= 0)
            scpu += cpu_ns(server) - c0;
        if (!sock)
            continue;
        c0 = dpid ? cpu_ns(dpid) : 0;
        for (int i = 0; i < batch; i++) {
            cg_proto_init(&m, CG_MSG_ALLOC, id);
            m.alloc.bytes = gran;
            double a = now_ns();
            roundtrip(pfd, &m, sizeof m.alloc, &rep, NULL);
            double b = now_ns();
            if (rep.hdr.type != CG_MSG_ALLOC_REPLY || rep.hdr.id != id ||
                rep.alloc_reply.status != CG_ALLOC_GRANTED) {
                fprintf(stderr, "bench_roundtrip: ALLOC %llu not granted (type %s, status %u)\n",
                        (unsigned long long)id, cg_msg_type_name(rep.hdr.type),
                        rep.alloc_reply.status);
                return 1;
            }
            id++;
            cg_ledger_uncharge(slot, pages);
            if (r >= 0)
                proto.v[proto.n++] = b - a;
        }
        if (r >= 0 && dpid)
            dcpu += cpu_ns(dpid) - c0;
        /* The fast path's own work on the quota the last grant left us. */
        if (!cg_ledger_try_charge(slot, pages))
            continue; /* no quota left to us right now: skip this sample */
        cg_ledger_uncharge(slot, pages);
        double a = now_ns();
        for (int i = 0; i < 1000; i++) {
            if (cg_ledger_try_charge(slot, pages))
                cg_ledger_uncharge(slot, pages);
        }
        double b = now_ns();
        if (r >= 0)
            led.v[led.n++] = (b - a) / 1000;
    }
    report("bare", &bare);
    printf("server_cpu_ns_per_req=%.1f\n", scpu / (double)(bare.n ? bare.n : 1));
    if (sock) {
        printf("daemon_cpu_ns_per_req=%.1f\n", dpid ? dcpu / (double)(proto.n ? proto.n : 1) : -1.0);
        report("proto", &proto);
        report("ledger", &led);
        if (!proto_only)
            printf("ratio_proto_over_bare=%.3f\n",
               quantile(proto.v, proto.n, 0.5) / quantile(bare.v, bare.n, 0.5));
    }
    close(bfd);
    if (pfd >= 0)
        close(pfd);
    int st;
    waitpid(server, &st, 0);
    free(bare.v);
    free(proto.v);
    free(led.v);
    return 0;
}

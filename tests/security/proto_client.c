/* proto_client.c — a scriptable client of a container socket for the security tests. It speaks
 * the interposer's protocol (src/common/proto.h) well or badly, as told, and reports what
 * happened as key=value lines on stdout, one per event, so a shell test can assert on them.
 *
 *   proto_client SOCKET ACTION...        (actions run in order; the first connects)
 *
 *   pid                     print pid=<getpid()>: the pid SO_PEERCRED gives the daemon
 *   hello                   send a well-formed HELLO
 *   reconnect SLOT GEN      send HELLO with CG_HELLO_RECONNECT naming SLOT and GEN
 *   recv [MS]               receive one message (default 2000 ms): recv=WELCOME slot= generation=
 *                           limit= fd=yes ledger_limit= ... | recv=ALLOC_REPLY id= status= |
 *                           recv=closed | recv=timeout | recv=undecodable
 *   alloc BYTES [ID]        send ALLOC
 *   freed                   send FREED
 *   type T                  send a message of type T: a known type is built with cg_proto_init
 *                           (well-formed, right length); an unknown one is a bare header
 *   bad KIND                a message broken in one way: magic version length-field short long
 *                           reserved zero-alloc hello-flags hello-slot
 *   raw HEX                 send these bytes as one datagram
 *   random N SEED           send N pseudo-random bytes as one datagram
 *   big N                   send one N-byte datagram that starts with a valid ALLOC header
 *   flood N BYTES           send N ALLOCs without reading a reply: flood_sent= flood_errno=
 *   closed [MS]             wait for the daemon to hang up, discarding what it sends:
 *                           closed=yes drained=K | closed=no
 *   pingpong N BYTES        N times: ALLOC, wait for GRANTED (5 s), give the use back in the
 *                           ledger (the interposer's free): pingpong_ok= pingpong_max_us=
 *   pingpong-until FILE BYTES   the same, with a 500 us pause after each, until FILE exists
 *                           (at most an hour: a hang bound); both also print pingpong_p50_us= pingpong_p99_us=
 *   timeout MS              how long the following pingpongs wait for each reply (default 5000)
 *   swarm N K BYTES FILE [GRANT]   this connection (after hello recv) and N-1 more (each
 *                           says HELLO and gets WELCOME first) queue K ALLOCs of BYTES each
 *                           without waiting, read every reply, and hold until FILE exists (at
 *                           most 300 s): swarm_connected=N, then swarm_sent=N*K once every ALLOC
 *                           is written, then swarm_granted= swarm_cancelled= swarm_over=
 *                           swarm_other= swarm_closed= swarm_freed_rounds=. With GRANT, each
 *                           connection first gets GRANT bytes granted (swarm_granted_first=N),
 *                           and while holding, all of them give a page back at once and one
 *                           sends FREED, round after round, each round once the daemon has
 *                           re-decided (every slot frozen again), until they have nothing left
 *                           (swarm_returned=ROUNDS)
 *   churn FILE BYTES        ALLOC BYTES (must be granted: churn_granted=yes), then until FILE
 *                           exists give one page of it back in the ledger while any is left and
 *                           send FREED, again and again: churn_freed= churn_pages=
 *   slot                    print slot_word_used= slot_word_quota= slot_pid= of our slot
 *   hold FILE [S]           keep the connection until FILE exists (at most S s, default an hour: a hang bound)
 *   sleep MS
 *
 * Exit status: 0 when every action ran, 3 when the connection could not be made (connect=error
 * errno=NAME is printed), 4 when pingpong saw a reply other than GRANTED in time, 2 usage. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <sys/resource.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "ledger.h"
#include "proto.h"

static int sock = -1;
static struct cg_ledger *ledger;
static uint32_t my_slot = UINT32_MAX;
static uint64_t next_id = 1;
static int reply_ms = 5000;

static const char *errname(int e)
{
    switch (e) {
    case EACCES: return "EACCES";
    case EPERM: return "EPERM";
    case ENOENT: return "ENOENT";
    case ECONNREFUSED: return "ECONNREFUSED";
    case ECONNRESET: return "ECONNRESET";
    case EPIPE: return "EPIPE";
    case EAGAIN: return "EAGAIN";
    case EMSGSIZE: return "EMSGSIZE";
    case ENOBUFS: return "ENOBUFS";
    default: return strerror(e);
    }
}

static uint64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static void usage(void)
{
    fprintf(stderr, "usage: proto_client SOCKET ACTION... (see the header of proto_client.c)\n");
    exit(2);
}

static unsigned long long num(const char *s)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (errno || *end || end == s) {
        fprintf(stderr, "proto_client: not a number: %s\n", s);
        exit(2);
    }
    return v;
}

/* Sends one datagram; prints send=error errno= when it fails. Returns 0 or -1. */
static int send_dgram(const void *buf, size_t len)
{
    ssize_t n;
    do
        n = send(sock, buf, len, MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    if (n != (ssize_t)len) {
        printf("send=error errno=%s\n", n < 0 ? errname(errno) : "short");
        return -1;
    }
    return 0;
}

static void send_msg(const union cg_msg *m)
{
    send_dgram(m, m->hdr.length);
}

static void map_ledger(int fd)
{
    struct stat st;
    if (fstat(fd, &st) != 0 || (size_t)st.st_size < CG_LEDGER_SIZE) {
        printf("ledger=unusable\n");
        close(fd);
        return;
    }
    void *p = mmap(NULL, CG_LEDGER_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED) {
        printf("ledger=unmappable errno=%s\n", errname(errno));
        return;
    }
    if (ledger)
        munmap(ledger, CG_LEDGER_SIZE);
    ledger = p;
    printf("ledger_limit=%" PRIu64 " ledger_assigned=%" PRIu64 " ledger_dev=%" PRIu64 "\n",
           (uint64_t)atomic_load(&ledger->limit), (uint64_t)atomic_load(&ledger->assigned),
           (uint64_t)st.st_dev);
    printf("ledger_ino=%" PRIu64 "\n", (uint64_t)st.st_ino);
}

/* Receives one message within ms. Returns the message type, 0 on hang-up, -1 on timeout or
 * error, -2 when what came is not a valid message. */
static int recv_one(int ms, union cg_msg *out, bool quiet)
{
    struct pollfd pfd = {.fd = sock, .events = POLLIN};
    int r;
    do
        r = poll(&pfd, 1, ms);
    while (r < 0 && errno == EINTR);
    if (r == 0) {
        if (!quiet)
            printf("recv=timeout\n");
        return -1;
    }
    unsigned char buf[CG_MSG_MAX + 64];
    char cbuf[CMSG_SPACE(sizeof(int) * 4)];
    struct iovec iov = {.iov_base = buf, .iov_len = sizeof buf};
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
                        .msg_controllen = sizeof cbuf};
    ssize_t n;
    do
        n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
    while (n < 0 && errno == EINTR);
    if (n == 0 || (n < 0 && (errno == ECONNRESET || errno == EPIPE))) {
        if (!quiet)
            printf("recv=closed\n");
        return 0;
    }
    if (n < 0) {
        printf("recv=error errno=%s\n", errname(errno));
        return -1;
    }
    int fd = -1;
    for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
        if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS)
            memcpy(&fd, CMSG_DATA(cm), sizeof fd);
    const char *why = NULL;
    if (cg_proto_decode(buf, (size_t)n, out, &why) != 0) {
        printf("recv=undecodable why=\"%s\"\n", why);
        if (fd >= 0)
            close(fd);
        return -2;
    }
    if (quiet) {
        if (fd >= 0)
            close(fd);
        return out->hdr.type;
    }
    printf("recv=%s id=%" PRIu64, cg_msg_type_name(out->hdr.type), out->hdr.id);
    switch (out->hdr.type) {
    case CG_MSG_WELCOME:
        my_slot = out->welcome.slot;
        printf(" slot=%u generation=%u device=%u limit=%" PRIu64 " fd=%s\n", out->welcome.slot,
               out->welcome.generation, out->welcome.device, out->welcome.limit,
               fd >= 0 ? "yes" : "no");
        break;
    case CG_MSG_ALLOC_REPLY:
        printf(" status=%u\n", out->alloc_reply.status);
        break;
    case CG_MSG_ERROR:
        printf(" code=%u text=\"%s\"\n", out->error.code, out->error.text);
        break;
    default:
        printf("\n");
        break;
    }
    if (fd >= 0 && out->hdr.type == CG_MSG_WELCOME)
        map_ledger(fd);
    else if (fd >= 0)
        close(fd);
    return out->hdr.type;
}

static void bad(const char *kind)
{
    union cg_msg m;
    cg_proto_init(&m, CG_MSG_ALLOC, next_id++);
    m.alloc.bytes = 1 << 20;
    size_t len = m.hdr.length;
    if (strcmp(kind, "magic") == 0)
        m.hdr.magic = 0xdeadbeef;
    else if (strcmp(kind, "version") == 0)
        m.hdr.version = CG_PROTO_VERSION + 1;
    else if (strcmp(kind, "length-field") == 0)
        m.hdr.length += 8;
    else if (strcmp(kind, "short") == 0)
        len = sizeof(struct cg_msg_hdr) - 1;
    else if (strcmp(kind, "long") == 0)
        len += 8;
    else if (strcmp(kind, "reserved") == 0)
        m.hdr.reserved = 1;
    else if (strcmp(kind, "zero-alloc") == 0)
        m.alloc.bytes = 0;
    else if (strcmp(kind, "hello-flags") == 0) {
        cg_proto_init(&m, CG_MSG_HELLO, 0);
        m.hello.flags = 0x80;
        len = m.hdr.length;
    } else if (strcmp(kind, "hello-slot") == 0) {
        cg_proto_init(&m, CG_MSG_HELLO, 0);
        m.hello.slot = 1;
        len = m.hdr.length;
    } else {
        fprintf(stderr, "proto_client: unknown bad kind %s\n", kind);
        exit(2);
    }
    unsigned char buf[sizeof m + 16];
    memset(buf, 0, sizeof buf);
    memcpy(buf, &m, sizeof m < len ? sizeof m : len);
    send_dgram(buf, len);
}

static int hexval(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static void raw(const char *hex)
{
    size_t n = strlen(hex) / 2;
    unsigned char *buf = calloc(n + 1, 1);
    if (!buf)
        exit(1);
    for (size_t i = 0; i < n; i++) {
        int hi = hexval(hex[2 * i]), lo = hexval(hex[2 * i + 1]);
        if (hi < 0 || lo < 0) {
            fprintf(stderr, "proto_client: bad hex %s\n", hex);
            exit(2);
        }
        buf[i] = (unsigned char)(hi << 4 | lo);
    }
    send_dgram(buf, n);
    free(buf);
}

static void big(size_t n, bool random_bytes, unsigned seed)
{
    unsigned char *buf = calloc(n ? n : 1, 1);
    if (!buf)
        exit(1);
    if (random_bytes) {
        srand(seed);
        for (size_t i = 0; i < n; i++)
            buf[i] = (unsigned char)(rand() & 0xff);
    } else {
        union cg_msg m;
        cg_proto_init(&m, CG_MSG_ALLOC, next_id++);
        m.alloc.bytes = 1 << 20;
        memcpy(buf, &m, n < m.hdr.length ? n : m.hdr.length);
    }
    send_dgram(buf, n);
    free(buf);
}

static void flood(unsigned long long count, uint64_t bytes)
{
    struct timeval tv = {.tv_sec = 5};
    setsockopt(sock, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    unsigned long long sent = 0;
    int err = 0;
    for (; sent < count; sent++) {
        union cg_msg m;
        cg_proto_init(&m, CG_MSG_ALLOC, next_id++);
        m.alloc.bytes = bytes;
        ssize_t n;
        do
            n = send(sock, &m, m.hdr.length, MSG_NOSIGNAL);
        while (n < 0 && errno == EINTR);
        if (n != (ssize_t)m.hdr.length) {
            err = n < 0 ? errno : EMSGSIZE;
            break;
        }
    }
    printf("flood_sent=%llu flood_errno=%s\n", sent, err ? errname(err) : "none");
}

static void wait_closed(int ms)
{
    uint64_t deadline = now_us() + (uint64_t)ms * 1000u;
    unsigned drained = 0;
    for (;;) {
        uint64_t t = now_us();
        if (t >= deadline) {
            printf("closed=no drained=%u\n", drained);
            return;
        }
        union cg_msg m;
        int r = recv_one((int)((deadline - t) / 1000u) + 1, &m, true);
        if (r == 0) {
            printf("closed=yes drained=%u\n", drained);
            return;
        }
        if (r > 0 || r == -2)
            drained++;
    }
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The q-quantile (0..1) of n sorted samples: the smallest value at least q of them reach. */
static uint64_t quantile(const uint64_t *sorted, size_t n, double q)
{
    if (n == 0)
        return 0;
    size_t i = (size_t)(q * (double)n);
    return sorted[i < n ? i : n - 1];
}

/* Loops that run until the test touches a file stop by themselves only after this long: a bound
 * on a process a dead test left behind, never on how long a (loaded) test may take. */
#define HANG_BOUND_US (3600ull * 1000000u)

static int pingpong(unsigned long long count, uint64_t bytes, const char *until)
{
    uint64_t pages;
    if (!ledger || my_slot >= CG_LEDGER_SLOTS || !cg_ledger_pages(bytes, &pages)) {
        printf("pingpong=not-welcomed\n");
        return 4;
    }
    struct cg_ledger_slot *s = &ledger->slots[my_slot];
    uint64_t worst = 0;
    unsigned long long ok = 0;
    uint64_t *lat = NULL;
    size_t nlat = 0, cap = 0;
    uint64_t deadline = now_us() + HANG_BOUND_US;
    for (; until ? access(until, F_OK) != 0 && now_us() < deadline : ok < count; ok++) {
        union cg_msg m;
        uint64_t id = next_id++;
        cg_proto_init(&m, CG_MSG_ALLOC, id);
        m.alloc.bytes = bytes;
        uint64_t t0 = now_us();
        if (send_dgram(&m, m.hdr.length) != 0)
            break;
        int r = recv_one(reply_ms, &m, true);
        uint64_t dt = now_us() - t0;
        if (r != CG_MSG_ALLOC_REPLY || m.hdr.id != id || m.alloc_reply.status != CG_ALLOC_GRANTED) {
            printf("pingpong_fail=%llu reply=%d status=%u after_us=%" PRIu64 "\n", ok, r,
                   r == CG_MSG_ALLOC_REPLY ? m.alloc_reply.status : 99u, dt);
            break;
        }
        if (dt > worst)
            worst = dt;
        if (nlat == cap) {
            cap = cap ? 2 * cap : 1024;
            uint64_t *n = realloc(lat, cap * sizeof *n);
            if (!n)
                exit(1);
            lat = n;
        }
        lat[nlat++] = dt;
        /* What the interposer does on a free: lower its own use; the quota stays. */
        cg_ledger_uncharge(s, pages);
        if (until)
            usleep(500);
    }
    bool done = until ? access(until, F_OK) == 0 : ok == count;
    qsort(lat, nlat, sizeof *lat, cmp_u64);
    printf("pingpong_ok=%llu pingpong_max_us=%" PRIu64 " pingpong_done=%s pingpong_p50_us=%" PRIu64
           " pingpong_p99_us=%" PRIu64 "\n",
           ok, worst, done ? "yes" : "no", quantile(lat, nlat, 0.50), quantile(lat, nlat, 0.99));
    free(lat);
    return done ? 0 : 4;
}

/* Opens one more connection to the socket `sock` is connected to, says HELLO and waits for
 * WELCOME (its ledger fd is closed; the slot it names is left in *slot). Returns the fd, or -1. */
static int connect_welcomed(const struct sockaddr_un *sa, uint32_t *slot)
{
    int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (const struct sockaddr *)sa, sizeof *sa) != 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    int saved = sock;
    sock = fd;
    union cg_msg m;
    cg_proto_init(&m, CG_MSG_HELLO, 0);
    int r = send_dgram(&m, m.hdr.length) == 0 ? recv_one(5000, &m, true) : -1;
    sock = saved;
    if (r != CG_MSG_WELCOME) {
        close(fd);
        return -1;
    }
    *slot = m.welcome.slot;
    return fd;
}

struct swarm_counts {
    unsigned long long granted, cancelled, over, other, closed;
};

/* Reads every reply waiting on fd; false once the daemon hung up. */
static bool swarm_drain(int fd, struct swarm_counts *n)
{
    for (;;) {
        union cg_msg m;
        unsigned char buf[CG_MSG_MAX + 64];
        ssize_t r = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return true;
        if (r <= 0) {
            n->closed++;
            return false;
        }
        const char *why;
        if (cg_proto_decode(buf, (size_t)r, &m, &why) != 0 || m.hdr.type != CG_MSG_ALLOC_REPLY)
            n->other++;
        else if (m.alloc_reply.status == CG_ALLOC_GRANTED)
            n->granted++;
        else if (m.alloc_reply.status == CG_ALLOC_CANCELLED)
            n->cancelled++;
        else if (m.alloc_reply.status == CG_ALLOC_OVER_LIMIT)
            n->over++;
        else
            n->other++;
    }
}

/* One connection of the swarm asks for `bytes` and waits for the answer: true when granted. */
static bool swarm_grant(int fd, uint64_t id, uint64_t bytes)
{
    int saved = sock;
    sock = fd;
    union cg_msg m;
    cg_proto_init(&m, CG_MSG_ALLOC, id);
    m.alloc.bytes = bytes;
    bool ok = send_dgram(&m, m.hdr.length) == 0 && recv_one(reply_ms, &m, true) == CG_MSG_ALLOC_REPLY &&
              m.alloc_reply.status == CG_ALLOC_GRANTED;
    sock = saved;
    return ok;
}

/* Every connection's slot gives back one page, as a free in each of N processes would; false
 * when none has any left. */
static bool swarm_give_back(const uint32_t *slots, unsigned have)
{
    bool any = false;
    for (unsigned i = 0; i < have; i++) {
        struct cg_ledger_slot *s = &ledger->slots[slots[i]];
        if (cg_ledger_used(atomic_load(&s->word)) > 0) {
            cg_ledger_uncharge(s, 1);
            any = true;
        }
    }
    return any;
}

/* True once the daemon has frozen every slot again (quota == used): it has re-decided. */
static bool swarm_frozen(const uint32_t *slots, unsigned have)
{
    for (unsigned i = 0; i < have; i++) {
        uint64_t w = atomic_load(&ledger->slots[slots[i]].word);
        if (cg_ledger_quota(w) != cg_ledger_used(w))
            return false;
    }
    return true;
}

static void swarm(const struct sockaddr_un *sa, unsigned n, unsigned k, uint64_t bytes,
                  const char *until, uint64_t grant)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    struct pollfd *pf = calloc(n ? n : 1, sizeof *pf);
    unsigned *left = calloc(n ? n : 1, sizeof *left);
    uint32_t *slots = calloc(n ? n : 1, sizeof *slots);
    if (!pf || !left || !slots)
        exit(1);
    unsigned have = 0;
    if (n > 0 && ledger && my_slot < CG_LEDGER_SLOTS) {
        slots[have] = my_slot;
        pf[have++].fd = sock;
        sock = -1; /* the swarm owns it now */
    }
    while (have < n) {
        int fd = connect_welcomed(sa, &slots[have]);
        if (fd < 0)
            break;
        pf[have++].fd = fd;
    }
    printf("swarm_connected=%u\n", have);
    uint64_t id = 1;
    unsigned granted_first = 0;
    for (unsigned i = 0; grant && i < have; i++)
        granted_first += swarm_grant(pf[i].fd, id++, grant);
    if (grant)
        printf("swarm_granted_first=%u\n", granted_first);
    for (unsigned i = 0; i < have; i++) {
        left[i] = k;
        int fl = fcntl(pf[i].fd, F_GETFL);
        fcntl(pf[i].fd, F_SETFL, fl | O_NONBLOCK);
    }
    struct swarm_counts c = {0};
    unsigned long long sent = 0, want = (unsigned long long)have * k, ticks = 0;
    bool told = false, giving = grant > 0 && ledger;
    uint64_t deadline = now_us() + HANG_BOUND_US;
    while (now_us() < deadline && access(until, F_OK) != 0) {
        for (unsigned i = 0; i < have; i++) {
            while (pf[i].fd >= 0 && left[i] > 0) {
                union cg_msg m;
                cg_proto_init(&m, CG_MSG_ALLOC, id++);
                m.alloc.bytes = bytes;
                ssize_t r = send(pf[i].fd, &m, m.hdr.length, MSG_NOSIGNAL | MSG_DONTWAIT);
                if (r != (ssize_t)m.hdr.length)
                    break;
                left[i]--;
                sent++;
            }
            pf[i].events = POLLIN | (pf[i].fd >= 0 && left[i] ? POLLOUT : 0);
        }
        if (!told && sent == want) {
            printf("swarm_sent=%llu\n", sent);
            told = true;
        }
        /* Once everything is queued: all the swarm's processes free a page, one says FREED, and
         * the next round waits until the daemon has taken that in. */
        if (told && giving && swarm_frozen(slots, have)) {
            giving = swarm_give_back(slots, have);
            if (!giving)
                printf("swarm_returned=%llu\n", ticks);
            unsigned j = (unsigned)(ticks % have);
            union cg_msg m;
            cg_proto_init(&m, CG_MSG_FREED, 0);
            if (giving && pf[j].fd >= 0 &&
                send(pf[j].fd, &m, m.hdr.length, MSG_NOSIGNAL | MSG_DONTWAIT) == (ssize_t)m.hdr.length)
                ticks++;
        }
        if (poll(pf, have, giving ? 1 : 100) < 0 && errno != EINTR)
            break;
        for (unsigned i = 0; i < have; i++) {
            if (pf[i].fd >= 0 && (pf[i].revents & (POLLIN | POLLHUP | POLLERR)) &&
                !swarm_drain(pf[i].fd, &c)) {
                close(pf[i].fd);
                pf[i].fd = -1; /* poll ignores it from now on */
                want -= left[i]; /* what it could not send is not coming */
                left[i] = 0;
            }
        }
    }
    if (!told)
        printf("swarm_sent=%llu incomplete=yes\n", sent);
    for (unsigned i = 0; i < have; i++)
        if (pf[i].fd >= 0) {
            swarm_drain(pf[i].fd, &c);
            close(pf[i].fd);
        }
    printf("swarm_granted=%llu swarm_cancelled=%llu swarm_over=%llu swarm_other=%llu "
           "swarm_closed=%llu swarm_freed_rounds=%llu\n",
           c.granted, c.cancelled, c.over, c.other, c.closed, ticks);
    free(pf);
    free(left);
    free(slots);
}

static void churn(uint64_t bytes, const char *until)
{
    union cg_msg m;
    uint64_t id = next_id++;
    cg_proto_init(&m, CG_MSG_ALLOC, id);
    m.alloc.bytes = bytes;
    if (!ledger || my_slot >= CG_LEDGER_SLOTS || send_dgram(&m, m.hdr.length) != 0 ||
        recv_one(reply_ms, &m, true) != CG_MSG_ALLOC_REPLY ||
        m.alloc_reply.status != CG_ALLOC_GRANTED) {
        printf("churn_granted=no\n");
        return;
    }
    printf("churn_granted=yes\n");
    struct cg_ledger_slot *s = &ledger->slots[my_slot];
    unsigned long long freed = 0, pages = 0;
    uint64_t deadline = now_us() + HANG_BOUND_US;
    while (access(until, F_OK) != 0 && now_us() < deadline) {
        for (int i = 0; i < 64; i++) {
            if (cg_ledger_used(atomic_load(&s->word)) > 0) {
                cg_ledger_uncharge(s, 1);
                pages++;
            }
            cg_proto_init(&m, CG_MSG_FREED, 0);
            if (send_dgram(&m, m.hdr.length) != 0)
                goto out;
            freed++;
        }
    }
out:
    printf("churn_freed=%llu churn_pages=%llu\n", freed, pages);
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc < 2)
        usage();
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (strlen(argv[1]) >= sizeof sa.sun_path) {
        fprintf(stderr, "proto_client: socket path too long\n");
        return 2;
    }
    strcpy(sa.sun_path, argv[1]);
    sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (sock < 0 || connect(sock, (struct sockaddr *)&sa, sizeof sa) != 0) {
        printf("connect=error errno=%s\n", errname(errno));
        return 3;
    }
    printf("connect=ok\n");
    int status = 0;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
#define ARG() (i + 1 < argc ? argv[++i] : (usage(), ""))
        if (strcmp(a, "pid") == 0) {
            printf("pid=%d\n", (int)getpid());
        } else if (strcmp(a, "hello") == 0) {
            union cg_msg m;
            cg_proto_init(&m, CG_MSG_HELLO, 0);
            send_msg(&m);
        } else if (strcmp(a, "reconnect") == 0) {
            union cg_msg m;
            cg_proto_init(&m, CG_MSG_HELLO, 0);
            m.hello.flags = CG_HELLO_RECONNECT;
            m.hello.slot = (uint32_t)num(ARG());
            m.hello.generation = (uint32_t)num(ARG());
            send_msg(&m);
        } else if (strcmp(a, "recv") == 0) {
            int ms = 2000;
            if (i + 1 < argc && argv[i + 1][0] >= '0' && argv[i + 1][0] <= '9')
                ms = (int)num(ARG());
            union cg_msg m;
            recv_one(ms, &m, false);
        } else if (strcmp(a, "alloc") == 0) {
            union cg_msg m;
            uint64_t bytes = num(ARG());
            uint64_t id = next_id++;
            if (i + 1 < argc && argv[i + 1][0] >= '0' && argv[i + 1][0] <= '9')
                id = num(ARG());
            cg_proto_init(&m, CG_MSG_ALLOC, id);
            m.alloc.bytes = bytes;
            send_msg(&m);
        } else if (strcmp(a, "freed") == 0) {
            union cg_msg m;
            cg_proto_init(&m, CG_MSG_FREED, 0);
            send_msg(&m);
        } else if (strcmp(a, "type") == 0) {
            unsigned long long t = num(ARG());
            union cg_msg m;
            cg_proto_init(&m, (enum cg_msg_type)t, next_id++);
            if (m.hdr.length == 0) /* unknown: a bare header claiming its own size */
                m.hdr.length = sizeof(struct cg_msg_hdr);
            send_msg(&m);
        } else if (strcmp(a, "bad") == 0) {
            bad(ARG());
        } else if (strcmp(a, "raw") == 0) {
            raw(ARG());
        } else if (strcmp(a, "random") == 0) {
            size_t n = (size_t)num(ARG());
            big(n, true, (unsigned)num(ARG()));
        } else if (strcmp(a, "big") == 0) {
            big((size_t)num(ARG()), false, 0);
        } else if (strcmp(a, "flood") == 0) {
            unsigned long long n = num(ARG());
            flood(n, num(ARG()));
        } else if (strcmp(a, "closed") == 0) {
            int ms = 3000;
            if (i + 1 < argc && argv[i + 1][0] >= '0' && argv[i + 1][0] <= '9')
                ms = (int)num(ARG());
            wait_closed(ms);
        } else if (strcmp(a, "pingpong") == 0) {
            unsigned long long n = num(ARG());
            status = pingpong(n, num(ARG()), NULL);
            if (status)
                break;
        } else if (strcmp(a, "pingpong-until") == 0) {
            const char *file = ARG();
            status = pingpong(0, num(ARG()), file);
            if (status)
                break;
        } else if (strcmp(a, "timeout") == 0) {
            reply_ms = (int)num(ARG());
        } else if (strcmp(a, "swarm") == 0) {
            unsigned n = (unsigned)num(ARG()), k = (unsigned)num(ARG());
            uint64_t bytes = num(ARG());
            const char *file = ARG();
            uint64_t grant = 0;
            if (i + 1 < argc && argv[i + 1][0] >= '0' && argv[i + 1][0] <= '9')
                grant = num(ARG());
            swarm(&sa, n, k, bytes, file, grant);
        } else if (strcmp(a, "churn") == 0) {
            const char *file = ARG();
            churn(num(ARG()), file);
        } else if (strcmp(a, "slot") == 0) {
            if (!ledger || my_slot >= CG_LEDGER_SLOTS) {
                printf("slot=none\n");
                continue;
            }
            struct cg_ledger_slot *s = &ledger->slots[my_slot];
            uint64_t w = atomic_load(&s->word);
            printf("slot_word_used=%" PRIu64 " slot_word_quota=%" PRIu64 " slot_pid=%u\n",
                   cg_ledger_used(w), cg_ledger_quota(w), (unsigned)atomic_load(&s->pid));
        } else if (strcmp(a, "hold") == 0) {
            const char *file = ARG();
            unsigned long long secs = HANG_BOUND_US / 1000000u;
            if (i + 1 < argc && argv[i + 1][0] >= '0' && argv[i + 1][0] <= '9')
                secs = num(ARG());
            uint64_t deadline = now_us() + secs * 1000000u;
            while (access(file, F_OK) != 0 && now_us() < deadline)
                usleep(10000);
            printf("held=done\n");
        } else if (strcmp(a, "sleep") == 0) {
            usleep((useconds_t)num(ARG()) * 1000u);
        } else {
            fprintf(stderr, "proto_client: unknown action %s\n", a);
            usage();
        }
#undef ARG
    }
    if (sock >= 0)
        close(sock);
    return status;
}

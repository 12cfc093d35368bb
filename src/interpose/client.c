/* client.c — the daemon connection: session setup, suspended requests, reconnection.
 *
 * Waiting without blocking others: a request registers a waiter (on its own stack) under `mu`,
 * sends ALLOC and then either becomes the one reader of the socket or sleeps on `cv`. The reader
 * drops `mu` while it sits in recv, hands every reply to the waiter with that id, and gives up
 * the reader role as soon as its own reply is in; a follower then takes over. So any number of
 * threads can be suspended at once, and `mu` is only ever held for a few non-blocking
 * instructions/syscalls: a free (FREED notice) or a fast-path charge never waits behind a
 * suspended allocation.
 *
 * Daemon down: the connection is dropped (the ledger mapping and our slot stay, so frees and
 * fast-path charges within quota keep working) and the next thread that needs the daemon
 * reconnects with backoff, sending HELLO with CG_HELLO_RECONNECT and our slot/generation; every
 * waiter re-sends its request on the new connection. A waiter gives up (out of memory) after
 * CONVGPU_DAEMON_TIMEOUT seconds without a daemon. */
#include "client.h"
#include "config.h"
#include "log.h"
#include "proto.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

struct waiter {
    uint64_t id;
    uint64_t bytes;
    int status;
    bool done;
    bool down;                /* saw the daemon unreachable; `deadline` runs */
    uint64_t sent_gen;        /* connection generation the request was sent on (0 = none) */
    struct timespec deadline;
    struct waiter *next;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv; /* CLOCK_MONOTONIC; initialised by cg_client_setup */

/* One connection per GPU of the container (member k: socket k, CUDA ordinal k; a container on
 * one GPU uses conns[0] alone). Everything but the published session is under mu. */
struct conn {
    int fd;                   /* -1: none */
    uint64_t gen;
    bool reader_active, connecting, warned_down;
    struct waiter *waiters;
    bool have_slot;
    uint32_t my_slot, my_gen;
    dev_t ledger_dev;
    ino_t ledger_ino;
    /* The session, published for lock-free readers: granularity, then ledger, then slot
     * (release). */
    _Atomic(struct cg_ledger *) s_ledger;
    _Atomic(struct cg_ledger_slot *) s_slot;
    _Atomic uint64_t s_gran;
};

static struct conn conns[CG_IP_MEMBERS];
static uint64_t next_id = 1;
/* The container's GPUs, from member 0's WELCOME: 0 until then (read inline, client.h). */
_Atomic unsigned cg_client_nmembers;

static void conns_reset(void)
{
    for (unsigned m = 0; m < CG_IP_MEMBERS; m++)
        conns[m].fd = -1;
}

static struct timespec deadline_in(double s)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    if (s > 1e7)
        s = 1e7;
    long long ns = (long long)(s * 1e9);
    t.tv_sec += (time_t)(ns / 1000000000);
    t.tv_nsec += (long)(ns % 1000000000);
    if (t.tv_nsec >= 1000000000) {
        t.tv_sec++;
        t.tv_nsec -= 1000000000;
    }
    return t;
}

static long long ms_until(const struct timespec *d)
{
    struct timespec n;
    clock_gettime(CLOCK_MONOTONIC, &n);
    return (long long)(d->tv_sec - n.tv_sec) * 1000 + (d->tv_nsec - n.tv_nsec) / 1000000;
}

static bool passed(const struct timespec *d)
{
    struct timespec n;
    clock_gettime(CLOCK_MONOTONIC, &n);
    return n.tv_sec > d->tv_sec || (n.tv_sec == d->tv_sec && n.tv_nsec >= d->tv_nsec);
}

int cg_client_setup(void)
{
    conns_reset();
    pthread_condattr_t a;
    if (pthread_condattr_init(&a) != 0)
        return -1;
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    int r = pthread_cond_init(&cv, &a);
    pthread_condattr_destroy(&a);
    return r == 0 ? 0 : -1;
}

bool cg_session_get_on(unsigned m, struct cg_session *s)
{
    if (m >= CG_IP_MEMBERS)
        return false;
    struct conn *k = &conns[m];
    struct cg_ledger_slot *slot = atomic_load_explicit(&k->s_slot, memory_order_acquire);
    if (!slot)
        return false;
    s->slot = slot;
    s->ledger = atomic_load_explicit(&k->s_ledger, memory_order_relaxed);
    s->granularity = atomic_load_explicit(&k->s_gran, memory_order_relaxed);
    return true;
}

/* Member m's socket: the leader's path with ".sock" turned into ".<m>.sock" (the daemon binds
 * them side by side, gang.c); false when it does not fit. */
static bool member_socket(unsigned m, char *out, size_t len)
{
    size_t n = strlen(cg_cfg.socket);
    if (m == 0)
        return snprintf(out, len, "%s", cg_cfg.socket) < (int)len;
    if (n < 5 || strcmp(cg_cfg.socket + n - 5, ".sock") != 0)
        return false;
    return snprintf(out, len, "%.*s.%u.sock", (int)(n - 5), cg_cfg.socket, m) < (int)len;
}

/* ---- connecting ------------------------------------------------------------------------------ */

static int send_msg(int fd, const union cg_msg *m)
{
    ssize_t n;
    do
        n = send(fd, m, m->hdr.length, MSG_NOSIGNAL | MSG_DONTWAIT);
    while (n < 0 && errno == EINTR);
    return n == (ssize_t)m->hdr.length ? 0 : -1;
}

/* One attempt: connect, HELLO, wait for WELCOME and the ledger fd. No lock held. */
static int connect_once(unsigned member, bool reconnect, uint32_t slot, uint32_t gen,
                        const struct timespec *deadline, struct cg_msg_welcome *welcome,
                        int *ledger_fd)
{
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    if (!member_socket(member, addr.sun_path, sizeof addr.sun_path)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    if (connect(fd, (struct sockaddr *)&addr, sizeof addr) < 0)
        goto fail;

    union cg_msg m;
    cg_proto_init(&m, CG_MSG_HELLO, 0);
    if (reconnect) {
        m.hello.flags = CG_HELLO_RECONNECT;
        m.hello.slot = slot;
        m.hello.generation = gen;
    }
    if (send_msg(fd, &m) < 0)
        goto fail;

    /* The daemon answers at once; a stuck one costs at most a few seconds per attempt. */
    long long ms = ms_until(deadline);
    ms = ms < 1000 ? 1000 : ms > 5000 ? 5000 : ms;
    struct pollfd p = {.fd = fd, .events = POLLIN};
    int pr;
    do
        pr = poll(&p, 1, (int)ms);
    while (pr < 0 && errno == EINTR);
    if (pr <= 0)
        goto fail;

    unsigned char buf[CG_MSG_MAX];
    union {
        char c[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } ctl;
    struct iovec iov = {.iov_base = buf, .iov_len = sizeof buf};
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.c,
                        .msg_controllen = sizeof ctl.c};
    ssize_t n;
    do
        n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC);
    while (n < 0 && errno == EINTR);
    int lfd = -1;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
            c->cmsg_len == CMSG_LEN(sizeof(int)) && lfd < 0)
            memcpy(&lfd, CMSG_DATA(c), sizeof lfd);
    const char *why = NULL;
    if (n <= 0 || cg_proto_decode(buf, (size_t)n, &m, &why) < 0) {
        cg_log(CG_LOG_WARN, "bad WELCOME from the daemon: %s", why ? why : "connection closed");
        goto fail_lfd;
    }
    if (m.hdr.type == CG_MSG_ERROR) {
        cg_log(CG_LOG_ERROR, "daemon refused this process: %s", m.error.text);
        goto fail_lfd;
    }
    if (m.hdr.type != CG_MSG_WELCOME || lfd < 0 || (mh.msg_flags & MSG_CTRUNC)) {
        cg_log(CG_LOG_WARN, "daemon answered HELLO with %s%s", cg_msg_type_name(m.hdr.type),
               lfd < 0 ? " and no ledger" : "");
        goto fail_lfd;
    }
    *welcome = m.welcome;
    *ledger_fd = lfd;
    return fd;
fail_lfd:
    if (lfd >= 0)
        close(lfd);
fail:
    close(fd);
    return -1;
}

/* Maps the ledger (or keeps the mapping of the same file) and publishes the session. Under mu. */
static int install(struct conn *k, int fd, const struct cg_msg_welcome *w, int lfd)
{
    struct stat st;
    struct cg_ledger *old = atomic_load_explicit(&k->s_ledger, memory_order_relaxed);
    struct cg_ledger *l = old;
    if (fstat(lfd, &st) < 0 || (uint64_t)st.st_size < CG_LEDGER_SIZE) {
        cg_log(CG_LOG_ERROR, "the ledger the daemon sent is unusable");
        close(lfd);
        return -1;
    }
    if (!old || st.st_dev != k->ledger_dev || st.st_ino != k->ledger_ino) {
        void *m = mmap(NULL, CG_LEDGER_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, lfd, 0);
        if (m == MAP_FAILED) {
            cg_log(CG_LOG_ERROR, "cannot map the ledger: %s", strerror(errno));
            close(lfd);
            return -1;
        }
        l = m;
        if (l->magic != CG_LEDGER_MAGIC || !cg_ledger_version_ok(l->version)) {
            cg_log(CG_LOG_ERROR, "ledger has a wrong magic or version");
            munmap(m, CG_LEDGER_SIZE);
            close(lfd);
            return -1;
        }
        /* A previous mapping (a different file, after a daemon restart) is left in place on
         * purpose: another thread may be in the middle of a CAS on it. */
        k->ledger_dev = st.st_dev;
        k->ledger_ino = st.st_ino;
    }
    close(lfd);
    if (w->slot >= CG_LEDGER_SLOTS || w->slot >= l->nslots) {
        cg_log(CG_LOG_ERROR, "daemon gave slot %u beyond the ledger", w->slot);
        return -1;
    }
    if (k->have_slot && w->slot != k->my_slot)
        cg_log(CG_LOG_WARN, "daemon moved this process from slot %u to %u: earlier use is no "
                            "longer counted here", k->my_slot, w->slot);
    k->have_slot = true;
    k->my_slot = w->slot;
    k->my_gen = w->generation;
    uint64_t g = w->granularity < CG_LEDGER_PAGE ? CG_LEDGER_PAGE : w->granularity;
    atomic_store_explicit(&k->s_gran, g, memory_order_relaxed);
    atomic_store_explicit(&k->s_ledger, l, memory_order_release);
    atomic_store_explicit(&k->s_slot, &l->slots[w->slot], memory_order_release);
    if (k == &conns[0])
        atomic_store_explicit(&cg_client_nmembers, w->devices ? w->devices : 1u,
                              memory_order_release);
    k->fd = fd;
    k->gen++;
    if (k->warned_down)
        cg_log(CG_LOG_WARN, "daemon reachable again");
    k->warned_down = false;
    cg_log(CG_LOG_DEBUG, "session: slot %u gen %u limit %llu granularity %llu", w->slot,
           w->generation, (unsigned long long)w->limit, (unsigned long long)g);
    return 0;
}

static void drop_connection(struct conn *k, const char *why)
{
    if (k->fd < 0)
        return;
    cg_log(CG_LOG_INFO, "daemon connection %u lost (%s)", (unsigned)(k - conns), why);
    shutdown(k->fd, SHUT_RDWR); /* wakes a reader still blocked on it */
    close(k->fd);
    k->fd = -1;
    pthread_cond_broadcast(&cv);
}

/* Under mu: returns 0 once connected, -1 when `deadline` passed first. */
static int wait_connected(struct conn *k, const struct timespec *deadline)
{
    long backoff_ms = 10;
    while (k->fd < 0) {
        if (k->connecting) {
            if (passed(deadline))
                return -1;
            pthread_cond_timedwait(&cv, &mu, deadline);
            continue;
        }
        k->connecting = true;
        bool rc = k->have_slot;
        uint32_t slot = k->my_slot, gen = k->my_gen;
        pthread_mutex_unlock(&mu);
        struct cg_msg_welcome w;
        int lfd = -1, err = 0;
        int fd = connect_once((unsigned)(k - conns), rc, slot, gen, deadline, &w, &lfd);
        if (fd < 0)
            err = errno;
        pthread_mutex_lock(&mu);
        k->connecting = false;
        pthread_cond_broadcast(&cv);
        if (fd >= 0) {
            if (install(k, fd, &w, lfd) == 0)
                return 0;
            close(fd);
        } else if (!k->warned_down) {
            k->warned_down = true;
            cg_log(CG_LOG_WARN, "daemon unreachable at %s (%s); waiting up to %.0fs",
                   cg_cfg.socket, strerror(err), cg_cfg.daemon_timeout_s);
        }
        if (passed(deadline))
            return -1;
        struct timespec until = deadline_in((double)backoff_ms / 1000.0);
        if (until.tv_sec > deadline->tv_sec ||
            (until.tv_sec == deadline->tv_sec && until.tv_nsec > deadline->tv_nsec))
            until = *deadline;
        pthread_cond_timedwait(&cv, &mu, &until);
        backoff_ms = backoff_ms * 2 > 500 ? 500 : backoff_ms * 2;
    }
    return 0;
}

bool cg_session_open_on(unsigned m, double wait_s, struct cg_session *s)
{
    if (cg_session_get_on(m, s))
        return true;
    if (m >= CG_IP_MEMBERS)
        return false;
    pthread_mutex_lock(&mu);
    struct timespec deadline = deadline_in(wait_s);
    wait_connected(&conns[m], &deadline);
    pthread_mutex_unlock(&mu);
    return cg_session_get_on(m, s);
}

/* ---- requests -------------------------------------------------------------------------------- */

/* Under mu, as the one reader: receive one message without the lock and dispatch it. */
static void read_one(struct conn *k)
{
    k->reader_active = true;
    int fd = k->fd;
    uint64_t gen = k->gen;
    pthread_mutex_unlock(&mu);
    unsigned char buf[CG_MSG_MAX];
    ssize_t n;
    do
        n = recv(fd, buf, sizeof buf, 0);
    while (n < 0 && errno == EINTR);
    int err = errno;
    pthread_mutex_lock(&mu);
    k->reader_active = false;
    pthread_cond_broadcast(&cv);
    if (gen != k->gen)
        return; /* that connection was replaced meanwhile */
    if (n <= 0) {
        drop_connection(k, n == 0 ? "daemon closed it" : strerror(err));
        return;
    }
    union cg_msg m;
    const char *why;
    if (cg_proto_decode(buf, (size_t)n, &m, &why) < 0) {
        cg_log(CG_LOG_WARN, "undecodable message from the daemon: %s", why);
        drop_connection(k, "protocol error");
        return;
    }
    if (m.hdr.type == CG_MSG_ALLOC_REPLY) {
        for (struct waiter *w = k->waiters; w; w = w->next)
            if (w->id == m.hdr.id && !w->done) {
                w->status = (int)m.alloc_reply.status;
                w->done = true;
                return;
            }
        cg_log(CG_LOG_WARN, "reply for unknown request %llu", (unsigned long long)m.hdr.id);
    } else if (m.hdr.type == CG_MSG_ERROR) {
        cg_log(CG_LOG_WARN, "daemon: %s", m.error.text);
    } else {
        cg_log(CG_LOG_DEBUG, "ignoring %s from the daemon", cg_msg_type_name(m.hdr.type));
    }
}

int cg_client_request(unsigned member, uint64_t bytes)
{
    if (member >= CG_IP_MEMBERS)
        return CG_ALLOC_INVALID;
    struct conn *k = &conns[member];
    pthread_mutex_lock(&mu);
    struct waiter w = {.id = next_id++, .bytes = bytes, .status = CG_REQ_TIMEOUT};
    w.next = k->waiters;
    k->waiters = &w;
    for (;;) {
        if (w.done)
            break;
        if (k->fd < 0) {
            if (!w.down) {
                w.down = true;
                w.deadline = deadline_in(cg_cfg.daemon_timeout_s);
            }
            if (wait_connected(k, &w.deadline) < 0)
                break;
            continue;
        }
        w.down = false;
        if (w.sent_gen != k->gen) {
            union cg_msg m;
            cg_proto_init(&m, CG_MSG_ALLOC, w.id);
            m.alloc.bytes = w.bytes;
            if (send_msg(k->fd, &m) == 0) {
                w.sent_gen = k->gen;
            } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
                pthread_mutex_unlock(&mu); /* the daemon is behind; let it drain */
                nanosleep(&(struct timespec){0, 1000000}, NULL);
                pthread_mutex_lock(&mu);
            } else {
                drop_connection(k, strerror(errno));
            }
            continue;
        }
        if (!k->reader_active) {
            read_one(k);
            continue;
        }
        pthread_cond_wait(&cv, &mu);
    }
    struct waiter **pp = &k->waiters;
    while (*pp != &w)
        pp = &(*pp)->next;
    *pp = w.next;
    pthread_cond_broadcast(&cv); /* someone else may have to become the reader */
    pthread_mutex_unlock(&mu);
    return w.status;
}

/* A notice without a reply on member's socket: a lost one only delays, the daemon re-decides
 * (FREED) or polls (SWAPPED) anyway. */
static void notify(unsigned member, enum cg_msg_type type)
{
    if (member >= CG_IP_MEMBERS)
        return;
    struct conn *k = &conns[member];
    pthread_mutex_lock(&mu);
    if (k->fd >= 0) {
        union cg_msg m;
        cg_proto_init(&m, type, 0);
        (void)send_msg(k->fd, &m);
    }
    pthread_mutex_unlock(&mu);
}

void cg_client_notify_freed(unsigned member)
{
    notify(member, CG_MSG_FREED);
}

void cg_client_notify_swapped(void)
{
    /* After a daemon restart the process may still hold its old connection (nothing read from
     * it since) or none (its swap charges took the fast path): the swap thread, which can
     * afford to wait, connects again, briefly, and sends once more on a dead socket. */
    struct conn *k = &conns[0];
    pthread_mutex_lock(&mu);
    for (int attempt = 0; attempt < 2; attempt++) {
        struct timespec deadline = deadline_in(1.0);
        if (wait_connected(k, &deadline) != 0)
            break;
        union cg_msg m;
        cg_proto_init(&m, CG_MSG_SWAPPED, 0);
        if (send_msg(k->fd, &m) == 0 || errno == EAGAIN || errno == EWOULDBLOCK)
            break; /* sent, or a full buffer: the daemon's poll sees the report anyway */
        drop_connection(k, strerror(errno));
    }
    pthread_mutex_unlock(&mu);
}

/* ---- fork ------------------------------------------------------------------------------------ */

void cg_client_fork_prepare(void)
{
    pthread_mutex_lock(&mu);
}

void cg_client_fork_parent(void)
{
    pthread_mutex_unlock(&mu);
}

/* The child is a new process to the daemon: it must not use the parent's connection or charge
 * the parent's slot. Only async-signal-safe calls here (no malloc). */
void cg_client_fork_child(void)
{
    for (unsigned m = 0; m < CG_IP_MEMBERS; m++) {
        struct conn *k = &conns[m];
        if (k->fd >= 0)
            close(k->fd);
        k->fd = -1;
        k->gen++;
        k->reader_active = k->connecting = k->warned_down = false;
        k->waiters = NULL;
        k->have_slot = false;
        k->my_slot = k->my_gen = 0;
        struct cg_ledger *l = atomic_load_explicit(&k->s_ledger, memory_order_relaxed);
        atomic_store_explicit(&k->s_slot, NULL, memory_order_relaxed);
        atomic_store_explicit(&k->s_ledger, NULL, memory_order_relaxed);
        if (l)
            munmap(l, CG_LEDGER_SIZE);
        k->ledger_dev = 0;
        k->ledger_ino = 0;
    }
    atomic_store_explicit(&cg_client_nmembers, 0u, memory_order_relaxed);
    pthread_mutex_unlock(&mu);
    /* Threads of the parent may have been waiting on cv; they do not exist here. */
    pthread_condattr_t a;
    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    pthread_cond_init(&cv, &a);
    pthread_condattr_destroy(&a);
}

/* client.c — one interposed process's connection to its container socket: accept, identity
 * from SO_PEERCRED, HELLO/WELCOME with the ledger fd, message intake, and hang-up (process
 * exit, SIGKILL included) which returns the process's memory at once. A client that sends
 * anything malformed, or does not read its replies, is disconnected; nobody else notices. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "daemon.h"
#include "notice.h"
#include "fdspare.h"
#include "swap.h"
#include "log.h"
#include "proto.h"

#define MAX_CONNECTIONS_PER_CONTAINER CG_LEDGER_SLOTS
#define MAX_UNWELCOMED_PER_CONTAINER 32
#define HELLO_DEADLINE_NS (5ull * 1000000000ull)
/* A container's share of one loop round, and one connection's share of that: a tenant with a
 * thousand busy connections gets through 64 messages a round, then everyone else is served; its
 * other messages wait in their sockets for the next round. */
#define MSGS_PER_CONTAINER_PER_ROUND 64
#define MSGS_PER_CONNECTION_PER_ROUND 4

static int handle_hello(struct daemon *d, struct proc *p, const struct cg_msg_hello *h)
{
    struct container *c = p->c;
    uint32_t slot = UINT32_MAX;
    if (h->flags & CG_HELLO_RECONNECT) {
        /* Only the process the daemon gave the slot to may take it back (pid, start time and
         * generation from the daemon's record, never from the ledger), and only if nobody
         * holds it. */
        if (slot_held_by(c, h->slot, p->pid, h->generation)) {
            bool held = false;
            for (struct proc *q = c->procs; q; q = q->next)
                if (q != p && q->welcomed && q->slot == h->slot && q->fd >= 0)
                    held = true;
            if (!held)
                slot = h->slot;
        }
        if (slot == UINT32_MAX)
            log_info("container %s: pid %d: reconnect to slot %u refused; new slot", c->ident.id,
                     (int)p->pid, h->slot);
    }
    if (slot != UINT32_MAX) {
        /* An adopted slot after a daemon restart: a placeholder proc may hold its account. */
        for (struct proc *q = c->procs; q; q = q->next) {
            if (q != p && q->welcomed && q->slot == slot && q->fd < 0) {
                p->key = q->key;
                p->known_to_core = q->known_to_core;
                q->welcomed = false; /* hand over without releasing the slot */
                q->known_to_core = false;
                proc_drop(d, q, "adopted by reconnect");
                break;
            }
        }
    } else {
        slot = slot_claim(c, p->pid);
        if (slot == UINT32_MAX) {
            log_warn("container %s: no free ledger slot for pid %d", c->ident.id, (int)p->pid);
            return -1;
        }
    }
    p->slot = slot;
    p->welcomed = true;

    union cg_msg m;
    cg_proto_init(&m, CG_MSG_WELCOME, 0);
    m.welcome.slot = slot;
    m.welcome.generation = c->rec->slots[slot].generation;
    m.welcome.device = c->device;
    m.welcome.devices = (c->gang.leader ? c->gang.leader : c)->gang.nmembers;
    m.welcome.limit = c->limit;
    m.welcome.granularity = c->ledger->granularity;
    m.welcome.context_charge = c->ledger->context_charge;
    if (proc_send(p, &m, c->ledger_fd) != 0)
        return -1;
    log_info("container %s: pid %d connected (slot %u)", c->ident.id, (int)p->pid, slot);
    notice_process(d, c, p, "connect");
    return 0;
}

static int handle_message(struct daemon *d, struct proc *p, const union cg_msg *m)
{
    switch (m->hdr.type) {
    case CG_MSG_HELLO:
        if (p->welcomed)
            return -1;
        return handle_hello(d, p, &m->hello);
    case CG_MSG_ALLOC: {
        if (!p->welcomed)
            return -1;
        if (pending_count_proc(p) >= MAX_PENDING_PER_PROC)
            return -1;
        decide_alloc(d, p, m->hdr.id, m->alloc.bytes);
        return p->fd < 0 ? -1 : 0;
    }
    case CG_MSG_FREED:
        if (!p->welcomed)
            return -1;
        decide_freed(d, p);
        return 0;
    case CG_MSG_SWAPPED:
        if (!p->welcomed)
            return -1;
        log_debug("container %s: pid %d reports its part of a swap", p->c->ident.id, (int)p->pid);
        swap_notice(d, p->c);
        return 0;
    default:
        /* WELCOME, ALLOC_REPLY, ERROR only travel the other way. */
        return -1;
    }
}

/* What is left of the container's share of this round. */
static unsigned budget_left(struct container *c)
{
    uint64_t round = loop_round(c->d->loop);
    if (c->share.round != round) {
        c->share.round = round;
        c->share.budget = MSGS_PER_CONTAINER_PER_ROUND;
    }
    return c->share.budget;
}

static void budget_spend(struct container *c, unsigned cost)
{
    c->share.budget = cost < c->share.budget ? c->share.budget - cost : 0;
}

static void client_readable(void *ctx, uint32_t events)
{
    struct proc *p = ctx;
    struct container *c = p->c;
    struct daemon *d = c->d;
    /* A process that hung up is gone: what it left queued no longer matters. Answering its
     * waiting requests is work too, so a thousand hang-ups at once are spread over rounds. */
    if (events & (EPOLLHUP | EPOLLERR)) {
        if (budget_left(c)) {
            budget_spend(c, 1 + pending_count_proc(p));
            proc_drop(d, p, "process exited");
        }
        return;
    }
    for (int i = 0; i < MSGS_PER_CONNECTION_PER_ROUND && budget_left(c); i++) {
        unsigned char buf[CG_MSG_MAX + 8];
        ssize_t n = recv(p->fd, buf, sizeof buf, MSG_DONTWAIT | MSG_TRUNC);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                break;
            proc_drop(d, p, "receive error");
            return;
        }
        if (n == 0) {
            proc_drop(d, p, "process exited");
            return;
        }
        budget_spend(c, 1);
        union cg_msg m;
        const char *why = NULL;
        uint16_t version = 0;
        if ((size_t)n <= sizeof buf && cg_proto_peek_version(buf, (size_t)n, &version) == 0 &&
            (version < CG_PROTO_MIN_VERSION || version > CG_PROTO_VERSION)) {
            /* Not garbage: an interposer of another version (an upgrade that raised the oldest
             * version adopted, or a downgrade). A process the daemon restored from before its
             * start keeps its slot and quota (its account, restore.c) until it exits: fenced,
             * it cannot grow. This connection, in a protocol the daemon cannot read, closes. */
            bool restored = false;
            for (struct proc *q = c->procs; q; q = q->next)
                restored = restored || (q != p && q->pid == p->pid && q->fd < 0);
            const char *which = version > CG_PROTO_VERSION ? "a newer interposer: a downgrade"
                                                           : "an older interposer";
            if (restored) {
                snprintf(c->fenced, sizeof c->fenced,
                         "pid %d speaks protocol %u, this convgpud %u to %u (%s): fenced under "
                         "its quota until it exits; restart the container to lift it",
                         (int)p->pid, version, CG_PROTO_MIN_VERSION, CG_PROTO_VERSION, which);
                log_warn("container %s: %s", c->ident.id, c->fenced);
            } else {
                log_warn("container %s: pid %d speaks protocol %u, this convgpud %u to %u (%s); "
                         "disconnecting",
                         c->ident.id, (int)p->pid, version, CG_PROTO_MIN_VERSION, CG_PROTO_VERSION,
                         which);
            }
            proc_drop(d, p, "protocol version");
            return;
        }
        if ((size_t)n > sizeof buf || cg_proto_decode(buf, (size_t)n, &m, &why) != 0) {
            log_warn("container %s: pid %d sent a bad message (%s); disconnecting", c->ident.id,
                     (int)p->pid, why ? why : "oversized");
            proc_drop(d, p, "protocol violation");
            return;
        }
        p->proto_version = m.hdr.version; /* answered in its own version (proto.h) */
        if (handle_message(d, p, &m) != 0) {
            if (p->fd >= 0) {
                log_warn("container %s: pid %d: %s refused or unanswerable; disconnecting",
                         c->ident.id, (int)p->pid, cg_msg_type_name(m.hdr.type));
                proc_drop(d, p, "protocol violation");
            }
            return;
        }
    }
}

/* Root's and the daemon's own containers (those integrations create for workloads whose
 * engine decides, as Docker's root containers) are bounded only by the node's total. */
static bool bounded_owner(const struct container *c)
{
    return c->ident.owner_uid != 0 && c->ident.owner_uid != geteuid();
}

/* Why a new connection to c must be refused beyond c's own bounds, or NULL. The node's total
 * keeps descriptors back for the control API and for new containers; the bound per owner keeps
 * one user, inside every container's own bounds, from taking the node's total (issue #35). */
static const char *over_connection_bounds(struct daemon *d, const struct container *c)
{
    static char why[160];
    if (d->opt.max_client_connections && d->client_conns >= d->opt.max_client_connections) {
        snprintf(why, sizeof why, "the node holds max-client-connections (%u) connections",
                 d->opt.max_client_connections);
        return why;
    }
    const struct uid_count *u =
        bounded_owner(c) ? uidcount_get(&d->client_owners, c->ident.owner_uid) : NULL;
    if (u && d->opt.user_max_connections && u->n >= d->opt.user_max_connections) {
        snprintf(why, sizeof why, "uid %u's containers hold user-max-connections (%u) connections",
                 (unsigned)c->ident.owner_uid, d->opt.user_max_connections);
        return why;
    }
    return NULL;
}

void client_accept(void *ctx, uint32_t events)
{
    (void)events;
    struct container *c = ctx;
    struct daemon *d = c->d;
    for (int n = 0; n < 64; n++) {
        int fd = accept4(c->endpoint.listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EMFILE || errno == ENFILE) {
                if (log_once_a_second(&d->last_fd_warning))
                    log_warn("out of file descriptors: refusing connections (container %s)",
                             c->ident.id);
                fdspare_shed(d, c->endpoint.listen_fd);
                continue;
            }
            if (errno != EAGAIN && errno != EWOULDBLOCK && log_once_a_second(&d->last_fd_warning))
                log_warn("container %s: accept: %s", c->ident.id, strerror(errno));
            return;
        }
        /* A container's connections are bounded, and so are those that have not said HELLO
         * yet, so one container cannot exhaust the daemon's descriptors for everyone. */
        unsigned total = 0, unwelcomed = 0;
        for (struct proc *q = c->procs; q; q = q->next) {
            total++;
            unwelcomed += !q->welcomed;
        }
        if (total >= MAX_CONNECTIONS_PER_CONTAINER || unwelcomed >= MAX_UNWELCOMED_PER_CONTAINER) {
            if (log_once_a_second(&c->endpoint.last_refusal_warning))
                log_warn("container %s: %u connections (%u before HELLO): refusing more",
                         c->ident.id, total, unwelcomed);
            close(fd);
            continue;
        }
        struct ucred cred;
        socklen_t len = sizeof cred;
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || cred.pid <= 0) {
            log_warn("container %s: no peer credentials; refusing", c->ident.id);
            close(fd);
            continue;
        }
        const char *why = over_connection_bounds(d, c);
        if (why) {
            if (log_once_a_second(&d->last_fd_warning))
                log_warn("container %s: refusing a connection of pid %d: %s", c->ident.id,
                         (int)cred.pid, why);
            close(fd);
            continue;
        }
        struct proc *p = calloc(1, sizeof *p);
        if (!p) {
            close(fd);
            continue;
        }
        p->c = c;
        p->fd = fd;
        p->pid = cred.pid;
        p->uid = cred.uid;
        p->key = ++d->next_key;
        p->connected_at = loop_now_ns();
        if (loop_add(d->loop, fd, EPOLLIN | EPOLLRDHUP, client_readable, p) != 0) {
            close(fd);
            free(p);
            continue;
        }
        p->next = c->procs;
        c->procs = p;
        d->client_conns++;
        if (bounded_owner(c))
            uidcount_add(&d->client_owners, c->ident.owner_uid, 1, 0);
    }
}

void client_reap_silent(struct daemon *d)
{
    uint64_t now = loop_now_ns();
    for (struct container *c = d->containers; c; c = c->next) {
        struct proc *next;
        for (struct proc *p = c->procs; p; p = next) {
            next = p->next;
            if (!p->welcomed && p->fd >= 0 && now - p->connected_at > HELLO_DEADLINE_NS)
                proc_drop(d, p, "no HELLO in time");
        }
    }
}

void proc_drop(struct daemon *d, struct proc *p, const char *why)
{
    struct container *c = p->c;
    if (p->fd >= 0) {
        loop_del(d->loop, p->fd);
        close(p->fd);
        p->fd = -1;
        d->client_conns--;
        if (bounded_owner(c))
            uidcount_add(&d->client_owners, c->ident.owner_uid, -1, 0);
    }
    uint64_t used = proc_used_bytes(p);
    if (p->known_to_core) {
        cg_status st = cg_process_exit(d->core, c->cid, p->key, loop_now_ns());
        if (st != CG_OK)
            log_warn("container %s: pid %d: core exit: %s", c->ident.id, (int)p->pid,
                     cg_status_str(st));
    }
    pending_drop_proc(p);
    if (p->welcomed) {
        container_used_bytes(c); /* its last use may be the container's peak (profile.h) */
        notice_process(d, c, p, "exit");
        slot_release(c, p->slot);
    }
    if (p->welcomed || p->known_to_core)
        log_info("container %s: pid %d gone (%s); %llu bytes returned", c->ident.id, (int)p->pid,
                 why, (unsigned long long)used);
    for (struct proc **pp = &c->procs; *pp; pp = &(*pp)->next) {
        if (*pp == p) {
            *pp = p->next;
            break;
        }
    }
    if (c->decide.favored == p)
        c->decide.favored = NULL;
    for (unsigned i = 0; i < d->noutbox; i++)
        if (d->outbox[i].p == p)
            d->outbox[i].p = NULL;
    free(p);
    c->decide.dirty = true;
    decide_flush(d);
}

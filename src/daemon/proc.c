/* proc.c — finding the processes the daemon knows, telling a live process from a reused pid,
 * and sending a process one message. Lookups over the model only: the watchdog and the compute
 * measurement (which map NVML's pids) and the containers (which check owners) use them without
 * reaching into the container sockets' code (client.c). The sends are here, not in client.c, so
 * that decide.c answers a request without calling up into the sockets' intake: a send never
 * blocks (MSG_DONTWAIT) and never drops the process, it only says it failed. */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>

#include "daemon.h"
#include "log.h"
#include "proc_start.h"
#include "proto.h"

int proc_send(struct proc *p, const union cg_msg *msg, int fd_to_pass)
{
    /* Each process is answered in the protocol version it spoke (an older interposer after an
     * upgrade: proto.h); the layouts of the versions adopted are the same. */
    union cg_msg copy = *msg;
    if (p->proto_version)
        copy.hdr.version = p->proto_version;
    const union cg_msg *m = &copy;
    struct iovec iov = {.iov_base = (void *)m, .iov_len = m->hdr.length};
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
    char cbuf[CMSG_SPACE(sizeof(int))];
    if (fd_to_pass >= 0) {
        memset(cbuf, 0, sizeof cbuf);
        mh.msg_control = cbuf;
        mh.msg_controllen = sizeof cbuf;
        struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
        cm->cmsg_level = SOL_SOCKET;
        cm->cmsg_type = SCM_RIGHTS;
        cm->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(cm), &fd_to_pass, sizeof(int));
    }
    ssize_t n;
    do
        n = sendmsg(p->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
    while (n < 0 && errno == EINTR);
    return n == (ssize_t)m->hdr.length ? 0 : -1;
}

int proc_reply_alloc(struct proc *p, uint64_t msg_id, uint32_t status)
{
    if (!p || p->fd < 0)
        return -1;
    union cg_msg m;
    cg_proto_init(&m, CG_MSG_ALLOC_REPLY, msg_id);
    m.alloc_reply.status = status;
    if (proc_send(p, &m, -1) != 0) {
        /* The reply queue of a live client is tiny; a full one means it stopped reading. */
        log_warn("container %s: pid %d does not read its replies; disconnecting", p->c->ident.id,
                 (int)p->pid);
        return -1;
    }
    return 0;
}

bool proc_alive(pid_t pid, uint64_t start)
{
    if (pid <= 0 || start == 0 || (kill(pid, 0) != 0 && errno == ESRCH))
        return false;
    /* 0: /proc unreadable (gone, or another pid namespace); a different start: the pid was
     * reused by another process. */
    return cg_proc_start_time(pid) == start;
}

struct proc *proc_by_pid(struct daemon *d, pid_t pid)
{
    for (struct container *c = d->containers; c; c = c->next)
        for (struct proc *p = c->procs; p; p = p->next)
            if (p->welcomed && p->pid == pid)
                return p;
    return NULL;
}

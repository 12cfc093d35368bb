/* container.c — a container's life in the daemon: its private directory, socket and ledger,
 * its registration with the core, limit changes, removal, and keeping ledger quotas equal to
 * the core's use (see the invariant in daemon.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "api.h"
#include "api_parse.h"
#include "daemon.h"
#include "log.h"
#include "size.h"
#include "store.h"

static void random_id(char *out)
{
    unsigned char b[6];
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, b, sizeof b) : -1;
    if (fd >= 0)
        close(fd);
    if (n != (ssize_t)sizeof b) {
        uint64_t t = loop_now_ns() ^ (uint64_t)getpid() << 32;
        memcpy(b, &t, sizeof b);
    }
    for (unsigned i = 0; i < sizeof b; i++)
        sprintf(out + 2 * i, "%02x", b[i]);
}

struct container *container_find(struct daemon *d, const char *key)
{
    for (struct container *c = d->containers; c; c = c->next)
        if (strcmp(c->id, key) == 0)
            return c;
    for (struct container *c = d->containers; c; c = c->next)
        if (c->name[0] && strcmp(c->name, key) == 0)
            return c;
    return NULL;
}

struct container *container_by_cid(struct daemon *d, cg_cid cid)
{
    for (struct container *c = d->containers; c; c = c->next)
        if (c->cid == cid)
            return c;
    return NULL;
}

uint64_t proc_used_bytes(struct proc *p)
{
    if (!p->welcomed)
        return 0;
    uint64_t w = atomic_load(&p->c->ledger->slots[p->slot].word);
    return cg_ledger_used(w) * CG_LEDGER_PAGE;
}

uint64_t container_used_bytes(struct container *c)
{
    return cg_ledger_used_bytes(c->ledger);
}

uint64_t device_used_bytes(struct daemon *d, unsigned device)
{
    uint64_t used = 0;
    for (struct container *c = d->containers; c; c = c->next)
        if (c->device == device)
            used += container_used_bytes(c);
    return used;
}

void container_freeze_sync(struct daemon *d, struct container *c)
{
    uint64_t now = loop_now_ns();
    for (struct proc *p = c->procs; p; p = p->next) {
        if (!p->welcomed)
            continue;
        struct cg_ledger_slot *s = &c->ledger->slots[p->slot];
        uint64_t w = atomic_load(&s->word);
        /* Frozen and unchanged since (the core's use is the quota): nothing to write or tell.
         * A container's processes are many and most are idle; this keeps a sync cheap. */
        if (cg_ledger_quota(w) == cg_ledger_used(w))
            continue;
        while (!atomic_compare_exchange_weak(&s->word, &w,
                                             cg_ledger_pack(cg_ledger_used(w), cg_ledger_used(w))))
            ;
        if (p->known_to_core) {
            cg_status st = cg_process_set_use(d->core, c->cid, p->key,
                                              cg_ledger_used(w) * CG_LEDGER_PAGE, now);
            if (st != CG_OK)
                log_warn("container %s: pid %d: cannot sync use: %s", c->id, (int)p->pid,
                         cg_status_str(st));
        }
    }
}

void container_rebalance(struct daemon *d, struct container *c, struct proc *favored)
{
    cg_container_info ci;
    if (cg_container_get(d->core, c->cid, loop_now_ns(), &ci) != CG_OK)
        return;
    atomic_store(&c->ledger->assigned, ci.assigned);
    atomic_store(&c->ledger->limit, ci.limit);
    unsigned npending = pending_count(c);
    atomic_store(&c->ledger->waiters, npending);
    /* Slack counts as use in the core; a container with waiters must show its true use or a
     * pending request could look over its limit. */
    if (npending)
        return;
    if (!favored || !favored->known_to_core || !favored->welcomed) {
        favored = NULL;
        for (struct proc *p = c->procs; p && !favored; p = p->next)
            if (p->known_to_core && p->welcomed)
                favored = p;
    }
    if (!favored)
        return;
    uint64_t quota_pages = 0;
    for (struct proc *p = c->procs; p; p = p->next)
        if (p->welcomed)
            quota_pages += cg_ledger_quota(atomic_load(&c->ledger->slots[p->slot].word));
    uint64_t assigned_pages = ci.assigned / CG_LEDGER_PAGE;
    if (quota_pages >= assigned_pages)
        return;
    uint64_t slack = assigned_pages - quota_pages;
    struct cg_ledger_slot *s = &c->ledger->slots[favored->slot];
    uint64_t w = atomic_load(&s->word);
    uint64_t nq;
    do {
        nq = cg_ledger_quota(w) + slack;
        if (nq > CG_LEDGER_MAX_PAGES)
            nq = CG_LEDGER_MAX_PAGES;
    } while (!atomic_compare_exchange_weak(&s->word, &w, cg_ledger_pack(nq, cg_ledger_used(w))));
    cg_status st = cg_process_set_use(d->core, c->cid, favored->key, nq * CG_LEDGER_PAGE,
                                      loop_now_ns());
    if (st != CG_OK) {
        /* Undo: the core would not take it, so the process must not have it. */
        log_warn("container %s: quota hand-out refused by core: %s", c->id, cg_status_str(st));
        w = atomic_load(&s->word);
        while (!atomic_compare_exchange_weak(
            &s->word, &w, cg_ledger_pack(cg_ledger_quota(w) - slack, cg_ledger_used(w))))
            ;
    }
}

bool container_owner_gone(struct container *c)
{
    return c->owner_poll && !proc_alive(c->owner_pid, c->owner_start);
}

static void owner_exited(void *ctx, uint32_t events)
{
    (void)events;
    struct container *c = ctx;
    log_info("container %s: owner pid %d exited; removing", c->id, (int)c->owner_pid);
    container_remove(c->d, c, "owner exited");
}

int container_watch_owner(struct container *c, pid_t pid, uint64_t start, char *err,
                          size_t errlen)
{
    uint64_t now_start = cg_proc_start_time(pid);
    if (start && now_start && start != now_start) {
        snprintf(err, errlen, "owner pid %d is another process now", (int)pid);
        return -1;
    }
    int fd = (int)syscall(SYS_pidfd_open, pid, 0);
    bool poll = fd < 0 && (errno == ENOSYS || errno == EINVAL);
    if (fd < 0 && !poll) {
        snprintf(err, errlen, "cannot watch owner pid %d: %s", (int)pid, strerror(errno));
        return -1;
    }
    if (fd >= 0 && loop_add(c->d->loop, fd, EPOLLIN, owner_exited, c) != 0) {
        snprintf(err, errlen, "cannot watch owner pid %d: %s", (int)pid, strerror(errno));
        close(fd);
        return -1;
    }
    /* A new owner replaces the old one (a container's init is reported again after a restart
     * of the runtime): only the latest is watched. */
    if (c->owner_pidfd >= 0) {
        loop_del(c->d->loop, c->owner_pidfd);
        close(c->owner_pidfd);
    }
    c->owner_pidfd = fd; /* kernels before 5.3 (and valgrind) have no pidfd: polled instead */
    c->owner_poll = poll;
    c->owner_pid = pid;
    c->owner_start = start ? start : now_start;
    c->auto_remove = true;
    return 0;
}

static int map_ledger(struct container *c, int fd, bool fresh, char *err, size_t errlen)
{
    void *m = mmap(NULL, CG_LEDGER_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED) {
        snprintf(err, errlen, "cannot map the ledger: %s", strerror(errno));
        return -1;
    }
    struct cg_ledger *l = m;
    /* A fresh file is all zeroes already (ftruncate): clearing it again would make tmpfs back
     * every slot page of every container at once, where untouched slots need no memory. */
    bool stale = !fresh && (l->magic != CG_LEDGER_MAGIC || l->version != CG_LEDGER_VERSION ||
                            l->nslots != CG_LEDGER_SLOTS);
    if (stale)
        memset(l, 0, CG_LEDGER_SIZE);
    if (fresh || stale) {
        l->magic = CG_LEDGER_MAGIC;
        l->version = CG_LEDGER_VERSION;
        l->nslots = CG_LEDGER_SLOTS;
    }
    l->device = c->device;
    l->granularity = c->d->opt.granularity;
    l->context_charge = c->d->devices[c->device].context_charge;
    atomic_store(&l->limit, c->limit);
    c->ledger = l;
    return 0;
}

/* A restarted daemon reopens the ledger its processes still map, so their accounts and fast
 * paths carry on in the same file; a new container gets a fresh one. */
static int make_ledger(struct container *c, char *err, size_t errlen)
{
    char path[PATH_MAX + 128];
    snprintf(path, sizeof path, "%s/ledger", c->dir);
    bool fresh = true;
    int fd = -1;
    if (c->restoring) {
        fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
        struct stat st;
        if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
            (size_t)st.st_size == CG_LEDGER_SIZE)
            fresh = false;
        else if (fd >= 0) {
            close(fd);
            fd = -1;
            unlink(path);
        }
    }
    if (fd < 0)
        fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) {
        snprintf(err, errlen, "cannot create %s: %s", path, strerror(errno));
        return -1;
    }
    if (fresh && ftruncate(fd, (off_t)CG_LEDGER_SIZE) != 0) {
        snprintf(err, errlen, "cannot size %s: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    if (map_ledger(c, fd, fresh, err, errlen) != 0) {
        close(fd);
        return -1;
    }
    if (fchown(fd, c->owner_uid, c->owner_gid) != 0 && geteuid() == 0)
        log_warn("container %s: chown ledger: %s", c->id, strerror(errno));
    c->ledger_fd = fd;
    return 0;
}

static int make_socket(struct container *c, char *err, size_t errlen)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (snprintf(c->sock_path, sizeof c->sock_path, "%s/container.sock", c->dir) >=
            (int)sizeof sa.sun_path) {
        snprintf(err, errlen, "socket path too long: %s/container.sock", c->dir);
        return -1;
    }
    strcpy(sa.sun_path, c->sock_path);
    int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        snprintf(err, errlen, "socket: %s", strerror(errno));
        return -1;
    }
    unlink(c->sock_path);
    if (bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(fd, 128) != 0) {
        snprintf(err, errlen, "cannot listen on %s: %s", c->sock_path, strerror(errno));
        close(fd);
        return -1;
    }
    /* Only the container's owner (and root) may connect; the directory is private too. */
    if (chmod(c->sock_path, 0600) != 0 ||
        (chown(c->sock_path, c->owner_uid, c->owner_gid) != 0 && geteuid() == 0))
        log_warn("container %s: socket permissions: %s", c->id, strerror(errno));
    c->listen_fd = fd;
    return 0;
}

static void container_destroy_files(struct container *c)
{
    if (c->ledger)
        munmap(c->ledger, CG_LEDGER_SIZE);
    if (c->ledger_fd >= 0)
        close(c->ledger_fd);
    if (c->listen_fd >= 0)
        close(c->listen_fd);
    if (c->owner_pidfd >= 0)
        close(c->owner_pidfd);
    char path[PATH_MAX + 128];
    snprintf(path, sizeof path, "%s/ledger", c->dir);
    unlink(path);
    if (c->sock_path[0])
        unlink(c->sock_path);
    rmdir(c->dir);
}

int container_create(struct daemon *d, const char *id, const char *name, int device,
                     uint64_t limit, uid_t uid, gid_t gid, pid_t owner, bool auto_remove,
                     const struct container_restore *restore, struct container **out, char *err,
                     size_t errlen)
{
    char gen[CONTAINER_ID_MAX + 1];
    if (id && *id) {
        if (!api_valid_name(id)) {
            snprintf(err, errlen, "invalid container id '%s' (1-64 of [A-Za-z0-9_.-])", id);
            return -EINVAL;
        }
    } else {
        do
            random_id(gen);
        while (container_find(d, gen));
        id = gen;
    }
    if (name && *name && !api_valid_name(name)) {
        snprintf(err, errlen, "invalid container name '%s' (1-64 of [A-Za-z0-9_.-])", name);
        return -EINVAL;
    }
    if (container_find(d, id) || (name && *name && container_find(d, name))) {
        snprintf(err, errlen, "a container named '%s' already exists", name && *name ? name : id);
        return -EEXIST;
    }
    if (limit == 0) {
        snprintf(err, errlen, "gpu memory limit must be greater than zero");
        return -EINVAL;
    }
    if (device >= (int)d->ndevices) {
        snprintf(err, errlen, "no device %d (this node has %u)", device, d->ndevices);
        return -ENODEV;
    }

    struct container *c = calloc(1, sizeof *c);
    if (!c) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    c->d = d;
    c->listen_fd = c->ledger_fd = c->owner_pidfd = -1;
    snprintf(c->id, sizeof c->id, "%s", id);
    snprintf(c->name, sizeof c->name, "%s", name ? name : "");
    c->owner_uid = uid;
    c->owner_gid = gid;
    c->owner_pid = owner;
    c->auto_remove = auto_remove;
    c->init_pid = restore ? restore->init_pid : 0;
    c->created_unix = (int64_t)time(NULL);

    uint64_t now = loop_now_ns();
    cg_cid cid;
    cg_status st;
    c->created_mono = restore ? restore->created_mono : now;
    d->creating = c;
    c->restoring = restore != NULL;
    if (restore && device >= 0) {
        st = cg_container_restore(d->core, (unsigned)device, limit, restore->assigned,
                                  restore->created_mono, &cid);
        if (st == CG_ERR_INVALID) {
            log_warn("container %s: recorded assignment %llu cannot be restored; re-assigning",
                     id, (unsigned long long)restore->assigned);
            st = cg_container_create(d->core, device, limit, now, &cid);
        }
    } else {
        st = cg_container_create(d->core, device, limit, now, &cid);
    }
    d->creating = NULL;
    if (st != CG_OK) {
        char b1[CG_SIZE_BUFLEN];
        if (st == CG_ERR_TOO_LARGE || st == CG_ERR_NO_DEVICE)
            snprintf(err, errlen, "limit %s does not fit on %s: %s", cg_format_size(limit, b1, sizeof b1),
                     device >= 0 ? "that device" : "any device", cg_status_str(st));
        else
            snprintf(err, errlen, "cannot create container: %s", cg_status_str(st));
        free(c);
        return st == CG_ERR_NOMEM ? -ENOMEM : -EINVAL;
    }
    c->cid = cid;
    cg_container_info ci;
    cg_container_get(d->core, cid, now, &ci);
    c->device = ci.device;
    c->limit = ci.limit;

    snprintf(c->dir, sizeof c->dir, "%s/containers/%s", d->opt.runtime_dir, c->id);
    if (mkdir(c->dir, 0700) != 0 && !(restore && errno == EEXIST)) {
        snprintf(err, errlen, "cannot create %s: %s", c->dir, strerror(errno));
        goto fail_core;
    }
    if (chown(c->dir, uid, gid) != 0 && geteuid() == 0)
        log_warn("container %s: chown dir: %s", c->id, strerror(errno));
    if (make_ledger(c, err, errlen) != 0 || make_socket(c, err, errlen) != 0)
        goto fail_files;
    atomic_store(&c->ledger->assigned, ci.assigned);
    c->restoring = false;
    if (loop_add(d->loop, c->listen_fd, EPOLLIN, client_accept, c) != 0) {
        snprintf(err, errlen, "cannot watch container socket");
        goto fail_files;
    }
    if (auto_remove && owner > 0 &&
        container_watch_owner(c, owner, restore ? restore->owner_start : 0, err, errlen) != 0) {
        loop_del(d->loop, c->listen_fd);
        goto fail_files;
    }
    if (d->store && !restore && store_put_container(d->store, c) != 0) {
        snprintf(err, errlen, "cannot persist container state");
        if (c->owner_pidfd >= 0)
            loop_del(d->loop, c->owner_pidfd);
        loop_del(d->loop, c->listen_fd);
        goto fail_files;
    }

    struct container **tail = &d->containers;
    while (*tail)
        tail = &(*tail)->next;
    *tail = c;
    char b1[CG_SIZE_BUFLEN], b2[CG_SIZE_BUFLEN];
    log_info("container %s%s%s: created on device %u, limit %s, assigned %s", c->id,
             c->name[0] ? " name=" : "", c->name, c->device, cg_format_size(limit, b1, sizeof b1),
             cg_format_size(ci.assigned, b2, sizeof b2));
    *out = c;
    return 0;

fail_files:
    container_destroy_files(c);
fail_core:
    cg_container_remove(d->core, cid, now);
    free(c);
    return -EIO;
}

int container_remove(struct daemon *d, struct container *c, const char *why)
{
    /* Pending requests are answered CANCELLED by the sink while the core removes. */
    while (c->procs)
        proc_drop(d, c->procs, why);
    cg_status st = cg_container_remove(d->core, c->cid, loop_now_ns());
    if (st != CG_OK)
        log_warn("container %s: core remove: %s", c->id, cg_status_str(st));
    pending_drop_all(c);
    loop_cancel(d->loop, &c->redecide);
    loop_del(d->loop, c->listen_fd);
    if (c->owner_pidfd >= 0)
        loop_del(d->loop, c->owner_pidfd);
    if (d->store)
        store_delete_container(d->store, c->id);
    for (struct container **pp = &d->containers; *pp; pp = &(*pp)->next) {
        if (*pp == c) {
            *pp = c->next;
            break;
        }
    }
    log_info("container %s: removed (%s)", c->id, why);
    api_container_removed(d, c);
    container_destroy_files(c);
    free(c);
    /* Others on the device may have been resumed by the removal. */
    decide_flush(d);
    return 0;
}

int container_set_limit(struct daemon *d, struct container *c, uint64_t limit, bool *pending,
                        char *err, size_t errlen)
{
    container_freeze_sync(d, c);
    cg_status st = cg_container_set_limit(d->core, c->cid, limit, loop_now_ns(), pending);
    if (st != CG_OK) {
        char b1[CG_SIZE_BUFLEN], b2[CG_SIZE_BUFLEN];
        if (st == CG_ERR_BELOW_USE)
            snprintf(err, errlen, "limit %s is below the container's use %s; free memory first",
                     cg_format_size(limit, b1, sizeof b1),
                     cg_format_size(container_used_bytes(c), b2, sizeof b2));
        else if (st == CG_ERR_TOO_LARGE)
            snprintf(err, errlen, "limit %s exceeds the device capacity",
                     cg_format_size(limit, b1, sizeof b1));
        else
            snprintf(err, errlen, "cannot change limit: %s", cg_status_str(st));
        c->dirty = true;
        decide_flush(d);
        return -EINVAL;
    }
    cg_container_info ci;
    if (cg_container_get(d->core, c->cid, loop_now_ns(), &ci) == CG_OK)
        c->limit = ci.limit;
    if (d->store)
        store_put_container(d->store, c);
    c->dirty = true;
    decide_flush(d);
    return 0;
}

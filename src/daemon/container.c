/* container.c — a container's life in the daemon: its directory, socket, ledger and record,
 * its registration with the core, its owner and start deadline, limit changes, and removal. A
 * service at the top of the daemon's services (docs/DESIGN.md, "Layers"): it uses the model,
 * the decisions (decide.c keeps ledger quotas equal to the core's use, the invariant in
 * daemon.h), tenants, profiles and the container sockets it opens (client.c); only the gangs,
 * the restore and the edges above call it.
 *
 * Nothing here follows a path a tenant can change: the container's directory belongs to the
 * daemon (0711; the container's user can connect to the socket in it and create nothing), it
 * is reached through descriptors (rundir.c), the socket is bound under a temporary name and
 * given to its user before it is renamed into place, and the ledger is a sealed memfd that
 * exists in no directory, which its processes can neither shrink nor grow. */
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
#include <sys/timerfd.h>
#include <sys/un.h>
#include <sys/epoll.h>
#include <linux/memfd.h>
#include <time.h>
#include <unistd.h>

#include "names.h"
#include "daemon.h"
#include "notice.h"
#include "adaptive.h"
#include "swap.h"
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

bool container_owner_gone(struct container *c)
{
    return c->life.owner_poll && !proc_alive(c->life.owner_pid, c->life.owner_start);
}

/* The start deadline passed and no init was reported: the hook or shim that registered the
 * container did not finish, so nothing will ever report or release it. */
static void start_overdue(void *ctx, uint32_t events)
{
    (void)events;
    struct container *c = ctx;
    uint64_t ticks;
    if (read(c->life.start_timer_fd, &ticks, sizeof ticks) < 0 && errno == EAGAIN)
        return;
    if (!c->life.start_by_unix)
        return; /* reported meanwhile */
    char err[128];
    if ((int64_t)time(NULL) < c->life.start_by_unix) { /* the clock was set back: wait again */
        if (container_set_start_by(c, c->life.start_by_unix, err, sizeof err) != 0)
            log_warn("container %s: %s", c->ident.id, err);
        return;
    }
    log_warn("container %s: its init was not reported by its start deadline (the hook or shim "
             "that registered it did not finish); removing",
             c->ident.id);
    container_remove(c->d, c, "never started");
}

int container_set_start_by(struct container *c, int64_t by_unix, char *err, size_t errlen)
{
    if (c->life.start_timer_fd >= 0) {
        loop_del(c->d->loop, c->life.start_timer_fd);
        close(c->life.start_timer_fd);
        c->life.start_timer_fd = -1;
    }
    c->life.start_by_unix = by_unix;
    if (!by_unix)
        return 0;
    /* Wall clock, absolute: the deadline is stored as such and survives a restart. */
    int fd = timerfd_create(CLOCK_REALTIME, TFD_NONBLOCK | TFD_CLOEXEC);
    struct itimerspec at = {.it_value = {.tv_sec = (time_t)by_unix}};
    if (fd < 0 || timerfd_settime(fd, TFD_TIMER_ABSTIME, &at, NULL) != 0 ||
        loop_add(c->d->loop, fd, EPOLLIN, start_overdue, c) != 0) {
        snprintf(err, errlen, "cannot arm the start deadline: %s", strerror(errno));
        if (fd >= 0)
            close(fd);
        c->life.start_by_unix = 0;
        return -1;
    }
    c->life.start_timer_fd = fd;
    return 0;
}

static void owner_exited(void *ctx, uint32_t events)
{
    (void)events;
    struct container *c = ctx;
    log_info("container %s: owner pid %d exited; removing", c->ident.id, (int)c->life.owner_pid);
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
    if (c->life.owner_pidfd >= 0) {
        loop_del(c->d->loop, c->life.owner_pidfd);
        close(c->life.owner_pidfd);
    }
    c->life.owner_pidfd = fd; /* kernels before 5.3 (and valgrind) have no pidfd: polled instead */
    c->life.owner_poll = poll;
    c->life.owner_pid = pid;
    c->life.owner_start = start ? start : now_start;
    c->life.auto_remove = true;
    return 0;
}

/* The ledger is a memfd sealed against shrinking and growing: a process holding it (every
 * process of the container does) can write its words but cannot make the daemon's mapping
 * fault, and its pages count against no file system a tenant could fill. */
static int new_ledger(struct container *c, char *err, size_t errlen)
{
    char name[CONTAINER_ID_MAX + 32];
    snprintf(name, sizeof name, CG_LEDGER_MEMFD_PREFIX "%s", c->ident.id);
    int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0) {
        snprintf(err, errlen, "cannot create the ledger: %s", strerror(errno));
        return -1;
    }
    if (ftruncate(fd, (off_t)CG_LEDGER_SIZE) != 0 ||
        fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
        snprintf(err, errlen, "cannot size and seal the ledger: %s", strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

static int make_ledger(struct container *c, int found_fd, char *err, size_t errlen)
{
    bool fresh = found_fd < 0;
    int fd = fresh ? new_ledger(c, err, errlen) : found_fd;
    if (fd < 0)
        return -1;
    void *m = mmap(NULL, CG_LEDGER_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED) {
        snprintf(err, errlen, "cannot map the ledger: %s", strerror(errno));
        close(fd);
        return -1;
    }
    struct cg_ledger *l = m;
    if (!fresh && (l->magic != CG_LEDGER_MAGIC || !cg_ledger_version_ok(l->version))) {
        /* A ledger this daemon cannot read (a layout older than CG_LEDGER_MIN_VERSION, or a
         * newer daemon's: a downgrade). Its processes keep it and their quotas in it; the
         * container gets a fresh one, which they refuse, so they run fenced. */
        snprintf(c->fenced, sizeof c->fenced,
                 "its processes' ledger is version %u, this convgpud %u to %u (%s): they keep "
                 "their quotas until they exit and cannot grow; restart the container to lift it",
                 l->version, CG_LEDGER_MIN_VERSION, CG_LEDGER_VERSION,
                 l->version > CG_LEDGER_VERSION ? "a downgrade" : "an older convgpu");
        log_warn("container %s: %s", c->ident.id, c->fenced);
        munmap(m, CG_LEDGER_SIZE);
        close(fd);
        return make_ledger(c, -1, err, errlen);
    }
    /* A fresh memfd is all zeroes: untouched slot pages take no memory. An adopted ledger keeps
     * the version it was made with: its processes' interposers check it. */
    l->magic = CG_LEDGER_MAGIC;
    if (fresh)
        l->version = CG_LEDGER_VERSION;
    l->nslots = CG_LEDGER_SLOTS;
    l->device = c->device;
    l->granularity = c->d->opt.granularity;
    l->context_charge = c->d->devices[c->device].context_charge;
    atomic_store(&l->limit, c->limit);
    atomic_store(&l->high_slot, c->rec->high);
    atomic_store(&l->swap.enabled, c->d->opt.swap && !c->no_swap ? 1u : 0u);
    /* A daemon that died during a swap left its order in the ledger: pick the move up where it
     * is (swap.c finishes it once every process reported), so the container ends in or out. */
    /* A daemon that died during a swap, or while the container was out, left the gate bit:
     * swap_restore (once the processes' accounts are back) decides whether it stays out. */
    c->swap.found = !fresh && (atomic_load(&l->compute.gate) & CG_GATE_SWAPPED);
    struct stat st;
    if (fstat(fd, &st) == 0) {
        c->rec->ledger_dev = (uint64_t)st.st_dev;
        c->rec->ledger_ino = (uint64_t)st.st_ino;
    }
    c->ledger = l;
    c->ledger_fd = fd;
    return 0;
}

/* The directory belongs to the daemon; an older version left it to the container's user, so
 * anything already there that is not a directory of ours is removed first. */
static int make_dir(struct container *c, char *err, size_t errlen)
{
    if (c->gang.leader) { /* a gang member's socket sits beside its leader's (gang.c) */
        c->endpoint.dir_fd = fcntl(c->gang.leader->endpoint.dir_fd, F_DUPFD_CLOEXEC, 0);
        if (c->endpoint.dir_fd < 0)
            snprintf(err, errlen, "cannot open %s: %s", c->endpoint.dir, strerror(errno));
        return c->endpoint.dir_fd < 0 ? -1 : 0;
    }
    int cfd = c->d->rd.containers_fd;
    for (int attempt = 0; attempt < 2; attempt++) {
        if (mkdirat(cfd, c->ident.id, 0711) != 0 && errno != EEXIST)
            break;
        int fd = openat(cfd, c->ident.id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        struct stat st;
        if (fd >= 0 && fstat(fd, &st) == 0 && st.st_uid == geteuid() &&
            (st.st_mode & 07777) == 0711) {
            c->endpoint.dir_fd = fd;
            return 0;
        }
        if (fd >= 0)
            close(fd);
        log_warn("container %s: its directory was not the daemon's own; replacing it", c->ident.id);
        rundir_remove(cfd, c->ident.id);
    }
    snprintf(err, errlen, "cannot create %s: %s", c->endpoint.dir,
             strerror(errno ? errno : EEXIST));
    return -1;
}

/* Bound as root with mode 0600 under a temporary name, given to the container's user, then
 * renamed into place: the name never points at anything but this socket, owned by that user.
 * The path goes through /proc/self/fd, so it resolves to the directory we hold whatever
 * happens to the path, and it is short whatever the runtime directory's length. */
static void socket_name(const struct container *c, char *out, size_t len)
{
    if (c->gang.member_index)
        snprintf(out, len, "container.%u.sock", c->gang.member_index);
    else
        snprintf(out, len, "container.sock");
}

static int make_socket(struct container *c, char *err, size_t errlen)
{
    char name[32], tmp[40];
    socket_name(c, name, sizeof name);
    snprintf(tmp, sizeof tmp, "%s.new", name);
    if (snprintf(c->endpoint.sock_path, sizeof c->endpoint.sock_path, "%s/%s", c->endpoint.dir,
                 name) >= (int)sizeof((struct sockaddr_un *)0)->sun_path) {
        snprintf(err, errlen, "socket path too long for clients: %s/%s", c->endpoint.dir, name);
        return -1;
    }
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof sa.sun_path, "/proc/self/fd/%d/%s", c->endpoint.dir_fd, tmp);
    int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        snprintf(err, errlen, "socket: %s", strerror(errno));
        return -1;
    }
    unlinkat(c->endpoint.dir_fd, tmp, 0);
    mode_t old = umask(0177);
    int rc = bind(fd, (struct sockaddr *)&sa, sizeof sa);
    umask(old);
    if (rc != 0 || listen(fd, 128) != 0) {
        snprintf(err, errlen, "cannot listen on %s: %s", c->endpoint.sock_path, strerror(errno));
        close(fd);
        return -1;
    }
    if (fchownat(c->endpoint.dir_fd, tmp, c->ident.owner_uid, c->ident.owner_gid,
                 AT_SYMLINK_NOFOLLOW) != 0 &&
        geteuid() == 0) {
        snprintf(err, errlen, "cannot give the socket to uid %u: %s", (unsigned)c->ident.owner_uid,
                 strerror(errno));
        close(fd);
        unlinkat(c->endpoint.dir_fd, tmp, 0);
        return -1;
    }
    if (renameat(c->endpoint.dir_fd, tmp, c->endpoint.dir_fd, name) != 0) {
        snprintf(err, errlen, "cannot publish %s: %s", c->endpoint.sock_path, strerror(errno));
        close(fd);
        unlinkat(c->endpoint.dir_fd, tmp, 0);
        return -1;
    }
    c->endpoint.listen_fd = fd;
    return 0;
}

static void container_destroy_files(struct container *c)
{
    if (c->ledger)
        munmap(c->ledger, CG_LEDGER_SIZE);
    if (c->ledger_fd >= 0)
        close(c->ledger_fd);
    if (c->endpoint.listen_fd >= 0)
        close(c->endpoint.listen_fd);
    if (c->life.owner_pidfd >= 0)
        close(c->life.owner_pidfd);
    if (c->life.start_timer_fd >= 0)
        close(c->life.start_timer_fd);
    record_close(c->rec);
    record_unlink(c->d->rd.records_fd, c->ident.id);
    if (c->endpoint.dir_fd >= 0 &&
        c->gang.leader) { /* the directory is its leader's: only the socket goes */
        char name[32];
        socket_name(c, name, sizeof name);
        unlinkat(c->endpoint.dir_fd, name, 0);
        close(c->endpoint.dir_fd);
    } else if (c->endpoint.dir_fd >= 0) {
        close(c->endpoint.dir_fd);
        if (rundir_remove(c->d->rd.containers_fd, c->ident.id) != 0)
            log_warn("container %s: cannot remove %s: %s", c->ident.id, c->endpoint.dir,
                     strerror(errno));
    }
}

/* Says why exclusivity refused a new container: the busy device and how many containers it
 * has, or the exclusive container that holds the device asked for. */
static void exclusive_refusal(struct daemon *d, const cg_container_spec *spec, cg_status st,
                              char *err, size_t errlen)
{
    char b1[CG_SIZE_BUFLEN];
    for (unsigned i = 0; i < d->ndevices; i++) {
        cg_device_info di = {0};
        if ((spec->device >= 0 && i != (unsigned)spec->device) ||
            cg_device_get(d->core, i, &di) != CG_OK || di.capacity < spec->limit)
            continue;
        struct container *h = di.exclusive ? container_by_cid(d, di.exclusive) : NULL;
        if (st == CG_ERR_BUSY && spec->device >= 0) {
            snprintf(err, errlen, "device %u is busy: %u container%s; an exclusive container "
                                  "needs a device with none", i, di.ncontainers,
                     di.ncontainers == 1 ? "" : "s");
            return;
        }
        if (st == CG_ERR_EXCLUSIVE && h) {
            snprintf(err, errlen,
                     "device %u is held by exclusive container %s%s%s%s: no other "
                     "container is placed on it while that one lives%s",
                     i, h->ident.id, h->ident.name[0] ? " (" : "", h->ident.name,
                     h->ident.name[0] ? ")" : "",
                     spec->device >= 0 ? "" : ", and no other device can hold this one");
            return;
        }
    }
    if (st == CG_ERR_BUSY)
        snprintf(err, errlen, "no device is free for an exclusive container%s%s: every device "
                              "that could hold it has containers",
                 spec->limit ? " of " : "", spec->limit ? cg_format_size(spec->limit, b1, sizeof b1) : "");
    else
        snprintf(err, errlen, "the device is held by an exclusive container");
}

/* Says why the core refused a new container. */
static void create_refusal(struct daemon *d, const cg_container_spec *spec, cg_status st,
                           char *err, size_t errlen)
{
    char b1[CG_SIZE_BUFLEN];
    if (st == CG_ERR_NO_COMPUTE) {
        cg_device_info di = {0};
        if (spec->device >= 0 && cg_device_get(d->core, (unsigned)spec->device, &di) == CG_OK)
            snprintf(err, errlen, "hard compute share %u%% does not fit on device %d: its hard "
                                  "shares already sum to %u%% of 100%%",
                     spec->compute_pct, spec->device, di.compute_hard_pct);
        else
            snprintf(err, errlen, "hard compute share %u%% does not fit on any device that can "
                                  "hold %s: the hard shares on one device sum to at most 100%%",
                     spec->compute_pct, cg_format_size(spec->limit, b1, sizeof b1));
    } else if (st == CG_ERR_BUSY || st == CG_ERR_EXCLUSIVE) {
        exclusive_refusal(d, spec, st, err, errlen);
    } else if (st == CG_ERR_TOO_LARGE || st == CG_ERR_NO_DEVICE) {
        snprintf(err, errlen, "limit %s does not fit on %s: %s",
                 cg_format_size(spec->limit, b1, sizeof b1),
                 spec->device >= 0 ? "that device" : "any device", cg_status_str(st));
    } else {
        snprintf(err, errlen, "cannot create container: %s", cg_status_str(st));
    }
}

int container_names_check(struct daemon *d, const char *id, const char *name, char *err,
                          size_t errlen)
{
    if (id && *id && !name_valid(id)) {
        snprintf(err, errlen, "invalid container id '%s' (1-64 of [A-Za-z0-9_.-])", id);
        return -EINVAL;
    }
    if (name && *name && !name_valid(name)) {
        snprintf(err, errlen, "invalid container name '%s' (1-64 of [A-Za-z0-9_.-])", name);
        return -EINVAL;
    }
    if ((id && *id && container_find(d, id)) || (name && *name && container_find(d, name))) {
        snprintf(err, errlen, "a container named '%s' already exists", name && *name ? name : id);
        return -EEXIST;
    }
    return 0;
}

int container_create(struct daemon *d, const char *id, const char *name, const char *profile_key,
                     const cg_container_spec *spec, uid_t uid, gid_t gid, pid_t owner,
                     bool auto_remove, struct container_restore *restore,
                     const struct container_member *member,
                     struct container **out, char *err, size_t errlen)
{
    int failed = -EIO; /* what a failure below returns: the store's -ENOSPC where it says so */
    int device = spec->device;
    uint64_t limit = spec->limit;
    char gen[CONTAINER_ID_MAX + 1];
    if (!id || !*id) {
        do
            random_id(gen);
        while (container_find(d, gen));
        id = gen;
    }
    int rc = container_names_check(d, id, name, err, errlen);
    if (rc != 0)
        return rc;
    if (limit == 0 && !spec->exclusive) { /* an exclusive one gets the device's capacity */
        snprintf(err, errlen, "gpu memory limit must be greater than zero");
        return -EINVAL;
    }
    if (device >= (int)d->ndevices) {
        snprintf(err, errlen, "no device %d (this node has %u)", device, d->ndevices);
        return -ENODEV;
    }
    if (spec->compute_pct > CG_COMPUTE_PCT_MAX) {
        snprintf(err, errlen, "gpu compute share %u%% is not 1-100", spec->compute_pct);
        return -EINVAL;
    }
    if (spec->priority > CG_PRIORITY_MAX) {
        snprintf(err, errlen, "priority %u is not 0-9", spec->priority);
        return -EINVAL;
    }

    struct container *c = calloc(1, sizeof *c);
    if (!c) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    c->d = d;
    c->endpoint.listen_fd = c->ledger_fd = c->life.owner_pidfd = c->endpoint.dir_fd =
        c->life.start_timer_fd = -1;
    snprintf(c->ident.id, sizeof c->ident.id, "%s", id);
    snprintf(c->ident.name, sizeof c->ident.name, "%s", name ? name : "");
    const struct tenant *tenant = tenant_by_id(d, spec->tenant);
    snprintf(c->ident.tenant, sizeof c->ident.tenant, "%s", tenant ? tenant->name : "");
    snprintf(c->profile.key, sizeof c->profile.key, "%s", profile_key ? profile_key : "");
    c->ident.owner_uid = uid;
    c->ident.owner_gid = gid;
    c->life.owner_pid = owner;
    c->life.auto_remove = auto_remove;
    c->life.init_pid = restore ? restore->init_pid : 0;
    c->no_swap = spec->no_swap;
    c->ident.created_unix = (int64_t)time(NULL);
    c->gang.nmembers = 1;
    if (member) {
        c->gang.leader = member->leader;
        c->gang.member_index = member->index;
        c->no_swap = true; /* a gang member never leaves its device (gang.c) */
    }

    uint64_t now = loop_now_ns();
    cg_cid cid;
    cg_status st;
    c->ident.created_mono = restore ? restore->created_mono : now;
    d->creating = c;
    if (member && member->cid != CG_CID_NONE) {
        cid = member->cid; /* admitted with its gang (cg_gang_create) */
        st = CG_OK;
    } else if (restore && device >= 0) {
        /* The share was admitted when it was set; the recorded assignment is restored first,
         * then the share (a share that no longer fits, from an edited state.db, is kept as
         * elastic rather than lost). */
        cg_container_spec plain = {.device = device, .limit = limit, .tenant = spec->tenant,
                                   .priority = spec->priority, .no_swap = spec->no_swap,
                                   .util_pct = spec->util_pct, .app = spec->app};
        st = cg_container_restore_spec(d->core, &plain, restore->assigned, restore->created_mono,
                                       &cid);
        if (st == CG_ERR_INVALID) {
            log_warn("container %s: recorded assignment %llu cannot be restored; re-assigning",
                     id, (unsigned long long)restore->assigned);
            st = cg_container_create_spec(d->core, &plain, now, &cid);
        }
        if (st == CG_OK && spec->compute_pct &&
            cg_container_set_compute(d->core, cid, spec->compute_pct, spec->compute_mode, now) !=
                CG_OK) {
            log_error("container %s: hard compute share %u%% no longer fits on device %d; kept "
                      "as an elastic share", id, spec->compute_pct, device);
            cg_container_set_compute(d->core, cid, spec->compute_pct, CG_COMPUTE_ELASTIC, now);
        }
        if (st == CG_OK && spec->exclusive && cg_container_restore_exclusive(d->core, cid) != CG_OK)
            log_error("container %s: was exclusive, but device %d has other containers now (an "
                      "edited state.db?); kept as a shared one", id, device);
    } else {
        st = cg_container_create_spec(d->core, spec, now, &cid);
    }
    d->creating = NULL;
    if (st != CG_OK) {
        create_refusal(d, spec, st, err, errlen);
        free(c);
        return st == CG_ERR_NOMEM ? -ENOMEM
               : st == CG_ERR_NO_COMPUTE || st == CG_ERR_BUSY || st == CG_ERR_EXCLUSIVE ? -EBUSY
                                                                                        : -EINVAL;
    }
    c->cid = cid;
    c->profile.since = now;
    cg_container_info ci;
    cg_container_get(d->core, cid, now, &ci);
    c->device = ci.device;
    c->limit = ci.limit;

    if (c->gang.leader)
        snprintf(c->endpoint.dir, sizeof c->endpoint.dir, "%s", c->gang.leader->endpoint.dir);
    else
        snprintf(c->endpoint.dir, sizeof c->endpoint.dir, "%s/containers/%s", d->rd.path,
                 c->ident.id);
    bool found = false;
    int found_ledger = -1;
    if (restore) { /* from here on the container owns them, failing or not */
        c->rec = restore->rec;
        found_ledger = restore->ledger_fd;
        restore->rec = NULL;
        restore->ledger_fd = -1;
    } else {
        c->rec = record_open(d->rd.records_fd, c->ident.id, false, &found, err, errlen);
    }
    if (!c->rec)
        goto fail_core;
    c->rec->assigned = ci.assigned;
    if (make_dir(c, err, errlen) != 0) {
        if (found_ledger >= 0)
            close(found_ledger);
        goto fail_files;
    }
    if (make_ledger(c, found_ledger, err, errlen) != 0 || make_socket(c, err, errlen) != 0)
        goto fail_files;
    atomic_store(&c->ledger->assigned, ci.assigned);
    /* The compute share from the start, not from the compute step's first visit: a process's
     * launches bound their run-ahead only under a share (gate.h), and one that queued 64 x 20 ms
     * before the first step ran 1.3 s past a gate closed at once (bench/compute.sh). */
    atomic_store(&c->ledger->compute.share_pct, ci.compute_pct);
    if (loop_add(d->loop, c->endpoint.listen_fd, EPOLLIN, client_accept, c) != 0) {
        snprintf(err, errlen, "cannot watch container socket");
        goto fail_files;
    }
    if (auto_remove && owner > 0 &&
        container_watch_owner(c, owner, restore ? restore->owner_start : 0, err, errlen) != 0) {
        loop_del(d->loop, c->endpoint.listen_fd);
        goto fail_files;
    }
    /* A gang's deadline is its leader's: removing the leader removes the members. */
    int64_t start_by = restore ? restore->start_by_unix
                       : !member || member->index == 0 ? d->creating_start_by : 0;
    if (start_by && container_set_start_by(c, start_by, err, errlen) != 0) {
        if (c->life.owner_pidfd >= 0)
            loop_del(d->loop, c->life.owner_pidfd);
        loop_del(d->loop, c->endpoint.listen_fd);
        goto fail_files;
    }
    int stored = d->store && !restore ? store_put_container(d->store, c) : 0;
    if (stored != 0) {
        snprintf(err, errlen, "container not created: the state could not be saved (%s)",
                 store_error(d->store));
        failed = stored == -ENOSPC ? -ENOSPC : -EIO;
        if (c->life.owner_pidfd >= 0)
            loop_del(d->loop, c->life.owner_pidfd);
        if (c->life.start_timer_fd >= 0)
            loop_del(d->loop, c->life.start_timer_fd);
        loop_del(d->loop, c->endpoint.listen_fd);
        goto fail_files;
    }

    struct container **tail = &d->containers;
    while (*tail)
        tail = &(*tail)->next;
    *tail = c;
    char b1[CG_SIZE_BUFLEN], b2[CG_SIZE_BUFLEN], share[48] = "";
    if (ci.compute_pct)
        snprintf(share, sizeof share, ", compute %u%% %s", ci.compute_pct,
                 cg_compute_mode_name(ci.compute_mode));
    log_info("container %s%s%s: created on device %u%s, limit %s, assigned %s%s", c->ident.id,
             c->ident.name[0] ? " name=" : "", c->ident.name, c->device,
             ci.exclusive ? " (exclusive)" : "", cg_format_size(ci.limit, b1, sizeof b1),
             cg_format_size(ci.assigned, b2, sizeof b2), share);
    adaptive_touch(d); /* a new running job: the adaptive fair share looks again */
    *out = c;
    return 0;

fail_files:
    container_destroy_files(c);
fail_core:
    cg_container_remove(d->core, cid, now);
    free(c);
    return failed;
}

int container_remove(struct daemon *d, struct container *c, const char *why)
{
    /* A gang goes member by member, the leader last (its directory holds their sockets). */
    while (c->gang.nmembers > 1)
        container_remove(d, c->gang.members[--c->gang.nmembers], why);
    /* Its end is a run of its profile: recorded before its processes and record go. */
    profile_record(d, c);
    /* Pending requests are answered CANCELLED by the sink while the core removes. */
    while (c->procs)
        proc_drop(d, c->procs, why);
    cg_status st = cg_container_remove(d->core, c->cid, loop_now_ns());
    if (st != CG_OK)
        log_warn("container %s: core remove: %s", c->ident.id, cg_status_str(st));
    pending_drop_all(c);
    loop_cancel(d->loop, &c->decide.redecide);
    loop_del(d->loop, c->endpoint.listen_fd);
    if (c->life.owner_pidfd >= 0)
        loop_del(d->loop, c->life.owner_pidfd);
    if (c->life.start_timer_fd >= 0)
        loop_del(d->loop, c->life.start_timer_fd);
    /* Callers that may refuse (the API) delete the row before calling; a removal that cannot
     * be refused (the owner exited) keeps going when the row cannot be deleted: the store
     * retries before its next write, and a restart drops the row anyway, its owner being dead
     * (restore checks the owner's pid and start time). */
    if (d->store && store_delete_container_eventually(d->store, c->ident.id) != 0)
        log_error("container %s: removed (%s), but state.db still lists it: %s; its row is "
                  "deleted at the next write that succeeds",
                  c->ident.id, why, store_error(d->store));
    for (struct container **pp = &d->containers; *pp; pp = &(*pp)->next) {
        if (*pp == c) {
            *pp = c->next;
            break;
        }
    }
    log_info("container %s: removed (%s)", c->ident.id, why);
    adaptive_touch(d); /* one job fewer, and maybe one run more in its profile */
    if (!c->gang.leader)
        notice_container_removed(d, c);
    container_destroy_files(c);
    free(c->gang.members);
    free(c);
    /* Others on the device may have been resumed by the removal. */
    decide_flush(d);
    return 0;
}

/* The refusal the core would make of ch, checked before anything is stored: CG_OK when none. */
static cg_status precheck(struct daemon *d, struct container *c, const struct container_change *ch,
                          cg_container_info *ci, char *err, size_t errlen)
{
    cg_device_info di;
    char b1[CG_SIZE_BUFLEN], b2[CG_SIZE_BUFLEN];
    cg_status st = cg_container_get(d->core, c->cid, loop_now_ns(), ci);
    if (st == CG_OK)
        st = cg_device_get(d->core, c->device, &di);
    if (st != CG_OK) {
        snprintf(err, errlen, "cannot change container %s: %s", c->ident.id, cg_status_str(st));
        return st;
    }
    if (ch->has_limit && ch->limit > di.capacity) {
        snprintf(err, errlen, "limit %s exceeds the device capacity",
                 cg_format_size(ch->limit, b1, sizeof b1));
        return CG_ERR_TOO_LARGE;
    }
    if (ch->has_limit && ch->limit < ci->used + ci->swapped) {
        snprintf(err, errlen, "limit %s is below the container's use %s; free memory first",
                 cg_format_size(ch->limit, b1, sizeof b1),
                 cg_format_size(container_used_bytes(c), b2, sizeof b2));
        return CG_ERR_BELOW_USE;
    }
    if (ch->has_compute) {
        st = cg_container_compute_check(d->core, c->cid, ch->compute_pct, ch->compute_mode);
        unsigned own = ci->compute_mode == CG_COMPUTE_HARD ? ci->compute_pct : 0;
        if (st == CG_ERR_NO_COMPUTE)
            snprintf(err, errlen, "hard compute share %u%% does not fit on device %u: the other "
                                  "containers' hard shares there sum to %u%% of 100%%",
                     ch->compute_pct, c->device, di.compute_hard_pct - own);
        else if (st != CG_OK)
            snprintf(err, errlen, "cannot change the compute share: %s", cg_status_str(st));
    }
    return st;
}

int container_update(struct daemon *d, struct container *c, const struct container_change *ch,
                     bool *pending, char *err, size_t errlen)
{
    decide_freeze(d, c);
    /* The change is stored before the core applies it: a lowering hands assignment to others at
     * once and could not be taken back if the store then failed. So the refusals the core would
     * make are checked first, and nothing is stored for them. */
    cg_container_info ci;
    char b1[CG_SIZE_BUFLEN];
    cg_status st = precheck(d, c, ch, &ci, err, errlen);
    bool prechecked = st != CG_OK; /* err already says why */
    bool stored = false;
    if (st == CG_OK && d->store) {
        /* The limit asked for: a raise that must wait is applied later without another write,
         * so a restart restores what the caller was promised. */
        struct stored_container row;
        store_row_of(c, &row);
        if (ch->has_limit)
            row.limit = ch->limit;
        if (ch->has_compute) {
            row.compute_pct = ch->compute_pct;
            row.compute_mode = ch->compute_pct ? ch->compute_mode : CG_COMPUTE_ELASTIC;
        }
        if (ch->has_priority)
            row.priority = ch->priority;
        int rc = store_put_row(d->store, &row);
        if (rc != 0) {
            snprintf(err, errlen, "container %s not changed: the state could not be saved (%s)",
                     c->ident.id, store_error(d->store));
            c->decide.dirty = true;
            decide_flush(d);
            return rc;
        }
        stored = true;
    }
    if (pending)
        *pending = false;
    if (st == CG_OK && ch->has_limit)
        st = cg_container_set_limit(d->core, c->cid, ch->limit, loop_now_ns(), pending);
    if (st == CG_OK && ch->has_compute)
        st = cg_container_set_compute(d->core, c->cid, ch->compute_pct, ch->compute_mode,
                                      loop_now_ns());
    if (st == CG_OK && ch->has_priority)
        st = cg_container_set_priority(d->core, c->cid, ch->priority, loop_now_ns());
    if (st != CG_OK) {
        if (!prechecked)
            snprintf(err, errlen, "cannot change container %s: %s", c->ident.id, cg_status_str(st));
        if (stored) {
            /* Only reached when the checks above missed a refusal: put the stored row back. A
             * limit the core took before the share was refused stays, and so does its row. */
            if (store_put_container(d->store, c) != 0)
                log_error("container %s: state.db keeps a change the core refused (limit %s): %s",
                          c->ident.id, cg_format_size(ch->limit, b1, sizeof b1),
                          store_error(d->store));
        }
        c->decide.dirty = true;
        decide_flush(d);
        return st == CG_ERR_NO_COMPUTE || st == CG_ERR_NOT_FREE ? -EBUSY : -EINVAL;
    }
    if (cg_container_get(d->core, c->cid, loop_now_ns(), &ci) == CG_OK)
        c->limit = ci.limit;
    c->decide.dirty = true;
    decide_flush(d);
    return 0;
}

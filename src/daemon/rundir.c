/* rundir.c — the runtime directory, where the root-owned daemon and its tenants meet.
 *
 * Everything the daemon creates for a container (its directory, socket and private account
 * record) lives below this directory, so nobody else may be able to change any component of
 * its path: otherwise a rename or a symlink planted between two of the daemon's system calls
 * turns a chown or an open into one on a file the attacker chose. The path is resolved once,
 * each component is checked (owned by root or the daemon's user; not writable by others unless
 * sticky, as /tmp is), and the directory is then held open: later work goes through that
 * descriptor and its subdirectories' descriptors with *at() calls and O_NOFOLLOW.
 *
 * Layout (the modes are enforced at every start, whatever an earlier version left):
 *     DIR/              0755  control.sock (0660), convgpud.pid, state.db (0600), emu/
 *     DIR/containers/   0711  one directory per container, 0711, owned by the daemon: only its
 *                             socket (0600, the container's user) is in it
 *     DIR/records/      0700  the daemon's own account of each container (record.h)
 */
#include "rundir.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <dirent.h>
#include <unistd.h>

/* May `st` (an ancestor of the runtime directory) be trusted not to change under us? */
static bool safe_ancestor(const struct stat *st, uid_t me)
{
    if (st->st_uid != 0 && st->st_uid != me)
        return false;
    return (st->st_mode & (S_IWGRP | S_IWOTH)) == 0 || (st->st_mode & S_ISVTX);
}

static int refuse(char *err, size_t errlen, const char *path, const struct stat *st, uid_t me,
                  const char *what)
{
    char owners[48] = "root"; /* a daemon run by root trusts root alone: not "uid 0 or root" */
    if (me != 0)
        snprintf(owners, sizeof owners, "uid %u or root", (unsigned)me);
    snprintf(err, errlen,
             "unsafe runtime directory: %s is %s (owner uid %u, mode %04o; it must belong to "
             "%s and not be writable by others%s); another user could replace the daemon's "
             "files there. Use a directory such as /run/convgpu, or fix its owner and mode",
             path, what, (unsigned)st->st_uid, (unsigned)(st->st_mode & 07777), owners,
             strcmp(what, "an ancestor") == 0 ? " unless sticky" : "");
    return -1;
}

/* Opens (creating with 0755 where missing) every component of the absolute path `path`, checking
 * each ancestor; returns the last component's descriptor (O_PATH). */
static int walk(const char *path, uid_t me, char *err, size_t errlen)
{
    int fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "cannot open /: %s", strerror(errno));
        return -1;
    }
    char done[PATH_MAX] = "/";
    const char *p = path;
    for (;;) {
        while (*p == '/')
            p++;
        if (!*p)
            break;
        const char *end = strchr(p, '/');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        char comp[NAME_MAX + 1];
        if (len > NAME_MAX) {
            snprintf(err, errlen, "runtime directory: a path component is too long");
            close(fd);
            return -1;
        }
        memcpy(comp, p, len);
        comp[len] = '\0';
        p += len;
        struct stat st;
        if (fstat(fd, &st) != 0) {
            snprintf(err, errlen, "cannot inspect %s: %s", done, strerror(errno));
            close(fd);
            return -1;
        }
        if (!safe_ancestor(&st, me)) {
            close(fd);
            return refuse(err, errlen, done, &st, me, "an ancestor");
        }
        if (mkdirat(fd, comp, 0755) != 0 && errno != EEXIST) {
            snprintf(err, errlen, "cannot create %s%s%s: %s", done, strcmp(done, "/") ? "/" : "",
                     comp, strerror(errno));
            close(fd);
            return -1;
        }
        int nfd = openat(fd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        size_t dl = strlen(done);
        snprintf(done + dl, sizeof done - dl, "%s%s", dl > 1 ? "/" : "", comp);
        if (nfd < 0) {
            snprintf(err, errlen, "cannot open %s: %s%s", done, strerror(errno),
                     errno == ELOOP || errno == ENOTDIR ? " (a symbolic link or not a directory)"
                                                        : "");
            close(fd);
            return -1;
        }
        close(fd);
        fd = nfd;
    }
    return fd;
}

/* Makes (or checks) a subdirectory of the runtime directory with exactly `mode`, owned by us. */
static int subdir(int parent, const char *name, mode_t mode, uid_t me, char *err, size_t errlen)
{
    if (mkdirat(parent, name, mode) != 0 && errno != EEXIST) {
        snprintf(err, errlen, "cannot create %s: %s", name, strerror(errno));
        return -1;
    }
    int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        snprintf(err, errlen, "cannot open %s: %s", name, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    if (st.st_uid != me) {
        snprintf(err, errlen, "%s belongs to uid %u, not to this daemon (uid %u): remove it",
                 name, (unsigned)st.st_uid, (unsigned)me);
        close(fd);
        return -1;
    }
    if ((st.st_mode & 07777) != mode && fchmod(fd, mode) != 0) {
        snprintf(err, errlen, "cannot set the mode of %s: %s", name, strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

int rundir_open(const char *path, struct rundir *out, char *err, size_t errlen)
{
    uid_t me = geteuid();
    if (path[0] != '/') {
        snprintf(err, errlen, "the runtime directory must be an absolute path");
        return -1;
    }
    /* Resolve once (e.g. /var/run -> /run); every component of the result is then checked and
     * opened without following links. A path that does not exist yet is created as given. */
    char real[PATH_MAX];
    if (!realpath(path, real))
        snprintf(real, sizeof real, "%s", path);
    int fd = walk(real, me, err, errlen);
    if (fd < 0)
        return -1;
    struct stat st;
    if (fstat(fd, &st) != 0) {
        snprintf(err, errlen, "cannot inspect %s: %s", real, strerror(errno));
        close(fd);
        return -1;
    }
    if (st.st_uid != me || (st.st_mode & (S_IWGRP | S_IWOTH))) {
        close(fd);
        return refuse(err, errlen, real, &st, me, "not the daemon's own");
    }
    int dfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    close(fd);
    if (dfd < 0) {
        snprintf(err, errlen, "cannot open %s: %s", real, strerror(errno));
        return -1;
    }
    *out = (struct rundir){.fd = dfd, .containers_fd = -1, .records_fd = -1};
    snprintf(out->path, sizeof out->path, "%s", real);
    out->containers_fd = subdir(dfd, "containers", 0711, me, err, errlen);
    if (out->containers_fd >= 0)
        out->records_fd = subdir(dfd, "records", 0700, me, err, errlen);
    if (out->records_fd < 0) {
        rundir_close(out);
        return -1;
    }
    return 0;
}

void rundir_close(struct rundir *r)
{
    if (r->records_fd >= 0)
        close(r->records_fd);
    if (r->containers_fd >= 0)
        close(r->containers_fd);
    if (r->fd >= 0)
        close(r->fd);
    r->fd = r->containers_fd = r->records_fd = -1;
}

/* Depth-bounded: a directory an older version let a tenant own may hold anything, and no entry
 * in it is followed (O_NOFOLLOW; symbolic links are unlinked, never resolved). */
static int remove_tree(int parent, const char *name, int depth)
{
    if (unlinkat(parent, name, 0) == 0 || errno == ENOENT)
        return 0;
    if (errno != EISDIR && errno != EPERM)
        return -1;
    if (depth > 8)
        return -1;
    int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return -1;
    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        return -1;
    }
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            remove_tree(dirfd(d), e->d_name, depth + 1);
    closedir(d);
    return unlinkat(parent, name, AT_REMOVEDIR);
}

int rundir_remove(int parent, const char *name)
{
    return remove_tree(parent, name, 0);
}

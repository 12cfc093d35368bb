/* nsmount.c — bind mounts into a created container's mount namespace (see nsmount.h). The work
 * is done by a child: setns(CLONE_NEWNS) needs a single-threaded caller and would leave the hook
 * itself in the container's namespace. Every path inside the root filesystem is resolved with
 * openat2(RESOLVE_IN_ROOT) from a descriptor of that root and mounted through /proc/self/fd, so
 * what is mounted over is exactly what was checked, whatever the image's symlinks say. */
#include "nsmount.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static int in_root(int rootfd, const char *rel, int flags)
{
    struct open_how how = {.flags = (unsigned long long)(flags | O_PATH | O_CLOEXEC),
                           .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS};
    return (int)syscall(SYS_openat2, rootfd, *rel ? rel : ".", &how, sizeof how);
}

__attribute__((format(printf, 3, 4))) static int say(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

/* Opens rel (relative to the root, no leading '/') as a mount point of the wanted type,
 * creating it and its missing parents. Returns an O_PATH descriptor, or -1 with err. */
static int mount_point(int rootfd, const char *rel, bool dir, char *err, size_t errlen)
{
    char path[PATH_MAX];
    if (snprintf(path, sizeof path, "%s", rel) >= (int)sizeof path)
        return say(err, errlen, "/%s: path too long", rel);
    /* Parents first: each prefix resolved from the root, created when missing. */
    for (char *p = strchr(path, '/'); p; p = strchr(p + 1, '/')) {
        *p = '\0';
        int fd = in_root(rootfd, path, O_DIRECTORY);
        if (fd < 0 && errno == ENOENT) {
            char *slash = strrchr(path, '/');
            const char *name = slash ? slash + 1 : path;
            if (slash)
                *slash = '\0';
            int parent = in_root(rootfd, slash ? path : "", O_DIRECTORY);
            if (slash)
                *slash = '/';
            if (parent < 0 || (mkdirat(parent, name, 0755) != 0 && errno != EEXIST)) {
                int e = errno;
                if (parent >= 0)
                    close(parent);
                return say(err, errlen, "cannot create /%s in the container: %s", path,
                           strerror(e));
            }
            close(parent);
            fd = in_root(rootfd, path, O_DIRECTORY);
        }
        if (fd < 0)
            return say(err, errlen, "/%s in the container: %s", path, strerror(errno));
        close(fd);
        *p = '/';
    }
    int fd = in_root(rootfd, path, dir ? O_DIRECTORY : 0);
    if (fd < 0 && errno == ENOENT) {
        char *slash = strrchr(path, '/');
        const char *name = slash ? slash + 1 : path;
        if (slash)
            *slash = '\0';
        int parent = in_root(rootfd, slash ? path : "", O_DIRECTORY);
        if (slash)
            *slash = '/';
        int made = -1;
        if (parent >= 0) {
            if (dir) {
                made = mkdirat(parent, name, 0755) == 0 || errno == EEXIST ? 0 : -1;
            } else {
                int f = openat(parent, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                               0644);
                made = f >= 0 || errno == EEXIST ? 0 : -1;
                if (f >= 0)
                    close(f);
            }
            close(parent);
        }
        if (made != 0)
            return say(err, errlen, "cannot create the mount point /%s in the container: %s",
                       path, strerror(errno));
        fd = in_root(rootfd, path, dir ? O_DIRECTORY : 0);
    }
    struct stat st;
    if (fd < 0)
        return say(err, errlen, "/%s in the container: %s", path, strerror(errno));
    if (fstat(fd, &st) != 0 || (dir ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode))) {
        close(fd);
        return say(err, errlen, "/%s in the container is not a %s", path,
                   dir ? "directory" : "regular file");
    }
    return fd;
}

static int bind_one(int rootfd, const struct oci_nsmount *m, char *err, size_t errlen)
{
    if (!m->source || m->source[0] != '/' || !m->dest || m->dest[0] != '/')
        return say(err, errlen, "mount %s -> %s: paths must be absolute",
                   m->source ? m->source : "?", m->dest ? m->dest : "?");
    int src = open(m->source, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (src < 0 || fstat(src, &st) != 0 ||
        (m->dir ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode))) {
        int e = errno;
        if (src >= 0)
            close(src);
        return say(err, errlen, "%s: %s", m->source,
                   src < 0 ? strerror(e) : m->dir ? "not a directory" : "not a regular file");
    }
    const char *rel = m->dest;
    while (*rel == '/')
        rel++;
    int dst = mount_point(rootfd, rel, m->dir, err, errlen);
    if (dst < 0) {
        close(src);
        return -1;
    }
    char s[64], d[64];
    snprintf(s, sizeof s, "/proc/self/fd/%d", src);
    snprintf(d, sizeof d, "/proc/self/fd/%d", dst);
    int rc = mount(s, d, NULL, MS_BIND, NULL);
    int e = errno;
    close(src);
    close(dst);
    if (rc != 0)
        return say(err, errlen, "bind %s on %s: %s", m->source, m->dest, strerror(e));
    /* The flags of a bind mount are set by a remount of the new mount itself, found again. */
    int top = in_root(rootfd, rel, m->dir ? O_DIRECTORY : 0);
    if (top < 0)
        return say(err, errlen, "%s after mounting: %s", m->dest, strerror(errno));
    snprintf(d, sizeof d, "/proc/self/fd/%d", top);
    unsigned long flags =
        MS_BIND | MS_REMOUNT | MS_NOSUID | MS_NODEV | (m->writable ? 0 : MS_RDONLY);
    rc = mount(NULL, d, NULL, flags, NULL);
    e = errno;
    close(top);
    if (rc != 0)
        return say(err, errlen, "remount %s %s: %s", m->dest, m->writable ? "rw" : "ro",
                   strerror(e));
    return 0;
}

/* The child: enters the namespace, mounts, writes its error (if any) to fd `out`. */
static int child_main(int nsfd, const char *rootfs, const struct oci_nsmount *m, size_t n, int out)
{
    char err[1024] = "";
    int rc = -1;
    int rootfd = -1;
    if (setns(nsfd, CLONE_NEWNS) != 0)
        say(err, sizeof err, "cannot enter the container's mount namespace: %s", strerror(errno));
    else if (chdir("/") != 0 ||
             (rootfd = open(rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
        say(err, sizeof err, "the container's root %s: %s", rootfs, strerror(errno));
    else {
        rc = 0;
        for (size_t i = 0; i < n && rc == 0; i++)
            rc = bind_one(rootfd, &m[i], err, sizeof err);
    }
    if (rc != 0) {
        size_t len = strlen(err);
        if (write(out, err, len) != (ssize_t)len)
            rc = -1;
    }
    return rc == 0 ? 0 : 1;
}

int oci_nsmount(pid_t pid, const char *rootfs, const struct oci_nsmount *m, size_t n, char *err,
                size_t errlen)
{
    if (pid <= 0 || !rootfs || rootfs[0] != '/')
        return say(err, errlen, "no container (pid %d, root %s)", (int)pid, rootfs ? rootfs : "?");
    char nspath[64];
    snprintf(nspath, sizeof nspath, "/proc/%d/ns/mnt", (int)pid);
    int nsfd = open(nspath, O_RDONLY | O_CLOEXEC);
    if (nsfd < 0)
        return say(err, errlen, "%s: %s", nspath, strerror(errno));
    int pipefd[2];
    if (pipe2(pipefd, O_CLOEXEC) != 0) {
        close(nsfd);
        return say(err, errlen, "pipe: %s", strerror(errno));
    }
    fflush(NULL);
    pid_t c = fork();
    if (c == 0) {
        close(pipefd[0]);
        _exit(child_main(nsfd, rootfs, m, n, pipefd[1]));
    }
    close(nsfd);
    close(pipefd[1]);
    if (c < 0) {
        close(pipefd[0]);
        return say(err, errlen, "fork: %s", strerror(errno));
    }
    char msg[1024];
    ssize_t got, total = 0;
    while (total < (ssize_t)sizeof msg - 1 &&
           ((got = read(pipefd[0], msg + total, sizeof msg - 1 - (size_t)total)) > 0 ||
            (got < 0 && errno == EINTR)))
        total += got > 0 ? got : 0;
    msg[total] = '\0';
    close(pipefd[0]);
    int status = 0;
    while (waitpid(c, &status, 0) < 0 && errno == EINTR)
        ;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return 0;
    return say(err, errlen, "%s", total ? msg : "the mounting process failed");
}

/* plugin_dir.c — the plugin's own directory (plugin_dir.h). */
#include "plugin_dir.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int plugin_dir_open(const char *runtime_dir, int create, char *err, size_t errlen)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/slurm", runtime_dir);
    if (create && mkdir(path, 0700) != 0 && errno != EEXIST) {
        snprintf(err, errlen, "cannot create %s: %s", path, strerror(errno));
        return -1;
    }
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    if (st.st_uid != geteuid() || (st.st_mode & 077) != 0) {
        snprintf(err, errlen, "%s is not the plugin's own (owner %u, mode %03o): not used", path,
                 (unsigned)st.st_uid, (unsigned)(st.st_mode & 0777));
        close(fd);
        return -1;
    }
    return fd;
}

int plugin_dir_write(int dirfd, const char *name, const void *data, size_t len, int mode,
                     char *err, size_t errlen)
{
    char tmp[128];
    snprintf(tmp, sizeof tmp, ".%s.%ld", name, (long)getpid());
    int fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
    if (fd < 0) {
        snprintf(err, errlen, "cannot create %s: %s", tmp, strerror(errno));
        return -1;
    }
    ssize_t n = write(fd, data, len);
    /* fchmod: the umask of slurmstepd must not narrow a file tasks have to read. */
    if (n != (ssize_t)len || fchmod(fd, (mode_t)mode) != 0 || close(fd) != 0) {
        snprintf(err, errlen, "cannot write %s", tmp);
        unlinkat(dirfd, tmp, 0);
        return -1;
    }
    if (renameat(dirfd, tmp, dirfd, name) != 0) {
        snprintf(err, errlen, "cannot rename %s: %s", tmp, strerror(errno));
        unlinkat(dirfd, tmp, 0);
        return -1;
    }
    return 0;
}

/* task_mounts.c — the task's own view of /etc/ld.so.preload and /run/convgpu (task_mounts.h). */
#include "task_mounts.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "plugin_dir.h"

#define HOST_PRELOAD "/etc/ld.so.preload"
#define SOCKET_DIR "/run/convgpu"
#define MAX_HOST_PRELOAD (16 * 1024)

int task_preload_write(const char *runtime_dir, const char *lib, char *path, size_t pathlen,
                       char *err, size_t errlen)
{
    /* The interposer first, then whatever the node preloads already, which the bind hides. */
    char buf[MAX_HOST_PRELOAD + 4096];
    int n = snprintf(buf, sizeof buf, "%s\n", lib);
    if (n < 0 || (size_t)n >= 4096) {
        snprintf(err, errlen, "the interposer's path is too long");
        return -1;
    }
    int hfd = open(HOST_PRELOAD, O_RDONLY | O_CLOEXEC);
    if (hfd >= 0) {
        ssize_t r = read(hfd, buf + n, MAX_HOST_PRELOAD);
        close(hfd);
        if (r > 0)
            n += (int)r;
    }
    int dfd = plugin_dir_open(runtime_dir, 1, err, errlen);
    if (dfd < 0)
        return -1;
    /* 0644: the dynamic loader reads it as the task's user. */
    int rc = plugin_dir_write(dfd, "ld.so.preload", buf, (size_t)n, 0644, err, errlen);
    close(dfd);
    if (rc == 0)
        snprintf(path, pathlen, "%s/slurm/ld.so.preload", runtime_dir);
    return rc;
}

int task_mounts_possible(char *err, size_t errlen)
{
    struct stat st;
    if (stat(HOST_PRELOAD, &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "%s does not exist (create it empty to fence tasks that clear "
                              "their environment)", HOST_PRELOAD);
        return 0;
    }
    if (stat(SOCKET_DIR, &st) != 0 || !S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "%s is not a directory (create it to fence tasks that clear "
                              "their environment)", SOCKET_DIR);
        return 0;
    }
    return 1;
}

static int bind_ro(const char *src, const char *dst, char *err, size_t errlen)
{
    if (mount(src, dst, NULL, MS_BIND, NULL) != 0 ||
        mount(NULL, dst, NULL, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL) !=
            0) {
        snprintf(err, errlen, "cannot bind %s on %s: %s", src, dst, strerror(errno));
        return -1;
    }
    return 0;
}

int task_enter_mounts(const char *preload, const char *container_dir, char *err, size_t errlen)
{
    if (unshare(CLONE_NEWNS) != 0) {
        snprintf(err, errlen, "cannot create the task's mount namespace: %s", strerror(errno));
        return -1;
    }
    /* Slave: the node's later mounts still reach the task, none of the task's leaves it. */
    if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) != 0) {
        snprintf(err, errlen, "cannot make the task's mounts private: %s", strerror(errno));
        return -1;
    }
    if (bind_ro(preload, HOST_PRELOAD, err, errlen) != 0)
        return -1;
    return bind_ro(container_dir, SOCKET_DIR, err, errlen);
}

/* batch_env.c — the batch step's environment kept for the job's other steps (batch_env.h).
 * Everything goes through a descriptor of `<runtime-dir>/slurm` opened without following
 * links and checked to be root's (or ours) and closed to others. */
#include "batch_env.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_ENV_FILE (64 * 1024)

/* The directory, created when create is set; -1 when missing or not safe. */
static int open_dir(const char *runtime_dir, int create, char *err, size_t errlen)
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

int batch_env_save(const char *runtime_dir, uint32_t job, json_t *env, char *err, size_t errlen)
{
    int dfd = open_dir(runtime_dir, 1, err, errlen);
    if (dfd < 0)
        return -1;
    char name[32], tmp[48];
    snprintf(name, sizeof name, "%u.env", job);
    snprintf(tmp, sizeof tmp, "%u.env.%ld", job, (long)getpid());
    int fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    int rc = -1;
    if (fd < 0) {
        snprintf(err, errlen, "cannot create %s: %s", tmp, strerror(errno));
    } else if (json_dumpfd(env, fd, JSON_COMPACT) != 0 || close(fd) != 0) {
        snprintf(err, errlen, "cannot write %s", tmp);
        unlinkat(dfd, tmp, 0);
    } else if (renameat(dfd, tmp, dfd, name) != 0) {
        snprintf(err, errlen, "cannot rename %s: %s", tmp, strerror(errno));
        unlinkat(dfd, tmp, 0);
    } else {
        rc = 0;
    }
    close(dfd);
    return rc;
}

json_t *batch_env_load(const char *runtime_dir, uint32_t job)
{
    char err[256], name[32];
    int dfd = open_dir(runtime_dir, 0, err, sizeof err);
    if (dfd < 0)
        return NULL;
    snprintf(name, sizeof name, "%u.env", job);
    int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    close(dfd);
    if (fd < 0)
        return NULL;
    struct stat st;
    json_t *env = NULL;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
        st.st_size > 0 && st.st_size <= MAX_ENV_FILE)
        env = json_loadfd(fd, JSON_REJECT_DUPLICATES, NULL);
    close(fd);
    if (!json_is_object(env)) {
        json_decref(env);
        return NULL;
    }
    const char *k;
    json_t *v;
    json_object_foreach(env, k, v) {
        if (!json_is_string(v)) {
            json_decref(env);
            return NULL;
        }
    }
    return env;
}

void batch_env_remove(const char *runtime_dir, uint32_t job)
{
    char err[256], name[32];
    int dfd = open_dir(runtime_dir, 0, err, sizeof err);
    if (dfd < 0)
        return;
    snprintf(name, sizeof name, "%u.env", job);
    unlinkat(dfd, name, 0);
    close(dfd);
}

/* batch_env.c — the batch step's environment kept for the job's other steps (batch_env.h).
 * Everything goes through the plugin's own directory (plugin_dir.h). */
#include "batch_env.h"

#include "plugin_dir.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_ENV_FILE (64 * 1024)

int batch_env_save(const char *runtime_dir, uint32_t job, json_t *env, char *err, size_t errlen)
{
    int dfd = plugin_dir_open(runtime_dir, 1, err, errlen);
    if (dfd < 0)
        return -1;
    char name[32];
    snprintf(name, sizeof name, "%u.env", job);
    char *text = json_dumps(env, JSON_COMPACT);
    int rc = text ? plugin_dir_write(dfd, name, text, strlen(text), 0600, err, errlen) : -1;
    if (!text)
        snprintf(err, errlen, "cannot encode the environment of job %u", job);
    free(text);
    close(dfd);
    return rc;
}

json_t *batch_env_load(const char *runtime_dir, uint32_t job)
{
    char err[256], name[32];
    int dfd = plugin_dir_open(runtime_dir, 0, err, sizeof err);
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
    int dfd = plugin_dir_open(runtime_dir, 0, err, sizeof err);
    if (dfd < 0)
        return;
    snprintf(name, sizeof name, "%u.env", job);
    unlinkat(dfd, name, 0);
    close(dfd);
}

/* cdi_spec.c — CDI edits and the atomic spec write (cdi_spec.h). */
#include "cdi_spec.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int cdi_add_env(json_t *list, const char *name, const char *value)
{
    size_t n = strlen(name) + strlen(value) + 2;
    char *s = malloc(n);
    if (!s)
        return -1;
    snprintf(s, n, "%s=%s", name, value);
    int rc = json_array_append_new(list, json_string(s));
    free(s);
    return rc;
}

int cdi_add_mount(json_t *list, const char *host, const char *in, bool dir, bool writable)
{
    json_t *opts = json_pack("[s,s,s,s]", dir ? "rbind" : "bind", writable ? "rw" : "ro",
                             "nosuid", "nodev");
    return json_array_append_new(list, json_pack("{s:s,s:s,s:o}", "hostPath", host,
                                                 "containerPath", in, "options", opts));
}

/* mkdir -p of path's directory; a failure shows as mkstemp's error after it. */
static void make_parents(const char *path)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    char *last = strrchr(dir, '/');
    if (!last || last == dir)
        return;
    *last = '\0';
    for (char *p = dir + 1;; p++) {
        if (*p != '/' && *p != '\0')
            continue;
        char c = *p;
        *p = '\0';
        if (mkdir(dir, 0755) != 0 && errno != EEXIST)
            return;
        *p = c;
        if (!c)
            return;
    }
}

int cdi_write_atomically(const char *path, const char *text, unsigned flags, char *err,
                         size_t errlen)
{
    char tmp[PATH_MAX];
    if (snprintf(tmp, sizeof tmp, "%s.XXXXXX", path) >= (int)sizeof tmp) {
        snprintf(err, errlen, "path too long: %s", path);
        return -1;
    }
    if (flags & CDI_WRITE_MKDIRS)
        make_parents(path);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        snprintf(err, errlen, "cannot write in the directory of %s: %s", path, strerror(errno));
        return -1;
    }
    size_t len = strlen(text);
    bool ok = fchmod(fd, 0644) == 0 && write(fd, text, len) == (ssize_t)len &&
              (!(flags & CDI_WRITE_FSYNC) || fsync(fd) == 0);
    ok = close(fd) == 0 && ok;
    if (!ok || rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(e));
        return -1;
    }
    return 0;
}

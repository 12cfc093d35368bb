/* bundle.c — reading and atomically replacing a bundle's config.json, and reading the image's
 * ld.so.preload safely (openat2 inside the root, no symlinks, O_PATH and a type check before
 * any real open, a bounded read). */
#include "bundle.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MAX_CONFIG (16u << 20)

static char *read_fd(int fd, size_t max, size_t *len)
{
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap + 1);
    while (buf) {
        if (n == cap) {
            if (cap >= max) {
                free(buf);
                errno = EFBIG;
                return NULL;
            }
            cap *= 2;
            char *nb = realloc(buf, cap + 1);
            if (!nb) {
                free(buf);
                return NULL;
            }
            buf = nb;
        }
        ssize_t r = read(fd, buf + n, cap - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            free(buf);
            return NULL;
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    if (buf) {
        buf[n] = '\0';
        *len = n;
    }
    return buf;
}

json_t *oci_bundle_load(const char *bundle, bool *pretty, char *err, size_t errlen)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/config.json", bundle);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "cannot open %s: %s (is --bundle right?)", path, strerror(errno));
        return NULL;
    }
    size_t len = 0;
    char *text = read_fd(fd, MAX_CONFIG, &len);
    int saved = errno;
    close(fd);
    if (!text) {
        snprintf(err, errlen, "cannot read %s: %s", path, strerror(saved));
        return NULL;
    }
    json_error_t je;
    json_t *config = json_loadb(text, len, 0, &je);
    *pretty = memchr(text, '\n', len) && len && memchr(text, '\n', len) != text + len - 1;
    free(text);
    if (!config) {
        snprintf(err, errlen, "%s is not valid JSON: %s at line %d, column %d", path, je.text,
                 je.line, je.column);
        return NULL;
    }
    if (!json_is_object(config)) {
        snprintf(err, errlen, "%s is not a JSON object", path);
        json_decref(config);
        return NULL;
    }
    return config;
}

static int write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Writes text to path via path.convgpu-tmp + rename, with the given mode: a reader (the runtime)
 * sees the old file or the new one, never a torn one, even if the shim dies mid-write. Not
 * fsynced: a bundle lives only as long as its container, which a host crash ends anyway (the
 * engine writes a new bundle for the next start), and a flush would cost every `docker run`. */
static int replace_file(const char *path, const char *text, mode_t mode, char *err, size_t errlen)
{
    char tmp[PATH_MAX];
    if (snprintf(tmp, sizeof tmp, "%s.convgpu-tmp", path) >= (int)sizeof tmp) {
        snprintf(err, errlen, "path too long: %s", path);
        return -1;
    }
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
    if (fd < 0) {
        snprintf(err, errlen, "cannot create %s: %s", tmp, strerror(errno));
        return -1;
    }
    if (fchmod(fd, mode) != 0 || write_all(fd, text, strlen(text)) != 0) {
        snprintf(err, errlen, "cannot write %s: %s", tmp, strerror(errno));
        close(fd);
        unlink(tmp);
        return -1;
    }
    close(fd);
    if (rename(tmp, path) != 0) {
        snprintf(err, errlen, "cannot replace %s: %s", path, strerror(errno));
        unlink(tmp);
        return -1;
    }
    return 0;
}

int oci_bundle_save(const char *bundle, json_t *config, bool pretty, char *err, size_t errlen)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/config.json", bundle);
    struct stat st;
    mode_t mode = stat(path, &st) == 0 ? (st.st_mode & 07777) : 0644;
    char *text = json_dumps(config, (pretty ? JSON_INDENT(2) : JSON_COMPACT) |
                                        JSON_REAL_PRECISION(17));
    if (!text) {
        snprintf(err, errlen, "cannot serialise the new config.json (out of memory?)");
        return -1;
    }
    size_t n = strlen(text);
    char *nl = realloc(text, n + 2);
    if (!nl) {
        free(text);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    text = nl;
    memcpy(text + n, "\n", 2);
    int rc = replace_file(path, text, mode, err, errlen);
    free(text);
    return rc;
}

static const char *file_kind(mode_t m)
{
    return S_ISLNK(m) ? "a symlink" : S_ISFIFO(m) ? "a FIFO" : S_ISDIR(m) ? "a directory"
           : S_ISCHR(m) ? "a character device" : S_ISBLK(m) ? "a block device"
           : S_ISSOCK(m) ? "a socket" : "not a regular file";
}

int oci_bundle_image_preload(const char *bundle, json_t *config, char **text, char *err,
                             size_t errlen)
{
    *text = NULL;
    const char *root = json_string_value(json_object_get(json_object_get(config, "root"), "path"));
    char rootpath[PATH_MAX];
    if (!root)
        return 0; /* no root: nothing of an image to read; the runtime says what is missing */
    if (snprintf(rootpath, sizeof rootpath, "%s%s%s", root[0] == '/' ? "" : bundle,
                          root[0] == '/' ? "" : "/", root) >= (int)sizeof rootpath) {
        snprintf(err, errlen, "config.json has no usable root.path");
        return -1;
    }
    int rfd = open(rootpath, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (rfd < 0 && errno == ENOENT)
        return 0; /* no root yet: nothing of an image to read; the runtime says what is missing */
    if (rfd < 0) {
        snprintf(err, errlen, "cannot open the root filesystem %s: %s", rootpath,
                 strerror(errno));
        return -1;
    }
    /* O_PATH: a FIFO's open would block until a writer comes (forever), and a device's open
     * reaches its driver; neither happens before the type is known. */
    struct open_how how = {.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
                           .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS |
                                      RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV};
    int pfd = (int)syscall(SYS_openat2, rfd, "etc/ld.so.preload", &how, sizeof how);
    int saved = errno;
    close(rfd);
    if (pfd < 0 && (saved == ENOENT || saved == ENOTDIR))
        return 0; /* none: the image preloads nothing */
    if (pfd < 0) {
        snprintf(err, errlen, "the image's /etc/ld.so.preload cannot be opened safely: %s%s",
                 strerror(saved), saved == ELOOP ? " (a symlink on its path)" : "");
        return -1;
    }
    struct stat st, st2;
    int rc = -1;
    if (fstat(pfd, &st) != 0) {
        snprintf(err, errlen, "cannot stat the image's /etc/ld.so.preload: %s", strerror(errno));
    } else if (!S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "the image's /etc/ld.so.preload is %s, not a regular file: "
                              "convgpu mounts its own there and cannot use this image",
                 file_kind(st.st_mode));
    } else if (st.st_size >= (off_t)OCI_IMAGE_PRELOAD_MAX) {
        snprintf(err, errlen, "the image's /etc/ld.so.preload has %lld bytes; convgpu reads "
                              "files under %u bytes there", (long long)st.st_size,
                 OCI_IMAGE_PRELOAD_MAX);
    } else {
        /* Reopened through the descriptor: the very inode whose type was checked. */
        char self[64];
        snprintf(self, sizeof self, "/proc/self/fd/%d", pfd);
        int fd = open(self, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        size_t len = 0;
        if (fd < 0 || fstat(fd, &st2) != 0 || st2.st_ino != st.st_ino ||
            st2.st_dev != st.st_dev || !S_ISREG(st2.st_mode)) {
            snprintf(err, errlen, "cannot reopen the image's /etc/ld.so.preload: %s",
                     fd < 0 ? strerror(errno) : "it changed");
        } else if (!(*text = read_fd(fd, OCI_IMAGE_PRELOAD_MAX, &len))) {
            snprintf(err, errlen, "cannot read the image's /etc/ld.so.preload: %s%s",
                     strerror(errno), errno == EFBIG ? " (it grew past the bound)" : "");
        } else {
            rc = 0;
        }
        if (fd >= 0)
            close(fd);
    }
    close(pfd);
    return rc;
}

int oci_write_file(const char *path, const char *text, char *err, size_t errlen)
{
    /* Creates the missing parents (runtime dir/oci/<id>), like mkdir -p. */
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash && slash != dir) {
        *slash = '\0';
        for (char *p = dir + 1;; p++) {
            if (*p != '/' && *p != '\0')
                continue;
            char c = *p;
            *p = '\0';
            if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
                snprintf(err, errlen, "cannot create %s: %s", dir, strerror(errno));
                return -1;
            }
            *p = c;
            if (!c)
                break;
        }
    }
    return replace_file(path, text, 0644, err, errlen);
}

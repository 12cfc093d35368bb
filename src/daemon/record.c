/* record.c — the daemon's private account file of each container (see record.h). */
#include "record.h"

#include <dirent.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static struct cg_record *map_record(int fd, bool fresh, char *err, size_t errlen)
{
    void *m = mmap(NULL, CG_RECORD_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED) {
        snprintf(err, errlen, "cannot map the account record: %s", strerror(errno));
        return NULL;
    }
    struct cg_record *r = m;
    if (fresh) {
        memset(r, 0, CG_RECORD_SIZE);
        r->magic = CG_RECORD_MAGIC;
        r->version = CG_RECORD_VERSION;
    }
    return r;
}

struct cg_record *record_open(int records_fd, const char *id, bool restore, bool *found, char *err,
                              size_t errlen)
{
    *found = false;
    if (restore) {
        /* O_NONBLOCK: whatever sits there (it should be our own regular file) never blocks us. */
        int fd = openat(records_fd, id, O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
        struct stat st;
        if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
            (size_t)st.st_size == CG_RECORD_SIZE && (st.st_mode & 077) == 0) {
            struct cg_record *r = map_record(fd, false, err, errlen);
            close(fd);
            if (r && r->magic == CG_RECORD_MAGIC && r->version >= CG_RECORD_MIN_VERSION &&
                r->version <= CG_RECORD_VERSION) {
                *found = true;
                return r;
            }
            if (r)
                munmap(r, CG_RECORD_SIZE);
        } else if (fd >= 0) {
            close(fd);
        }
        /* Not ours or not whole: start afresh (the container's processes are then unknown). */
        if (unlinkat(records_fd, id, 0) != 0 && errno == EISDIR)
            unlinkat(records_fd, id, AT_REMOVEDIR);
    }
    int fd = openat(records_fd, id, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        snprintf(err, errlen, "cannot create the account record: %s", strerror(errno));
        return NULL;
    }
    int e = posix_fallocate(fd, 0, (off_t)CG_RECORD_SIZE);
    if (e != 0) {
        snprintf(err, errlen, "cannot allocate the account record: %s", strerror(e));
        close(fd);
        unlinkat(records_fd, id, 0);
        return NULL;
    }
    struct cg_record *r = map_record(fd, true, err, errlen);
    close(fd);
    if (!r)
        unlinkat(records_fd, id, 0);
    return r;
}

void record_close(struct cg_record *r)
{
    if (r)
        munmap(r, CG_RECORD_SIZE);
}

int record_unlink(int records_fd, const char *id)
{
    return unlinkat(records_fd, id, 0);
}

int record_check_downgrade(int records_fd, char *err, size_t errlen)
{
    int dfd = fcntl(records_fd, F_DUPFD_CLOEXEC, 0);
    DIR *dir = dfd >= 0 ? fdopendir(dfd) : NULL;
    if (!dir) {
        if (dfd >= 0)
            close(dfd);
        return 0; /* nothing readable: the restore says what it finds */
    }
    rewinddir(dir);
    int rc = 0;
    for (struct dirent *e; rc == 0 && (e = readdir(dir));) {
        if (e->d_name[0] == '.')
            continue;
        int fd = openat(records_fd, e->d_name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
        uint32_t head[2];
        if (fd >= 0 && pread(fd, head, sizeof head, 0) == (ssize_t)sizeof head &&
            head[0] == CG_RECORD_MAGIC && head[1] > CG_RECORD_VERSION) {
            snprintf(err, errlen,
                     "the account of container %.64s was written by a newer convgpud (record "
                     "version %u; this one reads %u to %u): starting would lose the accounts of "
                     "running containers. Reinstall the newer convgpu, or remove every container "
                     "first (convgpu rm) and then downgrade",
                     e->d_name, head[1], CG_RECORD_MIN_VERSION, CG_RECORD_VERSION);
            rc = -1;
        }
        if (fd >= 0)
            close(fd);
    }
    closedir(dir);
    return rc;
}

/* state.c — the shim's per-container directory under the daemon's runtime directory. */
#include "state.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "http.h"

char *oci_state_path(const char *id, const char *name, char *buf, size_t len)
{
    /* The id comes from runc's arguments or a hook's state JSON: it must be one path
     * component, never a way out of <runtime-dir>/oci. */
    if (!id || !*id || strchr(id, '/') || strcmp(id, ".") == 0 || strcmp(id, "..") == 0)
        return NULL;
    int n = name ? snprintf(buf, len, "%s/oci/%s/%s", cli_runtime_dir(), id, name)
                 : snprintf(buf, len, "%s/oci/%s", cli_runtime_dir(), id);
    return n < 0 || (size_t)n >= len ? NULL : buf;
}

const char *oci_state_id_problem(const char *id)
{
    if (!id || !*id)
        return "empty: a container id is one path component";
    if (strcmp(id, ".") == 0 || strcmp(id, "..") == 0)
        return "'.' and '..' name directories, not a container: the id must be one path "
               "component of its own";
    if (strchr(id, '/'))
        return "contains '/': a container id is one path component";
    return "too long for a path under the runtime directory";
}

bool oci_state_exists(const char *id)
{
    char p[4096];
    struct stat st;
    return oci_state_path(id, NULL, p, sizeof p) && stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

int oci_state_touch(const char *id, const char *name)
{
    char p[4096];
    if (!oci_state_path(id, name, p, sizeof p)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    int fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0)
        return -1;
    close(fd);
    return 0;
}

bool oci_state_has(const char *id, const char *name)
{
    char p[4096];
    return oci_state_path(id, name, p, sizeof p) && access(p, F_OK) == 0;
}

void oci_state_remove(const char *id)
{
    char p[4096];
    if (oci_state_path(id, "ld.so.preload", p, sizeof p))
        unlink(p);
    if (oci_state_path(id, OCI_STATE_WATCHED, p, sizeof p))
        unlink(p);
    if (oci_state_path(id, NULL, p, sizeof p))
        rmdir(p);
}

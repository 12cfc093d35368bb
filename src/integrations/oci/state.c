/* state.c — the shim's per-container directory under the daemon's runtime directory. */
#include "state.h"

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

bool oci_state_exists(const char *id)
{
    char p[4096];
    struct stat st;
    return oci_state_path(id, NULL, p, sizeof p) && stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

void oci_state_remove(const char *id)
{
    char p[4096];
    if (oci_state_path(id, "ld.so.preload", p, sizeof p))
        unlink(p);
    if (oci_state_path(id, NULL, p, sizeof p))
        rmdir(p);
}

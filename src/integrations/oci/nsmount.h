/* nsmount.h — bind mounts made into a container that already exists: from a createRuntime hook,
 * where the container's mounts are set up in its own mount namespace but its root is not yet
 * switched to (runc runs these hooks before pivot_root). CDI's hooks are how a spec written
 * before any container existed gives one container its own files (its socket directory, its
 * ld.so.preload): the OCI shim writes them into config.json instead, which CDI cannot. */
#ifndef CONVGPU_OCI_NSMOUNT_H
#define CONVGPU_OCI_NSMOUNT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct oci_nsmount {
    const char *source; /* host path: a daemon-owned file or directory */
    const char *dest;   /* absolute path inside the container */
    bool dir;           /* source and mount point are directories (else regular files) */
    bool writable;      /* else read-only; always nosuid, nodev */
};

/* Enters the mount namespace of pid (the container's init, held by the runtime) in a child
 * process and bind-mounts each source at rootfs + dest. dest is resolved inside rootfs
 * (RESOLVE_IN_ROOT: an image's symlink cannot lead outside it); missing mount points are created
 * (directories 0755, empty files 0644) and one of the wrong type is refused. All or nothing is
 * not promised: on failure the container must not start (the caller fails the hook). Returns 0,
 * or -1 with err. */
int oci_nsmount(pid_t pid, const char *rootfs, const struct oci_nsmount *m, size_t n, char *err,
                size_t errlen);

#endif

/* cdi_spec.h — the pieces of a CDI spec (Container Device Interface) that convgpu writes in two
 * places: `convgpu cdi generate` (src/cli/cmd_cdi.c: the node's spec, a hook per device) and the
 * DRA driver (src/integrations/k8s/dra/cdi.c: one spec per prepared claim, mounts and no hook).
 * Edits are JSON (jansson) in the CDI schema's shape: env entries "NAME=VALUE", mounts
 * {hostPath, containerPath, options}. A spec file is replaced whole, never seen half written. */
#ifndef CONVGPU_CDI_SPEC_H
#define CONVGPU_CDI_SPEC_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* Where a container finds the daemon's socket and the emulator's state, as CDI edits put them. */
#define CDI_IN_CONTAINER_DIR "/run/convgpu"
#define CDI_IN_CONTAINER_SOCKET "/run/convgpu/container.sock"
#define CDI_IN_CONTAINER_EMU_STATE "/run/convgpu-emu/state"

/* Appends "NAME=VALUE" to a containerEdits env list. Returns 0, or -1 (out of memory). */
int cdi_add_env(json_t *list, const char *name, const char *value);

/* Appends a bind mount of host at in (dir: rbind, a directory's submounts too; writable: rw,
 * else ro; always nosuid, nodev) to a containerEdits mounts list. Returns 0, or -1. */
int cdi_add_mount(json_t *list, const char *host, const char *in, bool dir, bool writable);

/* How cdi_write_atomically writes. */
enum {
    CDI_WRITE_MKDIRS = 1, /* create the file's missing parent directories (0755) first */
    CDI_WRITE_FSYNC = 2,  /* the data reach the disk before the rename */
};
/* Writes text to path (mode 0644) through a temporary file in the same directory and rename(2):
 * a reader (a runtime rereads its CDI directories) sees the old file or the new one, never half
 * of one. Returns 0, or -1 with err; nothing changed then. */
int cdi_write_atomically(const char *path, const char *text, unsigned flags, char *err,
                         size_t errlen);

#endif

/* bundle.h — the files the shim reads and writes: a bundle's config.json (replaced atomically,
 * mode kept), the image's own /etc/ld.so.preload (read inside the root filesystem only) and the
 * small files the shim keeps per container. */
#ifndef CONVGPU_OCI_BUNDLE_H
#define CONVGPU_OCI_BUNDLE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* Loads <bundle>/config.json. *pretty tells whether it was indented (kept when saving). */
json_t *oci_bundle_load(const char *bundle, bool *pretty, char *err, size_t errlen);

/* Writes config to <bundle>/config.json through a temporary file and rename(2), with the mode
 * the old file had. Returns 0, or -1 with err (the old file is then untouched). */
int oci_bundle_save(const char *bundle, json_t *config, bool pretty, char *err, size_t errlen);

/* The image's /etc/ld.so.preload (inside config "root.path"), checked before anything is
 * registered: the path is resolved inside that root without following any symlink, opened
 * O_PATH (no open of a FIFO or a device happens, so nothing blocks and no driver is touched),
 * its type checked, then reopened read-only and non-blocking through the same inode and read
 * (smaller than OCI_IMAGE_PRELOAD_MAX bytes). Returns 0 with *text (NULL: the image has none), or -1 with
 * err when it is unusable: a symlink, FIFO, directory, device or socket, larger than the bound,
 * or unreadable. The shim then refuses the container (its ld.so.preload is where the interposer
 * is mounted). */
#define OCI_IMAGE_PRELOAD_MAX (64u << 10)
int oci_bundle_image_preload(const char *bundle, json_t *config, char **text, char *err,
                             size_t errlen);

/* Writes text to path atomically with mode 0644, creating the parent directory (0755). */
int oci_write_file(const char *path, const char *text, char *err, size_t errlen);

#endif

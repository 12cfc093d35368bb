/* plugin_dir.h — the SPANK plugin's own directory on a node, `<runtime-dir>/slurm`: root's,
 * 0700, never the daemon's (the daemon owns everything else below its runtime directory, as
 * convgpu-runtime keeps its files in `<runtime-dir>/oci`). Everything in it is reached through
 * the descriptor this returns, with *at() calls that follow no links. */
#ifndef CONVGPU_SLURM_PLUGIN_DIR_H
#define CONVGPU_SLURM_PLUGIN_DIR_H

#include <stddef.h>

/* Opens the directory (creating it first when create is set) and checks it is ours and closed
 * to others. Returns the descriptor, or -1 with err. */
int plugin_dir_open(const char *runtime_dir, int create, char *err, size_t errlen);

/* Writes len bytes as file name in the directory, atomically (temporary file, rename), with
 * mode. Returns 0, or -1 with err. */
int plugin_dir_write(int dirfd, const char *name, const void *data, size_t len, int mode,
                     char *err, size_t errlen);

#endif

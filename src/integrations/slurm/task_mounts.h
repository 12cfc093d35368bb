/* task_mounts.h — a step's tasks keep the interposer and their container's socket even when
 * they clear their environment (`env -i`, `env -u LD_PRELOAD`, a login shell), the way
 * convgpu-runtime fences an OCI container: each task gets a mount namespace of its own, in
 * which /etc/ld.so.preload names the interposer (then the node's own preloads) and
 * /run/convgpu is the container's directory, so the interposer's default socket
 * (/run/convgpu/container.sock) is this step's.
 *
 * Path of one task: slurmstepd writes `<runtime-dir>/slurm/ld.so.preload` at registration
 * (task_preload_write, the same for every step: the interposer's path and the node's lines);
 * the forked task, still root, calls task_enter_mounts before it drops privileges and execs.
 * Both mount points must exist on the node (an empty /etc/ld.so.preload, the /run/convgpu
 * directory); where either is missing the tasks are fenced through their environment only and
 * the plugin says so once per step in slurmd's log. Nothing is mounted outside the task's own
 * namespace (mounts below / are made slaves first). */
#ifndef CONVGPU_SLURM_TASK_MOUNTS_H
#define CONVGPU_SLURM_TASK_MOUNTS_H

#include <stddef.h>

#define TASK_SOCKET "/run/convgpu/container.sock"

/* Writes the preload file for interposer `lib` into the plugin's directory; path receives its
 * name. Returns 0, or -1 with err. */
int task_preload_write(const char *runtime_dir, const char *lib, char *path, size_t pathlen,
                       char *err, size_t errlen);

/* 1 when the node has both mount points, else 0 with err saying which is missing. */
int task_mounts_possible(char *err, size_t errlen);

/* In the task (root, before exec): a mount namespace of its own with the preload file on
 * /etc/ld.so.preload and container_dir on /run/convgpu, both read-only. Returns 0, or -1 with
 * err (the task must then not run: it asked to be fenced). */
int task_enter_mounts(const char *preload, const char *container_dir, char *err, size_t errlen);

#endif

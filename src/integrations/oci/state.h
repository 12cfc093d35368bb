/* state.h — the shim's own per-container directory, <runtime-dir>/oci/<id>/: it holds the
 * generated ld.so.preload, and its existence marks a container the shim registered (so `delete`
 * releases only those, and only when the daemon does not watch its init). The daemon's private dir is not used: the daemon owns its contents. */
#ifndef CONVGPU_OCI_STATE_H
#define CONVGPU_OCI_STATE_H

#include <stdbool.h>
#include <stddef.h>

/* <runtime-dir>/oci/<id>[/name]; name may be NULL. Returns buf, or NULL when the id is not one
 * path component or the path is too long (oci_state_id_problem says which). */
char *oci_state_path(const char *id, const char *name, char *buf, size_t len);
/* Why oci_state_path refuses id: a sentence for the log. */
const char *oci_state_id_problem(const char *id);
bool oci_state_exists(const char *id);
/* The marker that the daemon watches the container's init process and removes the container
 * when it exits: `delete` then has nothing to tell the daemon. */
#define OCI_STATE_WATCHED "init-watched"
/* Creates an empty file name in the container's directory: 0, or -1 (errno). */
int oci_state_touch(const char *id, const char *name);
bool oci_state_has(const char *id, const char *name);
/* Removes the directory and the files the shim put in it. */
void oci_state_remove(const char *id);

#endif

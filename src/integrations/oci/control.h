/* control.h — the shim's calls on convgpud's control API: register a container before it
 * exists, report its init pid once it exists, release it when it is deleted. */
#ifndef CONVGPU_OCI_CONTROL_H
#define CONVGPU_OCI_CONTROL_H

#include <jansson.h>
#include <stddef.h>

#include "spec.h"

/* The daemon knows the container by the OCI id's first 32 characters (its socket path must fit a
 * UNIX socket address) and, for longer ids up to 64 characters, by the full id as its name. */

/* POST /v1/containers with the id; a stale registration under the same id without processes
 * (a container that stopped without its poststop hook) is replaced. Returns the daemon's
 * answer (with "dir" and "env"), or NULL with err. */
json_t *oci_register(const char *id, const struct oci_request *req, char *err, size_t errlen);

/* DELETE /v1/containers/{id}. Returns 0 when released or not registered, -1 with err. */
int oci_release(const char *id, char *err, size_t errlen);

/* POST /v1/containers/{id}/start {"pid", "auto_remove": true}: tells the daemon the container's
 * init (host) pid; the daemon removes the container when that process exits, which is the
 * container's stop. Returns 0, 1 when the container is not registered, or -1 with err. */
int oci_started(const char *id, long pid, char *err, size_t errlen);

#endif

/* patch.h — setting one annotation on this node's Node object through the Kubernetes API server
 * (k8s_api.h): PATCH /api/v1/nodes/NAME, Content-Type application/merge-patch+json (a JSON
 * merge patch, RFC 7386: only metadata.annotations[KEY] changes, whatever else the Node holds
 * or others write meanwhile), Authorization: Bearer <token>. The service account needs `patch`
 * on `nodes` (docs/KUBERNETES.md gives the ClusterRole). */
#ifndef CONVGPU_K8S_PUBLISH_PATCH_H
#define CONVGPU_K8S_PUBLISH_PATCH_H

#include <stddef.h>

#include "k8s_api.h"

/* Sets metadata.annotations[key] = value on node. Returns 0, or -1 with err saying what the
 * API server answered (status and its message) or why it could not be reached. */
int k8s_patch_annotation(const struct k8s_api *api, const char *node, const char *key,
                         const char *value, char *err, size_t errlen);

#endif

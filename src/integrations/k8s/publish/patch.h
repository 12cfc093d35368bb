/* patch.h — setting one annotation on this node's Node object through the Kubernetes API server,
 * with libcurl: PATCH /api/v1/nodes/NAME, Content-Type application/merge-patch+json (a JSON
 * merge patch, RFC 7386: only metadata.annotations[KEY] changes, whatever else the Node holds
 * or others write meanwhile), Authorization: Bearer <token>.
 *
 * In a pod the defaults are the service account's: the API server at
 * https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT, the token and CA under
 * /var/run/secrets/kubernetes.io/serviceaccount. The token file is read for every PATCH
 * (projected service account tokens are rotated while the pod runs). The service account needs
 * `patch` on `nodes` (docs/KUBERNETES.md gives the ClusterRole). */
#ifndef CONVGPU_K8S_PUBLISH_PATCH_H
#define CONVGPU_K8S_PUBLISH_PATCH_H

#include <stddef.h>

#define K8S_SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"

struct k8s_api {
    char server[512];      /* https://host:port, no trailing slash */
    const char *token_file; /* NULL or "": no Authorization header */
    const char *ca_file;    /* NULL or "": the system's CAs */
};

/* Fills api->server from the environment (KUBERNETES_SERVICE_HOST/PORT). Returns 0, or -1 with
 * err when they are not set (not in a pod: give --api-server). */
int k8s_api_in_cluster(struct k8s_api *api, char *err, size_t errlen);

/* A Node name as the API server accepts it (a DNS-1123 subdomain: lower-case letters, digits,
 * '-' and '.', at most 253): checked before it becomes part of a URL path. */
int k8s_valid_node_name(const char *name);

/* Sets metadata.annotations[key] = value on node. Returns 0, or -1 with err saying what the
 * API server answered (status and its message) or why it could not be reached. */
int k8s_patch_annotation(const struct k8s_api *api, const char *node, const char *key,
                         const char *value, char *err, size_t errlen);

#endif

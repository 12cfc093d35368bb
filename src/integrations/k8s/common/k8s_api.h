/* k8s_api.h — the one Kubernetes API server client of src/integrations/k8s, with libcurl: the
 * DRA driver's claims and slices (dra/), the node annotation's PATCH (publish/, `convgpu k8s
 * publish`). A request is a method, a path under the server, an optional JSON body sent with a
 * content type, and an answer decoded with jansson; an error answer's v1.Status message is put
 * into err.
 *
 * The token file is read for every request (projected service account tokens rotate while the
 * pod runs) and must be one printable line (it goes into a header); it is wiped from the stack
 * after use. Answers are bounded (1 MiB: a larger one is not the API server's); redirects are not
 * followed (the token goes nowhere else); only http and https. Each thread keeps one handle, so
 * its connection to the API server is reused (a new TLS connection per request is most of one).
 *
 * In a pod the defaults are the service account's: the API server at
 * https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT, the token and CA under K8S_SA_DIR. */
#ifndef CONVGPU_K8S_API_H
#define CONVGPU_K8S_API_H

#include <jansson.h>
#include <stddef.h>

#define K8S_SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"

struct k8s_api {
    char server[512];      /* https://host:port, no trailing slash */
    char token_file[4096]; /* "": no Authorization header */
    char ca_file[4096];    /* "": the system's CAs */
};

/* The service account's token and CA files (K8S_SA_DIR); the server is left as it is. */
void k8s_api_sa_defaults(struct k8s_api *api);

/* Fills api->server from the environment (KUBERNETES_SERVICE_HOST/PORT). Returns 0, or -1 with
 * err when they are not set (not in a pod: give --api-server). */
int k8s_api_in_cluster(struct k8s_api *api, char *err, size_t errlen);

/* A Node name as the API server accepts it (a DNS-1123 subdomain: lower-case letters, digits,
 * '-' and '.', at most 253): checked before it becomes part of a URL path. */
int k8s_valid_node_name(const char *name);

/* One request: body NULL or JSON, sent as content_type (NULL: application/json); *answer the
 * decoded answer (or NULL). Returns the HTTP status, with err saying what the API server
 * answered (status and its message) when it is not 2xx, or 0 with err when the server was not
 * reached. */
long k8s_api_request(const struct k8s_api *api, const char *method, const char *path,
                     const char *content_type, json_t *body, json_t **answer, char *err,
                     size_t errlen);

/* Releases the calling thread's kept handle (before curl_global_cleanup). */
void k8s_api_close(void);

#endif

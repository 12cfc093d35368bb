/* server.h — the extender's HTTP side (libmicrohttpd, one internal thread): kube-scheduler POSTs
 * JSON to <urlPrefix>/filter, /prioritize and /bind; GET /healthz answers "ok" for probes.
 *
 * Follow one request: the body is collected up to max_body bytes (beyond: 413, the rest is read
 * and dropped), decoded by args.c (malformed: 400 {"error": why}), answered by verbs.c (200 with
 * kube-scheduler's type). The extender keeps no state between requests: every answer follows
 * from the request alone, so a request cannot change what another one gets. */
#ifndef CONVGPU_K8S_EXT_SERVER_H
#define CONVGPU_K8S_EXT_SERVER_H

#include <stddef.h>

#include "cluster_fit.h"

struct k8s_server;

/* Serves on listen_fd (a bound, listening TCP or UNIX socket; the server owns it and closes it
 * when it stops, or at once when it cannot start). */
struct k8s_server *k8s_server_start(int listen_fd, cg_cluster_policy policy, size_t max_body,
                                    char *err, size_t errlen);
void k8s_server_stop(struct k8s_server *s);

#endif

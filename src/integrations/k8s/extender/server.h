/* server.h — the extender's HTTP side (libmicrohttpd, one internal thread): kube-scheduler POSTs
 * JSON to <urlPrefix>/filter, /prioritize and /bind; GET /healthz answers "ok" for probes.
 *
 * Follow one request: it must arrive whole within the request timeout; its body is collected
 * up to max_body bytes (beyond: 413, the rest is read and dropped) within a budget shared by
 * all connections (guard.h: which connection is closed when a bound is reached), decoded by
 * args.c (malformed: 400 {"error": why}), answered by verbs.c (200 with kube-scheduler's type).
 * The extender keeps no state between requests: every answer follows from the request alone,
 * so a request cannot change what another one gets. */
#ifndef CONVGPU_K8S_EXT_SERVER_H
#define CONVGPU_K8S_EXT_SERVER_H

#include <stddef.h>

#include "cluster_fit.h"

struct k8s_server;

/* What any client may make the server hold, and for how long (guard.h). */
struct k8s_server_limits {
    size_t max_body;            /* one request's body; larger ones are answered 413 */
    size_t body_budget;         /* bodies and answers held at once, all connections together */
    size_t max_conns;           /* connections open at once */
    unsigned request_timeout_s; /* a request's headers and body arrive within this, or it is
                                   closed; also how long a stalled reader of an answer is kept */
};

/* Serves on listen_fd (a bound, listening TCP or UNIX socket; the server owns it and closes it
 * when it stops, or at once when it cannot start). lim->max_body <= lim->body_budget. */
struct k8s_server *k8s_server_start(int listen_fd, const struct k8s_server_limits *lim,
                                    cg_cluster_policy policy, char *err, size_t errlen);
void k8s_server_stop(struct k8s_server *s);

#endif

/* metrics.h — Prometheus text exposition of the daemon's state: device and container gauges,
 * decision counters and a request-latency histogram. Served at /metrics on the control socket
 * and, with --metrics ADDR:PORT, on a TCP address that serves nothing else (and everything: it
 * has no caller to scope by, so the operator binds it where tenants cannot reach). */
#ifndef CONVGPUD_METRICS_H
#define CONVGPUD_METRICS_H

#include "daemon.h"

/* Starts counting decisions and request latencies (from the daemon's notices): at start, before
 * the first decision. */
void metrics_init(struct daemon *d);
/* The exposition as a malloc'd string (NULL when out of memory). only_uid NULL: everything;
 * else the per-container series only of the containers that user owns (a control-socket caller
 * who may not see the others); device series and node-wide counters are always there. */
char *metrics_render(struct daemon *d, const uid_t *only_uid);

/* The optional TCP listener (ADDR:PORT, IPv4 or [IPv6]). */
int metrics_listen(struct daemon *d, const char *addr, char *err, size_t errlen);
void metrics_stop(struct daemon *d);
int metrics_timeout_ms(struct daemon *d);
/* Runs the TCP listener's MHD when its timeout is due (an idle connection to close). */
void metrics_poll(struct daemon *d);

#endif

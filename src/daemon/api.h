/* api.h — the versioned HTTP/JSON control API on the daemon's control socket, and the stream of
 * decision events it serves. Runs inside the daemon's epoll loop (no threads). */
#ifndef CONVGPUD_API_H
#define CONVGPUD_API_H

#include "daemon.h"

struct api;

int api_start(struct daemon *d, int listen_fd, char *err, size_t errlen);
/* GET /v1/version's answer, also kept in RUNTIME_DIR/convgpud.json while the daemon runs, so a
 * client that only needs the mode (convgpu docker run) reads a file instead of loading an HTTP
 * client; removed at a clean stop. */
#define API_INFO_FILE "convgpud.json"
int api_publish_version(const struct daemon *d, char *err, size_t errlen);
void api_stop(struct daemon *d);
/* Runs the HTTP server if events resumed followers (call after each loop round). */
void api_poll(struct daemon *d);
/* Milliseconds until the API needs to run again (idle timeouts), or -1. */
int api_timeout_ms(struct daemon *d);

#endif

/* http.h — the transport of the client library (convgpu_client.h): one JSON request over the
 * daemon's UNIX control socket, one JSON answer. */
#ifndef CONVGPU_CLI_HTTP_H
#define CONVGPU_CLI_HTTP_H

#include <jansson.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The control socket path: --runtime-dir, else $CONVGPU_RUNTIME_DIR, else /run/convgpu. */
void cli_set_runtime_dir(const char *dir);
const char *cli_runtime_dir(void);

/* Sends method+path with an optional body (stolen). Returns the HTTP status (0 when the daemon
 * could not be reached; then *error says why) and the parsed answer in *out (may be NULL). */
long cli_request(const char *method, const char *path, json_t *body, json_t **out,
                 char *error, size_t errlen);

/* GETs path and calls on_line for each newline-terminated line as it arrives, until the daemon
 * closes the stream or on_line returns non-zero. Returns the HTTP status (0: unreachable). */
long cli_stream(const char *path, int (*on_line)(const char *line, void *ctx), void *ctx,
                char *error, size_t errlen);

/* Prints an API error answer or transport error as "convgpu: ..." on stderr. */
void cli_report_error(long status, json_t *answer, const char *transport_error);

#ifdef __cplusplus
}
#endif

#endif

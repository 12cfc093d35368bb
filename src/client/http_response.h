/* http_response.h — decoding the daemon's HTTP/1.1 answers (status, body, chunked streams) with
 * Debian's http-parser. No I/O: the bytes are fed in as they arrive, so the decoder is fuzzed
 * directly (fuzz/fuzz_http.c). */
#ifndef CONVGPU_CLI_HTTP_RESPONSE_H
#define CONVGPU_CLI_HTTP_RESPONSE_H

#include <http_parser.h>
#include <stdbool.h>
#include <stddef.h>

/* Called with each piece of the body as it is decoded; non-zero stops the answer. */
typedef int (*http_body_fn)(const char *data, size_t len, void *ctx);

struct http_response {
    http_parser parser;
    http_parser_settings settings;
    long status;        /* the status code, once the status line is read; else 0 */
    char *body;         /* the collected body, NUL-terminated (when on_body is NULL) */
    size_t len;
    size_t max_body;    /* a longer body is an error */
    http_body_fn on_body;
    void *ctx;
    bool complete;      /* the whole answer was read */
    bool stopped;       /* on_body asked to stop */
    char error[160];
};

/* on_body NULL: the body is collected in r->body (at most max_body bytes). */
void http_response_init(struct http_response *r, size_t max_body, http_body_fn on_body, void *ctx);
/* Feeds the next bytes of the answer; len 0 says the connection closed. Returns 1 when the answer
 * is complete, 0 when more is needed, -1 when it is malformed, too long or cut short (r->error
 * says why) or on_body stopped it (r->stopped). */
int http_response_feed(struct http_response *r, const char *data, size_t len);
void http_response_free(struct http_response *r);

#endif

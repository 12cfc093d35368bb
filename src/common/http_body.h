/* http_body.h — a request body taken in through libmicrohttpd's access handler, once, for the
 * two HTTP servers (the daemon's control API, src/daemon/api.c, and the scheduler extender,
 * src/integrations/k8s/extender/server.c).
 *
 * microhttpd calls the access handler at least three times per request: first with no
 * per-request context (one is made: answer "go on"), then once per chunk of the body (each is
 * kept, or dropped once the body is too big, and the handler says "go on"), then with no
 * upload left: the whole request is here and is answered. http_body_feed is that machine; the
 * server says where a chunk goes (append: 0 kept, 1 too big and dropped, -1 failed: the
 * connection is closed). Its per-request context starts with a struct http_body.
 *
 * Invariants: a context is made once per request, zeroed; after a chunk reported too big no
 * further chunk reaches append (the rest is read away, so the 413 can be sent); every chunk is
 * consumed (*upload_size = 0), as microhttpd requires before it calls again. Header-only, no
 * microhttpd include: the interposer never sees it, and common stays free of HTTP. */
#ifndef CONVGPU_HTTP_BODY_H
#define CONVGPU_HTTP_BODY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>

struct http_body {
    bool too_big; /* a chunk passed the server's bound: answer 413 */
};

enum http_body_step {
    HTTP_BODY_MORE,     /* answer MHD_YES: more is coming */
    HTTP_BODY_COMPLETE, /* the request is all here: route and answer it */
    HTTP_BODY_FAILED,   /* answer MHD_NO: the connection is closed */
};

/* ctx: the server's; req: this request's context (its struct http_body first). */
typedef int (*http_body_append_fn)(void *ctx, void *req, const char *data, size_t n);

static inline enum http_body_step http_body_feed(void **con_cls, size_t req_size,
                                                 const char *upload, size_t *upload_size,
                                                 http_body_append_fn append, void *ctx)
{
    if (!*con_cls) {
        *con_cls = calloc(1, req_size < sizeof(struct http_body) ? sizeof(struct http_body)
                                                                 : req_size);
        return *con_cls ? HTTP_BODY_MORE : HTTP_BODY_FAILED;
    }
    if (!*upload_size)
        return HTTP_BODY_COMPLETE;
    struct http_body *b = *con_cls;
    if (!b->too_big) {
        int rc = append(ctx, *con_cls, upload, *upload_size);
        if (rc < 0)
            return HTTP_BODY_FAILED;
        b->too_big = rc > 0;
    }
    *upload_size = 0;
    return HTTP_BODY_MORE;
}

#endif

/* http_response.c — the daemon's HTTP answers decoded by http-parser: the status line, headers
 * (Content-Length or chunked), and the body collected or passed on piece by piece. */
#include "http_response.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int on_status(http_parser *p, const char *at, size_t len)
{
    (void)at;
    (void)len;
    struct http_response *r = p->data;
    r->status = (long)p->status_code;
    return 0;
}

static int on_body(http_parser *p, const char *at, size_t len)
{
    struct http_response *r = p->data;
    r->status = (long)p->status_code;
    if (r->on_body) {
        if (r->on_body(at, len, r->ctx) != 0) {
            r->stopped = true;
            return -1;
        }
        return 0;
    }
    if (len > r->max_body - r->len) {
        snprintf(r->error, sizeof r->error, "the daemon's answer is longer than %zu bytes",
                 r->max_body);
        return -1;
    }
    char *nb = realloc(r->body, r->len + len + 1);
    if (!nb) {
        snprintf(r->error, sizeof r->error, "out of memory");
        return -1;
    }
    memcpy(nb + r->len, at, len);
    r->body = nb;
    r->len += len;
    r->body[r->len] = '\0';
    return 0;
}

static int on_headers_complete(http_parser *p)
{
    struct http_response *r = p->data;
    r->status = (long)p->status_code;
    return 0;
}

static int on_message_complete(http_parser *p)
{
    struct http_response *r = p->data;
    r->status = (long)p->status_code;
    r->complete = true;
    http_parser_pause(p, 1); /* one answer per connection: anything after it is not read */
    return 0;
}

void http_response_init(struct http_response *r, size_t max_body, http_body_fn body_fn, void *ctx)
{
    memset(r, 0, sizeof *r);
    http_parser_init(&r->parser, HTTP_RESPONSE);
    r->parser.data = r;
    http_parser_settings_init(&r->settings);
    r->settings.on_status = on_status;
    r->settings.on_headers_complete = on_headers_complete;
    r->settings.on_body = on_body;
    r->settings.on_message_complete = on_message_complete;
    r->max_body = max_body;
    r->on_body = body_fn;
    r->ctx = ctx;
}

int http_response_feed(struct http_response *r, const char *data, size_t len)
{
    if (r->complete)
        return 1;
    if (r->error[0] || r->stopped)
        return -1;
    size_t used = http_parser_execute(&r->parser, &r->settings, data, len);
    enum http_errno e = HTTP_PARSER_ERRNO(&r->parser);
    if (r->complete)
        return 1;
    if (r->stopped)
        return -1;
    if (e != HPE_OK || (len > 0 && used != len)) {
        if (!r->error[0])
            snprintf(r->error, sizeof r->error, "the daemon's answer is not valid HTTP: %s",
                     http_errno_description(e));
        return -1;
    }
    if (len == 0) { /* closed before the answer was whole */
        snprintf(r->error, sizeof r->error, "the daemon closed the connection mid-answer");
        return -1;
    }
    return 0;
}

void http_response_free(struct http_response *r)
{
    free(r->body);
    r->body = NULL;
    r->len = 0;
}

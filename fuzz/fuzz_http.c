/* fuzz_http.c — libFuzzer harness for the control API client's decoder of the daemon's answers
 * (src/client/http_response.c over http-parser). The first byte picks where the rest is cut into
 * pieces, as reads from a socket would; the same bytes fed whole and in pieces must decode to
 * the same status and body, a body never exceeds its limit and stays NUL-terminated, and a
 * finished or failed answer stays so. A streaming pass checks the pieces handed to on_body add
 * up to the collected body. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "http_response.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_BODY 4096

struct collected {
    char buf[MAX_BODY * 4];
    size_t len;
    size_t stop_after; /* stop the stream once this much arrived (0: never) */
};

static int on_piece(const char *p, size_t n, void *ctx)
{
    struct collected *c = ctx;
    if (n > sizeof c->buf - c->len)
        return -1;
    memcpy(c->buf + c->len, p, n);
    c->len += n;
    return c->stop_after && c->len >= c->stop_after ? 1 : 0;
}

/* Feeds text in pieces of at most step bytes (0: whole), then EOF. Returns the final result. */
static int feed(struct http_response *r, const char *text, size_t len, size_t step)
{
    int rc = 0;
    size_t off = 0;
    while (rc == 0 && off < len) {
        size_t n = step ? step : len - off;
        if (n > len - off)
            n = len - off;
        rc = http_response_feed(r, text + off, n);
        off += n;
        if (r->len > r->max_body || (r->body && r->body[r->len] != '\0'))
            abort();
    }
    if (rc == 0)
        rc = http_response_feed(r, NULL, 0);
    if (rc == 0)
        abort(); /* EOF always ends the answer, one way or the other */
    if (http_response_feed(r, "x", 1) != rc)
        abort(); /* finished or failed answers stay so */
    if (rc < 0 && !r->error[0] && !r->stopped)
        abort();
    if (r->status < 0 || r->status > 999)
        abort();
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    size_t step = data[0] % 17; /* 0: whole */
    const char *text = (const char *)data + 1;
    size_t len = size - 1;

    struct http_response whole, pieces;
    http_response_init(&whole, MAX_BODY, NULL, NULL);
    http_response_init(&pieces, MAX_BODY, NULL, NULL);
    int a = feed(&whole, text, len, 0);
    int b = feed(&pieces, text, len, step ? step : 1);
    if (a != b || (a == 1 && (whole.status != pieces.status || whole.len != pieces.len ||
                              (whole.len && memcmp(whole.body, pieces.body, whole.len) != 0))))
        abort();

    struct collected c = {.len = 0, .stop_after = data[0] & 0x80 ? 1 : 0};
    struct http_response s;
    http_response_init(&s, 0, on_piece, &c);
    int d = feed(&s, text, len, step);
    if (d == 1 && a == 1 && !c.stop_after &&
        (c.len != whole.len || (c.len && memcmp(c.buf, whole.body, c.len) != 0)))
        abort();
    if (s.body)
        abort(); /* streaming never collects */
    http_response_free(&whole);
    http_response_free(&pieces);
    http_response_free(&s);
    return 0;
}

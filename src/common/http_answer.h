/* http_answer.h — one answer queued on a libmicrohttpd connection, for the three HTTP servers
 * (the daemon's control API and /metrics, the scheduler extender, the admission webhook), the
 * sending half of http_body.h.
 *
 * The text is handed over: freed here on every path (MHD frees it after sending, or this
 * frees it when no response could be made), so a caller never leaks nor frees it twice.
 * `text` NULL answers `fallback` instead (static, not freed): the out-of-memory answer of a
 * caller whose formatting failed. Header-only and included by those servers alone: common's
 * library and the interposer never link microhttpd. */
#ifndef CONVGPU_HTTP_ANSWER_H
#define CONVGPU_HTTP_ANSWER_H

#include <microhttpd.h>
#include <stdlib.h>
#include <string.h>

static inline enum MHD_Result http_answer(struct MHD_Connection *conn, unsigned status,
                                          const char *content_type, char *text, size_t len,
                                          const char *fallback)
{
    struct MHD_Response *r;
    if (text) {
        r = MHD_create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE);
    } else {
        const char *alt = fallback ? fallback : "";
        r = MHD_create_response_from_buffer(strlen(alt), (void *)alt, MHD_RESPMEM_PERSISTENT);
    }
    if (!r) {
        free(text);
        return MHD_NO;
    }
    MHD_add_response_header(r, "Content-Type", content_type);
    enum MHD_Result ret = MHD_queue_response(conn, status, r);
    MHD_destroy_response(r);
    return ret;
}

#endif

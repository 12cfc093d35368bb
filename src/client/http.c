/* http.c — the control API client: HTTP/1.1 over the daemon's UNIX control socket, JSON in and
 * out via jansson, answers decoded by http-parser (http_response.c).
 *
 * Every door into the daemon (convgpu_client.h) uses it and the control socket is its only
 * peer, so a socket, one request written out and a parser is all it takes. It used to be libcurl, which
 * costs every process that talks to the daemon some thirty libraries (6-7 ms here) before the
 * first byte is sent; the shim pays that inside every `docker run` (docs/BENCHMARKS.md). */
#include "http.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "daemon_hint.h"
#include "http_response.h"

#define REQUEST_TIMEOUT_MS 30000
#define MAX_ANSWER (16u << 20) /* a control answer never gets this big */
#define MAX_EVENT_LINE (1u << 20)

static char runtime_dir[PATH_MAX];

void cli_set_runtime_dir(const char *dir)
{
    snprintf(runtime_dir, sizeof runtime_dir, "%s", dir);
}

const char *cli_runtime_dir(void)
{
    if (!runtime_dir[0]) {
        const char *e = getenv("CONVGPU_RUNTIME_DIR");
        snprintf(runtime_dir, sizeof runtime_dir, "%s", e && *e ? e : "/run/convgpu");
    }
    return runtime_dir;
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void unreachable(const char *sock, const char *why, char *error, size_t errlen)
{
    /* The usual cause is not a stopped daemon but a client looking in another directory than
     * the daemon's (a daemon started with --runtime-dir, a client without it). */
    char hint[PATH_MAX + 160];
    cgc_daemon_start_hint(getenv("CONVGPU_HOST_ROOT"), cli_runtime_dir(), hint, sizeof hint);
    snprintf(error, errlen, "cannot reach convgpud at %s: %s (no daemon answers in %s: if "
                            "convgpud runs with another --runtime-dir, give the client the same "
                            "one, convgpu --runtime-dir DIR COMMAND or CONVGPU_RUNTIME_DIR=DIR; "
                            "otherwise %s)",
             sock, why, cli_runtime_dir(), hint);
}

/* Sends one request and reads its answer into r. timeout_ms < 0: wait as long as it takes (a
 * followed event stream). Returns the HTTP status, or 0 with *error. */
static long exchange(const char *method, const char *path, const char *body,
                     struct http_response *r, int timeout_ms, char *error, size_t errlen)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (snprintf(sa.sun_path, sizeof sa.sun_path, "%s/control.sock", cli_runtime_dir()) >=
        (int)sizeof sa.sun_path) {
        snprintf(error, errlen, "the control socket path %s/control.sock is too long",
                 cli_runtime_dir());
        return 0;
    }
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        unreachable(sa.sun_path, strerror(errno), error, errlen);
        if (fd >= 0)
            close(fd);
        return 0;
    }
    size_t blen = body ? strlen(body) : 0;
    char head[1024];
    int hlen = snprintf(head, sizeof head,
                        "%s %s HTTP/1.1\r\nHost: convgpu\r\nConnection: close\r\n"
                        "Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n",
                        method, path, blen);
    if (hlen < 0 || (size_t)hlen >= sizeof head) {
        snprintf(error, errlen, "request path too long");
        close(fd);
        return 0;
    }
    const char *parts[2] = {head, body};
    size_t lens[2] = {(size_t)hlen, blen};
    for (int i = 0; i < 2; i++) {
        for (size_t off = 0; off < lens[i];) {
            ssize_t w = send(fd, parts[i] + off, lens[i] - off, MSG_NOSIGNAL);
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0) {
                unreachable(sa.sun_path, strerror(errno), error, errlen);
                close(fd);
                return 0;
            }
            off += (size_t)w;
        }
    }
    int64_t deadline = timeout_ms < 0 ? -1 : now_ms() + timeout_ms;
    char buf[16384];
    int done = 0;
    while (done == 0) {
        int wait = -1;
        if (deadline >= 0) {
            int64_t left = deadline - now_ms();
            wait = left > 0 ? (int)left : 0;
        }
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        int pr = poll(&pfd, 1, wait);
        if (pr < 0 && errno == EINTR)
            continue;
        if (pr == 0) {
            snprintf(error, errlen, "convgpud did not answer %s %s within %d s", method, path,
                     timeout_ms / 1000);
            close(fd);
            return 0;
        }
        ssize_t n = pr < 0 ? -1 : read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            unreachable(sa.sun_path, strerror(errno), error, errlen);
            close(fd);
            return 0;
        }
        done = http_response_feed(r, buf, (size_t)n);
    }
    close(fd);
    if (done < 0 && !r->stopped) {
        snprintf(error, errlen, "%s", r->error);
        return 0;
    }
    return r->status;
}

long cli_request(const char *method, const char *path, json_t *body, json_t **out, char *error,
                 size_t errlen)
{
    if (out)
        *out = NULL;
    char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
    json_decref(body);
    struct http_response r;
    http_response_init(&r, MAX_ANSWER, NULL, NULL);
    long status = exchange(method, path, text, &r, REQUEST_TIMEOUT_MS, error, errlen);
    if (status && out && r.len) {
        json_error_t jerr;
        *out = json_loadb(r.body, r.len, 0, &jerr);
        if (!*out) {
            snprintf(error, errlen, "daemon answered something that is not JSON: %s", jerr.text);
            status = 0;
        }
    }
    http_response_free(&r);
    free(text);
    return status;
}

void cli_report_error(long status, json_t *answer, const char *transport_error)
{
    if (status == 0) {
        fprintf(stderr, "convgpu: %s\n", transport_error);
        return;
    }
    const char *msg = json_string_value(json_object_get(answer, "error"));
    fprintf(stderr, "convgpu: %s (HTTP %ld)\n", msg ? msg : "unexpected answer from the daemon",
            status);
}

struct stream {
    int (*on_line)(const char *line, void *ctx);
    void *ctx;
    char *pending;
    size_t len;
};

/* Splits the body into lines as it arrives; non-zero stops the stream. */
static int stream_chunk(const char *data, size_t add, void *ud)
{
    struct stream *st = ud;
    if (st->len + add > MAX_EVENT_LINE)
        return -1; /* no event line is this long */
    char *nb = realloc(st->pending, st->len + add + 1);
    if (!nb)
        return -1;
    memcpy(nb + st->len, data, add);
    st->pending = nb;
    st->len += add;
    st->pending[st->len] = '\0';
    char *start = st->pending, *nl;
    while ((nl = memchr(start, '\n', st->len - (size_t)(start - st->pending)))) {
        *nl = '\0';
        if (st->on_line(start, st->ctx) != 0)
            return -1;
        start = nl + 1;
    }
    size_t rest = st->len - (size_t)(start - st->pending);
    memmove(st->pending, start, rest);
    st->len = rest;
    return 0;
}

long cli_stream(const char *path, int (*on_line)(const char *line, void *ctx), void *ctx,
                char *error, size_t errlen)
{
    struct stream st = {.on_line = on_line, .ctx = ctx};
    struct http_response r;
    http_response_init(&r, 0, stream_chunk, &st);
    long status = exchange("GET", path, NULL, &r, -1, error, errlen);
    free(st.pending);
    return status;
}

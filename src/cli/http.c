/* http.c — libcurl over the daemon's UNIX control socket, JSON in and out via jansson.
 *
 * libcurl is loaded on the first request, not at program start. The OCI shim shares this file
 * and is exec'd several times for every container start; most of those invocations never talk
 * to the daemon, and linking libcurl would make each of them load some thirty libraries (~7 ms)
 * before main. */
#include "http.h"

#define CURL_DISABLE_TYPECHECK 1
#include <curl/curl.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


static struct {
    CURL *(*easy_init)(void);
    CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
    CURLcode (*easy_perform)(CURL *);
    CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
    void (*easy_cleanup)(CURL *);
    const char *(*easy_strerror)(CURLcode);
    struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
    void (*slist_free_all)(struct curl_slist *);
} cu;

/* Loads libcurl once; NULL on success, else why not. */
static const char *curl_load(void)
{
    static void *handle;
    static const char *failure;
    if (handle || failure)
        return failure;
    handle = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
    if (!handle)
        return failure = "cannot load libcurl.so.4 (install Debian's libcurl4)";
#define LOAD(field, name)                                    \
    if (!(*(void **)&cu.field = dlsym(handle, name)))        \
        return failure = "libcurl.so.4 lacks " name;
    LOAD(easy_init, "curl_easy_init")
    LOAD(easy_setopt, "curl_easy_setopt")
    LOAD(easy_perform, "curl_easy_perform")
    LOAD(easy_getinfo, "curl_easy_getinfo")
    LOAD(easy_cleanup, "curl_easy_cleanup")
    LOAD(easy_strerror, "curl_easy_strerror")
    LOAD(slist_append, "curl_slist_append")
    LOAD(slist_free_all, "curl_slist_free_all")
#undef LOAD
    return NULL;
}

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

struct buf {
    char *data;
    size_t len;
};

static size_t collect(char *ptr, size_t size, size_t n, void *ud)
{
    struct buf *b = ud;
    size_t add = size * n;
    if (b->len + add > (16u << 20))
        return 0; /* a control answer never gets this big */
    char *nd = realloc(b->data, b->len + add + 1);
    if (!nd)
        return 0;
    memcpy(nd + b->len, ptr, add);
    b->data = nd;
    b->len += add;
    b->data[b->len] = '\0';
    return add;
}

long cli_request(const char *method, const char *path, json_t *body, json_t **out, char *error,
                 size_t errlen)
{
    if (out)
        *out = NULL;
    char sock[PATH_MAX + 16], url[512];
    snprintf(sock, sizeof sock, "%s/control.sock", cli_runtime_dir());
    snprintf(url, sizeof url, "http://convgpu%s", path);
    const char *why = curl_load();
    CURL *c = why ? NULL : cu.easy_init();
    if (!c) {
        snprintf(error, errlen, "%s", why ? why : "cannot initialise libcurl");
        json_decref(body);
        return 0;
    }
    char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
    json_decref(body);
    struct buf b = {0};
    struct curl_slist *hdr = cu.slist_append(NULL, "Content-Type: application/json");
    cu.easy_setopt(c, CURLOPT_UNIX_SOCKET_PATH, sock);
    cu.easy_setopt(c, CURLOPT_URL, url);
    cu.easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    cu.easy_setopt(c, CURLOPT_HTTPHEADER, hdr);
    cu.easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
    cu.easy_setopt(c, CURLOPT_WRITEDATA, &b);
    cu.easy_setopt(c, CURLOPT_TIMEOUT, 30L);
    cu.easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    if (text)
        cu.easy_setopt(c, CURLOPT_POSTFIELDS, text);
    CURLcode rc = cu.easy_perform(c);
    long status = 0;
    if (rc != CURLE_OK) {
        snprintf(error, errlen, "cannot reach convgpud at %s: %s (is the daemon running? "
                                "start it with: convgpud --runtime-dir %s --emulate 5GiB)",
                 sock, cu.easy_strerror(rc), cli_runtime_dir());
    } else {
        cu.easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
        if (out && b.len) {
            json_error_t jerr;
            *out = json_loadb(b.data, b.len, 0, &jerr);
            if (!*out) {
                snprintf(error, errlen, "daemon answered something that is not JSON: %s", jerr.text);
                status = 0;
            }
        }
    }
    cu.slist_free_all(hdr);
    cu.easy_cleanup(c);
    free(text);
    free(b.data);
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
    bool stop;
};

static size_t stream_chunk(char *ptr, size_t size, size_t n, void *ud)
{
    struct stream *st = ud;
    size_t add = size * n;
    if (st->len + add > (1u << 20))
        return 0; /* no event line is this long */
    char *nb = realloc(st->pending, st->len + add + 1);
    if (!nb)
        return 0;
    memcpy(nb + st->len, ptr, add);
    st->pending = nb;
    st->len += add;
    st->pending[st->len] = '\0';
    char *start = st->pending, *nl;
    while ((nl = memchr(start, '\n', st->len - (size_t)(start - st->pending)))) {
        *nl = '\0';
        if (st->on_line(start, st->ctx) != 0) {
            st->stop = true;
            return 0;
        }
        start = nl + 1;
    }
    size_t rest = st->len - (size_t)(start - st->pending);
    memmove(st->pending, start, rest);
    st->len = rest;
    return add;
}

long cli_stream(const char *path, int (*on_line)(const char *line, void *ctx), void *ctx,
                char *error, size_t errlen)
{
    char sock[PATH_MAX + 16], url[512];
    snprintf(sock, sizeof sock, "%s/control.sock", cli_runtime_dir());
    snprintf(url, sizeof url, "http://convgpu%s", path);
    const char *why = curl_load();
    CURL *c = why ? NULL : cu.easy_init();
    if (!c) {
        snprintf(error, errlen, "%s", why ? why : "cannot initialise libcurl");
        return 0;
    }
    struct stream st = {.on_line = on_line, .ctx = ctx};
    cu.easy_setopt(c, CURLOPT_UNIX_SOCKET_PATH, sock);
    cu.easy_setopt(c, CURLOPT_URL, url);
    cu.easy_setopt(c, CURLOPT_WRITEFUNCTION, stream_chunk);
    cu.easy_setopt(c, CURLOPT_WRITEDATA, &st);
    cu.easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    CURLcode rc = cu.easy_perform(c);
    long status = 0;
    cu.easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    if (rc != CURLE_OK && !st.stop && status == 0)
        snprintf(error, errlen, "cannot reach convgpud at %s: %s", sock, cu.easy_strerror(rc));
    cu.easy_cleanup(c);
    free(st.pending);
    return status;
}

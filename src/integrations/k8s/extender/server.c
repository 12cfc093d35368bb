/* server.c — the extender's HTTP server (the path of one request is in server.h). */
#include "server.h"

#include <jansson.h>
#include <microhttpd.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "args.h"
#include "verbs.h"

struct k8s_server {
    struct MHD_Daemon *mhd;
    cg_cluster_policy policy;
    size_t max_body;
};

struct request {
    char *body;
    size_t len;
    bool too_big;
};

static enum MHD_Result send_json(struct MHD_Connection *conn, unsigned status, json_t *v)
{
    char *text = v ? json_dumps(v, JSON_COMPACT) : NULL;
    json_decref(v);
    if (!text) {
        static const char oom[] = "{\"error\":\"out of memory\"}";
        struct MHD_Response *r = MHD_create_response_from_buffer(sizeof oom - 1, (void *)oom,
                                                                 MHD_RESPMEM_PERSISTENT);
        if (!r)
            return MHD_NO;
        MHD_add_response_header(r, "Content-Type", "application/json");
        enum MHD_Result ret = MHD_queue_response(conn, 500, r);
        MHD_destroy_response(r);
        return ret;
    }
    struct MHD_Response *r =
        MHD_create_response_from_buffer(strlen(text), text, MHD_RESPMEM_MUST_FREE);
    if (!r) {
        free(text);
        return MHD_NO;
    }
    MHD_add_response_header(r, "Content-Type", "application/json");
    enum MHD_Result ret = MHD_queue_response(conn, status, r);
    MHD_destroy_response(r);
    return ret;
}

__attribute__((format(printf, 4, 5))) static enum MHD_Result
send_error(struct MHD_Connection *conn, unsigned status, const char *url, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "convgpu-scheduler-extender: %s: %u %s\n", url, status, msg);
    return send_json(conn, status, json_pack("{s:s}", "error", msg));
}

/* The verb is the URL's last segment, so any urlPrefix (with or without a path) works. */
static const char *verb_of(const char *url)
{
    const char *slash = strrchr(url, '/');
    return slash ? slash + 1 : url;
}

static enum MHD_Result route(struct k8s_server *s, struct MHD_Connection *conn, const char *url,
                             const char *method, const struct request *rq)
{
    const char *verb = verb_of(url);
    bool post = strcmp(method, "POST") == 0;
    char err[512];
    if (strcmp(verb, "healthz") == 0 && strcmp(method, "GET") == 0)
        return send_json(conn, 200, json_pack("{s:s,s:s}", "status", "ok", "policy",
                                              cg_cluster_policy_name(s->policy)));
    bool filter = strcmp(verb, "filter") == 0, prioritize = strcmp(verb, "prioritize") == 0;
    bool bind = strcmp(verb, "bind") == 0;
    if (!filter && !prioritize && !bind)
        return send_error(conn, 404, url, "unknown resource %s (POST .../filter, .../prioritize "
                                          "or .../bind; GET .../healthz)", url);
    if (!post)
        return send_error(conn, 405, url, "%s takes POST, not %s", verb, method);
    if (rq->too_big)
        return send_error(conn, 413, url, "request body larger than %zu bytes (--max-body)",
                          s->max_body);
    if (bind) {
        struct k8s_binding b;
        if (k8s_binding_decode(rq->body ? rq->body : "", rq->len, &b, err, sizeof err) != 0)
            return send_error(conn, 400, url, "malformed ExtenderBindingArgs: %s", err);
        json_t *ans = k8s_bind(&b);
        k8s_binding_free(&b);
        return send_json(conn, 200, ans);
    }
    struct k8s_args a;
    if (k8s_args_decode(rq->body ? rq->body : "", rq->len, &a, err, sizeof err) != 0)
        return send_error(conn, 400, url, "malformed ExtenderArgs: %s", err);
    json_t *ans = filter ? k8s_filter(&a, s->policy) : k8s_prioritize(&a, s->policy);
    k8s_args_free(&a);
    if (!ans)
        return send_error(conn, 500, url, "out of memory");
    return send_json(conn, 200, ans);
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *conn, const char *url,
                               const char *method, const char *version, const char *upload,
                               size_t *upload_size, void **con_cls)
{
    (void)version;
    struct k8s_server *s = cls;
    struct request *rq = *con_cls;
    if (!rq) {
        rq = calloc(1, sizeof *rq);
        if (!rq)
            return MHD_NO;
        *con_cls = rq;
        return MHD_YES;
    }
    if (*upload_size) {
        if (rq->too_big || rq->len + *upload_size > s->max_body) {
            rq->too_big = true; /* read and dropped: the answer is 413 */
            free(rq->body);
            rq->body = NULL;
            rq->len = 0;
        } else {
            char *nb = realloc(rq->body, rq->len + *upload_size + 1);
            if (!nb)
                return MHD_NO;
            memcpy(nb + rq->len, upload, *upload_size);
            rq->body = nb;
            rq->len += *upload_size;
            rq->body[rq->len] = '\0';
        }
        *upload_size = 0;
        return MHD_YES;
    }
    return route(s, conn, url, method, rq);
}

static void completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                      enum MHD_RequestTerminationCode toe)
{
    (void)cls;
    (void)conn;
    (void)toe;
    struct request *rq = *con_cls;
    if (rq) {
        free(rq->body);
        free(rq);
        *con_cls = NULL;
    }
}

struct k8s_server *k8s_server_start(int listen_fd, cg_cluster_policy policy, size_t max_body,
                                    char *err, size_t errlen)
{
    struct k8s_server *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, errlen, "out of memory");
        close(listen_fd);
        return NULL;
    }
    s->policy = policy;
    s->max_body = max_body;
    s->mhd = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL |
                                  MHD_USE_ERROR_LOG,
                              0, NULL, NULL, handler, s, MHD_OPTION_LISTEN_SOCKET, listen_fd,
                              MHD_OPTION_NOTIFY_COMPLETED, completed, NULL,
                              MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)30,
                              MHD_OPTION_CONNECTION_LIMIT, (unsigned)256, MHD_OPTION_END);
    if (!s->mhd) {
        snprintf(err, errlen, "cannot start the HTTP server");
        close(listen_fd);
        free(s);
        return NULL;
    }
    return s;
}

void k8s_server_stop(struct k8s_server *s)
{
    if (!s)
        return;
    MHD_stop_daemon(s->mhd); /* closes the listening socket too */
    free(s);
}

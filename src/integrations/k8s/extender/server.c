/* server.c — the extender's HTTP server (the path of one request is in server.h; what a
 * connection may hold and for how long, in guard.h). libmicrohttpd serves on one internal
 * thread; a second thread, the reaper, closes requests at their deadline. */
#include "server.h"

#include <jansson.h>
#include <malloc.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "args.h"
#include "guard.h"
#include "http_answer.h"
#include "http_body.h"
#include "verbs.h"

/* A request this large decodes into a tree of ~5x its size in small blocks, which the heap
 * keeps after they are freed unless asked to give them back. */
#define TRIM_AFTER_BYTES (1u << 20)

/* libmicrohttpd says a line per connection it drops; a client can make those at will, so at
 * most this many a second reach stderr (and then how many were left out). */
#define MHD_LOG_LINES_PER_S 10

/* How often at most the reaper reports what the guard closed (under attack: every 10 s). */
#define REPORT_EVERY_NS (10ull * 1000000000ull)

struct k8s_server {
    struct MHD_Daemon *mhd;
    cg_cluster_policy policy;
    size_t max_body;
    bool unix_listener; /* peers are told apart by uid, else by address */
    struct guard guard;
    pthread_t reaper;
    bool reaper_started;
    pthread_mutex_t reaper_lock;
    pthread_cond_t reaper_wake;
    bool stopping;
    uint64_t log_second;       /* the second the lines below are counted in (server thread) */
    unsigned log_lines;        /* said in it */
    unsigned long log_dropped; /* left out since the last line said */
};

struct request {
    struct http_body in;  /* first (http_body.h): whether it passed --max-body */
    size_t answer_bytes;
};

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The guard's way to close a connection: the server sees the hang-up in its loop and closes
 * the descriptor itself (after telling the guard), so the descriptor cannot be reused under us.
 * The close is abortive (a reset): a client still sending would otherwise wait, its window
 * shut, until the kernel dropped the orphaned socket (a minute). */
static void kick(int fd)
{
    struct linger abort_on_close = {.l_onoff = 1, .l_linger = 0};
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &abort_on_close, sizeof abort_on_close);
    shutdown(fd, SHUT_RDWR);
}

static enum MHD_Result send_json(struct request *rq, struct MHD_Connection *conn,
                                 unsigned status, json_t *v)
{
    char *text = v ? json_dumps(v, JSON_COMPACT) : NULL;
    json_decref(v);
    if (!text)
        return http_answer(conn, 500, "application/json", NULL, 0,
                           "{\"error\":\"out of memory\"}");
    rq->answer_bytes = strlen(text);
    return http_answer(conn, status, "application/json", text, rq->answer_bytes, NULL);
}

__attribute__((format(printf, 5, 6))) static enum MHD_Result
send_error(struct request *rq, struct MHD_Connection *conn, unsigned status, const char *url,
           const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "convgpu-scheduler-extender: %s: %u %s\n", url, status, msg);
    return send_json(rq, conn, status, json_pack("{s:s}", "error", msg));
}

/* The verb is the URL's last segment, so any urlPrefix (with or without a path) works. */
static const char *verb_of(const char *url)
{
    const char *slash = strrchr(url, '/');
    return slash ? slash + 1 : url;
}

static enum MHD_Result route(struct k8s_server *s, struct MHD_Connection *conn, const char *url,
                             const char *method, struct request *rq, const char *body,
                             size_t len)
{
    const char *verb = verb_of(url);
    bool post = strcmp(method, "POST") == 0;
    char err[512];
    if (strcmp(verb, "healthz") == 0 && strcmp(method, "GET") == 0)
        return send_json(rq, conn, 200, json_pack("{s:s,s:s}", "status", "ok", "policy",
                                              cg_cluster_policy_name(s->policy)));
    bool filter = strcmp(verb, "filter") == 0, prioritize = strcmp(verb, "prioritize") == 0;
    bool bind = strcmp(verb, "bind") == 0;
    if (!filter && !prioritize && !bind)
        return send_error(rq, conn, 404, url,
                          "unknown resource %s (POST .../filter, .../prioritize or .../bind; "
                          "GET .../healthz)", url);
    if (!post)
        return send_error(rq, conn, 405, url, "%s takes POST, not %s", verb, method);
    if (rq->in.too_big)
        return send_error(rq, conn, 413, url, "request body larger than %zu bytes (--max-body)",
                          s->max_body);
    if (bind) {
        struct k8s_binding b;
        if (k8s_binding_decode(body, len, &b, err, sizeof err) != 0)
            return send_error(rq, conn, 400, url, "malformed ExtenderBindingArgs: %s", err);
        json_t *ans = k8s_bind(&b);
        k8s_binding_free(&b);
        return send_json(rq, conn, 200, ans);
    }
    struct k8s_args a;
    if (k8s_args_decode(body, len, &a, err, sizeof err) != 0)
        return send_error(rq, conn, 400, url, "malformed ExtenderArgs: %s", err);
    a.now = (int64_t)time(NULL); /* how long a GPU's containers have waited (node_gpus.h) */
    json_t *ans = filter ? k8s_filter(&a, s->policy) : k8s_prioritize(&a, s->policy);
    k8s_args_free(&a);
    if (!ans)
        return send_error(rq, conn, 500, url, "out of memory");
    return send_json(rq, conn, 200, ans);
}

__attribute__((format(printf, 2, 0))) static void mhd_log(void *cls, const char *fmt, va_list ap)
{
    struct k8s_server *s = cls;
    uint64_t second = now_ns() / 1000000000ull;
    if (second != s->log_second) {
        if (s->log_dropped)
            fprintf(stderr, "convgpu-scheduler-extender: (%lu more lines from the HTTP server "
                            "left out)\n", s->log_dropped);
        s->log_second = second;
        s->log_lines = 0;
        s->log_dropped = 0;
    }
    if (s->log_lines >= MHD_LOG_LINES_PER_S) {
        s->log_dropped++;
        return;
    }
    s->log_lines++;
    vfprintf(stderr, fmt, ap);
}

static struct guard_conn *guard_conn_of(struct MHD_Connection *conn)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci ? ci->socket_context : NULL;
}

/* Where a request's body goes: its connection's account in the guard. */
struct feed {
    struct guard *guard;
    struct guard_conn *gc;
};

/* A chunk of a body (http_body.h), held and counted by the guard: -1 when the guard closed the
 * connection (late, crowded out, over the budget), 1 when it passed --max-body (dropped: 413). */
static int append_body(void *ctx, void *req, const char *data, size_t n)
{
    (void)req;
    struct feed *f = ctx;
    return guard_append(f->guard, f->gc, data, n);
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *conn, const char *url,
                               const char *method, const char *version, const char *upload,
                               size_t *upload_size, void **con_cls)
{
    (void)version;
    struct k8s_server *s = cls;
    struct guard_conn *gc = guard_conn_of(conn);
    if (!gc)
        return MHD_NO; /* refused when it opened */
    struct feed f = {&s->guard, gc};
    switch (http_body_feed(con_cls, sizeof(struct request), upload, upload_size, append_body,
                           &f)) {
    case HTTP_BODY_MORE: return MHD_YES;
    case HTTP_BODY_FAILED: return MHD_NO;
    case HTTP_BODY_COMPLETE: break;
    }
    struct request *rq = *con_cls;
    size_t len;
    char *body = guard_take(&s->guard, gc, &len);
    if (!body)
        return MHD_NO;
    enum MHD_Result ret = route(s, conn, url, method, rq, body, len);
    free(body);
    guard_answering(&s->guard, gc, rq->answer_bytes);
    if (len >= TRIM_AFTER_BYTES)
        malloc_trim(0);
    return ret;
}

static void completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                      enum MHD_RequestTerminationCode toe)
{
    (void)toe;
    struct k8s_server *s = cls;
    struct guard_conn *gc = guard_conn_of(conn);
    if (gc)
        guard_done(&s->guard, gc, now_ns());
    free(*con_cls);
    *con_cls = NULL;
}

/* Who is behind a connection: a UNIX client's uid (kube-scheduler's differs from a local
 * attacker's), a TCP client's address. */
static uint64_t peer_of(const struct k8s_server *s, struct MHD_Connection *conn, int fd)
{
    if (s->unix_listener) {
        struct ucred cred;
        socklen_t len = sizeof cred;
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0)
            return guard_peer_uid(cred.uid);
        return guard_peer_uid((unsigned)-1);
    }
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    const struct sockaddr *sa = ci ? ci->client_addr : NULL;
    if (sa && sa->sa_family == AF_INET)
        return guard_peer_addr(&((const struct sockaddr_in *)(const void *)sa)->sin_addr,
                               sizeof(struct in_addr));
    if (sa && sa->sa_family == AF_INET6)
        return guard_peer_addr(&((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr,
                               sizeof(struct in6_addr));
    return guard_peer_addr("", 0);
}

/* Runs in the server's thread: a new connection is counted (and may crowd out another), a
 * closed one is forgotten before its descriptor is closed. */
static void notify_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                              enum MHD_ConnectionNotificationCode toe)
{
    struct k8s_server *s = cls;
    if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
        if (!ci)
            return;
        int fd = ci->connect_fd;
        *socket_context = guard_open(&s->guard, fd, peer_of(s, conn, fd), now_ns());
        if (!*socket_context)
            kick(fd); /* out of memory: refused */
    } else if (toe == MHD_CONNECTION_NOTIFY_CLOSED && *socket_context) {
        guard_closed(&s->guard, *socket_context);
        *socket_context = NULL;
    }
}

static void report(struct k8s_server *s, struct guard_stats *last)
{
    struct guard_stats now = guard_stats(&s->guard);
    if (now.late == last->late && now.crowded == last->crowded && now.heavy == last->heavy)
        return;
    fprintf(stderr,
            "convgpu-scheduler-extender: closed %llu requests at their deadline, %llu "
            "connections to make room for new ones (--max-connections), %llu to stay within "
            "--body-budget (totals since start)\n",
            (unsigned long long)now.late, (unsigned long long)now.crowded,
            (unsigned long long)now.heavy);
    *last = now;
}

/* Closes requests at their deadline: sleeps until the earliest one is due. */
static void *reaper(void *arg)
{
    struct k8s_server *s = arg;
    struct guard_stats reported = {0};
    uint64_t next_report = 0;
    pthread_mutex_lock(&s->reaper_lock);
    while (!s->stopping) {
        uint64_t now = now_ns(), next = guard_expire(&s->guard, now);
        if (now >= next_report) {
            report(s, &reported);
            next_report = now + REPORT_EVERY_NS;
        }
        struct timespec until = {.tv_sec = (time_t)(next / 1000000000ull),
                                 .tv_nsec = (long)(next % 1000000000ull)};
        pthread_cond_timedwait(&s->reaper_wake, &s->reaper_lock, &until);
    }
    pthread_mutex_unlock(&s->reaper_lock);
    return NULL;
}

static void stop_reaper(struct k8s_server *s)
{
    if (!s->reaper_started)
        return;
    pthread_mutex_lock(&s->reaper_lock);
    s->stopping = true;
    pthread_cond_signal(&s->reaper_wake);
    pthread_mutex_unlock(&s->reaper_lock);
    pthread_join(s->reaper, NULL);
    s->reaper_started = false;
}

static void server_free(struct k8s_server *s)
{
    pthread_cond_destroy(&s->reaper_wake);
    pthread_mutex_destroy(&s->reaper_lock);
    guard_destroy(&s->guard);
    free(s);
}

struct k8s_server *k8s_server_start(int listen_fd, const struct k8s_server_limits *lim,
                                    cg_cluster_policy policy, char *err, size_t errlen)
{
    struct k8s_server *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, errlen, "out of memory");
        close(listen_fd);
        return NULL;
    }
    s->policy = policy;
    s->max_body = lim->max_body;
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    s->unix_listener = getsockname(listen_fd, (struct sockaddr *)&ss, &sl) == 0 &&
                       ss.ss_family == AF_UNIX;
    struct guard_limits gl = {.max_conns = lim->max_conns, .budget = lim->body_budget,
                              .max_body = lim->max_body,
                              .deadline_ns = (uint64_t)lim->request_timeout_s * 1000000000ull};
    guard_init(&s->guard, &gl, kick);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&s->reaper_wake, &ca);
    pthread_condattr_destroy(&ca);
    pthread_mutex_init(&s->reaper_lock, NULL);
    /* The server's own limit only has to leave room for connections the guard closed and the
     * server has not yet reaped; the guard holds the real one. */
    unsigned mhd_limit = (unsigned)(lim->max_conns + lim->max_conns / 4 + 16);
    s->mhd = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL |
                                  MHD_USE_ERROR_LOG,
                              0, NULL, NULL, handler, s, MHD_OPTION_LISTEN_SOCKET, listen_fd,
                              MHD_OPTION_NOTIFY_COMPLETED, completed, s,
                              MHD_OPTION_NOTIFY_CONNECTION, notify_connection, s,
                              /* for a stalled reader of an answer (requests: the guard) */
                              MHD_OPTION_CONNECTION_TIMEOUT, lim->request_timeout_s,
                              MHD_OPTION_CONNECTION_LIMIT, mhd_limit,
                              MHD_OPTION_EXTERNAL_LOGGER, mhd_log, s, MHD_OPTION_END);
    if (!s->mhd) {
        snprintf(err, errlen, "cannot start the HTTP server");
        close(listen_fd);
        server_free(s);
        return NULL;
    }
    if (pthread_create(&s->reaper, NULL, reaper, s) != 0) {
        snprintf(err, errlen, "cannot start the request reaper");
        MHD_stop_daemon(s->mhd);
        server_free(s);
        return NULL;
    }
    s->reaper_started = true;
    return s;
}

void k8s_server_stop(struct k8s_server *s)
{
    if (!s)
        return;
    stop_reaper(s);
    MHD_stop_daemon(s->mhd); /* closes the listening socket and every connection too */
    server_free(s);
}

/* api.c — the control API: HTTP/1.1 + JSON on a UNIX socket (curl --unix-socket works), served
 * by libmicrohttpd inside the daemon's epoll loop, JSON by jansson. Routes (all under /v1):
 *
 *   GET    /v1/version                    daemon and API version
 *   GET    /v1/devices                    capacity, reserve, assigned, used, context charge
 *   GET    /v1/containers                 every container
 *   POST   /v1/containers                 create {"gpu_memory": "1GiB", "name", "id", "device",
 *                                         "auto_remove"}; answers the container and the env its
 *                                         processes need
 *   GET    /v1/containers/{id}            inspect (processes, pending requests, suspension)
 *   DELETE /v1/containers/{id}            remove; its assignment returns at once
 *   PUT    /v1/containers/{id}/limit      {"gpu_memory": SIZE}: lowering below use is refused
 *   POST   /v1/containers/{id}/start      {"pid": N, "auto_remove": BOOL}: the container's init
 *                                         (host pid); auto_remove: removed when it exits
 *   GET    /v1/policy, PUT /v1/policy     {"resume": NAME, "placement": NAME}
 *   GET    /v1/events?since=N             recent decision events (ring buffer), oldest first
 *
 * Every request body is parsed strictly: unknown fields, wrong types and bad sizes are a 400 with
 * a message saying what to send instead, and change nothing. Callers are identified by
 * SO_PEERCRED; a non-root caller may only touch containers it created. */
#include "api.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <microhttpd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "api_parse.h"
#include "log.h"
#include "metrics.h"
#include "size.h"
#include "store.h"

#define API_VERSION 1
#define MAX_BODY (64 * 1024)
#define EVENT_RING 4096
#define API_PENDING_LISTED 256 /* pending requests listed by inspect, oldest first */

struct event_rec {
    uint64_t seq;
    double time;           /* wall clock, seconds */
    const char *type;      /* static strings */
    const char *reason;
    char container[CONTAINER_ID_MAX + 1];
    unsigned device;       /* UINT32_MAX: not about a device */
    int pid;
    uint64_t bytes;
};

/* A client following /v1/events?follow=1: its connection is suspended while it has seen
 * everything and resumed when an event arrives. */
struct subscriber {
    struct api *a;
    struct MHD_Connection *conn;
    uint64_t next;
    bool suspended;
    struct subscriber *prev, *next_sub;
};

#define MAX_SUBSCRIBERS 64

struct api {
    struct daemon *d;
    struct MHD_Daemon *mhd;
    int epfd;
    struct subscriber *subs;
    unsigned nsubs;
    bool stopping;   /* followers end their stream instead of waiting */
    bool need_run;   /* connections were resumed: run MHD once the current callback returns */
    struct event_rec ring[EVENT_RING];
    uint64_t next_seq;
};

struct request_ctx {
    char *body;
    size_t len;
    bool too_big;
};

/* ---- responses ---------------------------------------------------------------------------- */

static enum MHD_Result send_json(struct MHD_Connection *conn, unsigned status, json_t *obj)
{
    char *text = json_dumps(obj, JSON_COMPACT);
    json_decref(obj);
    if (!text)
        return MHD_NO;
    size_t n = strlen(text);
    text[n] = '\n'; /* replace the terminator: one JSON document per line */
    struct MHD_Response *r =
        MHD_create_response_from_buffer(n + 1, text, MHD_RESPMEM_MUST_FREE);
    if (!r) {
        free(text);
        return MHD_NO;
    }
    MHD_add_response_header(r, "Content-Type", "application/json");
    enum MHD_Result ret = MHD_queue_response(conn, status, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result send_error(struct MHD_Connection *conn, unsigned status, const char *fmt,
                                  ...) __attribute__((format(printf, 3, 4)));
static enum MHD_Result send_error(struct MHD_Connection *conn, unsigned status, const char *fmt,
                                  ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return send_json(conn, status, json_pack("{s:s}", "error", msg));
}

/* ---- views -------------------------------------------------------------------------------- */

static json_t *device_json(struct daemon *d, unsigned i)
{
    cg_device_info di = {0};
    cg_device_get(d->core, i, &di);
    uint64_t used = device_used_bytes(d, i);
    return json_pack("{s:I,s:s,s:s,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I}", "index", (json_int_t)i,
                     "name", d->devices[i].name, "uuid", d->devices[i].uuid, "total",
                     (json_int_t)di.total, "reserve", (json_int_t)di.reserve, "capacity",
                     (json_int_t)di.capacity, "assigned", (json_int_t)di.assigned, "used",
                     (json_int_t)used, "free", (json_int_t)di.free, "context_charge",
                     (json_int_t)di.context_charge, "containers", (json_int_t)di.ncontainers,
                     "suspended", (json_int_t)di.nsuspended);
}

static json_t *version_json(const struct daemon *d)
{
    return json_pack("{s:s,s:i,s:s,s:i}", "version", CONVGPU_VERSION, "api", API_VERSION, "mode",
                     d->opt.emulate[0] ? "emulated" : "nvidia", "pid", (int)getpid());
}

static json_t *container_env_json(struct daemon *d, struct container *c)
{
    json_t *env = json_object();
    json_object_set_new(env, "LD_PRELOAD", json_string(d->lib_path));
    json_object_set_new(env, "CONVGPU_SOCKET", json_string(c->sock_path));
    const char *uuid = d->devices[c->device].uuid;
    char idx[16];
    snprintf(idx, sizeof idx, "%u", c->device);
    json_object_set_new(env, "CUDA_VISIBLE_DEVICES", json_string(uuid[0] ? uuid : idx));
    if (d->opt.emulate[0]) {
        json_object_set_new(env, "LD_LIBRARY_PATH", json_string(d->emu_dir));
        json_object_set_new(env, "CONVGPU_EMU_DEVICES", json_string(d->opt.emulate));
        json_object_set_new(env, "CONVGPU_EMU_STATE", json_string(d->emu_state));
        const char *ctx = getenv("CONVGPU_EMU_CONTEXT");
        if (ctx)
            json_object_set_new(env, "CONVGPU_EMU_CONTEXT", json_string(ctx));
        const char *gran = getenv("CONVGPU_EMU_GRANULARITY");
        if (gran)
            json_object_set_new(env, "CONVGPU_EMU_GRANULARITY", json_string(gran));
    }
    return env;
}

static json_t *container_json(struct daemon *d, struct container *c, bool detail)
{
    uint64_t now = loop_now_ns();
    cg_container_info ci = {0};
    cg_container_get(d->core, c->cid, now, &ci);
    json_t *o = json_pack(
        "{s:s,s:s,s:I,s:I,s:I,s:I,s:s,s:I,s:f,s:I,s:I}", "id", c->id, "name", c->name, "device",
        (json_int_t)c->device, "limit", (json_int_t)ci.limit, "assigned", (json_int_t)ci.assigned,
        "used", (json_int_t)container_used_bytes(c), "state",
        ci.state == CG_STATE_SUSPENDED ? "suspended" : "running", "created", (json_int_t)c->created_unix,
        "suspended_total_s", (double)ci.total_suspended / 1e9, "processes",
        (json_int_t)ci.nprocesses, "pending", (json_int_t)ci.npending);
    if (!o)
        return NULL;
    if (ci.state == CG_STATE_SUSPENDED)
        json_object_set_new(o, "suspended_for_s",
                            json_real((double)(now - ci.suspended_since) / 1e9));
    if (!detail)
        return o;
    json_object_set_new(o, "socket", json_string(c->sock_path));
    json_object_set_new(o, "dir", json_string(c->dir));
    json_object_set_new(o, "auto_remove", json_boolean(c->auto_remove));
    json_object_set_new(o, "owner_pid", json_integer(c->owner_pid));
    json_object_set_new(o, "uid", json_integer((json_int_t)c->owner_uid));
    if (c->init_pid > 0)
        json_object_set_new(o, "init_pid", json_integer(c->init_pid));
    json_object_set_new(o, "committed", json_integer((json_int_t)ci.used));
    json_t *procs = json_array();
    for (struct proc *p = c->procs; p; p = p->next) {
        if (!p->welcomed)
            continue;
        unsigned waiting = pending_count_proc(p);
        json_array_append_new(procs, json_pack("{s:i,s:I,s:i,s:b,s:i}", "pid", (int)p->pid, "used",
                                               (json_int_t)proc_used_bytes(p), "slot", (int)p->slot,
                                               "connected", p->fd >= 0, "pending", (int)waiting));
    }
    json_object_set_new(o, "process_list", procs);
    /* The oldest requests only: a flooded container's whole list would stall the loop. */
    json_t *pend = json_array();
    unsigned listed = 0;
    for (struct pending *r = c->pending; r && listed < API_PENDING_LISTED; r = r->next, listed++)
        json_array_append_new(pend, json_pack("{s:i,s:I,s:f}", "pid", r->proc ? (int)r->proc->pid : 0,
                                              "bytes", (json_int_t)r->bytes, "waiting_s",
                                              (double)(now - r->since) / 1e9));
    json_object_set_new(o, "pending_requests", pend);
    if (pending_count(c) > listed)
        json_object_set_new(o, "pending_requests_omitted",
                            json_integer((json_int_t)(pending_count(c) - listed)));
    return o;
}

/* ---- events ------------------------------------------------------------------------------ */

/* Recording an event is on every decision's path, so it is a fixed-size copy into a ring;
 * JSON is built only when someone reads /v1/events. */
static void ring_push(struct api *a, const char *type, const char *reason, const char *cid,
                      unsigned device, int pid, uint64_t bytes)
{
    struct event_rec *r = &a->ring[a->next_seq % EVENT_RING];
    r->seq = a->next_seq++;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    r->time = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
    r->type = type;
    r->reason = reason;
    snprintf(r->container, sizeof r->container, "%s", cid ? cid : "");
    r->device = device;
    r->pid = pid;
    r->bytes = bytes;
    for (struct subscriber *sub = a->subs; sub; sub = sub->next_sub) {
        if (sub->suspended) {
            sub->suspended = false;
            MHD_resume_connection(sub->conn);
            a->need_run = true;
        }
    }
}

static json_t *event_json(const struct event_rec *r)
{
    json_t *o = json_pack("{s:I,s:f,s:s,s:s,s:I}", "seq", (json_int_t)r->seq, "time", r->time,
                          "type", r->type, "container", r->container, "bytes",
                          (json_int_t)r->bytes);
    if (!o)
        return NULL;
    if (r->reason && *r->reason)
        json_object_set_new(o, "reason", json_string(r->reason));
    if (r->pid)
        json_object_set_new(o, "pid", json_integer(r->pid));
    if (r->device != UINT32_MAX)
        json_object_set_new(o, "device", json_integer(r->device));
    return o;
}

void api_core_event(struct daemon *d, struct container *c, struct proc *p, const cg_event *ev)
{
    if (d->api)
        ring_push(d->api, cg_event_kind_name(ev->kind), cg_reason_str(ev->reason),
                  c ? c->id : NULL, ev->device, p ? (int)p->pid : 0, ev->bytes);
}

void api_process_event(struct daemon *d, struct container *c, struct proc *p, const char *what)
{
    if (d->api)
        ring_push(d->api, what, NULL, c->id, c->device, (int)p->pid, proc_used_bytes(p));
}

void api_watchdog_event(struct daemon *d, const char *kind, struct container *c, pid_t pid,
                        uint64_t bytes)
{
    if (d->api)
        ring_push(d->api, kind, NULL, c ? c->id : NULL, c ? c->device : UINT32_MAX, (int)pid,
                  bytes);
}

void api_container_removed(struct daemon *d, struct container *c)
{
    if (d->api)
        ring_push(d->api, "removed", NULL, c->id, c->device, 0, 0);
}

/* ---- callers ---------------------------------------------------------------------------- */

static bool peer_cred(struct MHD_Connection *conn, struct ucred *cred)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    socklen_t len = sizeof *cred;
    return ci && getsockopt(ci->connect_fd, SOL_SOCKET, SO_PEERCRED, cred, &len) == 0;
}

static bool may_touch(const struct ucred *cred, const struct container *c)
{
    return cred->uid == 0 || cred->uid == geteuid() || cred->uid == c->owner_uid;
}

/* ---- handlers ----------------------------------------------------------------------------- */

static enum MHD_Result create_container(struct daemon *d, struct MHD_Connection *conn,
                                        struct request_ctx *rc, const struct ucred *cred)
{
    struct create_request req;
    char msg[256];
    if (api_parse_create(rc->body, rc->len, d->ndevices, &req, msg, sizeof msg) != 0)
        return send_error(conn, 400, "%s", msg);
    if (req.has_owner && cred->uid != 0 && cred->uid != geteuid() &&
        (req.uid != cred->uid || req.gid != cred->gid))
        return send_error(conn, 403, "only root or the daemon's user may create a container for "
                                     "another user");
    uid_t uid = req.has_owner ? (uid_t)req.uid : cred->uid;
    gid_t gid = req.has_owner ? (gid_t)req.gid : cred->gid;
    struct container *c = NULL;
    int rcode = container_create(d, req.id, req.name, req.device, req.limit, uid, gid,
                                 req.auto_remove ? cred->pid : 0, req.auto_remove, NULL, &c, msg,
                                 sizeof msg);
    if (rcode != 0)
        return send_error(conn, rcode == -EEXIST ? 409 : rcode == -EIO || rcode == -ENOMEM ? 500 : 400,
                          "%s", msg);
    json_t *o = container_json(d, c, true);
    json_object_set_new(o, "env", container_env_json(d, c));
    return send_json(conn, 201, o);
}

static enum MHD_Result set_limit(struct daemon *d, struct MHD_Connection *conn,
                                 struct request_ctx *rc, struct container *c)
{
    uint64_t limit;
    char msg[256];
    bool pending = false;
    if (api_parse_limit(rc->body, rc->len, &limit, msg, sizeof msg) != 0)
        return send_error(conn, 400, "%s", msg);
    if (container_set_limit(d, c, limit, &pending, msg, sizeof msg) != 0)
        return send_error(conn, 409, "%s", msg);
    json_t *o = container_json(d, c, true);
    json_object_set_new(o, "limit_pending", json_boolean(pending));
    if (pending)
        json_object_set_new(o, "requested_limit", json_integer((json_int_t)limit));
    return send_json(conn, 200, o);
}

static enum MHD_Result set_policy(struct daemon *d, struct MHD_Connection *conn,
                                  struct request_ctx *rc)
{
    struct policy_request req;
    char msg[256];
    if (api_parse_policy(rc->body, rc->len, &req, msg, sizeof msg) != 0)
        return send_error(conn, 400, "%s", msg);
    cg_resume_policy rp = req.has_resume ? req.resume : cg_get_resume_policy(d->core);
    cg_placement_policy pp = req.has_placement ? req.placement : cg_get_placement_policy(d->core);
    for (struct container *c = d->containers; c; c = c->next)
        container_freeze_sync(d, c);
    cg_set_resume_policy(d->core, rp, loop_now_ns());
    cg_set_placement_policy(d->core, pp);
    for (struct container *c = d->containers; c; c = c->next)
        c->dirty = true;
    decide_flush(d);
    if (d->store) {
        store_set(d->store, "resume_policy", cg_resume_policy_name(rp));
        store_set(d->store, "placement_policy", cg_placement_policy_name(pp));
    }
    log_info("policy: resume %s, placement %s", cg_resume_policy_name(rp),
             cg_placement_policy_name(pp));
    return send_json(conn, 200, json_pack("{s:s,s:s}", "resume", cg_resume_policy_name(rp),
                                          "placement", cg_placement_policy_name(pp)));
}

/* Fills buf with whole NDJSON lines of events the subscriber has not seen; suspends the
 * connection when there are none (MHD calls again after a resume). */
static ssize_t follow_reader(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)pos;
    struct subscriber *sub = cls;
    struct api *a = sub->a;
    uint64_t first = a->next_seq > EVENT_RING ? a->next_seq - EVENT_RING : 0;
    if (sub->next < first)
        sub->next = first; /* the ring moved on: the client missed some, seq numbers show it */
    size_t n = 0;
    while (sub->next < a->next_seq) {
        json_t *o = event_json(&a->ring[sub->next % EVENT_RING]);
        char *line = o ? json_dumps(o, JSON_COMPACT) : NULL;
        json_decref(o);
        if (!line)
            return MHD_CONTENT_READER_END_WITH_ERROR;
        size_t len = strlen(line);
        if (n + len + 1 > max) {
            free(line);
            break;
        }
        memcpy(buf + n, line, len);
        buf[n + len] = '\n';
        n += len + 1;
        free(line);
        sub->next++;
    }
    if (n == 0 && a->stopping)
        return MHD_CONTENT_READER_END_OF_STREAM;
    if (n == 0 && !sub->suspended) {
        sub->suspended = true;
        MHD_suspend_connection(sub->conn);
    }
    return (ssize_t)n;
}

static void follow_done(void *cls)
{
    struct subscriber *sub = cls;
    struct api *a = sub->a;
    if (sub->prev)
        sub->prev->next_sub = sub->next_sub;
    else
        a->subs = sub->next_sub;
    if (sub->next_sub)
        sub->next_sub->prev = sub->prev;
    a->nsubs--;
    free(sub);
}

static enum MHD_Result follow(struct api *a, struct MHD_Connection *conn, uint64_t since)
{
    if (a->nsubs >= MAX_SUBSCRIBERS)
        return send_error(conn, 503, "too many event followers (at most %d)", MAX_SUBSCRIBERS);
    struct subscriber *sub = calloc(1, sizeof *sub);
    if (!sub)
        return MHD_NO;
    sub->a = a;
    sub->conn = conn;
    sub->next = since;
    struct MHD_Response *r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16 * 1024,
                                                               follow_reader, sub, follow_done);
    if (!r) {
        free(sub);
        return MHD_NO;
    }
    sub->next_sub = a->subs;
    if (a->subs)
        a->subs->prev = sub;
    a->subs = sub;
    a->nsubs++;
    MHD_add_response_header(r, "Content-Type", "application/x-ndjson");
    enum MHD_Result ret = MHD_queue_response(conn, 200, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result events(struct daemon *d, struct MHD_Connection *conn)
{
    struct api *a = d->api;
    const char *since_s = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "since");
    uint64_t since = 0;
    if (since_s) {
        char *end;
        errno = 0;
        unsigned long long v = strtoull(since_s, &end, 10);
        if (errno || *end || end == since_s)
            return send_error(conn, 400, "since must be an event sequence number");
        since = v;
    }
    const char *f = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "follow");
    if (f && (strcmp(f, "1") == 0 || strcmp(f, "true") == 0))
        return follow(a, conn, since_s ? since : a->next_seq);
    if (f && strcmp(f, "0") != 0 && strcmp(f, "false") != 0)
        return send_error(conn, 400, "follow must be 1 or 0");
    uint64_t first = a->next_seq > EVENT_RING ? a->next_seq - EVENT_RING : 0;
    if (since < first)
        since = first;
    json_t *arr = json_array();
    for (uint64_t s = since; s < a->next_seq; s++)
        json_array_append_new(arr, event_json(&a->ring[s % EVENT_RING]));
    return send_json(conn, 200, json_pack("{s:o,s:I}", "events", arr, "next", (json_int_t)a->next_seq));
}

static enum MHD_Result route(struct daemon *d, struct MHD_Connection *conn, const char *url,
                             const char *method, struct request_ctx *rc)
{
    struct ucred cred;
    if (!peer_cred(conn, &cred))
        return send_error(conn, 403, "cannot identify the caller");
    bool get = strcmp(method, "GET") == 0, post = strcmp(method, "POST") == 0;
    bool put = strcmp(method, "PUT") == 0, del = strcmp(method, "DELETE") == 0;

    if (strcmp(url, "/v1/version") == 0 && get)
        return send_json(conn, 200, version_json(d));
    if (strcmp(url, "/v1/devices") == 0 && get) {
        json_t *arr = json_array();
        for (unsigned i = 0; i < d->ndevices; i++)
            json_array_append_new(arr, device_json(d, i));
        return send_json(conn, 200, arr);
    }
    if (strcmp(url, "/v1/containers") == 0) {
        if (get) {
            json_t *arr = json_array();
            for (struct container *c = d->containers; c; c = c->next)
                json_array_append_new(arr, container_json(d, c, false));
            return send_json(conn, 200, arr);
        }
        if (post)
            return create_container(d, conn, rc, &cred);
        return send_error(conn, 405, "use GET or POST on /v1/containers");
    }
    if (strncmp(url, "/v1/containers/", 15) == 0) {
        char id[CONTAINER_ID_MAX + 2];
        const char *rest = url + 15, *slash = strchr(rest, '/');
        size_t n = slash ? (size_t)(slash - rest) : strlen(rest);
        if (n == 0 || n > CONTAINER_ID_MAX)
            return send_error(conn, 404, "no such container");
        memcpy(id, rest, n);
        id[n] = '\0';
        struct container *c = container_find(d, id);
        if (!c)
            return send_error(conn, 404, "no such container: %s", id);
        if (!slash) {
            if (get)
                return send_json(conn, 200, container_json(d, c, true));
            if (del) {
                if (!may_touch(&cred, c))
                    return send_error(conn, 403, "container %s belongs to uid %d", c->id,
                                      (int)c->owner_uid);
                char cid[CONTAINER_ID_MAX + 1];
                snprintf(cid, sizeof cid, "%s", c->id);
                container_remove(d, c, "removed through the API");
                return send_json(conn, 200, json_pack("{s:s}", "removed", cid));
            }
            return send_error(conn, 405, "use GET or DELETE on a container");
        }
        if (strcmp(slash, "/start") == 0) {
            if (!post)
                return send_error(conn, 405, "use POST on /start");
            if (!may_touch(&cred, c))
                return send_error(conn, 403, "container %s belongs to uid %d", c->id,
                                  (int)c->owner_uid);
            struct start_request sr;
            char msg[256];
            if (api_parse_start(rc->body, rc->len, &sr, msg, sizeof msg) != 0)
                return send_error(conn, 400, "%s", msg);
            if (kill(sr.pid, 0) != 0 && errno == ESRCH)
                return send_error(conn, 400, "no process %d", sr.pid);
            /* With auto_remove the init process's exit is the container's stop: its memory
             * returns at once, even when no stop hook runs (a runtime killed, a daemon that was
             * down then: restore checks the recorded pid and start time). */
            if (sr.auto_remove && container_watch_owner(c, sr.pid, 0, msg, sizeof msg) != 0)
                return send_error(conn, 400, "%s", msg);
            c->init_pid = sr.pid;
            if (d->store && store_put_container(d->store, c) != 0)
                log_warn("container %s: init pid %d not persisted", c->id, sr.pid);
            log_info("container %s: started, init pid %d%s", c->id, sr.pid,
                     sr.auto_remove ? ", removed when it exits" : "");
            return send_json(conn, 200, container_json(d, c, true));
        }
        if (strcmp(slash, "/limit") == 0) {
            if (!put)
                return send_error(conn, 405, "use PUT on /limit");
            if (!may_touch(&cred, c))
                return send_error(conn, 403, "container %s belongs to uid %d", c->id,
                                  (int)c->owner_uid);
            return set_limit(d, conn, rc, c);
        }
        return send_error(conn, 404, "unknown resource %s", url);
    }
    if (strcmp(url, "/v1/policy") == 0) {
        if (get)
            return send_json(conn, 200,
                             json_pack("{s:s,s:s}", "resume",
                                       cg_resume_policy_name(cg_get_resume_policy(d->core)),
                                       "placement",
                                       cg_placement_policy_name(cg_get_placement_policy(d->core))));
        if (put) {
            if (cred.uid != 0 && cred.uid != geteuid())
                return send_error(conn, 403, "only root or the daemon's user may change policy");
            return set_policy(d, conn, rc);
        }
        return send_error(conn, 405, "use GET or PUT on /v1/policy");
    }
    if (strcmp(url, "/v1/events") == 0 && get)
        return events(d, conn);
    if (strcmp(url, "/metrics") == 0 && get) {
        char *text = metrics_render(d);
        if (!text)
            return send_error(conn, 500, "out of memory");
        struct MHD_Response *r =
            MHD_create_response_from_buffer(strlen(text), text, MHD_RESPMEM_MUST_FREE);
        if (!r) {
            free(text);
            return MHD_NO;
        }
        MHD_add_response_header(r, "Content-Type", "text/plain; version=0.0.4");
        enum MHD_Result ret = MHD_queue_response(conn, 200, r);
        MHD_destroy_response(r);
        return ret;
    }
    return send_error(conn, 404, "unknown resource %s (the API lives under /v1)", url);
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *conn, const char *url,
                               const char *method, const char *version, const char *upload,
                               size_t *upload_size, void **con_cls)
{
    (void)version;
    struct daemon *d = cls;
    struct request_ctx *rc = *con_cls;
    if (!rc) {
        rc = calloc(1, sizeof *rc);
        if (!rc)
            return MHD_NO;
        *con_cls = rc;
        return MHD_YES;
    }
    if (*upload_size) {
        if (rc->len + *upload_size > MAX_BODY) {
            rc->too_big = true;
        } else {
            char *nb = realloc(rc->body, rc->len + *upload_size + 1);
            if (!nb)
                return MHD_NO;
            memcpy(nb + rc->len, upload, *upload_size);
            rc->body = nb;
            rc->len += *upload_size;
        }
        *upload_size = 0;
        return MHD_YES;
    }
    if (rc->too_big)
        return send_error(conn, 413, "request body larger than %d bytes", MAX_BODY);
    return route(d, conn, url, method, rc);
}

static void completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                      enum MHD_RequestTerminationCode toe)
{
    (void)cls;
    (void)conn;
    (void)toe;
    struct request_ctx *rc = *con_cls;
    if (rc) {
        free(rc->body);
        free(rc);
        *con_cls = NULL;
    }
}

static void api_ready(void *ctx, uint32_t events)
{
    (void)events;
    struct api *a = ctx;
    a->need_run = false;
    MHD_run(a->mhd);
}

void api_poll(struct daemon *d)
{
    if (d->api && d->api->need_run) {
        d->api->need_run = false;
        MHD_run(d->api->mhd);
    }
}

int api_timeout_ms(struct daemon *d)
{
    if (!d->api)
        return -1;
    MHD_UNSIGNED_LONG_LONG t;
    if (MHD_get_timeout(d->api->mhd, &t) != MHD_YES)
        return -1;
    return t > 60000 ? 60000 : (int)t;
}

int api_publish_version(const struct daemon *d, char *err, size_t errlen)
{
    char path[PATH_MAX + 32], tmp[PATH_MAX + 48];
    snprintf(path, sizeof path, "%s/" API_INFO_FILE, d->opt.runtime_dir);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    json_t *v = version_json(d);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
    char *text = v ? json_dumps(v, JSON_COMPACT) : NULL;
    json_decref(v);
    bool ok = fd >= 0 && text && fchmod(fd, 0644) == 0 &&
              write(fd, text, strlen(text)) == (ssize_t)strlen(text) && write(fd, "\n", 1) == 1;
    if (fd >= 0)
        close(fd);
    free(text);
    if (!ok || rename(tmp, path) != 0) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
        unlink(tmp);
        return -1;
    }
    return 0;
}

int api_start(struct daemon *d, int listen_fd, char *err, size_t errlen)
{
    struct api *a = calloc(1, sizeof *a);
    if (!a) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    a->d = d;
    a->mhd = MHD_start_daemon(MHD_USE_EPOLL | MHD_USE_ERROR_LOG | MHD_ALLOW_SUSPEND_RESUME, 0, NULL, NULL, handler, d,
                              MHD_OPTION_LISTEN_SOCKET, listen_fd, MHD_OPTION_NOTIFY_COMPLETED,
                              completed, NULL, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)30,
                              MHD_OPTION_CONNECTION_LIMIT, (unsigned)256,
                              MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(128 * 1024), MHD_OPTION_END);
    if (!a->mhd) {
        snprintf(err, errlen, "cannot start the HTTP server on the control socket");
        free(a);
        return -1;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(a->mhd, MHD_DAEMON_INFO_EPOLL_FD);
    if (!info || loop_add(d->loop, info->epoll_fd, EPOLLIN, api_ready, a) != 0) {
        snprintf(err, errlen, "cannot watch the HTTP server");
        MHD_stop_daemon(a->mhd);
        free(a);
        return -1;
    }
    a->epfd = info->epoll_fd;
    d->api = a;
    return 0;
}

void api_stop(struct daemon *d)
{
    struct api *a = d->api;
    if (!a)
        return;
    loop_del(d->loop, a->epfd);
    /* MHD cannot stop with suspended connections: end every follower's stream first. */
    a->stopping = true;
    for (int round = 0; round < 100 && a->subs; round++) {
        for (struct subscriber *sub = a->subs; sub; sub = sub->next_sub)
            if (sub->suspended) {
                sub->suspended = false;
                MHD_resume_connection(sub->conn);
            }
        MHD_run(a->mhd);
    }
    MHD_stop_daemon(a->mhd);
    free(a);
    d->api = NULL;
}

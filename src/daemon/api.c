/* api.c — the control API: HTTP/1.1 + JSON on a UNIX socket (curl --unix-socket works), served
 * by libmicrohttpd inside the daemon's epoll loop, JSON by jansson. Routes (all under /v1):
 *
 *   GET    /v1/version                    daemon and API version
 *   GET    /v1/devices                    capacity, reserve, assigned, used, context charge
 *   GET    /v1/containers                 every container
 *   POST   /v1/containers                 create {"gpu_memory": "1GiB", "name", "id", "device",
 *                                         "auto_remove", "gpu_compute": 1-100|null,
 *                                         "compute_mode": "hard"|"elastic", "exclusive": BOOL,
 *                                         "profile_limit": BOOL, "image", "command",
 *                                         "profile": BOOL (false: the run is not recorded)};
 *                                         answers
 *                                         the container and the env its processes need
 *   GET    /v1/containers/{id}            inspect (processes, pending requests, suspension)
 *   DELETE /v1/containers/{id}            remove; its assignment returns at once
 *   PUT    /v1/containers/{id}/limit      {"gpu_memory": SIZE, "gpu_compute": 1-100|null,
 *                                         "compute_mode": MODE}, any of them: lowering the
 *                                         limit below use is refused (409), and so is a hard
 *                                         share the device cannot admit
 *   POST   /v1/containers/{id}/start      {"pid": N, "auto_remove": BOOL}: the container's init
 *                                         (host pid); auto_remove: removed when it exits
 *   GET    /v1/policy, PUT /v1/policy     {"resume": NAME, "placement": NAME}
 *   GET    /v1/events?since=N             recent decision events (ring buffer), oldest first
 *   GET    /v1/profiles                   what past runs taught (profile.h), the caller's own
 *                                         (operators: every tenant's)
 *   DELETE /v1/profiles/{key}[?tenant=T]  forget a profile (404 when there is none)
 *   GET, PUT, DELETE /v1/interference[?tenant=T]  measured slowdowns of pairs of profile keys
 *                                         (api_interference.h)
 *
 * Every request body is parsed strictly: unknown fields, wrong types and bad sizes are a 400 with
 * a message saying what to send instead, and change nothing. What the body says well but the
 * state refuses (a limit below use or above capacity, a hard compute share the device cannot
 * admit: the hard shares on a device sum to at most 100%) is a 409, and changes nothing. A
 * change is answered with success only once state.db has it (507/503 otherwise, nothing
 * changed; see store.h).
 *
 * Callers are identified by SO_PEERCRED (and SO_PEERGROUPS for the operators group). Root, the
 * daemon's user and operators see and act on every container; anyone else sees only its own
 * containers — in lists, inspection, events and /metrics — and another's answers 404 exactly as
 * a missing one does. What such a caller may create or raise is bounded per user
 * (user-memory-quota, user-max-containers: 403 naming the bound). */
#include "api.h"
#include "adaptive.h"
#include "gang.h"
#include "swap.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <jansson.h>
#include <limits.h>
#include <microhttpd.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "api_conn.h"
#include "api_route.h"
#include "notice.h"
#include "api_alloc.h"
#include "api_interference.h"
#include "fdspare.h"
#include "http_answer.h"
#include "http_body.h"
#include "api_parse.h"
#include "log.h"
#include "metrics.h"
#include "proc_start.h"
#include "size.h"
#include "store.h"
#include "topology.h"

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
    int compute_pct;       /* a "compute" event's share (0: none); -1 for other events */
    cg_compute_mode compute_mode;
    bool owned;            /* about a container: shown only to its owner and to operators */
    uid_t owner;
};

/* Who is asking, from the kernel. `all`: root, the daemon's own user or a member of the
 * operators group, who see and act on every container; anyone else sees and acts only on the
 * containers it owns, and what it may create is bounded per user. */
struct caller {
    struct ucred cred;
    bool all;
};

/* A client following /v1/events?follow=1: its connection is suspended while it has seen
 * everything and resumed when an event arrives. */
struct subscriber {
    struct api *a;
    struct MHD_Connection *conn;
    struct caller who;     /* sees only the events it may see */
    uint64_t next;
    bool suspended;
    bool gone;             /* its client hung up: end the stream (reap_gone_followers) */
    struct subscriber *prev, *next_sub;
};

#define MAX_SUBSCRIBERS 64

struct api {
    struct daemon *d;
    struct MHD_Daemon *mhd;
    int epfd;
    int listen_fd;           /* control.sock: accepted here, not by MHD (api_conn.h) */
    struct api_conns conns;
    uint64_t next_deadline;  /* the earliest request deadline (0: none) */
    struct subscriber *subs;
    unsigned nsubs;
    bool stopping;   /* followers end their stream instead of waiting */
    bool need_run;   /* connections were resumed: run MHD once the current callback returns */
    uint64_t last_refusal_warning;
    uint64_t next_follower_check; /* reap_gone_followers */
    struct event_rec ring[EVENT_RING];
    uint64_t next_seq;
};

struct request_ctx {
    struct http_body in;  /* first (http_body.h): whether it passed MAX_BODY */
    char *body;
    size_t len;
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
    return http_answer(conn, status, "application/json", text, n + 1, NULL);
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

/* A change the store did not take was not made: 507 when the disk (or the database) is full,
 * 503 for any other failure of the store. Either way the caller may retry later. */
/* The one mapping of the daemon's error codes to HTTP statuses (docs/OPERATIONS.md, "Errors"):
 * bad input 400, not allowed 403, missing 404, in conflict with the state 409, a full disk 507,
 * any other failure to store or to make the container's files 503, out of memory 500. */
static unsigned http_status_of(int rc)
{
    switch (rc) {
    case -EINVAL:
        return 400;
    case -EPERM:
    case -EACCES:
        return 403;
    case -ENOENT:
        return 404;
    case -EEXIST:
    case -EBUSY:
        return 409;
    case -ENOSPC:
        return 507;
    case -EIO:
    case -EMFILE:
    case -ENFILE:
        return 503;
    default:
        return 500;
    }
}

static enum MHD_Result send_errno(struct MHD_Connection *conn, int rc, const char *msg)
{
    return send_error(conn, http_status_of(rc), "%s", msg);
}

/* A write the store refused: 507 when the disk is full, 503 otherwise. */
static enum MHD_Result send_not_stored(struct MHD_Connection *conn, int rc, const char *msg)
{
    return send_errno(conn, rc == -ENOSPC ? -ENOSPC : -EIO, msg);
}

/* ---- views -------------------------------------------------------------------------------- */

static json_t *device_json(struct daemon *d, unsigned i)
{
    cg_device_info di = {0};
    cg_device_get(d->core, i, &di);
    uint64_t used = device_used_bytes(d, i);
    json_t *o = json_pack("{s:I,s:s,s:s,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:f}", "index",
                     (json_int_t)i, "name", d->devices[i].name, "uuid", d->devices[i].uuid,
                     "total", (json_int_t)di.total, "reserve", (json_int_t)di.reserve,
                     "capacity", (json_int_t)di.capacity, "assigned", (json_int_t)di.assigned,
                     "used", (json_int_t)used, "free", (json_int_t)di.free, "context_charge",
                     (json_int_t)di.context_charge, "containers", (json_int_t)di.ncontainers,
                     "suspended", (json_int_t)di.nsuspended, "compute_hard_share",
                     (json_int_t)di.compute_hard_pct, "compute_utilization",
                     (double)d->devices[i].compute_util_permille / 1000.0);
    if (o) {
        /* What the node advertises for the device (oversub.h); admission never reads it. */
        json_object_set_new(o, "oversubscribe", json_real(oversub_factor(d, i)));
        json_object_set_new(o, "oversubscribe_mode", json_string(oversub_mode(d)));
        json_object_set_new(o, "promised", json_integer((json_int_t)oversub_promised(d, i)));
        /* What it has promised so far, and who waits because it promised more than it has. */
        json_object_set_new(o, "limits", json_integer((json_int_t)oversub_limits(d, i)));
        json_object_set_new(o, "waiting_oversubscribed",
                            json_integer((json_int_t)oversub_waiting(d, i)));
        /* The node's swap budget and what of it is not taken (the same on every device): how
         * much of a collision swap could still absorb here (the extender's pressure.h). */
        uint64_t host = cg_swap_host_bytes(d->core);
        json_object_set_new(o, "swap_budget", json_integer((json_int_t)d->opt.swap_limit));
        json_object_set_new(o, "swap_budget_left",
                            json_integer((json_int_t)(d->opt.swap_limit > host
                                                          ? d->opt.swap_limit - host
                                                          : 0)));
        topology_json_add(d, i, o);
    }
    return o;
}

/* The part of every container's environment that is the node's, not the container's: the
 * interposer and, on the emulated GPU, the emulator's. `convgpu cdi generate` writes it into a
 * CDI spec, which is made before any container exists. */
static void node_env(const struct daemon *d, json_t *env)
{
    json_object_set_new(env, "LD_PRELOAD", json_string(d->lib_path));
    if (d->opt.emulate[0]) {
        json_object_set_new(env, "LD_LIBRARY_PATH", json_string(d->emu_dir));
        json_object_set_new(env, "CONVGPU_EMU_DEVICES", json_string(d->opt.emulate));
        json_object_set_new(env, "CONVGPU_EMU_STATE", json_string(d->emu_state));
        if (d->opt.topology[0])
            json_object_set_new(env, "CONVGPU_EMU_TOPOLOGY", json_string(d->opt.topology));
        const char *ctx = getenv("CONVGPU_EMU_CONTEXT");
        if (ctx)
            json_object_set_new(env, "CONVGPU_EMU_CONTEXT", json_string(ctx));
        const char *gran = getenv("CONVGPU_EMU_GRANULARITY");
        if (gran)
            json_object_set_new(env, "CONVGPU_EMU_GRANULARITY", json_string(gran));
    }
}

static json_t *version_json(const struct daemon *d)
{
    json_t *env = json_object();
    node_env(d, env);
    return json_pack("{s:s,s:i,s:s,s:i,s:o}", "version", CONVGPU_VERSION, "api", API_VERSION,
                     "mode", d->opt.emulate[0] ? "emulated" : "nvidia", "pid", (int)getpid(),
                     "node_env", env);
}

static json_t *container_env_json(struct daemon *d, struct container *c)
{
    json_t *env = json_object();
    node_env(d, env);
    json_object_set_new(env, "CONVGPU_SOCKET", json_string(c->endpoint.sock_path));
    /* Its GPUs in member order: CUDA ordinal k is member k (gang.c). */
    char list[CG_MAX_DEVICES * (DEVICE_NAME_MAX + 1)] = "";
    size_t at = 0;
    for (unsigned k = 0; k < c->gang.nmembers; k++) {
        const struct container *m = k ? c->gang.members[k] : c;
        const char *uuid = d->devices[m->device].uuid;
        int w = uuid[0] ? snprintf(list + at, sizeof list - at, "%s%s", k ? "," : "", uuid)
                        : snprintf(list + at, sizeof list - at, "%s%u", k ? "," : "", m->device);
        if (w > 0 && (size_t)w < sizeof list - at)
            at += (size_t)w;
    }
    json_object_set_new(env, "CUDA_VISIBLE_DEVICES", json_string(list));
    return env;
}

static json_t *container_json(struct daemon *d, struct container *c, bool detail)
{
    uint64_t now = loop_now_ns();
    cg_container_info ci = {0};
    cg_container_get(d->core, c->cid, now, &ci);
    json_t *o = json_pack("{s:s,s:s,s:I,s:I,s:I,s:I,s:s,s:I,s:f,s:I,s:I}", "id", c->ident.id,
                          "name", c->ident.name, "device", (json_int_t)c->device, "limit",
                          (json_int_t)ci.limit, "assigned", (json_int_t)ci.assigned, "used",
                          (json_int_t)container_used_bytes(c), "state",
                          c->pause.phase != PAUSE_NONE     ? pause_state_name(d, c)
                          : ci.queued                      ? "queued"
                          : ci.expired                     ? "expired"
                          : c->swap.phase == SWAP_OUT      ? "swapped"
                          : ci.state == CG_STATE_SUSPENDED ? "suspended"
                                                           : "running",
                          "created", (json_int_t)c->ident.created_unix, "suspended_total_s",
                          (double)ci.total_suspended / 1e9, "processes", (json_int_t)ci.nprocesses,
                          "pending", (json_int_t)ci.npending);
    if (!o)
        return NULL;
    json_object_set_new(o, "tenant", json_string(c->ident.tenant));
    /* Removed at this wall-clock second unless its init is reported (null: no deadline). */
    json_object_set_new(o, "start_by",
                        c->life.start_by_unix ? json_integer(c->life.start_by_unix) : json_null());
    if (ci.state == CG_STATE_SUSPENDED)
        json_object_set_new(o, "suspended_for_s",
                            json_real((double)(now - ci.suspended_since) / 1e9));
    /* Why it waits: "oversubscribed" (its GPU's sharing factor promised the memory it waits
     * for), "gpus" (on several GPUs, queued until all have room), "memory" (any other wait),
     * null (it does not wait): oversub.h. */
    const char *why = oversub_wait_reason(d, c);
    json_object_set_new(o, "wait_reason", why ? json_string(why) : json_null());
    /* The share (null: no compute limit) and what gates.c measured: utilisation of the last
     * window as a ratio, device time used, time waited at the gate. */
    json_object_set_new(o, "gpu_compute", ci.compute_pct ? json_integer(ci.compute_pct)
                                                         : json_null());
    json_object_set_new(o, "compute_mode", ci.compute_pct
                                               ? json_string(cg_compute_mode_name(ci.compute_mode))
                                               : json_null());
    json_object_set_new(o, "compute_utilization",
                        json_real((double)c->compute.util_permille / 1000.0));
    json_object_set_new(o, "compute_busy_s", json_real((double)c->compute.busy_ns / 1e9));
    json_object_set_new(o, "compute_throttled_s",
                        json_real((double)c->compute.throttled_ns / 1e9));
    json_object_set_new(o, "compute_throttled_launches",
                        json_integer((json_int_t)c->compute.throttled_launches));
    json_object_set_new(o, "swap", json_string(swap_phase_name(c->swap.phase)));
    json_object_set_new(o, "swapped_bytes", json_integer((json_int_t)ci.swapped));
    /* Freed memory its processes keep mapped for their next allocation (already in "used"). */
    uint64_t kept = c->ledger ? cg_ledger_kept_bytes(c->ledger) : 0;
    json_object_set_new(o, "kept_bytes", json_integer((json_int_t)kept));
    /* Host memory its processes keep page-locked between moves, and what they may (ledger.h). */
    json_object_set_new(o, "pinned_bytes", json_integer((json_int_t)swap_pinned_bytes(c)));
    json_object_set_new(o, "pin_budget",
                        json_integer(c->ledger ? (json_int_t)atomic_load(&c->ledger->swap.pin_budget)
                                               : 0));
    json_object_set_new(o, "swap_held", json_boolean(ci.swap_held));
    json_object_set_new(o, "swap_allowed", json_boolean(!c->no_swap && d->opt.swap));
    json_object_set_new(o, "swapped_out_total", json_integer((json_int_t)c->swap.out_total));
    json_object_set_new(o, "swapped_in_total", json_integer((json_int_t)c->swap.in_total));
    json_object_set_new(o, "priority", json_integer((json_int_t)ci.priority));
    json_object_set_new(o, "swap_out_s", json_real((double)c->swap.out_ns / 1e9));
    json_object_set_new(o, "swap_in_s", json_real((double)c->swap.in_ns / 1e9));
    /* Pause (pause.h): its phase, what its processes had on the device when paused, how long
     * the last pause and resume took, and why the last one failed (null: none). */
    json_object_set_new(o, "pause", json_string(pause_phase_name(c->pause.phase)));
    json_object_set_new(o, "paused_bytes", json_integer((json_int_t)c->pause.bytes));
    json_object_set_new(o, "pause_s", json_real((double)c->pause.out_ns / 1e9));
    json_object_set_new(o, "resume_s", json_real((double)c->pause.in_ns / 1e9));
    json_object_set_new(o, "pauses", json_integer((json_int_t)c->pause.pauses));
    json_object_set_new(o, "pause_error", c->pause.error[0] ? json_string(c->pause.error)
                                                            : json_null());
    json_object_set_new(o, "exclusive", json_boolean(ci.exclusive));
    json_object_set_new(o, "fenced", c->fenced[0] ? json_string(c->fenced) : json_null());
    json_object_set_new(o, "profile_key", json_string(c->profile.key));
    /* What placement knew of its application when it was created (profile_placement_hint). */
    char app[24];
    snprintf(app, sizeof app, "%016llx", (unsigned long long)ci.app);
    json_object_set_new(o, "placement_hint",
                        json_pack("{s:i,s:s}", "utilization_pct", (int)ci.util_pct, "app", app));
    /* Its GPUs (gang.c): "device", "limit", "assigned" and "used" above are its first GPU's;
     * "members" has every GPU's, the first included. */
    json_object_set_new(o, "gpus", json_integer((json_int_t)c->gang.nmembers));
    json_t *devs = json_array();
    for (unsigned k = 0; k < c->gang.nmembers; k++)
        json_array_append_new(devs, json_integer((json_int_t)(k ? c->gang.members[k] : c)->device));
    json_object_set_new(o, "devices", devs);
    if (c->gang.nmembers > 1) {
        json_t *members = json_array();
        for (unsigned k = 0; k < c->gang.nmembers; k++) {
            struct container *m = c->gang.members[k];
            cg_container_info mi = {0};
            cg_container_get(d->core, m->cid, now, &mi);
            json_array_append_new(members,
                                  json_pack("{s:i,s:s,s:I,s:I,s:I,s:i,s:s}", "index", (int)k, "id",
                                            m->ident.id, "device", (json_int_t)m->device, "limit",
                                            (json_int_t)mi.limit, "used",
                                            (json_int_t)container_used_bytes(m), "processes",
                                            (int)mi.nprocesses, "socket", m->endpoint.sock_path));
        }
        json_object_set_new(o, "members", members);
    }
    if (!detail)
        return o;
    json_object_set_new(o, "socket", json_string(c->endpoint.sock_path));
    json_object_set_new(o, "dir", json_string(c->endpoint.dir));
    json_object_set_new(o, "auto_remove", json_boolean(c->life.auto_remove));
    json_object_set_new(o, "owner_pid", json_integer(c->life.owner_pid));
    json_object_set_new(o, "uid", json_integer((json_int_t)c->ident.owner_uid));
    if (c->life.init_pid > 0)
        json_object_set_new(o, "init_pid", json_integer(c->life.init_pid));
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
    for (struct pending *r = c->pending.head; r && listed < API_PENDING_LISTED;
         r = r->next, listed++)
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
static struct event_rec *ring_push(struct api *a, const char *type, const char *reason,
                                   const char *cid, unsigned device, int pid, uint64_t bytes,
                                   bool owned, uid_t owner)
{
    struct event_rec *r = &a->ring[a->next_seq % EVENT_RING];
    r->compute_pct = -1;
    r->owned = owned;
    r->owner = owner;
    r->seq = a->next_seq++;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    r->time = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
    r->type = type;
    r->reason = reason;
    /* A bounded copy, not snprintf: formatting cost more than the rest of the push, and every
     * grant, release and use sync of every allocation that asks the daemon comes through here. */
    size_t n = cid ? strnlen(cid, sizeof r->container - 1) : 0;
    memcpy(r->container, cid ? cid : "", n);
    r->container[n] = '\0';
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
    return r;
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
    if (r->compute_pct > 0) {
        json_object_set_new(o, "gpu_compute", json_integer(r->compute_pct));
        json_object_set_new(o, "compute_mode", json_string(cg_compute_mode_name(r->compute_mode)));
    } else if (r->compute_pct == 0) {
        json_object_set_new(o, "gpu_compute", json_null());
    }
    return o;
}

/* The daemon's notices (notice.h) as events of the stream: the API listens from its start. */
static void api_on_notice(struct daemon *d, const struct notice *n, void *ctx)
{
    struct api *a = ctx;
    struct container *c = n->c;
    switch (n->kind) {
    case NOTICE_CORE_EVENT: {
        /* An event about a container the daemon does not list (one whose creation failed) is
         * still about a container: operators only. */
        const cg_event *ev = n->ev;
        struct event_rec *r =
            ring_push(a, cg_event_kind_name(ev->kind), cg_reason_str(ev->reason),
                      c ? c->ident.id : NULL, ev->device, n->p ? (int)n->p->pid : 0, ev->bytes,
                      c || ev->cid != CG_CID_NONE, c ? c->ident.owner_uid : (uid_t)-1);
        if (ev->kind == CG_EV_COMPUTE) {
            r->compute_pct = (int)ev->compute_pct;
            r->compute_mode = ev->compute_mode;
        }
        break;
    }
    case NOTICE_PROCESS:
        ring_push(a, n->what, NULL, c->ident.id, c->device, (int)n->p->pid, proc_used_bytes(n->p),
                  true, c->ident.owner_uid);
        break;
    case NOTICE_FINDING:
        ring_push(a, n->what, NULL, c ? c->ident.id : NULL, c ? c->device : UINT32_MAX, (int)n->pid,
                  n->bytes, c != NULL, c ? c->ident.owner_uid : (uid_t)-1);
        break;
    case NOTICE_CONTAINER_REMOVED:
        ring_push(a, "removed", NULL, c->ident.id, c->device, 0, 0, true, c->ident.owner_uid);
        break;
    case NOTICE_REQUEST_ANSWERED: /* counted by /metrics, not an event of the stream */
        break;
    }
    (void)d;
}

/* ---- callers ---------------------------------------------------------------------------- */

#ifndef SO_PEERGROUPS
#define SO_PEERGROUPS 59 /* Linux 4.13 */
#endif

/* Whether uid's entry in the group database makes it a member of g (kernels without
 * SO_PEERGROUPS). A uid with no passwd entry has only its primary group. */
static bool user_in_group(uid_t uid, gid_t gid, gid_t g)
{
    char buf[4096];
    struct passwd pw, *pwp = NULL;
    if (getpwuid_r(uid, &pw, buf, sizeof buf, &pwp) != 0 || !pwp)
        return false;
    gid_t groups[256];
    int n = 256;
    if (getgrouplist(pw.pw_name, gid, groups, &n) < 0)
        n = 256; /* more than fit: the first 256 are there */
    for (int i = 0; i < n; i++)
        if (groups[i] == g)
            return true;
    return false;
}

/* Whether the peer on fd is a member of group g: its primary group, or one of the
 * supplementary groups its process had when it connected (SO_PEERGROUPS: what the kernel
 * checked against the socket's mode, not what a database says). */
static bool peer_in_group(int fd, const struct ucred *cred, gid_t g)
{
    if (cred->gid == g)
        return true;
    gid_t small[64], *groups = small;
    socklen_t len = sizeof small;
    int rc = getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len);
    if (rc != 0 && errno == ERANGE && len > sizeof small && len <= 65536 * sizeof(gid_t)) {
        groups = malloc(len);
        if (!groups)
            return false;
        rc = getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len);
    }
    bool member = false;
    if (rc == 0) {
        for (size_t i = 0; i < len / sizeof(gid_t); i++)
            member = member || groups[i] == g;
    } else if (errno == ENOPROTOOPT) {
        member = user_in_group(cred->uid, cred->gid, g);
    }
    if (groups != small)
        free(groups);
    return member;
}

/* Whether the peer on fd sees and acts on everything (struct caller); cred from SO_PEERCRED. */
static bool peer_is_operator(struct daemon *d, int fd, const struct ucred *cred)
{
    return cred->uid == 0 || cred->uid == geteuid() ||
           (d->opt.operators_group[0] && peer_in_group(fd, cred, d->opt.operators_gid));
}

/* The connection's record, made when the daemon accepted it. */
static struct api_conn *conn_of(struct daemon *d, struct MHD_Connection *conn)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    return ci && d->api ? api_conns_find(&d->api->conns, ci->connect_fd) : NULL;
}

/* Who is calling: read once, when the connection was accepted. */
static bool identify(struct daemon *d, struct MHD_Connection *conn, struct caller *who)
{
    const struct api_conn *c = conn_of(d, conn);
    if (!c)
        return false;
    who->cred = c->cred;
    who->all = c->all;
    return true;
}

static bool sees(const struct caller *who, const struct container *c)
{
    return who->all || c->ident.owner_uid == who->cred.uid;
}

static bool sees_event(const struct caller *who, const struct event_rec *r)
{
    return who->all || !r->owned || r->owner == who->cred.uid;
}

/* container_find among the containers the caller may see: one it may not see answers exactly
 * as one that does not exist, so ids and names of others do not leak. */
static struct container *find_for(struct daemon *d, const struct caller *who, const char *key)
{
    for (struct container *c = d->containers; c; c = c->next)
        if (!c->gang.leader && sees(who, c) && strcmp(c->ident.id, key) == 0)
            return c;
    for (struct container *c = d->containers; c; c = c->next)
        if (!c->gang.leader && sees(who, c) && c->ident.name[0] && strcmp(c->ident.name, key) == 0)
            return c;
    return NULL;
}

/* ---- per-user bounds ---------------------------------------------------------------------- */

/* What one container counts against its owner's quota: its limit (at its target while a raise
 * waits), or its whole device when it holds the device exclusively. */
static uint64_t held_by(struct daemon *d, const struct container *c)
{
    cg_container_info ci = {0};
    cg_container_get(d->core, c->cid, loop_now_ns(), &ci);
    if (ci.exclusive) {
        cg_device_info di = {0};
        cg_device_get(d->core, c->device, &di);
        return di.capacity > ci.limit ? di.capacity : ci.limit;
    }
    return ci.limit_waiting > ci.limit ? ci.limit_waiting : ci.limit;
}

/* What uid holds, `except` left out: its containers and the sum of their limits (a raise that
 * waits counts at its target: it is applied later without asking again). */
static void holdings(struct daemon *d, uid_t uid, const struct container *except, unsigned *n,
                     uint64_t *bytes)
{
    *n = 0;
    *bytes = 0;
    for (struct container *c = d->containers; c; c = c->next) {
        if (c->ident.owner_uid != uid || c == except)
            continue;
        *n += !c->gang.leader; /* a gang is one container; its members' limits count below */
        *bytes += held_by(d, c);
    }
}

/* The refusal (403) when uid, a caller bound per user, may not hold `limit` more in one
 * container (`resized`: an existing one whose limit this replaces; NULL: a new one); NULL when
 * it may. The answer names the bound, its value and what is held, so the caller can act. */
static json_t *over_bound(struct daemon *d, uid_t uid, const struct container *resized,
                          uint64_t limit)
{
    unsigned n;
    uint64_t held;
    holdings(d, uid, resized, &n, &held);
    char msg[512], b1[CG_SIZE_BUFLEN], b2[CG_SIZE_BUFLEN], b3[CG_SIZE_BUFLEN], b4[CG_SIZE_BUFLEN];
    if (!resized && d->opt.user_max_containers && n >= d->opt.user_max_containers) {
        snprintf(msg, sizeof msg, "user-max-containers: uid %u may hold at most %u container(s) "
                                  "and holds %u; remove one first",
                 (unsigned)uid, d->opt.user_max_containers, n);
        return json_pack("{s:s,s:s,s:I,s:I}", "error", msg, "bound", "user-max-containers",
                         "quota", (json_int_t)d->opt.user_max_containers, "held", (json_int_t)n);
    }
    uint64_t quota = d->opt.user_memory_quota, capacity = 0;
    for (unsigned i = 0; i < d->ndevices; i++) {
        cg_device_info di = {0};
        cg_device_get(d->core, i, &di);
        capacity += di.capacity;
    }
    char how[96] = "";
    if (!quota) {
        quota = capacity / 100 * d->opt.user_memory_quota_pct +
                capacity % 100 * d->opt.user_memory_quota_pct / 100;
        snprintf(how, sizeof how, " (%u%% of the node's %s)", d->opt.user_memory_quota_pct,
                 cg_format_size(capacity, b4, sizeof b4));
    }
    if (held > quota || limit > quota - held) {
        snprintf(msg, sizeof msg, "user-memory-quota: uid %u may hold at most %s of GPU-memory "
                                  "limits%s; it holds %s in %u other container(s), and %s more "
                                  "would exceed that",
                 (unsigned)uid, cg_format_size(quota, b1, sizeof b1), how,
                 cg_format_size(held, b2, sizeof b2), n, cg_format_size(limit, b3, sizeof b3));
        return json_pack("{s:s,s:s,s:I,s:I,s:I}", "error", msg, "bound", "user-memory-quota",
                         "quota", (json_int_t)quota, "held", (json_int_t)held, "requested",
                         (json_int_t)limit);
    }
    return NULL;
}

/* ---- handlers ----------------------------------------------------------------------------- */

/* The capacity of the device a request names, or of the largest device (placement). */
static uint64_t device_capacity(struct daemon *d, const cg_container_spec *spec)
{
    uint64_t cap = 0;
    for (unsigned i = 0; i < d->ndevices; i++) {
        cg_device_info di = {0};
        cg_device_get(d->core, i, &di);
        if ((spec->device < 0 || (unsigned)spec->device == i) && di.capacity > cap)
            cap = di.capacity;
    }
    return cap;
}

/* Where a new container's limit comes from (profile.h): its profile when it asks
 * ("profile_limit") or gives none on a daemon with --profile-limits and a profile exists (1,
 * *limit set, the event says so), else what it gave (0; exclusive: 0 = the device's capacity).
 * -1 with msg when it gave none and nothing can choose one; -2 when the store failed. */
static int limit_from_profile(struct daemon *d, const struct create_request *req,
                              const char *tenant, const char *key, uint64_t *limit,
                              uint64_t *peak, unsigned *margin, char *msg, size_t len)
{
    bool wanted = req->profile_limit || (!req->has_limit && d->opt.profile_margin_pct);
    *margin = d->opt.profile_margin_pct ? d->opt.profile_margin_pct : PROFILE_DEFAULT_MARGIN_PCT;
    if (wanted && key[0]) {
        cg_container_spec where = {.device = req->device};
        int rc = profile_limit(d, tenant, key, *margin, device_capacity(d, &where), limit, peak);
        if (rc < 0) {
            snprintf(msg, len, "cannot read profile %s/%s: %s", tenant, key, store_error(d->store));
            return -2;
        }
        if (rc == 0)
            return 1;
    }
    if (req->has_limit || req->exclusive)
        return 0;
    if (wanted)
        snprintf(msg, len, "no profile for %s/%s yet: give gpu_memory for its first run "
                           "(convgpu run --gpu-memory SIZE)", tenant, key[0] ? key : "(no image "
                           "or command given)");
    else
        snprintf(msg, len, "gpu_memory is required (e.g. \"1GiB\")%s",
                 d->opt.profile_margin_pct ? "" : "; or \"profile_limit\": true to take it "
                                                   "from past runs");
    return -1;
}

static enum MHD_Result create_container(struct daemon *d, struct MHD_Connection *conn,
                                        struct request_ctx *rc, const struct caller *who)
{
    const struct ucred *cred = &who->cred;
    struct create_request req;
    char msg[512];
    if (api_parse_create(rc->body, rc->len, d->ndevices, &req, msg, sizeof msg) != 0)
        return send_error(conn, 400, "%s", msg);
    /* The limit, share and GPUs of an allocation are the device plugin's records (api_alloc.h);
     * only the runtime (root) claims them. */
    if (req.nallocations && !who->all)
        return send_error(conn, 403, "only root, the daemon's user or an operator may claim an "
                                     "allocation");
    unsigned astatus = req.nallocations ? api_alloc_resolve(d, &req, msg, sizeof msg) : 0;
    if (astatus)
        return send_error(conn, astatus, "%s", msg);
    if (req.has_owner && cred->uid != 0 && cred->uid != geteuid() &&
        (req.uid != cred->uid || req.gid != cred->gid))
        return send_error(conn, 403, "only root or the daemon's user may create a container for "
                                     "another user");
    uid_t uid = req.has_owner ? (uid_t)req.uid : cred->uid;
    gid_t gid = req.has_owner ? (gid_t)req.gid : cred->gid;
    /* Without a gpu_compute field the daemon's default share applies (default-gpu-compute),
     * and a share without a mode takes default-compute-mode. */
    unsigned pct = req.has_compute ? req.compute_pct : d->opt.default_compute_pct;
    if (req.has_mode && pct == 0)
        return send_error(conn, 400, "compute_mode needs a compute share: give gpu_compute "
                                     "(1-100) as well");
    cg_container_spec spec = {.device = req.device, .limit = req.limit, .compute_pct = pct,
                              .compute_mode = req.has_mode ? req.compute_mode
                                                           : d->opt.default_compute_mode,
                              .priority = req.priority, .no_swap = req.no_swap,
                              .exclusive = req.exclusive};
    /* The tenant: the owner's user unless named; only root or the daemon's user may name
     * another (docs/OPERATIONS.md). */
    char own[TENANT_NAME_MAX + 1];
    tenant_of_uid(uid, own);
    if (req.tenant[0] && strcmp(req.tenant, own) != 0 && cred->uid != 0 && cred->uid != geteuid())
        return send_error(conn, 403, "only root or the daemon's user may put a container in "
                                     "tenant '%s'; yours is '%s'", req.tenant, own);
    if (tenant_intern(d, req.tenant[0] ? req.tenant : own, &spec.tenant) != 0)
        return send_error(conn, 500, "out of memory");
    char key[PROFILE_KEY_MAX + 1], tenant[PROFILE_TENANT_MAX + 1];
    profile_key_of(req.image, req.command, key, sizeof key);
    snprintf(tenant, sizeof tenant, "%s", req.tenant[0] ? req.tenant : own); /* its tenant's runs */
    uint64_t peak = 0;
    unsigned margin = 0;
    int from = limit_from_profile(d, &req, tenant, key, &spec.limit, &peak, &margin, msg,
                                  sizeof msg);
    if (from < 0)
        return send_error(conn, from == -2 ? 503 : 400, "%s", msg);
    profile_placement_hint(d, tenant, key, &spec.util_pct, &spec.app);
    /* What a tenant may ask for itself is policy (issue #35): a priority up to its ceiling, an
     * exclusive GPU only with an allowance, and an exclusive container counts as the whole
     * device it holds. */
    if (!who->all && spec.priority > tenant_priority_ceiling(d, tenant))
        return send_error(conn, 403, "priority %u is above what tenant '%s' may give its "
                                     "containers (%u); an operator may allow more (convgpu "
                                     "tenant set %s --max-priority N)",
                          spec.priority, tenant, tenant_priority_ceiling(d, tenant), tenant);
    if (!who->all && req.exclusive && !tenant_may_exclusive(d, tenant))
        return send_error(conn, 403, "tenant '%s' may not hold a GPU exclusively; an operator "
                                     "may allow it (convgpu tenant set %s --exclusive yes)",
                          tenant, tenant);
    json_t *refusal = who->all ? NULL
                               : over_bound(d, uid, NULL,
                                            (spec.limit && !req.exclusive
                                                 ? spec.limit
                                                 : device_capacity(d, &spec)) *
                                                req.gpus);
    if (refusal)
        return send_json(conn, 403, refusal);
    struct container *c = NULL;
    d->creating_start_by = req.start_within ? (int64_t)time(NULL) + req.start_within : 0;
    int rcode = gang_create(d, req.id, req.name, req.no_profile ? "" : key, &spec, req.gpus,
                            req.has_devices ? req.devices : NULL, uid, gid,
                            req.auto_remove ? cred->pid : 0, req.auto_remove, &c, msg, sizeof msg);
    d->creating_start_by = 0;
    if (rcode != 0)
        return send_errno(conn, rcode == -ENOMEM || rcode == -EIO || rcode == -ENOSPC ||
                                        rcode == -EEXIST || rcode == -EBUSY
                                    ? rcode
                                    : -EINVAL,
                          msg);
    int arc = req.nallocations ? api_alloc_claim(d, &req, c->ident.id, msg, sizeof msg) : 0;
    if (arc != 0) { /* an unrecorded claim could be claimed again: the container goes */
        if (store_delete_container(d->store, c->ident.id) == 0)
            container_remove(d, c, "its allocation's claim was not saved");
        return send_not_stored(conn, arc, msg);
    }
    if (from == 1) {
        char b1[CG_SIZE_BUFLEN], b2[CG_SIZE_BUFLEN];
        log_info("container %s: limit %s from profile %s/%s (peak %s + %u%%)", c->ident.id,
                 cg_format_size(c->limit, b1, sizeof b1), tenant, key,
                 cg_format_size(peak, b2, sizeof b2), margin);
        ring_push(d->api, "profile-limit", "profile peak + margin", c->ident.id, c->device, 0,
                  c->limit, true, c->ident.owner_uid);
    }
    json_t *o = container_json(d, c, true);
    json_object_set_new(o, "env", container_env_json(d, c));
    if (from == 1)
        json_object_set_new(o, "profile", json_pack("{s:I,s:i}", "peak", (json_int_t)peak,
                                                    "margin_pct", (int)margin));
    return send_json(conn, 201, o);
}

static enum MHD_Result update(struct daemon *d, struct MHD_Connection *conn,
                              struct request_ctx *rc, struct container *c,
                              const struct caller *who)
{
    struct update_request req;
    char msg[512];
    bool pending = false;
    if (api_parse_update(rc->body, rc->len, &req, msg, sizeof msg) != 0)
        return send_error(conn, 400, "%s", msg);
    struct container_change ch = {.has_limit = req.has_limit, .limit = req.limit,
                                  .has_priority = req.has_priority, .priority = req.priority};
    if (req.has_compute || req.has_mode) {
        /* A share without a mode keeps the container's mode (the default's when it had no
         * share); a mode without a share changes the mode of the share it has. */
        cg_container_info ci = {0};
        cg_container_get(d->core, c->cid, loop_now_ns(), &ci);
        ch.has_compute = true;
        ch.compute_pct = req.has_compute ? req.compute_pct : ci.compute_pct;
        ch.compute_mode = req.has_mode ? req.compute_mode
                          : ci.compute_pct ? ci.compute_mode
                                           : d->opt.default_compute_mode;
        if (ch.compute_pct == 0 && req.has_mode)
            return send_error(conn, 400,
                              "container %s has no compute share: give gpu_compute "
                              "(1-100) with compute_mode",
                              c->ident.id);
    }
    if (!who->all && req.has_priority && req.priority > tenant_priority_ceiling(d, c->ident.tenant))
        return send_error(conn, 403,
                          "priority %u is above what tenant '%s' may give its "
                          "containers (%u); an operator may allow more (convgpu "
                          "tenant set %s --max-priority N)",
                          req.priority, c->ident.tenant,
                          tenant_priority_ceiling(d, c->ident.tenant), c->ident.tenant);
    /* Only a raise is bounded: lowering is always allowed, even above a quota set later. */
    json_t *refusal = !who->all && req.has_limit && req.limit > held_by(d, c)
                          ? over_bound(d, c->ident.owner_uid, c, req.limit)
                          : NULL;
    if (refusal)
        return send_json(conn, 403, refusal);
    int rcode = gang_update(d, c, &ch, &pending, msg, sizeof msg);
    if (rcode == -ENOSPC || rcode == -EIO)
        return send_not_stored(conn, rcode, msg);
    if (rcode != 0)
        return send_error(conn, 409, "%s", msg);
    json_t *o = container_json(d, c, true);
    json_object_set_new(o, "limit_pending", json_boolean(pending));
    if (pending)
        json_object_set_new(o, "requested_limit", json_integer((json_int_t)req.limit));
    return send_json(conn, 200, o);
}

static enum MHD_Result set_policy(struct daemon *d, struct MHD_Connection *conn,
                                  struct request_ctx *rc)
{
    struct policy_request req;
    char msg[512];
    if (api_parse_policy(rc->body, rc->len, &req, msg, sizeof msg) != 0)
        return send_error(conn, 400, "%s", msg);
    cg_resume_policy rp = req.has_resume ? req.resume : cg_get_resume_policy(d->core);
    cg_placement_policy pp = req.has_placement ? req.placement : cg_get_placement_policy(d->core);
    if (d->store) {
        /* Stored first, both in one transaction: a policy a restart would not bring back is
         * not applied. */
        static const char *const keys[] = {"resume_policy", "placement_policy"};
        const char *values[] = {cg_resume_policy_name(rp), cg_placement_policy_name(pp)};
        int src = store_set_many(d->store, keys, values, 2);
        if (src != 0) {
            snprintf(msg, sizeof msg, "policy not changed: the state could not be saved (%s)",
                     store_error(d->store));
            return send_not_stored(conn, src, msg);
        }
    }
    for (struct container *c = d->containers; c; c = c->next)
        decide_freeze(d, c);
    cg_set_resume_policy(d->core, rp, loop_now_ns());
    cg_set_placement_policy(d->core, pp);
    for (struct container *c = d->containers; c; c = c->next)
        c->decide.dirty = true;
    decide_flush(d);
    log_info("policy: resume %s, placement %s", cg_resume_policy_name(rp),
             cg_placement_policy_name(pp));
    return send_json(conn, 200, json_pack("{s:s,s:s}", "resume", cg_resume_policy_name(rp),
                                          "placement", cg_placement_policy_name(pp)));
}

/* A tenant's standing: per device, and summed over the devices where it has containers. */
static json_t *tenant_json(struct daemon *d, const struct tenant *t)
{
    json_t *devs = json_array();
    uint64_t assigned = 0, used = 0, share = 0, ceiling = 0;
    unsigned n = 0, waiting = 0;
    for (unsigned i = 0; i < d->ndevices; i++) {
        cg_tenant_info ti;
        if (cg_tenant_get(d->core, t->id, i, &ti) != CG_OK || ti.ncontainers == 0)
            continue;
        n += ti.ncontainers;
        waiting += ti.nsuspended;
        assigned += ti.assigned;
        used += ti.used;
        share += ti.share;
        ceiling += ti.ceiling;
        json_array_append_new(devs, json_pack("{s:i,s:i,s:i,s:I,s:I,s:I,s:I}", "device", (int)i,
                                              "containers", (int)ti.ncontainers, "waiting",
                                              (int)ti.nsuspended, "assigned",
                                              (json_int_t)ti.assigned, "used",
                                              (json_int_t)ti.used, "share", (json_int_t)ti.share,
                                              "ceiling", (json_int_t)ti.ceiling));
    }
    json_t *o = json_pack("{s:s,s:i,s:i,s:b,s:i,s:i,s:I,s:I,s:I,s:I,s:o}", "name", t->name,
                          "weight", (int)t->weight, "max_priority",
                          (int)tenant_priority_ceiling(d, t->name), "exclusive_allowed",
                          (int)t->may_exclusive, "containers", (int)n, "waiting", (int)waiting,
                          "assigned", (json_int_t)assigned, "used", (json_int_t)used, "share",
                          (json_int_t)share, "ceiling", (json_int_t)ceiling, "devices", devs);
    /* In adaptive mode: the figures Eq. 1 weighs it by (adaptive.h), or null when it has no
     * profiled running job and only its job count counts. */
    if (o && cg_get_fair_share(d->core) == CG_FAIR_ADAPTIVE)
        json_object_set_new(o, "adaptive",
                            t->adaptive.runs == 0
                                ? json_null()
                                : json_pack("{s:i,s:I,s:f}", "runs", (int)t->adaptive.runs,
                                            "peak", (json_int_t)t->adaptive.peak_bytes,
                                            "duration_s", t->adaptive.duration_s));
    return o;
}

/* A caller bound per user sees its own tenant and those of its containers. */
static bool sees_tenant(struct daemon *d, const struct caller *who, const struct tenant *t)
{
    if (who->all)
        return true;
    char own[TENANT_NAME_MAX + 1];
    tenant_of_uid(who->cred.uid, own);
    if (strcmp(own, t->name) == 0)
        return true;
    for (struct container *c = d->containers; c; c = c->next)
        if (sees(who, c) && strcmp(c->ident.tenant, t->name) == 0)
            return true;
    return false;
}

static enum MHD_Result tenants_route(struct daemon *d, struct MHD_Connection *conn,
                                     const char *url, bool get, bool put,
                                     struct request_ctx *rc, const struct caller *who)
{
    if (strcmp(url, "/v1/tenants") == 0) {
        if (!get)
            return send_error(conn, 405, "use GET on /v1/tenants");
        json_t *arr = json_array();
        for (size_t i = 0; i < d->tenants.n; i++)
            if (sees_tenant(d, who, &d->tenants.v[i]))
                json_array_append_new(arr, tenant_json(d, &d->tenants.v[i]));
        return send_json(conn, 200, json_pack("{s:s,s:o}", "fair_share",
                                              cg_fair_mode_name(cg_get_fair_share(d->core)),
                                              "tenants", arr));
    }
    const char *name = url + strlen("/v1/tenants/");
    if (!api_valid_tenant(name))
        return send_error(conn, 400, "invalid tenant name: 1-%d characters of [A-Za-z0-9_.-], "
                                     "not starting with . or -", TENANT_NAME_MAX);
    const struct tenant *t = tenant_find(d, name);
    if (get) {
        if (!t || !sees_tenant(d, who, t))
            return send_error(conn, 404, "no such tenant: %s", name);
        return send_json(conn, 200, tenant_json(d, t));
    }
    if (!put)
        return send_error(conn, 405, "use GET or PUT on a tenant");
    if (who->cred.uid != 0 && who->cred.uid != geteuid())
        return send_error(conn, 403, "only root or the daemon's user may set a tenant's weight "
                                     "and allowances");
    struct tenant_request req;
    char msg[512];
    if (api_parse_tenant(rc->body, rc->len, &req, msg, sizeof msg) != 0)
        return send_error(conn, 400, "%s", msg);
    int rcode = tenant_set(d, name, &req, msg, sizeof msg);
    if (rcode != 0)
        return send_errno(conn, rcode, msg);
    return send_json(conn, 200, tenant_json(d, tenant_find(d, name)));
}

/* Fills buf with whole NDJSON lines of events the subscriber has not seen; suspends the
 * connection when there are none (MHD calls again after a resume). */
static ssize_t follow_reader(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)pos;
    struct subscriber *sub = cls;
    struct api *a = sub->a;
    if (sub->gone)
        return MHD_CONTENT_READER_END_WITH_ERROR;
    uint64_t first = a->next_seq > EVENT_RING ? a->next_seq - EVENT_RING : 0;
    if (sub->next < first)
        sub->next = first; /* the ring moved on: the client missed some, seq numbers show it */
    size_t n = 0;
    while (sub->next < a->next_seq) {
        if (!sees_event(&sub->who, &a->ring[sub->next % EVENT_RING])) {
            sub->next++;
            continue;
        }
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

static enum MHD_Result follow(struct api *a, struct MHD_Connection *conn, uint64_t since,
                              const struct caller *who)
{
    enum api_refusal why = api_conns_follow(&a->conns, conn_of(a->d, conn));
    if (why == API_REFUSED_USER)
        return send_error(conn, 429, "this user follows as many event streams as it may "
                                     "(api-user-followers: %u)", a->conns.lim.per_user_followers);
    if (why != API_ADMITTED || a->nsubs >= MAX_SUBSCRIBERS)
        return send_error(conn, 503, "too many event followers (at most %u)",
                          a->conns.lim.followers);
    struct subscriber *sub = calloc(1, sizeof *sub);
    if (!sub)
        return MHD_NO;
    sub->a = a;
    sub->conn = conn;
    sub->who = *who;
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

static enum MHD_Result events(struct daemon *d, struct MHD_Connection *conn,
                              const struct caller *who)
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
        return follow(a, conn, since_s ? since : a->next_seq, who);
    if (f && strcmp(f, "0") != 0 && strcmp(f, "false") != 0)
        return send_error(conn, 400, "follow must be 1 or 0");
    uint64_t first = a->next_seq > EVENT_RING ? a->next_seq - EVENT_RING : 0;
    if (since < first)
        since = first;
    json_t *arr = json_array();
    for (uint64_t s = since; s < a->next_seq; s++)
        if (sees_event(who, &a->ring[s % EVENT_RING]))
            json_array_append_new(arr, event_json(&a->ring[s % EVENT_RING]));
    return send_json(conn, 200, json_pack("{s:o,s:I}", "events", arr, "next", (json_int_t)a->next_seq));
}

/* ---- profiles ---------------------------------------------------------------------------- */

static int profile_to_json(void *ctx, const struct profile *p)
{
    json_t *o = json_pack("{s:s,s:s,s:I,s:f,s:f,s:b,s:i,s:I,s:I}", "tenant", p->tenant, "key",
                          p->key, "peak", (json_int_t)p->peak, "duration_s", p->duration_s,
                          "utilization", p->utilization, "utilization_known",
                          p->utilization_known, "window", (int)p->window, "runs",
                          (json_int_t)p->runs, "last", (json_int_t)p->last_unix);
    return o && json_array_append_new(ctx, o) == 0 ? 0 : -1;
}

/* GET /v1/profiles, DELETE /v1/profiles/{key}[?tenant=T]. A caller who is not an operator sees
 * and forgets only its own tenant's (its user name: profile.h); an operator every tenant's, or
 * one tenant's with ?tenant=. */
static enum MHD_Result profiles(struct daemon *d, struct MHD_Connection *conn, const char *url,
                                bool get, bool del, const struct caller *who)
{
    char own[TENANT_NAME_MAX + 1];
    tenant_of_uid(who->cred.uid, own); /* the caller's own tenant */
    const char *asked = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "tenant");
    if (asked && (!*asked || strlen(asked) > PROFILE_TENANT_MAX))
        return send_error(conn, 400, "tenant must be 1-%d characters", PROFILE_TENANT_MAX);
    if (asked && !who->all && strcmp(asked, own) != 0)
        return send_error(conn, 403, "only operators see other tenants' profiles");
    const char *tenant = asked ? asked : who->all ? NULL : own;
    if (strcmp(url, "/v1/profiles") == 0) {
        if (!get)
            return send_error(conn, 405, "use GET on /v1/profiles");
        json_t *arr = json_array();
        if (!arr || !d->store || store_profile_each(d->store, tenant, profile_to_json, arr) != 0) {
            json_decref(arr);
            return send_error(conn, 503, "cannot read the profiles");
        }
        return send_json(conn, 200, arr);
    }
    const char *key = url + 13;
    if (!del)
        return send_error(conn, 405, "use DELETE on /v1/profiles/KEY");
    if (!cg_profile_key_valid(key))
        return send_error(conn, 400, "a profile key is 1-255 printable characters without spaces, "
                                     "quotes or backslashes");
    unsigned n = 0;
    int rc = d->store ? store_profile_delete(d->store, tenant, key, &n) : -EIO;
    if (rc != 0) {
        char msg[512];
        snprintf(msg, sizeof msg, "profile %s not removed: the state could not be saved (%s)", key,
                 d->store ? store_error(d->store) : "no store");
        return send_not_stored(conn, rc, msg);
    }
    if (n == 0)
        return send_error(conn, 404, "no profile named %s%s%s", key, tenant ? " for tenant " : "",
                          tenant ? tenant : "");
    log_info("profile %s removed (%u tenant%s)", key, n, n == 1 ? "" : "s");
    adaptive_touch(d); /* a running job may have lost the profile it was weighed by */
    return send_json(conn, 200, json_pack("{s:s,s:i}", "removed", key, "tenants", (int)n));
}

/* ---- the routes (api_route.h) -------------------------------------------------------------- */

/* One request, as a handler sees it: the route's argument resolved ({id}: the container, which
 * the caller may see). */
struct req {
    struct daemon *d;
    struct MHD_Connection *conn;
    struct request_ctx *rc;
    const struct caller *who;
    const char *method, *url;
    const char *arg;
    struct container *c;
};

static enum MHD_Result h_version(struct req *r) { return send_json(r->conn, 200, version_json(r->d)); }

static enum MHD_Result h_devices(struct req *r)
{
    json_t *arr = json_array();
    for (unsigned i = 0; i < r->d->ndevices; i++)
        json_array_append_new(arr, device_json(r->d, i));
    return send_json(r->conn, 200, arr);
}

static enum MHD_Result h_list(struct req *r)
{
    json_t *arr = json_array();
    for (struct container *c = r->d->containers; c; c = c->next)
        if (!c->gang.leader && sees(r->who, c))
            json_array_append_new(arr, container_json(r->d, c, false));
    return send_json(r->conn, 200, arr);
}

static enum MHD_Result h_create(struct req *r)
{
    return create_container(r->d, r->conn, r->rc, r->who);
}

static enum MHD_Result h_inspect(struct req *r)
{
    return send_json(r->conn, 200, container_json(r->d, r->c, true));
}

static enum MHD_Result h_remove(struct req *r)
{
    struct daemon *d = r->d;
    char cid[CONTAINER_ID_MAX + 1];
    snprintf(cid, sizeof cid, "%s", r->c->ident.id);
    /* The row goes first: a container a restart would bring back is not removed. */
    int src = d->store ? store_delete_container(d->store, cid) : 0;
    if (src != 0) {
        char msg[512];
        snprintf(msg, sizeof msg, "container %s not removed: the state could not be saved (%s)",
                 cid, store_error(d->store));
        return send_not_stored(r->conn, src, msg);
    }
    container_remove(d, r->c, "removed through the API");
    return send_json(r->conn, 200, json_pack("{s:s}", "removed", cid));
}

static enum MHD_Result h_start(struct req *r)
{
    struct daemon *d = r->d;
    struct MHD_Connection *conn = r->conn;
    struct container *c = r->c;
    struct start_request sr;
    char msg[512];
    if (api_parse_start(r->rc->body, r->rc->len, &sr, msg, sizeof msg) != 0)
        return send_error(conn, 400, "%s", msg);
    if (kill(sr.pid, 0) != 0 && errno == ESRCH)
        return send_error(conn, 400, "no process %d", sr.pid);
    /* A tenant names only its own process: another's (init, say) would tie the container's life
     * to a process the tenant does not own (issue #35). */
    uid_t pid_uid;
    if (!r->who->all && (!cg_proc_real_uid(sr.pid, &pid_uid) || pid_uid != r->who->cred.uid))
        return send_error(conn, 403, "process %d is not yours: name a process of uid %u", sr.pid,
                          (unsigned)r->who->cred.uid);
    /* With auto_remove the init process's exit is the container's stop: its memory returns at
     * once, even when no stop hook runs (a runtime killed, a daemon that was down then: restore
     * checks the recorded pid and start time). */
    uint64_t start = sr.auto_remove ? cg_proc_start_time(sr.pid) : 0;
    if (d->store) {
        /* Stored first: a restart must know the init (and, with auto_remove, watch it) before
         * the caller is told it is. */
        struct stored_container row;
        store_row_of(c, &row);
        row.init_pid = sr.pid;
        row.start_by_unix = 0; /* started: its start deadline is met */
        if (sr.auto_remove) {
            row.auto_remove = true;
            row.owner_pid = sr.pid;
            row.owner_start = start;
        }
        int src = store_put_row(d->store, &row);
        if (src != 0) {
            snprintf(msg, sizeof msg,
                     "init pid of container %s not recorded: the state could "
                     "not be saved (%s)",
                     c->ident.id, store_error(d->store));
            return send_not_stored(conn, src, msg);
        }
    }
    if (sr.auto_remove && container_watch_owner(c, sr.pid, start, msg, sizeof msg) != 0) {
        if (d->store && store_put_container(d->store, c) != 0)
            log_error("container %s: state.db names pid %d as its init, which could not be "
                      "watched: %s",
                      c->ident.id, sr.pid, store_error(d->store));
        return send_error(conn, 400, "%s", msg);
    }
    c->life.init_pid = sr.pid;
    container_set_start_by(c, 0, msg, sizeof msg);
    log_info("container %s: started, init pid %d%s", c->ident.id, sr.pid,
             sr.auto_remove ? ", removed when it exits" : "");
    return send_json(conn, 200, container_json(d, c, true));
}

static enum MHD_Result h_limit(struct req *r) { return update(r->d, r->conn, r->rc, r->c, r->who); }

/* A hold by a caller who is not an operator is its tenant's: bounded by the hold pool (swap.h). */
static enum MHD_Result swap_route(struct req *r, bool out)
{
    cg_hold hold = !out ? CG_HOLD_NONE : r->who->all ? CG_HOLD_OPERATOR : CG_HOLD_TENANT;
    char msg[512];
    int src = swap_request(r->d, r->c, hold, msg, sizeof msg);
    if (src == -ENOSPC || src == -EIO)
        return send_not_stored(r->conn, src, msg);
    if (src != 0)
        return send_error(r->conn, 409, "%s", msg);
    return send_json(r->conn, 202, container_json(r->d, r->c, true));
}

static enum MHD_Result h_swap_out(struct req *r) { return swap_route(r, true); }

/* Pause, resume, move (pause.h): 202 with the container as it is now (pausing, resuming,
 * ...); the end shows in its state, its events and pause_error. */
static enum MHD_Result pause_answer(struct req *r, int rc, const char *msg)
{
    if (rc == -ENOSPC || rc == -EIO)
        return send_not_stored(r->conn, rc, msg);
    if (rc != 0 && rc != PAUSE_SWAPPING)
        return send_error(r->conn, (unsigned)rc, "%s", msg);
    json_t *o = container_json(r->d, r->c, true);
    if (o && rc == PAUSE_SWAPPING)
        json_object_set_new(o, "fallback", json_string("swap"));
    return send_json(r->conn, 202, o);
}

static enum MHD_Result h_pause(struct req *r)
{
    char msg[512];
    return pause_answer(r, pause_request(r->d, r->c, msg, sizeof msg), msg);
}

static enum MHD_Result h_resume(struct req *r)
{
    char msg[512];
    return pause_answer(r, pause_resume_request(r->d, r->c, msg, sizeof msg), msg);
}

static enum MHD_Result h_move(struct req *r)
{
    char msg[512];
    int dev = -1;
    /* An operator's route: the container is looked up here, among all (the caller sees all). */
    r->c = strlen(r->arg) <= CONTAINER_ID_MAX ? find_for(r->d, r->who, r->arg) : NULL;
    if (!r->c)
        return send_error(r->conn, 404, "no such container: %s", r->arg);
    if (api_parse_move(r->rc->body, r->rc->len, r->d->ndevices, &dev, msg, sizeof msg) != 0)
        return send_error(r->conn, 400, "%s", msg);
    return pause_answer(r, pause_move_request(r->d, r->c, dev, msg, sizeof msg), msg);
}
static enum MHD_Result h_swap_in(struct req *r) { return swap_route(r, false); }

static enum MHD_Result h_policy_get(struct req *r)
{
    struct daemon *d = r->d;
    return send_json(r->conn, 200,
                     json_pack("{s:s,s:s,s:s}", "resume",
                               cg_resume_policy_name(cg_get_resume_policy(d->core)), "placement",
                               cg_placement_policy_name(cg_get_placement_policy(d->core)),
                               "fair_share", cg_fair_mode_name(cg_get_fair_share(d->core))));
}

static enum MHD_Result h_policy_put(struct req *r) { return set_policy(r->d, r->conn, r->rc); }

static enum MHD_Result h_tenants(struct req *r)
{
    bool get = strcmp(r->method, "GET") == 0, put = strcmp(r->method, "PUT") == 0;
    return tenants_route(r->d, r->conn, r->url, get, put, r->rc, r->who);
}

static enum MHD_Result h_events(struct req *r) { return events(r->d, r->conn, r->who); }

static enum MHD_Result h_profiles(struct req *r)
{
    bool get = strcmp(r->method, "GET") == 0, del = strcmp(r->method, "DELETE") == 0;
    return profiles(r->d, r->conn, r->url, get, del, r->who);
}

static enum MHD_Result h_allocate(struct req *r)
{
    unsigned status = 500;
    json_t *ans = api_alloc_post(r->d, r->rc->body, r->rc->len, r->who->all, &status);
    return ans ? send_json(r->conn, status, ans) : send_error(r->conn, 500, "out of memory");
}

static enum MHD_Result h_interference(struct req *r)
{
    unsigned status = 500;
    json_t *ans = api_interference(r->d, r->method, r->rc->body, r->rc->len, r->who->cred.uid,
                                   r->who->all,
                                   MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND,
                                                               "tenant"),
                                   &status);
    return ans ? send_json(r->conn, status, ans) : send_error(r->conn, 500, "out of memory");
}

static enum MHD_Result h_metrics(struct req *r)
{
    char *text = metrics_render(r->d, r->who->all ? NULL : &r->who->cred.uid);
    if (!text)
        return send_error(r->conn, 500, "out of memory");
    return http_answer(r->conn, 200, "text/plain; version=0.0.4", text, strlen(text), NULL);
}

static enum MHD_Result (*const handlers[H_COUNT])(struct req *r) = {
    [H_VERSION] = h_version,       [H_DEVICES] = h_devices,
    [H_LIST] = h_list,             [H_CREATE] = h_create,
    [H_INSPECT] = h_inspect,       [H_REMOVE] = h_remove,
    [H_START] = h_start,           [H_LIMIT] = h_limit,
    [H_SWAP_OUT] = h_swap_out,     [H_SWAP_IN] = h_swap_in,
    [H_POLICY_GET] = h_policy_get, [H_POLICY_PUT] = h_policy_put,
    [H_TENANTS] = h_tenants,       [H_TENANT_GET] = h_tenants,
    [H_TENANT_PUT] = h_tenants,    [H_EVENTS] = h_events,
    [H_PROFILES] = h_profiles,     [H_PROFILE_DELETE] = h_profiles,
    [H_ALLOCATE] = h_allocate,     [H_INTERFERENCE] = h_interference,
    [H_METRICS] = h_metrics,       [H_PAUSE] = h_pause,
    [H_RESUME] = h_resume,         [H_MOVE] = h_move,
};

/* Whether who may call a route declared `may`: the one place privilege is enforced. */
static bool may_call(enum api_may may, const struct caller *who)
{
    switch (may) {
    case API_MAY_ANYONE:
    case API_MAY_OWNER: /* the container is looked up among those the caller sees */
        return true;
    case API_MAY_OPERATOR:
        return who->all;
    case API_MAY_ADMIN:
        return who->cred.uid == 0 || who->cred.uid == geteuid();
    }
    return false;
}

static enum MHD_Result route(struct daemon *d, struct MHD_Connection *conn, const char *url,
                             const char *method, struct request_ctx *rc)
{
    struct caller who;
    if (!identify(d, conn, &who))
        return send_error(conn, 403, "cannot identify the caller");
    char arg[PROFILE_KEY_MAX + 2], allowed[64];
    unsigned status;
    const struct api_route *rt =
        api_route_match(method, url, arg, sizeof arg, &status, allowed, sizeof allowed);
    if (!rt && status == 405)
        return send_error(conn, 405, "use %s on %s", allowed, url);
    if (!rt)
        return strncmp(url, "/v1/containers/", 15) == 0
                   ? send_error(conn, 404, "no such container or resource: %s", url)
                   : send_error(conn, 404, "unknown resource %s (the API lives under /v1)", url);
    if (!may_call(rt->may, &who))
        return send_error(conn, 403, "%s", rt->deny ? rt->deny : "not allowed");
    struct req r = {.d = d, .conn = conn, .rc = rc, .who = &who, .method = method, .url = url,
                    .arg = arg};
    if (rt->may == API_MAY_OWNER) {
        r.c = strlen(arg) <= CONTAINER_ID_MAX ? find_for(d, &who, arg) : NULL;
        if (!r.c)
            return send_error(conn, 404, "no such container: %s", arg);
    }
    return handlers[rt->handler](&r);
}

/* A chunk of a body (http_body.h): kept while the body is within MAX_BODY. */
static int append_body(void *ctx, void *req, const char *data, size_t n)
{
    (void)ctx;
    struct request_ctx *rc = req;
    if (rc->len + n > MAX_BODY)
        return 1;
    char *nb = realloc(rc->body, rc->len + n + 1);
    if (!nb)
        return -1;
    memcpy(nb + rc->len, data, n);
    rc->body = nb;
    rc->len += n;
    return 0;
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *conn, const char *url,
                               const char *method, const char *version, const char *upload,
                               size_t *upload_size, void **con_cls)
{
    (void)version;
    struct daemon *d = cls;
    switch (http_body_feed(con_cls, sizeof(struct request_ctx), upload, upload_size, append_body,
                           NULL)) {
    case HTTP_BODY_MORE: return MHD_YES;
    case HTTP_BODY_FAILED: return MHD_NO;
    case HTTP_BODY_COMPLETE: break;
    }
    struct request_ctx *rc = *con_cls;
    api_conns_request_arrived(conn_of(d, conn)); /* answered now: its deadline is met */
    if (rc->in.too_big)
        return send_error(conn, 413, "request body larger than %d bytes", MAX_BODY);
    return route(d, conn, url, method, rc);
}

static void completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                      enum MHD_RequestTerminationCode toe)
{
    struct api *a = cls;
    /* The next request on this connection must arrive in time as the first did. */
    if (toe == MHD_REQUEST_TERMINATED_COMPLETED_OK) {
        struct api_conn *c = conn_of(a->d, conn);
        api_conns_answered(&a->conns, c, loop_now_ns());
        if (c && c->deadline && (!a->next_deadline || c->deadline < a->next_deadline))
            a->next_deadline = c->deadline;
    }
    struct request_ctx *rc = *con_cls;
    if (rc) {
        free(rc->body);
        free(rc);
        *con_cls = NULL;
    }
}

/* ---- connections (api_conn.h) -------------------------------------------------------------- */

/* A refused connection is told why in one small HTTP answer (it fits any socket buffer, so a
 * non-blocking write does not fail for want of room), then closed. */
static void refuse(int fd, enum api_refusal why)
{
    char body[256], head[192];
    int blen = snprintf(body, sizeof body, "{\"error\":\"%s\"}\n", api_refusal_text(why));
    unsigned status = why == API_REFUSED_USER ? 429 : 503;
    int hlen = snprintf(head, sizeof head,
                        "HTTP/1.1 %u %s\r\nContent-Type: application/json\r\n"
                        "Content-Length: %d\r\nConnection: close\r\n\r\n",
                        status, status == 429 ? "Too Many Requests" : "Service Unavailable", blen);
    struct iovec iov[2] = {{head, (size_t)hlen}, {body, (size_t)blen}};
    struct msghdr mh = {.msg_iov = iov, .msg_iovlen = 2};
    (void)!sendmsg(fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
    close(fd);
}

/* MHD's messages, in the daemon's log at debug level: they are about one client's connection
 * (closed early, TCP options MHD tries on the UNIX sockets the daemon hands it), and a flood of
 * bad clients must not become a flood of warnings. What matters is logged by the daemon itself
 * (refusals, deadlines, a server that cannot start). */
__attribute__((format(printf, 2, 0))) static void mhd_log(void *cls, const char *fmt,
                                                            va_list ap)
{
    (void)cls;
    if (!log_enabled(LOG_DEBUG))
        return;
    char line[512];
    vsnprintf(line, sizeof line, fmt, ap);
    size_t n = strlen(line);
    while (n && (line[n - 1] == '\n' || line[n - 1] == '.'))
        line[--n] = '\0';
    log_debug("control API (HTTP): %s", line);
}

static void cut_conn(int fd, void *ctx)
{
    (void)ctx;
    /* MHD owns the socket: shutting it down makes MHD see the end of it and close it. */
    shutdown(fd, SHUT_RDWR);
}

/* Accepting never stops: every pending connection is taken, admitted by the rules of
 * api_conn.h or told why not, and handed to MHD. Out of descriptors, one is shed. */
static void api_accept(void *ctx, uint32_t events)
{
    (void)events;
    struct api *a = ctx;
    struct daemon *d = a->d;
    for (int n = 0; n < 64; n++) {
        struct sockaddr_un addr;
        socklen_t alen = sizeof addr;
        int fd = accept4(a->listen_fd, (struct sockaddr *)&addr, &alen,
                         SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            if (errno == EMFILE || errno == ENFILE) {
                if (log_once_a_second(&d->last_fd_warning))
                    log_warn("out of file descriptors: refusing control-API connections");
                fdspare_shed(d, a->listen_fd);
                continue;
            }
            return;
        }
        struct ucred cred;
        socklen_t clen = sizeof cred;
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) != 0) {
            close(fd);
            continue;
        }
        struct api_conn *c, *displaced;
        uint64_t now = loop_now_ns();
        enum api_refusal why = api_conns_admit(&a->conns, fd, &cred,
                                               peer_is_operator(d, fd, &cred), now, &c,
                                               &displaced);
        if (why != API_ADMITTED) {
            a->conns.refused++;
            if (log_once_a_second(&a->last_refusal_warning))
                log_warn("control API: refusing a connection of uid %u (pid %d): %s",
                         (unsigned)cred.uid, (int)cred.pid, api_refusal_text(why));
            refuse(fd, why);
            continue;
        }
        if (displaced) {
            if (log_once_a_second(&a->last_refusal_warning))
                log_warn("control API full: uid %u's oldest idle connection gives way to uid %u",
                         (unsigned)displaced->cred.uid, (unsigned)cred.uid);
            cut_conn(displaced->fd, NULL);
        }
        if (!a->next_deadline || c->deadline < a->next_deadline)
            a->next_deadline = c->deadline;
        /* On failure MHD has closed the socket itself. */
        if (MHD_add_connection(a->mhd, fd, (struct sockaddr *)&addr, alen) != MHD_YES)
            api_conns_closed(&a->conns, api_conns_find(&a->conns, fd));
        a->need_run = true;
    }
}

/* MHD's word that it closed a connection: the record goes with it. */
static void conn_notify(void *cls, struct MHD_Connection *conn, void **socket_context,
                        enum MHD_ConnectionNotificationCode toe)
{
    struct api *a = cls;
    if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
        *socket_context = conn_of(a->d, conn);
    } else if (toe == MHD_CONNECTION_NOTIFY_CLOSED && *socket_context) {
        api_conns_closed(&a->conns, *socket_context);
        *socket_context = NULL;
    }
}

static void api_ready(void *ctx, uint32_t events)
{
    (void)events;
    struct api *a = ctx;
    a->need_run = false;
    MHD_run(a->mhd);
}

/* MHD must also run when its timeout comes due, with nothing on its epoll fd: to close a
 * connection that stayed silent too long, or to go on with one it left on its own ready list
 * (external-epoll MHD keeps a connection there while it still has work, and no new event on the
 * fd announces it). Running only on fd events left a silent connection open for good and the
 * loop spinning on a zero timeout. */
static bool mhd_due(struct MHD_Daemon *mhd)
{
    MHD_UNSIGNED_LONG_LONG t;
    return MHD_get_timeout(mhd, &t) == MHD_YES && t == 0;
}

/* A follower waiting for events is suspended, and MHD does not look at a suspended connection:
 * one whose client went away would keep its descriptor and its place in the per-user bound until
 * the next event. Once a second, every waiting follower's socket is asked whether its peer hung
 * up; such a follower is resumed, and MHD sees the end and closes it. */
static void reap_gone_followers(struct api *a)
{
    uint64_t now = loop_now_ns();
    if (now < a->next_follower_check)
        return;
    a->next_follower_check = now + 1000000000ull;
    for (struct subscriber *sub = a->subs; sub; sub = sub->next_sub) {
        if (!sub->suspended)
            continue;
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(sub->conn, MHD_CONNECTION_INFO_CONNECTION_FD);
        struct pollfd pfd = {.fd = ci ? ci->connect_fd : -1, .events = POLLRDHUP};
        if (pfd.fd >= 0 && poll(&pfd, 1, 0) == 1 &&
            (pfd.revents & (POLLRDHUP | POLLHUP | POLLERR))) {
            sub->gone = true;
            sub->suspended = false;
            MHD_resume_connection(sub->conn);
            a->need_run = true;
        }
    }
}

void api_poll(struct daemon *d)
{
    struct api *a = d->api;
    if (a && a->subs)
        reap_gone_followers(a);
    if (a && a->next_deadline && a->next_deadline <= loop_now_ns()) {
        unsigned before = (unsigned)a->conns.timed_out;
        a->next_deadline = api_conns_expire(&a->conns, loop_now_ns(), cut_conn, NULL);
        if ((unsigned)a->conns.timed_out != before) {
            a->need_run = true;
            if (log_once_a_second(&a->last_refusal_warning))
                log_warn("control API: %u connection(s) did not send a whole request within "
                         "%u s (api-request-timeout); closed",
                         (unsigned)a->conns.timed_out - before, d->opt.api_request_timeout);
        }
    }
    if (a && (a->need_run || mhd_due(a->mhd))) {
        a->need_run = false;
        MHD_run(a->mhd);
    }
}

int api_timeout_ms(struct daemon *d)
{
    if (!d->api)
        return -1;
    int due = -1;
    if (d->api->next_deadline) {
        uint64_t now = loop_now_ns(), at = d->api->next_deadline;
        due = at <= now ? 0 : (int)((at - now) / 1000000 + 1);
        if (due > 60000)
            due = 60000;
    }
    MHD_UNSIGNED_LONG_LONG t;
    if (MHD_get_timeout(d->api->mhd, &t) != MHD_YES)
        return due;
    int mt = t > 60000 ? 60000 : (int)t;
    return due >= 0 && due < mt ? due : mt;
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
    a->listen_fd = listen_fd;
    struct api_conn_limits lim = {
        .total = d->opt.api_max_connections,
        .reserve = API_OPERATOR_RESERVE(d->opt.api_max_connections),
        .per_user = d->opt.api_user_connections,
        .followers = MAX_SUBSCRIBERS,
        .followers_reserve = MAX_SUBSCRIBERS / 4,
        .per_user_followers = d->opt.api_user_followers,
        .request_timeout_ns = (uint64_t)d->opt.api_request_timeout * 1000000000ull,
    };
    api_conns_init(&a->conns, &lim);
    /* The daemon accepts (api_accept) and hands MHD each connection it admits: MHD's own accept
     * stopped for good once its limit had been reached on an external epoll (issue #35). */
    a->mhd = MHD_start_daemon(MHD_USE_EPOLL | MHD_USE_ERROR_LOG | MHD_ALLOW_SUSPEND_RESUME |
                                  MHD_USE_NO_LISTEN_SOCKET,
                              0, NULL, NULL, handler, d,
                              MHD_OPTION_NOTIFY_COMPLETED, completed, a,
                              MHD_OPTION_NOTIFY_CONNECTION, conn_notify, a,
                              MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,
                              MHD_OPTION_CONNECTION_TIMEOUT, d->opt.api_idle_timeout,
                              MHD_OPTION_CONNECTION_LIMIT, d->opt.api_max_connections + 8,
                              /* MHD's default: the request line, headers and read
                               * buffer; a body streams into request_ctx. 128 KiB cost
                               * each connection page faults (53 -> 19 per container's
                               * life) and 32 MiB under 256 idle connections. */
                              MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(32 * 1024),
                              MHD_OPTION_END);
    if (!a->mhd) {
        snprintf(err, errlen, "cannot start the HTTP server on the control socket");
        api_conns_free(&a->conns);
        free(a);
        return -1;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(a->mhd, MHD_DAEMON_INFO_EPOLL_FD);
    if (!info || loop_add(d->loop, info->epoll_fd, EPOLLIN, api_ready, a) != 0 ||
        loop_add(d->loop, listen_fd, EPOLLIN, api_accept, a) != 0) {
        snprintf(err, errlen, "cannot watch the HTTP server");
        if (info)
            loop_del(d->loop, info->epoll_fd);
        MHD_stop_daemon(a->mhd);
        api_conns_free(&a->conns);
        free(a);
        return -1;
    }
    a->epfd = info->epoll_fd;
    d->api = a;
    d->api_conns = &a->conns;
    notice_listen(d, api_on_notice, a);
    return 0;
}

void api_stop(struct daemon *d)
{
    struct api *a = d->api;
    if (!a)
        return;
    notice_unlisten(d, api_on_notice, a);
    d->api_conns = NULL;
    loop_del(d->loop, a->epfd);
    loop_del(d->loop, a->listen_fd);
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
    api_conns_free(&a->conns);
    free(a);
    d->api = NULL;
}

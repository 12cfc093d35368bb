/* metrics.c — counters kept on the decision path (a few integer increments) and the text
 * rendered only when scraped. Label values are escaped as the exposition format requires.
 * Compute series: the share is the core's; utilisation, busy and throttled time are what the
 * daemon measured through NVML (gates.h: struct compute_state; struct device). */
#include "metrics.h"
#include "api_conn.h"
#include "swap.h"
#include "watchdog.h"
#include "http_answer.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#define NKINDS 16
static const double bucket_le[] = {0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05,
                                   0.1,    0.5,    1,     5,     30,   120};
#define NBUCKETS (sizeof bucket_le / sizeof bucket_le[0])

struct metrics {
    uint64_t events[NKINDS];
    uint64_t buckets[NBUCKETS + 1]; /* last: +Inf */
    double sum;
    uint64_t count;
    struct MHD_Daemon *tcp;
    int tcp_epfd;
};

static struct metrics *get(struct daemon *d)
{
    if (!d->metrics)
        d->metrics = calloc(1, sizeof(struct metrics));
    return d->metrics;
}

static void metrics_count_event(struct daemon *d, cg_event_kind kind)
{
    struct metrics *m = get(d);
    if (m && (unsigned)kind < NKINDS)
        m->events[kind]++;
}

static void metrics_observe_request(struct daemon *d, double seconds)
{
    struct metrics *m = get(d);
    if (!m || seconds < 0)
        return;
    unsigned i = 0;
    while (i < NBUCKETS && seconds > bucket_le[i])
        i++;
    m->buckets[i]++;
    m->sum += seconds;
    m->count++;
}

/* The decision counters and the latency histogram are fed by the daemon's notices (notice.h):
 * the decision path does not know the metrics exist. */
static void metrics_on_notice(struct daemon *d, const struct notice *n, void *ctx)
{
    (void)ctx;
    if (n->kind == NOTICE_CORE_EVENT)
        metrics_count_event(d, n->ev->kind);
    else if (n->kind == NOTICE_REQUEST_ANSWERED)
        metrics_observe_request(d, (double)n->waited_ns / 1e9);
}

void metrics_init(struct daemon *d)
{
    notice_listen(d, metrics_on_notice, NULL);
}

struct buf {
    char *p;
    size_t len, cap;
    bool failed;
};

static void out(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void out(struct buf *b, const char *fmt, ...)
{
    if (b->failed)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->failed = true;
            return;
        }
        if ((size_t)n < b->cap - b->len) {
            b->len += (size_t)n;
            return;
        }
        size_t ncap = (b->cap + (size_t)n + 1) * 2;
        char *np = realloc(b->p, ncap);
        if (!np) {
            b->failed = true;
            return;
        }
        b->p = np;
        b->cap = ncap;
    }
}

/* Label values: backslash, double quote and newline escaped. */
static const char *esc(const char *s, char *buf, size_t len)
{
    size_t j = 0;
    for (; *s && j + 2 < len; s++) {
        if (*s == '\\' || *s == '"' || *s == '\n') {
            buf[j++] = '\\';
            buf[j++] = *s == '\n' ? 'n' : *s;
        } else {
            buf[j++] = *s;
        }
    }
    buf[j] = '\0';
    return buf;
}

static void help(struct buf *b, const char *name, const char *type, const char *text)
{
    out(b, "# HELP %s %s\n# TYPE %s %s\n", name, text, name, type);
}

/* Whether a caller bound to uid sees tenant t: its own, or one of its containers'. */
static bool tenant_visible(struct daemon *d, const struct tenant *t, const uid_t *only_uid)
{
    if (!only_uid)
        return true;
    char own[TENANT_NAME_MAX + 1];
    tenant_of_uid(*only_uid, own);
    if (strcmp(own, t->name) == 0)
        return true;
    for (struct container *c = d->containers; c; c = c->next)
        if (c->ident.owner_uid == *only_uid && strcmp(c->ident.tenant, t->name) == 0)
            return true;
    return false;
}

/* Per tenant: its weight, and on each device where it has containers what it holds, its fair
 * share, its ceiling and how many of its containers wait (docs/SCHEDULING.md). */
static void render_tenants(struct daemon *d, struct buf *b, const uid_t *only_uid)
{
    char e[2 * TENANT_NAME_MAX + 4];
    help(b, "convgpu_tenant_weight", "gauge", "The tenant's fair-share weight.");
    for (size_t i = 0; i < d->tenants.n; i++)
        if (tenant_visible(d, &d->tenants.v[i], only_uid))
            out(b, "convgpu_tenant_weight{tenant=\"%s\"} %u\n",
                esc(d->tenants.v[i].name, e, sizeof e), d->tenants.v[i].weight);
    static const struct { const char *name, *text; } tm[] = {
        {"convgpu_tenant_assigned_bytes", "Memory assigned to the tenant's containers."},
        {"convgpu_tenant_used_bytes", "Memory the tenant's containers use (the core's count)."},
        {"convgpu_tenant_share_bytes", "The tenant's fair share of the device (capacity when "
                                       "fair share is none)."},
        {"convgpu_tenant_ceiling_bytes", "What caps the tenant's assignments on the device."},
        {"convgpu_tenant_waiting_containers", "The tenant's containers waiting for memory."},
    };
    for (unsigned k = 0; k < sizeof tm / sizeof tm[0]; k++) {
        help(b, tm[k].name, "gauge", tm[k].text);
        for (size_t i = 0; i < d->tenants.n; i++) {
            const struct tenant *t = &d->tenants.v[i];
            if (!tenant_visible(d, t, only_uid))
                continue;
            for (unsigned dev = 0; dev < d->ndevices; dev++) {
                cg_tenant_info ti;
                if (cg_tenant_get(d->core, t->id, dev, &ti) != CG_OK || !ti.ncontainers)
                    continue;
                uint64_t v = k == 0 ? ti.assigned : k == 1 ? ti.used : k == 2 ? ti.share
                           : k == 3 ? ti.ceiling : ti.nsuspended;
                out(b, "%s{tenant=\"%s\",device=\"%u\"} %llu\n", tm[k].name,
                    esc(t->name, e, sizeof e), dev, (unsigned long long)v);
            }
        }
    }
}

/* The control API's and the container sockets' connections, and what their bounds refused
 * (docs/SECURITY.md, "The control socket under hostile clients"): node-wide, for operators. */
static void render_connections(struct daemon *d, struct buf *b)
{
    const struct api_conns *t = d->api_conns;
    if (!t)
        return;
    struct {
        unsigned connections, tenant_connections, followers;
        uint64_t accepted, refused, displaced, timed_out;
    } s = {t->n, t->n_tenants, t->nfollow, t->accepted, t->refused, t->displaced, t->timed_out};
    help(b, "convgpu_api_connections", "gauge", "Open control-socket connections.");
    out(b, "convgpu_api_connections %u\n", s.connections);
    help(b, "convgpu_api_tenant_connections", "gauge",
         "Open control-socket connections of users who are not root or operators.");
    out(b, "convgpu_api_tenant_connections %u\n", s.tenant_connections);
    help(b, "convgpu_api_followers", "gauge", "Open event streams (/v1/events?follow=1).");
    out(b, "convgpu_api_followers %u\n", s.followers);
    help(b, "convgpu_api_connections_total", "counter",
         "Control-socket connections accepted, by what became of them.");
    out(b, "convgpu_api_connections_total{outcome=\"admitted\"} %llu\n",
        (unsigned long long)s.accepted);
    out(b, "convgpu_api_connections_total{outcome=\"refused\"} %llu\n",
        (unsigned long long)s.refused);
    out(b, "convgpu_api_connections_total{outcome=\"displaced\"} %llu\n",
        (unsigned long long)s.displaced);
    out(b, "convgpu_api_connections_total{outcome=\"timed_out\"} %llu\n",
        (unsigned long long)s.timed_out);
    help(b, "convgpu_client_connections", "gauge", "Open container-socket connections.");
    out(b, "convgpu_client_connections %u\n", d->client_conns);
}

char *metrics_render(struct daemon *d, const uid_t *only_uid)
{
    struct metrics *m = get(d);
    struct buf b = {.cap = 8192};
    b.p = malloc(b.cap);
    if (!b.p || !m) {
        free(b.p);
        return NULL;
    }
    b.p[0] = '\0';
    char e1[2 * DEVICE_NAME_MAX], e2[2 * CONTAINER_ID_MAX + 4], e3[2 * CONTAINER_ID_MAX + 4];
    static const struct { const char *name, *text; } dev_metrics[] = {
        {"convgpu_device_capacity_bytes", "Device memory convgpu may assign (total minus reserve)."},
        {"convgpu_device_assigned_bytes", "Device memory assigned to containers."},
        {"convgpu_device_used_bytes", "Device memory containers use now."},
        {"convgpu_device_context_charge_bytes", "What one process's context costs on the device."},
        {"convgpu_device_compute_hard_share_percent",
         "Sum of the hard compute shares admitted on the device (at most 100)."},
        {"convgpu_device_compute_utilization_ratio",
         "Share of the device's time spent running kernels in the last window (0-1)."},
        {"convgpu_device_promised_bytes",
         "Device memory the node advertises to kubelet and Slurm: capacity x sharing factor."},
        {"convgpu_device_oversubscribe_ratio",
         "The device's sharing factor (1: it promises no more than its capacity)."},
        {"convgpu_device_limits_bytes", "Sum of the limits of the device's containers."},
        {"convgpu_device_waiting_oversubscribed",
         "Containers waiting for memory the device's sharing factor promised (oversub.h)."},
    };
    for (unsigned k = 0; k < sizeof dev_metrics / sizeof dev_metrics[0]; k++) {
        help(&b, dev_metrics[k].name, "gauge", dev_metrics[k].text);
        for (unsigned i = 0; i < d->ndevices; i++) {
            cg_device_info di = {0};
            cg_device_get(d->core, i, &di);
            out(&b, "%s{device=\"%u\",uuid=\"%s\"} ", dev_metrics[k].name, i,
                esc(d->devices[i].uuid, e1, sizeof e1));
            switch (k) {
            case 0: out(&b, "%llu\n", (unsigned long long)di.capacity); break;
            case 1: out(&b, "%llu\n", (unsigned long long)di.assigned); break;
            case 2: out(&b, "%llu\n", (unsigned long long)device_used_bytes(d, i)); break;
            case 3: out(&b, "%llu\n", (unsigned long long)di.context_charge); break;
            case 4: out(&b, "%u\n", di.compute_hard_pct); break;
            case 5: out(&b, "%.3f\n", (double)d->devices[i].compute_util_permille / 1000.0); break;
            case 6: out(&b, "%llu\n", (unsigned long long)oversub_promised(d, i)); break;
            case 7: out(&b, "%.3f\n", oversub_factor(d, i)); break;
            case 8: out(&b, "%llu\n", (unsigned long long)oversub_limits(d, i)); break;
            default: out(&b, "%u\n", oversub_waiting(d, i)); break;
            }
        }
    }
    static const struct { const char *name, *type, *text; } ctr_metrics[] = {
        {"convgpu_container_limit_bytes", "gauge", "The container's GPU-memory limit."},
        {"convgpu_container_assigned_bytes", "gauge", "Memory reserved for the container."},
        {"convgpu_container_used_bytes", "gauge", "Memory the container uses now."},
        {"convgpu_container_suspended", "gauge", "1 while the container waits for memory."},
        {"convgpu_container_suspended_seconds_total", "counter", "Time the container spent suspended."},
        {"convgpu_container_processes", "gauge", "Processes of the container known to the daemon."},
        {"convgpu_container_compute_share_percent", "gauge",
         "The container's compute share of its device, by mode (0: no compute limit)."},
        {"convgpu_container_compute_utilization_ratio", "gauge",
         "Share of its device's time the container used in the last window (0-1)."},
        {"convgpu_container_compute_throttled_seconds_total", "counter",
         "Time the container's kernel launches waited for compute budget."},
        {"convgpu_container_compute_busy_seconds_total", "counter",
         "Device time the container's kernels used."},
        {"convgpu_container_swapped", "gauge",
         "1 while the container's memory is out on the host (docs/SWAP.md)."},
        {"convgpu_container_swapped_bytes", "gauge",
         "Device memory of the container on the host now."},
        {"convgpu_container_swapped_out_bytes_total", "counter",
         "Bytes the container's processes moved to the host."},
        {"convgpu_container_swapped_in_bytes_total", "counter",
         "Bytes moved back to the device."},
        {"convgpu_container_swap_seconds_total", "counter",
         "Time the container spent moving out and in."},
        {"convgpu_container_priority", "gauge", "The container's priority (0-9)."},
        {"convgpu_container_paused", "gauge",
         "1 while the container is paused through the driver's checkpoint (docs/PAUSE.md)."},
        {"convgpu_container_paused_bytes", "gauge",
         "What its processes had on the device when paused, now in host memory."},
        {"convgpu_container_waiting_oversubscribed", "gauge",
         "1 while the container waits for memory its device's sharing factor promised."},
    };
    uint64_t now = loop_now_ns();
    for (unsigned k = 0; k < sizeof ctr_metrics / sizeof ctr_metrics[0]; k++) {
        help(&b, ctr_metrics[k].name, ctr_metrics[k].type, ctr_metrics[k].text);
        for (struct container *c = d->containers; c; c = c->next) {
            if (only_uid && c->ident.owner_uid != *only_uid)
                continue;
            cg_container_info ci = {0};
            cg_container_get(d->core, c->cid, now, &ci);
            unsigned nproc = 0;
            for (struct proc *p = c->procs; p; p = p->next)
                nproc += p->welcomed;
            /* A gang's GPUs are one container's series, told apart by device (gang.c). */
            const struct container *who = c->gang.leader ? c->gang.leader : c;
            out(&b, "%s{container=\"%s\",name=\"%s\",device=\"%u\"", ctr_metrics[k].name,
                esc(who->ident.id, e2, sizeof e2), esc(who->ident.name, e3, sizeof e3), c->device);
            if (k == 6) /* the share carries its mode: "hard", "elastic" or "" (no share) */
                out(&b, ",mode=\"%s\"",
                    ci.compute_pct ? cg_compute_mode_name(ci.compute_mode) : "");
            out(&b, "} ");
            switch (k) {
            case 0: out(&b, "%llu\n", (unsigned long long)ci.limit); break;
            case 1: out(&b, "%llu\n", (unsigned long long)ci.assigned); break;
            case 2: out(&b, "%llu\n", (unsigned long long)container_used_bytes(c)); break;
            case 3: out(&b, "%d\n", ci.state == CG_STATE_SUSPENDED); break;
            case 4: out(&b, "%.6f\n", (double)ci.total_suspended / 1e9); break;
            case 5: out(&b, "%u\n", nproc); break;
            case 6: out(&b, "%u\n", ci.compute_pct); break;
            case 7: out(&b, "%.3f\n", (double)c->compute.util_permille / 1000.0); break;
            case 8: out(&b, "%.9f\n", (double)c->compute.throttled_ns / 1e9); break;
            case 9: out(&b, "%.9f\n", (double)c->compute.busy_ns / 1e9); break;
            case 10: out(&b, "%d\n", c->swap.phase == SWAP_OUT); break;
            case 11: out(&b, "%llu\n", (unsigned long long)ci.swapped); break;
            case 12: out(&b, "%llu\n", (unsigned long long)c->swap.out_total); break;
            case 13: out(&b, "%llu\n", (unsigned long long)c->swap.in_total); break;
            case 14: out(&b, "%.6f\n", (double)c->swap.time_ns / 1e9); break;
            case 15: out(&b, "%u\n", ci.priority); break;
            case 16: out(&b, "%d\n", c->pause.phase == PAUSE_PAUSED); break;
            case 17: out(&b, "%llu\n", (unsigned long long)c->pause.bytes); break;
            default: {
                const char *why = oversub_wait_reason(d, c);
                out(&b, "%d\n", why && strcmp(why, OVERSUB_WAIT_FACTOR) == 0);
                break;
            }
            }
        }
    }
    render_tenants(d, &b, only_uid);
    if (!only_uid)
        render_connections(d, &b);
    help(&b, "convgpu_decisions_total", "counter", "Scheduling decisions by kind.");
    for (unsigned k = 0; k <= CG_EV_PRIORITY && k < NKINDS; k++)
        out(&b, "convgpu_decisions_total{kind=\"%s\"} %llu\n", cg_event_kind_name((cg_event_kind)k),
            (unsigned long long)m->events[k]);
    help(&b, "convgpu_watchdog_findings_total", "counter",
         "Processes using a GPU unregistered, and containers over their limit by NVML.");
    out(&b, "convgpu_watchdog_findings_total{kind=\"unregistered\"} %llu\n",
        (unsigned long long)watchdog_count(d, 0));
    out(&b, "convgpu_watchdog_findings_total{kind=\"over_limit\"} %llu\n",
        (unsigned long long)watchdog_count(d, 1));
    help(&b, "convgpu_request_duration_seconds", "histogram",
         "Time from a request reaching the daemon to its answer (suspension included).");
    uint64_t cum = 0;
    for (unsigned i = 0; i < NBUCKETS; i++) {
        cum += m->buckets[i];
        out(&b, "convgpu_request_duration_seconds_bucket{le=\"%g\"} %llu\n", bucket_le[i],
            (unsigned long long)cum);
    }
    cum += m->buckets[NBUCKETS];
    out(&b, "convgpu_request_duration_seconds_bucket{le=\"+Inf\"} %llu\n", (unsigned long long)cum);
    out(&b, "convgpu_request_duration_seconds_sum %.9f\n", m->sum);
    out(&b, "convgpu_request_duration_seconds_count %llu\n", (unsigned long long)m->count);
    if (b.failed) {
        free(b.p);
        return NULL;
    }
    return b.p;
}

/* ---- the TCP listener ------------------------------------------------------------------- */

static enum MHD_Result tcp_handler(void *cls, struct MHD_Connection *conn, const char *url,
                                   const char *method, const char *version, const char *upload,
                                   size_t *upload_size, void **con_cls)
{
    (void)version;
    (void)upload;
    (void)con_cls;
    struct daemon *d = cls;
    const char *body = "only GET /metrics is served here\n";
    unsigned status = 404;
    char *text = NULL;
    if (*upload_size) {
        *upload_size = 0;
        status = 400;
    } else if (strcmp(url, "/metrics") == 0 && strcmp(method, "GET") == 0) {
        text = metrics_render(d, NULL);
        status = text ? 200 : 500;
        body = text ? text : "out of memory\n";
    }
    return http_answer(conn, status, "text/plain; version=0.0.4", text, text ? strlen(text) : 0,
                       body);
}

static void tcp_ready(void *ctx, uint32_t events)
{
    (void)events;
    struct metrics *m = ctx;
    MHD_run(m->tcp);
}

int metrics_listen(struct daemon *d, const char *addr, char *err, size_t errlen)
{
    struct metrics *m = get(d);
    if (!m) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    char host[128];
    const char *colon = strrchr(addr, ':');
    if (!colon || colon == addr || (size_t)(colon - addr) >= sizeof host) {
        snprintf(err, errlen, "--metrics takes ADDR:PORT, e.g. 127.0.0.1:9400");
        return -1;
    }
    memcpy(host, addr, (size_t)(colon - addr));
    host[colon - addr] = '\0';
    char *end;
    errno = 0;
    long port = strtol(colon + 1, &end, 10);
    if (errno || *end || port < 1 || port > 65535) {
        snprintf(err, errlen, "--metrics: bad port in '%s'", addr);
        return -1;
    }
    struct sockaddr_storage ss = {0};
    socklen_t sl;
    int family;
    if (host[0] == '[' && host[strlen(host) - 1] == ']') {
        host[strlen(host) - 1] = '\0';
        struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
        s6->sin6_family = AF_INET6;
        s6->sin6_port = htons((uint16_t)port);
        if (inet_pton(AF_INET6, host + 1, &s6->sin6_addr) != 1) {
            snprintf(err, errlen, "--metrics: bad IPv6 address in '%s'", addr);
            return -1;
        }
        sl = sizeof *s6;
        family = AF_INET6;
    } else {
        struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
        s4->sin_family = AF_INET;
        s4->sin_port = htons((uint16_t)port);
        if (inet_pton(AF_INET, host, &s4->sin_addr) != 1) {
            snprintf(err, errlen, "--metrics: bad IPv4 address in '%s'", addr);
            return -1;
        }
        sl = sizeof *s4;
        family = AF_INET;
    }
    int fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int one = 1;
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
        bind(fd, (struct sockaddr *)&ss, sl) != 0 || listen(fd, 16) != 0) {
        snprintf(err, errlen, "--metrics: cannot listen on %s: %s", addr, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    m->tcp = MHD_start_daemon(MHD_USE_EPOLL | MHD_USE_ERROR_LOG, 0, NULL, NULL, tcp_handler, d,
                              MHD_OPTION_LISTEN_SOCKET, fd, MHD_OPTION_CONNECTION_TIMEOUT,
                              (unsigned)10, MHD_OPTION_CONNECTION_LIMIT, (unsigned)32,
                              MHD_OPTION_END);
    const union MHD_DaemonInfo *info =
        m->tcp ? MHD_get_daemon_info(m->tcp, MHD_DAEMON_INFO_EPOLL_FD) : NULL;
    if (!info || loop_add(d->loop, info->epoll_fd, EPOLLIN, tcp_ready, m) != 0) {
        snprintf(err, errlen, "--metrics: cannot start the HTTP listener");
        if (m->tcp)
            MHD_stop_daemon(m->tcp);
        else
            close(fd);
        m->tcp = NULL;
        return -1;
    }
    m->tcp_epfd = info->epoll_fd;
    return 0;
}

/* As api_poll: MHD runs when its timeout comes due too, not only on events of its fd. */
void metrics_poll(struct daemon *d)
{
    struct metrics *m = d->metrics;
    MHD_UNSIGNED_LONG_LONG t;
    if (m && m->tcp && MHD_get_timeout(m->tcp, &t) == MHD_YES && t == 0)
        MHD_run(m->tcp);
}

int metrics_timeout_ms(struct daemon *d)
{
    struct metrics *m = d->metrics;
    MHD_UNSIGNED_LONG_LONG t;
    if (!m || !m->tcp || MHD_get_timeout(m->tcp, &t) != MHD_YES)
        return -1;
    return t > 60000 ? 60000 : (int)t;
}

void metrics_stop(struct daemon *d)
{
    struct metrics *m = d->metrics;
    if (!m)
        return;
    if (m->tcp) {
        loop_del(d->loop, m->tcp_epfd);
        MHD_stop_daemon(m->tcp);
    }
    free(m);
    d->metrics = NULL;
}

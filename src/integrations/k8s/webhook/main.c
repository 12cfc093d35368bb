/* main.c — convgpu-webhook: the mutating admission webhook of the device-plugin path (review.h
 * says what it adds and why). HTTPS only (libmicrohttpd over GnuTLS, as Debian builds it): the API
 * server calls webhooks over TLS and checks the certificate against the configuration's
 * caBundle (packaging/k8s/dra/webhook-certs.sh makes both). POST /mutate takes an AdmissionReview
 * (application/json, at most --max-body bytes: 413 beyond) and answers one; GET /healthz answers
 * "ok". A request must arrive within 10 s; at most 64 connections are served at once. The body
 * comes in through the servers' one intake (src/common/http_body.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "http_answer.h"
#include "http_body.h"
#include "review.h"

#define MAX_CONNS 64
#define TIMEOUT_S 10

static struct cgw_config cfg = {.runtime_class = "convgpu"};
static size_t max_body = 3u << 20; /* the API server's own bound on a request is ~3 MiB */

__attribute__((format(printf, 1, 2))) static void say(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "convgpu-webhook: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

/* A request's context: the shared intake's state first (http_body.h), then the body so far. */
struct body {
    struct http_body intake;
    char *data;
    size_t len;
};

static int append(void *ctx, void *req, const char *chunk, size_t n)
{
    (void)ctx;
    struct body *b = req;
    if (b->len + n > max_body)
        return 1; /* the rest is read away; 413 */
    char *nd = realloc(b->data, b->len + n + 1);
    if (!nd)
        return -1;
    memcpy(nd + b->len, chunk, n);
    b->data = nd;
    b->len += n;
    return 0;
}

static enum MHD_Result error(struct MHD_Connection *c, unsigned status, const char *why)
{
    json_t *o = json_pack("{s:s}", "error", why);
    char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    return http_answer(c, status, "application/json", text, text ? strlen(text) : 0, "{}");
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *c, const char *url,
                               const char *method, const char *version, const char *upload,
                               size_t *upload_size, void **con_cls)
{
    (void)cls;
    (void)version;
    if (strcmp(url, "/healthz") == 0 && strcmp(method, "GET") == 0)
        return http_answer(c, 200, "text/plain", NULL, 0, "ok");
    if (strcmp(url, "/mutate") != 0)
        return error(c, 404, "no such path (POST /mutate, GET /healthz)");
    if (strcmp(method, "POST") != 0)
        return error(c, 405, "POST an AdmissionReview to /mutate");
    if (!*con_cls) {
        const char *type = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Type");
        if (!type || strncmp(type, "application/json", 16) != 0)
            return error(c, 415, "the body must be application/json");
    }
    switch (http_body_feed(con_cls, sizeof(struct body), upload, upload_size, append, NULL)) {
    case HTTP_BODY_MORE: return MHD_YES;
    case HTTP_BODY_FAILED: return MHD_NO;
    case HTTP_BODY_COMPLETE: break;
    }
    struct body *b = *con_cls;
    if (b->intake.too_big)
        return error(c, 413, "the AdmissionReview is larger than --max-body");
    char *answer = NULL, err[512];
    int patched = 0;
    if (cgw_review(b->data ? b->data : "", b->len, &cfg, &answer, &patched, err, sizeof err) != 0)
        return error(c, 400, err);
    return http_answer(c, 200, "application/json", answer, strlen(answer), NULL);
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls,
                      enum MHD_RequestTerminationCode toe)
{
    (void)cls;
    (void)c;
    (void)toe;
    struct body *b = *con_cls;
    if (b) {
        free(b->data);
        free(b);
        *con_cls = NULL;
    }
}

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return NULL;
    char *buf = malloc(1 << 20);
    size_t n = buf ? fread(buf, 1, (1 << 20) - 1, f) : 0;
    fclose(f);
    if (!buf || n == 0) {
        free(buf);
        return NULL;
    }
    buf[n] = '\0';
    return buf;
}

static int listen_on(const char *spec, int *port_out)
{
    char host[64];
    const char *colon = strrchr(spec, ':');
    char *end;
    long port = colon ? strtol(colon + 1, &end, 10) : -1;
    if (!colon || (size_t)(colon - spec) >= sizeof host || port < 0 || port > 65535 || *end)
        return -1;
    snprintf(host, sizeof host, "%.*s", (int)(colon - spec), spec);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    if (inet_pton(AF_INET, host[0] ? host : "0.0.0.0", &sa.sin_addr) != 1)
        return -1;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    socklen_t sl = sizeof sa;
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
        bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(fd, 128) != 0 ||
        getsockname(fd, (struct sockaddr *)&sa, &sl) != 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    *port_out = ntohs(sa.sin_port);
    return fd;
}

static void usage(FILE *f)
{
    fprintf(f, "Usage: convgpu-webhook --cert FILE --key FILE [OPTIONS]\n"
               "The mutating admission webhook of convgpu's device-plugin path: pods that ask for\n"
               "convgpu.io/* resources get spec.runtimeClassName (and the site's scheduler).\n"
               "  --cert FILE            the serving certificate (PEM)\n"
               "  --key FILE             its private key (PEM)\n"
               "  --listen ADDR:PORT     where to listen (default: 0.0.0.0:8443; port 0: any)\n"
               "  --port-file FILE       write the port once listening\n"
               "  --runtime-class NAME   the RuntimeClass to set (default: convgpu)\n"
               "  --scheduler-name NAME  the scheduler to set (default: none, left alone)\n"
               "  --max-body BYTES       the largest AdmissionReview taken (default: 3145728)\n"
               "  -h, --help             this text\n");
}

int main(int argc, char **argv)
{
    enum { O_CERT = 256, O_KEY, O_LISTEN, O_PORTFILE, O_RC, O_SCHED, O_MAX };
    static const struct option opts[] = {
        {"cert", required_argument, NULL, O_CERT},
        {"key", required_argument, NULL, O_KEY},
        {"listen", required_argument, NULL, O_LISTEN},
        {"port-file", required_argument, NULL, O_PORTFILE},
        {"runtime-class", required_argument, NULL, O_RC},
        {"scheduler-name", required_argument, NULL, O_SCHED},
        {"max-body", required_argument, NULL, O_MAX},
        {"help", no_argument, NULL, 'h'},
        {0},
    };
    const char *cert = NULL, *key = NULL, *listen_spec = "0.0.0.0:8443", *port_file = NULL;
    int o;
    opterr = 0;
    while ((o = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (o) {
        case O_CERT: cert = optarg; break;
        case O_KEY: key = optarg; break;
        case O_LISTEN: listen_spec = optarg; break;
        case O_PORTFILE: port_file = optarg; break;
        case O_RC: cfg.runtime_class = optarg; break;
        case O_SCHED: cfg.scheduler_name = optarg; break;
        case O_MAX: {
            char *end;
            errno = 0;
            unsigned long v = strtoul(optarg, &end, 10);
            if (errno || *end || v < 1024 || v > (64ul << 20)) {
                fprintf(stderr, "convgpu-webhook: --max-body %s: give 1024 to 67108864\n", optarg);
                return 2;
            }
            max_body = v;
            break;
        }
        case 'h': usage(stdout); return 0;
        default:
            fprintf(stderr, "convgpu-webhook: unknown or incomplete option %s\n", argv[optind - 1]);
            usage(stderr);
            return 2;
        }
    }
    if (!cert || !key || optind < argc || !cfg.runtime_class[0]) {
        usage(stderr);
        return 2;
    }
    if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
        fprintf(stderr, "convgpu-webhook: this libmicrohttpd has no TLS\n");
        return 1;
    }
    char *cert_pem = read_file(cert), *key_pem = read_file(key);
    if (!cert_pem || !key_pem) {
        fprintf(stderr, "convgpu-webhook: cannot read %s\n", cert_pem ? key : cert);
        return 1;
    }
    sigset_t sigs; /* blocked before the server's thread starts: it inherits the mask */
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGINT);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL);
    int port = 0, fd = listen_on(listen_spec, &port);
    if (fd < 0) {
        fprintf(stderr, "convgpu-webhook: cannot listen on %s: %s\n", listen_spec,
                strerror(errno ? errno : EINVAL));
        return 1;
    }
    struct MHD_Daemon *d = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_TLS | MHD_USE_ERROR_LOG, 0, NULL,
        NULL, handler, NULL, MHD_OPTION_LISTEN_SOCKET, fd, MHD_OPTION_HTTPS_MEM_CERT, cert_pem,
        MHD_OPTION_HTTPS_MEM_KEY, key_pem, MHD_OPTION_NOTIFY_COMPLETED, completed, NULL,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)TIMEOUT_S, MHD_OPTION_CONNECTION_LIMIT,
        (unsigned)MAX_CONNS, MHD_OPTION_END);
    if (!d) {
        fprintf(stderr, "convgpu-webhook: cannot start TLS on %s (certificate and key?)\n",
                listen_spec);
        return 1;
    }
    explicit_bzero(key_pem, strlen(key_pem));
    if (port_file) {
        char tmp[4096];
        snprintf(tmp, sizeof tmp, "%s.tmp", port_file);
        FILE *f = fopen(tmp, "we");
        if (!f || fprintf(f, "%d\n", port) < 0 || fclose(f) != 0 || rename(tmp, port_file) != 0) {
            fprintf(stderr, "convgpu-webhook: cannot write %s\n", port_file);
            return 1;
        }
    }
    say("serving https on port %d: runtimeClassName %s%s%s", port, cfg.runtime_class,
        cfg.scheduler_name ? ", schedulerName " : "", cfg.scheduler_name ? cfg.scheduler_name : "");
    int sig;
    sigwait(&sigs, &sig);
    MHD_stop_daemon(d);
    free(cert_pem);
    free(key_pem);
    return 0;
}

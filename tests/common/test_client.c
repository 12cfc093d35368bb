/* test_client.c — the client library (src/client/convgpu_client.h) without a daemon: the create
 * body each spec gives, refusals decoded and formatted, the LD_PRELOAD merge, and the busy-id
 * rule against a scripted control socket that answers each request from a table. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "check.h"
#include "convgpu_client.h"
#include "daemon_hint.h"

/* The body of spec, compact, with its keys sorted: what the daemon would read. */
static char *body_of(const struct cg_client_spec *s)
{
    json_t *b = cgc_create_body(s);
    char *text = b ? json_dumps(b, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    json_decref(b);
    return text;
}

static void test_bodies(void)
{
    static const unsigned devs[] = {0, 2};
    static const char *const toks[] = {"t1", "t2"};
    static const struct {
        struct cg_client_spec spec;
        const char *body;
    } cases[] = {
        {{0}, "{}"},
        {{.gpu_memory = 1 << 30, .auto_remove = true, .command = "python3"},
         "{\"auto_remove\":true,\"command\":\"python3\",\"gpu_memory\":1073741824}"},
        {{.exclusive = true, .profile_limit = true, .name = "web", .tenant = "t"},
         "{\"exclusive\":true,\"name\":\"web\",\"profile_limit\":true,\"tenant\":\"t\"}"},
        {{.compute_pct = 30, .compute_mode = "hard", .has_priority = true, .priority = 0,
          .no_swap = true},
         "{\"compute_mode\":\"hard\",\"gpu_compute\":30,\"priority\":0,\"swap\":false}"},
        {{.has_device = true, .device = 0, .gpus = 2, .devices = devs, .ndevices = 2},
         "{\"device\":0,\"devices\":[0,2],\"gpus\":2}"},
        {{.id = "abc", .has_owner = true, .uid = 1000, .gid = 100, .start_within = 60,
          .image = "img:1", .no_profile = true},
         "{\"gid\":100,\"id\":\"abc\",\"image\":\"img:1\",\"profile\":false,\"start_within\":60,"
         "\"uid\":1000}"},
        {{.allocations = toks, .nallocations = 2, .allocation_pod = "ns/pod"},
         "{\"allocation\":[\"t1\",\"t2\"],\"allocation_pod\":\"ns/pod\"}"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *got = body_of(&cases[i].spec);
        CHECK(got && strcmp(got, cases[i].body) == 0, "case %zu: %s, want %s", i,
              got ? got : "(null)", cases[i].body);
        free(got);
    }
}

static void test_errors(void)
{
    struct cgc_error e;
    char out[256];
    json_t *ans = json_pack("{s:s}", "error", "limit 100GiB does not fit on any device");
    cgc_error_set(&e, 400, ans, "unused");
    json_decref(ans);
    CHECK(e.status == 400 && !e.local, "status %ld", e.status);
    cgc_error_format(&e, "cannot register x", out, sizeof out);
    CHECK(strcmp(out, "cannot register x: convgpud says: limit 100GiB does not fit on any "
                      "device (HTTP 400)") == 0, "%s", out);

    cgc_error_set(&e, 500, NULL, "unused");
    cgc_error_format(&e, "w", out, sizeof out);
    CHECK(strcmp(out, "w: convgpud says: unexpected answer (HTTP 500)") == 0, "%s", out);

    cgc_error_set(&e, 0, NULL, "cannot reach convgpud");
    cgc_error_format(&e, "w", out, sizeof out);
    CHECK(strcmp(out, "w: cannot reach convgpud") == 0, "%s", out);
}

static void test_merge(void)
{
    static const struct {
        const char *first, *old, *want;
    } cases[] = {
        {"/lib/a.so", NULL, "/lib/a.so"},
        {"/lib/a.so", "", "/lib/a.so"},
        {"/lib/a.so", "/x.so", "/lib/a.so:/x.so"},
        {"/lib/a.so", "/lib/a.so:/x.so", "/lib/a.so:/x.so"}, /* already first: not twice */
        {"/lib/a.so", "/lib/a.so", "/lib/a.so"},
        {"/lib/a.so", "/lib/a.so.1", "/lib/a.so:/lib/a.so.1"}, /* a prefix is not the entry */
        {"/lib/a.so", "/x.so:/lib/a.so", "/lib/a.so:/x.so:/lib/a.so"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *got = cgc_path_merge(cases[i].first, cases[i].old);
        CHECK(got && strcmp(got, cases[i].want) == 0, "case %zu: %s, want %s", i,
              got ? got : "(null)", cases[i].want);
        free(got);
    }
    CHECK(cgc_path_var("LD_PRELOAD") && cgc_path_var("LD_LIBRARY_PATH") &&
              !cgc_path_var("CONVGPU_SOCKET"), "which variables merge");
}

/* An environment of two variables: the env_apply test's workload. */
struct env2 {
    const char *preload; /* the workload's LD_PRELOAD */
    char set[4][96];
    int nset;
    bool unreadable;
};

static int env2_get(void *ctx, const char *name, const char **value)
{
    struct env2 *e = ctx;
    *value = strcmp(name, "LD_PRELOAD") == 0 ? e->preload : NULL;
    return e->unreadable ? -1 : 0;
}

static int env2_set(void *ctx, const char *name, const char *value)
{
    struct env2 *e = ctx;
    if (e->nset == 4)
        return -1;
    snprintf(e->set[e->nset++], sizeof e->set[0], "%s=%s", name, value);
    return 0;
}

static void test_env_apply(void)
{
    static const struct cgc_env_ops ops = {env2_get, env2_set};
    json_t *env = json_pack("{s:s,s:s,s:i}", "LD_PRELOAD", "/lib/a.so", "CONVGPU_SOCKET", "/s",
                            "NOT_A_STRING", 1);
    struct env2 e = {.preload = "/x.so"};
    const char *failed = NULL;
    CHECK(cgc_env_apply(env, &ops, &e, &failed) == CGC_ENV_OK, "apply: %s", failed);
    CHECK(e.nset == 2 && strcmp(e.set[0], "LD_PRELOAD=/lib/a.so:/x.so") == 0 &&
              strcmp(e.set[1], "CONVGPU_SOCKET=/s") == 0,
          "set %d: %s, %s", e.nset, e.set[0], e.set[1]);
    struct env2 u = {.unreadable = true};
    CHECK(cgc_env_apply(env, &ops, &u, &failed) == CGC_ENV_UNREADABLE && u.nset == 0 &&
              strcmp(failed, "LD_PRELOAD") == 0,
          "an unreadable list is not overwritten");
    json_decref(env);
}

/* A control socket that answers the n-th request with script[n] (status and body) and records
 * each request line. */
struct fake {
    int fd;
    const char *const (*script)[2];
    size_t n;
    char seen[8][96];
    size_t nseen;
};

static void *serve(void *arg)
{
    struct fake *f = arg;
    for (size_t i = 0; i < f->n; i++) {
        int c = accept(f->fd, NULL, NULL);
        if (c < 0)
            break;
        char req[4096];
        size_t len = 0;
        for (;;) { /* the head, then Content-Length bytes of body */
            ssize_t r = read(c, req + len, sizeof req - 1 - len);
            if (r <= 0)
                break;
            len += (size_t)r;
            req[len] = '\0';
            char *end = strstr(req, "\r\n\r\n");
            const char *cl = strstr(req, "Content-Length: ");
            if (end && cl && len >= (size_t)(end + 4 - req) + strtoul(cl + 16, NULL, 10))
                break;
        }
        req[len] = '\0';
        const char *proto = strstr(req, " HTTP/");
        if (f->nseen < 8 && proto)
            snprintf(f->seen[f->nseen++], sizeof f->seen[0], "%.*s", (int)(proto - req), req);
        char ans[1024];
        int n = snprintf(ans, sizeof ans,
                         "HTTP/1.1 %s\r\nContent-Type: application/json\r\n"
                         "Content-Length: %zu\r\nConnection: close\r\n\r\n%s",
                         f->script[i][0], strlen(f->script[i][1]), f->script[i][1]);
        if (write(c, ans, (size_t)n) != n)
            fprintf(stderr, "fake: short write\n");
        close(c);
    }
    return NULL;
}

/* Runs a create of id "abc" (replace_idle) against script; returns the answer. */
static json_t *create_against(const char *dir, const char *const (*script)[2], size_t n,
                              struct fake *f, struct cgc_error *e)
{
    char sock[256];
    snprintf(sock, sizeof sock, "%s/control.sock", dir);
    unlink(sock);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (strlen(sock) >= sizeof sa.sun_path)
        exit(1);
    memcpy(sa.sun_path, sock, strlen(sock) + 1);
    memset(f, 0, sizeof *f);
    f->fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (f->fd < 0 || bind(f->fd, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(f->fd, 8)) {
        fprintf(stderr, "fake socket: %s\n", strerror(errno));
        exit(1);
    }
    f->script = script;
    f->n = n;
    pthread_t t;
    pthread_create(&t, NULL, serve, f);
    struct cg_client_spec s = {.id = "abc", .gpu_memory = 1 << 20, .replace_idle = true};
    json_t *ans = cgc_create(&s, e);
    shutdown(f->fd, SHUT_RDWR);
    pthread_join(t, NULL);
    close(f->fd);
    return ans;
}

static void test_busy_id(const char *dir)
{
    static const char *const idle[][2] = {
        {"409 Conflict", "{\"error\":\"container abc exists\"}"},
        {"200 OK", "{\"id\":\"abc\",\"processes\":0}"},
        {"200 OK", "{\"removed\":\"abc\"}"},
        {"201 Created", "{\"id\":\"abc\",\"env\":{}}"},
    };
    struct fake f;
    struct cgc_error e = {0};
    json_t *ans = create_against(dir, idle, 4, &f, &e);
    CHECK(ans && strcmp(json_string_value(json_object_get(ans, "id")), "abc") == 0,
          "an idle holder is replaced: %s", e.text);
    CHECK(f.nseen == 4 && strcmp(f.seen[0], "POST /v1/containers") == 0 &&
              strcmp(f.seen[1], "GET /v1/containers/abc") == 0 &&
              strcmp(f.seen[2], "DELETE /v1/containers/abc") == 0 &&
              strcmp(f.seen[3], "POST /v1/containers") == 0,
          "requests: %zu, %s / %s / %s / %s", f.nseen, f.seen[0], f.seen[1], f.seen[2], f.seen[3]);
    json_decref(ans);

    static const char *const busy[][2] = {
        {"409 Conflict", "{\"error\":\"container abc exists\"}"},
        {"200 OK", "{\"id\":\"abc\",\"processes\":2}"},
    };
    ans = create_against(dir, busy, 2, &f, &e);
    char out[256];
    cgc_error_format(&e, "w", out, sizeof out);
    CHECK(!ans && e.status == 409 && e.local &&
              strcmp(out, "w: a container with this id is registered and has 2 running "
                          "processes") == 0,
          "a busy holder stays: %s", out);
    json_decref(ans);

    static const char *const refused[][2] = {
        {"400 Bad Request", "{\"error\":\"gpu_memory is required\"}"},
    };
    ans = create_against(dir, refused, 1, &f, &e);
    CHECK(!ans && e.status == 400 && strcmp(e.text, "gpu_memory is required") == 0 && !e.local,
          "a refusal is decoded: %ld %s", e.status, e.text);
}

/* Makes root/rel (and its parents) as an empty file. */
static void plant(const char *root, const char *rel)
{
    char p[512];
    snprintf(p, sizeof p, "%s%s", root, rel);
    for (char *s = p + strlen(root) + 1; (s = strchr(s, '/')); s++) {
        *s = 0;
        mkdir(p, 0755);
        *s = '/';
    }
    int fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    CHECK(fd >= 0, "cannot make %s", p);
    if (fd >= 0)
        close(fd);
}

/* The daemon-not-running hint on three hosts: bare (the emulator), with the driver (the plain
 * daemon), with the packaged unit (systemctl and journalctl, whatever else is there). */
static void test_start_hint(void)
{
    char root[] = "/tmp/cg-hint-XXXXXX";
    CHECK(mkdtemp(root) != NULL, "mkdtemp");
    char h[512];
    cgc_daemon_start_hint(root, "/run/convgpu", h, sizeof h);
    CHECK(strstr(h, "convgpud --emulate 5GiB") && !strstr(h, "systemctl"), "bare host: %s", h);
    cgc_daemon_start_hint(root, "/tmp/rd", h, sizeof h);
    CHECK(strstr(h, "convgpud --runtime-dir /tmp/rd --emulate 5GiB"), "bare host, a dir: %s", h);
    plant(root, "/proc/driver/nvidia/version");
    cgc_daemon_start_hint(root, "/run/convgpu", h, sizeof h);
    CHECK(strstr(h, "start it: convgpud") && !strstr(h, "emulate") && !strstr(h, "systemctl"),
          "driver host: %s", h);
    plant(root, "/lib/systemd/system/convgpud.service");
    cgc_daemon_start_hint(root, "/run/convgpu", h, sizeof h);
    CHECK(strstr(h, "systemctl start convgpud") && strstr(h, "journalctl -u convgpud") &&
              !strstr(h, "emulate"),
          "unit host: %s", h);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    CHECK(system(cmd) == 0, "%s", cmd);
}

int main(void)
{
    test_bodies();
    test_errors();
    test_merge();
    test_env_apply();
    test_start_hint();
    char dir[] = "/tmp/cg-client-XXXXXX";
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    cli_set_runtime_dir(dir);
    test_busy_id(dir);
    struct cgc_error e;
    char sock[300];
    snprintf(sock, sizeof sock, "%s/control.sock", dir);
    unlink(sock);
    struct cg_client_spec s = {.gpu_memory = 1};
    CHECK(!cgc_create(&s, &e) && e.status == 0 && strstr(e.text, dir),
          "no daemon: the error names the runtime directory: %s", e.text);
    rmdir(dir);
    if (failures == 0)
        printf("client: all checks passed\n");
    return failures != 0;
}

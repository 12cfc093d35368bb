/* cmd_ctl.c — the operator's commands on the control API: devices, ps, inspect, create, rm,
 * set, policy, events. Each prints a table for people and JSON with --json for scripts. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "core.h"
#include "http.h"
#include "size.h"

static const char *sz(json_t *v, char *buf)
{
    return cg_format_size((uint64_t)json_integer_value(v), buf, CG_SIZE_BUFLEN);
}

static bool has_flag(int argc, char **argv, const char *flag)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], flag) == 0)
            return true;
    return false;
}

/* Rejects anything but the allowed flags and exactly `npos` positional arguments. */
static bool check_args(int argc, char **argv, const char *const *flags, int npos, const char *use)
{
    int pos = 0;
    for (int i = 1; i < argc; i++) {
        if (argv[i][0] == '-') {
            bool ok = false;
            for (const char *const *f = flags; f && *f; f++)
                if (strcmp(argv[i], *f) == 0)
                    ok = true;
            if (!ok) {
                fprintf(stderr, "convgpu %s: unknown option '%s'\nUsage: %s\n", argv[0], argv[i], use);
                return false;
            }
        } else {
            pos++;
        }
    }
    if (pos != npos) {
        fprintf(stderr, "convgpu %s: expected %d argument%s\nUsage: %s\n", argv[0], npos,
                npos == 1 ? "" : "s", use);
        return false;
    }
    return true;
}

static const char *positional(int argc, char **argv, int n)
{
    for (int i = 1; i < argc; i++)
        if (argv[i][0] != '-' && n-- == 0)
            return argv[i];
    return NULL;
}

static int call(const char *method, const char *path, json_t *body, json_t **ans, long ok)
{
    char err[512];
    long st = cli_request(method, path, body, ans, err, sizeof err);
    if (st != ok) {
        cli_report_error(st, *ans, err);
        json_decref(*ans);
        *ans = NULL;
        return st == 0 ? 1 : (st == 404 ? 3 : 1);
    }
    return 0;
}

void cli_print_json(json_t *j)
{
    char *s = json_dumps(j, JSON_INDENT(2));
    if (s) {
        puts(s);
        free(s);
    }
}

/* "30% hard", "70% elastic" or "-" (no compute limit), from a container's JSON. */
static const char *share_text(json_t *c, char *buf, size_t len)
{
    json_t *pct = json_object_get(c, "gpu_compute");
    const char *mode = json_string_value(json_object_get(c, "compute_mode"));
    if (!json_is_integer(pct))
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, "%lld%% %s", (long long)json_integer_value(pct), mode ? mode : "?");
    return buf;
}

/* A ratio 0..1 as a percentage with one decimal. */
static const char *ratio_pct(json_t *v, char *buf, size_t len)
{
    snprintf(buf, len, "%.1f%%", json_number_value(v) * 100.0);
    return buf;
}

void cli_print_devices(json_t *ans)
{
    printf("%-4s %-28s %10s %10s %6s %10s %10s %10s %10s %5s %5s %5s %6s\n", "GPU", "NAME",
           "CAPACITY", "PROMISED", "FACTOR", "ASSIGNED", "USED", "FREE", "CONTEXT", "CTRS", "SUSP",
           "HARD", "UTIL");
    size_t i;
    json_t *d;
    bool adaptive = false;
    json_array_foreach(ans, i, d) {
        char a[CG_SIZE_BUFLEN], b[CG_SIZE_BUFLEN], c[CG_SIZE_BUFLEN], e[CG_SIZE_BUFLEN],
            f[CG_SIZE_BUFLEN], p[CG_SIZE_BUFLEN], hard[16], util[16], factor[16];
        snprintf(hard, sizeof hard, "%lld%%",
                 (long long)json_integer_value(json_object_get(d, "compute_hard_share")));
        /* A daemon before the sharing factor promises its capacity. */
        json_t *prom = json_object_get(d, "promised"), *of = json_object_get(d, "oversubscribe");
        const char *mode = json_string_value(json_object_get(d, "oversubscribe_mode"));
        bool ad = mode && strcmp(mode, "adaptive") == 0;
        adaptive = adaptive || ad;
        snprintf(factor, sizeof factor, "%.2f%s", of ? json_number_value(of) : 1.0, ad ? "*" : "");
        printf("%-4lld %-28.28s %10s %10s %6s %10s %10s %10s %10s %5lld %5lld %5s %6s\n",
               (long long)json_integer_value(json_object_get(d, "index")),
               json_string_value(json_object_get(d, "name")), sz(json_object_get(d, "capacity"), a),
               sz(prom ? prom : json_object_get(d, "capacity"), p), factor,
               sz(json_object_get(d, "assigned"), b), sz(json_object_get(d, "used"), c),
               sz(json_object_get(d, "free"), e), sz(json_object_get(d, "context_charge"), f),
               (long long)json_integer_value(json_object_get(d, "containers")),
               (long long)json_integer_value(json_object_get(d, "suspended")), hard,
               ratio_pct(json_object_get(d, "compute_utilization"), util, sizeof util));
    }
    if (adaptive)
        printf("* adaptive: from profiled peaks and the swap budget (docs/SCHEDULING.md, "
               "Sharing factor)\n");
}

size_t cli_format_devices(json_t *container, char *out, size_t len)
{
    json_t *dl = json_object_get(container, "devices");
    size_t n = json_array_size(dl), at = 0;
    out[0] = '\0';
    for (size_t k = 0; k < n && at + 24 < len; k++)
        at += (size_t)snprintf(out + at, len - at, "%s%lld", k ? "," : "",
                               (long long)json_integer_value(json_array_get(dl, k)));
    if (n == 0) /* a daemon before several GPUs */
        snprintf(out, len, "%lld", (long long)json_integer_value(json_object_get(container, "device")));
    return n ? n : 1;
}

void cli_print_containers(json_t *ans)
{
    printf("%-14s %-16s %-12s %3s %9s %9s %9s %-22s %5s %4s %-12s %6s %9s\n", "ID", "NAME",
           "TENANT", "GPU", "LIMIT", "ASSIGNED", "USED", "STATE", "PROCS", "WAIT", "COMPUTE",
           "UTIL", "THROTTLED");
    size_t i;
    json_t *c;
    json_array_foreach(ans, i, c) {
        char a[CG_SIZE_BUFLEN], b[CG_SIZE_BUFLEN], u[CG_SIZE_BUFLEN], state[48], share[32],
            util[16], thr[24];
        snprintf(thr, sizeof thr, "%.1fs",
                 json_number_value(json_object_get(c, "compute_throttled_s")));
        const char *s = json_string_value(json_object_get(c, "state"));
        /* Waiting because the GPU promises more than it has (--oversubscribe): said in the
         * state itself, one word, so the columns stay where scripts read them. */
        const char *why = json_string_value(json_object_get(c, "wait_reason"));
        const char *mark = why && strcmp(why, "oversubscribed") == 0 ? "/oversub" : "";
        json_t *sf = json_object_get(c, "suspended_for_s");
        if (sf)
            snprintf(state, sizeof state, "%s%s %.1fs", s ? s : "?", mark, json_real_value(sf));
        else
            snprintf(state, sizeof state, "%s%s", s ? s : "?", mark);
        const char *tenant = json_string_value(json_object_get(c, "tenant"));
        char gpus[32]; /* several GPUs: "0,1"; the limit shown is per GPU */
        cli_format_devices(c, gpus, sizeof gpus);
        printf("%-14.14s %-16.16s %-12.12s %3s %9s %9s %9s %-22s %5lld %4lld %-12s %6s %9s\n",
               json_string_value(json_object_get(c, "id")),
               json_string_value(json_object_get(c, "name")), tenant ? tenant : "", gpus,
               sz(json_object_get(c, "limit"), a), sz(json_object_get(c, "assigned"), b),
               sz(json_object_get(c, "used"), u), state,
               (long long)json_integer_value(json_object_get(c, "processes")),
               (long long)json_integer_value(json_object_get(c, "pending")),
               share_text(c, share, sizeof share),
               ratio_pct(json_object_get(c, "compute_utilization"), util, sizeof util), thr);
    }
}

int cmd_devices(int argc, char **argv)
{
    static const char *use = "convgpu devices [--json]";
    static const char *const flags[] = {"--json", NULL};
    if (cli_wants_help(argc, argv)) {
        printf("Usage: %s\n\nLists the node's GPUs: capacity (total minus reserve), memory assigned\n"
               "to containers, memory in use, free, the per-process context charge, the sum of\n"
               "the hard compute shares admitted, and utilisation in the last window.\n", use);
        return 0;
    }
    if (!check_args(argc, argv, flags, 0, use))
        return 2;
    json_t *ans = NULL;
    int rc = call("GET", "/v1/devices", NULL, &ans, 200);
    if (rc)
        return rc;
    if (has_flag(argc, argv, "--json")) {
        cli_print_json(ans);
    } else {
        cli_print_devices(ans);
    }
    json_decref(ans);
    return 0;
}

int cmd_ps(int argc, char **argv)
{
    static const char *use = "convgpu ps [--json]";
    static const char *const flags[] = {"--json", NULL};
    if (cli_wants_help(argc, argv)) {
        printf("Usage: %s\n\nLists containers: GPU, limit, assignment (memory reserved for it),\n"
               "use, state (running or suspended, and for how long; /oversub when it waits because\n"
               "the GPU promises more memory than it has), processes, waiting requests,\n"
               "compute share and mode, utilisation of the GPU in the last window, and time its\n"
               "kernel launches waited for compute budget.\n",
               use);
        return 0;
    }
    if (!check_args(argc, argv, flags, 0, use))
        return 2;
    json_t *ans = NULL;
    int rc = call("GET", "/v1/containers", NULL, &ans, 200);
    if (rc)
        return rc;
    if (has_flag(argc, argv, "--json")) {
        cli_print_json(ans);
    } else {
        cli_print_containers(ans);
    }
    json_decref(ans);
    return 0;
}

static int container_path(const char *id, char *path, size_t len)
{
    for (const char *p = id; *p; p++)
        if (*p == '/' || *p == '?' || *p == '#' || *p == '%' || *p <= ' ') {
            fprintf(stderr, "convgpu: '%s' is not a container id or name\n", id);
            return -1;
        }
    snprintf(path, len, "/v1/containers/%s", id);
    return 0;
}

/* The shape of every command that takes one container: help, one argument, one call. */
static int one_container(int argc, char **argv, const char *use, const char *help,
                         const char *method, json_t **ans)
{
    if (cli_wants_help(argc, argv)) {
        printf("Usage: %s\n\n%s", use, help);
        return -1;
    }
    if (!check_args(argc, argv, NULL, 1, use))
        return 2;
    char path[256];
    if (container_path(positional(argc, argv, 0), path, sizeof path))
        return 2;
    return call(method, path, NULL, ans, 200);
}

int cmd_inspect(int argc, char **argv)
{
    json_t *ans = NULL;
    int rc = one_container(argc, argv, "convgpu inspect ID|NAME",
                           "Prints one container as JSON: limit, assignment, use, state, total\n"
                           "suspended time, compute share (gpu_compute, compute_mode) and what\n"
                           "was measured of it (compute_utilization, compute_busy_s,\n"
                           "compute_throttled_s, compute_throttled_launches), its processes\n"
                           "(host pids, use) and waiting requests.\n",
                           "GET", &ans);
    if (rc)
        return rc < 0 ? 0 : rc;
    cli_print_json(ans);
    json_decref(ans);
    return 0;
}

int cmd_create(int argc, char **argv)
{
    static const char *use = "convgpu create --gpu-memory SIZE [--gpu-compute PCT "
                             "[--compute-mode hard|elastic]] [--priority N] [--no-swap] "
                             "[--exclusive] [--name NAME] [--device N | --gpus N [--devices LIST]] "
                             "[--tenant NAME]";
    if (cli_wants_help(argc, argv)) {
        printf("Usage: %s\n\nRegisters a container and prints its id and the environment its\n"
               "processes need (export it, or use convgpu run instead). --gpu-compute and\n"
               "--compute-mode give it a compute share, --priority and --no-swap its place\n"
               "when memory is short, as in convgpu run. --exclusive gives it a whole GPU\n"
               "(--gpu-memory may then be left out: the GPU's capacity). --gpus and --devices\n"
               "give it several GPUs (the limit and share on each), as in convgpu run. --tenant\n"
               "puts it in a tenant other than your user's (root only). Not run's --limit\n"
               "profile (a profile belongs to a command, and create runs none) nor --quiet\n"
               "(the id and environment are what create prints).\n", use);
        return 0;
    }
    /* Every option from the table (container_options.h), as run spells them. */
    struct cgc_option_values v = {0};
    for (int i = 1; i < argc; i++) {
        int rc = cli_take_option("create", CGC_DOOR_CREATE, argc, argv, &i, &v);
        if (rc == 2)
            return 2;
        if (rc == 0) {
            fprintf(stderr, "convgpu create: unexpected '%s'\nUsage: %s\n", argv[i], use);
            return 2;
        }
    }
    if (!v.given[CGC_OPT_GPU_MEMORY] && !v.given[CGC_OPT_EXCLUSIVE]) {
        fprintf(stderr, "convgpu create: --gpu-memory: required (or --exclusive: a whole GPU)\n");
        return 2;
    }
    if (cli_check_options("create", &v) != 0)
        return 2;
    struct cg_client_spec spec = v.spec;
    struct cgc_error cerr;
    json_t *ans = cgc_create(&spec, &cerr);
    if (!ans) {
        cli_report(&cerr);
        return cerr.status == 404 ? 3 : 1;
    }
    printf("%s\n", json_string_value(json_object_get(ans, "id")));
    const char *k;
    json_t *val;
    json_object_foreach(json_object_get(ans, "env"), k, val)
        printf("%s=%s\n", k, json_string_value(val));
    json_decref(ans);
    return 0;
}

int cmd_rm(int argc, char **argv)
{
    json_t *ans = NULL;
    int rc = one_container(argc, argv, "convgpu rm ID|NAME",
                           "Removes a container: its processes lose their connection, waiting\n"
                           "requests fail, and its assignment returns to the device at once.\n",
                           "DELETE", &ans);
    if (rc)
        return rc < 0 ? 0 : rc;
    printf("%s\n", json_string_value(json_object_get(ans, "removed")));
    json_decref(ans);
    return 0;
}

/* swap / unswap: one order, answered at once (202); the move itself is followed in inspect. */
static int swap_command(int argc, char **argv, bool out)
{
    const char *use = out ? "convgpu swap ID|NAME" : "convgpu unswap ID|NAME";
    if (cli_wants_help(argc, argv)) {
        printf("Usage: %s\n\n%s", use,
               out ? "Orders a container's processes to move their swappable GPU memory to host\n"
                     "memory (docs/SWAP.md): its launches, copies and allocations wait, its\n"
                     "queued work finishes, the memory is copied out and released. inspect shows\n"
                     "swap: swapping-out, then out (state swapped). Needs convgpud --swap yes.\n"
                   : "Orders a swapped-out container back: its processes get device memory at\n"
                     "the same addresses again, copy their data back, and continue. inspect\n"
                     "shows swap: swapping-in, then in.\n");
        return 0;
    }
    if (!check_args(argc, argv, NULL, 1, use))
        return 2;
    char path[256];
    if (container_path(positional(argc, argv, 0), path, sizeof path))
        return 2;
    strncat(path, out ? "/swap-out" : "/swap-in", sizeof path - strlen(path) - 1);
    json_t *ans = NULL;
    int rc = call("POST", path, NULL, &ans, 202);
    if (rc)
        return rc;
    printf("%s %s\n", json_string_value(json_object_get(ans, "id")),
           json_string_value(json_object_get(ans, "swap")));
    json_decref(ans);
    return 0;
}

int cmd_swap(int argc, char **argv) { return swap_command(argc, argv, true); }
int cmd_unswap(int argc, char **argv) { return swap_command(argc, argv, false); }

int cmd_set(int argc, char **argv)
{
    static const char *use = "convgpu set ID|NAME [--gpu-memory SIZE] [--gpu-compute PCT|none] "
                             "[--compute-mode hard|elastic] [--priority N]";
    if (cli_wants_help(argc, argv)) {
        printf("Usage: %s\n\nChanges a container's limit or compute share while it runs, both at\n"
               "once or neither. Lowering the limit below its current use is refused; raising\n"
               "takes effect when it is safe (it may wait for memory like any request).\n"
               "--gpu-compute sets the share (none removes it; a share keeps its mode unless\n"
               "--compute-mode is given); a hard share the GPU cannot admit (the hard shares on\n"
               "one GPU add up to at most 100) is refused and nothing changes. --priority\n"
               "(0-9) reorders who is resumed first from now on.\n", use);
        return 0;
    }
    /* The changeable rows of the option table (container_options.h); --gpu-compute also
     * takes "none", which removes the share. */
    const char *id = NULL;
    struct cgc_option_values v = {0};
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--gpu-compute") == 0 && i + 1 < argc &&
            strcmp(argv[i + 1], "none") == 0) {
            v.compute_none = true;
            v.given[CGC_OPT_GPU_COMPUTE] = true;
            i++;
            continue;
        }
        int rc = cli_take_option("set", CGC_DOOR_SET, argc, argv, &i, &v);
        if (rc == 2)
            return 2;
        if (rc == 1)
            continue;
        if (argv[i][0] != '-' && !id)
            id = argv[i];
        else {
            fprintf(stderr, "convgpu set: unexpected '%s'\nUsage: %s\n", argv[i], use);
            return 2;
        }
    }
    if (v.compute_none && v.given[CGC_OPT_COMPUTE_MODE]) {
        fprintf(stderr, "convgpu set: --compute-mode needs a share: not with --gpu-compute "
                        "none, which removes it\n");
        return 2;
    }
    bool any = false;
    for (size_t k = 0; k < CGC_OPT_COUNT; k++)
        any = any || v.given[k];
    if (!id || !any) {
        fprintf(stderr, "convgpu set: %s\nUsage: %s\n",
                !id ? "container id missing" : "nothing to change", use);
        return 2;
    }
    char mem_text[CG_SIZE_BUFLEN];
    const char *mem = v.given[CGC_OPT_GPU_MEMORY]
                          ? cg_format_size(v.spec.gpu_memory, mem_text, sizeof mem_text)
                          : NULL;
    bool pct = v.given[CGC_OPT_GPU_COMPUTE], mode = v.given[CGC_OPT_COMPUTE_MODE];
    bool prio = v.given[CGC_OPT_PRIORITY];
    json_t *body = json_object();
    if (mem)
        json_object_set_new(body, "gpu_memory", json_integer((json_int_t)v.spec.gpu_memory));
    if (v.given[CGC_OPT_GPU_COMPUTE])
        json_object_set_new(body, "gpu_compute",
                            v.compute_none ? json_null() : json_integer(v.spec.compute_pct));
    if (v.given[CGC_OPT_COMPUTE_MODE])
        json_object_set_new(body, "compute_mode", json_string(v.spec.compute_mode));
    if (v.spec.has_priority)
        json_object_set_new(body, "priority", json_integer(v.spec.priority));
    char path[256];
    if (container_path(id, path, sizeof path)) {
        json_decref(body);
        return 2;
    }
    strncat(path, "/limit", sizeof path - strlen(path) - 1);
    json_t *ans = NULL;
    int rc = call("PUT", path, body, &ans, 200);
    if (rc)
        return rc;
    char b[CG_SIZE_BUFLEN], share[32];
    if (mem && json_is_true(json_object_get(ans, "limit_pending")))
        printf("%s: raise to %s waits for memory; limit stays %s until then\n", id, mem,
               sz(json_object_get(ans, "limit"), b));
    else if (mem)
        printf("%s: limit %s\n", id, sz(json_object_get(ans, "limit"), b));
    if (pct || mode)
        printf("%s: compute share %s\n", id, share_text(ans, share, sizeof share));
    if (prio)
        printf("%s: priority %lld\n", id,
               (long long)json_integer_value(json_object_get(ans, "priority")));
    json_decref(ans);
    return 0;
}

int cmd_policy(int argc, char **argv)
{
    static const char *use = "convgpu policy [RESUME] [--placement NAME]";
    if (cli_wants_help(argc, argv)) {
        printf("Usage: %s\n\nWithout arguments prints the policies. RESUME picks who gets memory\n"
               "when it returns: fifo, best-fit, recent, random, aging-fit. --placement picks\n"
               "the GPU for new containers: first-fit, least-loaded, binpack, load-balance,\n"
               "standalone, interference.\n", use);
        return 0;
    }
    json_t *body = json_object();
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--placement") == 0 && i + 1 < argc)
            json_object_set_new(body, "placement", json_string(argv[++i]));
        else if (argv[i][0] != '-' && !json_object_get(body, "resume"))
            json_object_set_new(body, "resume", json_string(argv[i]));
        else {
            fprintf(stderr, "convgpu policy: unexpected '%s'\nUsage: %s\n", argv[i], use);
            json_decref(body);
            return 2;
        }
    }
    json_t *ans = NULL;
    int rc;
    if (json_object_size(body) == 0) {
        json_decref(body);
        rc = call("GET", "/v1/policy", NULL, &ans, 200);
    } else {
        rc = call("PUT", "/v1/policy", body, &ans, 200);
    }
    if (rc)
        return rc;
    json_t *fair = json_object_get(ans, "fair_share");
    printf("resume: %s\nplacement: %s\n", json_string_value(json_object_get(ans, "resume")),
           json_string_value(json_object_get(ans, "placement")));
    if (fair)
        printf("fair share: %s\n", json_string_value(fair));
    json_decref(ans);
    return 0;
}

const char *cli_event_amount(json_t *e, char *buf)
{
    if (json_object_get(e, "gpu_compute"))
        return share_text(e, buf, CG_SIZE_BUFLEN);
    return sz(json_object_get(e, "bytes"), buf);
}

static void print_event(json_t *e, bool as_json)
{
    if (as_json) {
        char *s = json_dumps(e, JSON_COMPACT);
        if (s)
            puts(s);
        free(s);
        fflush(stdout);
        return;
    }
    char b[CG_SIZE_BUFLEN], when[32];
    time_t t = (time_t)json_real_value(json_object_get(e, "time"));
    struct tm tm;
    localtime_r(&t, &tm);
    strftime(when, sizeof when, "%H:%M:%S", &tm);
    const char *reason = json_string_value(json_object_get(e, "reason"));
    json_t *pid = json_object_get(e, "pid");
    char pids[32] = "";
    if (pid)
        snprintf(pids, sizeof pids, "pid %lld", (long long)json_integer_value(pid));
    printf("%s %6lld %-8s %-14.14s %-10s %9s  %s\n", when,
           (long long)json_integer_value(json_object_get(e, "seq")),
           json_string_value(json_object_get(e, "type")),
           json_string_value(json_object_get(e, "container")), pids, cli_event_amount(e, b),
           reason ? reason : "");
    fflush(stdout);
}

static int on_event_line(const char *line, void *ctx)
{
    json_error_t jerr;
    json_t *e = json_loads(line, 0, &jerr);
    if (e) {
        print_event(e, *(bool *)ctx);
        json_decref(e);
    }
    return 0;
}

int cmd_events(int argc, char **argv)
{
    static const char *use = "convgpu events [--once] [--json] [--since SEQ]";
    if (cli_wants_help(argc, argv)) {
        printf("Usage: %s\n\nFollows the daemon's decisions as they happen: admit, assign, grant,\n"
               "suspend, resume, reject, release, compute (a share set or changed), process\n"
               "connect/exit, removal — with reasons.\n"
               "  --once       print the recent events (the last 4096) and exit\n"
               "  --since SEQ  start at event SEQ (default: recent ones with --once, new ones otherwise)\n"
               "  --json       one JSON object per line\n", use);
        return 0;
    }
    bool once = false, as_json = false;
    const char *since = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--once") == 0)
            once = true;
        else if (strcmp(argv[i], "--json") == 0)
            as_json = true;
        else if (strcmp(argv[i], "--since") == 0 && i + 1 < argc) {
            since = argv[++i];
            for (const char *p = since; *p; p++)
                if (*p < '0' || *p > '9' || p - since > 18) {
                    fprintf(stderr, "convgpu events: --since takes an event number\n");
                    return 2;
                }
            if (!*since) {
                fprintf(stderr, "convgpu events: --since takes an event number\n");
                return 2;
            }
        } else {
            fprintf(stderr, "convgpu events: unexpected '%s'\nUsage: %s\n", argv[i], use);
            return 2;
        }
    }
    char path[96], err[512];
    if (once) {
        snprintf(path, sizeof path, "/v1/events%s%s", since ? "?since=" : "", since ? since : "");
        json_t *ans = NULL;
        int rc = call("GET", path, NULL, &ans, 200);
        if (rc)
            return rc;
        size_t i;
        json_t *e;
        json_array_foreach(json_object_get(ans, "events"), i, e)
            print_event(e, as_json);
        json_decref(ans);
        return 0;
    }
    snprintf(path, sizeof path, "/v1/events?follow=1%s%s", since ? "&since=" : "", since ? since : "");
    long st = cli_stream(path, on_event_line, &as_json, err, sizeof err);
    if (st != 200) {
        cli_report_error(st, NULL, err);
        return 1;
    }
    return 0;
}

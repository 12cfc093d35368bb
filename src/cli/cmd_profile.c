/* cmd_profile.c — `convgpu profile`: what the daemon learnt from past runs (the peak GPU memory,
 * mean duration and utilisation of each job, by tenant and image or command), and `convgpu
 * profile rm KEY` to forget one. The daemon's side is src/daemon/profile.h. `convgpu profile
 * interference` shows (or with rm clears) the slowdowns `convgpu interfere --save` stored by
 * key, the daemon's src/daemon/api_interference.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "http.h"
#include "size.h"

static void usage(FILE *f)
{
    fprintf(f, "Usage: convgpu profile [--json]\n"
               "       convgpu profile rm KEY [--tenant NAME]\n"
               "       convgpu profile interference [--json] [--tenant NAME]\n"
               "       convgpu profile interference rm [--tenant NAME]\n\n"
               "Lists what the daemon learnt from containers that ended: for each tenant (the\n"
               "owner's user name) and key (the image, else the command's name), the highest\n"
               "peak GPU memory of its last 16 runs, their mean duration and mean compute\n"
               "utilisation ('-' when the GPU's per-process utilisation was not measured), and\n"
               "how many runs it has seen. `convgpu run --limit profile` takes the peak plus a\n"
               "margin as its limit (docs/SCHEDULING.md, \"Profiles and exclusive GPUs\").\n\n"
               "  --json          the API's answer as JSON\n"
               "  rm KEY          forget profile KEY (your own; an operator: every tenant's,\n"
               "                  or --tenant NAME's)\n"
               "  interference    the slowdowns `convgpu interfere --save` stored: each\n"
               "                  foreground key's wall time beside a background key over its\n"
               "                  time alone, the rounds it is the median of, and when it was\n"
               "                  measured (your own; an operator: every tenant's, or\n"
               "                  --tenant NAME's)\n"
               "  interference rm clear those slowdowns (same tenants as above)\n");
}

/* KEY as one path segment: percent-encoded except unreserved characters, so an image
 * reference ("library/ubuntu:22.04") stays one segment. */
static void encode(const char *in, char *out, size_t len)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t o = 0;
    for (const unsigned char *p = (const unsigned char *)in; *p && o + 4 < len; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
            *p == '-' || *p == '_' || *p == '.' || *p == '~') {
            out[o++] = (char)*p;
        } else {
            out[o++] = '%';
            out[o++] = hex[*p >> 4];
            out[o++] = hex[*p & 15];
        }
    }
    out[o] = '\0';
}

static void print_table(json_t *arr)
{
    printf("%-12s %-32s %10s %10s %6s %5s\n", "TENANT", "KEY", "PEAK", "DURATION", "UTIL", "RUNS");
    size_t i;
    json_t *p;
    json_array_foreach(arr, i, p) {
        char peak[CG_SIZE_BUFLEN], dur[24], util[16];
        cg_format_size((uint64_t)json_integer_value(json_object_get(p, "peak")), peak, sizeof peak);
        snprintf(dur, sizeof dur, "%.1fs", json_number_value(json_object_get(p, "duration_s")));
        if (json_is_true(json_object_get(p, "utilization_known")))
            snprintf(util, sizeof util, "%.1f%%",
                     json_number_value(json_object_get(p, "utilization")) * 100.0);
        else
            snprintf(util, sizeof util, "-");
        printf("%-12.12s %-32.32s %10s %10s %6s %5lld\n",
               json_string_value(json_object_get(p, "tenant")),
               json_string_value(json_object_get(p, "key")), peak, dur, util,
               (long long)json_integer_value(json_object_get(p, "runs")));
    }
}

static int remove_profile(int argc, char **argv)
{
    const char *key = NULL, *tenant = NULL;
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--tenant") == 0 && i + 1 < argc && !tenant)
            tenant = argv[++i];
        else if (argv[i][0] != '-' && !key)
            key = argv[i];
        else {
            fprintf(stderr, "convgpu profile rm: unexpected '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        }
    }
    if (!key || !*key) {
        fprintf(stderr, "convgpu profile rm: which profile? (convgpu profile lists the keys)\n");
        return 2;
    }
    char ekey[3 * 256 + 1], etenant[3 * 64 + 1] = "", path[1024];
    if (strlen(key) > 255 || (tenant && (!*tenant || strlen(tenant) > 64))) {
        fprintf(stderr, "convgpu profile rm: a key is at most 255 characters, a tenant 1-64\n");
        return 2;
    }
    encode(key, ekey, sizeof ekey);
    if (tenant)
        encode(tenant, etenant, sizeof etenant);
    snprintf(path, sizeof path, "/v1/profiles/%s%s%s", ekey, tenant ? "?tenant=" : "", etenant);
    json_t *ans = NULL;
    char err[512];
    long st = cli_request("DELETE", path, NULL, &ans, err, sizeof err);
    if (st != 200) {
        cli_report_error(st, ans, err);
        json_decref(ans);
        return st == 404 ? 3 : 1;
    }
    printf("%s\n", json_string_value(json_object_get(ans, "removed")));
    json_decref(ans);
    return 0;
}

static void print_interference(json_t *arr)
{
    printf("%-12s %-24s %-24s %9s %5s  %s\n", "TENANT", "FOREGROUND", "BACKGROUND", "SLOWDOWN",
           "RUNS", "MEASURED");
    size_t i;
    json_t *r;
    json_array_foreach(arr, i, r) {
        char when[32] = "-";
        time_t t = (time_t)json_integer_value(json_object_get(r, "measured"));
        struct tm tm;
        if (localtime_r(&t, &tm))
            strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm);
        printf("%-12.12s %-24.24s %-24.24s %9.3f %5lld  %s\n",
               json_string_value(json_object_get(r, "tenant")),
               json_string_value(json_object_get(r, "foreground")),
               json_string_value(json_object_get(r, "background")),
               json_number_value(json_object_get(r, "slowdown")),
               (long long)json_integer_value(json_object_get(r, "runs")), when);
    }
}

/* `convgpu profile interference [rm] [--json] [--tenant NAME]`. */
static int interference(int argc, char **argv)
{
    bool as_json = false, clear = false;
    const char *tenant = NULL;
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0 && !clear)
            as_json = true;
        else if (strcmp(argv[i], "rm") == 0 && i == 2)
            clear = true;
        else if (strcmp(argv[i], "--tenant") == 0 && i + 1 < argc && !tenant)
            tenant = argv[++i];
        else {
            fprintf(stderr, "convgpu profile interference: unexpected '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        }
    }
    if (tenant && (!*tenant || strlen(tenant) > 32)) {
        fprintf(stderr, "convgpu profile interference: a tenant is 1-32 characters\n");
        return 2;
    }
    char etenant[3 * 32 + 1] = "", path[256];
    if (tenant)
        encode(tenant, etenant, sizeof etenant);
    snprintf(path, sizeof path, "/v1/interference%s%s", tenant ? "?tenant=" : "", etenant);
    json_t *ans = NULL;
    char err[512];
    long st = cli_request(clear ? "DELETE" : "GET", path, NULL, &ans, err, sizeof err);
    if (st != 200) {
        cli_report_error(st, ans, err);
        json_decref(ans);
        return 1;
    }
    if (clear)
        printf("%lld removed\n", (long long)json_integer_value(json_object_get(ans, "removed")));
    else if (as_json)
        cli_print_json(ans);
    else
        print_interference(ans);
    json_decref(ans);
    return 0;
}

int cmd_profile(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        usage(stdout);
        return 0;
    }
    if (argc >= 2 && strcmp(argv[1], "rm") == 0)
        return remove_profile(argc, argv);
    if (argc >= 2 && strcmp(argv[1], "interference") == 0)
        return interference(argc, argv);
    bool as_json = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0) {
            as_json = true;
        } else {
            fprintf(stderr, "convgpu profile: unexpected '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        }
    }
    json_t *ans = NULL;
    char err[512];
    long st = cli_request("GET", "/v1/profiles", NULL, &ans, err, sizeof err);
    if (st != 200) {
        cli_report_error(st, ans, err);
        json_decref(ans);
        return 1;
    }
    if (as_json)
        cli_print_json(ans);
    else
        print_table(ans);
    json_decref(ans);
    return 0;
}

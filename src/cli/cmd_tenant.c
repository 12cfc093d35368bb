/* cmd_tenant.c — `convgpu tenant list` and `convgpu tenant set NAME --weight W`: the tenants'
 * weights, what they hold, their fair share and ceiling, and how many of their containers wait
 * (docs/SCHEDULING.md, "Tenants and fair share"). The daemon checks everything again; the checks
 * here only give a clearer message before a round trip. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "http.h"
#include "size.h"

static const char *use = "convgpu tenant list [--json] | convgpu tenant set NAME --weight W";

static int request(const char *method, const char *path, json_t *body, json_t **ans)
{
    char err[512];
    long st = cli_request(method, path, body, ans, err, sizeof err);
    if (st != 200) {
        cli_report_error(st, *ans, err);
        json_decref(*ans);
        *ans = NULL;
        return st == 404 ? 3 : 1;
    }
    return 0;
}

void cli_print_tenants(json_t *ans)
{
    json_t *list = json_object_get(ans, "tenants");
    const char *mode = json_string_value(json_object_get(ans, "fair_share"));
    printf("fair share: %s\n", mode ? mode : "?");
    printf("%-20s %6s %5s %4s %9s %9s %9s %9s\n", "TENANT", "WEIGHT", "CTRS", "WAIT", "ASSIGNED",
           "USED", "SHARE", "CEILING");
    size_t i;
    json_t *t;
    json_array_foreach(list, i, t) {
        char a[CG_SIZE_BUFLEN], u[CG_SIZE_BUFLEN], s[CG_SIZE_BUFLEN], c[CG_SIZE_BUFLEN];
        printf("%-20.20s %6lld %5lld %4lld %9s %9s %9s %9s\n",
               json_string_value(json_object_get(t, "name")),
               (long long)json_integer_value(json_object_get(t, "weight")),
               (long long)json_integer_value(json_object_get(t, "containers")),
               (long long)json_integer_value(json_object_get(t, "waiting")),
               cg_format_size((uint64_t)json_integer_value(json_object_get(t, "assigned")), a,
                              sizeof a),
               cg_format_size((uint64_t)json_integer_value(json_object_get(t, "used")), u,
                              sizeof u),
               cg_format_size((uint64_t)json_integer_value(json_object_get(t, "share")), s,
                              sizeof s),
               cg_format_size((uint64_t)json_integer_value(json_object_get(t, "ceiling")), c,
                              sizeof c));
    }
}

static int tenant_list(int argc, char **argv)
{
    bool as_json = argc == 3 && strcmp(argv[2], "--json") == 0;
    if (argc > 3 || (argc == 3 && !as_json)) {
        fprintf(stderr, "convgpu tenant list: unexpected '%s'\nUsage: %s\n", argv[argc - 1], use);
        return 2;
    }
    json_t *ans = NULL;
    int rc = request("GET", "/v1/tenants", NULL, &ans);
    if (rc)
        return rc;
    if (as_json)
        cli_print_json(ans);
    else
        cli_print_tenants(ans);
    json_decref(ans);
    return 0;
}

static int tenant_set(int argc, char **argv)
{
    if (argc != 5 || strcmp(argv[3], "--weight") != 0) {
        fprintf(stderr, "convgpu tenant set: expected NAME --weight W\nUsage: %s\n", use);
        return 2;
    }
    const char *name = argv[2], *w = argv[4];
    size_t n = strlen(name);
    bool ok = n >= 1 && n <= 32 && name[0] != '.' && name[0] != '-';
    for (size_t i = 0; ok && i < n; i++)
        ok = (name[i] >= 'a' && name[i] <= 'z') || (name[i] >= 'A' && name[i] <= 'Z') ||
             (name[i] >= '0' && name[i] <= '9') || strchr("_.-", name[i]);
    if (!ok) {
        fprintf(stderr, "convgpu tenant set: '%s' is not a tenant name (1-32 of "
                        "[A-Za-z0-9_.-], not starting with . or -)\n", name);
        return 2;
    }
    char *end;
    errno = 0;
    long long weight = strtoll(w, &end, 10);
    if (!*w || *end || errno || weight < 1 || weight > 1000000 || w[0] == '+' || w[0] == ' ') {
        fprintf(stderr, "convgpu tenant set: --weight '%s': a whole number from 1 to 1000000\n", w);
        return 2;
    }
    char path[64];
    snprintf(path, sizeof path, "/v1/tenants/%s", name);
    json_t *ans = NULL;
    int rc = request("PUT", path, json_pack("{s:I}", "weight", (json_int_t)weight), &ans);
    if (rc)
        return rc;
    printf("tenant %s: weight %lld\n", name, (long long)json_integer_value(json_object_get(ans, "weight")));
    json_decref(ans);
    return 0;
}

int cmd_tenant(int argc, char **argv)
{
    if (cli_wants_help(argc, argv) || argc < 2) {
        printf("Usage: %s\n\nTenants own containers (default: the creating user). With a fair share\n"
               "(convgpud --fair-share static|adaptive) each tenant's containers on a GPU may hold\n"
               "at most its ceiling: its share (capacity x weight / the weights of the tenants\n"
               "there), or more when one of its containers' limits, or what its started containers\n"
               "need to finish, is larger. `set` changes a weight (root or the daemon's user).\n",
               use);
        return argc < 2 ? 2 : 0;
    }
    if (strcmp(argv[1], "list") == 0)
        return tenant_list(argc, argv);
    if (strcmp(argv[1], "set") == 0)
        return tenant_set(argc, argv);
    fprintf(stderr, "convgpu tenant: unknown subcommand '%s'\nUsage: %s\n", argv[1], use);
    return 2;
}

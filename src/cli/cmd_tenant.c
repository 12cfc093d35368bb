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

static const char *use = "convgpu tenant list [--json] | convgpu tenant set NAME [--weight W] "
                         "[--max-priority N|none] [--exclusive yes|no]";

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
    printf("%-20s %6s %5s %4s %9s %9s %9s %9s %7s %4s\n", "TENANT", "WEIGHT", "CTRS", "WAIT",
           "ASSIGNED", "USED", "SHARE", "CEILING", "MAXPRIO", "EXCL");
    size_t i;
    json_t *t;
    json_array_foreach(list, i, t) {
        char a[CG_SIZE_BUFLEN], u[CG_SIZE_BUFLEN], s[CG_SIZE_BUFLEN], c[CG_SIZE_BUFLEN];
        printf("%-20.20s %6lld %5lld %4lld %9s %9s %9s %9s %7lld %4s\n",
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
                              sizeof c),
               (long long)json_integer_value(json_object_get(t, "max_priority")),
               json_is_true(json_object_get(t, "exclusive_allowed")) ? "yes" : "no");
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
    if (argc < 5 || argc % 2 == 0) {
        fprintf(stderr, "convgpu tenant set: expected NAME and at least one of --weight W, "
                        "--max-priority N|none, --exclusive yes|no\nUsage: %s\n", use);
        return 2;
    }
    const char *name = argv[2];
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
    json_t *body = json_object();
    for (int i = 3; i + 1 < argc; i += 2) {
        const char *flag = argv[i], *v = argv[i + 1];
        char *end;
        errno = 0;
        long long num = strtoll(v, &end, 10);
        bool whole = *v && !*end && !errno && v[0] != '+' && v[0] != ' ';
        if (strcmp(flag, "--weight") == 0 && whole && num >= 1 && num <= 1000000) {
            json_object_set_new(body, "weight", json_integer(num));
        } else if (strcmp(flag, "--max-priority") == 0 && strcmp(v, "none") == 0) {
            json_object_set_new(body, "max_priority", json_null());
        } else if (strcmp(flag, "--max-priority") == 0 && whole && num >= 0 && num <= 9) {
            json_object_set_new(body, "max_priority", json_integer(num));
        } else if (strcmp(flag, "--exclusive") == 0 &&
                   (strcmp(v, "yes") == 0 || strcmp(v, "no") == 0)) {
            json_object_set_new(body, "exclusive", json_boolean(strcmp(v, "yes") == 0));
        } else {
            fprintf(stderr, "convgpu tenant set: %s '%s': %s\n", flag, v,
                    strcmp(flag, "--weight") == 0 ? "a whole number from 1 to 1000000"
                    : strcmp(flag, "--max-priority") == 0 ? "a whole number from 0 to 9, or none"
                    : strcmp(flag, "--exclusive") == 0    ? "yes or no"
                                                          : "unknown option");
            json_decref(body);
            return 2;
        }
    }
    char path[64];
    snprintf(path, sizeof path, "/v1/tenants/%s", name);
    json_t *ans = NULL;
    int rc = request("PUT", path, body, &ans);
    if (rc)
        return rc;
    printf("tenant %s: weight %lld, max priority %lld, exclusive %s\n", name,
           (long long)json_integer_value(json_object_get(ans, "weight")),
           (long long)json_integer_value(json_object_get(ans, "max_priority")),
           json_is_true(json_object_get(ans, "exclusive_allowed")) ? "allowed" : "not allowed");
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
               "need to finish, is larger. `set` changes a weight and a tenant's allowances (root\n"
               "or the daemon's user): --max-priority, the highest priority its users may give\n"
               "their containers (none: the node's user-max-priority, default 0), and --exclusive,\n"
               "whether they may hold a GPU exclusively (default no). Operators are not bound.\n",
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

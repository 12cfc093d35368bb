/* test_options.c — the container-option table (src/client/container_options.h) walked row by row
 * through every door it names: each door finds the row under its own spelling (a flag, a
 * variable, an annotation, a SPANK option, an API key), a valid value of the row's type is taken
 * and lands in the create body under the row's API key, an invalid one is refused with a message
 * that names where it came from and changes nothing. The device plugin's door is its own flags
 * (the node operator's), for priority, swap refusal and exclusivity only. tests/e2e/test_options.sh does the same
 * against a daemon and reads back what it recorded. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "container_options.h"

/* A valid and an invalid value for each type (a FLAG's valid value on the CLI is NULL). */
static const char *valid_of(const struct cgc_option *o)
{
    switch (o->type) {
    case CGC_TYPE_SIZE: return "96MiB";
    case CGC_TYPE_PERCENT: return "30";
    case CGC_TYPE_INT: return o->min > 0 ? "2" : "1";
    case CGC_TYPE_CHOICE: return strcmp(o->choices, "profile") == 0 ? "profile" : "hard";
    case CGC_TYPE_FLAG: return "yes";
    case CGC_TYPE_NAME: return "team-a";
    case CGC_TYPE_INDEXES: return "0,1";
    }
    return NULL;
}

static const char *invalid_of(const struct cgc_option *o)
{
    switch (o->type) {
    case CGC_TYPE_SIZE: return "0";
    case CGC_TYPE_PERCENT: return "101";
    case CGC_TYPE_INT: return o->max == 9 ? "10" : "-1";
    case CGC_TYPE_CHOICE: return "lots";
    case CGC_TYPE_FLAG: return "maybe";
    case CGC_TYPE_NAME: return "-bad name";
    case CGC_TYPE_INDEXES: return "0,0";
    }
    return NULL;
}

static const char *spelling(const struct cgc_option *o, unsigned door, bool annotation)
{
    switch (door) {
    case CGC_DOOR_RUN:
    case CGC_DOOR_CREATE:
    case CGC_DOOR_SET:
    case CGC_DOOR_K8S: return o->flag;
    case CGC_DOOR_DOCKER: return o->env;
    case CGC_DOOR_OCI: return annotation ? o->annotation : o->env;
    case CGC_DOOR_SPANK: return o->spank;
    case CGC_DOOR_API: return o->api_key;
    }
    return NULL;
}

/* --dump: the table as JSON, for tests/e2e/test_options.sh to walk through the real doors. */
static int dump(void)
{
    json_t *rows = json_array();
    for (size_t r = 0; r < CGC_OPT_COUNT; r++) {
        const struct cgc_option *o = &cgc_options[r];
        json_array_append_new(
            rows, json_pack("{s:s,s:s?,s:s,s:s?,s:s?,s:s?,s:i,s:I,s:I,s:s?,s:i,s:s,s:s}", "flag",
                            o->flag, "arg", o->arg, "api_key", o->api_key, "env", o->env,
                            "annotation", o->annotation, "spank", o->spank, "type", (int)o->type,
                            "min", (json_int_t)o->min, "max", (json_int_t)o->max, "choices",
                            o->choices, "doors", (int)o->doors, "valid", valid_of(o) ? valid_of(o) : "",
                            "invalid", invalid_of(o) ? invalid_of(o) : ""));
    }
    char *text = json_dumps(rows, JSON_INDENT(1));
    puts(text ? text : "[]");
    free(text);
    json_decref(rows);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--dump") == 0)
        return dump();
    static const unsigned doors[] = {CGC_DOOR_RUN,    CGC_DOOR_CREATE, CGC_DOOR_SET,
                                     CGC_DOOR_DOCKER, CGC_DOOR_OCI,    CGC_DOOR_SPANK,
                                     CGC_DOOR_API,    CGC_DOOR_K8S};
    unsigned walked = 0;
    for (size_t r = 0; r < CGC_OPT_COUNT; r++) {
        const struct cgc_option *o = &cgc_options[r];
        CHECK(o->id == (enum cgc_opt_id)r, "row %zu holds id %d", r, o->id);
        CHECK(o->flag && o->api_key && o->help && *o->help, "row %zu lacks a name or help", r);
        /* A door the row does not offer is explained. */
        bool everywhere = (o->doors & (CGC_DOOR_RUN | CGC_DOOR_OCI | CGC_DOOR_SPANK)) ==
                          (CGC_DOOR_RUN | CGC_DOOR_OCI | CGC_DOOR_SPANK);
        CHECK(everywhere || o->note, "--%s is missing from a door and says not why", o->flag);
        for (size_t d = 0; d < sizeof doors / sizeof doors[0]; d++) {
            if (!(o->doors & doors[d]))
                continue;
            for (int ann = 0; ann < (doors[d] == CGC_DOOR_OCI ? 2 : 1); ann++) {
                const char *name = spelling(o, doors[d], ann);
                CHECK(name, "--%s: door %#x offers it under no name", o->flag, doors[d]);
                if (!name)
                    continue;
                CHECK(cgc_option_find(doors[d], name) == o, "door %#x: '%s' finds another row",
                      doors[d], name);
                struct cgc_option_values v = {0};
                char err[256] = "";
                const char *good = o->type == CGC_TYPE_FLAG && doors[d] & (CGC_DOOR_RUN |
                                       CGC_DOOR_CREATE | CGC_DOOR_K8S) ? NULL : valid_of(o);
                CHECK(cgc_option_apply(o, name, good, &v, err, sizeof err) == 0 &&
                          v.given[o->id],
                      "door %#x: %s=%s refused: %s", doors[d], name, good ? good : "", err);
                json_t *body = cgc_create_body(&v.spec);
                CHECK(body && json_object_get(body, o->api_key), "%s: the body has no \"%s\"",
                      name, o->api_key);
                json_decref(body);
                struct cgc_option_values w = {0};
                const char *bad = invalid_of(o);
                int rc = cgc_option_apply(o, name, bad, &w, err, sizeof err);
                CHECK(rc != 0 && strstr(err, name) && strstr(err, bad),
                      "door %#x: %s=%s: rc %d, '%s'", doors[d], name, bad, rc, err);
                body = cgc_create_body(&w.spec);
                CHECK(body && json_object_size(body) == 0 && !w.given[o->id],
                      "%s=%s changed the request", name, bad);
                json_decref(body);
                walked++;
            }
        }
    }
    /* Every option the issue names is a row, under the spelling run uses. */
    static const char *const wanted[] = {"gpu-memory", "gpu-compute", "compute-mode", "priority",
                                         "no-swap",    "exclusive",   "tenant",       "device",
                                         "gpus",       "devices",     "limit"};
    for (size_t i = 0; i < sizeof wanted / sizeof wanted[0]; i++)
        CHECK(cgc_option_find(CGC_DOOR_RUN, wanted[i]), "run has no --%s", wanted[i]);
    /* The rules between options. */
    struct cgc_option_values v = {0};
    char err[256];
    cgc_option_apply(&cgc_options[CGC_OPT_COMPUTE_MODE], "--compute-mode", "hard", &v, err,
                     sizeof err);
    CHECK(cgc_options_check(&v, err, sizeof err) != 0 && strstr(err, "needs a share"),
          "a mode without a share: %s", err);
    cgc_option_apply(&cgc_options[CGC_OPT_GPU_COMPUTE], "--gpu-compute", "20", &v, err,
                     sizeof err);
    CHECK(cgc_options_check(&v, err, sizeof err) == 0, "a mode with a share: %s", err);
    cgc_option_apply(&cgc_options[CGC_OPT_DEVICE], "--device", "0", &v, err, sizeof err);
    cgc_option_apply(&cgc_options[CGC_OPT_DEVICES], "--devices", "1,2", &v, err, sizeof err);
    CHECK(cgc_options_check(&v, err, sizeof err) != 0 && strstr(err, "not with --device"),
          "--device beside --devices: %s", err);
    printf("%u (option, door) pairs walked\n", walked);
    return failures != 0;
}

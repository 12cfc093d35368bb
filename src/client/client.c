/* client.c — convgpu_client.h: container requests built from a typed spec, refusals decoded,
 * the busy-id rule and the environment merge, once for every door into convgpud. */
#include "convgpu_client.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cgc_error_set(struct cgc_error *e, long status, json_t *answer, const char *transport)
{
    e->status = status;
    e->local = false;
    const char *msg = status ? json_string_value(json_object_get(answer, "error")) : transport;
    snprintf(e->text, sizeof e->text, "%s", msg ? msg : "");
}

void cgc_error_format(const struct cgc_error *e, const char *what, char *out, size_t len)
{
    if (e->status == 0 || e->local)
        snprintf(out, len, "%s: %s", what, e->text);
    else
        snprintf(out, len, "%s: convgpud says: %s (HTTP %ld)", what,
                 e->text[0] ? e->text : "unexpected answer", e->status);
}

/* Sets key to v (stolen); false when out of memory. */
static bool put(json_t *o, const char *key, json_t *v)
{
    return v && json_object_set_new(o, key, v) == 0;
}

/* A JSON array of n values, the i-th made by at(list, i); NULL when out of memory. */
static json_t *array_of(const void *list, size_t n, json_t *(*at)(const void *list, size_t i))
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < n; i++)
        if (json_array_append_new(a, at(list, i)) != 0) {
            json_decref(a);
            a = NULL;
        }
    return a;
}

static json_t *device_at(const void *list, size_t i)
{
    return json_integer(((const unsigned *)list)[i]);
}

static json_t *token_at(const void *list, size_t i)
{
    return json_string(((const char *const *)list)[i]);
}

/* One row per field: a field the spec leaves at zero is not sent (the daemon's default). */
json_t *cgc_create_body(const struct cg_client_spec *s)
{
    json_t *b = json_object();
#define FIELD(key, when, value) ((when) ? put(b, (key), (value)) : true)
    bool ok = b && FIELD("id", s->id, json_string(s->id)) &&
              FIELD("name", s->name, json_string(s->name)) &&
              FIELD("gpu_memory", s->gpu_memory, json_integer((json_int_t)s->gpu_memory)) &&
              FIELD("profile_limit", s->profile_limit, json_true()) &&
              FIELD("exclusive", s->exclusive, json_true()) &&
              FIELD("gpu_compute", s->compute_pct, json_integer(s->compute_pct)) &&
              FIELD("compute_mode", s->compute_mode, json_string(s->compute_mode)) &&
              FIELD("priority", s->has_priority, json_integer(s->priority)) &&
              FIELD("swap", s->no_swap, json_false()) &&
              FIELD("tenant", s->tenant, json_string(s->tenant)) &&
              FIELD("device", s->has_device, json_integer(s->device)) &&
              FIELD("gpus", s->gpus, json_integer(s->gpus)) &&
              FIELD("devices", s->ndevices, array_of(s->devices, s->ndevices, device_at)) &&
              FIELD("image", s->image, json_string(s->image)) &&
              FIELD("command", s->command, json_string(s->command)) &&
              FIELD("profile", s->no_profile, json_false()) &&
              FIELD("uid", s->has_owner, json_integer(s->uid)) &&
              FIELD("gid", s->has_owner, json_integer(s->gid)) &&
              FIELD("auto_remove", s->auto_remove, json_true()) &&
              FIELD("start_within", s->start_within, json_integer(s->start_within)) &&
              FIELD("allocation", s->nallocations,
                    array_of(s->allocations, s->nallocations, token_at)) &&
              FIELD("allocation_pod", s->allocation_pod, json_string(s->allocation_pod));
#undef FIELD
    if (!ok) {
        json_decref(b);
        return NULL;
    }
    return b;
}

/* "/v1/containers/ID" plus suffix; false when it does not fit. */
static bool container_path(char *out, size_t len, const char *id, const char *suffix)
{
    int n = snprintf(out, len, "/v1/containers/%s%s", id, suffix);
    return n >= 0 && (size_t)n < len;
}

static long post_create(const struct cg_client_spec *s, json_t **ans, struct cgc_error *err)
{
    char terr[512] = "";
    json_t *body = cgc_create_body(s);
    if (!body) {
        snprintf(err->text, sizeof err->text, "out of memory");
        err->status = 0;
        err->local = true;
        return 0;
    }
    long st = cli_request("POST", "/v1/containers", body, ans, terr, sizeof terr);
    if (st != 201)
        cgc_error_set(err, st, *ans, terr);
    return st;
}

/* A 409 on create: the id is taken. A holder without processes is a leftover (a container whose
 * end its door missed: an OCI container stopped without its poststop hook, a step whose
 * slurmstepd the daemon did not see go) and is removed so that the new one can start; one
 * with processes is a real conflict. Returns true when the create should be tried again. */
static bool drop_idle_holder(const char *id, struct cgc_error *err)
{
    char path[192], terr[512];
    if (!container_path(path, sizeof path, id, ""))
        return false;
    json_t *cur = NULL;
    long st = cli_request("GET", path, NULL, &cur, terr, sizeof terr);
    json_int_t procs = json_integer_value(json_object_get(cur, "processes"));
    json_decref(cur);
    if (st != 200)
        return false; /* the 409's own words stand */
    if (procs != 0) {
        err->status = 409;
        err->local = true;
        snprintf(err->text, sizeof err->text,
                 "a container with this id is registered and has %lld running processes",
                 (long long)procs);
        return false;
    }
    json_t *del = NULL;
    st = cli_request("DELETE", path, NULL, &del, terr, sizeof terr);
    json_decref(del);
    return st == 200 || st == 404;
}

json_t *cgc_create(const struct cg_client_spec *spec, struct cgc_error *err)
{
    json_t *ans = NULL;
    long st = post_create(spec, &ans, err);
    if (st == 409 && spec->replace_idle && spec->id && drop_idle_holder(spec->id, err)) {
        json_decref(ans);
        ans = NULL;
        st = post_create(spec, &ans, err);
    }
    if (st != 201) {
        json_decref(ans);
        return NULL;
    }
    return ans;
}

/* One request on /v1/containers/{id}{suffix}; the status, with *err filled when it is not ok
 * or alt (an answer the caller takes as success too). */
static long on_container(const char *method, const char *id, const char *suffix, json_t *body,
                         json_t **ans, long ok, long alt, struct cgc_error *err)
{
    char path[192], terr[512] = "";
    if (!container_path(path, sizeof path, id, suffix)) {
        json_decref(body);
        err->status = 0;
        err->local = true;
        snprintf(err->text, sizeof err->text, "container id too long");
        return 0;
    }
    long st = cli_request(method, path, body, ans, terr, sizeof terr);
    if (st != ok && st != alt)
        cgc_error_set(err, st, *ans, terr);
    return st;
}

int cgc_start(const char *id, long pid, bool auto_remove, struct cgc_error *err)
{
    json_t *ans = NULL;
    long st = on_container("POST", id, "/start",
                           json_pack("{s:I,s:b}", "pid", (json_int_t)pid, "auto_remove",
                                     auto_remove),
                           &ans, 200, 404, err);
    json_decref(ans);
    return st == 200 ? 0 : st == 404 ? 1 : -1;
}

int cgc_remove(const char *id, struct cgc_error *err)
{
    json_t *ans = NULL;
    long st = on_container("DELETE", id, "", NULL, &ans, 200, 404, err);
    json_decref(ans);
    return st == 200 || st == 204 || st == 404 ? 0 : -1;
}

json_t *cgc_inspect(const char *id, struct cgc_error *err)
{
    json_t *ans = NULL;
    if (on_container("GET", id, "", NULL, &ans, 200, 200, err) == 200)
        return ans;
    json_decref(ans);
    return NULL;
}

static json_t *posted(const char *id, const char *suffix, json_t *body, struct cgc_error *err)
{
    json_t *ans = NULL;
    if (on_container("POST", id, suffix, body, &ans, 202, 202, err) == 202)
        return ans;
    json_decref(ans);
    return NULL;
}

json_t *cgc_pause(const char *id, struct cgc_error *err) { return posted(id, "/pause", NULL, err); }

json_t *cgc_resume(const char *id, struct cgc_error *err)
{
    return posted(id, "/resume", NULL, err);
}

json_t *cgc_move(const char *id, unsigned device, struct cgc_error *err)
{
    return posted(id, "/move", json_pack("{s:I}", "device", (json_int_t)device), err);
}

bool cgc_path_var(const char *name)
{
    return strcmp(name, "LD_PRELOAD") == 0 || strcmp(name, "LD_LIBRARY_PATH") == 0;
}

char *cgc_path_merge(const char *first, const char *old)
{
    size_t fl = strlen(first);
    bool keep = !old || !*old;
    /* Already first: the caller is inside a container of its own and passes it on. */
    bool already = !keep && strncmp(old, first, fl) == 0 && (old[fl] == '\0' || old[fl] == ':');
    const char *alone = keep ? first : already ? old : NULL;
    if (alone)
        return strdup(alone);
    size_t n = fl + strlen(old) + 2;
    char *out = malloc(n);
    if (out)
        snprintf(out, n, "%s:%s", first, old);
    return out;
}

int cgc_env_apply(json_t *env, const struct cgc_env_ops *ops, void *ctx, const char **failed)
{
    const char *k;
    json_t *v;
    json_object_foreach(env, k, v) {
        const char *s = json_string_value(v), *old = NULL;
        if (!s)
            continue;
        char *joined = NULL;
        int rc = CGC_ENV_OK;
        if (cgc_path_var(k)) {
            if (ops->get(ctx, k, &old) != 0)
                rc = CGC_ENV_UNREADABLE;
            else if (!(s = joined = cgc_path_merge(s, old)))
                rc = CGC_ENV_NOMEM;
        }
        if (rc == CGC_ENV_OK && ops->set(ctx, k, s) != 0)
            rc = CGC_ENV_UNSET;
        free(joined);
        if (rc != CGC_ENV_OK) {
            *failed = k;
            return rc;
        }
    }
    return CGC_ENV_OK;
}

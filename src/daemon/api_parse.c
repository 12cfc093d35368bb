/* api_parse.c — request bodies of the control API, validated where they enter: a JSON object,
 * only known fields, each of the right type and range. Anything else is refused with a
 * message that says what to send instead. */
#include "api_parse.h"
#include "names.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "size.h"

static int fail(char *err, size_t errlen, const char *msg)
{
    snprintf(err, errlen, "%s", msg);
    return -1;
}

static json_t *load_object(const char *body, size_t len, char *err, size_t errlen)
{
    json_error_t jerr;
    json_t *j = len ? json_loadb(body, len, JSON_REJECT_DUPLICATES, &jerr) : NULL;
    if (!j) {
        snprintf(err, errlen, "request body must be a JSON object%s%s", len ? ": " : "",
                 len ? jerr.text : "");
        return NULL;
    }
    if (!json_is_object(j)) {
        json_decref(j);
        fail(err, errlen, "request body must be a JSON object");
        return NULL;
    }
    return j;
}

static bool only_keys(json_t *obj, const char *const *allowed, const char **bad)
{
    const char *key;
    json_t *val;
    json_object_foreach(obj, key, val) {
        (void)val;
        bool ok = false;
        for (const char *const *a = allowed; *a; a++)
            if (strcmp(*a, key) == 0)
                ok = true;
        if (!ok) {
            *bad = key;
            return false;
        }
    }
    return true;
}

/* A size is a positive JSON integer (bytes) or a string such as "1.5GiB". */
static int json_size(json_t *v, uint64_t *out, char *err, size_t errlen)
{
    const char *why = NULL;
    if (json_is_integer(v)) {
        json_int_t n = json_integer_value(v);
        if (n <= 0)
            return fail(err, errlen, "gpu_memory must be positive");
        *out = (uint64_t)n;
        return 0;
    }
    if (!json_is_string(v))
        return fail(err, errlen, "gpu_memory must be bytes or a string such as \"1GiB\"");
    if (cg_parse_size(json_string_value(v), out, &why) != 0) {
        snprintf(err, errlen, "gpu_memory: %s", why);
        return -1;
    }
    if (*out == 0)
        return fail(err, errlen, "gpu_memory must be positive");
    return 0;
}

/* A compute share: a JSON integer 1..100 (not 30.0, not "30"), or null for no share. An absent
 * field leaves *has false. */
static int json_compute(json_t *v, bool *has, unsigned *pct, char *err, size_t errlen)
{
    if (!v)
        return 0;
    if (json_is_null(v)) {
        *has = true;
        *pct = 0;
        return 0;
    }
    if (!json_is_integer(v) || json_integer_value(v) < 1 ||
        json_integer_value(v) > (json_int_t)CG_COMPUTE_PCT_MAX)
        return fail(err, errlen, "gpu_compute must be a whole percentage from 1 to 100, or null "
                                 "for no compute limit");
    *has = true;
    *pct = (unsigned)json_integer_value(v);
    return 0;
}

/* "compute_mode": "hard" or "elastic". An absent field leaves *has false. */
static int json_mode(json_t *v, bool *has, cg_compute_mode *mode, char *err, size_t errlen)
{
    if (!v)
        return 0;
    if (!json_is_string(v) || !cg_compute_mode_parse(json_string_value(v), mode))
        return fail(err, errlen, "compute_mode must be \"hard\" or \"elastic\"");
    *has = true;
    return 0;
}

/* "priority": an integer 0..CG_PRIORITY_MAX. An absent field leaves *has false. */
static int json_priority(json_t *v, bool *has, unsigned *out, char *err, size_t errlen)
{
    *has = v != NULL;
    if (!v)
        return 0;
    if (!json_is_integer(v) || json_integer_value(v) < 0 ||
        json_integer_value(v) > (json_int_t)CG_PRIORITY_MAX)
        return fail(err, errlen, "priority must be an integer from 0 to 9 (higher goes first)");
    *out = (unsigned)json_integer_value(v);
    return 0;
}

bool api_valid_name(const char *s) { return name_valid(s); }

/* An optional key field: absent, or a valid key; copied into out. */
static int json_key(json_t *v, const char *field, char *out, size_t len, char *err, size_t errlen)
{
    if (!v)
        return 0;
    if (!json_is_string(v) || !cg_profile_key_valid(json_string_value(v))) {
        snprintf(err, errlen, "%s must be 1-255 printable characters without spaces, quotes or "
                              "backslashes", field);
        return -1;
    }
    snprintf(out, len, "%s", json_string_value(v));
    return 0;
}

bool api_valid_token(const char *s)
{
    size_t n = 0;
    for (; s[n]; n++)
        if (!((s[n] >= '0' && s[n] <= '9') || (s[n] >= 'a' && s[n] <= 'f')))
            return false;
    return n == API_ALLOCATION_TOKEN_LEN;
}

/* "start_within", "allocation" and "allocation_pod" (api_parse.h); j is the whole body. */
static int json_alloc_fields(json_t *j, struct create_request *out, char *err, size_t errlen)
{
    json_t *sw = json_object_get(j, "start_within"), *al = json_object_get(j, "allocation");
    json_t *pod = json_object_get(j, "allocation_pod");
    if (sw && (!json_is_integer(sw) || json_integer_value(sw) < 1 ||
               json_integer_value(sw) > API_START_WITHIN_MAX)) {
        snprintf(err, errlen, "start_within must be whole seconds from 1 to %d",
                 API_START_WITHIN_MAX);
        return -1;
    }
    out->start_within = sw ? (unsigned)json_integer_value(sw) : 0;
    if (!al) {
        if (pod)
            return fail(err, errlen, "allocation_pod goes with allocation");
        return 0;
    }
    static const char *const instead[] = {"gpu_memory", "gpu_compute", "compute_mode", "device",
                                          "devices", "gpus", "exclusive", "profile_limit", NULL};
    for (size_t i = 0; instead[i]; i++)
        if (json_object_get(j, instead[i])) {
            snprintf(err, errlen, "%s cannot be given with allocation: the allocation's record "
                                  "decides it", instead[i]);
            return -1;
        }
    size_t n = json_is_array(al) ? json_array_size(al) : json_is_string(al) ? 1 : 0;
    if (n < 1 || n > API_MAX_ALLOCATIONS) {
        snprintf(err, errlen, "allocation must be a token or an array of 1 to %d tokens",
                 API_MAX_ALLOCATIONS);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        json_t *t = json_is_array(al) ? json_array_get(al, i) : al;
        if (!json_is_string(t) || !api_valid_token(json_string_value(t))) {
            snprintf(err, errlen, "allocation tokens are %d lowercase hex digits",
                     API_ALLOCATION_TOKEN_LEN);
            return -1;
        }
        for (size_t k = 0; k < i; k++)
            if (strcmp(out->allocations[k], json_string_value(t)) == 0)
                return fail(err, errlen, "allocation names one token twice");
        snprintf(out->allocations[i], sizeof out->allocations[i], "%s", json_string_value(t));
    }
    out->nallocations = (unsigned)n;
    if (pod && (!json_is_string(pod) || !api_valid_name(json_string_value(pod))))
        return fail(err, errlen, "allocation_pod must be 1-64 characters of [A-Za-z0-9_.-], not "
                                 "starting with . or -");
    if (pod)
        snprintf(out->allocation_pod, sizeof out->allocation_pod, "%s", json_string_value(pod));
    return 0;
}

/* "gpus" and "devices" into out->gpus / out->devices (see api_parse.h). */
static int json_gpus(json_t *gpus, json_t *devs, json_t *device, unsigned ndevices,
                     struct create_request *out, char *err, size_t errlen)
{
    out->gpus = 1;
    if (gpus && (!json_is_integer(gpus) || json_integer_value(gpus) < 1 ||
                 json_integer_value(gpus) > (json_int_t)ndevices)) {
        snprintf(err, errlen, "gpus must be an integer from 1 to %u (this node's GPUs)", ndevices);
        return -1;
    }
    if (gpus)
        out->gpus = (unsigned)json_integer_value(gpus);
    if (!devs)
        return 0;
    if (device) {
        fail(err, errlen, "give device or devices, not both");
        return -1;
    }
    size_t n = json_is_array(devs) ? json_array_size(devs) : 0;
    if (n == 0 || n > ndevices || (gpus && n != out->gpus)) {
        snprintf(err, errlen, "devices must be an array of 1 to %u GPU indexes%s", ndevices,
                 gpus ? ", as many as gpus" : "");
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        json_t *v = json_array_get(devs, i);
        if (!json_is_integer(v) || json_integer_value(v) < 0 ||
            json_integer_value(v) >= (json_int_t)ndevices) {
            snprintf(err, errlen, "devices[%zu] must be a GPU index below %u", i, ndevices);
            return -1;
        }
        out->devices[i] = (unsigned)json_integer_value(v);
        for (size_t k = 0; k < i; k++)
            if (out->devices[k] == out->devices[i]) {
                snprintf(err, errlen, "devices names GPU %u twice", out->devices[i]);
                return -1;
            }
    }
    out->gpus = (unsigned)n;
    out->has_devices = true;
    return 0;
}

int api_parse_create(const char *body, size_t len, unsigned ndevices, struct create_request *out,
                     char *err, size_t errlen)
{
    json_t *j = load_object(body, len, err, errlen);
    if (!j)
        return -1;
    memset(out, 0, sizeof *out);
    out->device = -1;
    int rc = -1;
    static const char *const allowed[] = {"gpu_memory", "name", "id", "device", "auto_remove",
                                          "uid", "gid", "gpu_compute", "compute_mode",
                                          "priority", "swap", "tenant", "exclusive", "profile_limit",
                                          "image", "command", "gpus", "devices", "profile",
                                          "start_within", "allocation", "allocation_pod", NULL};
    const char *bad = NULL;
    json_t *prio = json_object_get(j, "priority"), *sw = json_object_get(j, "swap");
    bool has_prio = false;
    json_t *uid = json_object_get(j, "uid"), *gid = json_object_get(j, "gid");
    json_t *gm = json_object_get(j, "gpu_memory"), *name = json_object_get(j, "name");
    json_t *id = json_object_get(j, "id"), *dev = json_object_get(j, "device");
    json_t *ar = json_object_get(j, "auto_remove");
    json_t *gc = json_object_get(j, "gpu_compute"), *cm = json_object_get(j, "compute_mode");
    json_t *tn = json_object_get(j, "tenant");
    json_t *ex = json_object_get(j, "exclusive"), *pl = json_object_get(j, "profile_limit");
    json_t *pf = json_object_get(j, "profile");
    if (!only_keys(j, allowed, &bad)) {
        snprintf(err, errlen, "unknown field '%s' (allowed: gpu_memory, name, id, device, "
                              "auto_remove, uid, gid, gpu_compute, compute_mode, priority, swap, "
                              "tenant, exclusive, profile_limit, image, command, gpus, "
                              "devices, profile, start_within, allocation, allocation_pod)", bad);
    } else if (json_alloc_fields(j, out, err, errlen) != 0) {
        /* message set */
    } else if (json_gpus(json_object_get(j, "gpus"), json_object_get(j, "devices"), dev,
                         ndevices, out, err, errlen) != 0) {
        /* message set */
    } else if (gm && json_size(gm, &out->limit, err, errlen) != 0) {
        /* message set */
    } else if (ex && !json_is_boolean(ex)) {
        fail(err, errlen, "exclusive must be true or false");
    } else if (pl && !json_is_boolean(pl)) {
        fail(err, errlen, "profile_limit must be true or false");
    } else if (pf && !json_is_boolean(pf)) {
        fail(err, errlen, "profile must be true or false (false: the run is not recorded)");
    } else if (json_key(json_object_get(j, "image"), "image", out->image, sizeof out->image, err,
                        errlen) != 0 ||
               json_key(json_object_get(j, "command"), "command", out->command,
                        sizeof out->command, err, errlen) != 0) {
        /* message set */
    } else if (name && (!json_is_string(name) || !api_valid_name(json_string_value(name)))) {
        fail(err, errlen, "name must be 1-64 characters of [A-Za-z0-9_.-], not starting with . or -");
    } else if (id && (!json_is_string(id) || !api_valid_name(json_string_value(id)))) {
        fail(err, errlen, "id must be 1-64 characters of [A-Za-z0-9_.-], not starting with . or -");
    } else if (dev && (!json_is_integer(dev) || json_integer_value(dev) < 0 ||
                       json_integer_value(dev) >= (json_int_t)ndevices)) {
        snprintf(err, errlen, "device must be a GPU index below %u", ndevices);
    } else if (ar && !json_is_boolean(ar)) {
        fail(err, errlen, "auto_remove must be true or false");
    } else if (!uid != !gid) {
        fail(err, errlen, "uid and gid go together");
    } else if (uid && (!json_is_integer(uid) || !json_is_integer(gid) ||
                       json_integer_value(uid) < 0 || json_integer_value(uid) > 0xfffffffe ||
                       json_integer_value(gid) < 0 || json_integer_value(gid) > 0xfffffffe)) {
        fail(err, errlen, "uid and gid must be integers from 0 to 4294967294");
    } else if (json_compute(gc, &out->has_compute, &out->compute_pct, err, errlen) != 0 ||
               json_mode(cm, &out->has_mode, &out->compute_mode, err, errlen) != 0) {
        /* message set */
    } else if (out->has_mode && out->has_compute && out->compute_pct == 0) {
        fail(err, errlen, "compute_mode needs a compute share: gpu_compute is null");
    } else if (json_priority(prio, &has_prio, &out->priority, err, errlen) != 0) {
        /* message set */
    } else if (sw && !json_is_boolean(sw)) {
        fail(err, errlen, "swap must be true or false (false: never swapped out)");
    } else if (tn && (!json_is_string(tn) || !api_valid_tenant(json_string_value(tn)))) {
        fail(err, errlen, "tenant must be 1-32 characters of [A-Za-z0-9_.-], not starting with "
                          ". or -");
    } else {
        out->no_swap = sw && json_is_false(sw);
        if (tn)
            snprintf(out->tenant, sizeof out->tenant, "%s", json_string_value(tn));
        if (uid) {
            out->has_owner = true;
            out->uid = (uint32_t)json_integer_value(uid);
            out->gid = (uint32_t)json_integer_value(gid);
        }
        if (name)
            snprintf(out->name, sizeof out->name, "%s", json_string_value(name));
        if (id)
            snprintf(out->id, sizeof out->id, "%s", json_string_value(id));
        if (dev)
            out->device = (int)json_integer_value(dev);
        out->auto_remove = ar && json_is_true(ar);
        out->has_limit = gm != NULL;
        out->exclusive = ex && json_is_true(ex);
        out->profile_limit = pl && json_is_true(pl);
        out->no_profile = pf && json_is_false(pf);
        rc = 0;
    }
    json_decref(j);
    return rc;
}

int api_parse_update(const char *body, size_t len, struct update_request *out, char *err,
                     size_t errlen)
{
    json_t *j = load_object(body, len, err, errlen);
    if (!j)
        return -1;
    memset(out, 0, sizeof *out);
    static const char *const allowed[] = {"gpu_memory", "gpu_compute", "compute_mode", "priority",
                                          NULL};
    const char *bad = NULL;
    json_t *gm = json_object_get(j, "gpu_memory"), *gc = json_object_get(j, "gpu_compute");
    json_t *cm = json_object_get(j, "compute_mode"), *prio = json_object_get(j, "priority");
    int rc = -1;
    if (!only_keys(j, allowed, &bad)) {
        snprintf(err, errlen, "unknown field '%s' (send {\"gpu_memory\": SIZE} and/or "
                              "{\"gpu_compute\": 1-100 or null, \"compute_mode\": MODE} and/or "
                              "{\"priority\": 0-9})", bad);
    } else if (!gm && !gc && !cm && !prio) {
        fail(err, errlen, "send {\"gpu_memory\": SIZE} and/or {\"gpu_compute\": 1-100 or null, "
                          "\"compute_mode\": \"hard\" or \"elastic\"} and/or {\"priority\": 0-9}");
    } else if ((gm && json_size(gm, &out->limit, err, errlen) != 0) ||
               json_compute(gc, &out->has_compute, &out->compute_pct, err, errlen) != 0 ||
               json_mode(cm, &out->has_mode, &out->compute_mode, err, errlen) != 0 ||
               json_priority(prio, &out->has_priority, &out->priority, err, errlen) != 0) {
        /* message set */
    } else if (out->has_mode && out->has_compute && out->compute_pct == 0) {
        fail(err, errlen, "compute_mode needs a compute share: gpu_compute is null");
    } else {
        out->has_limit = gm != NULL;
        rc = 0;
    }
    json_decref(j);
    return rc;
}

int api_parse_start(const char *body, size_t len, struct start_request *out, char *err,
                    size_t errlen)
{
    json_t *j = load_object(body, len, err, errlen);
    if (!j)
        return -1;
    memset(out, 0, sizeof *out);
    static const char *const allowed[] = {"pid", "auto_remove", NULL};
    const char *bad = NULL;
    json_t *p = json_object_get(j, "pid"), *ar = json_object_get(j, "auto_remove");
    int rc = -1;
    if (!only_keys(j, allowed, &bad))
        snprintf(err, errlen, "unknown field '%s' (send {\"pid\": N, \"auto_remove\": BOOL})", bad);
    else if (!p || !json_is_integer(p) || json_integer_value(p) <= 0 ||
             json_integer_value(p) > 0x3fffffff)
        fail(err, errlen, "pid must be a positive process id (send {\"pid\": N})");
    else if (ar && !json_is_boolean(ar))
        fail(err, errlen, "auto_remove must be true or false");
    else {
        out->pid = (int)json_integer_value(p);
        out->auto_remove = ar && json_is_true(ar);
        rc = 0;
    }
    json_decref(j);
    return rc;
}

int api_parse_move(const char *body, size_t len, unsigned ndev, int *device, char *err,
                   size_t errlen)
{
    json_t *j = load_object(body, len, err, errlen);
    if (!j)
        return -1;
    static const char *const allowed[] = {"device", NULL};
    const char *bad = NULL;
    json_t *v = json_object_get(j, "device");
    int rc = -1;
    if (!only_keys(j, allowed, &bad))
        snprintf(err, errlen, "unknown field '%s' (allowed: device)", bad);
    else if (!v || !json_is_integer(v))
        fail(err, errlen, "send {\"device\": N}, N a device index");
    else if (json_integer_value(v) < 0 || json_integer_value(v) >= (json_int_t)ndev)
        snprintf(err, errlen, "no device %lld (this node has %u)",
                 (long long)json_integer_value(v), ndev);
    else {
        *device = (int)json_integer_value(v);
        rc = 0;
    }
    json_decref(j);
    return rc;
}

int api_parse_policy(const char *body, size_t len, struct policy_request *out, char *err,
                     size_t errlen)
{
    json_t *j = load_object(body, len, err, errlen);
    if (!j)
        return -1;
    memset(out, 0, sizeof *out);
    static const char *const allowed[] = {"resume", "placement", NULL};
    const char *bad = NULL;
    json_t *r = json_object_get(j, "resume"), *p = json_object_get(j, "placement");
    int rc = -1;
    if (!only_keys(j, allowed, &bad)) {
        snprintf(err, errlen, "unknown field '%s' (allowed: resume, placement)", bad);
    } else if (!r && !p) {
        fail(err, errlen, "send {\"resume\": NAME} and/or {\"placement\": NAME}");
    } else if (r && (!json_is_string(r) || !cg_resume_policy_parse(json_string_value(r), &out->resume))) {
        snprintf(err, errlen, "unknown resume policy (fifo, best-fit, recent, random, %s)",
                 cg_resume_policy_name(CG_RESUME_AGING_FIT));
    } else if (p && (!json_is_string(p) ||
                     !cg_placement_policy_parse(json_string_value(p), &out->placement))) {
        fail(err, errlen, "unknown placement policy (first-fit, least-loaded, binpack, "
                          "load-balance, standalone, interference)");
    } else {
        out->has_resume = r != NULL;
        out->has_placement = p != NULL;
        rc = 0;
    }
    json_decref(j);
    return rc;
}

bool api_valid_tenant(const char *s) { return name_valid_tenant(s); }

int api_parse_tenant(const char *body, size_t len, struct tenant_request *out, char *err,
                     size_t errlen)
{
    json_t *j = load_object(body, len, err, errlen);
    if (!j)
        return -1;
    memset(out, 0, sizeof *out);
    static const char *const allowed[] = {"weight", "max_priority", "exclusive", NULL};
    const char *bad = NULL;
    json_t *w = json_object_get(j, "weight");
    json_t *p = json_object_get(j, "max_priority");
    json_t *x = json_object_get(j, "exclusive");
    int rc = -1;
    if (!only_keys(j, allowed, &bad)) {
        snprintf(err, errlen, "unknown field '%s' (allowed: weight, max_priority, exclusive)",
                 bad);
    } else if (!w && !p && !x) {
        fail(err, errlen, "send any of {\"weight\": W (1-1000000), \"max_priority\": 0-9 or "
                          "null, \"exclusive\": true|false}");
    } else if (w && (!json_is_integer(w) || json_integer_value(w) < 1 ||
                     json_integer_value(w) > CG_TENANT_WEIGHT_MAX)) {
        snprintf(err, errlen, "weight must be a whole number from 1 to %d", CG_TENANT_WEIGHT_MAX);
    } else if (p && !json_is_null(p) &&
               (!json_is_integer(p) || json_integer_value(p) < 0 ||
                json_integer_value(p) > CG_PRIORITY_MAX)) {
        snprintf(err, errlen, "max_priority must be a whole number from 0 to %d, or null (the "
                              "node's user-max-priority)", CG_PRIORITY_MAX);
    } else if (x && !json_is_boolean(x)) {
        fail(err, errlen, "exclusive must be true or false");
    } else {
        out->has_weight = w != NULL;
        out->weight = w ? (unsigned)json_integer_value(w) : 0;
        out->has_max_priority = p != NULL;
        out->max_priority = p && !json_is_null(p) ? (int)json_integer_value(p) : -1;
        out->has_exclusive = x != NULL;
        out->exclusive = x && json_is_true(x);
        rc = 0;
    }
    json_decref(j);
    return rc;
}

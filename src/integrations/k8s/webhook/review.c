/* review.c — the AdmissionReview decision (review.h). The review is untrusted input: its shape is
 * checked field by field, and the pod is only read, never trusted to be well-formed beyond what
 * is checked here. */
#include "review.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_UID 128

char *cgw_base64(const unsigned char *data, size_t n)
{
    static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char *out = malloc((n + 2) / 3 * 4 + 1), *p = out;
    if (!out)
        return NULL;
    for (size_t i = 0; i < n; i += 3) {
        unsigned v = (unsigned)data[i] << 16 | (i + 1 < n ? (unsigned)data[i + 1] << 8 : 0) |
                     (i + 2 < n ? data[i + 2] : 0);
        *p++ = abc[v >> 18 & 63];
        *p++ = abc[v >> 12 & 63];
        *p++ = i + 1 < n ? abc[v >> 6 & 63] : '=';
        *p++ = i + 2 < n ? abc[v & 63] : '=';
    }
    *p = '\0';
    return out;
}

/* Whether a ResourceRequirements object names a convgpu.io/ resource. -1: malformed. */
static int asks_in(json_t *resources)
{
    if (!resources)
        return 0;
    if (!json_is_object(resources))
        return -1;
    int found = 0;
    for (const char *const *part = (const char *const[]){"limits", "requests", NULL}; *part;
         part++) {
        json_t *m = json_object_get(resources, *part);
        if (!m)
            continue;
        if (!json_is_object(m))
            return -1;
        const char *key;
        json_t *v;
        json_object_foreach(m, key, v) {
            if (strncmp(key, CGW_RESOURCE_PREFIX, strlen(CGW_RESOURCE_PREFIX)) == 0)
                found = 1;
        }
    }
    return found;
}

/* Whether any container of the pod spec asks for a convgpu.io/ resource. -1: malformed. */
static int pod_asks(json_t *spec)
{
    int found = 0;
    for (const char *const *list =
             (const char *const[]){"containers", "initContainers", "ephemeralContainers", NULL};
         *list; list++) {
        json_t *arr = json_object_get(spec, *list);
        if (!arr)
            continue;
        if (!json_is_array(arr))
            return -1;
        size_t i;
        json_t *c;
        json_array_foreach(arr, i, c) {
            if (!json_is_object(c))
                return -1;
            int a = asks_in(json_object_get(c, "resources"));
            if (a < 0)
                return -1;
            found = found || a;
        }
    }
    return found;
}

static json_t *patch_for(json_t *spec, const struct cgw_config *cfg)
{
    json_t *ops = json_array();
    const char *rc = json_string_value(json_object_get(spec, "runtimeClassName"));
    if (!rc || strcmp(rc, cfg->runtime_class) != 0)
        json_array_append_new(ops, json_pack("{s:s,s:s,s:s}", "op", "add", "path",
                                             "/spec/runtimeClassName", "value",
                                             cfg->runtime_class));
    const char *sched = json_string_value(json_object_get(spec, "schedulerName"));
    if (cfg->scheduler_name && cfg->scheduler_name[0] &&
        (!sched || strcmp(sched, "default-scheduler") == 0))
        json_array_append_new(ops, json_pack("{s:s,s:s,s:s}", "op", "add", "path",
                                             "/spec/schedulerName", "value", cfg->scheduler_name));
    return ops;
}

int cgw_review(const char *body, size_t len, const struct cgw_config *cfg, char **answer,
               int *patched, char *err, size_t errlen)
{
    *answer = NULL;
    if (patched)
        *patched = 0;
    json_error_t je;
    json_t *review = json_loadb(body, len, JSON_REJECT_DUPLICATES, &je);
    if (!json_is_object(review)) {
        snprintf(err, errlen, "not a JSON object%s%s", review ? "" : ": ", review ? "" : je.text);
        json_decref(review);
        return -1;
    }
    const char *api = json_string_value(json_object_get(review, "apiVersion"));
    const char *kind = json_string_value(json_object_get(review, "kind"));
    json_t *req = json_object_get(review, "request");
    const char *uid = json_string_value(json_object_get(req, "uid"));
    int rc = -1;
    json_t *ops = NULL, *resp = NULL;
    if (!api || strcmp(api, "admission.k8s.io/v1") != 0 || !kind ||
        strcmp(kind, "AdmissionReview") != 0) {
        snprintf(err, errlen, "not an AdmissionReview of admission.k8s.io/v1");
        goto out;
    }
    if (!json_is_object(req) || !uid || !*uid || strlen(uid) > MAX_UID) {
        snprintf(err, errlen, "the review has no request with a uid");
        goto out;
    }
    json_t *rkind = json_object_get(req, "kind");
    const char *group = json_string_value(json_object_get(rkind, "group"));
    const char *k = json_string_value(json_object_get(rkind, "kind"));
    const char *op = json_string_value(json_object_get(req, "operation"));
    json_t *obj = json_object_get(req, "object");
    bool pod_create = group && !*group && k && strcmp(k, "Pod") == 0 && op &&
                      strcmp(op, "CREATE") == 0;
    if (pod_create) {
        json_t *spec = json_object_get(obj, "spec");
        int asks = json_is_object(spec) ? pod_asks(spec) : -1;
        if (asks < 0) {
            snprintf(err, errlen, "the pod in the review has no readable spec");
            goto out;
        }
        if (asks) {
            ops = patch_for(spec, cfg);
            if (!ops) {
                snprintf(err, errlen, "out of memory");
                goto out;
            }
        }
    }
    resp = json_pack("{s:s,s:s,s:{s:s,s:b}}", "apiVersion", "admission.k8s.io/v1", "kind",
                     "AdmissionReview", "response", "uid", uid, "allowed", 1);
    if (resp && ops && json_array_size(ops) > 0) {
        char *text = json_dumps(ops, JSON_COMPACT);
        char *b64 = text ? cgw_base64((const unsigned char *)text, strlen(text)) : NULL;
        json_t *r = json_object_get(resp, "response");
        if (b64) {
            json_object_set_new(r, "patchType", json_string("JSONPatch"));
            json_object_set_new(r, "patch", json_string(b64));
            if (patched)
                *patched = 1;
        }
        free(text);
        if (!b64) {
            free(b64);
            snprintf(err, errlen, "out of memory");
            goto out;
        }
        free(b64);
    }
    *answer = resp ? json_dumps(resp, JSON_COMPACT) : NULL;
    if (!*answer)
        snprintf(err, errlen, "out of memory");
    else
        rc = 0;
out:
    json_decref(ops);
    json_decref(resp);
    json_decref(review);
    return rc;
}

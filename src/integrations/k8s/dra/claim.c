/* claim.c — a ResourceClaim's allocation (resource.k8s.io/v1) as the driver needs it, and the
 * quantities in it (dra.h). No I/O: the API server's answer is untrusted input to this file
 * (fuzz/fuzz_dra_claim.c): every field is checked for type and range before it is used, and
 * anything unexpected is refused with a sentence naming the field. */
#include <string.h>
#include <stdio.h>
#include <stdlib.h>

#include "dra.h"

bool dra_uid_valid(const char *uid)
{
    size_t n = uid ? strlen(uid) : 0;
    if (n == 0 || n > DRA_UID_MAX)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = uid[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-'))
            return false;
    }
    return uid[0] != '-';
}

/* The suffixes of a quantity: binary (Ki..Ei), decimal (k..E) and milli (m). */
static int suffix_of(const char *s, unsigned __int128 *num, unsigned __int128 *den)
{
    static const struct {
        const char *name;
        unsigned shift; /* binary */
        unsigned exp10; /* decimal */
    } table[] = {
        {"Ki", 10, 0}, {"Mi", 20, 0}, {"Gi", 30, 0}, {"Ti", 40, 0}, {"Pi", 50, 0}, {"Ei", 60, 0},
        {"k", 0, 3},   {"M", 0, 6},   {"G", 0, 9},   {"T", 0, 12},  {"P", 0, 15},  {"E", 0, 18},
    };
    *num = 1;
    *den = 1;
    if (!*s)
        return 0;
    if (strcmp(s, "m") == 0) {
        *den = 1000;
        return 0;
    }
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (strcmp(s, table[i].name) == 0) {
            if (table[i].shift)
                *num = (unsigned __int128)1 << table[i].shift;
            for (unsigned k = 0; k < table[i].exp10; k++)
                *num *= 10;
            return 0;
        }
    /* e<N> / E<N> exponents: "1e3". (A bare "E" is exa, taken above.) */
    if ((s[0] == 'e' || s[0] == 'E') && s[1]) {
        unsigned e = 0;
        for (const char *p = s + 1; *p; p++) {
            if (*p < '0' || *p > '9' || e > 18)
                return -1;
            e = e * 10 + (unsigned)(*p - '0');
        }
        if (e > 18)
            return -1;
        for (unsigned k = 0; k < e; k++)
            *num *= 10;
        return 0;
    }
    return -1;
}

int dra_quantity_parse(const char *text, uint64_t *out)
{
    if (!text)
        return -1;
    const char *p = text;
    if (*p == '+')
        p++;
    unsigned __int128 whole = 0, frac = 0, frac_den = 1;
    size_t digits = 0;
    for (; *p >= '0' && *p <= '9'; p++, digits++) {
        whole = whole * 10 + (unsigned)(*p - '0');
        if (whole > ((unsigned __int128)1 << 64))
            return -1;
    }
    bool tail = false; /* a nonzero digit past the 18th decimal: rounds up */
    if (*p == '.') {
        p++;
        for (size_t k = 0; *p >= '0' && *p <= '9'; p++, k++, digits++)
            if (k < 18) {
                frac = frac * 10 + (unsigned)(*p - '0');
                frac_den *= 10;
            } else if (*p != '0') {
                tail = true;
            }
    }
    if (digits == 0)
        return -1;
    unsigned __int128 num, den;
    if (suffix_of(p, &num, &den) != 0)
        return -1;
    /* value = (whole + frac / frac_den) * num / den, rounded up */
    unsigned __int128 top = whole * frac_den + frac; /* < 2^65 * 10^18: fits */
    if (num > 1 && top > (~(unsigned __int128)0) / num)
        return -1;
    top *= num;
    unsigned __int128 bottom = frac_den * den;
    unsigned __int128 v = top / bottom + (top % bottom != 0 || tail);
    if (v > UINT64_MAX)
        return -1;
    *out = (uint64_t)v;
    return 0;
}

/* "gpu-<index>" or "gpu-<index>-part-<n>": the GPU index and the partition (-1 for none). */
static int device_name_parse(const char *s, unsigned *gpu, int *part)
{
    if (strncmp(s, "gpu-", 4) != 0)
        return -1;
    const char *p = s + 4;
    unsigned long v = 0;
    size_t d = 0;
    for (; *p >= '0' && *p <= '9' && d < 4; p++, d++)
        v = v * 10 + (unsigned long)(*p - '0');
    if (d == 0 || (d > 1 && s[4] == '0') || v >= DRA_MAX_GPUS)
        return -1;
    *gpu = (unsigned)v;
    *part = -1;
    if (!*p)
        return 0;
    if (strncmp(p, "-part-", 6) != 0)
        return -1;
    p += 6;
    v = 0;
    d = 0;
    for (; *p >= '0' && *p <= '9' && d < 4; p++, d++)
        v = v * 10 + (unsigned long)(*p - '0');
    if (d == 0 || *p || (d > 1 && p[-(long)d] == '0'))
        return -1;
    *part = (int)v;
    return 0;
}

/* A string field of o that must be present and fit. */
static const char *string_field(json_t *o, const char *key, size_t max, const char *where,
                                char *err, size_t errlen)
{
    json_t *v = json_object_get(o, key);
    const char *s = json_string_value(v);
    if (!s || !*s || strlen(s) >= max) {
        snprintf(err, errlen, "%s.%s is %s", where, key,
                 !v ? "missing" : !s ? "not a string" : !*s ? "empty" : "too long");
        return NULL;
    }
    return s;
}

/* consumedCapacity: {"memory": "2Gi", "compute": "30"}; other capacities are not ours. */
static int capacity_decode(json_t *cc, struct dra_result *r, size_t i, char *err, size_t errlen)
{
    if (!cc)
        return 0;
    if (!json_is_object(cc)) {
        snprintf(err, errlen, "status.allocation.devices.results[%zu].consumedCapacity is not "
                              "an object", i);
        return -1;
    }
    const char *key;
    json_t *v;
    json_object_foreach(cc, key, v) {
        uint64_t q;
        const char *s = json_string_value(v);
        bool mem = strcmp(key, "memory") == 0, comp = strcmp(key, "compute") == 0;
        if (!mem && !comp)
            continue;
        if (!s || dra_quantity_parse(s, &q) != 0) {
            snprintf(err, errlen, "status.allocation.devices.results[%zu].consumedCapacity.%s "
                                  "is not a quantity", i, key);
            return -1;
        }
        if (mem) {
            r->memory = q;
            r->has_memory = true;
        } else {
            if (q > 100) {
                snprintf(err, errlen, "status.allocation.devices.results[%zu].consumedCapacity."
                                      "compute is %llu; compute is 1 to 100", i,
                         (unsigned long long)q);
                return -1;
            }
            r->compute = (unsigned)q;
            r->has_compute = true;
        }
    }
    return 0;
}

/* status.reservedFor: [{"resource": "pods", "name": ..., "uid": ...}, ...]; consumers of another
 * resource or group are not pods and are skipped. */
static int reserved_decode(json_t *list, struct dra_claim *out, char *err, size_t errlen)
{
    if (!list || json_is_null(list))
        return 0;
    if (!json_is_array(list)) {
        snprintf(err, errlen, "status.reservedFor is not an array");
        return -1;
    }
    size_t i;
    json_t *r;
    json_array_foreach(list, i, r) {
        char where[48];
        snprintf(where, sizeof where, "status.reservedFor[%zu]", i);
        if (!json_is_object(r)) {
            snprintf(err, errlen, "%s is not an object", where);
            return -1;
        }
        const char *resource = string_field(r, "resource", 254, where, err, errlen);
        const char *rname = resource ? string_field(r, "name", 254, where, err, errlen) : NULL;
        const char *ruid = rname ? string_field(r, "uid", DRA_UID_MAX + 1, where, err, errlen)
                                 : NULL;
        if (!ruid)
            return -1;
        const char *group = json_string_value(json_object_get(r, "apiGroup"));
        if (strcmp(resource, "pods") != 0 || (group && *group))
            continue;
        if (!dra_uid_valid(ruid)) {
            snprintf(err, errlen, "%s.uid is not a UID", where);
            return -1;
        }
        for (const char *c = rname; *c; c++)
            if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '-' ||
                  *c == '.')) {
                snprintf(err, errlen, "%s.name is not a pod's name", where);
                return -1;
            }
        if (out->npods == DRA_MAX_PODS) {
            out->pods_truncated = true;
            continue;
        }
        snprintf(out->pods[out->npods].name, sizeof out->pods[0].name, "%s", rname);
        snprintf(out->pods[out->npods].uid, sizeof out->pods[0].uid, "%s", ruid);
        out->npods++;
    }
    return 0;
}

int dra_claim_decode(json_t *claim, const char *want_uid, const char *pool, struct dra_claim *out,
                     char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (!json_is_object(claim)) {
        snprintf(err, errlen, "the ResourceClaim is not a JSON object");
        return -1;
    }
    const char *kind = json_string_value(json_object_get(claim, "kind"));
    const char *api = json_string_value(json_object_get(claim, "apiVersion"));
    if (!kind || strcmp(kind, "ResourceClaim") != 0 || !api || strcmp(api, DRA_API_GROUP) != 0) {
        snprintf(err, errlen, "the object is not a ResourceClaim of %s", DRA_API_GROUP);
        return -1;
    }
    json_t *meta = json_object_get(claim, "metadata");
    const char *uid = string_field(meta, "uid", sizeof out->uid, "metadata", err, errlen);
    const char *ns = uid ? string_field(meta, "namespace", sizeof out->namespace_, "metadata",
                                        err, errlen) : NULL;
    const char *name = ns ? string_field(meta, "name", sizeof out->name, "metadata", err, errlen)
                          : NULL;
    if (!name)
        return -1;
    if (!dra_uid_valid(uid) || (want_uid && strcmp(uid, want_uid) != 0)) {
        snprintf(err, errlen, "the ResourceClaim %s/%s has UID %.64s, not %.64s (deleted and "
                              "created again?)", ns, name, uid, want_uid ? want_uid : "a valid one");
        return -1;
    }
    snprintf(out->uid, sizeof out->uid, "%s", uid);
    snprintf(out->namespace_, sizeof out->namespace_, "%s", ns);
    snprintf(out->name, sizeof out->name, "%s", name);
    json_t *results = json_object_get(
        json_object_get(json_object_get(json_object_get(claim, "status"), "allocation"),
                        "devices"), "results");
    if (!json_is_array(results)) {
        snprintf(err, errlen, "the ResourceClaim %s/%s is not allocated (no "
                              "status.allocation.devices.results)", ns, name);
        return -1;
    }
    size_t i;
    json_t *r;
    json_array_foreach(results, i, r) {
        char where[64];
        snprintf(where, sizeof where, "status.allocation.devices.results[%zu]", i);
        if (!json_is_object(r)) {
            snprintf(err, errlen, "%s is not an object", where);
            return -1;
        }
        const char *driver = string_field(r, "driver", 254, where, err, errlen);
        const char *rpool = driver ? string_field(r, "pool", 254, where, err, errlen) : NULL;
        const char *device = rpool ? string_field(r, "device", 64, where, err, errlen) : NULL;
        const char *request = device ? string_field(r, "request", 128, where, err, errlen) : NULL;
        if (!request)
            return -1;
        if (strcmp(driver, DRA_DRIVER) != 0 || (pool && strcmp(rpool, pool) != 0))
            continue; /* another driver's device, or another node's */
        if (out->nresults == DRA_MAX_RESULTS) {
            snprintf(err, errlen, "more than %d devices of %s in one claim", DRA_MAX_RESULTS,
                     DRA_DRIVER);
            return -1;
        }
        struct dra_result *res = &out->results[out->nresults];
        if (device_name_parse(device, &res->gpu, &res->partition) != 0) {
            snprintf(err, errlen, "%s.device \"%s\" is not one of %s's devices (gpu-<index>, "
                                  "gpu-<index>-part-<n>)", where, device, DRA_DRIVER);
            return -1;
        }
        snprintf(res->request, sizeof res->request, "%s", request);
        snprintf(res->device, sizeof res->device, "%s", device);
        if (capacity_decode(json_object_get(r, "consumedCapacity"), res, i, err, errlen) != 0)
            return -1;
        out->nresults++;
    }
    if (reserved_decode(json_object_get(json_object_get(claim, "status"), "reservedFor"), out,
                        err, errlen) != 0)
        return -1;
    if (out->nresults == 0) {
        snprintf(err, errlen, "the ResourceClaim %s/%s holds no device of %s in pool %s", ns, name,
                 DRA_DRIVER, pool ? pool : "(any)");
        return -1;
    }
    return 0;
}

int dra_claim_decode_text(const char *text, size_t len, const char *want_uid, const char *pool,
                          struct dra_claim *out, char *err, size_t errlen)
{
    json_error_t je;
    json_t *o = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    if (!o) {
        snprintf(err, errlen, "the ResourceClaim is not JSON: %s", je.text);
        return -1;
    }
    int rc = dra_claim_decode(o, want_uid, pool, out, err, errlen);
    json_decref(o);
    return rc;
}

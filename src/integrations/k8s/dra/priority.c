/* priority.c — a pod's priority as convgpu sees it (dra.h). The value comes from the pod's
 * spec.priority, which the API server's Priority admission plugin fills from the PriorityClass
 * the cluster's administrators made (a pod's author names a class; a value the author writes
 * is refused at admission), and the operator's --priority-map turns it into a convgpu priority
 * (0-9). Never from an annotation or an environment variable: those the pod's author writes.
 *
 * No I/O: the map is the driver's command line, the pod is the API server's answer (untrusted
 * input, fuzz/fuzz_dra_claim.c): every field is checked for type and range before it is used.
 *
 * Invariants: a map's rows are sorted by value, highest first, with no two alike, every
 * priority 0-9, and priorities never rise as values fall; a refused map is empty. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dra.h"

#define POD_PRIORITY_MIN (-2147483648LL) /* spec.priority is an int32 */
#define POD_PRIORITY_MAX 2147483647LL
#define CONVGPU_PRIORITY_MAX 9u

/* A whole number in [lo, hi], all of s. */
static int whole(const char *s, size_t len, long long lo, long long hi, long long *out)
{
    char buf[32];
    if (len == 0 || len >= sizeof buf)
        return -1;
    memcpy(buf, s, len);
    buf[len] = '\0';
    const char *p = buf[0] == '-' || buf[0] == '+' ? buf + 1 : buf;
    if (*p < '0' || *p > '9')
        return -1;
    char *end;
    errno = 0;
    long long v = strtoll(buf, &end, 10);
    if (errno || *end || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

int dra_priority_map_parse(const char *text, struct dra_priority_map *out, char *err,
                           size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (!text || !*text) {
        snprintf(err, errlen, "--priority-map is empty: give VALUE:PRIORITY[,...] "
                              "(e.g. 1000000000:9,1000:5,0:0)");
        return -1;
    }
    struct dra_priority_map m = {0};
    const char *p = text;
    for (size_t row = 1;; row++) {
        const char *comma = strchr(p, ','), *end = comma ? comma : p + strlen(p);
        const char *colon = memchr(p, ':', (size_t)(end - p));
        long long value, prio;
        if (!colon) {
            snprintf(err, errlen, "--priority-map row %zu \"%.*s\": give VALUE:PRIORITY", row,
                     (int)(end - p > 40 ? 40 : end - p), p);
            return -1;
        }
        if (whole(p, (size_t)(colon - p), POD_PRIORITY_MIN, POD_PRIORITY_MAX, &value) != 0) {
            snprintf(err, errlen, "--priority-map row %zu: \"%.*s\" is not a PriorityClass value "
                                  "(a whole number from -2147483648 to 2147483647)", row,
                     (int)(colon - p > 40 ? 40 : colon - p), p);
            return -1;
        }
        if (whole(colon + 1, (size_t)(end - colon - 1), 0, CONVGPU_PRIORITY_MAX, &prio) != 0) {
            snprintf(err, errlen, "--priority-map row %zu: \"%.*s\" is not a convgpu priority "
                                  "(a whole number from 0 to 9)", row,
                     (int)(end - colon - 1 > 40 ? 40 : end - colon - 1), colon + 1);
            return -1;
        }
        if (m.n == DRA_PRIORITY_ROWS) {
            snprintf(err, errlen, "--priority-map has more than %d rows", DRA_PRIORITY_ROWS);
            return -1;
        }
        /* Insert sorted, highest value first. */
        size_t i = 0;
        while (i < m.n && m.rows[i].at_least > value)
            i++;
        if (i < m.n && m.rows[i].at_least == value) {
            snprintf(err, errlen, "--priority-map names the value %lld twice", value);
            return -1;
        }
        memmove(&m.rows[i + 1], &m.rows[i], (m.n - i) * sizeof m.rows[0]);
        m.rows[i].at_least = value;
        m.rows[i].priority = (unsigned)prio;
        m.n++;
        if (!comma)
            break;
        p = comma + 1;
    }
    for (size_t i = 1; i < m.n; i++)
        if (m.rows[i].priority > m.rows[i - 1].priority) {
            snprintf(err, errlen, "--priority-map gives the value %lld priority %u but the higher "
                                  "value %lld only %u: a more important PriorityClass may not get "
                                  "a lower convgpu priority",
                     (long long)m.rows[i].at_least, m.rows[i].priority,
                     (long long)m.rows[i - 1].at_least, m.rows[i - 1].priority);
            return -1;
        }
    *out = m;
    return 0;
}

unsigned dra_priority_of(const struct dra_priority_map *m, int64_t value)
{
    for (size_t i = 0; i < m->n; i++)
        if (value >= m->rows[i].at_least)
            return m->rows[i].priority;
    return 0;
}

int dra_pod_priority(json_t *pod, const char *ns, const char *name, const char *uid,
                     int64_t *priority, char *err, size_t errlen)
{
    *priority = 0;
    const char *kind = json_string_value(json_object_get(pod, "kind"));
    const char *api = json_string_value(json_object_get(pod, "apiVersion"));
    if (!json_is_object(pod) || !kind || strcmp(kind, "Pod") != 0 || !api ||
        strcmp(api, "v1") != 0) {
        snprintf(err, errlen, "the object is not a Pod of v1");
        return -1;
    }
    json_t *meta = json_object_get(pod, "metadata");
    const char *pns = json_string_value(json_object_get(meta, "namespace"));
    const char *pname = json_string_value(json_object_get(meta, "name"));
    const char *puid = json_string_value(json_object_get(meta, "uid"));
    if (!pns || !pname || !puid || strcmp(pns, ns) != 0 || strcmp(pname, name) != 0) {
        snprintf(err, errlen, "the API server answered another object than pod %.64s/%.64s", ns,
                 name);
        return -1;
    }
    if (strcmp(puid, uid) != 0) {
        snprintf(err, errlen, "pod %.64s/%.64s has UID %.64s, not the claim's consumer %.64s "
                              "(deleted and created again?)", ns, name, puid, uid);
        return -1;
    }
    json_t *spec = json_object_get(pod, "spec");
    if (!json_is_object(spec)) {
        snprintf(err, errlen, "pod %.64s/%.64s has no spec", ns, name);
        return -1;
    }
    json_t *v = json_object_get(spec, "priority");
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_integer(v) || json_integer_value(v) < POD_PRIORITY_MIN ||
        json_integer_value(v) > POD_PRIORITY_MAX) {
        snprintf(err, errlen, "pod %.64s/%.64s: spec.priority is not a 32-bit integer", ns, name);
        return -1;
    }
    *priority = json_integer_value(v);
    return 0;
}

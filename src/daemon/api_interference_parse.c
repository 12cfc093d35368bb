/* api_interference_parse.c — PUT /v1/interference's body, validated where it enters
 * (api_interference.h): a JSON object with one field, "rows", an array of 1 to
 * INTERFERENCE_MAX_ROWS objects of exactly foreground, background, slowdown and runs. Every row
 * is checked before the caller may store any, so a bad row anywhere stores nothing. */
#include "api_interference.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* One row; field names the row ("rows[3]") in messages. */
static int parse_row(json_t *o, const char *at, struct interference_row *row, char *err,
                     size_t errlen)
{
    if (!json_is_object(o)) {
        snprintf(err, errlen, "%s must be an object {\"foreground\": KEY, \"background\": KEY, "
                              "\"slowdown\": X, \"runs\": N}", at);
        return -1;
    }
    const char *name;
    json_t *v;
    json_object_foreach(o, name, v) {
        if (strcmp(name, "foreground") != 0 && strcmp(name, "background") != 0 &&
            strcmp(name, "slowdown") != 0 && strcmp(name, "runs") != 0) {
            snprintf(err, errlen, "%s: unknown field '%.64s' (allowed: foreground, background, "
                                  "slowdown, runs)", at, name);
            return -1;
        }
    }
    static const char *const keys[] = {"foreground", "background"};
    char *out[] = {row->foreground, row->background};
    for (int i = 0; i < 2; i++) {
        v = json_object_get(o, keys[i]);
        if (!json_is_string(v) || !cg_profile_key_valid(json_string_value(v))) {
            snprintf(err, errlen, "%s.%s must be a profile key: 1-%d printable characters without "
                                  "spaces, quotes or backslashes", at, keys[i], CG_PROFILE_KEY_MAX);
            return -1;
        }
        snprintf(out[i], CG_PROFILE_KEY_MAX + 1, "%s", json_string_value(v));
    }
    v = json_object_get(o, "slowdown");
    double s = json_is_number(v) ? json_number_value(v) : NAN;
    if (!isfinite(s) || s <= 0 || s >= INTERFERENCE_SLOWDOWN_MAX) {
        snprintf(err, errlen, "%s.slowdown must be a number above 0 and below %.0f", at,
                 INTERFERENCE_SLOWDOWN_MAX);
        return -1;
    }
    row->slowdown = s;
    v = json_object_get(o, "runs");
    if (!json_is_integer(v) || json_integer_value(v) < 1 ||
        json_integer_value(v) > INTERFERENCE_RUNS_MAX) {
        snprintf(err, errlen, "%s.runs must be a whole number from 1 to %d", at,
                 INTERFERENCE_RUNS_MAX);
        return -1;
    }
    row->runs = (unsigned)json_integer_value(v);
    row->measured_unix = 0;
    return 0;
}

static int parse_rows(json_t *j, struct interference_row *rows, size_t *n, char *err,
                      size_t errlen)
{
    const char *name;
    json_t *v;
    json_object_foreach(j, name, v) {
        if (strcmp(name, "rows") != 0) {
            snprintf(err, errlen, "unknown field '%.64s' (allowed: rows)", name);
            return -1;
        }
    }
    json_t *arr = json_object_get(j, "rows");
    if (!json_is_array(arr) || json_array_size(arr) == 0 ||
        json_array_size(arr) > INTERFERENCE_MAX_ROWS) {
        snprintf(err, errlen, "rows must be an array of 1 to %d rows", INTERFERENCE_MAX_ROWS);
        return -1;
    }
    size_t i;
    json_array_foreach(arr, i, v) {
        char at[32];
        snprintf(at, sizeof at, "rows[%zu]", i);
        if (parse_row(v, at, &rows[i], err, errlen) != 0)
            return -1;
        for (size_t k = 0; k < i; k++)
            if (strcmp(rows[k].foreground, rows[i].foreground) == 0 &&
                strcmp(rows[k].background, rows[i].background) == 0) {
                snprintf(err, errlen, "%s repeats the pair of rows[%zu] (foreground %.64s, "
                                      "background %.64s)", at, k, rows[i].foreground,
                         rows[i].background);
                return -1;
            }
    }
    *n = json_array_size(arr);
    return 0;
}

int api_parse_interference(const char *body, size_t len, struct interference_row *rows,
                           size_t *n, char *err, size_t errlen)
{
    *n = 0;
    json_error_t jerr;
    json_t *j = len ? json_loadb(body, len, JSON_REJECT_DUPLICATES, &jerr) : NULL;
    if (!j || !json_is_object(j)) {
        snprintf(err, errlen, "request body must be a JSON object {\"rows\": [...]}%s%s",
                 !j && len ? ": " : "", !j && len ? jerr.text : "");
        json_decref(j);
        return -1;
    }
    int rc = parse_rows(j, rows, n, err, errlen);
    json_decref(j);
    if (rc != 0)
        *n = 0;
    return rc;
}

/* api_alloc_parse.c — POST /v1/allocations' body, validated where it enters (api_alloc.h): one
 * JSON object of exactly one shape: {"gpu_memory": BYTES[, "device": N][, "priority": 0-9]
 * [, "swap": false][, "exclusive": true]}, {"gpu_compute": UNITS} or {"devices": [I, ...]}.
 * Pure, so it is fuzzed with the other bodies. */
#include "api_alloc.h"

#include <stdio.h>
#include <string.h>

static int fail(char *err, size_t errlen, const char *msg)
{
    snprintf(err, errlen, "%s", msg);
    return -1;
}

int api_parse_alloc(const char *body, size_t len, unsigned ndevices, struct alloc_request *out,
                    char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    out->device = -1;
    json_error_t je;
    json_t *j = len ? json_loadb(body, len, JSON_REJECT_DUPLICATES, &je) : NULL;
    if (!json_is_object(j)) {
        json_decref(j);
        return fail(err, errlen, "the body must be a JSON object: {\"gpu_memory\": BYTES, "
                                 "\"device\": N}, {\"gpu_compute\": UNITS} or {\"devices\": [I]}");
    }
    const char *key;
    json_t *v;
    int rc = 0;
    json_object_foreach(j, key, v) {
        if (strcmp(key, "gpu_memory") != 0 && strcmp(key, "device") != 0 &&
            strcmp(key, "gpu_compute") != 0 && strcmp(key, "devices") != 0 &&
            strcmp(key, "priority") != 0 && strcmp(key, "swap") != 0 &&
            strcmp(key, "exclusive") != 0) {
            snprintf(err, errlen, "unknown field '%.64s' (allowed: gpu_memory, device, "
                                  "priority, swap, exclusive, gpu_compute, devices)", key);
            rc = -1;
        }
    }
    json_t *gm = json_object_get(j, "gpu_memory"), *dev = json_object_get(j, "device");
    json_t *gc = json_object_get(j, "gpu_compute"), *devs = json_object_get(j, "devices");
    if (rc == 0 && (!!gm + !!gc + !!devs) != 1)
        rc = fail(err, errlen, "give exactly one of gpu_memory, gpu_compute and devices");
    json_t *pr = json_object_get(j, "priority"), *sw = json_object_get(j, "swap");
    json_t *ex = json_object_get(j, "exclusive");
    if (rc == 0 && dev && !gm)
        rc = fail(err, errlen, "device goes with gpu_memory");
    if (rc == 0 && (pr || sw || ex) && !gm)
        rc = fail(err, errlen, "priority, swap and exclusive go with gpu_memory");
    if (rc == 0 && pr && (!json_is_integer(pr) || json_integer_value(pr) < 0 ||
                          json_integer_value(pr) > CG_PRIORITY_MAX))
        rc = fail(err, errlen, "priority must be a whole number from 0 to 9");
    if (rc == 0 && sw && !json_is_false(sw))
        rc = fail(err, errlen, "swap may only be false (the container's memory never moves to "
                               "the host)");
    if (rc == 0 && ex && !json_is_true(ex))
        rc = fail(err, errlen, "exclusive may only be true");
    if (rc == 0) {
        out->has_priority = pr != NULL;
        out->priority = pr ? (unsigned)json_integer_value(pr) : 0;
        out->no_swap = sw != NULL;
        out->exclusive = ex != NULL;
    }
    if (rc == 0 && gm) {
        out->kind = ALLOC_MEMORY;
        if (!json_is_integer(gm) || json_integer_value(gm) < 1 ||
            (uint64_t)json_integer_value(gm) > ALLOC_MAX_BYTES)
            rc = fail(err, errlen, "gpu_memory must be a whole number of bytes from 1 to 2^50");
        else
            out->bytes = (uint64_t)json_integer_value(gm);
        if (rc == 0 && dev && (!json_is_integer(dev) || json_integer_value(dev) < 0 ||
                               json_integer_value(dev) >= (json_int_t)ndevices)) {
            snprintf(err, errlen, "device must be a GPU index below %u", ndevices);
            rc = -1;
        } else if (rc == 0 && dev) {
            out->device = (int)json_integer_value(dev);
        }
    } else if (rc == 0 && gc) {
        out->kind = ALLOC_COMPUTE;
        if (!json_is_integer(gc) || json_integer_value(gc) < 1 ||
            json_integer_value(gc) > 100 * CG_MAX_DEVICES)
            rc = fail(err, errlen, "gpu_compute must be a whole number of units (1% each)");
        else
            out->compute = (unsigned)json_integer_value(gc);
    } else if (rc == 0) {
        out->kind = ALLOC_GPUS;
        size_t n = json_is_array(devs) ? json_array_size(devs) : 0;
        if (n == 0 || n > ndevices || n > CG_MAX_DEVICES) {
            snprintf(err, errlen, "devices must be an array of 1 to %u GPU indexes", ndevices);
            rc = -1;
        }
        for (size_t i = 0; rc == 0 && i < n; i++) {
            json_t *e = json_array_get(devs, i);
            if (!json_is_integer(e) || json_integer_value(e) < 0 ||
                json_integer_value(e) >= (json_int_t)ndevices) {
                snprintf(err, errlen, "devices[%zu] must be a GPU index below %u", i, ndevices);
                rc = -1;
                break;
            }
            out->devices[i] = (unsigned)json_integer_value(e);
            for (size_t k = 0; k < i; k++)
                if (out->devices[k] == out->devices[i])
                    rc = fail(err, errlen, "devices names a GPU twice");
        }
        if (rc == 0)
            out->ndevices = (unsigned)n;
    }
    json_decref(j);
    return rc;
}

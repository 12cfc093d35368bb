/* fuzz_admission.c — libFuzzer harness for convgpu-webhook's AdmissionReview decoder and its
 * answer (src/integrations/k8s/webhook/review.c). A review is either refused with a reason or
 * answered with an AdmissionReview v1 that allows, names a uid, and carries a patch only with
 * patchType JSONPatch and valid base64 of a JSON array of add operations on /spec. */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "review.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static size_t unbase64(const char *s, unsigned char *out)
{
    size_t n = 0, bits = 0;
    unsigned v = 0;
    for (; *s && *s != '='; s++) {
        const char *abc = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        const char *p = strchr(abc, *s);
        if (!p)
            abort();
        v = v << 6 | (unsigned)(p - abc);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[n++] = (unsigned char)(v >> bits);
        }
    }
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct cgw_config cfg = {.runtime_class = "convgpu",
                             .scheduler_name = size && (data[0] & 1) ? "s" : NULL};
    char *answer = NULL, err[512];
    int patched = 0;
    if (cgw_review((const char *)data, size, &cfg, &answer, &patched, err, sizeof err) != 0) {
        if (answer || !err[0])
            abort();
        return 0;
    }
    json_t *a = json_loads(answer, 0, NULL);
    json_t *r = json_object_get(a, "response");
    if (!json_is_true(json_object_get(r, "allowed")) ||
        !json_is_string(json_object_get(r, "uid")))
        abort();
    const char *patch = json_string_value(json_object_get(r, "patch"));
    if ((patch != NULL) != (patched != 0))
        abort();
    if (patch) {
        unsigned char *buf = malloc(strlen(patch) + 1);
        size_t n = unbase64(patch, buf);
        json_t *ops = json_loadb((const char *)buf, n, 0, NULL);
        if (!json_is_array(ops) || json_array_size(ops) == 0)
            abort();
        size_t i;
        json_t *op;
        json_array_foreach(ops, i, op) {
            const char *path = json_string_value(json_object_get(op, "path"));
            if (strcmp(json_string_value(json_object_get(op, "op")), "add") != 0 || !path ||
                strncmp(path, "/spec/", 6) != 0)
                abort();
        }
        json_decref(ops);
        free(buf);
    }
    json_decref(a);
    free(answer);
    return 0;
}

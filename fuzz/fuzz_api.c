/* fuzz_api.c — libFuzzer harness for the control API's request bodies (create, limit,
 * policy). Every input must be accepted into a valid struct or refused with a message. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api_parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *body = malloc(size ? size : 1);
    if (!body)
        return 0;
    memcpy(body, data, size);
    char err[256];
    struct create_request cr;
    err[0] = '\0';
    if (api_parse_create(body, size, 4, &cr, err, sizeof err) == 0) {
        if (cr.limit == 0 || cr.device < -1 || cr.device >= 4 || strlen(cr.name) > 64 ||
            (cr.has_owner && (cr.uid == UINT32_MAX || cr.gid == UINT32_MAX)))
            abort();
    } else if (!err[0]) {
        abort();
    }
    uint64_t limit;
    err[0] = '\0';
    if (api_parse_limit(body, size, &limit, err, sizeof err) == 0) {
        if (limit == 0)
            abort();
    } else if (!err[0]) {
        abort();
    }
    struct start_request sr;
    err[0] = '\0';
    if (api_parse_start(body, size, &sr, err, sizeof err) == 0) {
        if (sr.pid <= 0)
            abort();
    } else if (!err[0]) {
        abort();
    }
    struct policy_request pr;
    err[0] = '\0';
    if (api_parse_policy(body, size, &pr, err, sizeof err) == 0) {
        if (!pr.has_resume && !pr.has_placement)
            abort();
    } else if (!err[0]) {
        abort();
    }
    free(body);
    return 0;
}

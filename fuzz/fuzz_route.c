/* fuzz_route.c — libFuzzer harness for the control API's route matcher (api_route.h), which
 * reads every request line's method and path. The input is METHOD, a NUL, then the path. Every
 * answer must be consistent: a route only for its own method and a path its pattern matches,
 * the argument NUL-terminated within its buffer, 405 only with the methods listed, and the
 * same input matched twice the same way. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api_route.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096)
        return 0;
    char buf[4098];
    memcpy(buf, data, size);
    buf[size] = '\0';
    buf[size + 1] = '\0';
    const char *method = buf, *path = buf + strlen(buf) + 1;
    if (path > buf + size)
        path = buf + size;
    char arg[66], arg2[66], allowed[64], allowed2[64];
    memset(arg, 'x', sizeof arg);
    unsigned status = 0, status2 = 0;
    const struct api_route *r =
        api_route_match(method, path, arg, sizeof arg, &status, allowed, sizeof allowed);
    const struct api_route *r2 =
        api_route_match(method, path, arg2, sizeof arg2, &status2, allowed2, sizeof allowed2);
    if (r != r2 || status != status2)
        abort();
    if (!memchr(arg, '\0', sizeof arg) || !memchr(allowed, '\0', sizeof allowed))
        abort();
    if (r) {
        if (status != 200 || strcmp(r->method, method) != 0 || strcmp(arg, arg2) != 0)
            abort();
        if (!strchr(r->path, '{') && (strcmp(r->path, path) != 0 || arg[0]))
            abort();
        if (strchr(r->path, '{') && !arg[0])
            abort();
    } else if (status == 405) {
        if (!allowed[0] || strcmp(allowed, allowed2) != 0)
            abort();
    } else if (status != 404) {
        abort();
    }
    return 0;
}

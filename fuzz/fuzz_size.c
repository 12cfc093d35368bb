/* fuzz_size.c — libFuzzer harness for the size parser that reads every size a user, a config or
 * an API request gives. Accepted sizes must print and parse back to the same byte count. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "size.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 64)
        return 0;
    char text[65];
    memcpy(text, data, size);
    text[size] = '\0';
    uint64_t v = 0;
    const char *err = NULL;
    if (cg_parse_size(text, &v, &err) == 0) {
        char out[CG_SIZE_BUFLEN];
        cg_format_size(v, out, sizeof out);
        uint64_t back = 0;
        /* Exact renderings must round-trip; two-decimal approximations need not. */
        if (cg_parse_size(out, &back, &err) == 0 && back != v && strchr(out, '.') == NULL)
            abort();
    } else if (!err) {
        abort();
    }
    return 0;
}

/* fuzz_config.c — libFuzzer harness for the daemon's configuration-file reader. Any input must
 * either parse (every key handed over is non-empty, lower-case and dash-joined, every value
 * non-empty) or be refused with a message naming the line. */
#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int apply(void *ctx, const char *key, const char *value, char *err, size_t errlen)
{
    (void)ctx;
    (void)err;
    (void)errlen;
    if (!*key || !*value)
        abort();
    for (const char *k = key; *k; k++)
        if (!islower((unsigned char)*k) && *k != '-')
            abort();
    return strcmp(key, "reject-me") == 0 ? -1 : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size ? size : 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    char err[256];
    err[0] = '\0';
    if (config_parse(text, size, apply, NULL, err, sizeof err) != 0 && strncmp(err, "line ", 5) != 0)
        abort();
    free(text);
    return 0;
}

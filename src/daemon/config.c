/* config.c — a strict reader for convgpud.conf: every line is empty, a comment, or one
 * `key = value`; anything else (a missing '=', an empty key or value, control characters, an
 * over-long line) is an error naming the line. Values may be wrapped in double quotes. */
#include "config.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#define MAX_LINE 1024

static void trim(char **s, char **e)
{
    while (*s < *e && (**s == ' ' || **s == '\t'))
        (*s)++;
    while (*e > *s && ((*e)[-1] == ' ' || (*e)[-1] == '\t' || (*e)[-1] == '\r'))
        (*e)--;
}

int config_parse(const char *text, size_t len,
                 int (*apply)(void *ctx, const char *key, const char *value, char *err,
                              size_t errlen),
                 void *ctx, char *err, size_t errlen)
{
    size_t pos = 0;
    unsigned lineno = 0;
    while (pos < len) {
        lineno++;
        size_t end = pos;
        while (end < len && text[end] != '\n')
            end++;
        if (end - pos >= MAX_LINE) {
            snprintf(err, errlen, "line %u: longer than %d characters", lineno, MAX_LINE - 1);
            return -1;
        }
        for (size_t i = pos; i < end; i++) {
            unsigned char ch = (unsigned char)text[i];
            if ((ch < 0x20 && ch != '\t' && ch != '\r') || ch == 0x7f) {
                snprintf(err, errlen, "line %u: control character", lineno);
                return -1;
            }
        }
        char line[MAX_LINE];
        memcpy(line, text + pos, end - pos);
        line[end - pos] = '\0';
        pos = end + 1;
        char *s = line, *e = line + strlen(line);
        trim(&s, &e);
        if (s == e || *s == '#')
            continue;
        char *eq = memchr(s, '=', (size_t)(e - s));
        if (!eq) {
            snprintf(err, errlen, "line %u: expected 'key = value'", lineno);
            return -1;
        }
        char *ks = s, *ke = eq, *vs = eq + 1, *ve = e;
        trim(&ks, &ke);
        trim(&vs, &ve);
        if (ks == ke) {
            snprintf(err, errlen, "line %u: missing key before '='", lineno);
            return -1;
        }
        for (char *k = ks; k < ke; k++) {
            if (!islower((unsigned char)*k) && *k != '-') {
                snprintf(err, errlen, "line %u: keys are lower-case words joined by '-'", lineno);
                return -1;
            }
        }
        if (ve - vs >= 2 && *vs == '"' && ve[-1] == '"') {
            vs++;
            ve--;
        }
        if (vs == ve) {
            snprintf(err, errlen, "line %u: missing value after '='", lineno);
            return -1;
        }
        *ke = '\0';
        *ve = '\0';
        char why[256] = "";
        if (apply(ctx, ks, vs, why, sizeof why) != 0) {
            snprintf(err, errlen, "line %u: %s", lineno, why[0] ? why : "invalid setting");
            return -1;
        }
    }
    return 0;
}

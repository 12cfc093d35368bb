/* size.c — byte-size parsing and printing shared by the daemon, CLI, simulator and emulator. */
#include "size.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static int fail(const char **err, const char *why)
{
    if (err)
        *err = why;
    return -1;
}

static int suffix_shift(const char *s, unsigned *shift)
{
    static const struct { const char *name; unsigned shift; } table[] = {
        {"", 0},   {"b", 0},
        {"k", 10}, {"kb", 10}, {"kib", 10},
        {"m", 20}, {"mb", 20}, {"mib", 20},
        {"g", 30}, {"gb", 30}, {"gib", 30},
        {"t", 40}, {"tb", 40}, {"tib", 40},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        if (strcasecmp(s, table[i].name) == 0) {
            *shift = table[i].shift;
            return 0;
        }
    }
    return -1;
}

int cg_parse_size(const char *text, uint64_t *out, const char **err)
{
    if (!text || !*text)
        return fail(err, "empty size");
    const char *p = text;
    if (!isdigit((unsigned char)*p))
        return fail(err, "a size starts with a digit (e.g. 512MiB, 1.5GiB, 4096)");

    uint64_t whole = 0;
    for (; isdigit((unsigned char)*p); p++) {
        unsigned d = (unsigned)(*p - '0');
        if (whole > (UINT64_MAX - d) / 10)
            return fail(err, "size too large");
        whole = whole * 10 + d;
    }
    /* Fraction kept as numerator/denominator to stay exact. */
    uint64_t frac_num = 0, frac_den = 1;
    if (*p == '.') {
        p++;
        if (!isdigit((unsigned char)*p))
            return fail(err, "digits must follow the decimal point");
        for (; isdigit((unsigned char)*p); p++) {
            if (frac_den >= 1000000000000ULL)
                return fail(err, "too many decimal places");
            frac_num = frac_num * 10 + (uint64_t)(*p - '0');
            frac_den *= 10;
        }
    }
    unsigned shift;
    if (suffix_shift(p, &shift) != 0)
        return fail(err, "unknown unit (use B, KiB, MiB, GiB, TiB, or K, M, G, T)");

    if (shift && whole > (UINT64_MAX >> shift))
        return fail(err, "size too large");
    uint64_t bytes = whole << shift;
    if (frac_num) {
        /* frac_num * 2^shift / frac_den must be a whole number of bytes. */
        unsigned __int128 scaled = (unsigned __int128)frac_num << shift;
        if (scaled % frac_den != 0)
            return fail(err, "fraction is not a whole number of bytes");
        unsigned __int128 add = scaled / frac_den;
        if (add > UINT64_MAX - bytes)
            return fail(err, "size too large");
        bytes += (uint64_t)add;
    }
    *out = bytes;
    return 0;
}

char *cg_format_size(uint64_t bytes, char *buf, size_t len)
{
    static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    unsigned u = 0;
    uint64_t unit = 1;
    while (u + 1 < sizeof units / sizeof units[0] && bytes / unit >= 1024) {
        unit <<= 10;
        u++;
    }
    if (bytes % unit == 0) {
        snprintf(buf, len, "%llu%s", (unsigned long long)(bytes / unit), units[u]);
    } else if ((bytes * 10) % unit == 0 && bytes < UINT64_MAX / 10) {
        snprintf(buf, len, "%llu.%llu%s", (unsigned long long)(bytes / unit),
                 (unsigned long long)((bytes % unit) * 10 / unit), units[u]);
    } else {
        snprintf(buf, len, "%.2f%s", (double)bytes / (double)unit, units[u]);
    }
    return buf;
}

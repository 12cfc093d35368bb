/* image.c — the module images the emulator accepts.
 *
 * Its own text format:
 *
 *   convgpu-emu-module 1        first line, exactly
 *   # comment                   blank lines and '#' comments are ignored
 *   kernel complement           one built-in kernel per line
 *   kernel spin
 *
 * and PTX, read only as far as a driver must before it compiles: `.version` (the first
 * directive), `.target` (the next), and the names of the `.entry` functions; entries that name a
 * built-in kernel run as that kernel. So a program can pass the same PTX to the emulator and to
 * a real driver, and the emulator refuses what the real one would (too new an ISA, a target
 * newer than the device). Anything else is CUDA_ERROR_INVALID_IMAGE, as a corrupt cubin is. */
#include "image.h"

#include <ctype.h>
#include <stdbool.h>
#include <string.h>

static const char *const names[EMU_KERNEL_COUNT] = {"complement", "spin"};

const char *emu_kernel_name(int k) { return k >= 0 && k < EMU_KERNEL_COUNT ? names[k] : "?"; }

static int kernel_index(const char *s, size_t n)
{
    for (int k = 0; k < EMU_KERNEL_COUNT; k++)
        if (n == strlen(names[k]) && memcmp(s, names[k], n) == 0)
            return k;
    return -1;
}

/* ---- the text format ---- */

static unsigned parse_line(const char *s, size_t n, int first)
{
    while (n > 0 && isspace((unsigned char)s[n - 1]))
        n--; /* trailing blanks and the \r of CRLF files */
    if (first)
        return n == strlen(EMU_IMAGE_MAGIC) && memcmp(s, EMU_IMAGE_MAGIC, n) == 0 ? 1u : 0u;
    while (n > 0 && isspace((unsigned char)*s)) {
        s++;
        n--;
    }
    if (n == 0 || *s == '#')
        return 1u;
    if (n < 7 || memcmp(s, "kernel", 6) != 0 || !isspace((unsigned char)s[6]))
        return 0;
    s += 6;
    n -= 6;
    while (n > 0 && isspace((unsigned char)*s)) {
        s++;
        n--;
    }
    int k = kernel_index(s, n);
    return k < 0 ? 0 : 2u << k;
}

static CUresult parse_text(const char *image, const char *end, unsigned *mask)
{
    unsigned m = 0;
    int first = 1;
    for (const char *p = image; p < end;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
        unsigned r = parse_line(p, n, first);
        if (r == 0)
            return CUDA_ERROR_INVALID_IMAGE;
        m |= r >> 1;
        first = 0;
        p += n + (nl ? 1 : 0);
    }
    if (m == 0)
        return CUDA_ERROR_INVALID_IMAGE;
    *mask = m;
    return CUDA_SUCCESS;
}

/* ---- PTX ---- */

/* Skips white space and comments; returns where the next token starts (or end). */
static const char *skip_blank(const char *p, const char *end)
{
    while (p < end) {
        if (isspace((unsigned char)*p)) {
            p++;
        } else if (end - p >= 2 && p[0] == '/' && p[1] == '/') {
            const char *nl = memchr(p, '\n', (size_t)(end - p));
            p = nl ? nl + 1 : end;
        } else if (end - p >= 2 && p[0] == '/' && p[1] == '*') {
            const char *q = p + 2;
            while (q < end && !(q[0] == '*' && q + 1 < end && q[1] == '/'))
                q++;
            p = q < end ? q + 2 : end;
        } else {
            break;
        }
    }
    return p;
}

/* Matches a directive word (".version") followed by white space. */
static bool directive(const char **pp, const char *end, const char *word)
{
    size_t n = strlen(word);
    if ((size_t)(end - *pp) <= n || memcmp(*pp, word, n) != 0 || !isspace((unsigned char)(*pp)[n]))
        return false;
    *pp += n;
    return true;
}

/* 1 to 3 decimal digits. */
static bool small_number(const char **pp, const char *end, unsigned *out)
{
    unsigned v = 0, digits = 0;
    const char *p = *pp;
    while (p < end && isdigit((unsigned char)*p) && digits < 4) {
        v = v * 10 + (unsigned)(*p - '0');
        p++;
        digits++;
    }
    if (digits == 0 || digits > 3)
        return false;
    *pp = p;
    *out = v;
    return true;
}

static bool ident_char(char c)
{
    return isalnum((unsigned char)c) || c == '_' || c == '$' || c == '%';
}

/* `.target` takes a comma-separated list; the one naming the architecture is sm_NN (sm_90a,
 * sm_100f: a suffix letter narrows it). Returns NN, or 0 when no sm_ target is named. */
static unsigned target_sm(const char *p, const char *end)
{
    const char *eol = memchr(p, '\n', (size_t)(end - p));
    if (!eol)
        eol = end;
    while (p < eol && *p != '/') { /* a comment ends the list */
        while (p < eol && (isspace((unsigned char)*p) || *p == ','))
            p++;
        const char *w = p;
        while (p < eol && ident_char(*p))
            p++;
        unsigned sm;
        const char *d = w + 3;
        if (p - w > 3 && memcmp(w, "sm_", 3) == 0 && small_number(&d, p, &sm) &&
            (d == p || (d + 1 == p && isalpha((unsigned char)*d))))
            return sm;
        if (p == w && p < eol && *p != '/')
            return 0; /* neither a word nor a comment: malformed */
    }
    return 0;
}

static CUresult parse_ptx(const char *p, const char *end, unsigned *mask)
{
    unsigned major, minor;
    if (!directive(&p, end, ".version"))
        return CUDA_ERROR_INVALID_IMAGE; /* not PTX at all */
    p = skip_blank(p, end);
    if (!small_number(&p, end, &major) || p >= end || *p != '.')
        return CUDA_ERROR_INVALID_PTX;
    p++;
    if (!small_number(&p, end, &minor) || minor > 9)
        return CUDA_ERROR_INVALID_PTX;
    if (major * 10 + minor > EMU_PTX_ISA_MAX)
        return CUDA_ERROR_UNSUPPORTED_PTX_VERSION;
    p = skip_blank(p, end);
    if (!directive(&p, end, ".target"))
        return CUDA_ERROR_INVALID_PTX;
    unsigned sm = target_sm(p, end);
    if (sm == 0 || sm > EMU_COMPUTE_CAPABILITY)
        return CUDA_ERROR_INVALID_PTX;

    unsigned m = 0;
    while (p < end) {
        const char *q = skip_blank(p, end);
        if (q != p) {
            p = q;
            continue;
        }
        if (*p == '"') { /* a string (.file "name") may hold anything */
            const char *close = memchr(p + 1, '"', (size_t)(end - p - 1));
            p = close ? close + 1 : end;
            continue;
        }
        /* p is past ".target", so p[-1] is inside the image */
        if (!ident_char(p[-1]) && directive(&p, end, ".entry")) {
            p = skip_blank(p, end);
            const char *w = p;
            while (p < end && ident_char(*p))
                p++;
            if (p == w)
                return CUDA_ERROR_INVALID_PTX;
            int k = kernel_index(w, (size_t)(p - w));
            if (k >= 0)
                m |= 1u << k;
            continue;
        }
        p++;
    }
    *mask = m;
    return CUDA_SUCCESS;
}

CUresult emu_image_parse(const char *image, size_t len, unsigned *mask)
{
    if (!image || !mask)
        return CUDA_ERROR_INVALID_IMAGE;
    const char *end = memchr(image, '\0', len);
    if (!end)
        return CUDA_ERROR_INVALID_IMAGE;
    size_t magic = strlen(EMU_IMAGE_MAGIC);
    if ((size_t)(end - image) >= magic && memcmp(image, EMU_IMAGE_MAGIC, magic) == 0)
        return parse_text(image, end, mask);
    return parse_ptx(skip_blank(image, end), end, mask);
}

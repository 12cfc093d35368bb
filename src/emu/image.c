/* image.c — parser of the text module image:
 *
 *   convgpu-emu-module 1        first line, exactly
 *   # comment                   blank lines and '#' comments are ignored
 *   kernel complement           one built-in kernel per line
 *   kernel spin
 *
 * Anything else makes the image invalid (CUDA_ERROR_INVALID_IMAGE), as a corrupt cubin would. */
#include "image.h"

#include <ctype.h>
#include <string.h>

static const char *const names[EMU_KERNEL_COUNT] = {"complement", "spin"};

const char *emu_kernel_name(int k) { return k >= 0 && k < EMU_KERNEL_COUNT ? names[k] : "?"; }

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
    for (int k = 0; k < EMU_KERNEL_COUNT; k++)
        if (n == strlen(names[k]) && memcmp(s, names[k], n) == 0)
            return 2u << k;
    return 0;
}

unsigned emu_image_parse(const char *image, size_t len)
{
    if (!image)
        return 0;
    const char *end = memchr(image, '\0', len);
    if (!end)
        return 0;
    unsigned mask = 0;
    int first = 1;
    for (const char *p = image; p < end;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
        unsigned r = parse_line(p, n, first);
        if (r == 0)
            return 0;
        mask |= r >> 1;
        first = 0;
        p += n + (nl ? 1 : 0);
    }
    return first ? 0 : mask;
}

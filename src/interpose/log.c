/* log.c — formatting a diagnostic into a stack buffer and writing it with one write(2), so lines
 * from several threads never interleave and logging never allocates. */
#include "log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int cg_log_level = CG_LOG_WARN;

/* The level is known from the start, so messages from calls that never read the rest of our
 * configuration (cuGetProcAddress, dlsym) are not lost; config.c reads it again, harmlessly. */
__attribute__((constructor)) static void log_level_from_env(void)
{
    cg_log_init(getenv("CONVGPU_LOG"));
}

void cg_log_init(const char *text)
{
    static const char *const names[] = {"error", "warn", "info", "debug"};
    if (!text)
        return;
    for (int i = 0; i < 4; i++)
        if (strcmp(text, names[i]) == 0)
            cg_log_level = i;
}

void cg_log_write(int level, const char *fmt, ...)
{
    static const char *const tags[] = {"error", "warn", "info", "debug"};
    char buf[512];
    int saved = errno; /* a diagnostic must not change what the host program sees in errno */
    int n = snprintf(buf, sizeof buf, "convgpu: %s: [%d] ", tags[level & 3], (int)getpid());
    if (n < 0)
        n = 0;
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(buf + n, sizeof buf - (size_t)n - 1, fmt, ap);
    va_end(ap);
    size_t len = (size_t)n + (m < 0 ? 0 : (size_t)m);
    if (len > sizeof buf - 2)
        len = sizeof buf - 2;
    buf[len++] = '\n';
    ssize_t w;
    do
        w = write(STDERR_FILENO, buf, len);
    while (w < 0 && errno == EINTR);
    errno = saved;
}

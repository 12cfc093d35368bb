/* log.c — timestamped, levelled log lines on stderr (journald and docker logs read stderr). */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static enum log_level current = LOG_INFO;
static const char *names[] = {"error", "warn", "info", "debug"};

void log_set_level(enum log_level level) { current = level; }
bool log_enabled(enum log_level level) { return level <= current; }

bool log_parse_level(const char *name, enum log_level *out)
{
    for (unsigned i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (strcmp(name, names[i]) == 0) {
            *out = (enum log_level)i;
            return true;
        }
    }
    return false;
}

void log_msg(enum log_level level, const char *fmt, ...)
{
    if (level > current)
        return;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    char stamp[32];
    strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &tm);

    char line[1024];
    int n = snprintf(line, sizeof line, "%s.%03ldZ convgpud[%d] %s: ", stamp, ts.tv_nsec / 1000000,
                     (int)getpid(), names[level]);
    va_list ap;
    va_start(ap, fmt);
    if (n > 0 && (size_t)n < sizeof line)
        n += vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n >= sizeof line - 1)
        n = (int)sizeof line - 2;
    line[n++] = '\n';
    /* One write per line so lines from a crashing moment are not interleaved. */
    ssize_t w = write(STDERR_FILENO, line, (size_t)n);
    (void)w;
}

bool log_once_a_second(uint64_t *last)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    if (*last && now - *last < 1000000000ull)
        return false;
    *last = now;
    return true;
}

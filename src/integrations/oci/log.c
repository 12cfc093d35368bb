/* log.c — one line per event, appended with a single write(2) so concurrent shims (runc create,
 * hooks, delete) never interleave inside a line. */
#include "log.h"

#include <fcntl.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int log_fd = -1;
static bool log_json;

void oci_log_open(const char *path, const char *format, const char *runtime_dir)
{
    char def[4096];
    log_json = format && strcmp(format, "json") == 0;
    if (!path || !*path) {
        snprintf(def, sizeof def, "%s/oci", runtime_dir);
        mkdir(def, 0755); /* fails harmlessly when it exists or the daemon never ran */
        snprintf(def, sizeof def, "%s/oci/runtime.log", runtime_dir);
        path = def;
        log_json = false;
    }
    log_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOCTTY, 0644);
}

void oci_log(int level, const char *fmt, ...)
{
    static const char *const names[] = {"error", "warning", "info", "debug"};
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (level == OCI_LOG_ERROR)
        fprintf(stderr, "convgpu-runtime: %s\n", msg);
    if (log_fd < 0)
        return;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    char when[64];
    snprintf(when, sizeof when, "%04d-%02d-%02dT%02d:%02d:%02d.%06ldZ", tm.tm_year + 1900,
             tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000);
    char line[4096];
    if (log_json) {
        char full[2100];
        snprintf(full, sizeof full, "convgpu: %s", msg);
        json_t *j = json_pack("{s:s,s:s,s:s}", "level", names[level], "msg", full, "time", when);
        char *s = j ? json_dumps(j, JSON_COMPACT) : NULL;
        snprintf(line, sizeof line, "%s\n", s ? s : "{}");
        free(s);
        json_decref(j);
    } else {
        snprintf(line, sizeof line, "%s convgpu-runtime[%d] %s: %s\n", when, (int)getpid(),
                 names[level], msg);
    }
    ssize_t w = write(log_fd, line, strlen(line));
    (void)w;
}

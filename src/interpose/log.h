/* log.h — the interposer's diagnostics: one line per event on stderr, prefixed "convgpu:".
 * The host program owns stdout/stderr, so we stay quiet unless something matters (default warn). */
#ifndef CONVGPU_IP_LOG_H
#define CONVGPU_IP_LOG_H

enum cg_log_level { CG_LOG_ERROR = 0, CG_LOG_WARN = 1, CG_LOG_INFO = 2, CG_LOG_DEBUG = 3 };

extern int cg_log_level;

/* Sets the level from CONVGPU_LOG (error|warn|info|debug); unknown values keep warn. */
void cg_log_init(const char *text);

void cg_log_write(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The level check stays inline so a disabled message costs one compare. */
#define cg_log(level, ...)                                                                         \
    do {                                                                                           \
        if ((level) <= cg_log_level)                                                               \
            cg_log_write((level), __VA_ARGS__);                                                    \
    } while (0)

#endif

/* log.h — the daemon's log: one line per event on stderr, with time, level and reason. */
#ifndef CONVGPUD_LOG_H
#define CONVGPUD_LOG_H

#include <stdbool.h>
#include <stdint.h>

enum log_level { LOG_ERROR = 0, LOG_WARN, LOG_INFO, LOG_DEBUG };

void log_set_level(enum log_level level);
bool log_parse_level(const char *name, enum log_level *out);
bool log_enabled(enum log_level level);
/* At most one warning a second per reason (*last is the reason's clock): true when this one may
 * be logged. A flood must not become a log flood. */
bool log_once_a_second(uint64_t *last);
void log_msg(enum log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define log_error(...) log_msg(LOG_ERROR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARN, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...) do { if (log_enabled(LOG_DEBUG)) log_msg(LOG_DEBUG, __VA_ARGS__); } while (0)

#endif

/* config.h — the daemon's configuration file: `key = value` lines, `#` comments, keys named like
 * the long command-line options (runtime-dir, emulate, policy, placement, reserve,
 * context-charge, granularity, log-level, metrics, control-group, operators-group,
 * user-memory-quota, user-max-containers, default-gpu-compute, default-compute-mode,
 * watchdog-*). Command-line flags override the file. */
#ifndef CONVGPUD_CONFIG_H
#define CONVGPUD_CONFIG_H

#include <stddef.h>

#define CONFIG_DEFAULT_PATH "/etc/convgpu/convgpud.conf"
#define CONFIG_MAX_BYTES (64 * 1024)

/* Parses text (need not be NUL-terminated) and calls apply(key, value) for each setting, in
 * order. Returns 0, or -1 with "line N: what is wrong" in err on the first malformed line or the
 * first value apply() refuses (it then fills err itself). Nothing is applied after an error;
 * callers apply to a scratch copy and keep it only on success. */
int config_parse(const char *text, size_t len,
                 int (*apply)(void *ctx, const char *key, const char *value, char *err,
                              size_t errlen),
                 void *ctx, char *err, size_t errlen);

#endif

/* log.h — the shim's log: the file runc's --log names (in runc's --log-format, so the engine
 * can still read it: Docker shows the last "error" entry of a failed create), else
 * <runtime-dir>/oci/runtime.log. Never stdout: engines parse the runtime's stdout. */
#ifndef CONVGPU_OCI_LOG_H
#define CONVGPU_OCI_LOG_H

enum { OCI_LOG_ERROR, OCI_LOG_WARN, OCI_LOG_INFO, OCI_LOG_DEBUG };

/* path may be NULL (then the default file); format "json" or anything else for text. */
void oci_log_open(const char *path, const char *format, const char *runtime_dir);

/* Logs one line; errors are also printed on stderr as "convgpu-runtime: ...". */
__attribute__((format(printf, 2, 3))) void oci_log(int level, const char *fmt, ...);

#endif

/* daemon_hint.h — what to tell a person whose command found no convgpud: the one way to start
 * it that fits this host. Every door that reports an unreachable daemon (the control API
 * transport, `convgpu docker`) words its advice through cgc_daemon_start_hint(), so a GPU host
 * is never told to start an emulator and a host with the packaged unit is told to use it.
 *
 * The rule, in order: the systemd unit convgpud.service is installed -> `systemctl start
 * convgpud` (its log: `journalctl -u convgpud`); no NVIDIA driver or GPU is found -> the daemon
 * on an emulated GPU; otherwise the plain daemon command. Only the file system is read (no
 * library is loaded, nothing is exec'd): this runs in the OCI shim too. */
#ifndef CONVGPU_DAEMON_HINT_H
#define CONVGPU_DAEMON_HINT_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Writes the advice ("start it: ...") into out. host_root: where the host's files are ("" or
 * NULL: "/"; tests give a temporary tree); runtime_dir: the directory the client looked in (a
 * daemon command names it unless it is the default /run/convgpu). Returns out. */
const char *cgc_daemon_start_hint(const char *host_root, const char *runtime_dir, char *out,
                                  size_t len);

#ifdef __cplusplus
}
#endif

#endif

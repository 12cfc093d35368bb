/* pidns.h — processes across pid namespaces. A process records its pid as its own namespace
 * numbers it, plus that namespace's inode; another process (the daemon on the host, NVML in a
 * container) finds the pid it sees for it by scanning its /proc for a process of that namespace
 * whose NSpid line ends with that pid. Real NVML reports host pids; this is how the emulated one
 * reports, to each reader, the pid that reader can use. */
#ifndef CONVGPU_EMU_PIDNS_H
#define CONVGPU_EMU_PIDNS_H

#include "shared.h"

#include <sys/types.h>

/* The inode of the calling process's pid namespace (0 if /proc cannot tell). */
uint64_t emu_pidns_self(void);

/* Fills id for the calling process. Returns 0, or -1 if /proc cannot say who it is. */
int emu_ident_self(emu_ident *id);

/* The pid the caller sees for the process id describes, or 0 if it sees no such live process
 * (gone, or in a namespace the caller cannot see). Thread-safe; answers are cached and
 * re-checked by start time. */
pid_t emu_ident_visible_pid(const emu_ident *id);

/* Whether the process is alive as far as the caller can tell: a process the caller cannot see
 * counts as alive unless the caller is in the initial namespace (which sees every process).
 * (Only where the state file has no liveness locks: shared.c.) */
int emu_ident_alive(const emu_ident *id);

/* The pid to report for id: the visible one; for a process gone since this reader last saw it,
 * the pid it had then; else (a process this reader never saw) the pid it recorded. */
unsigned emu_ident_report_pid(const emu_ident *id);

/* After fork, a child may be in another namespace than its parent (unshare). */
void emu_pidns_forget(void);

#endif

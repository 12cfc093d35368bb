/* proc_start.h — what /proc says of a process: its start time, which tells a live process from
 * a later one that reuses its pid, and its real uid. Shared by the daemon (ledger slots,
 * container owners, the init a caller reports) and the emulator (its per-process records). */
#ifndef CONVGPU_PROC_START_H
#define CONVGPU_PROC_START_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* Field 22 of /proc/<pid>/stat (clock ticks since boot), never 0 for a live process; 0 when the
 * process is gone, a zombie, or not visible from here. Thread-safe. */
uint64_t cg_proc_start_time(pid_t pid);
/* The real uid (the first of /proc/<pid>/status's Uid: line); false when the process is gone or
 * not visible. The directory's owner would not do: it is root for a process not dumpable. */
bool cg_proc_real_uid(pid_t pid, uid_t *uid);

#endif

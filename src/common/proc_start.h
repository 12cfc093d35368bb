/* proc_start.h — a process's start time, which tells a live process from a later one that
 * reuses its pid. Shared by the daemon (ledger slots, container owners) and the emulator
 * (its per-process records). */
#ifndef CONVGPU_PROC_START_H
#define CONVGPU_PROC_START_H

#include <stdint.h>
#include <sys/types.h>

/* Field 22 of /proc/<pid>/stat (clock ticks since boot), never 0 for a live process; 0 when the
 * process is gone, a zombie, or not visible from here. Thread-safe. */
uint64_t cg_proc_start_time(pid_t pid);

#endif

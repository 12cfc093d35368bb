/* shared.h — the one device state every process on the machine shares: a file (by default in
 * /dev/shm) holding the device configuration, a robust process-shared mutex, and one slot per
 * process using the emulated GPU with its charges. Device usage is never stored as a total: it
 * is the sum over live slots, so a dead process's memory disappears with its slot. */
#ifndef CONVGPU_EMU_SHARED_H
#define CONVGPU_EMU_SHARED_H

#include "config.h"

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

#define EMU_MAX_PROCS  256
#define EMU_BUSY_RING  64
#define EMU_UTIL_WINDOW_NS 1000000000ull  /* utilisation = busy share of the last second */

typedef struct {
    int32_t pid;                          /* 0 = free slot */
    uint32_t pad_;
    uint64_t start_time;                  /* /proc/<pid>/stat field 22: tells pid reuse apart */
    uint64_t used[EMU_MAX_DEVICES];       /* bytes charged for memory (granule multiples) */
    uint64_t busy_since[EMU_MAX_DEVICES]; /* CLOCK_MONOTONIC ns a running kernel began, or 0 */
    uint8_t ctx[EMU_MAX_DEVICES];         /* 1 while the process holds a context charge */
} emu_slot;

typedef struct {
    uint64_t start, end;
} emu_interval;

typedef struct {
    uint64_t magic;                       /* written last: a torn initialisation is not valid */
    uint32_t layout;                      /* sizeof(emu_state), so layouts never mix */
    uint32_t ndev;
    uint64_t generation;                  /* bumped by every re-initialisation */
    uint64_t ctx_charge, granularity;
    uint64_t total[EMU_MAX_DEVICES];
    unsigned char uuid[EMU_MAX_DEVICES][16];
    pthread_mutex_t lock;
    uint32_t busy_head[EMU_MAX_DEVICES];
    emu_interval busy[EMU_MAX_DEVICES][EMU_BUSY_RING];
    emu_slot slots[EMU_MAX_PROCS];
} emu_state;

typedef struct {
    emu_state *st;
    int slot;                             /* our slot, or -1 (NVML never registers) */
    pid_t pid;                            /* the process that registered `slot` */
} emu_shared;

/* Opens (creating or repairing) the state file named by want->state_path, adopting the file's
 * configuration into *got when live processes already use it with another one (and saying so
 * on stderr). With reg, also registers the calling process in a slot. Returns 0, or -1 with a
 * one-line reason in err. */
int emu_shared_attach(emu_shared *sh, const emu_config *want, emu_config *got, int reg,
                      char *err, size_t errlen);
void emu_shared_detach(emu_shared *sh);

/* After fork: the child forgets the parent's slot and takes its own. Returns 0 or -1. */
int emu_shared_reregister(emu_shared *sh);

/* Reads the current configuration (NVML calls it on every query). Returns 0 or -1. */
int emu_shared_config(emu_shared *sh, emu_config *cfg);

/* Charges bytes of device memory to this process: 0, or -1 when it does not fit. */
int emu_shared_charge(emu_shared *sh, unsigned dev, uint64_t bytes);
void emu_shared_uncharge(emu_shared *sh, unsigned dev, uint64_t bytes);

/* Takes / returns the process's context charge on dev: 0, or -1 when it does not fit. */
int emu_shared_ctx_acquire(emu_shared *sh, unsigned dev);
void emu_shared_ctx_release(emu_shared *sh, unsigned dev);

/* Bytes in use on dev (all live processes' memory and context charges). Returns 0 or -1. */
int emu_shared_used(emu_shared *sh, unsigned dev, uint64_t *used);

/* Kernel execution bracketing, for utilisation. */
void emu_shared_busy_begin(emu_shared *sh, unsigned dev);
void emu_shared_busy_end(emu_shared *sh, unsigned dev);
int emu_shared_utilization(emu_shared *sh, unsigned dev, unsigned *percent);

typedef struct {
    uint32_t pid;
    uint64_t used;                        /* context charge + memory */
} emu_proc_use;

/* Processes holding a context or memory on dev; returns how many (possibly more than max,
 * of which the first max are stored), or -1. */
int emu_shared_processes(emu_shared *sh, unsigned dev, emu_proc_use *out, int max);

uint64_t emu_now_ns(void);

#endif

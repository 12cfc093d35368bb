/* nvml_int.h — what the emulated NVML's files share: the library's state (the mapped shared
 * state, the device handles) and the checks every query starts with. */
#ifndef CONVGPU_EMU_NVML_INT_H
#define CONVGPU_EMU_NVML_INT_H

#pragma GCC visibility push(default)
#include "nvml_types.h"
#pragma GCC visibility pop

#include "config.h"
#include "shared.h"

#include <pthread.h>

struct nvmlDevice_st {
    unsigned index;
};

typedef struct {
    pthread_mutex_t lock;
    int refs;               /* atomic; nvmlInit/nvmlShutdown nest */
    int attached;           /* the mapping is kept after shutdown: other threads may race */
    emu_shared sh;
    struct nvmlDevice_st dev[EMU_MAX_DEVICES];
} emu_nvml;

extern emu_nvml g_nvml;

/* NVML_ERROR_UNINITIALIZED before nvmlInit; else the current configuration into *cfg. */
nvmlReturn_t emu_nvml_ready(emu_config *cfg);

/* Validates a handle against the current configuration; its physical index into *idx. */
nvmlReturn_t emu_nvml_device(nvmlDevice_t d, emu_config *cfg, unsigned *idx);

/* Reads CONVGPU_EMU_TOPOLOGY (nvml_topology.c) for a node of ndev GPUs, at the first nvmlInit;
 * 0, or -1 with the reason (file and line) in err. */
int emu_nvml_topology_load(unsigned ndev, char *err, size_t errlen);

#endif

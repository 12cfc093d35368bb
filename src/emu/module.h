/* module.h — what launches and graph kernel nodes share: telling a function handle's built-in
 * kernel, checking a grid, and copying the arguments out of kernelParams or `extra`. */
#ifndef CONVGPU_EMU_MODULE_H
#define CONVGPU_EMU_MODULE_H

#include "workq.h"

/* Kernel id (enum emu_kernel) of f if it is a function of a loaded module, else -1. Lock held. */
int emu_resolve_function(CUfunction f);

/* CUDA_ERROR_INVALID_VALUE for an empty grid or block, or one beyond the device's limits. */
CUresult emu_check_dims(unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                        unsigned bz, unsigned shmem);

/* The kernel's argument values, from exactly one of params and extra. */
CUresult emu_read_args(int kernel, void **params, void **extra, emu_kcall *out);

#endif

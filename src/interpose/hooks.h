/* hooks.h — what every hook_*.c file needs: the driver declarations (their prototypes are the
 * wrappers' prototypes) and the export marker. Built with -fvisibility=hidden, the library
 * exports exactly the functions defined with CG_EXPORT: the hooks.def symbols and dlsym. */
#ifndef CONVGPU_IP_HOOKS_H
#define CONVGPU_IP_HOOKS_H

#include "cuda_types.h"
#include "nvml_types.h"
#include "table.h"

#define CG_EXPORT __attribute__((visibility("default")))

#define CG_LIKELY(x) __builtin_expect(!!(x), 1)
#define CG_UNLIKELY(x) __builtin_expect(!!(x), 0)

#endif

/* image.h — what the emulator's cuModuleLoadData accepts: its own text format naming built-in
 * kernels, or PTX whose `.entry` names are built-in kernels (docs/EMULATOR.md). A real driver
 * also takes cubins and fatbins; the emulator cannot run their machine code. */
#ifndef CONVGPU_EMU_IMAGE_H
#define CONVGPU_EMU_IMAGE_H

#include <stddef.h>

#include "cuda_types.h"

#define EMU_IMAGE_MAGIC "convgpu-emu-module 1"
#define EMU_IMAGE_MAX   (1u << 20)

/* The newest PTX ISA the emulated driver (CUDA 13.0) compiles, as major * 10 + minor. */
#define EMU_PTX_ISA_MAX 90

/* The emulated devices' compute capability (major * 10 + minor): PTX for a newer target is
 * refused, as a real driver's JIT compiler refuses it. */
#define EMU_COMPUTE_CAPABILITY 80

enum emu_kernel { EMU_KERNEL_COMPLEMENT, EMU_KERNEL_SPIN, EMU_KERNEL_COUNT };

/* Name of a built-in kernel. */
const char *emu_kernel_name(int k);

/* Parses an image of at most len bytes (it must hold a NUL within them). On success returns
 * CUDA_SUCCESS and sets *mask to the built-in kernels it holds (1 << enum emu_kernel). A PTX
 * module may hold none (its other entries are not found by cuModuleGetFunction); a text image
 * must name at least one. Errors, as a real driver answers them:
 *   CUDA_ERROR_INVALID_IMAGE            neither format (or a broken text image)
 *   CUDA_ERROR_UNSUPPORTED_PTX_VERSION  `.version` newer than EMU_PTX_ISA_MAX
 *   CUDA_ERROR_INVALID_PTX              PTX without a valid `.version`/`.target`, or for a target
 *                                       newer than EMU_COMPUTE_CAPABILITY */
CUresult emu_image_parse(const char *image, size_t len, unsigned *mask);

#endif

/* image.h — the emulator's module image format: a NUL-terminated text naming built-in
 * kernels (docs/EMULATOR.md). A real driver would take a cubin, fatbin or PTX here. */
#ifndef CONVGPU_EMU_IMAGE_H
#define CONVGPU_EMU_IMAGE_H

#include <stddef.h>

#define EMU_IMAGE_MAGIC "convgpu-emu-module 1"
#define EMU_IMAGE_MAX   (1u << 20)

enum emu_kernel { EMU_KERNEL_COMPLEMENT, EMU_KERNEL_SPIN, EMU_KERNEL_COUNT };

/* Name of a built-in kernel. */
const char *emu_kernel_name(int k);

/* Parses an image of at most len bytes (it must hold a NUL within them). Returns a bit mask
 * of the kernels it names (1 << enum emu_kernel), or 0 if the image is invalid. */
unsigned emu_image_parse(const char *image, size_t len);

#endif

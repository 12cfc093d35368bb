/* fuzz_emuimage.c — libFuzzer harness for the emulated driver's module-image decoder: the bytes a
 * program passes to cuModuleLoadData (its text format or PTX). The decoder must never read past
 * `len` (no NUL within it is an error, not an over-read), must answer one of its documented
 * results, and a success must name only built-in kernels. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "image.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* Exactly `size` bytes, so ASan sees any read past them; a NUL (if any) is the fuzzer's. */
    char *image = malloc(size ? size : 1);
    if (!image)
        return 0;
    memcpy(image, data, size);
    unsigned mask = 0xdeadu;
    CUresult rc = emu_image_parse(image, size, &mask);
    switch (rc) {
    case CUDA_SUCCESS:
        if (mask >> EMU_KERNEL_COUNT)
            abort();
        if (!memchr(image, '\0', size))
            abort();
        break;
    case CUDA_ERROR_INVALID_IMAGE:
    case CUDA_ERROR_INVALID_PTX:
    case CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
        break;
    default:
        abort();
    }
    free(image);
    return 0;
}

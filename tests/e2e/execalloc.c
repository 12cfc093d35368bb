/* execalloc.c — allocates BYTES of device memory through the driver API, then execs PROGRAM
 * without freeing: the new image must find the old image's memory returned (the driver frees a
 * process's memory when its image is replaced, and so must convgpu's account).
 * Usage: execalloc BYTES PROGRAM [ARGS...]. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cuda_open.h"

int main(int argc, char **argv)
{
    if (argc < 3)
        return 1;
    void *h = cg_test_cuda_open("execalloc");
    PFN_cuMemAlloc_v2 alloc = h ? (PFN_cuMemAlloc_v2)dlsym(h, "cuMemAlloc_v2") : NULL;
    CUdeviceptr p;
    if (!alloc || alloc(&p, strtoull(argv[1], NULL, 10))) {
        fprintf(stderr, "execalloc: allocation before exec failed\n");
        return 1;
    }
    execv(argv[2], argv + 2);
    perror("execalloc: exec");
    return 1;
}

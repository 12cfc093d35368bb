/* gate_cheat.c — a tenant that ignores its compute gate: running under the interposer in a
 * container with a hard share, it opens its own gate in the ledger (writable by the container's
 * processes, docs/SECURITY.md) before every launch and keeps the device busy with 2 ms spin
 * kernels. The daemon's NVML measurement is not fooled: the container's debt grows until it is
 * reported (watchdog-over-share), which is what e2e.compute checks.
 * Usage: gate_cheat RELEASE_FILE: runs until RELEASE_FILE exists (or it is killed). */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cuda_open.h"
#include "ledger_map.h"

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    void *h = cg_test_cuda_open("gate_cheat");
    if (!h)
        return 1;
    PFN_cuLaunchKernel launch = (PFN_cuLaunchKernel)dlsym(h, "cuLaunchKernel");
    PFN_cuCtxSynchronize sync = (PFN_cuCtxSynchronize)dlsym(h, "cuCtxSynchronize");
    PFN_cuMemAlloc_v2 alloc = (PFN_cuMemAlloc_v2)dlsym(h, "cuMemAlloc_v2");
    CUfunction spin;
    CUdeviceptr p;
    /* An allocation opens the session, so the ledger is mapped. */
    if (!launch || !sync || !alloc || alloc(&p, 1 << 20) ||
        !(spin = cg_test_function(h, "gate_cheat", "convgpu-emu-module 1\nkernel spin\n", "spin"))) {
        fprintf(stderr, "gate_cheat: driver setup failed\n");
        return 1;
    }
    struct cg_ledger *l = cg_test_find_ledger();
    if (!l) {
        fprintf(stderr, "gate_cheat: no ledger mapped (not under convgpu?)\n");
        return 1;
    }
    unsigned long long us = 2000;
    void *params[] = {&us};
    printf("cheating=yes\n");
    fflush(stdout);
    while (access(argv[1], F_OK) != 0) {
        atomic_store(&l->compute.gate, CG_GATE_OPEN);
        if (launch(spin, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL) || sync())
            return 1;
    }
    return 0;
}

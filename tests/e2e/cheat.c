/* cheat.c — a tenant that lies to convgpu: running under the interposer, it allocates its limit,
 * then zeroes the use in its own ledger slot (the ledger is writable by the container's
 * processes, see docs/SECURITY.md) and allocates the limit again. The daemon's accounts are
 * fooled; NVML's per-process figure is not, which is what the watchdog test checks.
 * Usage: cheat BYTES RELEASE_FILE: holds both allocations until RELEASE_FILE exists (the test
 * releases it when it has seen what it looks for). Exit 0 when both allocations succeeded. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cuda_open.h"
#include "ledger_map.h"

int main(int argc, char **argv)
{
    if (argc != 3 || !*argv[2])
        return 1;
    size_t bytes = strtoull(argv[1], NULL, 10);
    void *h = cg_test_cuda_open("cheat");
    PFN_cuMemAlloc_v2 alloc = h ? (PFN_cuMemAlloc_v2)dlsym(h, "cuMemAlloc_v2") : NULL;
    CUdeviceptr a, b;
    if (!alloc || alloc(&a, bytes)) {
        fprintf(stderr, "cheat: first allocation failed\n");
        return 1;
    }
    struct cg_ledger *l = cg_test_find_ledger();
    if (!l) {
        fprintf(stderr, "cheat: no ledger mapped (not running under convgpu?)\n");
        return 1;
    }
    for (unsigned i = 0; i < CG_LEDGER_SLOTS; i++) {
        struct cg_ledger_slot *s = &l->slots[i];
        if (atomic_load(&s->pid) == (uint32_t)getpid()) {
            uint64_t w = atomic_load(&s->word);
            atomic_store(&s->word, cg_ledger_pack(cg_ledger_quota(w), 0));
        }
    }
    if (alloc(&b, bytes)) {
        fprintf(stderr, "cheat: second allocation refused\n");
        return 1;
    }
    printf("cheated\n");
    fflush(stdout);
    struct stat sb;
    while (stat(argv[2], &sb) != 0) {
        struct timespec ts = {0, 10 * 1000000L};
        nanosleep(&ts, NULL);
    }
    return 0;
}

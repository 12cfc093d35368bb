/* fuzz_topology.c — libFuzzer harness for the topology file's parser (common/topology_file.c),
 * which reads a file an operator points the daemon and the emulated NVML at. Whatever it
 * accepts must be a consistent topology: symmetric, nothing beyond the GPUs it names, no GPU
 * over NVML's NVLink count; whatever it refuses must say which line. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "topology_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static cg_topo t;
    char err[256] = "";
    if (cg_topo_parse((const char *)data, size, &t, err, sizeof err) != 0) {
        if (strncmp(err, "line ", 5) != 0)
            abort();
        return 0;
    }
    if (t.ngpus > CG_TOPO_MAX_GPUS)
        abort();
    for (unsigned a = 0; a < CG_TOPO_MAX_GPUS; a++) {
        if (cg_topo_links_of(&t, a) > CG_TOPO_MAX_LINKS)
            abort();
        for (unsigned b = 0; b < CG_TOPO_MAX_GPUS; b++) {
            if (t.path[a][b] != t.path[b][a] || t.nvlinks[a][b] != t.nvlinks[b][a])
                abort();
            if (a == b ? t.path[a][b] != 0 || t.nvlinks[a][b] != 0
                       : t.path[a][b] < CG_TOPO_SINGLE || t.path[a][b] > CG_TOPO_SYSTEM)
                abort();
            if ((a >= t.ngpus || b >= t.ngpus) &&
                (t.nvlinks[a][b] || (a != b && t.path[a][b] != CG_TOPO_SYSTEM)))
                abort();
        }
    }
    return 0;
}

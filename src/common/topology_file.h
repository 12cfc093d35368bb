/* topology_file.h — the topology file: how the GPUs of an emulated node are wired, read by the
 * emulated NVML (CONVGPU_EMU_TOPOLOGY) to answer the topology calls as a driver would, and by
 * convgpud (--topology) to refuse a bad file before anything starts. libc only.
 *
 * The format (docs/OPERATIONS.md, "Topology file"): one statement a line, `#` starts a comment,
 * GPUs are NVML indexes 0..63:
 *   nvlink A B [LINKS]   A and B joined by LINKS NVLinks (1..18, default 1)
 *   switch G G...        GPUs behind one PCIe switch            (NVML SINGLE, nvidia-smi PIX)
 *   multiswitch G G...   GPUs below several switches, no host bridge    (MULTIPLE, PXB)
 *   hostbridge G G...    GPUs under one PCIe host bridge                (HOSTBRIDGE, PHB)
 *   socket G G...        GPUs on one CPU socket / NUMA node             (NODE, NODE)
 * Two GPUs' PCIe path is the nearest group that holds both; in none, SYSTEM (SYS). NVLink is
 * separate, as in NVML: a pair can be NVLinked and on different switches. A GPU has at most 18
 * NVLinks in all (NVML_NVLINK_MAX_LINKS). */
#ifndef CONVGPU_TOPOLOGY_FILE_H
#define CONVGPU_TOPOLOGY_FILE_H

#include <stddef.h>
#include <stdint.h>

#define CG_TOPO_MAX_GPUS   64
#define CG_TOPO_MAX_LINKS  18            /* NVML_NVLINK_MAX_LINKS */
#define CG_TOPO_MAX_BYTES  (64 * 1024)

/* A PCIe path, nearest first, in the order of NVML's nvmlGpuTopologyLevel_t (INTERNAL is two
 * GPUs on one board, which a file cannot say). */
typedef enum {
    CG_TOPO_SINGLE = 1,
    CG_TOPO_MULTIPLE,
    CG_TOPO_HOSTBRIDGE,
    CG_TOPO_NODE,
    CG_TOPO_SYSTEM,
} cg_topo_path;

typedef struct {
    unsigned ngpus;                                      /* highest GPU named + 1; 0: none */
    uint8_t path[CG_TOPO_MAX_GPUS][CG_TOPO_MAX_GPUS];    /* cg_topo_path; a == b: 0 */
    uint8_t nvlinks[CG_TOPO_MAX_GPUS][CG_TOPO_MAX_GPUS]; /* NVLinks between a and b */
} cg_topo;

/* Parses `len` bytes of text (need not be NUL-terminated). 0, or -1 with "line N: what is
 * wrong" in err; *out is filled only on success. */
int cg_topo_parse(const char *text, size_t len, cg_topo *out, char *err, size_t errlen);

/* Reads and parses the file at `path` (a regular file of at most CG_TOPO_MAX_BYTES); errors
 * are "PATH: reason" or "PATH:N: what is wrong". */
int cg_topo_load(const char *path, cg_topo *out, char *err, size_t errlen);

/* The NVLinks GPU a has in all. */
unsigned cg_topo_links_of(const cg_topo *t, unsigned a);

#endif

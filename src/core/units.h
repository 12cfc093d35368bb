/* units.h — GPU resources cut into units that kubelet can count, and which units a container
 * should get.
 *
 * kubelet counts an extended resource as a set of device IDs. convgpu advertises three resources
 * per node: convgpu.io/gpu-memory, one ID per memory unit (256 MiB by default),
 * convgpu.io/gpu-compute, one ID per 1% of one GPU's time, and convgpu.io/gpu, a few slots per
 * GPU (the plugin's --gpu-slots) through which a container asks for several GPUs. An ID names
 * its GPU and its unit: `gpu<INDEX>-mem-<N>`, `gpu<INDEX>-compute-<N>`, `gpu<INDEX>-slot-<N>`
 * (INDEX = convgpud's device index, N counts from 0). Units of one GPU are interchangeable: N is
 * only a name, not an address range.
 *
 * Follow one pod: kubelet asks the device plugin's GetPreferredAllocation which `size` of the IDs
 * still free it would rather give, then calls Allocate with the IDs it chose.
 * - Memory and compute (cg_units_prefer): a one-GPU container's units should come from one GPU,
 *   so the preference is one GPU, chosen to leave the least fragmentation: the GPU that can hold
 *   the request with the fewest free units left over (best fit), so that large requests still
 *   find a GPU with room; ties go to the lower index, so the choice is deterministic. When no
 *   single GPU has `size` (a multi-GPU container's units are counted as its total over its GPUs,
 *   or kubelet's view is fragmented), the units are taken from as few GPUs as possible. These
 *   IDs are kubelet's count; where the container runs is the daemon's decision (and, for several
 *   GPUs, the slots').
 * - Slots (cg_units_prefer_gpus): `size` slots on `size` distinct GPUs, the set that talks
 *   fastest (closest.h: least sum of pairwise link costs), ties to the GPUs with the most free
 *   slots, then the lower index: GaiaGPU's rule for a request of several GPUs.
 *
 * Pure functions: no I/O, no globals (cg_units_prefer allocates its working space). Inputs are
 * trusted; the plugin validates IDs where they enter (cg_unit_id_parse is that check).
 */
#ifndef CONVGPU_CORE_UNITS_H
#define CONVGPU_CORE_UNITS_H

#include <stddef.h>
#include <stdint.h>

typedef enum { CG_UNIT_MEMORY, CG_UNIT_COMPUTE, CG_UNIT_SLOT } cg_unit_kind;

/* kubelet limits a device ID to 63 characters; ours are far shorter. */
#define CG_UNIT_ID_MAX 64
/* Bounds that keep every ID short and every count small enough to list. */
#define CG_UNIT_MAX_GPU 1023u
#define CG_UNIT_MAX_PER_GPU 1000000u

typedef struct {
    unsigned gpu; /* convgpud's device index */
    unsigned n;   /* the unit's number on that GPU */
} cg_unit;

/* Writes the ID of a unit into buf. Returns its length, or -1 when it does not fit or a number is
 * out of bounds. */
int cg_unit_id_format(char *buf, size_t len, cg_unit_kind kind, cg_unit u);

/* Parses an ID strictly: `gpu`, a decimal index without leading zeros (<= CG_UNIT_MAX_GPU),
 * `-mem-`, `-compute-` or `-slot-`, a decimal unit number without leading zeros (< CG_UNIT_MAX_PER_GPU),
 * nothing else. Returns 0, or -1 for anything else. */
int cg_unit_id_parse(const char *id, cg_unit_kind *kind, cg_unit *u);

/* How many memory units a GPU offers: whole units of its assignable capacity. */
unsigned cg_units_of_memory(uint64_t capacity, uint64_t unit_bytes);

/* Why a preference could not be made. */
typedef enum {
    CG_PREFER_OK = 0,
    CG_PREFER_SPLIT_MUST,   /* slots: two of the must-include slots are on one GPU */
    CG_PREFER_TOO_FEW_MUST, /* more units must be included than the request's size */
    CG_PREFER_NO_GPU,       /* slots: fewer than `size` GPUs have an available slot */
    CG_PREFER_NO_MEMORY,    /* its working space could not be allocated */
} cg_prefer_result;

/* Chooses `size` of the available units, including every unit in must (each of which is also
 * in avail; avail holds no duplicates, size <= navail): all on one GPU when one can hold them
 * with the must units (the one with the fewest available units left over; ties: the lower
 * index), the must units first, then that GPU's others by ascending number. When none can,
 * from as few GPUs as possible: the must units first, then the GPUs with the most available
 * units, each by ascending number. Writes the chosen units' positions in avail into out (size
 * entries, out has room for size). O(navail log navail) at worst; allocates its working space. */
cg_prefer_result cg_units_prefer(const cg_unit *avail, size_t navail, const cg_unit *must,
                                 size_t nmust, size_t size, size_t *out);

/* How expensive talking between two GPUs (by index) is: cg_link_cost of their link level. */
typedef unsigned (*cg_gpu_cost_fn)(const void *ctx, unsigned gpu_a, unsigned gpu_b);

/* Chooses `size` of the available slots on `size` distinct GPUs, including the must slots (on
 * distinct GPUs, each also in avail): the GPUs with an available slot whose set has the least
 * sum of pairwise costs (ties: the GPUs with the most available slots, then the lower index);
 * on each, the must slot or else its lowest-numbered one. Writes positions in avail into out
 * (size entries), in ascending GPU order. size <= navail, size <= CG_UNIT_MAX_GANG. */
#define CG_UNIT_MAX_GANG 64
cg_prefer_result cg_units_prefer_gpus(const cg_unit *avail, size_t navail, const cg_unit *must,
                                      size_t nmust, size_t size, cg_gpu_cost_fn cost,
                                      const void *ctx, size_t *out);

#endif

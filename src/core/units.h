/* units.h — GPU resources cut into units that kubelet can count, and which units a container
 * should get.
 *
 * kubelet counts an extended resource as a set of device IDs. convgpu advertises two resources per
 * node: convgpu.io/gpu-memory, one ID per memory unit (256 MiB by default), and
 * convgpu.io/gpu-compute, one ID per 1% of one GPU's time. An ID names its GPU and its unit:
 * `gpu<INDEX>-mem-<N>` and `gpu<INDEX>-compute-<N>` (INDEX = convgpud's device index, N counts
 * from 0). Units of one GPU are interchangeable: N is only a name, not an address range.
 *
 * Follow one pod: kubelet asks the device plugin's GetPreferredAllocation which `size` of the IDs
 * still free it would rather give, then calls Allocate with the IDs it chose. A container's units
 * must all come from one GPU (the daemon fences a container on one GPU), so the preference is one
 * GPU, chosen to leave the least fragmentation: the GPU that can hold the request with the fewest
 * free units left over (best fit), so that large requests still find a GPU with room. Ties go to
 * the lower index, so the choice is deterministic.
 *
 * Pure functions: no I/O, no globals. Inputs are trusted; the plugin validates IDs where they
 * enter (cg_unit_id_parse is that check).
 */
#ifndef CONVGPU_CORE_UNITS_H
#define CONVGPU_CORE_UNITS_H

#include <stddef.h>
#include <stdint.h>

typedef enum { CG_UNIT_MEMORY, CG_UNIT_COMPUTE } cg_unit_kind;

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
 * `-mem-` or `-compute-`, a decimal unit number without leading zeros (< CG_UNIT_MAX_PER_GPU),
 * nothing else. Returns 0, or -1 for anything else. */
int cg_unit_id_parse(const char *id, cg_unit_kind *kind, cg_unit *u);

/* How many memory units a GPU offers: whole units of its assignable capacity. */
unsigned cg_units_of_memory(uint64_t capacity, uint64_t unit_bytes);

/* Why a preference could not be made. */
typedef enum {
    CG_PREFER_OK = 0,
    CG_PREFER_SPLIT_MUST,   /* the units that must be included lie on more than one GPU */
    CG_PREFER_TOO_FEW_MUST, /* more units must be included than the request's size */
    CG_PREFER_NO_GPU,       /* no single GPU has `size` available units (with the must ones) */
} cg_prefer_result;

/* Chooses `size` of the available units, all on one GPU, including every unit in must (each of
 * which is also in avail): on the GPU that can hold them with the fewest available units left over
 * (ties: the lower index); the must units first, then that GPU's others by ascending number.
 * Writes the chosen units' positions in avail into out (size entries, out has room for size).
 * avail holds no duplicates. */
cg_prefer_result cg_units_prefer(const cg_unit *avail, size_t navail, const cg_unit *must,
                                 size_t nmust, size_t size, size_t *out);

#endif

/* place_load_balance.c — load-balance (seed 003, Figure 4(a)): among the devices that fit the
 * container, the one whose containers' utilisations sum least, so applications that keep the
 * GPU busy land apart and a busy one lands beside idle ones. Ties go to the most room, then to
 * the lowest index. A container's utilisation is its application's measured utilisation alone
 * (cg_container_spec.util_pct); one nothing is known of counts its hard share, else 0
 * (cg_container_load). The paper also submits the busiest application first; that order is the
 * caller's (the simulator's coexec-table4 does it), placement sees one container at a time. */
#include "internal.h"

static int pick(const cg_core *core, const cg_container_spec *spec, unsigned hard)
{
    unsigned sums[CG_MAX_DEVICES];
    cg_place_loads(core, sums);
    return cg_place_least_load(core, sums, spec->limit, hard);
}

const struct cg_place_ops cg_place_load_balance = {"load-balance", pick};

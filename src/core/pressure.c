/* pressure.c — the penalty of joining a pressed GPU (the rule and its invariants are in
 * pressure.h). Integer arithmetic only; every ratio is bounded before it is scaled, so nothing
 * overflows whatever the (untrusted, annotation-borne) inputs. */
#include "pressure.h"

#include <stddef.h>

/* part / whole in permille, 0..1000 (whole > 0; part may exceed whole: capped). */
static uint32_t pm(uint64_t part, uint64_t whole)
{
    if (part >= whole)
        return CG_PRESSURE_MAX;
    /* part < whole: part * 1000 overflows only above 2^54 bytes; scale both down first. */
    while (part > UINT64_MAX / CG_PRESSURE_MAX) {
        part >>= 1;
        whole >>= 1;
    }
    return (uint32_t)(part * CG_PRESSURE_MAX / whole);
}

static uint32_t cap(uint64_t v)
{
    return v > CG_PRESSURE_MAX ? CG_PRESSURE_MAX : (uint32_t)v;
}

uint32_t cg_pressure_penalty(const cg_gpu_pressure *p, const cg_pressure_need *n,
                             cg_pressure_parts *parts)
{
    cg_pressure_parts x = {0};
    if (p && p->known) {
        uint64_t need = n ? n->bytes : 0;
        if (need > 0) {
            uint64_t shortfall = need > p->free_bytes ? need - p->free_bytes : 0;
            uint64_t uncovered = shortfall > p->swap_left_bytes ? shortfall - p->swap_left_bytes
                                                                : 0;
            x.memory = (pm(shortfall, need) + pm(uncovered, need)) / 2;
        }
        uint64_t waits = (uint64_t)(p->waiting > CG_PRESSURE_MAX ? CG_PRESSURE_MAX : p->waiting) *
                         CG_PRESSURE_WAIT_PM;
        if (p->waiting > 0)
            waits += pm(p->waited_s, CG_PRESSURE_WAIT_HORIZON_S);
        x.waiting = cap(waits);
        x.compute = cap((uint64_t)(p->compute_load_pct > 100 ? 100 : p->compute_load_pct) * 10);
        x.interference = p->slowdown_milli > 1000 ? cap(p->slowdown_milli - 1000u) : 0;
    }
    if (parts)
        *parts = x;
    return (40u * x.memory + 30u * x.waiting + 10u * x.compute + 20u * x.interference) / 100u;
}

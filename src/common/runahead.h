/* runahead.h — how much launched, unfinished work a launching thread in a container with a
 * compute share keeps ahead of the device: the interposer's bound (src/interpose/gate.c says
 * why and how), stated once so that the simulator's model of it (src/sim/compute_cli.c) is the
 * same rule. */
#ifndef CONVGPU_RUNAHEAD_H
#define CONVGPU_RUNAHEAD_H

#include <stdint.h>

#define CG_RUNAHEAD_MARK_NS 5000000ull                  /* device work per mark; two ahead */
#define CG_RUNAHEAD_ONE_NS  CG_RUNAHEAD_MARK_NS         /* launches this long: one queued */
#define CG_RUNAHEAD_NONE_NS (2 * CG_RUNAHEAD_MARK_NS)   /* this long: none (the next waits) */

/* Launches queued behind the running one, for launches of launch_ns each: two marks' worth
 * (at least 2), one, or none. */
static inline unsigned cg_runahead_queued(uint64_t launch_ns)
{
    if (launch_ns >= CG_RUNAHEAD_NONE_NS)
        return 0;
    if (launch_ns >= CG_RUNAHEAD_ONE_NS)
        return 1;
    uint64_t q = launch_ns ? 2 * CG_RUNAHEAD_MARK_NS / launch_ns : 2;
    return q > 2 ? (unsigned)q : 2;
}

#endif

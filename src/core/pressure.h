/* pressure.h — how hard a GPU is pressed right now, and what that costs a container that would
 * join it: the part of placement that counts units cannot see (issue 37 item 3). Pure: the
 * caller brings the numbers and the clock's reading; the scheduler extender (through
 * cluster_fit.c) and the simulator use the same function.
 *
 * Why units are not enough: with convgpud --oversubscribe F, a GPU promises F x its memory,
 * so "free units" says what kubelet may still send, not whether a container sent now would
 * run. Two GPUs with the same free units differ when one of them already has containers
 * waiting for memory, has its memory handed out, has no swap budget left to absorb a collision,
 * or is busy computing, or runs an application the newcomer is known to slow down (seed 003).
 *
 * Follow one GPU: the publisher (`convgpu k8s publish`) reads the daemon's live state into the
 * GPU's "pressure" (physical capacity and free bytes, containers waiting and since when, the
 * node's swap budget left, measured compute load) and the slowdowns the stored interference
 * matrix gives for each application that might join; the extender fills a cg_gpu_pressure
 * from it for this pod (its need, its application's slowdown) and cg_pressure_penalty() turns
 * it into a penalty in permille. cluster_fit.c scales each GPU's goodness by (1000 - penalty)
 * / 1000, so an unpressed GPU ranks as before and pressure ranks GPUs with equal units.
 *
 * The rule (each part 0..1000, "pm"):
 *   memory    the share of the need that is not free on the device now (short), and the share
 *             that the node's swap budget left could not absorb either (uncovered):
 *             (short_pm + uncovered_pm) / 2. A container that fits now costs 0; one that
 *             would wait for all its memory with no swap to help costs 1000.
 *   waiting   CG_PRESSURE_WAIT_PM per container waiting on it, plus 1000 per
 *             CG_PRESSURE_WAIT_HORIZON_S the oldest has waited, capped at 1000: a queue that
 *             is long or old is a queue the newcomer joins.
 *   compute   the measured load, 0..100 %, as pm.
 *   interference  (slowdown - 1) in pm, capped at 1000: a measured 1.3x costs 300, 2x or
 *             worse 1000. Unknown (0) or no slowdown costs 0.
 *   penalty = (40 x memory + 30 x waiting + 10 x compute + 20 x interference) / 100, so
 *   0..1000, integers only (the same answer on every machine). Memory and waiting weigh most
 *   because they are the ones that make the newcomer wait; compute and interference slow it.
 *
 * Invariants (tests/core/test_pressure.c, a table): a GPU without pressure (known false) costs
 * 0; the penalty never exceeds 1000; it never falls when any one input worsens (less free,
 * more waiting, longer waits, less swap left, more load, more slowdown). */
#ifndef CONVGPU_CORE_PRESSURE_H
#define CONVGPU_CORE_PRESSURE_H

#include <stdbool.h>
#include <stdint.h>

#define CG_PRESSURE_MAX 1000u
#define CG_PRESSURE_WAIT_PM 200u          /* per container waiting */
#define CG_PRESSURE_WAIT_HORIZON_S 300u   /* the oldest wait that counts as full pressure */

typedef struct {
    bool known;                 /* false: nothing published; the GPU costs 0 */
    uint64_t capacity_bytes;    /* physical memory the containers share */
    uint64_t free_bytes;        /* of it, not assigned to any container now */
    unsigned waiting;           /* containers waiting for memory on it now */
    uint64_t waited_s;          /* how long the oldest of them has waited */
    uint64_t swap_left_bytes;   /* the node's swap budget not taken (0: swap off or spent) */
    unsigned compute_load_pct;  /* measured utilisation, 0..100 */
    uint32_t slowdown_milli;    /* the newcomer's application beside the residents (seed 003's
                                 * matrix): 1000 = none; 0 = unknown */
} cg_gpu_pressure;

/* What the newcomer needs of the GPU. */
typedef struct {
    uint64_t bytes;             /* its memory limit on this GPU */
} cg_pressure_need;

/* The parts, for a caller that explains its choice; each 0..CG_PRESSURE_MAX. */
typedef struct {
    uint32_t memory, waiting, compute, interference;
} cg_pressure_parts;

/* The penalty 0..CG_PRESSURE_MAX of joining a GPU under pressure p with need n; parts (may be
 * NULL) gets the parts. */
uint32_t cg_pressure_penalty(const cg_gpu_pressure *p, const cg_pressure_need *n,
                             cg_pressure_parts *parts);

#endif

/* closest.h — which n of a node's GPUs talk fastest together: the set search shared by the
 * daemon's placement of a multi-GPU container (topology.c, cg_place_devices) and the device
 * plugin's choice of GPU slots for one (units.c, cg_units_prefer_gpus).
 *
 * The candidates come ranked (most preferred first) and a pair cost says how expensive talking
 * between two of them is (cg_link_cost of their link level). The search returns the n-subset
 * with the least sum of pairwise costs; among equal sums the one whose members come earliest
 * in the ranking. Exhaustive while there are at most CG_CLOSEST_EXHAUSTIVE_MAX subsets, else
 * greedy from every seed (closest.c says how, and what it can miss). Pure: no I/O, no globals. */
#ifndef CONVGPU_CORE_CLOSEST_H
#define CONVGPU_CORE_CLOSEST_H

#define CG_CLOSEST_MAX 64              /* candidates at most (a node's GPUs) */
#define CG_CLOSEST_EXHAUSTIVE_MAX 20000u /* subsets tried one by one at most */

/* The cost of the pair (a, b) of candidate values; ctx is the caller's. */
typedef unsigned (*cg_pair_cost_fn)(const void *ctx, unsigned a, unsigned b);

/* rank[0..m): candidate values, most preferred first, no repeats; the first nfixed are in every
 * set considered (a choice that must include them). Writes the chosen n values to out in
 * ranking order. Requires 1 <= n <= m <= CG_CLOSEST_MAX and nfixed <= n. */
void cg_closest_set(const unsigned *rank, unsigned m, unsigned nfixed, unsigned n,
                    cg_pair_cost_fn cost, const void *ctx, unsigned *out);

#endif

/* placement.c — the placement-policy table. Adding one is a file defining its
 * `struct cg_place_ops` plus one line here (and its enum value). */
#include "internal.h"

extern const struct cg_place_ops cg_place_first_fit, cg_place_least_loaded, cg_place_binpack,
    cg_place_load_balance, cg_place_standalone, cg_place_interference;

const struct cg_place_ops *const cg_place_table[CG_PLACE__COUNT] = {
    [CG_PLACE_FIRST_FIT] = &cg_place_first_fit,
    [CG_PLACE_LEAST_LOADED] = &cg_place_least_loaded,
    [CG_PLACE_BINPACK] = &cg_place_binpack,
    [CG_PLACE_LOAD_BALANCE] = &cg_place_load_balance,
    [CG_PLACE_STANDALONE] = &cg_place_standalone,
    [CG_PLACE_INTERFERENCE] = &cg_place_interference,
};

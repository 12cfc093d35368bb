/* paper.c — the papers' measured results: seed 000's Tables IV and V, rows FIFO, BF, RU, Rand,
 * columns N = 4, 6, ..., 38, and seed 001's Figures 15 and 16; used for side-by-side output,
 * plots and calibration. */
#include "sim.h"

const double sim_paper_finished[4][SIM_PAPER_NS] = {
    {67.6, 134.1, 111.9, 159.3, 103.6, 155.4, 198.4, 339.8, 262.4, 266.6, 242.8, 362.1, 455.8,
     414.1, 423.1, 566.4, 507.9, 593.8},
    {68.2, 134.0, 110.9, 158.8, 104.0, 159.5, 195.9, 318.4, 281.1, 257.2, 241.8, 345.9, 426.0,
     368.0, 405.2, 537.5, 501.0, 588.7},
    {68.4, 134.5, 112.5, 159.0, 106.5, 157.7, 197.9, 342.1, 271.3, 267.8, 253.5, 386.4, 453.6,
     403.7, 436.4, 555.8, 526.2, 591.0},
    {69.1, 133.9, 111.8, 159.1, 103.6, 155.2, 196.7, 344.8, 277.2, 275.8, 251.8, 386.7, 452.7,
     393.7, 432.1, 553.4, 529.9, 620.4},
};

const double sim_paper_suspended[4][SIM_PAPER_NS] = {
    {2.4, 33.7, 35.7, 27.2, 19.2, 38.1, 45.6, 90.4, 72.2, 77.6, 58.1, 72.6, 135.8, 132.5, 115.3,
     162.5, 157.1, 182.7},
    {2.4, 36.2, 21.7, 34.3, 17.5, 44.4, 44.9, 113.3, 84.8, 80.4, 57.3, 88.5, 175.7, 150.1, 131.3,
     205.3, 181.6, 289.4},
    {2.4, 35.6, 31.2, 28.1, 20.0, 37.7, 51.3, 88.9, 76.6, 75.2, 56.7, 80.9, 117.4, 122.9, 95.3,
     170.9, 154.6, 182.6},
    {2.4, 32.0, 23.6, 27.3, 19.4, 37.5, 44.0, 76.5, 75.5, 78.4, 60.5, 67.9, 129.4, 127.5, 118.1,
     165.3, 175.8, 174.2},
};

int sim_paper_col(unsigned n)
{
    return n >= 4 && n <= 38 && n % 2 == 0 ? (int)(n - 4) / 2 : -1;
}

/* Seed 001, Section 4.2.1: homogeneous static fair share "approximately 3376 s", adaptive "about
 * 2901 s" ("16.37%" = 3376 / 2901 - 1); default only "the longest", heterogeneous no figures. */
const double sim_fig15_makespan[2][SIM_SHARE__COUNT] = {
    [0] = {[SIM_SHARE_DEFAULT] = -1, [SIM_SHARE_NONE] = -1, [SIM_SHARE_STATIC] = 3376,
           [SIM_SHARE_ADAPTIVE] = 2901},
    [1] = {-1, -1, -1, -1},
};

/* Section 4.2.2: adaptive "shows 67.43% and 22.54% higher memory utilization when compared with
 * two conditions [default, static] in homogeneous workload environment, 77% and 24.7% in
 * heterogeneous". */
const double sim_fig16_adaptive_over[2][SIM_SHARE__COUNT] = {
    [0] = {[SIM_SHARE_DEFAULT] = 1.6743, [SIM_SHARE_NONE] = -1, [SIM_SHARE_STATIC] = 1.2254,
           [SIM_SHARE_ADAPTIVE] = 1},
    [1] = {[SIM_SHARE_DEFAULT] = 1.77, [SIM_SHARE_NONE] = -1, [SIM_SHARE_STATIC] = 1.247,
           [SIM_SHARE_ADAPTIVE] = 1},
};

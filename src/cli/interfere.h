/* interfere.h — the results of `convgpu interfere` and their reports (table, CSV, SVG heatmap):
 * per workload its wall times alone, per ordered pair (foreground, background) the foreground's
 * wall times with the background running beside it, and the slowdowns they make. */
#ifndef CONVGPU_INTERFERE_H
#define CONVGPU_INTERFERE_H

#include <stdio.h>

#define INTERFERE_MAX_WORKLOADS 16
#define INTERFERE_MAX_RUNS 50

typedef struct {
    unsigned n;                 /* workloads */
    unsigned runs;              /* rounds measured */
    char *const *cmd;           /* n shell command lines */
    const char *const *key;     /* n profile keys (distinct) */
    double alone[INTERFERE_MAX_WORKLOADS][INTERFERE_MAX_RUNS]; /* seconds */
    double together[INTERFERE_MAX_WORKLOADS][INTERFERE_MAX_WORKLOADS][INTERFERE_MAX_RUNS];
} interfere_results;

/* The median of v[0..n-1] (n >= 1; v is not changed). */
double interfere_median(const double *v, unsigned n);
/* Foreground fg's median wall time beside bg over its median alone. */
double interfere_slowdown(const interfere_results *r, unsigned fg, unsigned bg);

void interfere_print_table(FILE *f, const interfere_results *r);
/* A header, then one line per ordered pair: foreground,background (W1..Wn),runs,
 * alone_median_s,together_median_s,slowdown,foreground_command,background_command,
 * foreground_key,background_key (RFC 4180 quoting). Written to PATH.tmp and renamed. Returns 0,
 * or -1 when it could not be written. */
int interfere_write_csv(const char *path, const interfere_results *r);
/* A heatmap, foreground rows x background columns, the slowdown written in each cell and a
 * legend naming the commands. Plain SVG 1.1. Returns 0 or -1. */
int interfere_write_svg(const char *path, const interfere_results *r);

#endif

/* interference.h — one measured interference row, as the store keeps it (store.h) and the
 * control API reads and writes it (api_interference.h, which says how a matrix is measured and
 * sent): how much the foreground workload slows down beside the background one, both profile
 * keys. Here, below the API, so that the store needs nothing of the API's. */
#ifndef CONVGPUD_INTERFERENCE_H
#define CONVGPUD_INTERFERENCE_H

#include <stdint.h>

#include "profile_key.h"

#define INTERFERENCE_MAX_ROWS 256          /* per request: 16 workloads, every ordered pair */
#define INTERFERENCE_MAX_TENANT_ROWS 4096  /* per tenant, stored */
#define INTERFERENCE_SLOWDOWN_MAX 1000.0   /* exclusive: a thousandfold slowdown is a typo */
#define INTERFERENCE_RUNS_MAX 1000

struct interference_row {
    char foreground[CG_PROFILE_KEY_MAX + 1];
    char background[CG_PROFILE_KEY_MAX + 1];
    double slowdown;        /* foreground's time beside background over its time alone */
    unsigned runs;          /* rounds the figure is the median of */
    int64_t measured_unix;  /* set by the daemon when stored */
};

#endif

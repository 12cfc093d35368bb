/* ledger_map.h — for test programs that play a tenant: where this process has its container's
 * ledger mapped (the interposer maps the sealed memfd it got in WELCOME). Header-only. */
#ifndef CONVGPU_TEST_LEDGER_MAP_H
#define CONVGPU_TEST_LEDGER_MAP_H

#include <stdio.h>
#include <string.h>

#include "ledger.h"

/* The mapped ledger, or NULL when this process has none (not under convgpu, no session yet). */
static inline struct cg_ledger *cg_test_find_ledger(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[1024];
    void *addr = NULL;
    while (f && fgets(line, sizeof line, f)) {
        unsigned long lo;
        if (strstr(line, "/memfd:" CG_LEDGER_MEMFD_PREFIX) && sscanf(line, "%lx-", &lo) == 1)
            addr = (void *)lo;
    }
    if (f)
        fclose(f);
    return addr;
}

#endif

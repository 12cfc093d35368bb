/* nvml_util.c — utilisation as NVML reports it, from the device's sample periods (shared.h):
 * nvmlDeviceGetUtilizationRates is the busy share of the last completed period;
 * nvmlDeviceGetProcessUtilization gives one sample per (process, completed period) in which
 * the process ran, smUtil its busy percent of the period, timeStamp the period's end in
 * microseconds of CLOCK_REALTIME, for samples newer than the caller's lastSeenTimeStamp. A
 * sample is final when first reported, so summing smUtil x period over the samples a reader
 * collects gives the device time each process used (to within the rounding to percent). */
#include "nvml_int.h"

#include "pidns.h"

#include <stdlib.h>
#include <string.h>

_Static_assert(sizeof(nvmlProcessUtilizationSample_t) == 32, "NVML's sample layout");

nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t d, nvmlUtilization_t *u)
{
    emu_config cfg;
    unsigned i, pct;
    nvmlReturn_t rc = emu_nvml_device(d, &cfg, &i);
    if (rc != NVML_SUCCESS)
        return rc;
    if (!u)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (emu_shared_utilization(&g_nvml.sh, i, &pct) != 0)
        return NVML_ERROR_UNKNOWN;
    u->gpu = pct;
    u->memory = 0; /* the built-in kernels model compute, not memory traffic */
    return NVML_SUCCESS;
}

/* Pids of one call's samples: each process is looked up once. */
#define EMU_PID_MEMO 64

typedef struct {
    emu_ident who;
    unsigned pid;
} pid_memo;

static unsigned report_pid(pid_memo *memo, unsigned *n, const emu_ident *who)
{
    for (unsigned i = 0; i < *n; i++)
        if (!memcmp(&memo[i].who, who, sizeof *who))
            return memo[i].pid;
    unsigned pid = emu_ident_report_pid(who);
    if (*n < EMU_PID_MEMO)
        memo[(*n)++] = (pid_memo){*who, pid};
    return pid;
}

nvmlReturn_t nvmlDeviceGetProcessUtilization(nvmlDevice_t d,
                                             nvmlProcessUtilizationSample_t *utilization,
                                             unsigned int *processSamplesCount,
                                             unsigned long long lastSeenTimeStamp)
{
    emu_config cfg;
    unsigned i;
    nvmlReturn_t rc = emu_nvml_device(d, &cfg, &i);
    if (rc != NVML_SUCCESS)
        return rc;
    if (!processSamplesCount)
        return NVML_ERROR_INVALID_ARGUMENT;
    emu_sample *v;
    size_t n;
    emu_timebase tb;
    if (emu_shared_samples(&g_nvml.sh, i, 0, &v, &n, &tb) != 0)
        return NVML_ERROR_UNKNOWN;
    /* Keep the samples newer than lastSeen, in place. */
    size_t m = 0;
    for (size_t k = 0; k < n; k++) {
        unsigned long long ts = (tb.epoch_real + (v[k].period + 1) * tb.sample_ns) / 1000u;
        if (ts > lastSeenTimeStamp) {
            v[m] = v[k];
            v[m].period = ts; /* from here on: the timestamp */
            m++;
        }
    }
    if (m == 0) {
        *processSamplesCount = 0;
        rc = NVML_ERROR_NOT_FOUND;
    } else if (!utilization || *processSamplesCount < m) {
        *processSamplesCount = (unsigned)m;
        rc = NVML_ERROR_INSUFFICIENT_SIZE;
    } else {
        pid_memo memo[EMU_PID_MEMO];
        unsigned nmemo = 0;
        for (size_t k = 0; k < m; k++) {
            uint64_t pct = (v[k].busy_ns * 100 + tb.sample_ns / 2) / tb.sample_ns;
            utilization[k] = (nvmlProcessUtilizationSample_t){
                .pid = report_pid(memo, &nmemo, &v[k].who),
                .timeStamp = v[k].period,
                .smUtil = pct > 100 ? 100u : (unsigned)pct,
            };
        }
        *processSamplesCount = (unsigned)m;
    }
    free(v);
    return rc;
}

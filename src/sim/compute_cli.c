/* compute_cli.c — `convgpu sim compute`: containers with compute shares on the simulated
 * time-shared GPU (gpu_time.h), driven by the real controller; prints each container's share of
 * the device per window, and the worst distance from its share.
 *
 *   convgpu sim compute --containers 30:hard,70:hard [--kernel-us 1000] [--depth 2]
 *                       [--seconds 60] [--window-s 10] [--start 0,19] [--slice-us 1024]
 * An entry may name its own launch pattern, SHARE:MODE:KERNEL_US:SYNC_EVERY:HOST_US (a loop that
 * synchronises after every SYNC_EVERY kernels and turns around on the host in HOST_US), as
 * bench/compute.sh's matrix runs them on the emulated GPU; the last lines give each container's
 * mean share and the device's mean idle time from --judge-from on, to compare with its figures.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_time.h"
#include "runahead.h"
#include "sim.h"

static int bad(const char *what, const char *v)
{
    fprintf(stderr, "convgpu sim compute: bad %s '%s'\n", what, v ? v : "");
    return 2;
}

static int num(const char *s, unsigned long long lo, unsigned long long hi, unsigned long long *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (!*s || s[0] == '-' || errno || *end || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: convgpu sim compute --containers SHARE:MODE[,...] [options]\n"
               "Simulates containers with compute shares on one time-shared GPU, with the\n"
               "daemon's controller (src/core/compute.c), and prints shares per window.\n"
               "  --containers L  e.g. 30:hard,70:elastic (share 0: no limit); at most 16;\n"
               "                  an entry SHARE:MODE:KERNEL_US:SYNC_EVERY:HOST_US gives its own\n"
               "                  pattern: kernel length, a synchronisation after every SYNC_EVERY\n"
               "                  kernels (0: never) and the host's turnaround after each\n"
               "  --kernel-us N   kernel length (default 1000)\n"
               "  --depth D       kernels each keeps queued (default 2; 0: none, each launch\n"
               "                  waits for the last kernel to end)\n"
               "  --seconds S     simulated time (default 60)\n"
               "  --window-s W    window length (default 10)\n"
               "  --start L       seconds at which each container starts, e.g. 0,19\n"
               "  --judge-from S  the mean lines count windows from S seconds on (default:\n"
               "                  the first full window after the last start)\n"
               "  --sample-delay-ms D  a period's sample is seen D ms after it ends\n"
               "                  (default 0; the emulated GPU: 41, a quarter period)\n"
               "  --slice-us N    a container's turn on the device while others have work\n"
               "                  (default 1024, the emulated GPU's; 0: turns of one kernel)\n"
               "  --step-ms N     the controller's period (default 25, the daemon's)\n"
               "  --burst-ms N    credit a container may bank (default 50, the daemon's)\n");
}

int cg_sim_compute_main(int argc, char **argv)
{
    static cg_gt_config cfg;
    static cg_gt_result res;
    memset(&cfg, 0, sizeof cfg);
    unsigned long long kus = 1000, depth = 2, secs = 60, win = 10, delay_ms = 0, judge = ~0ull,
                       slice_us = 1024, step_ms = 25, burst_ms = CG_COMPUTE_BURST_NS_DEFAULT / 1000000;
    const char *list = NULL, *starts = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return 0;
        }
        if (i + 1 >= argc)
            return bad("option (it needs a value)", a);
        const char *v = argv[++i];
        if (strcmp(a, "--containers") == 0)
            list = v;
        else if (strcmp(a, "--start") == 0)
            starts = v;
        else if (strcmp(a, "--kernel-us") == 0 ? num(v, 1, 10000000, &kus)
                 : strcmp(a, "--depth") == 0  ? num(v, 0, 1024, &depth)
                 : strcmp(a, "--seconds") == 0 ? num(v, 1, 3600, &secs)
                 : strcmp(a, "--window-s") == 0 ? num(v, 1, 3600, &win)
                 : strcmp(a, "--sample-delay-ms") == 0 ? num(v, 0, 1000, &delay_ms)
                 : strcmp(a, "--judge-from") == 0 ? num(v, 0, 3600, &judge)
                 : strcmp(a, "--slice-us") == 0 ? num(v, 0, 1000000, &slice_us)
                 : strcmp(a, "--step-ms") == 0 ? num(v, 1, 1000, &step_ms)
                 : strcmp(a, "--burst-ms") == 0 ? num(v, 1, 1000, &burst_ms)
                                                 : (usage(stderr), -2)) {
            return bad(a, v);
        }
    }
    if (!list)
        return bad("--containers", "(missing)");
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", list);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (cfg.n == CG_GT_MAX)
            return bad("--containers (more than 16)", list);
        char entry[64];
        snprintf(entry, sizeof entry, "%s", tok); /* as given, for the message */
        char *field[5] = {tok, NULL, NULL, NULL, NULL};
        unsigned nf = 1;
        for (char *p = tok; *p && nf < 6; p++) {
            if (*p != ':')
                continue;
            if (nf == 5)
                return bad("--containers entry (at most SHARE:MODE:KERNEL_US:SYNC_EVERY:HOST_US)", entry);
            *p = '\0';
            field[nf++] = p + 1;
        }
        unsigned long long pct, ckus = kus, csync = 0, chost = 0;
        cg_compute_mode mode = CG_COMPUTE_ELASTIC;
        if (num(field[0], 0, 100, &pct) != 0 || (field[1] && !cg_compute_mode_parse(field[1], &mode)) ||
            (field[2] && num(field[2], 1, 10000000, &ckus) != 0) ||
            (field[3] && num(field[3], 0, 1000000, &csync) != 0) ||
            (field[4] && num(field[4], 0, 10000000, &chost) != 0))
            return bad("--containers entry (want SHARE:hard|elastic[:KERNEL_US:SYNC_EVERY:HOST_US], SHARE 0..100)", entry);
        /* A pattern of its own keeps the interposer's run-ahead bound. */
        unsigned long long cdepth = field[2] ? cg_runahead_queued(ckus * 1000) : depth;
        cfg.c[cfg.n++] = (cg_gt_container){.share_pct = (unsigned)pct, .mode = mode,
                                           .kernel_ns = ckus * 1000, .depth = (unsigned)cdepth,
                                           .sync_every = (unsigned)csync, .host_ns = chost * 1000};
    }
    if (starts) {
        snprintf(buf, sizeof buf, "%s", starts);
        unsigned i = 0;
        for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
             tok = strtok_r(NULL, ",", &save), i++) {
            unsigned long long s;
            if (i >= cfg.n || num(tok, 0, secs, &s) != 0)
                return bad("--start", starts);
            cfg.c[i].start_ns = s * 1000000000ull;
        }
    }
    cfg.duration_ns = secs * 1000000000ull;
    cfg.window_ns = win * 1000000000ull;
    cfg.sample_ns = 166666667ull;
    cfg.step_ns = step_ms * 1000000ull;
    cfg.params.burst_ns = burst_ms * 1000000ull;
    cfg.sample_delay_ns = delay_ms * 1000000ull;
    cfg.slice_ns = slice_us * 1000ull;
    char err[160];
    if (cg_gt_run(&cfg, &res, err, sizeof err) != 0) {
        fprintf(stderr, "convgpu sim compute: %s\n", err);
        return 1;
    }
    printf("window_s");
    for (unsigned i = 0; i < cfg.n; i++)
        printf(",c%u_%u%s", i, cfg.c[i].share_pct,
               cfg.c[i].share_pct ? (cfg.c[i].mode == CG_COMPUTE_HARD ? "hard" : "elastic") : "");
    printf("\n");
    double worst = 0;
    for (unsigned w = 0; w < res.nwindows; w++) {
        printf("%llu", (unsigned long long)w * win);
        for (unsigned i = 0; i < cfg.n; i++) {
            double pct = 100.0 * (double)res.busy[w][i] / (double)cfg.window_ns;
            printf(",%.2f", pct);
            bool running = w * cfg.window_ns >= cfg.c[i].start_ns + cfg.window_ns;
            double off = pct - cfg.c[i].share_pct;
            if (running && cfg.c[i].share_pct && cfg.c[i].mode == CG_COMPUTE_HARD &&
                (off > worst || -off > worst))
                worst = off < 0 ? -off : off;
        }
        printf("\n");
    }
    printf("# worst hard-share window: %.2f points off\n", worst);
    if (judge == ~0ull) {
        judge = 0;
        for (unsigned i = 0; i < cfg.n; i++)
            if (cfg.c[i].start_ns / 1000000000ull + win > judge)
                judge = cfg.c[i].start_ns / 1000000000ull + win;
    }
    double sum[CG_GT_MAX] = {0}, idle = 0;
    unsigned nw = 0;
    for (unsigned w = 0; w < res.nwindows; w++) {
        if ((unsigned long long)w * win < judge)
            continue;
        nw++;
        for (unsigned i = 0; i < cfg.n; i++)
            sum[i] += 100.0 * (double)res.busy[w][i] / (double)cfg.window_ns;
        idle += 100.0 * (double)res.idle[w] / (double)cfg.window_ns;
    }
    printf("# mean shares from %llu s:", judge);
    for (unsigned i = 0; i < cfg.n; i++)
        printf("%s%.2f", i ? "/" : " ", nw ? sum[i] / nw : 0.0);
    printf("\n# mean idle from %llu s: %.2f\n", judge, nw ? idle / nw : 0.0);
    return 0;
}

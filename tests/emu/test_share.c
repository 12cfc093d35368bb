/* test_share.c — one device shared in time by real processes, and what NVML reports of it:
 *  - two processes running kernels back to back saturate the device (utilisation >= 90%) and
 *    each gets samples with a share above zero;
 *  - a process launching 10 us kernels makes progress while two others run 20 ms kernels back
 *    to back (each kernel waits its turn; without the turns it would wait for them to stop);
 *  - nvmlDeviceGetProcessUtilization: the sizing protocol, lastSeenTimeStamp filtering,
 *    NVML_ERROR_NOT_FOUND, and samples that add up: the sum of smUtil x period over the samples
 *    a reader polling every 100 ms collects lies between the kernels' requested time and the
 *    time the process measured around them, within 1% + 1 period;
 *  - processes share the device's time, not its kernels: beside a process of 20 ms kernels,
 *    one of 500 us kernels (both always with work queued) gets at least a third of the device
 *    in timeslices (CONVGPU_EMU_TIMESLICE_US, the default); with turns of whole kernels
 *    (CONVGPU_EMU_TIMESLICE_US=0, the second run of this test, emu.share_kernel_turns) it gets
 *    at most a tenth (500 / 20500 of the turns' time);
 *  - a process killed while it holds the device (mid-kernel) does not wedge it: a process
 *    waiting for the device (with turns of whole kernels), or coming after the death (in
 *    timeslices), runs as soon as the death is noticed;
 *  - queued kernels run back to back whatever the host's threads do: 400 kernels of 200 us
 *    queued behind a gate take 80 ms of device time between the events around them, to the
 *    microsecond (no wake-up or timer slack of a host thread shows); two processes with
 *    1 ms kernels always queued keep the device 100% busy in a whole sample period, although
 *    every kernel hands the device to the other process.
 * The test process uses NVML only; the workers are this binary run in a helper mode. Device:
 * 1GiB, sample period 100 ms. */
#include "emu_test.h"

#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- helper modes (children) ---- */

/* hog US: kernels of US back to back until killed. Its queue never runs dry: it keeps
 * HOG_DEPTH kernels queued (it waits for a kernel's event only when HOG_DEPTH - 1 later ones
 * are queued), so it always wants the device, even when its own thread runs late on a busy
 * host. */
#define HOG_DEPTH 8
__attribute__((noreturn)) static void hog(unsigned long long us)
{
    t_kernels k;
    CUstream s;
    CUevent done[HOG_DEPTH];
    t_init_ctx();
    t_load_kernels(&k);
    CHECK_OK(cu.cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    for (int i = 0; i < HOG_DEPTH; i++)
        CHECK_OK(cu.cuEventCreate(&done[i], CU_EVENT_DISABLE_TIMING));
    for (unsigned i = 0;; i++) {
        if (i >= HOG_DEPTH)
            CHECK_OK(cu.cuEventSynchronize(done[i % HOG_DEPTH]));
        t_spin(&k, s, us);
        CHECK_OK(cu.cuEventRecord(done[i % HOG_DEPTH], s));
    }
}

/* ticker US N: N kernels of US, each waited for; prints the wall time around them. */
static int ticker(unsigned long long us, unsigned n)
{
    t_kernels k;
    t_init_ctx();
    t_load_kernels(&k);
    uint64_t wall = 0;
    for (unsigned i = 0; i < n; i++) {
        uint64_t t0 = now_ns();
        t_spin(&k, NULL, us);
        CHECK_OK(cu.cuCtxSynchronize());
        wall += now_ns() - t0;
    }
    printf("wall_ns=%llu\n", (unsigned long long)wall);
    return 0;
}

/* packed US N: N kernels of US queued behind a gate, between two events; prints the device
 * time between the events once they ran. */
static int packed(unsigned long long us, unsigned n)
{
    t_kernels k;
    t_gate g;
    CUstream s;
    CUevent e0, e1;
    t_init_ctx();
    t_load_kernels(&k);
    t_gate_init(&g);
    CHECK_OK(cu.cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CHECK_OK(cu.cuEventCreate(&e0, CU_EVENT_DEFAULT));
    CHECK_OK(cu.cuEventCreate(&e1, CU_EVENT_DEFAULT));
    CHECK_OK(cu.cuLaunchHostFunc(s, t_gate_fn, &g));
    CHECK_OK(cu.cuEventRecord(e0, s));
    for (unsigned i = 0; i < n; i++)
        t_spin(&k, s, us);
    CHECK_OK(cu.cuEventRecord(e1, s));
    CHECK(t_wait_for(t_gate_reached, &g, T_WAIT_MS));
    t_gate_open(&g);
    CHECK_OK(cu.cuStreamSynchronize(s));
    float ms = 0;
    CHECK_OK(cu.cuEventElapsedTime_v2(&ms, e0, e1));
    printf("elapsed_us=%.3f\n", (double)ms * 1000.0);
    return 0;
}

/* holder: one kernel that outlasts the test, then waits to be killed. */
__attribute__((noreturn)) static void holder(void)
{
    t_kernels k;
    t_init_ctx();
    t_load_kernels(&k);
    t_spin(&k, NULL, 1000000000ull);
    for (;;)
        pause();
}

/* ---- the reader ---- */

static const char *self;
static nvmlDevice_t dev;
static unsigned period_ms;

static pid_t helper(const char *mode, const char *a, const char *b, int *out)
{
    char *argv[] = {(char *)self, (char *)mode, (char *)a, (char *)b, NULL};
    return t_spawn(argv, NULL, out);
}

static unsigned util(void)
{
    nvmlUtilization_t u;
    CHECK_NVML(nv.nvmlDeviceGetUtilizationRates(dev, &u), NVML_SUCCESS);
    CHECK(u.gpu <= 100);
    return u.gpu;
}

/* Every sample newer than *last (which moves on), into a caller's tally. */
typedef struct {
    pid_t pid[4];
    unsigned samples[4];        /* with smUtil > 0 */
    unsigned long long util_sum[4];
    unsigned long long last;
    unsigned max_device_util;
} tally;

static void poll_samples(tally *t)
{
    nvmlProcessUtilizationSample_t s[256];
    unsigned n = 256;
    nvmlReturn_t rc = nv.nvmlDeviceGetProcessUtilization(dev, s, &n, t->last);
    if (rc == NVML_ERROR_NOT_FOUND)
        return;
    CHECK_NVML(rc, NVML_SUCCESS);
    for (unsigned i = 0; i < n; i++) {
        CHECK(s[i].timeStamp > t->last);
        CHECK(s[i].smUtil <= 100);
        CHECK(s[i].encUtil == 0 && s[i].decUtil == 0);
        for (int p = 0; p < 4; p++) {
            if (t->pid[p] && (pid_t)s[i].pid == t->pid[p]) {
                t->samples[p] += s[i].smUtil > 0;
                t->util_sum[p] += s[i].smUtil;
            }
        }
    }
    for (unsigned i = 0; i < n; i++)
        if (s[i].timeStamp > t->last)
            t->last = s[i].timeStamp;
    unsigned u = util();
    if (u > t->max_device_util)
        t->max_device_util = u;
}

static int both_served(void *arg)
{
    tally *t = arg;
    poll_samples(t);
    return t->samples[0] > 0 && t->samples[1] > 0 && t->max_device_util >= 90;
}

static int idle(void *arg)
{
    (void)arg;
    return util() == 0;
}

/* Kills two helpers (pids[0..1], their outputs fa and fb) and waits for the device to idle. */
static void stop_two(const pid_t *pids, int fa, int fb)
{
    kill(pids[0], SIGKILL);
    kill(pids[1], SIGKILL);
    CHECK_EQ(t_wait(pids[0]), -SIGKILL);
    CHECK_EQ(t_wait(pids[1]), -SIGKILL);
    free(t_read_all(fa));
    free(t_read_all(fb));
    CHECK(t_wait_for(idle, NULL, T_WAIT_MS));
}

static void saturate_and_take_turns(void)
{
    int fa, fb;
    tally t = {0};
    t.pid[0] = helper("hog", "20000", NULL, &fa);
    t.pid[1] = helper("hog", "20000", NULL, &fb);
    if (!t_wait_for(both_served, &t, T_WAIT_MS))
        t_fail(__FILE__, __LINE__, "samples with a share: %u and %u, device at most %u%%",
               t.samples[0], t.samples[1], t.max_device_util);
    /* 10 us kernels among 20 ms ones: each takes its turn, so these finish. */
    char *tick[] = {(char *)self, "ticker", "10", "20", NULL};
    char *out = NULL;
    int rc = t_run(tick, NULL, &out);
    if (rc != 0)
        t_fail(__FILE__, __LINE__, "ticker among hogs: exit %d\n%s", rc, out);
    free(out);
    stop_two(t.pid, fa, fb);
}

/* The sizing protocol and filtering, on the samples of a process running now. */
static int has_samples(void *arg)
{
    tally *t = arg;
    poll_samples(t);
    return t->samples[0] > 0;
}

static void protocol(void)
{
    int fd;
    tally t = {0};
    pid_t h = helper("hog", "5000", NULL, &fd);
    t.pid[0] = h;
    CHECK(t_wait_for(has_samples, &t, T_WAIT_MS));
    unsigned n = 0;
    CHECK_NVML(nv.nvmlDeviceGetProcessUtilization(dev, NULL, &n, 0), NVML_ERROR_INSUFFICIENT_SIZE);
    CHECK(n > 0);
    nvmlProcessUtilizationSample_t s[512];
    unsigned small = 0;
    CHECK_NVML(nv.nvmlDeviceGetProcessUtilization(dev, s, &small, 0),
               NVML_ERROR_INSUFFICIENT_SIZE);
    CHECK(small >= n);
    unsigned m = 512;
    CHECK_NVML(nv.nvmlDeviceGetProcessUtilization(dev, s, &m, 0), NVML_SUCCESS);
    CHECK(m >= n && m < 512);
    unsigned long long lo = s[0].timeStamp, hi = s[0].timeStamp;
    int of_h = 0; /* (the history also holds the earlier helpers' samples) */
    for (unsigned i = 0; i < m; i++) {
        of_h |= s[i].pid == (unsigned)h;
        lo = s[i].timeStamp < lo ? s[i].timeStamp : lo;
        hi = s[i].timeStamp > hi ? s[i].timeStamp : hi;
    }
    CHECK(of_h);
    /* Timestamps are CLOCK_REALTIME microseconds, period ends in the recent past. */
    struct timespec rt;
    clock_gettime(CLOCK_REALTIME, &rt);
    unsigned long long now_us = (unsigned long long)rt.tv_sec * 1000000ull +
                                (unsigned long long)rt.tv_nsec / 1000u;
    CHECK(hi <= now_us && hi + 60ull * 1000000u > now_us);
    /* Newer than the oldest: the oldest is left out. */
    unsigned m2 = 512;
    nvmlReturn_t rc = nv.nvmlDeviceGetProcessUtilization(dev, s, &m2, lo);
    if (rc != NVML_SUCCESS && !(rc == NVML_ERROR_NOT_FOUND && lo == hi))
        t_fail(__FILE__, __LINE__, "samples newer than %llu: %d", lo, (int)rc);
    for (unsigned i = 0; rc == NVML_SUCCESS && i < m2; i++)
        CHECK(s[i].timeStamp > lo);
    kill(h, SIGKILL);
    CHECK_EQ(t_wait(h), -SIGKILL);
    free(t_read_all(fd));
    CHECK(t_wait_for(idle, NULL, T_WAIT_MS));
    /* Idle: nothing newer than the last sample there is. */
    unsigned long long last = 0;
    m = 512;
    if (nv.nvmlDeviceGetProcessUtilization(dev, s, &m, 0) == NVML_SUCCESS)
        for (unsigned i = 0; i < m; i++)
            last = s[i].timeStamp > last ? s[i].timeStamp : last;
    m = 512;
    CHECK_NVML(nv.nvmlDeviceGetProcessUtilization(dev, s, &m, last), NVML_ERROR_NOT_FOUND);
    CHECK_EQ(m, 0);
    CHECK_NVML(nv.nvmlDeviceGetProcessUtilization(dev, s, NULL, 0), NVML_ERROR_INVALID_ARGUMENT);
    CHECK_NVML(nv.nvmlDeviceGetProcessUtilization(NULL, s, &m, 0), NVML_ERROR_INVALID_ARGUMENT);
}

/* The samples add up to the time the process kept the device busy. */
static void samples_add_up(void)
{
    enum { KERNELS = 20, US = 50000 };
    tally t = {0};
    /* Start after every sample there already is. */
    poll_samples(&t);
    int fd;
    char us[16], count[16];
    snprintf(us, sizeof us, "%d", US);
    snprintf(count, sizeof count, "%d", KERNELS);
    t.pid[0] = helper("ticker", us, count, &fd);
    /* Poll as a daemon would, every 100 ms, until the helper has said how long it took. */
    char out[256];
    size_t len = 0;
    for (;;) {
        poll_samples(&t);
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, 100) <= 0)
            continue;
        ssize_t r = read(fd, out + len, sizeof out - 1 - len);
        if (r <= 0)
            break;
        len += (size_t)r;
    }
    close(fd);
    out[len] = '\0';
    CHECK_EQ(t_wait(t.pid[0]), 0);
    const char *w = strstr(out, "wall_ns=");
    if (!w)
        t_fail(__FILE__, __LINE__, "ticker said: %s", out);
    unsigned long long wall = strtoull(w + 8, NULL, 10);
    CHECK(wall > 0);
    /* Its last period ends within a period of its exit: keep reading until the device has
     * been idle for a whole period, which also means that period's samples are out. */
    CHECK(t_wait_for(idle, NULL, T_WAIT_MS));
    poll_samples(&t);
    double busy_ms = (double)t.util_sum[0] * period_ms / 100.0;
    double want_ms = (double)KERNELS * US / 1000.0, wall_ms = (double)wall / 1e6;
    double slack = 0.01 * wall_ms + period_ms;
    printf("samples: %u, sum of smUtil x period %.1f ms; kernels asked %.1f ms, measured around "
           "them %.1f ms\n", t.samples[0], busy_ms, want_ms, wall_ms);
    if (busy_ms < want_ms - slack || busy_ms > wall_ms + slack)
        t_fail(__FILE__, __LINE__, "samples add up to %.1f ms, expected %.1f .. %.1f ms",
               busy_ms, want_ms, wall_ms);
}

/* ---- time, not kernels ---- */

static int enough_time(void *arg)
{
    tally *t = arg;
    poll_samples(t);
    /* 3 s of device time in samples where both ran: 30 periods' worth at 100% */
    return t->util_sum[0] + t->util_sum[1] >= 30ull * 100;
}

static void time_shared(int sliced)
{
    int fl, fs;
    tally t = {0};
    poll_samples(&t);
    t.util_sum[0] = t.util_sum[1] = 0;
    t.pid[0] = helper("hog", "20000", NULL, &fl);
    t.pid[1] = helper("hog", "500", NULL, &fs);
    CHECK(t_wait_for(enough_time, &t, T_WAIT_MS));
    double short_share = 100.0 * (double)t.util_sum[1] / (double)(t.util_sum[0] + t.util_sum[1]);
    printf("20 ms kernels beside 500 us kernels, %s: the 500 us process got %.1f%% of their "
           "device time\n", sliced ? "timeslices" : "turns of whole kernels", short_share);
    if (sliced ? short_share < 100.0 / 3 : short_share > 10.0)
        t_fail(__FILE__, __LINE__, "the 500 us process got %.1f%% of the device time",
               short_share);
    stop_two(t.pid, fl, fs);
}

/* ---- a dead holder ---- */

static int holder_busy(void *arg)
{
    tally *t = arg;
    poll_samples(t);
    return t->samples[0] > 0;
}

static pid_t watched;

static int has_context(void *arg)
{
    (void)arg;
    return t_nvml_proc_used(0, watched) > 0;
}

/* With turns of whole kernels, a second process waits for the device while the holder runs
 * its one long kernel, and is served once the holder's death is noticed. In timeslices the
 * holder would hand the device on within one, so there the holder dies holding it alone
 * (from one piece of its kernel to the next, and perhaps the state file's lock too) and the
 * second process comes after. */
static void killed_holder(int sliced)
{
    int fh, ft;
    tally t = {0};
    poll_samples(&t);
    t.pid[0] = helper("holder", NULL, NULL, &fh);
    CHECK(t_wait_for(holder_busy, &t, T_WAIT_MS));
    if (sliced) {
        kill(t.pid[0], SIGKILL);
        CHECK_EQ(t_wait(t.pid[0]), -SIGKILL);
    }
    /* A second process queues one kernel and waits for it. */
    pid_t w = helper("ticker", "0", "1", &ft);
    watched = w;
    if (!sliced) {
        CHECK(t_wait_for(has_context, NULL, T_WAIT_MS)); /* the device is held */
        kill(t.pid[0], SIGKILL);
        CHECK_EQ(t_wait(t.pid[0]), -SIGKILL);
    }
    char *out = t_read_all(ft);
    int rc = t_wait(w);
    if (rc != 0)
        t_fail(__FILE__, __LINE__, "waiter after the holder's death: exit %d\n%s", rc, out);
    free(out);
    free(t_read_all(fh));
    CHECK(t_wait_for(idle, NULL, T_WAIT_MS));
}

/* ---- back to back ---- */

static int device_full(void *arg)
{
    tally *t = arg;
    return both_served(t) && t->max_device_util >= 100;
}

static void back_to_back(void)
{
    enum { KERNELS = 400, US = 200 };
    char *argv[] = {(char *)self, "packed", "200", "400", NULL};
    char *out = NULL;
    int rc = t_run(argv, NULL, &out);
    if (rc != 0)
        t_fail(__FILE__, __LINE__, "packed: exit %d\n%s", rc, out);
    const char *e = strstr(out, "elapsed_us=");
    if (!e)
        t_fail(__FILE__, __LINE__, "packed said: %s", out);
    double us = strtod(e + 11, NULL), want = (double)KERNELS * US;
    printf("400 queued kernels of 200 us: %.3f us between their events (%.0f us of kernels)\n",
           us, want);
    if (us < want - 1.0 || us > want + 1.0)
        t_fail(__FILE__, __LINE__, "%.3f us between the events, not %.0f", us, want);
    free(out);

    /* Two processes, each always with a kernel queued: the device never idles between them. */
    int fa, fb;
    tally t = {0};
    poll_samples(&t);
    t.max_device_util = 0;
    t.pid[0] = helper("hog", "1000", NULL, &fa);
    t.pid[1] = helper("hog", "1000", NULL, &fb);
    int full = t_wait_for(device_full, &t, T_WAIT_MS);
    printf("two processes with 1 ms kernels: the device %u%% busy at most in a period\n",
           t.max_device_util);
    if (!full)
        t_fail(__FILE__, __LINE__, "two hogs kept the device %u%% busy at most",
               t.max_device_util);
    stop_two(t.pid, fa, fb);
}

int main(int argc, char **argv)
{
    if (argc > 1) {
        t_load_cuda();
        if (strcmp(argv[1], "hog") == 0)
            hog(strtoull(argv[2], NULL, 10));
        if (strcmp(argv[1], "ticker") == 0)
            return ticker(strtoull(argv[2], NULL, 10), (unsigned)atoi(argv[3]));
        if (strcmp(argv[1], "holder") == 0)
            holder();
        if (strcmp(argv[1], "packed") == 0)
            return packed(strtoull(argv[2], NULL, 10), (unsigned)atoi(argv[3]));
        return 2;
    }
    self = argv[0];
    const char *ms = getenv("CONVGPU_EMU_SAMPLE_MS");
    period_ms = ms ? (unsigned)atoi(ms) : 166;
    t_isolate();
    t_load_nvml();
    CHECK_NVML(nv.nvmlInit_v2(), NVML_SUCCESS);
    CHECK_NVML(nv.nvmlDeviceGetHandleByIndex_v2(0, &dev), NVML_SUCCESS);
    const char *slice = getenv("CONVGPU_EMU_TIMESLICE_US");
    int sliced = !slice || strcmp(slice, "0") != 0;
    saturate_and_take_turns();
    time_shared(sliced);
    protocol();
    samples_add_up();
    killed_holder(sliced);
    back_to_back();
    CHECK_NVML(nv.nvmlShutdown(), NVML_SUCCESS);
    printf("ok\n");
    return 0;
}

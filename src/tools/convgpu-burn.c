/* convgpu-burn — keeps a GPU busy with `spin` kernels of a chosen length, and says how much
 * device time it got, window by window: the workload of the compute-share tests and benchmarks.
 *
 * Each thread launches on its own stream and keeps at most `depth` kernels in flight (an event
 * after each launch; the oldest is waited for before a launch beyond the depth), so a kernel's
 * completion is observed when its event is. With --graph G a thread captures G launches into a
 * graph once and then launches the graph (each launch counts G kernels). The launch patterns of
 * real programs (bench/compute.sh's matrix): --streams S spreads a thread's launches round robin
 * over S streams of its own; --sync-every K waits for the whole context (cuCtxSynchronize) after
 * every K launches of a thread, as a training loop does at each step (its queue runs dry there,
 * and the device is idle unless someone else fills it). Such a loop also measures its host's
 * turnaround on the device's clock, the time in which it offered the device nothing of its own
 * doing, in two parts: the wake-up, from the end of its step's last kernel (an event after the
 * step's last launch) to its thread's return from cuCtxSynchronize (an event recorded on its
 * drained stream at once, which the driver stamps when it is recorded); and its host code,
 * from there to the next step (an event recorded before the step's first launch, so before its
 * gate: an event record is not a launch). A launch held at a closed gate is the controller's
 * doing, not the host's, and is not counted: the launch call's own cost is 2-4 us on the
 * emulated GPU, below the measurement's noise. (The first version added the median first
 * launch call, which a container gated at most step starts measured as a gate wait: 260 ms
 * for 8 x 20 ms at a share of 25.) With several threads, a thread's cuCtxSynchronize also waits
 * for its siblings' kernels, which is not host time: its wake-up is taken as the lowest
 * quarter of its steps' (those its own kernel ended last). The output adds
 * `host_turnaround_us=MEAN` (bench/compute.sh feeds it to the simulator), with its parts
 * `wake_us` and `host_code_us`; --steps FILE writes each step's turnaround of a one-thread loop
 * as `REALTIME_US TURN_US` (when the host was back, on the wall clock NVML's samples use), so
 * that bench/compute.sh can tell which window a slow turnaround fell in. The device time a
 * kernel represents is its length: on a time-shared GPU (no MPS) nothing else runs meanwhile.
 *
 * Output (stdout): `launches=N kernels=K busy_us=B elapsed_us=E`; with --report FILE, one line
 * per window of --window-ms: `START_MS BUSY_US` (START_MS: CLOCK_MONOTONIC, shared by every
 * process on the machine, so windows of several processes line up). It stops after --seconds,
 * or when the file given to --until exists, or after --kernels N launches per thread (a fixed
 * amount of device work, whose wall time says how much of the device it got). With --kernel-us 0 and --launches N it measures
 * launch cost instead: `launch_ns_median=...` over N launches (each launch timed alone). With
 * --progress FILE it keeps FILE holding the number of kernels completed so far (rewritten every
 * 50 ms), for tests that watch it run. With --alloc BYTES it holds a device allocation of that
 * size throughout (in a container that may swap, from then on every launch counts itself in
 * flight: bench/swap-alloc.sh measures what that costs). With --grid-blocks N every kernel is
 * launched with a grid of N blocks (1 by default): a limiter that charges per thread block (a
 * peer's, bench/compute.sh --peer-lib) then sees work in proportion to a kernel's length. On the
 * emulated GPU a spin kernel lasts its --kernel-us whatever its grid, so the device time
 * counted is unchanged (convgpu's interposer never reads the grid); on a real GPU blocks
 * beyond what the device holds at once run in further waves and lengthen the kernel. */
#include <dlfcn.h>
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cuda_types.h"
#include "spin_ptx.h"

typedef CUresult (*begin_capture_fn)(CUstream, int mode);
typedef CUresult (*end_capture_fn)(CUstream, void **graph);
typedef CUresult (*instantiate_fn)(CUgraphExec *, void *graph, unsigned long long flags);

static struct {
    PFN_cuInit init;
    PFN_cuDeviceGet device_get;
    PFN_cuDevicePrimaryCtxRetain retain;
    PFN_cuCtxSetCurrent set_current;
    PFN_cuModuleLoadData load;
    PFN_cuModuleGetFunction get_function;
    PFN_cuStreamCreate stream_create;
    PFN_cuLaunchKernel launch;
    PFN_cuEventCreate event_create;
    PFN_cuEventRecord event_record;
    PFN_cuEventSynchronize event_sync;
    PFN_cuStreamSynchronize stream_sync;
    PFN_cuCtxSynchronize ctx_sync;
    PFN_cuEventElapsedTime event_elapsed;
    begin_capture_fn begin_capture;
    end_capture_fn end_capture;
    instantiate_fn instantiate;
    PFN_cuGraphLaunch graph_launch;
    PFN_cuMemAlloc_v2 mem_alloc;
} cu;

static struct {
    unsigned long long kernel_us;
    double seconds;
    const char *until, *report, *progress, *steps;
    unsigned depth, threads, graph, window_ms, streams, sync_every;
    unsigned grid_blocks; /* blocks per kernel's grid (1: a 1x1x1 grid) */
    unsigned long long launches;
    unsigned long long kernels; /* per thread; 0: run for --seconds or --until */
    unsigned long long alloc;   /* bytes held on the device throughout; 0: none */
} opt = {.kernel_us = 1000, .seconds = 10, .depth = 2, .threads = 1, .window_ms = 1000,
         .streams = 1, .grid_blocks = 1};

static CUcontext ctx;
static CUfunction spin;

#define MAX_WINDOWS 100000
static uint64_t window_busy_us[MAX_WINDOWS]; /* indexed from the first window */
static uint64_t first_window_ms;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t total_launches, total_kernels;
/* Host turnarounds of synchronising loops (the header), summed over all threads' steps. */
static double wake_ms_sum, host_ms_sum;
static uint64_t turnarounds;
static FILE *steps_file; /* --steps */

static uint64_t wall_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000ull + (uint64_t)ts.tv_nsec / 1000;
}

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#define CK(call)                                                                                   \
    do {                                                                                           \
        CUresult r_ = (call);                                                                      \
        if (r_ != CUDA_SUCCESS) {                                                                  \
            fprintf(stderr, "convgpu-burn: %s: error %d\n", #call, (int)r_);                       \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static void load_driver(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW);
    if (!h) {
        fprintf(stderr, "convgpu-burn: cannot load libcuda.so.1: %s\n", dlerror());
        exit(1);
    }
#define SYM(f, n) *(void **)&cu.f = dlsym(h, n)
    SYM(init, "cuInit");
    SYM(device_get, "cuDeviceGet");
    SYM(retain, "cuDevicePrimaryCtxRetain");
    SYM(set_current, "cuCtxSetCurrent");
    SYM(load, "cuModuleLoadData");
    SYM(get_function, "cuModuleGetFunction");
    SYM(stream_create, "cuStreamCreate");
    SYM(launch, "cuLaunchKernel");
    SYM(event_create, "cuEventCreate");
    SYM(event_record, "cuEventRecord");
    SYM(event_sync, "cuEventSynchronize");
    SYM(stream_sync, "cuStreamSynchronize");
    SYM(ctx_sync, "cuCtxSynchronize");
    SYM(event_elapsed, "cuEventElapsedTime");
    SYM(begin_capture, "cuStreamBeginCapture_v2");
    SYM(end_capture, "cuStreamEndCapture");
    SYM(instantiate, "cuGraphInstantiateWithFlags");
    SYM(graph_launch, "cuGraphLaunch");
    SYM(mem_alloc, "cuMemAlloc_v2");
#undef SYM
    if (!cu.init || !cu.device_get || !cu.retain || !cu.set_current || !cu.load ||
        !cu.get_function || !cu.stream_create || !cu.launch || !cu.event_create ||
        !cu.event_record || !cu.event_sync || !cu.stream_sync || !cu.ctx_sync) {
        fprintf(stderr, "convgpu-burn: the driver lacks an entry point it needs\n");
        exit(1);
    }
    if (opt.graph && (!cu.begin_capture || !cu.end_capture || !cu.instantiate || !cu.graph_launch)) {
        fprintf(stderr, "convgpu-burn: the driver has no graphs\n");
        exit(1);
    }
}

static void completed(uint64_t kernels)
{
    uint64_t ms = mono_ns() / 1000000ull;
    pthread_mutex_lock(&lock);
    total_kernels += kernels;
    if (ms >= first_window_ms) {
        uint64_t w = (ms - first_window_ms) / opt.window_ms;
        if (w < MAX_WINDOWS)
            window_busy_us[w] += kernels * opt.kernel_us;
    }
    pthread_mutex_unlock(&lock);
}

static bool done(uint64_t deadline)
{
    if (opt.until)
        return access(opt.until, F_OK) == 0;
    return mono_ns() >= deadline;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

static void *burn(void *arg)
{
    (void)arg;
    CK(cu.set_current(ctx));
    CUstream st[16];
    for (unsigned i = 0; i < opt.streams; i++)
        CK(cu.stream_create(&st[i], CU_STREAM_NON_BLOCKING));
    unsigned long long us = opt.kernel_us;
    void *params[] = {&us};
    CUgraphExec exec = NULL;
    unsigned per_launch = 1;
    if (opt.graph) {
        void *graph = NULL;
        CK(cu.begin_capture(st[0], 0 /* CU_STREAM_CAPTURE_MODE_GLOBAL */));
        for (unsigned i = 0; i < opt.graph; i++)
            CK(cu.launch(spin, opt.grid_blocks, 1, 1, 1, 1, 1, 0, st[0], params, NULL));
        CK(cu.end_capture(st[0], &graph));
        CK(cu.instantiate(&exec, graph, 0));
        per_launch = opt.graph;
    }
    CUevent *ring = calloc(opt.depth, sizeof *ring);
    for (unsigned i = 0; i < opt.depth; i++)
        CK(cu.event_create(&ring[i], CU_EVENT_DISABLE_TIMING));
    /* A synchronising loop's turnaround (the header): for step k-1, the end of its last kernel
     * (step_end[parity]) and its thread's return from the synchronisation (synced[parity]);
     * the start of step k (step_start). All complete at step k's synchronisation. */
    CUevent step_end[2] = {NULL, NULL}, synced[2] = {NULL, NULL}, step_start = NULL;
    bool timed = opt.sync_every && cu.event_elapsed;
    for (int i = 0; i < 2 && timed; i++)
        timed = cu.event_create(&step_end[i], CU_EVENT_DEFAULT) == CUDA_SUCCESS &&
                cu.event_create(&synced[i], CU_EVENT_DEFAULT) == CUDA_SUCCESS;
    timed = timed && cu.event_create(&step_start, CU_EVENT_DEFAULT) == CUDA_SUCCESS;
    unsigned long long step = 0;
    double host_sum = 0;
#define WAKE_MAX (1u << 20) /* steps a thread keeps for its figures: over 2 h of 8-ms steps */
    float *wake = timed ? malloc(WAKE_MAX * sizeof *wake) : NULL;
    size_t nwake = 0;
    /* --steps: each step's turnaround and the wall-clock instant the host was back. */
    bool log_steps = wake && steps_file && opt.threads == 1;
    float *turn = log_steps ? malloc(WAKE_MAX * sizeof *turn) : NULL;
    uint64_t *back_us = log_steps ? malloc(WAKE_MAX * sizeof *back_us) : NULL;
    uint64_t back_now = 0;
    uint64_t deadline = mono_ns() + (uint64_t)(opt.seconds * 1e9);
    unsigned long long n = 0, outstanding = 0;
    while (opt.kernels ? n < opt.kernels : !done(deadline)) {
        unsigned slot = (unsigned)(n % opt.depth);
        CUstream s = st[n % opt.streams];
        if (timed && n % opt.sync_every == 0 && step > 0) {
            CK(cu.event_record(step_start, st[0])); /* the host is back: before the gate */
            back_now = wall_us();
        }
        if (outstanding == opt.depth) {
            /* The oldest launch's event: with several streams it may finish after younger
             * ones, never before its own kernel, so the count of in-flight work is an upper
             * bound and the device time credited is never early. */
            CK(cu.event_sync(ring[slot]));
            completed(per_launch);
            outstanding--;
        }
        if (exec)
            CK(cu.graph_launch(exec, s));
        else
            CK(cu.launch(spin, opt.grid_blocks, 1, 1, 1, 1, 1, 0, s, params, NULL));
        CK(cu.event_record(ring[slot], s));
        outstanding++;
        n++;
        if (opt.sync_every && n % opt.sync_every == 0) {
            if (timed)
                CK(cu.event_record(step_end[step % 2], s));
            CK(cu.ctx_sync());
            if (timed)
                CK(cu.event_record(synced[step % 2], st[0])); /* drained: stamped now */
            completed(per_launch * outstanding);
            outstanding = 0;
            float w = 0, h = 0;
            if (wake && step > 0 && nwake < WAKE_MAX &&
                cu.event_elapsed(&w, step_end[(step - 1) % 2], synced[(step - 1) % 2]) ==
                    CUDA_SUCCESS &&
                cu.event_elapsed(&h, synced[(step - 1) % 2], step_start) == CUDA_SUCCESS &&
                w >= 0 && h >= 0) {
                if (turn && back_us) {
                    turn[nwake] = w + h;
                    back_us[nwake] = back_now;
                }
                wake[nwake++] = w;
                host_sum += h;
            }
            step++;
        }
    }
    for (unsigned long long k = 0; k < outstanding; k++) {
        CK(cu.event_sync(ring[(n - outstanding + k) % opt.depth]));
        completed(per_launch);
    }
    /* One thread: every step's own wake-up. Several: a thread's synchronisation also waits
     * for its siblings' kernels; the lowest quarter of its wake-ups are the steps its own
     * kernel ended last, so that is the wake-up each step is given. */
    double wake_sum = 0;
    if (nwake && opt.threads > 1) {
        qsort(wake, nwake, sizeof *wake, cmp_float);
        wake_sum = (double)wake[nwake / 4] * (double)nwake;
    } else {
        for (size_t i = 0; i < nwake; i++)
            wake_sum += wake[i];
    }
    free(wake);
    pthread_mutex_lock(&lock);
    for (size_t i = 0; turn && back_us && i < nwake; i++)
        fprintf(steps_file, "%llu %.0f\n", (unsigned long long)back_us[i], (double)turn[i] * 1000.0);
    free(turn);
    free(back_us);
    total_launches += n;
    wake_ms_sum += wake_sum;
    host_ms_sum += host_sum;
    turnarounds += nwake;
    pthread_mutex_unlock(&lock);
    free(ring);
    return NULL;
}

static atomic_int finished;

static void *report_progress(void *arg)
{
    (void)arg;
    char tmp[4096 + 8];
    snprintf(tmp, sizeof tmp, "%s.new", opt.progress);
    while (!atomic_load(&finished)) {
        pthread_mutex_lock(&lock);
        unsigned long long k = total_kernels;
        pthread_mutex_unlock(&lock);
        FILE *f = fopen(tmp, "w");
        if (f) {
            fprintf(f, "%llu\n", k);
            if (fclose(f) == 0)
                rename(tmp, opt.progress);
        }
        struct timespec ts = {0, 50000000};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

/* Launch cost: each launch of a 0 us kernel timed alone, the stream drained every 64 launches
 * (outside the timing) so queue space never makes a launch wait. */
static int launch_cost(void)
{
    CK(cu.set_current(ctx));
    CUstream s;
    CK(cu.stream_create(&s, CU_STREAM_NON_BLOCKING));
    unsigned long long us = 0;
    void *params[] = {&us};
    uint64_t *t = malloc(opt.launches * sizeof *t);
    if (!t)
        return 1;
    for (unsigned long long i = 0; i < opt.launches; i++) {
        if (i % 64 == 0)
            CK(cu.stream_sync(s));
        uint64_t t0 = mono_ns();
        CK(cu.launch(spin, 1, 1, 1, 1, 1, 1, 0, s, params, NULL));
        t[i] = mono_ns() - t0;
    }
    CK(cu.stream_sync(s));
    qsort(t, opt.launches, sizeof *t, cmp_u64);
    printf("launches=%llu launch_ns_median=%llu launch_ns_p90=%llu\n", opt.launches,
           (unsigned long long)t[opt.launches / 2], (unsigned long long)t[opt.launches * 9 / 10]);
    free(t);
    return 0;
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: convgpu-burn [options]\n"
            "Keeps the GPU busy with spin kernels and reports the device time it got.\n"
            "  --kernel-us N   each kernel's length in microseconds (default 1000)\n"
            "  --seconds S     run this long (default 10)\n"
            "  --until FILE    run until FILE exists (instead of --seconds)\n"
            "  --kernels N     launch N kernels (graphs with --graph) per thread, then stop:\n"
            "                  a fixed amount of device work (instead of --seconds)\n"
            "  --depth D       kernels in flight per thread, at most (default 2)\n"
            "  --threads T     launching threads, each with its own streams (default 1)\n"
            "  --streams S     streams per thread, launched on round robin (default 1)\n"
            "  --sync-every K  cuCtxSynchronize after every K launches of a thread\n"
            "                  (default 0: never; the queue is kept --depth deep)\n"
            "  --graph G       launch graphs of G kernels instead of single kernels\n"
            "  --report FILE   write `START_MS BUSY_US` per window to FILE\n"
            "  --steps FILE    with --sync-every and one thread, write each step's host\n"
            "                  turnaround to FILE: `REALTIME_US TURN_US` per step (other\n"
            "                  patterns leave FILE empty: their turnarounds are not a step's)\n"
            "  --window-ms W   window length for --report (default 1000)\n"
            "  --progress FILE keep FILE holding the kernels completed so far\n"
            "  --launches N    measure launch cost over N launches of a 0 us kernel instead\n"
            "  --alloc BYTES   hold a device allocation of BYTES throughout\n"
            "  --grid-blocks N launch each kernel with a grid of N blocks (default 1); on the\n"
            "                  emulated GPU a kernel lasts --kernel-us whatever its grid\n"
            "  --help\n");
}

static int parse_num(const char *s, unsigned long long lo, unsigned long long hi,
                     unsigned long long *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *end || s[0] == '-' || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"kernel-us", required_argument, NULL, 'k'}, {"seconds", required_argument, NULL, 's'},
        {"until", required_argument, NULL, 'u'},     {"depth", required_argument, NULL, 'd'},
        {"threads", required_argument, NULL, 't'},   {"graph", required_argument, NULL, 'g'},
        {"report", required_argument, NULL, 'r'},    {"window-ms", required_argument, NULL, 'w'},
        {"launches", required_argument, NULL, 'n'},  {"help", no_argument, NULL, 'h'},
        {"progress", required_argument, NULL, 'p'},  {"kernels", required_argument, NULL, 'K'},
        {"alloc", required_argument, NULL, 'a'},     {"streams", required_argument, NULL, 'S'},
        {"sync-every", required_argument, NULL, 'y'}, {"grid-blocks", required_argument, NULL, 'G'},
        {"steps", required_argument, NULL, 'T'},
        {NULL, 0, NULL, 0}};
    int c;
    unsigned long long v;
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        int bad = 0;
        switch (c) {
        case 'k': bad = parse_num(optarg, 0, 10000000, &opt.kernel_us); break;
        case 's': bad = parse_num(optarg, 1, 86400, &v); opt.seconds = (double)v; break;
        case 'u': opt.until = optarg; break;
        case 'd': bad = parse_num(optarg, 1, 1024, &v); opt.depth = (unsigned)v; break;
        case 't': bad = parse_num(optarg, 1, 64, &v); opt.threads = (unsigned)v; break;
        case 'g': bad = parse_num(optarg, 1, 1024, &v); opt.graph = (unsigned)v; break;
        case 'r': opt.report = optarg; break;
        case 'T': opt.steps = optarg; break;
        case 'p':
            if (strlen(optarg) >= 4096)
                bad = 1;
            opt.progress = optarg;
            break;
        case 'w': bad = parse_num(optarg, 10, 3600000, &v); opt.window_ms = (unsigned)v; break;
        case 'n': bad = parse_num(optarg, 1, 100000000, &opt.launches); break;
        case 'K': bad = parse_num(optarg, 1, 1000000000, &opt.kernels); break;
        case 'a': bad = parse_num(optarg, 1, 1ull << 40, &opt.alloc); break;
        case 'S': bad = parse_num(optarg, 1, 16, &v); opt.streams = (unsigned)v; break;
        case 'y': bad = parse_num(optarg, 0, 1000000, &v); opt.sync_every = (unsigned)v; break;
        case 'G': bad = parse_num(optarg, 1, 2147483647, &v); opt.grid_blocks = (unsigned)v; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
        if (bad) {
            fprintf(stderr, "convgpu-burn: bad value '%s'\n", optarg);
            return 2;
        }
    }
    if (optind != argc) {
        fprintf(stderr, "convgpu-burn: unexpected argument '%s'\n", argv[optind]);
        return 2;
    }
    if (opt.steps && !(steps_file = fopen(opt.steps, "w"))) {
        fprintf(stderr, "convgpu-burn: cannot write %s: %s\n", opt.steps, strerror(errno));
        return 1;
    }
    load_driver();
    CUdevice dev;
    CK(cu.init(0));
    CK(cu.device_get(&dev, 0));
    CK(cu.retain(&ctx, dev));
    CK(cu.set_current(ctx));
    CUmodule m;
    CK(cu.load(&m, spin_ptx));
    CK(cu.get_function(&spin, m, "spin"));
    CUdeviceptr held;
    if (opt.alloc) {
        if (!cu.mem_alloc) {
            fprintf(stderr, "convgpu-burn: the driver has no cuMemAlloc_v2\n");
            return 1;
        }
        CK(cu.mem_alloc(&held, (size_t)opt.alloc));
    }
    if (opt.launches)
        return launch_cost();
    uint64_t t0 = mono_ns();
    first_window_ms = t0 / 1000000ull / opt.window_ms * opt.window_ms;
    pthread_t th[64], prog;
    if (opt.progress && pthread_create(&prog, NULL, report_progress, NULL) != 0)
        return 1;
    for (unsigned i = 0; i < opt.threads; i++)
        if (pthread_create(&th[i], NULL, burn, NULL) != 0)
            return 1;
    for (unsigned i = 0; i < opt.threads; i++)
        pthread_join(th[i], NULL);
    atomic_store(&finished, 1);
    if (opt.progress)
        pthread_join(prog, NULL);
    uint64_t elapsed = mono_ns() - t0;
    printf("launches=%llu kernels=%llu busy_us=%llu elapsed_us=%llu",
           (unsigned long long)total_launches, (unsigned long long)total_kernels,
           (unsigned long long)(total_kernels * opt.kernel_us), (unsigned long long)(elapsed / 1000));
    if (turnarounds) {
        double wake_us = wake_ms_sum * 1000.0 / (double)turnarounds;
        double host_us = host_ms_sum * 1000.0 / (double)turnarounds;
        printf(" host_turnaround_us=%.0f wake_us=%.0f host_code_us=%.0f", wake_us + host_us,
               wake_us, host_us);
    }
    printf("\n");
    if (steps_file && fclose(steps_file) != 0) {
        fprintf(stderr, "convgpu-burn: cannot write %s: %s\n", opt.steps, strerror(errno));
        return 1;
    }
    if (opt.report) {
        FILE *f = fopen(opt.report, "w");
        if (!f) {
            fprintf(stderr, "convgpu-burn: cannot write %s: %s\n", opt.report, strerror(errno));
            return 1;
        }
        /* Up to the window the run ended in (partial, as the first one may be). */
        uint64_t nw = ((t0 + elapsed) / 1000000ull - first_window_ms) / opt.window_ms + 1;
        for (uint64_t w = 0; w < nw && w < MAX_WINDOWS; w++)
            fprintf(f, "%llu %llu\n", (unsigned long long)(first_window_ms + w * opt.window_ms),
                    (unsigned long long)window_busy_us[w]);
        fclose(f);
    }
    return 0;
}

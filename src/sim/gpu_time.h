/* gpu_time.h — a time-shared GPU in simulation, driven by the real compute controller
 * (src/core/compute.c): what shares would containers get, window by window?
 *
 * The model is the emulator's and a real GPU's without MPS: one container's kernels run at a
 * time, in turns of `slice_ns` of device time: the container holding the device keeps it across
 * its kernels until its turn is over while another has work queued, then the next container
 * (round robin) with work takes it, even in the middle of a kernel, whose rest runs in the
 * holder's next turn; a container that runs out of work ends its turn. With slice_ns 0 turns
 * are whole kernels (the emulator with CONVGPU_EMU_TIMESLICE_US=0). A container launches
 * kernels of a fixed length whenever its gate is open and it has fewer than `depth` kernels
 * queued (a saturating application with bounded run-ahead); a closed gate makes it wait (its
 * `waiting` flag). A synchronising loop (`sync_every` k > 0) launches k kernels, waits until all
 * of them ran, and launches the next k `host_ns` after the last one ended: the host's turnaround
 * (its thread's wake-up, its own code), during which it offers the device nothing. A gate that
 * opens costs the same turnaround before the first launch (the waiting thread wakes up).
 * Several streams or threads of one process change only how deep its queue is: the device
 * alternates between processes, not streams; a graph is one item of its kernels' total length. The measurer samples every container's cumulative device time every
 * `sample_ns` (NVML's period) and the controller steps every `step_ns` with the latest samples,
 * exactly as convgpud does. Event-driven and exact: no time step, no randomness.
 */
#ifndef CONVGPU_SIM_GPU_TIME_H
#define CONVGPU_SIM_GPU_TIME_H

#include "compute.h"

#include <stdint.h>

#define CG_GT_MAX 16

typedef struct {
    unsigned share_pct;        /* 0: no limit */
    cg_compute_mode mode;
    uint64_t kernel_ns;        /* each kernel's length */
    unsigned depth;            /* kernels it keeps queued at most (run-ahead); 0: none, its
                                * next launch waits for the last to end */
    unsigned sync_every;       /* 0: saturating; else kernels launched per synchronised step */
    uint64_t host_ns;          /* host turnaround after a synchronisation or a gate's opening */
    uint64_t start_ns, stop_ns;/* when it has work (stop 0: till the end) */
} cg_gt_container;

typedef struct {
    unsigned n;
    cg_gt_container c[CG_GT_MAX];
    uint64_t duration_ns;
    uint64_t window_ns;        /* shares are reported per window of this length */
    uint64_t sample_ns;        /* measurement period (NVML: about 1/6 s) */
    uint64_t sample_delay_ns;  /* a period's sample is seen this long after it ends (< 8 periods;
                                * the emulator: a quarter period) */
    uint64_t step_ns;          /* controller period */
    uint64_t slice_ns;         /* a turn on the device; 0: one kernel (see above) */
    cg_compute_params params;
} cg_gt_config;

#define CG_GT_MAX_WINDOWS 4096

typedef struct {
    unsigned nwindows;
    /* busy[w][i]: container i's device time in window w, ns */
    uint64_t busy[CG_GT_MAX_WINDOWS][CG_GT_MAX];
    uint64_t kernels[CG_GT_MAX];
    uint64_t idle[CG_GT_MAX_WINDOWS]; /* the device's idle time in window w, ns */
} cg_gt_result;

/* 0 on success; -1 on an invalid configuration or a controller failure (message in `err`). */
int cg_gt_run(const cg_gt_config *cfg, cg_gt_result *out, char *err, size_t errlen);

#endif

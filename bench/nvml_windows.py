#!/usr/bin/env python3
"""nvml_windows.py — device time per process and window, as NVML reports it (the benchmark's
measure of compute shares: the GPU's own account, not the workload's). Polls
nvmlDeviceGetProcessUtilization on device 0 every 0.2 s until STOP_FILE exists and sums
smUtil x PERIOD per (window, pid), a window being WINDOW_PERIODS sample periods counted from
the first sample seen (sample timestamps are period ends on one grid, so every window holds
exactly WINDOW_PERIODS periods). Prints `WINDOW PID BUSY_US` lines at the end. With
CUTOFF_FILE (a wall-clock instant in microseconds, NVML's time base, written by the caller
when it told the workloads to stop) windows that end after that instant are left out: the
workloads do not stop together (a loop finishes its step first), so such a window is not one
in which all of them had work. With ORIGIN_FILE it writes the grid there, `FIRST_US PERIOD_US
WINDOW_PERIODS` (window w holds the instants after FIRST_US + w x WINDOW_PERIODS x PERIOD_US,
up to the next window's), so the caller can put other records in the same windows.

usage: nvml_windows.py PERIOD_MS WINDOW_PERIODS STOP_FILE [CUTOFF_FILE [ORIGIN_FILE]]
       (libnvidia-ml.so.1 via the loader)
"""
import ctypes
import os
import sys
import time


class Sample(ctypes.Structure):
    _fields_ = [("pid", ctypes.c_uint), ("timeStamp", ctypes.c_ulonglong),
                ("smUtil", ctypes.c_uint), ("memUtil", ctypes.c_uint),
                ("encUtil", ctypes.c_uint), ("decUtil", ctypes.c_uint)]


def main():
    period_us = int(sys.argv[1]) * 1000
    per_window = int(sys.argv[2])
    stop = sys.argv[3]
    nvml = ctypes.CDLL("libnvidia-ml.so.1")
    if nvml.nvmlInit_v2() != 0:
        sys.exit("nvml_windows: nvmlInit failed")
    dev = ctypes.c_void_p()
    if nvml.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(dev)) != 0:
        sys.exit("nvml_windows: no device 0")
    cap = 4096
    buf = (Sample * cap)()
    last = 0
    first = None
    busy = {}
    while True:
        done = os.path.exists(stop)
        count = ctypes.c_uint(cap)
        rc = nvml.nvmlDeviceGetProcessUtilization(dev, buf, ctypes.byref(count),
                                                   ctypes.c_ulonglong(last))
        if rc == 0:
            newest = last
            for s in buf[:min(count.value, cap)]:
                if s.timeStamp <= last:
                    continue
                if first is None:
                    first = s.timeStamp - period_us  # the grid: period ends
                k = round((s.timeStamp - first) / period_us) - 1
                w = k // per_window
                busy[(w, s.pid)] = busy.get((w, s.pid), 0) + s.smUtil * period_us // 100
                newest = max(newest, s.timeStamp)
            last = newest
        if done:
            break
        time.sleep(0.2)
    cutoff = None
    if len(sys.argv) > 4 and os.path.exists(sys.argv[4]):
        with open(sys.argv[4]) as f:
            cutoff = int(f.read().strip() or 0) or None
    if len(sys.argv) > 5 and first is not None:
        with open(sys.argv[5], "w") as f:
            f.write("%d %d %d\n" % (first, period_us, per_window))
    for (w, pid), b in sorted(busy.items()):
        if cutoff is not None and first is not None and \
                first + (w + 1) * per_window * period_us > cutoff:
            continue
        print(w, pid, b)


main()

#!/usr/bin/env python3
"""compute_frameworks.py — a framework's own loop as a compute-share workload for
bench/compute.sh --real-gpu: `torch` runs a small training loop (a 4096x4096 matmul forward,
backward and SGD step, synchronising at every step as a training loop reading its loss does);
`cupy` runs an elementwise loop (a fused multiply-add over 64 Mi floats, synchronising every
16 launches). Each runs until STOP_FILE exists and prints `steps=N seconds=S`. The share it got
is measured outside, by NVML's per-process utilisation (nvml_windows.py), never by this loop.

usage: compute_frameworks.py torch|cupy STOP_FILE
"""
import os
import sys
import time


def torch_loop(stop):
    import torch
    dev = torch.device("cuda")
    w = torch.randn(4096, 4096, device=dev, requires_grad=True)
    x = torch.randn(4096, 4096, device=dev)
    opt = torch.optim.SGD([w], lr=1e-6)
    steps = 0
    while not os.path.exists(stop):
        opt.zero_grad()
        loss = (x @ w).square().mean()
        loss.backward()
        opt.step()
        loss.item()  # synchronises, as reading the loss does in a real loop
        steps += 1
    return steps


def cupy_loop(stop):
    import cupy
    a = cupy.ones(64 << 20, dtype=cupy.float32)
    b = cupy.ones_like(a)
    steps = 0
    while not os.path.exists(stop):
        for _ in range(16):
            a = a * 0.999 + b
        cupy.cuda.Device().synchronize()
        steps += 1
    return steps


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("torch", "cupy"):
        sys.exit(__doc__)
    t0 = time.monotonic()
    steps = torch_loop(sys.argv[2]) if sys.argv[1] == "torch" else cupy_loop(sys.argv[2])
    print(f"steps={steps} seconds={time.monotonic() - t0:.1f}")


main()

#!/usr/bin/env python3
"""Framework checks of the real-GPU validation suite (tests/gpu/run.sh).

    frameworks.py torch --limit BYTES | --native BYTES   (PYTORCH_CUDA_ALLOC_CONF set by the caller)
    frameworks.py jax   --limit BYTES | --native BYTES   (XLA_PYTHON_CLIENT_MEM_FRACTION likewise)
    frameworks.py cupy  --limit BYTES | --native BYTES
    frameworks.py train [--steps N]                      a short PyTorch training loop, timed

--limit: the process runs under `convgpu run --gpu-memory BYTES`; --native: without convgpu (BYTES
is the limit used under convgpu, for the allocations that must then succeed).

Output: "PASS name: detail", "FAIL name: detail", "INFO key=value". Exit 0 if nothing failed,
1 if something did, 77 if the framework is not importable (the caller records it as skipped).
"""
import os
import sys
import time

FAILS = 0
MIB = 1 << 20


def result(ok, name, detail):
    global FAILS
    print(f"{'PASS' if ok else 'FAIL'} {name}: {detail}", flush=True)
    if not ok:
        FAILS += 1


def info(key, value):
    print(f"INFO {key}={value}", flush=True)


def parse_args(argv):
    if len(argv) != 2 or argv[0] not in ("--limit", "--native"):
        sys.exit("usage: frameworks.py FRAMEWORK --limit BYTES | --native BYTES")
    return argv[0] == "--limit", int(argv[1])


def check_torch(argv):
    limited, limit = parse_args(argv)
    try:
        import torch
    except ImportError as e:
        print(f"SKIP torch: not installed ({e})")
        return 77
    conf = os.environ.get("PYTORCH_CUDA_ALLOC_CONF", "") or "default"
    info("torch_version", torch.__version__)
    info("alloc_conf", conf)
    if not torch.cuda.is_available():
        result(False, "cuda_available", "torch.cuda.is_available() is False")
        return 1
    info("allocator_backend", torch.cuda.get_allocator_backend())
    free0, total = torch.cuda.mem_get_info()
    info("mem_get_info_free", free0)
    info("mem_get_info_total", total)
    props_total = torch.cuda.get_device_properties(0).total_memory
    if limited:
        result(total == limit, "mem_get_info.total", f"{total} (limit {limit})")
        result(props_total == limit, "device_properties.total_memory", f"{props_total} (limit {limit})")
        result(0 < free0 <= limit, "mem_get_info.free", f"{free0} <= limit {limit}")
    else:
        result(total > limit, "mem_get_info.total", f"{total}: the whole GPU (> {limit})")

    quarter = limit // 4
    a = torch.empty(quarter, dtype=torch.uint8, device="cuda")
    a.fill_(7)
    torch.cuda.synchronize()
    result(int(a[-1].item()) == 7, "alloc.within", f"{quarter // MIB} MiB tensor written and read")
    free1, _ = torch.cuda.mem_get_info()
    result(free0 - free1 >= quarter, "mem_get_info.after_alloc",
           f"free fell by {(free0 - free1) // MIB} MiB for a {quarter // MIB} MiB tensor")

    # Compute works (cuBLAS handles and workspaces are allocated inside the limit too).
    x = torch.randn(2048, 2048, device="cuda")
    y = (x @ x).sum().item()
    result(y == y, "matmul", "2048x2048 matmul ran")

    over = limit  # with a quarter already held, a whole limit more is beyond it
    try:
        b = torch.empty(over, dtype=torch.uint8, device="cuda")
        b.fill_(1)
        torch.cuda.synchronize()
        got = "allocated"
        del b
    except torch.cuda.OutOfMemoryError as e:
        got = "OutOfMemoryError: " + str(e).splitlines()[0][:160]
    except RuntimeError as e:  # an OOM reported as something else is a failure under the limit
        got = "RuntimeError: " + str(e).splitlines()[0][:160]
    if limited:
        result(got.startswith("OutOfMemoryError"), "alloc.over_limit",
               f"{over // MIB} MiB with {quarter // MIB} MiB held -> {got}")
    else:
        result(got == "allocated", "alloc.unrestricted", f"{over // MIB} MiB -> {got}")

    # The process recovers: memory returns and a new allocation within the limit succeeds.
    del a
    torch.cuda.empty_cache()
    try:
        c = torch.empty(limit // 2, dtype=torch.uint8, device="cuda")
        c.fill_(3)
        torch.cuda.synchronize()
        result(True, "alloc.after_oom", f"{limit // 2 // MIB} MiB after freeing")
        del c
    except RuntimeError as e:
        result(False, "alloc.after_oom", str(e).splitlines()[0][:160])
    torch.cuda.empty_cache()
    free2, _ = torch.cuda.mem_get_info()
    info("mem_get_info_free_end", free2)
    return 1 if FAILS else 0


def check_jax(argv):
    limited, limit = parse_args(argv)
    try:
        import jax
        import jax.numpy as jnp
    except ImportError as e:
        print(f"SKIP jax: not installed ({e})")
        return 77
    frac = float(os.environ.get("XLA_PYTHON_CLIENT_MEM_FRACTION", "0.75"))
    info("jax_version", jax.__version__)
    info("mem_fraction", frac)
    try:
        devs = jax.devices("gpu")
    except RuntimeError as e:
        result(False, "gpu_backend", str(e).splitlines()[0][:160])
        return 1
    d = devs[0]
    x = jnp.ones((1024, 1024), dtype=jnp.float32)
    float((x @ x).sum())
    stats = d.memory_stats() or {}
    bytes_limit = int(stats.get("bytes_limit", 0))
    info("bytes_limit", bytes_limit)
    info("bytes_reserved", stats.get("bytes_reserved", "n/a"))
    if limited:
        # XLA preallocates fraction x total, total being what cuMemGetInfo says: the limit.
        lo, hi = 0.9 * frac * limit, 1.01 * frac * limit
        result(lo <= bytes_limit <= hi, "preallocation.of_limit",
               f"bytes_limit {bytes_limit // MIB} MiB = {bytes_limit / limit:.3f} x limit "
               f"(want ~{frac} x {limit // MIB} MiB)")
    else:
        result(bytes_limit > frac * limit, "preallocation.of_gpu",
               f"bytes_limit {bytes_limit // MIB} MiB: a fraction of the whole GPU")
    n = int(frac * limit * 0.5) // 4
    y = jnp.ones((n,), dtype=jnp.float32)
    result(float(y[-1]) == 1.0, "array.within", f"{n * 4 // MIB} MiB array inside the preallocation")
    return 1 if FAILS else 0


def check_cupy(argv):
    limited, limit = parse_args(argv)
    try:
        import cupy
    except ImportError as e:
        print(f"SKIP cupy: not installed ({e})")
        return 77
    info("cupy_version", cupy.__version__)
    free0, total = cupy.cuda.runtime.memGetInfo()
    props_total = cupy.cuda.runtime.getDeviceProperties(0)["totalGlobalMem"]
    info("memGetInfo_free", free0)
    info("memGetInfo_total", total)
    if limited:
        result(total == limit, "memGetInfo.total", f"{total} (limit {limit})")
        result(props_total == limit, "totalGlobalMem", f"{props_total} (limit {limit})")
    else:
        result(total > limit, "memGetInfo.total", f"{total}: the whole GPU")
    a = cupy.ones(limit // 4 // 4, dtype=cupy.float32)
    result(float(a[-1]) == 1.0, "alloc.within", f"{limit // 4 // MIB} MiB array")
    try:
        b = cupy.empty(limit, dtype=cupy.uint8)
        got = "allocated"
        del b
    except cupy.cuda.memory.OutOfMemoryError as e:
        got = "OutOfMemoryError: " + str(e)[:160]
    except cupy.cuda.runtime.CUDARuntimeError as e:
        got = "CUDARuntimeError: " + str(e)[:160]
    if limited:
        result(got.startswith("OutOfMemoryError"), "alloc.over_limit", f"{limit // MIB} MiB -> {got}")
    else:
        result(got == "allocated", "alloc.unrestricted", f"{limit // MIB} MiB -> {got}")
    del a
    cupy.get_default_memory_pool().free_all_blocks()
    return 1 if FAILS else 0


def train(argv):
    steps = 400
    if len(argv) == 2 and argv[0] == "--steps":
        steps = int(argv[1])
    try:
        import torch
        import torch.nn as nn
    except ImportError as e:
        print(f"SKIP train: torch not installed ({e})")
        return 77
    t_start = time.perf_counter()
    torch.manual_seed(0)
    dev = "cuda"
    model = nn.Sequential(
        nn.Conv2d(3, 64, 3, padding=1), nn.ReLU(), nn.Conv2d(64, 64, 3, padding=1), nn.ReLU(),
        nn.MaxPool2d(2), nn.Conv2d(64, 128, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(128 * 8 * 8, 256), nn.ReLU(), nn.Linear(256, 10)).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    xs = torch.randn(8, 256, 3, 32, 32, device=dev)
    ys = torch.randint(0, 10, (8, 256), device=dev)

    def step(i):
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(xs[i % 8]), ys[i % 8])
        loss.backward()
        opt.step()
        return loss

    for i in range(20):  # warm-up: cuDNN autotuning, allocator growth
        step(i)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for i in range(steps):
        loss = step(i)
    torch.cuda.synchronize()
    t1 = time.perf_counter()
    info("steps", steps)
    info("train_seconds", f"{t1 - t0:.4f}")
    info("startup_seconds", f"{t0 - t_start:.4f}")
    info("final_loss", f"{float(loss):.4f}")
    result(float(loss) == float(loss), "train.loop", f"{steps} steps in {t1 - t0:.3f} s")
    return 1 if FAILS else 0


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    cmd, rest = sys.argv[1], sys.argv[2:]
    fn = {"torch": check_torch, "jax": check_jax, "cupy": check_cupy, "train": train}.get(cmd)
    if fn is None:
        sys.exit(__doc__)
    sys.exit(fn(rest))


if __name__ == "__main__":
    main()

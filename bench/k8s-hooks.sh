#!/usr/bin/env bash
# k8s-hooks.sh BUILD_DIR — the shim against convgpu's createRuntime hooks, through containerd: is
# a RuntimeClass of hooks (runc with `hook cdi-create-runtime` and `hook poststop` in the
# container's spec, as containerd 1.6's `base_runtime_spec` would put them) faster to start than
# the runc v2 shim with convgpu-runtime as its BinaryName? Three variants of `ctr run --rm
# --config SPEC ID` (the spec from a file, as base_runtime_spec gives CRI one; `true` on a
# read-only root filesystem from a directory, no snapshot), through a private containerd 1.6:
#   driver  runc with the GPU driver's files (the emulator's library directory and state file),
#           what a GPU container has with or without convgpu;
#   shim    convgpu-runtime as BinaryName, with the environment the plugin's Allocate returned;
#   hooks   runc, the same environment plus what the daemon sets (socket, emulator, the GPU's
#           UUID), and convgpu's hooks in the spec.
# bench_ab runs them interleaved (order reversed every repetition); the paired differences
# against `driver`, and hooks against shim (--base), are the figures. A spot check, not part of
# `make bench` (docs/BENCHMARKS.md, "Kubernetes: hooks instead of the shim"). Exit 77 where
# containerd cannot run. Environment: BENCH_K8S_REPS=N (default 201), BENCH_K8S_RAW=FILE.
set -eu
[ $# -eq 1 ] || { echo "usage: bench/k8s-hooks.sh BUILD_DIR" >&2; exit 2; }
export CONVGPU_BUILD_DIR
CONVGPU_BUILD_DIR=$(cd "$1" && pwd)
SRC=$(cd "$(dirname "$0")/.." && pwd)
exec 3>&1 1>&2 # stdout: the results only (fd 3)
. "$SRC/bench/k8s_node.sh"
REPS=${BENCH_K8S_REPS:-201}
k8s_bench_node hooks
start_containerd "$SHIM"
make_rootfs "$TMP/img"
"$STANDIN" allocate --socket "$DP/convgpu-memory.sock" gpu0-mem-0,gpu0-mem-1,gpu0-mem-2,gpu0-mem-3 |
    sed -n 's/^0 //p' >"$TMP/env"
# What the daemon gives a container on GPU 0 (driver paths, the GPU's UUID), from a registration.
curl -sf --unix-socket "$RUNDIR/control.sock" -X POST -d '{"id":"bench-probe","gpu_memory":67108864}' \
    http://convgpu/v1/containers >"$TMP/probe.json"
api DELETE /v1/containers/bench-probe >/dev/null
ctr_ oci spec >"$TMP/default.json"
python3 - "$TMP" "$SHIM" "$RUNDIR" <<'PY'
import copy, json, sys
tmp, shim, rundir = sys.argv[1:]
base = json.load(open(tmp + "/default.json"))
daemon_env = json.load(open(tmp + "/probe.json"))["env"]
alloc = [l.strip() for l in open(tmp + "/env") if l.strip()]
base["root"] = {"path": tmp + "/img", "readonly": True}
# ctr's default names one cgroup for every container of the namespace: each would set that
# cgroup's device list, and later containers of the namespace could not allow their devices.
# Without it runc gives each container its own, named by its id.
base["linux"].pop("cgroupsPath", None)
base["process"]["args"] = ["true"]
base["process"].setdefault("env", ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"])
lib = daemon_env["LD_LIBRARY_PATH"]
emu_env = ["LD_LIBRARY_PATH=" + lib, "CONVGPU_EMU_STATE=/run/convgpu-emu/state"]
driver = copy.deepcopy(base)
driver["mounts"] += [
    {"destination": lib, "type": "bind", "source": lib, "options": ["rbind", "ro", "nosuid", "nodev"]},
    {"destination": "/run/convgpu-emu/state", "type": "bind", "source": daemon_env["CONVGPU_EMU_STATE"],
     "options": ["rbind", "rw", "nosuid", "nodev"]}]
driver["process"]["env"] += emu_env
shim_spec = copy.deepcopy(base)
shim_spec["process"]["env"] += alloc
# The annotations containerd's CRI writes: every round's container is the same pod's, which may
# claim its allocation again once the previous one is gone.
shim_spec.setdefault("annotations", {}).update({
    "io.kubernetes.cri.container-type": "container", "io.kubernetes.cri.sandbox-uid": "bench-pod",
    "io.kubernetes.cri.sandbox-id": "b" * 64, "io.kubernetes.cri.sandbox-namespace": "default"})
hooks = copy.deepcopy(base)  # the hook mounts the driver's files itself, as the shim does
# The CDI hook is the Docker/Podman path: the same 4 units as a size, not as an allocation.
hooks["process"]["env"] += ["CONVGPU_GPU_MEMORY=%d" % (4 << 28)] + emu_env + [
    "CONVGPU_SOCKET=/run/convgpu/container.sock", "CUDA_VISIBLE_DEVICES=" + daemon_env["CUDA_VISIBLE_DEVICES"]]
hook = lambda *what: {"path": shim, "args": ["convgpu-runtime", "--runtime-dir", rundir, "hook", *what]}
hooks["hooks"] = {"createRuntime": [hook("cdi-create-runtime", "--device", "0")], "poststop": [hook("poststop")]}
for name, spec in (("driver", driver), ("shim", shim_spec), ("hooks", hooks)):
    json.dump(spec, open(f"{tmp}/spec-{name}.json", "w"))
PY
cat >"$TMP/ctr-once" <<EOF
#!/bin/bash
# ctr-once driver|shim|hooks: one container started and removed through containerd
set -e
args=(--address "$CTD_SOCK" --namespace "$CTD_NS" run --rm --runtime io.containerd.runc.v2 --config "$TMP/spec-\$1.json")
[ "\$1" != shim ] || args+=(--runc-binary "$SHIM")
exec ctr "\${args[@]}" bench-\$1-\$\$
EOF
chmod +x "$TMP/ctr-once"
for v in driver shim hooks driver shim hooks; do "$TMP/ctr-once" $v; done # warm caches
check "the shim's and the hooks' containers were registered and released" \
    test "$(grep -c 'removed (owner exited)' "$DAEMON_LOG")" -ge 4
echo "[bench k8s-hooks] $REPS interleaved rounds of ctr run --rm --config SPEC, three variants"
RAW=${BENCH_K8S_RAW:-$TMP/hooks.raw}
"$BB/bench_ab" --reps "$REPS" --labels driver,shim,hooks --raw "$RAW" -- "$TMP/ctr-once" driver --- \
    "$TMP/ctr-once" shim --- "$TMP/ctr-once" hooks >&3
"$BB/bench_ab" --replay "$RAW" --labels driver,shim,hooks --base 1 | sed -n 's/^cmd=2 /hooks against shim: /p' >&3
check "nothing left registered after the measurement" test "$(registered_count)" = 0
finish

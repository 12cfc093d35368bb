#!/usr/bin/env bash
# test_doctor.sh — `convgpu doctor` against a planted host: a temporary root (--root) holding a
# good configuration of every piece, checked clean; then each piece broken on purpose, one at a
# time, and doctor must name that check as broken, give its fix, and exit 1.
source "$(dirname "$0")/lib.sh"
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"
start_daemon
# Stand-ins for the cluster's kubectl and for docker, each answering as FAKE_* says.
mkdir -p "$TMP/bin"
printf '#!/bin/sh\ncase "$*" in *runtimeclass*) exit "${FAKE_RC_RUNTIMECLASS:-0}" ;; esac\necho deviceclass.resource.k8s.io/gpu.convgpu.io\n' >"$TMP/bin/kubectl"
printf '#!/bin/sh\necho "$*" >"%s/docker.args"\n[ -z "$FAKE_DOCKER_FAIL" ] || { echo "docker: Error response from daemon: unknown or invalid runtime name: convgpu"; exit 125; }\n' "$TMP" >"$TMP/bin/docker"
chmod +x "$TMP/bin/kubectl" "$TMP/bin/docker"
export CONVGPU_KUBECTL=$TMP/bin/kubectl CONVGPU_DOCKER=$TMP/bin/docker

ROOT=$TMP/host
VERSION=$(cg --version | sed -n 's/^convgpu //p')
plant_good() {
    rm -rf "$ROOT"
    mkdir -p "$ROOT/proc/driver/nvidia" "$ROOT/usr/lib/x86_64-linux-gnu" "$ROOT/etc/docker" \
        "$ROOT/usr/bin" "$ROOT/etc/containerd" "$ROOT/var/lib/kubelet/device-plugins" \
        "$ROOT/etc/slurm/plugstack.conf.d" "$ROOT/etc/cdi" "$ROOT/etc/containers"
    echo "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.14  Thu Feb 22 01:44:30 UTC 2024" \
        >"$ROOT/proc/driver/nvidia/version"
    : >"$ROOT/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.550.54.14"
    ln -s libnvidia-ml.so.550.54.14 "$ROOT/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1"
    printf '#!/bin/sh\necho "convgpu-runtime version %s"\n' "$VERSION" >"$ROOT/usr/bin/convgpu-runtime"
    chmod +x "$ROOT/usr/bin/convgpu-runtime"
    mkdir -p "$ROOT/usr/lib/convgpu"
    cp "$BUILD/lib/libconvgpu.so" "$ROOT/usr/lib/convgpu/libconvgpu.so"
    echo '{"runtimes":{"convgpu":{"path":"/usr/bin/convgpu-runtime"}}}' >"$ROOT/etc/docker/daemon.json"
    echo '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.convgpu]' \
        >"$ROOT/etc/containerd/config.toml"
    : >"$ROOT/var/lib/kubelet/device-plugins/convgpu-memory.sock"
    echo "JobSubmitPlugins=lua" >"$ROOT/etc/slurm/slurm.conf"
    echo "required /usr/lib/convgpu/convgpu_spank.so" >"$ROOT/etc/slurm/plugstack.conf.d/convgpu.conf"
    echo "-- convgpu: --gpu-mem as GRES" >"$ROOT/etc/slurm/job_submit.lua"
    cg slurm gres-conf >"$ROOT/etc/slurm/gres.conf"
    # The spec as the packaged CLI writes it: its hooks run /usr/bin/convgpu-runtime.
    cg cdi generate --runtime-path "$ROOT/usr/bin/convgpu-runtime" |
        sed "s|$ROOT/usr/bin/|/usr/bin/|" >"$ROOT/etc/cdi/convgpu.json"
}

doctor() { cg doctor --root "$ROOT" "$@"; }
DOCTOR_ARGS=
status_of() { # status_of CHECK: its status in doctor --json
    doctor --json $DOCTOR_ARGS 2>/dev/null | python3 -c '
import json, sys
print(next(c["status"] for c in json.load(sys.stdin)["checks"] if c["check"] == sys.argv[1]))' "$1"
}

plant_good
set +e; doctor >"$TMP/good.out" 2>&1; rc=$?; set -e
check "a good node: doctor exits 0 ($rc)" test "$rc" = 0
check "a good node: nothing broken" grep -q "^0 broken" "$TMP/good.out"
check "a good node: the driver's and NVML's versions" \
    grep -q "NVIDIA driver 550.54.14, NVML libnvidia-ml.so.550.54.14" "$TMP/good.out"
check "a good node: the daemon's version" grep -q "^ok *daemon *convgpud" "$TMP/good.out"
check "a good node: the interposers and the shim at the daemon's version" \
    grep -q "^ok *versions *interposer .*: $VERSION; interposer .*: $VERSION; shim .*: $VERSION" "$TMP/good.out"
check "--json is one object with every check" bash -c \
    "'$BUILD/bin/convgpu' --runtime-dir '$RUNDIR' doctor --root '$ROOT' --json | python3 -c 'import json,sys; d=json.load(sys.stdin); sys.exit(0 if d[\"broken\"]==0 and len(d[\"checks\"])>=10 else 1)'"

# breaks CHECK FIX-PATTERN COMMAND...: plant a good node, break it with COMMAND, see doctor name it.
breaks() {
    local name=$1 pat=$2; shift 2
    plant_good
    "$@"
    set +e; doctor $DOCTOR_ARGS >"$TMP/bad.out" 2>&1; local rc=$?; set -e
    local st; st=$(DOCTOR_ARGS=$DOCTOR_ARGS status_of "$name")
    check "$name broken on purpose: doctor says broken ($st), exits 1 ($rc)" \
        bash -c "[ '$st' = broken ] && [ $rc = 1 ]"
    check "$name broken on purpose: the fix is given" grep -q -- "fix: .*$pat" "$TMP/bad.out"
}
# The daemon is emulated, so a missing driver is fine here: the driver check then reports ok.
breaks versions "apt install convgpu=$VERSION" sh -c \
    "printf '#!/bin/sh\necho \"convgpu-runtime version 0.0.9\"\n' >'$ROOT/usr/bin/convgpu-runtime'"
check "... naming the shim's version" grep -q "shim $ROOT/usr/bin/convgpu-runtime: 0.0.9" "$TMP/bad.out"
breaks versions "systemctl restart convgpud" sh -c \
    "sed 's/convgpu-interposer-version=$VERSION/convgpu-interposer-version=0.0.9/' '$BUILD/lib/libconvgpu.so' >'$ROOT/usr/lib/convgpu/libconvgpu.so'"
check "... naming the interposer's version" grep -q "interposer $ROOT/usr/lib/convgpu/libconvgpu.so: 0.0.9" "$TMP/bad.out"
breaks docker "convgpu setup docker" sh -c "echo '{}' >'$ROOT/etc/docker/daemon.json'"
breaks docker "convgpu setup docker" rm "$ROOT/usr/bin/convgpu-runtime"
breaks containerd "containerd-convgpu" sh -c "echo '[plugins]' >'$ROOT/etc/containerd/config.toml'"
breaks kubelet "daemonset.yaml" rm "$ROOT/var/lib/kubelet/device-plugins/convgpu-memory.sock"
breaks slurm "plugstack.conf.d" rm "$ROOT/etc/slurm/plugstack.conf.d/convgpu.conf"
breaks slurm "job_submit.lua" sh -c "echo '-- site' >'$ROOT/etc/slurm/job_submit.lua'"
breaks slurm "gres-conf" sh -c ": >'$ROOT/etc/slurm/gres.conf'"
breaks slurm "gres-conf" sed -i 's/Name=gpumem Count=[0-9]*/Name=gpumem Count=1/' "$ROOT/etc/slurm/gres.conf"
check "... naming the line gres.conf lacks" grep -q "lacks the daemon's line '.*Name=gpumem" "$TMP/bad.out"
breaks cdi "cdi generate" rm "$ROOT/etc/cdi/convgpu.json"
breaks cdi "cdi generate" sh -c "echo '{\"devices\":[]}' >'$ROOT/etc/cdi/convgpu.json'"
check "... naming the missing hook" grep -q "^broken *cdi .*has no convgpu hook" "$TMP/bad.out"
# The spec's content against what `convgpu cdi generate` writes now: each stale piece named.
CDI=$ROOT/etc/cdi/convgpu.json
breaks cdi "cdi generate --output" sed -i 's|"/usr/bin/convgpu-runtime"|"/opt/convgpu-0.0.9/bin/convgpu-runtime"|' "$CDI"
check "... a stale hook path: named" grep -q "^broken *cdi .*hook runs /opt/convgpu-0.0.9/bin/convgpu-runtime, which is not there" "$TMP/bad.out"
breaks cdi "convgpu --runtime-dir $RUNDIR cdi generate" sed -i "s|\"$RUNDIR\"|\"/run/convgpu-elsewhere\"|" "$CDI"
check "... the wrong socket directory: both named" grep -q "^broken *cdi .*hooks ask convgpud in /run/convgpu-elsewhere, but it runs in $RUNDIR" "$TMP/bad.out"
breaks cdi "cdi generate" sed -i 's|"LD_LIBRARY_PATH=[^"]*"|"LD_LIBRARY_PATH=/usr/lib/convgpu-0.0.9/emu"|' "$CDI"
check "... a stale emulator directory: the variable named" grep -q "^broken *cdi .*environment is not the daemon's now (LD_LIBRARY_PATH is /usr/lib/convgpu-0.0.9/emu in the spec" "$TMP/bad.out"
breaks cdi "cdi generate" sed -i 's|"CUDA_VISIBLE_DEVICES=[^"]*"|"CUDA_VISIBLE_DEVICES=GPU-00000000-dead-beef-0000-000000000000"|' "$CDI"
check "... a GPU's stale UUID: the device named" grep -q "^broken *cdi .*device 0 is not the daemon's GPU 0 now (CUDA_VISIBLE_DEVICES is GPU-00000000-dead-beef" "$TMP/bad.out"
breaks cdi "cdi generate" sed -i 's|"cdiVersion": "[^"]*"|"cdiVersion": "0.3.0"|' "$CDI"
check "... another cdiVersion: said" grep -q "^broken *cdi .*differs from what convgpu cdi generate writes now" "$TMP/bad.out"
plant_good
check "a current spec: ok, compared with the daemon's" bash -c \
    "'$BUILD/bin/convgpu' --runtime-dir '$RUNDIR' doctor --root '$ROOT' | grep -q '^ok *cdi *CDI spec /etc/cdi/convgpu.json is what convgpu cdi generate writes now (.* hooks /usr/bin/convgpu-runtime, runtime directory $RUNDIR)'"

# The RuntimeClass missing from the cluster (kubectl says so).
FAKE_RC_RUNTIMECLASS=1 breaks kube-objects "runtimeclass.yaml" true
check "with kubectl: the RuntimeClass and the DRA class found" bash -c \
    "'$BUILD/bin/convgpu' --runtime-dir '$RUNDIR' doctor --root '$ROOT' | grep -q '^ok *kube-objects *RuntimeClass convgpu present; a convgpu DRA DeviceClass'"

# --deep: the tiny container runs through docker with the runtime and a limit, or fails.
plant_good
set +e; doctor --deep >"$TMP/deep.out" 2>&1; rc=$?; set -e
check "--deep: a tiny container under the convgpu runtime ($rc)" bash -c \
    "[ $rc = 0 ] && grep -q -- '--runtime convgpu -e CONVGPU_GPU_MEMORY=64MiB busybox true' '$TMP/docker.args'"
check "without --deep no container is run" bash -c "rm -f '$TMP/docker.args'; '$BUILD/bin/convgpu' --runtime-dir '$RUNDIR' doctor --root '$ROOT' >/dev/null; [ ! -e '$TMP/docker.args' ]"
DOCTOR_ARGS=--deep FAKE_DOCKER_FAIL=1 breaks container "convgpu setup docker" true
check "... with docker's own words" grep -q "unknown or invalid runtime name" "$TMP/bad.out"

# The runtime directory made writable by others.
plant_good
chmod 0777 "$RUNDIR"
st=$(status_of rundir)
chmod 0755 "$RUNDIR"
check "rundir mode 0777: broken ($st)" test "$st" = broken

# The daemon's descriptor limit below what its connection bounds need (the planner's words).
plant_good
mkdir -p "$ROOT/etc/convgpu"
echo "api-max-connections = 100000" >"$ROOT/etc/convgpu/convgpud.conf"
set +e; doctor >"$TMP/fd.out" 2>&1; rc=$?; set -e
check "fd-limit: bounds past the limit are broken ($rc)" bash -c \
    "[ $rc = 1 ] && grep -q '^broken *fd-limit .*smaller than the connection bounds need: api-max-connections 100000' '$TMP/fd.out'"
check "fd-limit: the fix is given" grep -q "fix: .*LimitNOFILE" "$TMP/fd.out"

# The daemon stopped: doctor names it and gives the start command.
stop_daemon_hard
set +e; doctor >"$TMP/down.out" 2>&1; rc=$?; set -e
check "daemon down: broken, exit 1 ($rc)" bash -c "[ $rc = 1 ] && grep -q '^broken *daemon' '$TMP/down.out'"
check "daemon down: the start command" grep -q "fix: .*convgpud" "$TMP/down.out"
set +e; cg doctor --bogus 2>"$TMP/usage.err"; rc=$?; set -e
check "bad usage: exit 2 ($rc)" test "$rc" = 2
finish

#!/usr/bin/env bash
# test_containerd.sh — what the device plugin's Allocate returns starts a real container through
# a private real containerd 1.6 with convgpu-runtime as the runc v2 shim's binary (the RuntimeClass
# handler's configuration) in Kubernetes mode (CONVGPU_SHIM_MODE=kubernetes in containerd's
# environment, as the node's drop-in sets it): a kubelet stand-in asks the plugin for units
# (GetPreferredAllocation, then Allocate), Allocate records them with convgpud and answers only
# a token, and the container gets exactly that environment plus the annotations containerd's
# CRI plugin writes (pod UID, namespace). Inside, on the emulated GPU the units belong to, the
# 1GiB limit holds (over it: exit 2) and memory info shows it; the daemon has the container on
# that GPU while it runs, in its namespace's tenant, and releases it when it is killed; compute
# units reach the daemon as the container's share; a two-GPU pod is split over its slots' GPUs.
# The pod's own CONVGPU_GPU_MEMORY=7GiB (and exclusive, device, compute, tenant variables and
# convgpu's annotations) beside the allocation gain nothing; a container that asked for no
# convgpu resource is not registered, whatever its environment says; a token reaching a shim
# that containerd runs without Kubernetes mode is refused. The shim hands each runtime command
# to the runtime that $CONVGPU_RUNC in containerd's environment names (NVIDIA's on a GPU node).
# Skips (77) where containerd cannot run.
. "$(dirname "$0")/../containers/lib.sh"
. "$(dirname "$0")/containerd_lib.sh"
STANDIN=$BUILD/bin/kubelet-standin
PLUGIN=$BUILD/bin/convgpu-device-plugin
[ -x "$STANDIN" ] && [ -x "$PLUGIN" ] || skip "the device plugin is not built (grpc++ missing)"
command -v containerd >/dev/null || skip "containerd is not installed (apt-get install containerd)"
DP=$TMP/device-plugins
mkdir -p "$DP" "$TMP/kubelet"

start_daemon --emulate 2GiB,3GiB
"$STANDIN" serve --dir "$DP" --state "$TMP/kubelet" >"$TMP/standin.log" 2>&1 &
STANDIN_PID=$!
at_exit 'kill -TERM $STANDIN_PID; wait $STANDIN_PID'
wait_for "the stand-in serves" "$WAIT_S" test -e "$TMP/kubelet/ready"
"$PLUGIN" --plugin-dir "$DP" --runtime-dir "$RUNDIR" --poll-ms 100 >"$TMP/plugin.log" 2>&1 &
PLUGIN_PID=$!
at_exit 'kill -TERM $PLUGIN_PID; wait $PLUGIN_PID'
wait_for "memory units listed" "$WAIT_S" test -s "$TMP/kubelet/convgpu.io_gpu-memory.list" ||
    fail "the plugin did not list its units"
wait_for "compute units listed" "$WAIT_S" test -s "$TMP/kubelet/convgpu.io_gpu-compute.list" ||
    fail "the plugin did not list its compute units"
wait_for "GPU slots listed" "$WAIT_S" test -s "$TMP/kubelet/convgpu.io_gpu.list" ||
    fail "the plugin did not list its GPU slots"

# As kubelet would: take every Healthy unit of a resource, let the plugin prefer N of them, and
# allocate those. Prints the environment, one NAME=VALUE per line.
allocate_units() { # allocate_units RESOURCE-FILE SOCKET N
    local avail chosen
    avail=$(awk '$2 == "Healthy" {print $1}' "$TMP/kubelet/$1.list" | paste -sd,)
    chosen=$("$STANDIN" prefer --socket "$DP/$2" --available "$avail" --size "$3") || return 1
    "$STANDIN" allocate --socket "$DP/$2" "$chosen" | sed 's/^0 //'
}
only_token() { # only_token FILE VARIABLE: the answer is that variable with a token, nothing else
    [ "$(wc -l <"$1")" = 1 ] && grep -Eqx "$2=[0-9a-f]{32}" "$1"
}
# 4 units (1GiB): GPU 0 (2GiB) is the tighter fit than GPU 1 (3GiB); 9 units only fit GPU 1.
allocate_units convgpu.io_gpu-memory convgpu-memory.sock 4 >"$TMP/env4" || fail "allocate 4 units"
check "Allocate: CONVGPU_ALLOCATION with convgpud's token, no limit in the environment" \
    only_token "$TMP/env4" CONVGPU_ALLOCATION
allocate_units convgpu.io_gpu-memory convgpu-memory.sock 9 >"$TMP/env9" || fail "allocate 9 units"

# The next runtime after the shim, named as a GPU node names NVIDIA's (containerd's environment,
# packaging/k8s/containerd-convgpu-nvidia.conf): a stand-in that writes down each command, then
# runs runc.
cat >"$TMP/next-runtime" <<EOF
#!/bin/sh
printf '%s\n' "\$*" >>"$TMP/next-runtime.log"
exec runc "\$@"
EOF
chmod +x "$TMP/next-runtime"
CTD_ENV=("CONVGPU_RUNC=$TMP/next-runtime")
start_containerd "$SHIM"
containerd --config "$CTD/config.toml" config dump >"$TMP/dump" 2>/dev/null
python3 - "$TMP/dump" "$SHIM" <<'PY' &&
import sys, tomllib
r = tomllib.load(open(sys.argv[1], "rb"))["plugins"]["io.containerd.grpc.v1.cri"]["containerd"]["runtimes"]["convgpu"]
sys.exit(not (r["runtime_type"] == "io.containerd.runc.v2" and r["options"]["BinaryName"] == sys.argv[2]))
PY
    pass "containerd read the convgpu runtime entry (runc v2 shim, BinaryName = the shim)" ||
    fail "containerd's configuration lacks the convgpu runtime entry"
ctd_image cg-sample:1 || skip "ctr cannot import an image here"
IMG=docker.io/library/cg-sample:1
envs() { local e; for e in $(cat "$@") ${SAN_ENV[@]+"${SAN_ENV[@]}"}; do printf -- '--env\n%s\n' "$e"; done; }
POD=pod-1 POD_NS=team-a # the pod (its UID) and the namespace the CRI annotations name
SHIM_BIN=$SHIM          # the runc v2 shim's BinaryName
crun_() { # crun_ ENV-FILES... -- ARGS...: ctr run with the shim, the files' envs, $POD's annotations
    local files=() args
    while [ "$1" != -- ]; do files+=("$1"); shift; done; shift
    mapfile -t args < <(envs ${files[@]+"${files[@]}"}; ctr_pod_args "$POD" "$POD_NS" "${SANDBOX:-}")
    # The image's PATH lacks /usr/local/bin, where make_rootfs puts convgpu-sample.
    ctr_ run --snapshotter "$CTD_SNAP" --runtime io.containerd.runc.v2 --runc-binary "$SHIM_BIN" \
        --env PATH=/usr/local/bin:/usr/bin:/bin ${args[@]+"${args[@]}"} "$@"
}
if ! ctr_ run --rm --snapshotter "$CTD_SNAP" "$IMG" probe true 2>"$TMP/probe.err"; then
    skip "containerd cannot run a container here: $(tail -n 1 "$TMP/probe.err")"
fi
# The shim's log while a container runs: the runc v2 shim passes runc's --log, the bundle's.
shim_log() { echo "$CTD_STATE/io.containerd.runtime.v2.task/$CTD_NS/$1/log.json"; }

crun_ "$TMP/env4" -- --rm "$IMG" c1 convgpu-sample --size 800MiB --report >"$TMP/out1" 2>&1 && rc=0 || rc=$?
check "800MiB within the allocated 1GiB: exit 0" test "$rc" = 0
check "memory info inside shows the 1GiB limit" grep -qx "mem_total_before=$((1 << 30))" "$TMP/out1"
check "the container sees GPU 0 (the 2GiB one)" grep -qx "device_name=ConvGPU Emulated GPU 2GiB" "$TMP/out1"
ran() { grep -q " $1 .*$2\$\| $1 $2\$" "$TMP/next-runtime.log"; } # ran COMMAND ID
ran_lifecycle() { ran create "$1" && ran start "$1" && ran delete "$1"; } # ran_lifecycle ID
check "the shim handed c1's create, start and delete to \$CONVGPU_RUNC from containerd's environment" \
    ran_lifecycle c1
# The pod's container again, in a sandbox kubelet re-created (a new sandbox id, the same pod UID;
# kubelet does not call Allocate again): it claims the pod's allocation again.
SANDBOX=2
crun_ "$TMP/env4" -- --rm "$IMG" c2 convgpu-sample --size 1100MiB --quiet >"$TMP/out2" 2>&1 && rc=0 || rc=$?
SANDBOX=
check "the same pod's next container in a new sandbox, 1100MiB over the allocated 1GiB: exit 2 (refused)" test "$rc" = 2
check "both released when they ended" test "$(registered_count)" = 0

# A running container: on the GPU Allocate named, with its limit and compute share, in its
# namespace's tenant; killed: gone.
allocate_units convgpu.io_gpu-compute convgpu-compute.sock 30 >"$TMP/envc" || fail "allocate compute"
# The compute units were preferred on GPU 0 (a tie: the lower index), the memory's on GPU 1: as
# kubelet merges both answers, the memory's GPU is the container's, and the share applies there.
check "compute Allocate: CONVGPU_ALLOCATION_COMPUTE with a token, nothing else" \
    only_token "$TMP/envc" CONVGPU_ALLOCATION_COMPUTE
POD=pod-3
crun_ "$TMP/env9" "$TMP/envc" -- -d "$IMG" c3 convgpu-sample --size 300MiB --hold --quiet >/dev/null
used_at_least() { [ "$(container_field "$1" used)" -ge "$2" ] 2>/dev/null; } # used_at_least ID BYTES
wait_for "c3 holds 300MiB" "$WAIT_S" used_at_least c3 $((300 << 20)) &&
    pass "registered under its containerd id, 300MiB accounted" || fail "c3's allocation was not seen"
check "on GPU 1, as allocated (9 units fit only there)" test "$(container_field c3 device)" = 1
check "its limit: the 9 units" test "$(container_field c3 limit)" = $((9 * 256 << 20))
check "its compute share: the 30 units" test "$(container_field c3 gpu_compute)" = 30
check "its tenant: the pod's namespace" test "$(container_field c3 tenant)" = team-a
check "the shim registered it from the allocation" \
    grep -q "container c3: registered with .*(from CONVGPU_ALLOCATION)" "$(shim_log c3)"
ctr_ tasks kill -s KILL c3 >/dev/null
released() { test "$(api GET "/v1/containers/$1")" = 404; }
wait_for "c3 released" "$WAIT_S" released c3 &&
    pass "killed: released at once" || fail "c3 still registered after the kill"
ctr_ tasks delete c3 >/dev/null 2>&1 || true
ctr_ containers delete c3 >/dev/null 2>&1 || true

# A pod of two GPUs: 2 slots, 8 memory units and 40 compute units, the totals kubelet counts;
# convgpud splits them over the slots' GPUs: 1GiB and 20% on each of GPUs 0 and 1.
allocate_units convgpu.io_gpu convgpu-gpu.sock 2 >"$TMP/envg" || fail "allocate 2 GPU slots"
check "slots Allocate: CONVGPU_ALLOCATION_GPUS with a token, nothing else" \
    only_token "$TMP/envg" CONVGPU_ALLOCATION_GPUS
allocate_units convgpu.io_gpu-memory convgpu-memory.sock 8 >"$TMP/envm8" || fail "allocate 8 units"
allocate_units convgpu.io_gpu-compute convgpu-compute.sock 40 >"$TMP/envc40" || fail "allocate 40"
POD=pod-5
crun_ "$TMP/envg" "$TMP/envm8" "$TMP/envc40" -- -d "$IMG" c5 convgpu-sample --size 300MiB --hold --quiet >/dev/null
wait_for "c5 holds 300MiB" "$WAIT_S" used_at_least c5 $((300 << 20)) &&
    pass "a two-GPU pod runs, 300MiB accounted" || fail "c5's allocation was not seen"
check "c5 is on GPUs 0 and 1" test "$(container_field c5 devices)" = "[0, 1]"
check "c5's limit: 4 units per GPU" test "$(container_field c5 limit)" = $((4 * 256 << 20))
check "c5's compute share: 20 per GPU" test "$(container_field c5 gpu_compute)" = 20
ctr_ tasks kill -s KILL c5 >/dev/null
wait_for "c5 released" "$WAIT_S" released c5 &&
    pass "the two-GPU pod killed: released" || fail "c5 still registered after the kill"
ctr_ tasks delete c5 >/dev/null 2>&1 || true
ctr_ containers delete c5 >/dev/null 2>&1 || true
allocate_units convgpu.io_gpu convgpu-gpu.sock 2 >"$TMP/envg6" || fail "allocate 2 GPU slots"
allocate_units convgpu.io_gpu-memory convgpu-memory.sock 2 >"$TMP/envm6" || fail "allocate 2 units"
allocate_units convgpu.io_gpu-compute convgpu-compute.sock 25 >"$TMP/envc6" || fail "allocate 25"
POD=pod-6
crun_ "$TMP/envg6" "$TMP/envm6" "$TMP/envc6" -- --rm "$IMG" c6 true >"$TMP/out6" 2>&1 && rc=0 || rc=$?
check "25 compute units over 2 GPUs: refused before it starts, saying why" \
    bash -c "[ $rc != 0 ] && grep -q 'split evenly' '$TMP/out6'"
check "nothing registered for it" test "$(registered_count)" = 0

# The pod's own variables and annotations beside the allocation (issue 35): the pod's author
# writes the container's environment, so none of it counts.
printf '%s\n' CONVGPU_GPU_MEMORY=7GiB CONVGPU_EXCLUSIVE=yes CONVGPU_GPU_DEVICE=1 \
    CONVGPU_GPU_COMPUTE=100 CONVGPU_TENANT=root CONVGPU_PRIORITY=9 >"$TMP/envown"
OWN_ANN=(--annotation com.convgpu.gpu-memory=6GiB --annotation com.convgpu.exclusive=yes
         --annotation com.nvidia.memory.limit=6GiB --annotation com.convgpu.device=1)
allocate_units convgpu.io_gpu-memory convgpu-memory.sock 4 >"$TMP/env4b" || fail "allocate 4 units"
POD=pod-7 POD_NS=team-b
crun_ "$TMP/env4b" "$TMP/envown" -- "${OWN_ANN[@]}" --rm "$IMG" c7 convgpu-sample --size 1100MiB --report >"$TMP/out7" 2>&1 && rc=0 || rc=$?
check "its own CONVGPU_GPU_MEMORY=7GiB beside a 1GiB allocation: 1100MiB refused (exit 2)" test "$rc" = 2
check "... memory info inside shows the allocated 1GiB" grep -qx "mem_total_before=$((1 << 30))" "$TMP/out7"
crun_ "$TMP/env4b" "$TMP/envown" -- "${OWN_ANN[@]}" -d "$IMG" c7h convgpu-sample --size 300MiB --hold --quiet >/dev/null
wait_for "c7h holds 300MiB" "$WAIT_S" used_at_least c7h $((300 << 20)) ||
    fail "c7h's allocation was not seen"
check "... registered with the allocated 1GiB, not 7GiB or 6GiB" test "$(container_field c7h limit)" = $((1 << 30))
check "... on the allocation's GPU 0, not its own 1" test "$(container_field c7h device)" = 0
check "... not exclusive" test "$(container_field c7h exclusive)" = False
check "... no compute share of its own" test -z "$(container_field c7h gpu_compute)"
check "... in its namespace's tenant, not root" test "$(container_field c7h tenant)" = team-b
ctr_ tasks kill -s KILL c7h >/dev/null
wait_for "c7h released" "$WAIT_S" released c7h || fail "c7h still registered after the kill"
ctr_ tasks delete c7h >/dev/null 2>&1 || true
ctr_ containers delete c7h >/dev/null 2>&1 || true

# A container that asked for no convgpu resource: its own variables and annotations register
# nothing, and nothing is mounted into it.
POD=pod-8
crun_ "$TMP/envown" -- "${OWN_ANN[@]}" -d "$IMG" c8 sleep 1000 >/dev/null
running() { ctr_ tasks list 2>/dev/null | grep -q "^$1 .*RUNNING"; }
wait_for "c8 runs" "$WAIT_S" running c8 || fail "c8 did not start"
check "no convgpu resource, its own CONVGPU_GPU_MEMORY=7GiB: running, not registered" released c8
check "... nothing registered at all" test "$(registered_count)" = 0
ctr_ tasks kill -s KILL c8 >/dev/null
ctr_ tasks delete c8 >/dev/null 2>&1 || true
ctr_ containers delete c8 >/dev/null 2>&1 || true
crun_ "$TMP/envown" -- --rm "$IMG" c4 sh -c 'test ! -e /run/convgpu/container.sock && test -z "$LD_PRELOAD"' &&
    pass "... nothing mounted, no LD_PRELOAD" || fail "a container without units was changed"

# A node whose containerd lacks the drop-in runs the shim in its Docker mode, where a pod's own
# variables would count: a token there is refused, so the mistake shows and gains nothing.
printf '#!/bin/sh\nexec env -u CONVGPU_SHIM_MODE "%s" "$@"\n' "$SHIM" >"$TMP/shim-docker-mode"
chmod +x "$TMP/shim-docker-mode"
allocate_units convgpu.io_gpu-memory convgpu-memory.sock 4 >"$TMP/env4c" || fail "allocate 4 units"
POD=pod-9 SHIM_BIN=$TMP/shim-docker-mode
crun_ "$TMP/env4c" "$TMP/envown" -- --rm "$IMG" c9 true >"$TMP/out9" 2>&1 && rc=0 || rc=$?
check "the shim without Kubernetes mode: a container with a token is refused, saying why" \
    bash -c "[ $rc != 0 ] && grep -q 'not in Kubernetes mode' '$TMP/out9'"
SHIM_BIN=$SHIM
check "nothing left registered" test "$(registered_count)" = 0
finish

#!/usr/bin/env bash
# k8s-plugin.sh BUILD_DIR — the Kubernetes device plugin's two performance targets (issue 18):
#   1. Allocate latency: 100 back-to-back Allocate calls (4 memory units each) from the kubelet
#      stand-in on one connection, as kubelet keeps one per endpoint, then 100 GetDevicePluginOptions
#      as a control (the same round trip without the plugin's work). p50, p99 and max per round,
#      ROUNDS rounds (target: p99 <= 10 ms).
#   2. A container's start through containerd with the shim vs without: `ctr run --rm IMAGE true`
#      through a private containerd 1.6 and the runc v2 shim, (a) runc, (b) convgpu-runtime as
#      BinaryName with no units (pass-through), (c) convgpu-runtime with the environment the
#      plugin's Allocate returned (registered with convgpud, wired, released). bench_ab runs them
#      interleaved in the same run (order reversed every repetition); the paired ratio c/a is the
#      figure (target: <= +5%).
# It starts its own convgpud (emulated 8GiB, runtime directory on tmpfs like /run), kubelet
# stand-in, plugin and containerd (tests/k8s/containerd_lib.sh: private root, state, socket), and
# removes everything on exit. The Markdown section goes to stdout, progress to stderr. Exit 77
# with the reason where containerd cannot run.
# Environment: BENCH_QUICK=1 (few repetitions), BENCH_K8S_REPS=N (default 61), BENCH_K8S_ROUNDS=N
# (Allocate rounds, default 10), BENCH_K8S_RAW=FILE (every triple's times, for drift).
set -eu
[ $# -eq 1 ] || { echo "usage: bench/k8s-plugin.sh BUILD_DIR" >&2; exit 2; }
export CONVGPU_BUILD_DIR
CONVGPU_BUILD_DIR=$(cd "$1" && pwd)
SRC=$(cd "$(dirname "$0")/.." && pwd)
exec 3>&1 1>&2 # stdout: the section only (fd 3)
. "$SRC/tests/containers/lib.sh"
. "$SRC/tests/k8s/containerd_lib.sh"
BB=$BUILD/bench
STANDIN=$BUILD/bin/kubelet-standin
PLUGIN=$BUILD/bin/convgpu-device-plugin
for p in "$BB/bench_ab" "$STANDIN" "$PLUGIN"; do
    [ -x "$p" ] || { echo "k8s-plugin.sh: missing $p (build first, with grpc++)"; exit 1; }
done
if [ "${BENCH_QUICK:-0}" = 1 ]; then REPS=${BENCH_K8S_REPS:-3}; ROUNDS=${BENCH_K8S_ROUNDS:-1}
else REPS=${BENCH_K8S_REPS:-61}; ROUNDS=${BENCH_K8S_ROUNDS:-10}; fi
log() { echo "[bench k8s] $*"; }
md() { printf '%s\n' "$@" >&3; }
# The daemon's runtime directory on tmpfs, as /run is on a node.
if [ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ]; then
    RUNDIR=$(mktemp -d /dev/shm/convgpu-bench-k8s.XXXXXX)
    at_exit "rm -rf '$RUNDIR'"
    # containerd's state (the bundles: config.json, which the shim rewrites) too, as a node's
    # /run/containerd is.
    CTD_STATE=$(mktemp -d /dev/shm/convgpu-bench-ctd.XXXXXX)
    at_exit "rm -rf '$CTD_STATE'"
fi

export CONVGPU_EMU_CONTEXT=2MiB
start_daemon --emulate 8GiB --log-level info
DP=$TMP/device-plugins
mkdir -p "$DP" "$TMP/kubelet"
"$STANDIN" serve --dir "$DP" --state "$TMP/kubelet" >"$TMP/standin.log" 2>&1 &
STANDIN_PID=$!
at_exit 'kill -TERM $STANDIN_PID; wait $STANDIN_PID'
wait_for "the stand-in serves" "$WAIT_S" test -e "$TMP/kubelet/ready"
"$PLUGIN" --plugin-dir "$DP" --runtime-dir "$RUNDIR" >"$TMP/plugin.log" 2>&1 &
PLUGIN_PID=$!
at_exit 'kill -TERM $PLUGIN_PID; wait $PLUGIN_PID'
wait_for "memory units listed" "$WAIT_S" test -s "$TMP/kubelet/convgpu.io_gpu-memory.list"
IDS=gpu0-mem-0,gpu0-mem-1,gpu0-mem-2,gpu0-mem-3

# ---- 1. Allocate latency ----------------------------------------------------------------------
log "Allocate: $ROUNDS rounds of 100 back-to-back calls"
"$STANDIN" bench-allocate --socket "$DP/convgpu-memory.sock" --ids "$IDS" --count 20 >/dev/null # warm
ROWS=()
P99S=()
for r in $(seq "$ROUNDS"); do
    out=$("$STANDIN" bench-allocate --socket "$DP/convgpu-memory.sock" --ids "$IDS" --count 100)
    ctl=$("$STANDIN" bench-allocate --socket "$DP/convgpu-memory.sock" --count 100)
    log "round $r: Allocate $out; GetDevicePluginOptions $ctl"
    kv() { tr ' ' '\n' <<<"$1" | sed -n "s/^$2=//p"; }
    ROWS+=("| $r | $(kv "$out" p50_ms) | $(kv "$out" p99_ms) | $(kv "$out" max_ms) | $(kv "$ctl" p50_ms) | $(kv "$ctl" p99_ms) |")
    P99S+=("$(kv "$out" p99_ms)")
done
WORST=$(printf '%s\n' "${P99S[@]}" | sort -g | tail -1)

# ---- 2. container start through containerd ----------------------------------------------------
start_containerd "$SHIM"
ctd_image cg-sample:1
IMG=docker.io/library/cg-sample:1
"$STANDIN" allocate --socket "$DP/convgpu-memory.sock" "$IDS" | sed -n 's/^0 //p' >"$TMP/env"
ENVARGS=()
while read -r e; do ENVARGS+=(--env "$e"); done <"$TMP/env"
cat >"$TMP/ctr-once" <<EOF
#!/bin/bash
# ctr-once runc|pass|gpu: one container started and removed through containerd
set -e
args=(--address "$CTD_SOCK" --namespace "$CTD_NS" run --rm --snapshotter "$CTD_SNAP" --runtime io.containerd.runc.v2)
case \$1 in
pass) args+=(--runc-binary "$SHIM");;
gpu) args+=(--runc-binary "$SHIM" ${ENVARGS[*]});;
esac
exec ctr "\${args[@]}" "$IMG" bench-\$1-\$\$ true
EOF
chmod +x "$TMP/ctr-once"
for v in runc pass gpu runc pass gpu; do "$TMP/ctr-once" $v; done # warm caches
log "$REPS interleaved triples of ctr run --rm IMAGE true"
"$BB/bench_ab" --reps "$REPS" --labels runc,shim-pass,shim-units ${BENCH_K8S_RAW:+--raw "$BENCH_K8S_RAW"} -- "$TMP/ctr-once" runc --- \
    "$TMP/ctr-once" pass --- "$TMP/ctr-once" gpu >"$TMP/ctr.txt"
check "nothing left registered after the measurement" test "$(registered_count)" = 0
kvl() { awk -v k="$1" '{ for (i = 1; i <= NF; i++) if (index($i, k "=") == 1) { print substr($i, length(k) + 2); next } }'; }
L0=$(grep '^cmd=0 ' "$TMP/ctr.txt"); L1=$(grep '^cmd=1 ' "$TMP/ctr.txt"); L2=$(grep '^cmd=2 ' "$TMP/ctr.txt")
pct() { awk -v r="$1" 'BEGIN { printf "%+.1f%%", (r - 1) * 100 }'; }
CV=$(containerd --version | awk '{ print $3 }')

md "### Kubernetes: the device plugin's Allocate, and a container's start through containerd" ""
md "Method: a private convgpud (emulated 8GiB), the kubelet stand-in (tests/k8s/kubelet_standin.cc,"
md "the real gRPC API over UNIX sockets) and convgpu-device-plugin. Allocate: $ROUNDS rounds of 100"
md "back-to-back calls for 4 memory units on one connection (decided on the plugin's view of convgpud,"
md "polled every second), each round followed by 100 GetDevicePluginOptions calls as a control (the same"
md "gRPC round trip, no work in the plugin: what the machine adds). Container start: \`ctr run --rm IMAGE true\` through a private containerd $CV and the runc"
md "v2 shim, $REPS interleaved triples (bench_ab; order reversed every repetition): runc; convgpu-runtime"
md "as the shim's BinaryName without units; with the environment Allocate returned (registered, wired,"
md "released). Paired ratios against runc with their 95% intervals." ""
md "| round (100 calls each) | Allocate p50 ms | p99 ms | max ms | control p50 ms | control p99 ms |" "|---|---|---|---|---|---|"
for row in "${ROWS[@]}"; do md "$row"; done
md "" "Worst p99 over the rounds: **$WORST ms** (target <= 10 ms)." ""
md "| ctr run --rm | median ms | paired ratio | 95% CI | paired diff ms |" "|---|---|---|---|---|"
md "| runc | $(kvl med_ms <<<"$L0") | 1 | | |"
md "| convgpu-runtime, no units | $(kvl med_ms <<<"$L1") | $(kvl pratio <<<"$L1") ($(pct "$(kvl pratio <<<"$L1")")) | $(kvl pratio_lo95 <<<"$L1")-$(kvl pratio_hi95 <<<"$L1") | $(kvl diff_med_ms <<<"$L1") |"
md "| convgpu-runtime, Allocate's env | $(kvl med_ms <<<"$L2") | $(kvl pratio <<<"$L2") ($(pct "$(kvl pratio <<<"$L2")")) | $(kvl pratio_lo95 <<<"$L2")-$(kvl pratio_hi95 <<<"$L2") | $(kvl diff_med_ms <<<"$L2") |"
md "" "Target: the start with units within +5% of runc's."
cat "$TMP/ctr.txt"
finish

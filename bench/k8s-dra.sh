#!/usr/bin/env bash
# k8s-dra.sh BUILD_DIR [--record] — convgpu-dra-driver's performance (issue 40, item 4):
#   1. NodePrepareResources latency on an idle machine: ROUNDS rounds of 100 prepares of a fresh
#      claim (memory 1Gi, compute 10; each prepare reads the claim from the API server stand-in and
#      convgpud's devices, creates the claim's container and writes its CDI spec and record; each
#      followed by an unprepare, not timed), from the DRA kubelet stand-in on one
#      connection; then 100 prepares of the already prepared claim as a control (kubelet's
#      repeated call: the gRPC round trip, the record and one convgpud lookup). Target: p99 <= 10 ms,
#      as the device plugin's Allocate.
#   2. Where containerd can run: a pod container's start through the DRA path beside the
#      device-plugin path, `ctr run --rm IMAGE true` through a private containerd 1.6, interleaved
#      (bench_ab, order reversed every repetition): runc alone; runc with the claim's CDI edits
#      (tests/k8s/cdi_apply.py --ctr turns them into ctr's --mount/--env, as a CDI-aware runtime
#      applies them: containerd 1.6 has no CDI); convgpu-runtime as BinaryName with the device
#      plugin's Allocate environment (registered, wired, released per start). Paired ratios.
# Its node is bench/k8s_node.sh's (convgpud on an emulated 8GiB GPU, runtime directory on tmpfs,
# the device plugin and its stand-in) plus the API server stand-in and the driver. Prints the
# Markdown section; writes docs/BENCHMARKS.md only with --record (BENCH_OUT=FILE elsewhere).
# Environment: BENCH_QUICK=1 (few repetitions), BENCH_DRA_ROUNDS=N (default 10), BENCH_DRA_REPS=N
# (container starts, default 41).
set -eu
[ $# -ge 1 ] || { echo "usage: bench/k8s-dra.sh BUILD_DIR [--record]" >&2; exit 2; }
RECORD=0
[ "${2:-}" = --record ] && RECORD=1
export CONVGPU_BUILD_DIR
CONVGPU_BUILD_DIR=$(cd "$1" && pwd)
SRC=$(cd "$(dirname "$0")/.." && pwd)
. "$SRC/bench/section.sh"
OUT=$(bench_destination "$RECORD" "$SRC")
exec 3>&1 1>&2
. "$SRC/bench/k8s_node.sh"
if [ "${BENCH_QUICK:-0}" = 1 ]; then ROUNDS=${BENCH_DRA_ROUNDS:-1}; REPS=${BENCH_DRA_REPS:-3}
else ROUNDS=${BENCH_DRA_ROUNDS:-10}; REPS=${BENCH_DRA_REPS:-41}; fi
DRIVER=$BUILD/bin/convgpu-dra-driver
DSTANDIN=$BUILD/bin/dra-kubelet-standin
[ -x "$DRIVER" ] && [ -x "$DSTANDIN" ] || skip "the DRA driver was not built (grpc++)"
log() { echo "[bench k8s-dra] $*"; }
GEN=$TMP/section.md
md() { printf '%s\n' "$@" >>"$GEN"; }
LOAD=$(cut -d' ' -f1-3 /proc/loadavg)
k8s_bench_node dra

python3 "$SRC/tests/k8s/apiserver_standin.py" --node bench --port-file "$TMP/api.port" \
    --log /dev/null --dra-schema "$SRC/tests/k8s/dra_openapi_v1.json" &
API_PID=$!
at_exit "kill $API_PID"
wait_for "the API stand-in listens" "$WAIT_S" test -s "$TMP/api.port"
API=http://127.0.0.1:$(cat "$TMP/api.port")
mkdir -p "$TMP/registry" "$TMP/cdi"
"$DRIVER" --node bench --api-server "$API" --token-file "" --ca-file "" --plugin-dir "$TMP/plugin" \
    --registry-dir "$TMP/registry" --cdi-dir "$TMP/cdi" --state-dir "$TMP/state" \
    --runtime-dir "$RUNDIR" --poll-ms 60000 >"$TMP/driver.log" 2>&1 &
DRIVER_PID=$!
at_exit "kill $DRIVER_PID"
"$DSTANDIN" register --registry "$TMP/registry" >/dev/null
UID1=$(python3 - "$API/apis/resource.k8s.io/v1" <<'PY'
import json, sys, urllib.request
r = sys.argv[1]
def call(method, path, body):
    req = urllib.request.Request(r + path, json.dumps(body).encode(), method=method,
                                 headers={"Content-Type": "application/json"})
    return json.load(urllib.request.urlopen(req))
caps = {"memory": "1Gi", "compute": "10"}
c = call("POST", "/namespaces/bench/resourceclaims", {"apiVersion": "resource.k8s.io/v1",
         "kind": "ResourceClaim", "metadata": {"name": "c"}, "spec": {"devices": {"requests": [
         {"name": "gpu", "exactly": {"deviceClassName": "gpu.convgpu.io", "capacity": {"requests": caps}}}]}}})
c["status"] = {"allocation": {"devices": {"results": [{"request": "gpu", "driver": "gpu.convgpu.io",
               "pool": "bench", "device": "gpu-0", "consumedCapacity": caps}]}}}
call("PUT", "/namespaces/bench/resourceclaims/c/status", c)
print(c["metadata"]["uid"])
PY
)
CLAIM=bench/c/$UID1
SOCK=$TMP/plugin/dra.sock
"$DSTANDIN" bench --socket "$SOCK" --claim "$CLAIM" --count 20 >/dev/null # warm
kv() { tr ' ' '\n' <<<"$1" | sed -n "s/^$2=//p"; }
ROWS=()
P99S=()
for r in $(seq "$ROUNDS"); do
    out=$("$DSTANDIN" bench --socket "$SOCK" --claim "$CLAIM" --count 100)
    ctl=$("$DSTANDIN" bench --socket "$SOCK" --claim "$CLAIM" --count 100 --again)
    log "round $r: prepare $out; prepared again $ctl"
    ROWS+=("| $r | $(kv "$out" p50_ms) | $(kv "$out" p99_ms) | $(kv "$out" max_ms) | $(kv "$ctl" p50_ms) | $(kv "$ctl" p99_ms) |")
    P99S+=("$(kv "$out" p99_ms)")
done
WORST=$(printf '%s\n' "${P99S[@]}" | sort -g | tail -1)
: >"$GEN"
md "### Kubernetes DRA: NodePrepareResources, and a container's start through the DRA path" ""
md "Method (\`bench/k8s-dra.sh BUILD --record\`, $(nproc) CPUs, kernel $(uname -r), load average at the start $LOAD): a private convgpud (emulated 8GiB), the API server stand-in,"
md "convgpu-dra-driver and the DRA kubelet stand-in (tests/k8s/dra_kubelet_standin.cc, v1.DRAPlugin over a"
md "UNIX socket). $ROUNDS rounds of 100 NodePrepareResources of a fresh claim (memory 1Gi, compute 10: the"
md "claim read from the API stand-in, convgpud's devices read, the container created, the CDI spec and"
md "record written), each followed by an untimed unprepare; then 100 prepares of the prepared claim as a"
md "control (the gRPC round trip, the record and one convgpud lookup: what the machine adds). Of 100 calls"
md "the p99 is the slowest." ""
md "| round (100 calls) | prepare p50 ms | p99 ms | max ms | prepared again p50 ms | p99 ms |" "|---|---|---|---|---|---|"
for row in "${ROWS[@]}"; do md "$row"; done
VERDICT=$(awk -v w="$WORST" 'BEGIN { print (w <= 10 ? "met" : "not met on this run") }')
md "" "Worst p99 over the rounds: **$WORST ms** (target <= 10 ms: $VERDICT; the target is for an idle"
md "machine, and the load average above says how idle this one was)." ""

if command -v containerd >/dev/null && [ "$(id -u)" = 0 ]; then
    start_containerd "$SHIM"
    ctd_image cg-sample:1
    IMG=docker.io/library/cg-sample:1
    "$DSTANDIN" prepare --socket "$SOCK" "$CLAIM" >/dev/null
    mapfile -t CDIARGS < <(python3 "$SRC/tests/k8s/cdi_apply.py" --cdi-dir "$TMP/cdi" \
        --device "gpu.convgpu.io/claim=$UID1" --ctr)
    "$STANDIN" allocate --socket "$DP/convgpu-memory.sock" gpu0-mem-0,gpu0-mem-1,gpu0-mem-2,gpu0-mem-3 |
        sed -n 's/^0 //p' >"$TMP/env"
    DPARGS=()
    while read -r e; do DPARGS+=(--env "$e"); done <"$TMP/env"
    mapfile -t -O "${#DPARGS[@]}" DPARGS < <(ctr_pod_args bench-pod default)
    q() { printf '%q ' "$@"; }
    cat >"$TMP/ctr-once" <<EOF
#!/bin/bash
# ctr-once runc|dra|plugin [COMMAND...]: one container started and removed through containerd
set -e
args=(--address "$CTD_SOCK" --namespace "$CTD_NS" run --rm --snapshotter "$CTD_SNAP" --runtime io.containerd.runc.v2
      --env PATH=/usr/local/bin:/usr/bin:/bin)
case \$1 in
dra) args+=($(q "${CDIARGS[@]}"));;
plugin) args+=(--runc-binary "$SHIM" $(q "${DPARGS[@]}"));;
esac
v=\$1; shift
exec ctr "\${args[@]}" "$IMG" bench-\$v-\$\$ "\${@:-true}"
EOF
    chmod +x "$TMP/ctr-once"
    out=$("$TMP/ctr-once" dra convgpu-sample --size 512MiB --report 2>&1) || true
    check "the DRA container sees the claim's 1GiB" grep -qx "mem_total_before=$((1 << 30))" <<<"$out"
    for v in runc dra plugin runc dra plugin; do "$TMP/ctr-once" $v; done # warm caches
    log "$REPS interleaved rounds of ctr run --rm IMAGE true, three variants"
    LABELS=runc,dra-cdi,device-plugin-shim
    "$BB/bench_ab" --reps "$REPS" --labels $LABELS --raw "$TMP/ctr.raw" -- "$TMP/ctr-once" runc --- \
        "$TMP/ctr-once" dra --- "$TMP/ctr-once" plugin >"$TMP/ctr.txt"
    "$BB/bench_ab" --replay "$TMP/ctr.raw" --labels $LABELS --base 2 >"$TMP/ctr-vs-plugin.txt"
    kvl() { awk -v k="$1" '{ for (i = 1; i <= NF; i++) if (index($i, k "=") == 1) { print substr($i, length(k) + 2); next } }'; }
    L0=$(grep '^cmd=0 ' "$TMP/ctr.txt"); L1=$(grep '^cmd=1 ' "$TMP/ctr.txt"); L2=$(grep '^cmd=2 ' "$TMP/ctr.txt")
    LV=$(grep '^cmd=1 ' "$TMP/ctr-vs-plugin.txt")
    row() { md "| $1 | $(kvl med_ms <<<"$2") | $(kvl pratio <<<"$2") | $(kvl pratio_lo95 <<<"$2")-$(kvl pratio_hi95 <<<"$2") |"; }
    md "Container start: \`ctr run --rm IMAGE true\` through a private containerd $(containerd --version | awk '{print $3}'), $REPS interleaved"
    md "rounds (bench_ab): runc; runc with the claim's CDI edits (the DRA path: the claim's container exists"
    md "already, the start only mounts it); convgpu-runtime with the device plugin's Allocate environment (the"
    md "device-plugin path: registered from the allocation, wired and released per start)." ""
    md "| ctr run --rm | median ms | paired ratio | 95% CI |" "|---|---|---|---|"
    md "| runc | $(kvl med_ms <<<"$L0") | 1 | |"
    row "DRA: runc + the claim's CDI edits (against runc)" "$L1"
    row "device plugin: convgpu-runtime + Allocate's env (against runc)" "$L2"
    row "**DRA against the device-plugin path**" "$LV"
    md ""
    cat "$TMP/ctr.txt" "$TMP/ctr-vs-plugin.txt"
else
    md "Container start: not measured here (containerd missing, or not root)." ""
fi
write_or_print "$OUT" "<!-- bench:k8s-dra:begin -->" "<!-- bench:k8s-dra:end -->" "$GEN" \
    "## Kubernetes DRA" >&3
finish

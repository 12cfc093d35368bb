#!/usr/bin/env bash
# compute.sh — compute-share benchmarks (issue #17): accuracy of hard shares, elastic hand-back,
# and what the launch hook costs. With --record (as `make bench` runs it) writes its section of
# docs/BENCHMARKS.md (between the bench-compute:begin/end markers; bench-compute-gpu with
# --real-gpu); otherwise prints it and writes nothing.
#
#   bench/compute.sh [--record] BUILD_DIR   on the emulated GPU (its own private daemon)
#   bench/compute.sh --real-gpu BUILD_DIR   on the host's GPU (system libcuda, a private daemon)
# Environment: BENCH_QUICK=1 (1 ms kernels only, short runs: numbers not meaningful),
#              BENCH_KEEP=1 (keep the temporary directory: per-window shares, logs),
#              BENCH_KERNELS="1000 50000" (kernel lengths in us, instead of 10 1000 50000),
#              BENCH_OUT=FILE (write the section there, with or without --record).
#
# Method. Every workload is convgpu-burn: spin kernels of one length, 10 ms of them in flight
# per thread (at least two), as a saturating application keeps its queue full: a queue that
# runs dry while the burn's own thread waits for a CPU (2 busy cores) is host time, not device
# time, and would show as a share the device never had a chance to give.
# A container's share in a window is its process's device time in that window as the GPU
# reports it (NVML per-process samples, read by bench/nvml_windows.py; windows of 60 sample
# periods) over the window's length. Only windows during which every container of the scenario
# ran throughout are judged, and the report gives the WORST window of any container, not a mean. Launch cost: convgpu-burn --launches (each launch of a 0 us kernel timed
# alone), native vs in a container without a share vs with a share (99, elastic, alone: its
# gate stays open and its launches pay for the run-ahead marks), interleaved, 5 rounds;
# the added cost is the median over rounds of the paired difference of medians.
set -euo pipefail

REAL=0
RECORD=0
while [ $# -gt 1 ]; do
    case $1 in --real-gpu) REAL=1 ;; --record) RECORD=1 ;; *) break ;; esac
    shift
done
[ $# -eq 1 ] || { echo "usage: bench/compute.sh [--record] [--real-gpu] BUILD_DIR" >&2; exit 2; }
BUILD=$(cd "$1" && pwd)
SRC=$(cd "$(dirname "$0")/.." && pwd)
. "$SRC/bench/section.sh"
OUT=$(bench_destination "$RECORD" "$SRC")
QUICK=${BENCH_QUICK:-0}
BURN=$BUILD/bin/convgpu-burn
for p in "$BUILD/bin/convgpud" "$BUILD/bin/convgpu" "$BURN" "$BUILD/lib/libconvgpu.so"; do
    [ -e "$p" ] || { echo "compute.sh: missing $p (build first)" >&2; exit 1; }
done
HOST_LDLP=${LD_LIBRARY_PATH:-}

TMP=$(mktemp -d /tmp/convgpu-bench-compute.XXXXXX)
DPID=
cleanup() {
    set +e
    [ -z "$DPID" ] || { kill -TERM "$DPID" 2>/dev/null; wait "$DPID" 2>/dev/null; }
    # Workloads still running (a run stopped early), once the daemon is
    # stopped: every one names a file under $TMP.
    pkill -KILL -f "$TMP/" 2>/dev/null
    if [ -n "${BENCH_KEEP:-}" ]; then log "kept $TMP"; else rm -rf "$TMP"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
trap 'echo "compute.sh: line $LINENO: exit $?: $BASH_COMMAND" >&2' ERR
set -E # the trap also in functions and subshells
log() { echo "compute.sh: $*" >&2; }

SAMPLE_MS=${CONVGPU_EMU_SAMPLE_MS:-166}
WIN_PERIODS=60 # 60 sample periods: 9.96 s with the emulator's default 166 ms
if [ "$QUICK" = 1 ]; then KERNELS="1000"; RUN_S=25; ROUNDS=2; LAUNCHES=20000
else KERNELS="10 1000 50000"; RUN_S=45; ROUNDS=5; LAUNCHES=200000; fi

. "$SRC/bench/daemon.sh"
start_bench_daemon

# container SHARE MODE FILE: creates a container (memory 256MiB, the share if not "-"); its
# environment into FILE; prints its id.
container() {
    local args=(create --gpu-memory 256MiB) out
    [ "$1" = - ] || args+=(--gpu-compute "$1" --compute-mode "$2")
    out=$(cg "${args[@]}")
    echo "$out" | tail -n +2 >"$3"
    if [ "$REAL" = 1 ] && [ -n "$HOST_LDLP" ]; then echo "LD_LIBRARY_PATH=$HOST_LDLP" >>"$3"; fi
    printf '%s\n' "${out%%$'\n'*}" # its first line (head would take SIGPIPE under pipefail)
}
native_env() {
    if [ "$REAL" = 1 ]; then echo "LD_LIBRARY_PATH=$HOST_LDLP" >"$1"; return; fi
    printf '%s\n' "LD_LIBRARY_PATH=$BUILD/lib/emu" "CONVGPU_EMU_DEVICES=16GiB" \
        "CONVGPU_EMU_STATE=$RUN/emu/state" >"$1"
}
envrun() { local f=$1; shift; env -i PATH="$PATH" HOME="${HOME:-/}" $(cat "$f") "$@"; }
native_env "$TMP/native.env"

# depth_for KERNEL_US: kernels in flight per thread, 10 ms of them (at least 2).
depth_for() { local d=$((10000 / $1)); [ "$d" -ge 2 ] || d=2; echo "$d"; }

# scenario NAME KERNEL_US "SHARE:MODE:START_S ..." -> "JUDGED_WINDOWS WORST" on stdout, the
# per-window shares in $TMP/NAME.windows. Each container starts START_S seconds after the first;
# all stop together RUN_S seconds after the last one started. Device time per process and window
# comes from NVML (nvml_windows.py): windows of WIN_PERIODS sample periods.
scenario() {
    local name=$1 kus=$2 specs=$3 i=0 pids=() ids=() spec targets=""
    rm -f "$TMP/stop.$name" "$TMP/stopnvml.$name"
    envrun "$TMP/native.env" python3 "$SRC/bench/nvml_windows.py" "$SAMPLE_MS" "$WIN_PERIODS" \
        "$TMP/stopnvml.$name" >"$TMP/$name.nvml" 2>"$TMP/$name.nvml.err" &
    local poller=$!
    local t0=$SECONDS
    for spec in $specs; do
        IFS=: read -r share mode start <<<"$spec"
        targets="$targets $share"
        while [ $((SECONDS - t0)) -lt "$start" ]; do sleep 0.2; done
        ids+=("$(container "$share" "$mode" "$TMP/$name.$i.env")")
        # exec: the pid we keep is the burn's own, the one NVML reports.
        (exec env -i PATH="$PATH" HOME="${HOME:-/}" $(cat "$TMP/$name.$i.env") "$BURN" \
            --kernel-us "$kus" --depth "$(depth_for "$kus")" --until "$TMP/stop.$name" \
            >"$TMP/$name.$i.out" 2>&1) &
        pids+=("$!")
        i=$((i + 1))
    done
    sleep "$RUN_S" # the benchmark's length: a measurement, not a wait for a condition
    touch "$TMP/stop.$name"
    for p in "${pids[@]}"; do wait "$p" || log "$name: a burn failed: $(cat "$TMP/$name".*.out)"; done
    sleep 1 # the last sample periods end, then the poller reads them
    touch "$TMP/stopnvml.$name"
    wait "$poller" || log "$name: the NVML poller failed: $(cat "$TMP/$name.nvml.err")"
    for id in "${ids[@]}"; do cg rm "$id" >/dev/null 2>&1 || true; done
    # Judge the windows strictly inside the span in which every container has samples.
    awk -v pids="${pids[*]}" -v targets="$targets" -v wus="$((WIN_PERIODS * SAMPLE_MS * 1000))" \
        -v out="$TMP/$name.windows" '
        BEGIN { n = split(pids, P, " "); split(targets, T, " "); for (c = 1; c <= n; c++) idx[P[c]] = c }
        ($2 in idx) { c = idx[$2]; b[$1, c] = $3
                      if (!((c) in lo) || $1 < lo[c]) lo[c] = $1; if (!((c) in hi) || $1 > hi[c]) hi[c] = $1 }
        END { L = -1e9; H = 1e9
              for (c = 1; c <= n; c++) { if (!(c in lo)) { print "0 nan"; exit } if (lo[c] > L) L = lo[c]; if (hi[c] < H) H = hi[c] }
              worst = 0; over = 0; under = 0; nw = 0; mindev = 1e9
              for (w = L + 1; w < H; w++) { nw++; line = w; dev = 0
                  for (c = 1; c <= n; c++) { pct = 100 * b[w, c] / wus; off = pct - T[c]; dev += pct
                      if (off > over) over = off; if (-off > under) under = -off
                      line = line sprintf(" %.1f", pct) }
                  if (dev < mindev) mindev = dev
                  print line > out }
              worst = over > under ? over : under
              printf "%d %.2f %.2f %.2f %.1f\n", nw, worst, over, under, (nw ? mindev : 0) }' "$TMP/$name.nvml"
}

GEN=$TMP/gen.md
emit() { printf '%s\n' "$@" >>"$GEN"; }
emit "Generated by \`bench/compute.sh$([ "$REAL" = 1 ] && echo ' --real-gpu') $1\`$([ "$QUICK" = 1 ] && echo ' (BENCH_QUICK=1: smoke run, numbers not meaningful)') on $(date -u '+%Y-%m-%d %H:%M UTC'), commit \`$(git -C "$SRC" rev-parse --short HEAD 2>/dev/null || echo unknown)\`, $(nproc) cores$([ "$REAL" = 1 ] && echo ", GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | sed -n 1p)")."
emit "" "Shares: each container runs convgpu-burn (10 ms of kernels in flight, at least 2) for ${RUN_S} s after the last one started; its share of a window is its device time by NVML's per-process samples over the window (60 sample periods). **worst** = the largest distance, in percentage points, of any container's share in any judged window from its target; it is split into the worst excess (a share not held) and the worst shortfall, with the device's busy time in the least busy window: a shortfall with the device below 100% is time the device did not deliver, not time another container took." ""
emit "| scenario | kernel | judged windows | worst window, points off target | above target (worst) | below target (worst) | device busy, lowest window | target |" "|---|---|---|---|---|---|---|---|"
KERNELS=${BENCH_KERNELS:-$KERNELS}
for k in $KERNELS; do
    log "hard 30/70, ${k} us kernels"
    read -r nw worst over under busy < <(scenario "h2_$k" "$k" "30:hard:0 70:hard:0")
    emit "| hard 30/70 | ${k} us | $nw | $worst | $over | $under | $busy% | <= 3 |"
    log "hard 10/20/30/40, ${k} us kernels"
    read -r nw worst over under busy < <(scenario "h4_$k" "$k" "10:hard:0 20:hard:0 30:hard:0 40:hard:0")
    emit "| hard 10/20/30/40 | ${k} us | $nw | $worst | $over | $under | $busy% | <= 3 |"
    log "hard 10 alone, ${k} us kernels"
    read -r nw worst over under busy < <(scenario "h1_$k" "$k" "10:hard:0")
    emit "| hard 10 alone (a cap on an idle device) | ${k} us | $nw | $worst | $over | $under | $busy% | <= 3 |"
    log "elastic 30 alone, ${k} us kernels"
    read -r nw worst over under busy < <(scenario "e1_$k" "$k" "30:elastic:0")
    alone=$( { awk '{ print $2 }' "$TMP/e1_$k.windows" 2>/dev/null || true; } | sort -g | awk 'NR == 1')
    emit "| elastic 30 alone: its lowest window | ${k} us | $nw | ${alone:-?}% of the device | | | $busy% | >= 85% |"
    log "elastic 30 then 70, ${k} us kernels"
    read -r nw worst over under busy < <(scenario "e2_$k" "$k" "30:elastic:0 70:elastic:2")
    emit "| elastic 30, then 70 joins (judged from its first full window) | ${k} us | $nw | $worst | $over | $under | $busy% | <= 3 |"
done
emit ""

# ---- launch cost -------------------------------------------------------------------------------
log "launch cost"
container - - "$TMP/none.env" >/dev/null
container 100 hard "$TMP/full.env" >/dev/null
# A share that bounds run-ahead but, alone, never closes its gate: 99, elastic.
container 99 elastic "$TMP/marks.env" >/dev/null
median_of() { sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
: >"$TMP/cost"
for r in $(seq "$ROUNDS"); do
    n=$(envrun "$TMP/native.env" "$BURN" --launches "$LAUNCHES" | sed -n 's/.*launch_ns_median=\([0-9]*\).*/\1/p')
    u=$(envrun "$TMP/none.env" "$BURN" --launches "$LAUNCHES" | sed -n 's/.*launch_ns_median=\([0-9]*\).*/\1/p')
    f=$(envrun "$TMP/marks.env" "$BURN" --launches "$LAUNCHES" | sed -n 's/.*launch_ns_median=\([0-9]*\).*/\1/p')
    echo "$n $u $f" >>"$TMP/cost"
done
N=$(awk '{ print $1 }' "$TMP/cost" | median_of)
DU=$(awk '{ print $2 - $1 }' "$TMP/cost" | median_of)
DF=$(awk '{ print $3 - $1 }' "$TMP/cost" | median_of)
emit "Launch cost (\`convgpu-burn --launches $LAUNCHES\`, a 0 us kernel, each launch timed alone; $ROUNDS interleaved rounds): native median ${N} ns; added in a container without a share: **${DU} ns**; with a share (99, elastic, alone: gate read + run-ahead marks): **${DF} ns** (target: <= 50 ns for a launch within its budget)." ""

# ---- throughput at share 100 -----------------------------------------------------------------
log "throughput at share 100"
: >"$TMP/tput"
for r in $(seq "$ROUNDS"); do
    a=$(envrun "$TMP/native.env" "$BURN" --kernel-us 1000 --depth 10 --seconds 5 | sed -n 's/.*kernels=\([0-9]*\).*/\1/p')
    b=$(envrun "$TMP/full.env" "$BURN" --kernel-us 1000 --depth 10 --seconds 5 | sed -n 's/.*kernels=\([0-9]*\).*/\1/p')
    echo "$a $b" >>"$TMP/tput"
done
RATIO=$(awk '{ print ($1 > 0) ? $2 / $1 : 0 }' "$TMP/tput" | median_of)
emit "Throughput at share 100 (1 ms kernels, 10 in flight, 5 s; a share of 100 never closes its gate, so it has no run-ahead bound, $ROUNDS interleaved rounds): $(awk -v r="$RATIO" 'BEGIN { printf "%.3f", r }') of native (median ratio; target >= 0.99)." ""

if [ "$REAL" = 1 ]; then BEGIN='<!-- bench-compute-gpu:begin -->'; END='<!-- bench-compute-gpu:end -->'
else BEGIN='<!-- bench-compute:begin -->'; END='<!-- bench-compute:end -->'; fi
if [ -n "$OUT" ]; then cat "$GEN"; fi # printed either way
write_or_print "$OUT" "$BEGIN" "$END" "$GEN" "## Compute shares$([ "$REAL" = 1 ] && echo ' (real GPU)')"

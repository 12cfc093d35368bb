#!/usr/bin/env bash
# pause.sh — what pausing and resuming a container costs against the copy bandwidth, and what it
# frees against a swap (issue 38; docs/PAUSE.md). On the emulated GPU (the driver's checkpoint
# API as src/emu/checkpoint.c implements it: device bytes copied to host memory and back).
#
# Method: a private daemon (--swap yes, two emulated GPUs, a 518 MiB context as the H200 this
# project ran on has with CUDA 13); a container holding N GiB (swap_probe big: one allocation,
# a pattern, every byte checked at its end). Each round, interleaved: bench_swap's pinned
# device-to-host copy, and host-to-device copy into device memory written for the first time,
# of the same N GiB (the run's copy bandwidth, the reference: a restore writes pages the
# checkpoint gave back), then `convgpu pause` and `convgpu resume` of the container, their times from
# inspect (pause_s, resume_s: the daemon's whole step, helper start and driver locks
# included). Figures: medians over the rounds; pause GiB/s = bytes off the device / pause_s.
# Then the memory each frees: the container paused, then swapped, NVML's per-process figure of
# its process before and after (the context stays on the device under swap).
#
# Usage: bench/pause.sh [--record] [--real-gpu] BUILD_DIR   (BENCH_ROUNDS, BENCH_GIB change the
# run; --real-gpu: the node's own driver and NVML instead of the emulator)
set -euo pipefail

RECORD=0
REAL=0
while [ $# -gt 1 ]; do
    case $1 in --record) RECORD=1 ;; --real-gpu) REAL=1 ;; *) break ;; esac
    shift
done
[ $# -eq 1 ] || { echo "usage: bench/pause.sh [--record] [--real-gpu] BUILD_DIR" >&2; exit 2; }
BUILD=$(cd "$1" && pwd)
SRC=$(cd "$(dirname "$0")/.." && pwd)
. "$SRC/bench/section.sh"
OUT=$(bench_destination "$RECORD" "$SRC")
ROUNDS=${BENCH_ROUNDS:-5}
GIB=${BENCH_GIB:-1}
for p in convgpud convgpu convgpu-checkpoint swap_probe; do
    [ -x "$BUILD/bin/$p" ] || { echo "pause.sh: missing $BUILD/bin/$p (build first)" >&2; exit 1; }
done
[ -x "$BUILD/bench/bench_swap" ] || { echo "pause.sh: missing $BUILD/bench/bench_swap" >&2; exit 1; }

TMP=$(mktemp -d /tmp/convgpu-bench-pause.XXXXXX)
RUN=$TMP/run
DPID=
cleanup() {
    set +e
    [ -z "$DPID" ] || { kill -TERM "$DPID" 2>/dev/null; wait "$DPID" 2>/dev/null; }
    pkill -KILL -f "$TMP/" 2>/dev/null
    rm -rf "$TMP"
}
trap cleanup EXIT
log() { echo "pause.sh: $*" >&2; }

export CONVGPU_EMU_STATE=$RUN/emu/state CONVGPU_EMU_CONTEXT=518MiB
DEVS="$((GIB * 2 + 2))GiB,$((GIB * 2 + 2))GiB"
mkdir -p "$RUN"
EMU_ARGS=(--emulate "$DEVS")
EMU_LIB=$BUILD/lib/emu
if [ "$REAL" = 1 ]; then EMU_ARGS=(); EMU_LIB=${LD_LIBRARY_PATH:-}; fi
"$BUILD/bin/convgpud" --runtime-dir "$RUN" --foreground "${EMU_ARGS[@]}" --swap yes \
    >"$TMP/daemon.log" 2>&1 &
DPID=$!
for _ in $(seq 500); do
    curl -sf -o /dev/null --unix-socket "$RUN/control.sock" http://convgpu/v1/version && break
    sleep 0.02
done
cg() { "$BUILD/bin/convgpu" --runtime-dir "$RUN" "$@"; }
field() { cg inspect "$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)[sys.argv[1]])' "$2"; }
nvml_proc() { # bytes process $1 uses on device 0, by NVML (the emulated libnvidia-ml)
    LD_LIBRARY_PATH=$EMU_LIB python3 - "$1" <<'EOF'
import ctypes, sys
n = ctypes.CDLL("libnvidia-ml.so.1")
class P(ctypes.Structure):
    _fields_ = [("pid", ctypes.c_uint), ("used", ctypes.c_ulonglong), ("gi", ctypes.c_uint), ("ci", ctypes.c_uint)]
n.nvmlInit_v2(); h = ctypes.c_void_p(); n.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(h))
a, c = (P * 64)(), ctypes.c_uint(64)
n.nvmlDeviceGetComputeRunningProcesses_v3(h, ctypes.byref(c), a)
print(sum(p.used for p in a[:c.value] if p.pid == int(sys.argv[1])))
EOF
}
median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

MIB=$((GIB * 1024))
cg run --name p --device 0 --gpu-memory "$((MIB + 600))MiB" -- \
    "$BUILD/bin/swap_probe" big "$TMP/p.go" "$MIB" >"$TMP/p.out" 2>&1 &
PP=$!
for _ in $(seq 3000); do grep -q '^ready$' "$TMP/p.out" 2>/dev/null && break; sleep 0.02; done
pid=$(cg inspect p | python3 -c 'import json,sys; print(json.load(sys.stdin)["process_list"][0]["pid"])')

: >"$TMP/rounds"
for r in $(seq "$ROUNDS"); do
    LD_LIBRARY_PATH=$EMU_LIB CONVGPU_EMU_STATE=$TMP/copy-state CONVGPU_EMU_DEVICES=$DEVS \
        "$BUILD/bench/bench_swap" --rounds 3 --size "$((GIB << 30))" --chunks 1 >"$TMP/copy" 2>&1
    co=$(sed -n 's/^op=copy_out .*med_gbps=\([0-9.]*\).*/\1/p' "$TMP/copy")
    ci=$(sed -n 's/^op=copy_in_fresh .*med_gbps=\([0-9.]*\).*/\1/p' "$TMP/copy")
    cg pause p >/dev/null
    cg resume p >/dev/null
    bytes=$((GIB << 30)); ps=$(field p pause_s); rs=$(field p resume_s) # the bytes copied
    echo "$co $ci $bytes $ps $rs" >>"$TMP/rounds"
    log "round $r: copy out ${co} GB/s, in ${ci} GB/s; pause ${ps} s, resume ${rs} s"
done
gbps() { awk -v b="$1" -v s="$2" 'BEGIN { printf "%.2f", b / s / 1e9 }'; }
CO=$(cut -d' ' -f1 "$TMP/rounds" | median); CI=$(cut -d' ' -f2 "$TMP/rounds" | median)
B=$(cut -d' ' -f3 "$TMP/rounds" | median)
PS=$(cut -d' ' -f4 "$TMP/rounds" | median); RS=$(cut -d' ' -f5 "$TMP/rounds" | median)
PG=$(gbps "$B" "$PS"); RG=$(gbps "$B" "$RS")
RP=$(awk -v a="$PG" -v b="$CO" 'BEGIN { printf "%.2f", a / b }')
RR=$(awk -v a="$RG" -v b="$CI" 'BEGIN { printf "%.2f", a / b }')

# What each frees: NVML's figure for the process, in, paused, and swapped.
in_use=$(nvml_proc "$pid")
cg pause p >/dev/null; paused=$(nvml_proc "$pid"); cg resume p >/dev/null
cg swap p >/dev/null
for _ in $(seq 3000); do [ "$(field p swap)" = out ] && break; sleep 0.02; done
swapped=$(nvml_proc "$pid")
cg unswap p >/dev/null
for _ in $(seq 3000); do [ "$(field p swap)" = in ] && break; sleep 0.02; done
touch "$TMP/p.go"
wait "$PP" && ok=ok || ok="FAILED ($(tail -n1 "$TMP/p.out"))"
mib() { echo $(( $1 >> 20 )); }

GEN=$TMP/section.md
{
    echo "Command: \`bench/pause.sh build\` ($ROUNDS rounds of $GIB GiB; $(nproc) CPUs, $(uname -m)," \
        "$(date -u +%Y-%m-%d), commit $(git -C "$SRC" rev-parse --short HEAD 2>/dev/null || echo ?))." \
        "Emulated GPU: the checkpoint API copies device bytes to host memory with memcpy, so the" \
        "reference is the emulator's own pinned copy, measured in the same rounds (bench_swap)."
    echo
    echo "| | GB/s (median) | against the copy |"
    echo "|---|---|---|"
    echo "| device-to-host copy (reference) | $CO | 1.00 |"
    echo "| pause ($GIB GiB copied; the context released too, whole step) | $PG | $RP |"
    echo "| host-to-device copy into fresh device memory (reference: a restore writes pages the checkpoint gave back) | $CI | 1.00 |"
    echo "| resume (whole step) | $RG | $RR |"
    echo
    echo "Memory its process holds on the device by NVML (518 MiB context + $GIB GiB):" \
        "running $(mib "$in_use") MiB; paused $(mib "$paused") MiB; swapped out" \
        "$(mib "$swapped") MiB (the context stays). Every byte checked at the end: $ok."
    echo
    echo "The pause writes into new host memory, faulted in page by page (the emulator's" \
        "checkpoint mallocs its copies), where the reference copies into warm pinned memory; on" \
        "a real GPU the driver's own checkpoint decides (docs/GPU-VALIDATION.md, not yet run)."
} >"$GEN"
cat "$GEN"
[ -z "$OUT" ] || write_section "$OUT" "<!-- bench/pause.sh begin -->" "<!-- bench/pause.sh end -->" \
    "$GEN" "## Pause and resume against the copy (emulated GPU, bench/pause.sh)"

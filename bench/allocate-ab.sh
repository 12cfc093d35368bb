#!/usr/bin/env bash
# allocate-ab.sh — the device plugin's Allocate latency (k8s-plugin.sh's first target, p99 <=
# 10 ms) for two builds in one run, interleaved: each build runs its own convgpud (emulated
# 8GiB), kubelet stand-in and convgpu-device-plugin; every round runs 100 back-to-back Allocate
# calls (4 memory units each, one connection, as kubelet keeps one) against each build's
# plugin, in alternating order (base new, new base, ...), then 100 GetDevicePluginOptions as
# the control. Prints each build's p50 and p99 per round, their medians, and the paired ratios
# new/base per round. Writes nothing. No containerd: the Allocate path alone.
#
#   bench/allocate-ab.sh [--rounds N] BASE_BUILD NEW_BUILD
set -euo pipefail

ROUNDS=15
if [ "${1:-}" = --rounds ]; then ROUNDS=$2; shift 2; fi
if [ $# -ne 2 ]; then echo "usage: bench/allocate-ab.sh [--rounds N] BASE_BUILD NEW_BUILD" >&2; exit 2; fi
. "$(dirname "$0")/ab_builds.sh"
AB_HINT="the plugin needs grpc++" ab_open allocate-ab.sh convgpu-alab "$1" "$2" \
    bin/convgpud bin/kubelet-standin bin/convgpu-device-plugin
trap 'exit 130' INT TERM
until_there() { # until_there WHAT TEST-ARGS...: a wait for a file; 60 s bounds a hang only
    local what=$1 n=0; shift
    until test "$@"; do
        n=$((n + 1))
        [ $n -le 3000 ] || { echo "allocate-ab.sh: no $what" >&2; cat "$TMP"/*.log >&2; exit 1; }
        sleep 0.02
    done
}

for i in 0 1; do
    b=${BUILDS[$i]} d=$TMP/${NAMES[$i]}
    mkdir -p "$d/run" "$d/dp" "$d/kubelet"
    CONVGPU_EMU_STATE=$d/run/emu/state CONVGPU_EMU_CONTEXT=2MiB "$b/bin/convgpud" \
        --runtime-dir "$d/run" --emulate 8GiB --foreground >"$TMP/${NAMES[$i]}-daemon.log" 2>&1 &
    PIDS+=("$!")
    until_there "${NAMES[$i]} daemon" -S "$d/run/control.sock"
    "$b/bin/kubelet-standin" serve --dir "$d/dp" --state "$d/kubelet" \
        >"$TMP/${NAMES[$i]}-standin.log" 2>&1 &
    PIDS+=("$!")
    until_there "${NAMES[$i]} stand-in" -e "$d/kubelet/ready"
    "$b/bin/convgpu-device-plugin" --plugin-dir "$d/dp" --runtime-dir "$d/run" \
        >"$TMP/${NAMES[$i]}-plugin.log" 2>&1 &
    PIDS+=("$!")
    until_there "${NAMES[$i]} memory units" -s "$d/kubelet/convgpu.io_gpu-memory.list"
done

IDS=gpu0-mem-0,gpu0-mem-1,gpu0-mem-2,gpu0-mem-3
kv() { tr ' ' '\n' <<<"$1" | sed -n "s/^$2=//p"; }
one() { # one INDEX ROUND: 100 Allocate and 100 GetDevicePluginOptions against build INDEX
    local i=$1 s=$TMP/${NAMES[$1]}/dp/convgpu-memory.sock out ctl
    out=$("${BUILDS[$i]}/bin/kubelet-standin" bench-allocate --socket "$s" --ids "$IDS" --count 100)
    ctl=$("${BUILDS[$i]}/bin/kubelet-standin" bench-allocate --socket "$s" --count 100)
    echo "$2 ${NAMES[$i]} $(kv "$out" p50_ms) $(kv "$out" p99_ms) $(kv "$ctl" p50_ms) $(kv "$ctl" p99_ms)" >>"$TMP/rounds"
}
for i in 0 1; do # warm both
    "${BUILDS[$i]}/bin/kubelet-standin" bench-allocate --socket "$TMP/${NAMES[$i]}/dp/convgpu-memory.sock" \
        --ids "$IDS" --count 20 >/dev/null
done
: >"$TMP/rounds"
for r in $(seq "$ROUNDS"); do
    if [ $((r % 2)) = 1 ]; then one 0 "$r"; one 1 "$r"; else one 1 "$r"; one 0 "$r"; fi
done

stats() { sort -g | awk '{ a[NR] = $1 } END { if (!NR) { print "nan nan nan"; exit }
    m = (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2; print m, a[1], a[NR] }'; }
col() { awk -v b="$1" -v c="$2" '$2 == b { print $c }' "$TMP/rounds"; }
echo "bench/allocate-ab.sh --rounds $ROUNDS $1 $2"
echo "machine: $(nproc) cores, $(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo), load $(cut -d' ' -f1-3 /proc/loadavg) at the end"
echo "round build Allocate_p50_ms Allocate_p99_ms control_p50_ms control_p99_ms"
sort -n "$TMP/rounds"
for c in "3 Allocate p50" "4 Allocate p99" "5 control p50" "6 control p99"; do
    read -r n what <<<"$c"
    for b in base new; do
        read -r m lo hi <<<"$(col "$b" "$n" | stats)"
        printf '  %-16s %-4s median %.3f ms [%.3f-%.3f]\n' "$what" "$b" "$m" "$lo" "$hi"
    done
    read -r m lo hi <<<"$(paste <(col base "$n") <(col new "$n") | awk '$1 > 0 { print $2 / $1 }' | stats)"
    printf '  %-16s new / base, paired by round: %.2f [%.2f-%.2f]\n' "$what" "$m" "$lo" "$hi"
done

#!/usr/bin/env bash
# swap-alloc.sh — what a container that may swap pays on the allocation path and on kernel-bound
# work when nothing is swapped (issue 20, "Performance"; docs/SWAP.md), against a container
# that may not swap and against the program alone (native), on the emulated GPU or a real one.
#
#   bench/swap-alloc.sh BUILD_DIR              the emulated GPU (a private daemon, --swap yes)
#   bench/swap-alloc.sh --real-gpu BUILD_DIR   the host's GPU (system libcuda, a private daemon)
# Environment: ROUNDS (default 7), ALLOCS (bench_api rounds of 8 allocations, default 200),
#              KERNEL_SECONDS (each throughput run, default 5), SKIP_KERNELS=1 (allocation only).
#
# Method. One daemon started with --swap yes; four containers of the same limit: one created
# --no-swap (plain cuMemAlloc), three that may swap (VMM-backed): as shipped (a free keeps its
# memory for the next allocation of the size, docs/SWAP.md "Kept memory"), without kept memory
# (CONVGPU_SWAP_KEEP_FREED=0: a free releases, only the address range is cached), and without
# either cache (also CONVGPU_SWAP_RESERVE_CACHE=0: every allocation reserves, every free gives
# the range back, as before the caches). Every round runs each variant once, in the same order,
# so drift and load hit them alike; figures are medians over rounds of each run's own median.
#  * Allocation path: bench/bench_api's 2 MiB cuMemAlloc_v2 and cuMemFree_v2, each call timed
#    alone (median over 8 x ALLOCS calls; the sum of the two medians). Calls timed alone, not
#    batches: on a loaded machine a batch's mean counts the time others ran, and the longer
#    the batch the more of it.
#  * Kernel-bound throughput: convgpu-burn --alloc 2MiB (one device allocation held throughout,
#    so that in the swapping container every launch counts itself in flight) with 1 ms kernels,
#    10 in flight, KERNEL_SECONDS; and launch cost (--launches: each launch of a 0 us kernel
#    timed alone). Ratios are each round's container figure over that round's native one.
# Output: one line per figure on stdout.
set -euo pipefail

REAL=0
if [ "${1:-}" = "--real-gpu" ]; then REAL=1; shift; fi
[ $# -eq 1 ] || { echo "usage: bench/swap-alloc.sh [--real-gpu] BUILD_DIR" >&2; exit 2; }
BUILD=$(cd "$1" && pwd)
SRC=$(cd "$(dirname "$0")/.." && pwd)
ROUNDS=${ROUNDS:-7}
ALLOCS=${ALLOCS:-200}
KSEC=${KERNEL_SECONDS:-5}
API=$BUILD/bench/bench_api
BURN=$BUILD/bin/convgpu-burn
for p in "$BUILD/bin/convgpud" "$BUILD/bin/convgpu" "$API" "$BURN"; do
    [ -x "$p" ] || { echo "swap-alloc.sh: missing $p (build first)" >&2; exit 1; }
done
HOST_LDLP=${LD_LIBRARY_PATH:-}

TMP=$(mktemp -d /tmp/convgpu-bench-swapalloc.XXXXXX)
DPID=
cleanup() {
    set +e
    [ -z "$DPID" ] || { kill -TERM "$DPID" 2>/dev/null; wait "$DPID" 2>/dev/null; }
    # Workloads still running (a run stopped early), once the daemon is
    # stopped: every one names a file under $TMP.
    pkill -KILL -f "$TMP/" 2>/dev/null || true
    rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
trap 'echo "swap-alloc.sh: line $LINENO: exit $?: $BASH_COMMAND" >&2' ERR
set -E # the trap also in functions and subshells

. "$SRC/bench/daemon.sh"
start_bench_daemon --swap yes

# container FILE [create args...]: a container of 1 GiB; its environment into FILE.
container() {
    local f=$1 out; shift
    out=$(cg create --gpu-memory 1GiB "$@")
    echo "$out" | tail -n +2 >"$f"
    if [ "$REAL" = 1 ] && [ -n "$HOST_LDLP" ]; then echo "LD_LIBRARY_PATH=$HOST_LDLP" >>"$f"; fi
}
if [ "$REAL" = 1 ]; then echo "LD_LIBRARY_PATH=$HOST_LDLP" >"$TMP/native.env"
else printf '%s\n' "LD_LIBRARY_PATH=$BUILD/lib/emu" "CONVGPU_EMU_DEVICES=16GiB" \
        "CONVGPU_EMU_STATE=$RUN/emu/state" >"$TMP/native.env"; fi
container "$TMP/noswap.env" --no-swap
container "$TMP/swap.env"
container "$TMP/nokeep.env"
echo "CONVGPU_SWAP_KEEP_FREED=0" >>"$TMP/nokeep.env"
container "$TMP/nocache.env"
printf '%s\n' "CONVGPU_SWAP_RESERVE_CACHE=0" "CONVGPU_SWAP_KEEP_FREED=0" >>"$TMP/nocache.env"
envrun() { local f=$1; shift; env -i PATH="$PATH" HOME="${HOME:-/}" $(cat "$f") "$@"; }

VARIANTS="native noswap nocache nokeep swap"
median() { sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
value() { sed -n "s/.*$1=\([0-9.]*\).*/\1/p"; }

echo "machine: $(nproc) cores, $(uname -r), load average $(cut -d' ' -f1-3 /proc/loadavg) at start" \
     "$([ "$REAL" = 1 ] && nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | sed -n 1p)"
for r in $(seq "$ROUNDS"); do
    for v in $VARIANTS; do
        envrun "$TMP/$v.env" "$API" --rounds "$ALLOCS" --size 2097152 >"$TMP/api.$v"
        a=$(grep '^op=alloc ' "$TMP/api.$v" | value med_ns)
        f=$(grep '^op=free ' "$TMP/api.$v" | value med_ns)
        echo "$a $f" | awk '{ print $1 + $2 }' >>"$TMP/alloc.$v"
    done
    if [ -z "${SKIP_KERNELS:-}" ]; then
        for v in native noswap swap; do
            envrun "$TMP/$v.env" "$BURN" --alloc 2097152 --kernel-us 1000 --depth 10 \
                --seconds "$KSEC" | value kernels >>"$TMP/tput.$v"
            envrun "$TMP/$v.env" "$BURN" --alloc 2097152 --launches 100000 \
                | value launch_ns_median >>"$TMP/launch.$v"
        done
    fi
done
echo "load average $(cut -d' ' -f1-3 /proc/loadavg) at end; $ROUNDS rounds"
for v in $VARIANTS; do
    echo "alloc+free 2MiB $v: median $(median <"$TMP/alloc.$v") ns (rounds: $(tr '\n' ' ' <"$TMP/alloc.$v"))"
done
# Paired within each round: what swap adds over --no-swap, and what the cache saves.
paired() { paste "$TMP/alloc.$1" "$TMP/alloc.$2" | awk "{ print $3 }" | median; }
echo "alloc+free added over noswap (median of per-round differences): swap $(paired swap noswap '$1 - $2') ns, nokeep +$(paired nokeep noswap '$1 - $2') ns, nocache +$(paired nocache noswap '$1 - $2') ns"
echo "alloc+free added over native (median of per-round differences): swap $(paired swap native '$1 - $2') ns, noswap $(paired noswap native '$1 - $2') ns"
echo "alloc+free (median of per-round ratios): swap/nokeep $(paired swap nokeep '$1 / $2'), swap/nocache $(paired swap nocache '$1 / $2'), nokeep/nocache $(paired nokeep nocache '$1 / $2')"
[ -z "${SKIP_KERNELS:-}" ] || exit 0
for v in noswap swap; do
    r=$(paste "$TMP/tput.$v" "$TMP/tput.native" | awk '{ print ($2 > 0) ? $1 / $2 : 0 }' | median)
    d=$(paste "$TMP/launch.$v" "$TMP/launch.native" | awk '{ print $1 - $2 }' | median)
    echo "throughput 1ms kernels $v/native: median ratio $r (kernels per round: $(tr '\n' ' ' <"$TMP/tput.$v"); native: $(tr '\n' ' ' <"$TMP/tput.native"))"
    echo "launch cost $v - native: median paired difference $d ns (native median $(median <"$TMP/launch.native") ns)"
done

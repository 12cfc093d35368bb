#!/usr/bin/env bash
# roundtrip-ab.sh — the allocation paths of two builds in one run, interleaved: the fast path's
# own work (the ledger CAS) and the slow path against a bare UNIX-socket round trip, as
# bench_roundtrip measures them (bench/run-all.sh, "Slow path vs a bare UNIX-socket round
# trip"), for a base build and a new one (say, before and after a change of the daemon's
# shape). Prints; writes nothing.
#
#   bench/roundtrip-ab.sh [--reps N] [--rounds R] BASE_BUILD NEW_BUILD
#
# Each build runs its own convgpud (emulated 8GiB, a 2MiB context) with one container, and its
# own bench_roundtrip against it. Every repetition runs one bench_roundtrip process of each
# build, in alternating order (base new, new base, ...), with the daemon under test, the client
# and its bare server pinned to CPU 0 as run-all.sh does, so load that comes and goes hits both
# alike. Per build: the median over repetitions of each process's median [min-max]; then the
# paired ratios new/base within each repetition (median [min-max]): within noise they are 1.
set -euo pipefail

REPS=15
ROUNDS=200
while [ $# -gt 2 ]; do
    case $1 in
        --reps) REPS=$2; shift 2 ;;
        --rounds) ROUNDS=$2; shift 2 ;;
        *) break ;;
    esac
done
if [ $# -ne 2 ]; then
    echo "usage: bench/roundtrip-ab.sh [--reps N] [--rounds R] BASE_BUILD NEW_BUILD" >&2; exit 2
fi
. "$(dirname "$0")/ab_builds.sh"
ab_open roundtrip-ab.sh convgpu-rtab "$1" "$2" bin/convgpud bin/convgpu bench/bench_roundtrip
trap 'exit 130' INT TERM

SOCKS=()
for i in 0 1; do
    run=$TMP/${NAMES[$i]}
    mkdir -p "$run"
    CONVGPU_EMU_STATE=$run/emu/state CONVGPU_EMU_CONTEXT=2MiB \
        "${BUILDS[$i]}/bin/convgpud" --runtime-dir "$run" --emulate 8GiB --foreground \
        >"$TMP/${NAMES[$i]}.log" 2>&1 &
    PIDS+=("$!")
    n=0
    while [ ! -S "$run/control.sock" ]; do # a wait for the socket; 60 s bounds a hang only
        n=$((n + 1))
        if [ $n -gt 3000 ] || ! kill -0 "${PIDS[$i]}" 2>/dev/null; then
            echo "roundtrip-ab.sh: the ${NAMES[$i]} daemon did not start:" >&2
            cat "$TMP/${NAMES[$i]}.log" >&2; exit 1
        fi
        sleep 0.02
    done
    id=$("${BUILDS[$i]}/bin/convgpu" --runtime-dir "$run" create --gpu-memory 4GiB | head -n 1)
    SOCKS+=("$run/containers/$id/container.sock")
done

PIN=()
if command -v taskset >/dev/null && [ "$(nproc)" -gt 1 ]; then PIN=(taskset -c 0); fi
one() { # one INDEX REP: one bench_roundtrip process of build INDEX, its daemon on CPU 0
    local i=$1
    [ ${#PIN[@]} -eq 0 ] || taskset -a -p -c 0 "${PIDS[$i]}" >/dev/null
    ${PIN[@]+"${PIN[@]}"} "${BUILDS[$i]}/bench/bench_roundtrip" --socket "${SOCKS[$i]}" \
        --rounds "$ROUNDS" --batch 50 | sed "s/^/rep=$2 build=${NAMES[$i]} /" >>"$TMP/rt.txt"
    [ ${#PIN[@]} -eq 0 ] || taskset -a -p -c "0-$(($(nproc) - 1))" "${PIDS[$i]}" >/dev/null
}
: >"$TMP/rt.txt"
echo "[roundtrip-ab] $REPS repetitions x 2 builds x $ROUNDS rounds x 50" >&2
for r in $(seq "$REPS"); do
    if [ $((r % 2)) = 1 ]; then one 0 "$r"; one 1 "$r"; else one 1 "$r"; one 0 "$r"; fi
done

# value BUILD KIND KEY -> one number per repetition, in repetition order
value() {
    awk -v b="build=$1" -v k="kind=$2" -v key="$3" '$2 == b && index($0, " " k " ") {
        for (i = 1; i <= NF; i++) if (index($i, key "=") == 1) print substr($i, length(key) + 2) }' \
        "$TMP/rt.txt"
}
ratio_of() { # ratio_of BUILD -> ratio_proto_over_bare per repetition
    awk -v b="build=$1" '$2 == b { for (i = 1; i <= NF; i++)
        if (index($i, "ratio_proto_over_bare=") == 1) print substr($i, 23) }' "$TMP/rt.txt"
}
stats() { # stats < numbers -> "median min max"
    sort -g | awk '{ a[NR] = $1 } END { if (!NR) { print "nan nan nan"; exit }
        m = (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2; print m, a[1], a[NR] }'
}
paired() { # paired FILE_BASE FILE_NEW -> stats of new/base per repetition
    paste "$1" "$2" | awk '$1 > 0 { print $2 / $1 }' | stats
}
show() { # show LABEL UNIT m min max
    awk -v l="$1" -v u="$2" -v m="$3" -v a="$4" -v b="$5" \
        'BEGIN { printf "  %-44s %10.2f %s  [%.2f-%.2f]\n", l, m, u, a, b }'
}

echo "bench/roundtrip-ab.sh --reps $REPS --rounds $ROUNDS $1 $2"
echo "machine: $(nproc) cores, $(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo), load $(cut -d' ' -f1-3 /proc/loadavg) at the end"
for what in "bare ns med_ns bare SOCK_SEQPACKET round trip (median)" \
            "proto ns med_ns slow path: protocol round trip (median)" \
            "proto ns p99_ns slow path: protocol round trip (p99)" \
            "ledger ns med_ns fast path: ledger CAS charge + uncharge"; do
    read -r kind unit key label <<<"$what"
    echo "$label:"
    for b in base new; do
        value "$b" "$kind" "$key" >"$TMP/$b.$kind.$key"
        read -r m lo hi <<<"$(stats <"$TMP/$b.$kind.$key")"
        show "$b" "$unit" "$m" "$lo" "$hi"
    done
    read -r m lo hi <<<"$(paired "$TMP/base.$kind.$key" "$TMP/new.$kind.$key")"
    show "new / base, paired by repetition" "x " "$m" "$lo" "$hi"
done
echo "slow path / bare round trip (each process's own ratio):"
for b in base new; do
    ratio_of "$b" >"$TMP/$b.ratio"
    read -r m lo hi <<<"$(stats <"$TMP/$b.ratio")"
    show "$b" "x " "$m" "$lo" "$hi"
done
read -r m lo hi <<<"$(paired "$TMP/base.ratio" "$TMP/new.ratio")"
show "new / base, paired by repetition" "x " "$m" "$lo" "$hi"

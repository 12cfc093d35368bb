#!/usr/bin/env bash
# test_burn.sh — convgpu-burn's --grid-blocks and --steps (issue 39). --grid-blocks: the peer
# comparison launches grids sized to a kernel's length, for a limiter that charges per thread
# block. On the emulated GPU a spin
# kernel lasts its --kernel-us whatever its grid, and convgpu's interposer accounts device time,
# not blocks: the device time the daemon counts for a container is what its kernels' lengths
# add up to, with a 1-block grid and a 100000-block one. A bad count is refused. --steps: a
# synchronising loop's turnaround per step, on the wall clock, which bench/compute.sh puts in
# NVML's windows: one line per step after the first, within the run, in order, and adding up to
# the mean the burn prints. Waits for conditions, never durations.
. "$(dirname "$0")/lib.sh"
export CONVGPU_EMU_CONTEXT=6MiB
start_daemon --emulate 4GiB
BURN=$BUILD/bin/convgpu-burn

check "--grid-blocks 0 is refused with exit 2" bash -c "'$BURN' --grid-blocks 0 2>'$TMP/bad.err'; [ \$? = 2 ] && grep -q \"bad value '0'\" '$TMP/bad.err'"
check "--grid-blocks beyond the grid's x limit is refused" bash -c "! '$BURN' --grid-blocks 2147483648 2>/dev/null"
check "--help names --grid-blocks" bash -c "'$BURN' --help | grep -q -- '--grid-blocks N'"

field() { # field CONTAINER KEY: a field of `convgpu inspect`
    cg inspect "$1" 2>/dev/null | python3 -c 'import json,sys; v=json.load(sys.stdin).get(sys.argv[1]); print("" if v is None else v)' "$2"
}
busy_at_least() { awk -v b="$(field "$1" compute_busy_s)" -v want="$2" 'BEGIN { exit !(b >= want) }'; }
# Kernels of 5 ms at a hard share of 50, with a 1-block and a 100000-block grid: the daemon
# counts the container's device time from NVML's samples while the burn runs (a process that
# has left is no longer counted, so it keeps running until released); what it counts can be
# no more than the kernels completed by the burn's own count (5 ms each), and trails it only by
# the samples not out yet (a period or two: at 0.6 s counted, not half of it).
for grid in 1 100000; do
    out=$(cg create --name "g$grid" --gpu-memory 128MiB --gpu-compute 50 --compute-mode hard) ||
        { fail "create g$grid: $out"; continue; }
    echo "$out" | tail -n +2 >"$TMP/g$grid.env"
    # shellcheck disable=SC2046 # word splitting wanted
    env $(cat "$TMP/g$grid.env") "$BURN" --kernel-us 5000 --depth 4 --grid-blocks "$grid" \
        --until "$TMP/release.$grid" --progress "$TMP/progress.$grid" >"$TMP/g$grid.out" 2>&1 &
    pid=$!
    wait_for "grid $grid: the container's device time reaches 0.6 s" "$WAIT_S" busy_at_least "g$grid" 0.6 ||
        fail "grid $grid: device time $(field "g$grid" compute_busy_s) s: $(cat "$TMP/g$grid.out")"
    busy=$(field "g$grid" compute_busy_s)
    kernels=$(cat "$TMP/progress.$grid" 2>/dev/null || echo 0)
    own=$(awk -v k="$kernels" 'BEGIN { printf "%.3f", k * 0.005 }')
    check "grid $grid: counted $busy s, no more than the $own s the burn completed after" \
        awk -v b="$busy" -v o="$own" 'BEGIN { exit !(b <= o * 1.02 + 0.01) }'
    check "grid $grid: counted $busy s, at least half of the $own s the burn completed after" \
        awk -v b="$busy" -v o="$own" 'BEGIN { exit !(b >= o / 2) }'
    touch "$TMP/release.$grid"
    wait "$pid" || fail "grid $grid: the burn failed: $(cat "$TMP/g$grid.out")"
    check "grid $grid: the burn's own count is its kernels' lengths" \
        grep -Eq 'kernels=([0-9]+) busy_us=[0-9]+000 ' "$TMP/g$grid.out"
done

# ---- --steps ----------------------------------------------------------------------------------
out=$(cg create --name steps --gpu-memory 128MiB) || fail "create steps: $out"
echo "$out" | tail -n +2 >"$TMP/steps.env"
check "--steps to a file it cannot write: exit 1, said" bash -c "env \$(cat '$TMP/steps.env') '$BURN' \
    --kernel-us 100 --sync-every 4 --kernels 8 --steps '$TMP/no/such/dir/f' 2>'$TMP/steps.err'; [ \$? = 1 ] &&
    grep -q 'cannot write $TMP/no/such/dir/f' '$TMP/steps.err'"
t0=$(date +%s%6N)
# shellcheck disable=SC2046 # word splitting wanted
env $(cat "$TMP/steps.env") "$BURN" --kernel-us 1000 --depth 4 --sync-every 4 --kernels 40 \
    --steps "$TMP/steps.log" >"$TMP/steps.out" 2>&1 || fail "the loop failed: $(cat "$TMP/steps.out")"
t1=$(date +%s%6N)
check "10 steps: 9 turnarounds logged (the first step has none before it)" test "$(wc -l <"$TMP/steps.log")" = 9
check "each at an instant within the run, in order, with a turnaround of at least 0" awk -v t0="$t0" -v t1="$t1" '
    NF != 2 || $1 < t0 || $1 > t1 || $1 < last || $2 < 0 { bad = 1 } { last = $1 } END { exit bad }' "$TMP/steps.log"
mean=$(sed -n 's/.*host_turnaround_us=\([0-9]*\).*/\1/p' "$TMP/steps.out")
check "their mean is the host_turnaround_us the burn printed ($mean us)" awk -v m="${mean:--1}" '
    { s += $2; n++ } END { exit !(n && m >= 0 && s / n >= m - 1 && s / n <= m + 1) }' "$TMP/steps.log"
finish

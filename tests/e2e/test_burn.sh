#!/usr/bin/env bash
# test_burn.sh — convgpu-burn's --grid-blocks (issue 39: the peer comparison launches grids sized
# to a kernel's length, for a limiter that charges per thread block). On the emulated GPU a spin
# kernel lasts its --kernel-us whatever its grid, and convgpu's interposer accounts device time,
# not blocks: the device time the daemon counts for a container is what its kernels' lengths
# add up to, with a 1-block grid and a 100000-block one. A bad count is refused. Waits for
# conditions, never durations.
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
finish

#!/usr/bin/env bash
# test_compute.sh — compute shares held on the emulated, time-shared GPU by the real daemon and
# the real interposer: a hard share throttles its container's launches (single kernels, graphs,
# several threads) and holds its device time far below what it gets unlimited; a share changed
# with `convgpu set` takes effect; an elastic share uses the idle device; a stopped daemon cannot
# freeze a container (its closed gate opens by itself); a limited container's process killed
# while it waits at the gate costs its neighbours nothing; a tenant that opens its own gate is
# reported by the daemon, which measures device time through NVML whatever the ledger says.
#
# Every check waits for a condition (a counter that moves, a figure the daemon reports); the
# share figures are judged with wide margins (20% -> below 45%), so a loaded machine does not
# decide them: the benchmark (bench/compute.sh) measures accuracy.
. "$(dirname "$0")/lib.sh"
export CONVGPU_EMU_CONTEXT=6MiB
export CONVGPU_COMPUTE_TRACE=$TMP/compute.trace # what the controller is told, step by step
start_daemon --emulate 4GiB
BURN=$BUILD/bin/convgpu-burn
PY=python3

field() { # field CONTAINER KEY: a field of `convgpu inspect`
    cg inspect "$1" 2>/dev/null | "$PY" -c 'import json,sys; v=json.load(sys.stdin).get(sys.argv[1]); print("" if v is None else v)' "$2"
}
make_container() { # make_container NAME [create args...] -> its environment in $TMP/NAME.env
    local name=$1 out; shift
    out=$(cg create --name "$name" --gpu-memory 128MiB "$@") || { fail "create $name: $out"; return 1; }
    echo "$out" | tail -n +2 >"$TMP/$name.env"
}
run_in() { # run_in NAME CMD... (background; env of the container)
    local name=$1; shift
    env $(cat "$TMP/$name.env") "$@" >"$TMP/$name.out" 2>&1 &
}
progress() { cat "$1" 2>/dev/null || echo 0; }
ratio() { # ratio OUTFILE: busy / elapsed of a finished burn
    sed -n 's/.*busy_us=\([0-9]*\) elapsed_us=\([0-9]*\).*/\1 \2/p' "$1" | awk '{ if ($2 > 0) printf "%.3f", $1 / $2 }'
}
throttled() { [ "$(field "$1" compute_throttled_launches)" -gt "${2:-0}" ] 2>/dev/null; }

# ---- unlimited, for reference ------------------------------------------------------------------
make_container free
run_in free "$BURN" --kernel-us 2000 --until "$TMP/release.free" --progress "$TMP/free.prog"
FREE=$!
wait_for "the unlimited burn completes 1000 kernels" "$WAIT_S" bash -c "[ \$(cat '$TMP/free.prog' 2>/dev/null || echo 0) -ge 1000 ]" ||
    fail "the unlimited burn did not run: $(cat "$TMP/free.out")"
traced=$(wc -l <"$TMP/compute.trace") # the steps taken while it ran
touch "$TMP/release.free"
wait "$FREE" && pass "unlimited burn finished" || fail "unlimited burn failed: $(cat "$TMP/free.out")"
# While it ran it kept the device busy, so from its first measured use on, a step that measures
# it idle is a measurement that claimed time whose samples were not out yet (the daemon once took
# the last period as idle when NVML had no newer sample: a quarter of the steps read 0%, and a
# saturating container looked as if it wanted nothing, which handed its time to others).
free_id=$(field free id)
head -n "$traced" "$TMP/compute.trace" |
    awk -v id="$free_id" '$2 == id { if ($11 > 0) seen = 1; if (seen) { n++; if ($11 == 0) z++ } }
        END { printf "%d %d\n", n, z }' >"$TMP/free.steps"
read -r steps zeros <"$TMP/free.steps"
check "the daemon traced the unlimited container's steps ($steps after its first measured use)" \
    test "${steps:-0}" -ge 8
check "no step measured the saturating container idle ($zeros of $steps read 0%)" \
    test "${zeros:-1}" -le $(( ${steps:-0} / 20 ))
r_free=$(ratio "$TMP/free.out")
check "no launch of an unlimited container waited" test "$(field free compute_throttled_launches)" = 0
check "the daemon measured the unlimited container's device time ($(field free compute_busy_s) s)" \
    awk -v b="$(field free compute_busy_s)" 'BEGIN { exit !(b > 0.5) }'

# ---- a hard share of 20 ------------------------------------------------------------------------
make_container hard --gpu-compute 20 --compute-mode hard
check "inspect shows the share" test "$(field hard gpu_compute) $(field hard compute_mode)" = "20 hard"
run_in hard "$BURN" --kernel-us 2000 --threads 2 --until "$TMP/release.hard" --progress "$TMP/hard.prog"
HARD=$!
wait_for "the hard container's launches wait at its gate" "$WAIT_S" throttled hard ||
    fail "no launch of the hard container ever waited"
wait_for "the hard burn completes 1000 kernels (2 s of device time)" 300 bash -c "[ \$(cat '$TMP/hard.prog' 2>/dev/null || echo 0) -ge 1000 ]" ||
    fail "the hard burn made no progress: $(cat "$TMP/hard.out")"
touch "$TMP/release.hard"
wait "$HARD" && pass "hard burn finished" || fail "hard burn failed: $(cat "$TMP/hard.out")"
r_hard=$(ratio "$TMP/hard.out")
# The burn's own account (kernels x length) is judged: on a loaded machine a kernel may take
# longer than its length, which only lowers both figures.
check "share 20 hard held the burn's device time below 45% ($r_hard)" \
    awk -v r="$r_hard" 'BEGIN { exit !(r <= 0.45) }'
check "... and well below the unlimited run's ($r_hard vs $r_free)" \
    awk -v h="$r_hard" -v f="$r_free" 'BEGIN { exit !(h < 0.6 * f) }'
cg rm free >/dev/null && cg rm hard >/dev/null || fail "cannot remove free and hard"

# ---- graphs are launches too -------------------------------------------------------------------
make_container graph --gpu-compute 10 --compute-mode hard
run_in graph "$BURN" --kernel-us 1000 --graph 8 --until "$TMP/release.graph"
GRAPH=$!
wait_for "graph launches wait at the gate" "$WAIT_S" throttled graph || fail "no graph launch waited"
touch "$TMP/release.graph"
wait "$GRAPH" && pass "graph burn finished" || fail "graph burn failed: $(cat "$TMP/graph.out")"
cg rm graph >/dev/null || fail "cannot remove graph"

# ---- convgpu set changes the share while it runs ---------------------------------------------
make_container changed --gpu-compute 10 --compute-mode hard
run_in changed "$BURN" --kernel-us 2000 --until "$TMP/release.changed" --progress "$TMP/changed.prog"
CHANGED=$!
wait_for "share 10: throttled" "$WAIT_S" throttled changed || fail "share 10 never throttled"
# Device time (the daemon's measure) per wall second, until the container has used 1 s more.
rate() { # rate -> device seconds per second while the container uses 1 s of device time
    local b0 t0 b1 t1
    b0=$(field changed compute_busy_s) t0=$(date +%s.%N)
    used() { awk -v b="$(field changed compute_busy_s)" -v b0="$b0" 'BEGIN { exit !(b - b0 >= 1) }'; }
    wait_for "1 s of device time" 600 used || return 1
    b1=$(field changed compute_busy_s) t1=$(date +%s.%N)
    awk -v b0="$b0" -v b1="$b1" -v t0="$t0" -v t1="$t1" 'BEGIN { printf "%.3f", (b1 - b0) / (t1 - t0) }'
}
r10=$(rate)
out=$(cg set changed --gpu-compute 100 2>&1) && pass "set to 100" || fail "set to 100 refused: $out"
r100=$(rate)
check "share 100 runs far faster than share 10 ($r100 vs $r10 device s/s)" \
    awk -v a="$r100" -v b="$r10" 'BEGIN { exit !(a > 3 * b) }'

# ---- a stopped daemon cannot freeze the container --------------------------------------------
cg set changed --gpu-compute 5 >/dev/null
n0=$(field changed compute_throttled_launches)
wait_for "share 5: throttled again" "$WAIT_S" throttled changed "$n0" || fail "share 5 never throttled"
kill -STOP "$DAEMON_PID"
p0=$(progress "$TMP/changed.prog")
moved() { [ "$(progress "$TMP/changed.prog")" -ge $((p0 + 200)) ]; }
wait_for "the burn keeps running while the daemon is stopped (its gate's lease ran out)" "$WAIT_S" moved &&
    pass "200 kernels completed with the daemon stopped" ||
    fail "the container froze with its daemon ($(progress "$TMP/changed.prog") kernels, was $p0)"
kill -CONT "$DAEMON_PID"
touch "$TMP/release.changed"
wait "$CHANGED" && pass "changed burn finished" || fail "changed burn failed: $(cat "$TMP/changed.out")"

# ---- elastic: the idle device is used --------------------------------------------------------
make_container elastic --gpu-compute 30 --compute-mode elastic
run_in elastic "$BURN" --kernel-us 2000 --until "$TMP/release.elastic"
ELASTIC=$!
e_high() { awk -v u="$(field elastic compute_utilization)" 'BEGIN { exit !(u >= 0.6) }'; }
wait_for "elastic 30 alone uses most of the device" "$WAIT_S" e_high &&
    pass "elastic alone: utilisation $(field elastic compute_utilization)" ||
    fail "elastic alone stayed at $(field elastic compute_utilization)"

# ---- a process killed at the gate --------------------------------------------------------------
# `hard2` (share 5) waits at its gate most of the time; killing it there must leave the elastic
# neighbour running and the daemon well.
cg rm changed >/dev/null || fail "cannot remove changed"
make_container hard2 --gpu-compute 5 --compute-mode hard
run_in hard2 "$BURN" --kernel-us 2000 --threads 4 --until "$TMP/release.hard2"
HARD2=$!
wait_for "hard2 waits at its gate" "$WAIT_S" throttled hard2 || fail "hard2 never waited"
kill -KILL "$HARD2"; wait "$HARD2" 2>/dev/null || true
procs_gone() { [ "$(field hard2 processes)" = 0 ]; }
wait_for "hard2's process leaves its container" "$WAIT_S" procs_gone || fail "hard2's process stayed"
check "the daemon is up" kill -0 "$DAEMON_PID"
touch "$TMP/release.elastic"
wait "$ELASTIC" && pass "elastic burn finished" || fail "elastic burn failed: $(cat "$TMP/elastic.out")"

# ---- a tenant that opens its own gate is caught -------------------------------------------------
make_container cheat --gpu-compute 10 --compute-mode hard
run_in cheat "$BUILD/tests/e2e/gate_cheat" "$TMP/release.cheat"
CHEAT=$!
wait_for "the cheat runs" "$WAIT_S" grep -q "cheating=yes" "$TMP/cheat.out" || fail "gate_cheat: $(cat "$TMP/cheat.out")"
wait_for "the daemon reports the container running past its hard share" 300 \
    has_event watchdog-over-share cheat &&
    pass "over-share reported: a watchdog-over-share event about cheat (GET /v1/events)" ||
    fail "a container ignoring its gate was never reported"
touch "$TMP/release.cheat"
wait "$CHEAT" || true

finish

#!/usr/bin/env bash
# test_watchdog.sh — the watchdog catches what cooperative accounting cannot: a process that uses
# the GPU without the interposer (unregistered), and a registered process that lied in its own
# ledger slot and holds more than its container's limit (over limit, by NVML). Reported as
# events and metrics; with --watchdog-kill yes, killed.
. "$(dirname "$0")/lib.sh"
export CONVGPU_EMU_CONTEXT=4MiB
start_daemon --emulate 512MiB --watchdog-interval 0.2 --watchdog-tolerance 8MiB
SAMPLE=$BUILD/bin/convgpu-sample
EMU_ENV=(env LD_LIBRARY_PATH="$BUILD/lib/emu" CONVGPU_EMU_STATE="$RUNDIR/emu/state" CONVGPU_EMU_DEVICES=512MiB)

# 1. A process that bypasses the interposer.
"${EMU_ENV[@]}" "$SAMPLE" --size 64MiB --touch 1MiB --hold-ms 30000 --quiet &
BYPASS=$!
wait_for "unregistered process reported" 10 bash -c "$BUILD/bin/convgpu --runtime-dir $RUNDIR events --once --json | grep -q '\"type\":\"watchdog-unregistered\".*\"pid\":$BYPASS'" \
    && pass "unregistered process reported with its pid" || fail "bypass not reported"
check "reported once, not at every check" test "$(cg events --once --json | grep -c "watchdog-unregistered")" = 1
check "metrics count it" bash -c "curl -s --unix-socket $RUNDIR/control.sock http://x/metrics | grep -q 'convgpu_watchdog_findings_total{kind=\"unregistered\"} 1'"
check "report-only mode leaves it running" kill -0 "$BYPASS"
kill "$BYPASS"; wait "$BYPASS" 2>/dev/null || true

# 2. A registered process that lies about its use.
"$BUILD/bin/convgpu" --runtime-dir "$RUNDIR" run --quiet --name liar --gpu-memory 100MiB -- \
    "$BUILD/tests/e2e/cheat" $((80 << 20)) 30000 >"$TMP/liar.out" 2>&1 &
LIAR=$!
wait_for "liar cheated" 10 grep -q cheated "$TMP/liar.out" || fail "cheat did not run: $(cat "$TMP/liar.out")"
wait_for "over-limit container reported" 10 bash -c "$BUILD/bin/convgpu --runtime-dir $RUNDIR events --once --json | grep -q '\"type\":\"watchdog-over-limit\"'" \
    && pass "container over its limit by NVML reported" || fail "over-limit not reported"
check "the finding names the container" bash -c "$BUILD/bin/convgpu --runtime-dir $RUNDIR events --once --json | grep 'watchdog-over-limit' | grep -q \"\$($BUILD/bin/convgpu --runtime-dir $RUNDIR inspect liar | python3 -c 'import json,sys;print(json.load(sys.stdin)[\"id\"])')\""
kill "$LIAR"; wait "$LIAR" 2>/dev/null || true

# 3. Kill mode.
kill -TERM "$DAEMON_PID"; wait "$DAEMON_PID" 2>/dev/null || true; DAEMON_PID=
start_daemon --emulate 512MiB --watchdog-interval 0.2 --watchdog-kill yes
"${EMU_ENV[@]}" "$SAMPLE" --size 64MiB --touch 1MiB --hold-ms 30000 --quiet &
BYPASS=$!
wait_for "bypassing process killed" 10 bash -c "! kill -0 $BYPASS 2>/dev/null" \
    && pass "kill mode kills an unregistered process" || fail "bypass survived kill mode"
wait "$BYPASS" 2>/dev/null || true
"$BUILD/bin/convgpu" --runtime-dir "$RUNDIR" run --quiet --name honest --gpu-memory 100MiB -- \
    "$SAMPLE" --size 64MiB --touch 1MiB --hold-ms 1500 --quiet && pass "an honest container is left alone" \
    || fail "honest container was hurt"
check "daemon option validation" bash -c "! $BUILD/bin/convgpud --watchdog-kill maybe 2>/dev/null && ! $BUILD/bin/convgpud --watchdog-interval -1 2>/dev/null"
finish

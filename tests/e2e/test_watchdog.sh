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

# 1. A process that bypasses the interposer (it holds its memory until killed).
"${EMU_ENV[@]}" "$SAMPLE" --size 64MiB --touch 1MiB --hold-until "$TMP/release.bypass1" --quiet &
BYPASS=$!
wait_for "unregistered process reported" "$WAIT_S" bash -c "$BUILD/bin/convgpu --runtime-dir $RUNDIR events --once --json | grep -q '\"type\":\"watchdog-unregistered\".*\"pid\":$BYPASS'" \
    && pass "unregistered process reported with its pid" || fail "bypass not reported"
check "metrics count it" bash -c "curl -s --unix-socket $RUNDIR/control.sock http://x/metrics | grep -q 'convgpu_watchdog_findings_total{kind=\"unregistered\"} 1'"
# A second bypassing process: once it is reported, a later check has seen the first one again.
"${EMU_ENV[@]}" "$SAMPLE" --size 64MiB --touch 1MiB --hold-until "$TMP/release.bypass2" --quiet &
BYPASS2=$!
wait_for "second unregistered process reported" "$WAIT_S" bash -c "$BUILD/bin/convgpu --runtime-dir $RUNDIR events --once --json | grep -q '\"type\":\"watchdog-unregistered\".*\"pid\":$BYPASS2'" \
    || fail "second bypass not reported"
check "reported once, not at every check" test "$(cg events --once --json | grep "watchdog-unregistered" | grep -c "\"pid\":$BYPASS\b")" = 1
check "report-only mode leaves it running" kill -0 "$BYPASS"
kill "$BYPASS" "$BYPASS2"; wait "$BYPASS" "$BYPASS2" 2>/dev/null || true

# 2. A registered process that lies about its use.
"$BUILD/bin/convgpu" --runtime-dir "$RUNDIR" run --quiet --name liar --gpu-memory 100MiB -- \
    "$BUILD/tests/e2e/cheat" $((80 << 20)) "$TMP/release.liar" >"$TMP/liar.out" 2>&1 &
LIAR=$!
wait_for "liar cheated" "$WAIT_S" grep -q cheated "$TMP/liar.out" || fail "cheat did not run: $(cat "$TMP/liar.out")"
wait_for "over-limit container reported" "$WAIT_S" bash -c "$BUILD/bin/convgpu --runtime-dir $RUNDIR events --once --json | grep -q '\"type\":\"watchdog-over-limit\"'" \
    && pass "container over its limit by NVML reported" || fail "over-limit not reported"
check "the finding names the container" bash -c "$BUILD/bin/convgpu --runtime-dir $RUNDIR events --once --json | grep 'watchdog-over-limit' | grep -q \"\$($BUILD/bin/convgpu --runtime-dir $RUNDIR inspect liar | python3 -c 'import json,sys;print(json.load(sys.stdin)[\"id\"])')\""
kill "$LIAR"; wait "$LIAR" 2>/dev/null || true

# 3. Kill mode.
kill -TERM "$DAEMON_PID"; wait "$DAEMON_PID" 2>/dev/null || true; DAEMON_PID=
start_daemon --emulate 512MiB --watchdog-interval 0.2 --watchdog-kill yes
# An honest container holds its memory while the watchdog finds and kills a bypassing process:
# the check that killed the bypass saw the honest one too, and left it alone.
"$BUILD/bin/convgpu" --runtime-dir "$RUNDIR" run --quiet --name honest --gpu-memory 100MiB -- \
    "$SAMPLE" --size 64MiB --touch 1MiB --hold-until "$TMP/release.honest" --quiet >"$TMP/honest.out" 2>&1 &
HONEST=$!
wait_for "the honest container holds its memory" "$WAIT_S" bash -c "[ \"\$($BUILD/bin/convgpu --runtime-dir $RUNDIR inspect honest | python3 -c 'import json,sys;print(json.load(sys.stdin)[\"used\"])')\" -gt 0 ]" \
    || fail "the honest container did not start: $(cat "$TMP/honest.out")"
"${EMU_ENV[@]}" "$SAMPLE" --size 64MiB --touch 1MiB --hold-until "$TMP/release.bypass3" --quiet &
BYPASS=$!
wait_for "bypassing process killed" "$WAIT_S" bash -c "! kill -0 $BYPASS 2>/dev/null" \
    && pass "kill mode kills an unregistered process" || fail "bypass survived kill mode"
wait "$BYPASS" 2>/dev/null || true
touch "$TMP/release.honest"
wait "$HONEST" && pass "an honest container is left alone" || fail "honest container was hurt: $(cat "$TMP/honest.out")"
check "daemon option validation" bash -c "! $BUILD/bin/convgpud --watchdog-kill maybe 2>/dev/null && ! $BUILD/bin/convgpud --watchdog-interval -1 2>/dev/null"
finish

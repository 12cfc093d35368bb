#!/usr/bin/env bash
# test_observe.sh — what an operator watches: the followed event stream shows a suspension and
# the resume; /metrics (control socket and TCP) is valid Prometheus text with the right numbers;
# `top --once` shows devices and containers; the configuration file is read, flags override it,
# and a bad one stops the daemon with the line at fault.
. "$(dirname "$0")/lib.sh"
export CONVGPU_EMU_CONTEXT=6MiB
PORT=$((20000 + RANDOM % 20000))
printf 'emulate = 512MiB\npolicy = recent\nmetrics = 127.0.0.1:%s\n' "$PORT" >"$TMP/convgpud.conf"
start_daemon --config "$TMP/convgpud.conf" --policy fifo
SAMPLE=$BUILD/bin/convgpu-sample
check "flag overrides the configuration file" bash -c "$BUILD/bin/convgpu --runtime-dir $RUNDIR policy | grep -q 'resume: fifo'"
check "device size comes from the configuration file" bash -c "$BUILD/bin/convgpu --runtime-dir $RUNDIR devices --json | grep -q '\"total\": 536870912'"

# The follower starts at the first event, so it sees everything however late it connects.
"$BUILD/bin/convgpu" --runtime-dir "$RUNDIR" events --json --since 0 >"$TMP/events.out" 2>&1 &
FOLLOW=$!
# big holds its memory until this test has looked at everything (it touches release.big).
"$BUILD/bin/convgpu" --runtime-dir "$RUNDIR" run --quiet --name big --gpu-memory 400MiB -- \
    "$SAMPLE" --size 380MiB --touch 1MiB --hold-until "$TMP/release.big" --quiet >"$TMP/big.out" 2>&1 &
BIG=$!
wait_for "big holds memory" "$WAIT_S" bash -c "[ \"\$($BUILD/bin/convgpu --runtime-dir $RUNDIR inspect big 2>/dev/null | python3 -c 'import json,sys;print(json.load(sys.stdin)[\"used\"])')\" -gt 0 ]"
"$BUILD/bin/convgpu" --runtime-dir "$RUNDIR" run --quiet --name small --gpu-memory 200MiB -- \
    "$SAMPLE" --size 150MiB --touch 1MiB --quiet >"$TMP/small.out" 2>&1 &
SMALL=$!
wait_for "small suspended" "$WAIT_S" bash -c "[ \"\$($BUILD/bin/convgpu --runtime-dir $RUNDIR inspect small 2>/dev/null | python3 -c 'import json,sys;print(json.load(sys.stdin)[\"state\"])')\" = suspended ]" \
    && pass "small suspended" || fail "small not suspended"
suspended_at=$(date +%s%N)

out=$(api GET /metrics)
check "metrics on the control socket answer 200" test "${out%% *}" = 200
check "metrics show small suspended" grep -q 'convgpu_container_suspended{container="[^"]*",name="small",device="0"} 1' <<<"$out"
curl -s "http://127.0.0.1:$PORT/metrics" >"$TMP/metrics.txt"
check "TCP metrics are valid Prometheus text" python3 "$(dirname "$0")/prom_check.py" <"$TMP/metrics.txt"
# 43 families: devices 10 (4 memory, 2 compute, 4 sharing factor), containers 19 (6 memory, 4 compute, 5 swap,
# 1 priority, 2 pause, 1 waiting because of the factor), tenants 6, decisions, watchdog findings, the request-latency histogram, and the
# connections 5 (control API 4, container sockets 1). A family added or lost shows here.
check "metrics declare the 43 families, 6 of them compute" bash -c "[ \$(grep -c '^# TYPE ' '$TMP/metrics.txt') = 43 ] && [ \$(grep -c '^# TYPE convgpu_[a-z_]*compute' '$TMP/metrics.txt') = 6 ]"
check "TCP listener serves only /metrics" bash -c "curl -s -o /dev/null -w '%{http_code}' -X POST http://127.0.0.1:$PORT/v1/containers | grep -q 404"
cg top --once >"$TMP/top.out"
check "top shows the device" grep -q "Emulated" "$TMP/top.out"
check "top's device lines show PROMISED and FACTOR (1.00 by default)" bash -c "grep -q 'PROMISED.*FACTOR' '$TMP/top.out' && grep -Eq 'Emulated.* 1\.00 ' '$TMP/top.out'"
check "top shows the suspended container" grep -q "small .*suspended" "$TMP/top.out"

# The histogram check below wants small's request to wait more than 0.5 s: release big no sooner
# than 1 s after small was seen suspended (a floor; a loaded machine only makes it longer).
while [ $(( $(date +%s%N) - suspended_at )) -lt 1000000000 ]; do sleep 0.05; done
touch "$TMP/release.big"
wait "$BIG" && pass "big finished" || fail "big failed"
wait "$SMALL" && pass "small resumed and finished" || fail "small failed: $(cat "$TMP/small.out")"
wait_for "the event stream delivers the resume" "$WAIT_S" grep -q '"type":"resume"' "$TMP/events.out" || true
kill "$FOLLOW" 2>/dev/null; wait "$FOLLOW" 2>/dev/null || true
check "event stream saw the suspension" grep -q '"type":"suspend"' "$TMP/events.out"
check "event stream saw the resume" grep -q '"type":"resume"' "$TMP/events.out"
check "suspend came before resume" bash -c "[ \$(grep -n '\"type\":\"suspend\"' $TMP/events.out | head -1 | cut -d: -f1) -lt \$(grep -n '\"type\":\"resume\"' $TMP/events.out | head -1 | cut -d: -f1) ]"
curl -s "http://127.0.0.1:$PORT/metrics" >"$TMP/metrics2.txt"
check "metrics still valid after the run" python3 "$(dirname "$0")/prom_check.py" <"$TMP/metrics2.txt"
check "resume counted" grep -q 'convgpu_decisions_total{kind="resume"} [1-9]' "$TMP/metrics2.txt"
check "latency histogram saw the requests" grep -qE 'convgpu_request_duration_seconds_count [1-9]' "$TMP/metrics2.txt"
check "suspension of more than 0.5s observed in the histogram" bash -c "python3 - $TMP/metrics2.txt <<'PY'
import re,sys
t=open(sys.argv[1]).read()
b={m.group(1):float(m.group(2)) for m in re.finditer(r'convgpu_request_duration_seconds_bucket\{le=\"([^\"]+)\"\} (\S+)',t)}
sys.exit(0 if b['+Inf']-b['0.5']>=1 else 1)
PY"

# A bad configuration file stops the daemon with the line at fault; nothing starts.
printf 'emulate = 1GiB\npolicy fifo\n' >"$TMP/bad.conf"
out=$("$BUILD/bin/convgpud" --config "$TMP/bad.conf" --runtime-dir "$TMP/other" --foreground 2>&1) && rc=0 || rc=$?
check "bad configuration refused (exit $rc)" test "$rc" = 2
check "error names the line" grep -q "line 2" <<<"$out"
check "nothing was started for it" test ! -e "$TMP/other/control.sock"
check "convgpud --version" bash -c "$BUILD/bin/convgpud --version | grep -q '^convgpud [0-9]'"
finish

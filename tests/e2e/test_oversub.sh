#!/usr/bin/env bash
# test_oversub.sh — the sharing factor (issue 37 items 1 and 6) through a real daemon on an
# emulated 4GiB GPU: `--oversubscribe 2` publishes promised 8GiB (GET /v1/devices, /metrics,
# `convgpu devices`, `convgpu slurm gres-conf`), two containers of 3GiB each are admitted
# (limits 6GiB > 4GiB), their peaks collide, one waits suspended instead of failing, and both
# finish with exit 0. Admission is unchanged: a limit above the GPU's 4GiB is still refused.
# Bad factors are refused at start with a clear message, from the command line and the
# configuration file. `adaptive` starts at 1.0 and rises to its ceiling once enough runs have
# peaked far below their limits.
. "$(dirname "$0")/lib.sh"
export CONVGPU_EMU_CONTEXT=6MiB
SAMPLE=$BUILD/bin/convgpu-sample
GiB=$((1 << 30))

# ---- bad values: refused before anything starts ----------------------------------------------
refused_start() { # refused_start WHAT PATTERN ARGS...
    local what=$1 pat=$2 rc=0; shift 2
    "$BUILD/bin/convgpud" --runtime-dir "$TMP/bad" --foreground --emulate 4GiB "$@" \
        >"$TMP/bad.out" 2>&1 || rc=$?
    if [ "$rc" -ne 0 ] && grep -q -- "$pat" "$TMP/bad.out"; then pass "$what"
    else fail "$what (exit $rc): $(cat "$TMP/bad.out")"; fi
}
for v in 0 0.5 100 x 4.5 -2 inf 2e0 1. "" "0=2,"; do
    refused_start "--oversubscribe '$v' refused" "oversubscribe takes a sharing factor from 1.0 to 4.0" \
        --oversubscribe "$v"
done
refused_start "a GPU named twice is refused" "oversubscribe names GPU 0 twice" --oversubscribe 0=2,0=3
refused_start "a GPU the node lacks is refused" "names GPU 1, but this node has 1 GPU" \
    --oversubscribe 0=2,1=1.5
printf 'oversubscribe = 0.5\n' >"$TMP/bad.conf"
refused_start "the configuration file's key is checked too" "bad.conf: line 1: oversubscribe takes" \
    --config "$TMP/bad.conf"

# ---- F = 2 on one 4GiB GPU -------------------------------------------------------------------
printf 'oversubscribe = 1.5\n' >"$TMP/ok.conf"
start_daemon --emulate 4GiB --config "$TMP/ok.conf" --oversubscribe 2
dev() { api GET /v1/devices | cut -d' ' -f2- | python3 -c 'import json,sys; print(json.load(sys.stdin)[0][sys.argv[1]])' "$1"; }
check "the flag overrides the file: factor 2" test "$(dev oversubscribe)" = 2.0
check "promised is 8GiB" test "$(dev promised)" = $((8 * GiB))
check "capacity is still 4GiB" test "$(dev capacity)" = $((4 * GiB))
check "mode static" test "$(dev oversubscribe_mode)" = static
metrics=$(api GET /metrics)
check "metrics: promised bytes" grep -q "^convgpu_device_promised_bytes{device=\"0\",.*} $((8 * GiB))\$" <<<"$metrics"
check "metrics: the factor" grep -q '^convgpu_device_oversubscribe_ratio{device="0",.*} 2.000$' <<<"$metrics"
cg devices >"$TMP/devices.out"
check "convgpu devices: PROMISED and FACTOR columns" grep -q 'PROMISED.*FACTOR' "$TMP/devices.out"
check "convgpu devices: 4GiB capacity, 8GiB promised, 2.00" grep -Eq '^0 .* 4GiB +8GiB +2\.00 ' "$TMP/devices.out"
gres=$(cg slurm gres-conf --node n1)
check "slurm gres-conf: gpumem is the promised MiB" grep -qx 'NodeName=n1 Name=gpumem Count=8192' <<<"$gres"
check "slurm gres-conf: says it promises more than the GPU has" grep -q 'promises 8192 MiB of the 4096 MiB' <<<"$gres"
check "slurm gres-conf: compute stays 100 per GPU" grep -qx 'NodeName=n1 Name=gpucompute Count=100' <<<"$gres"

out=$(api POST /v1/containers '{"gpu_memory":"5GiB","name":"toobig"}')
check "a limit above the GPU's memory is still refused" test "$(cut -d' ' -f1 <<<"$out")" != 201

run_bg() { # run_bg NAME LIMIT SIZE: holds SIZE until release NAME
    cg run --quiet --name "$1" --gpu-memory "$2" -- \
        "$SAMPLE" --size "$3" --touch 1MiB --hold-until "$TMP/release.$1" --quiet >"$TMP/$1.out" 2>&1 &
    eval "PID_$1=$!"
}
state() { container_field "$1" state; }
used_over() { [ "$(container_field "$1" used)" -gt "$2" ]; }
run_bg A 3GiB 2560MiB
wait_for "A holds its 2.5GiB" "$WAIT_S" used_over A $((2 * GiB))
run_bg B 3GiB 2560MiB
wait_for "B suspended: the peaks collide" "$WAIT_S" prints suspended state B \
    && pass "B waits, suspended, instead of failing" || fail "B was not suspended (state $(state B))"
limits=$(cg ps --json | python3 -c 'import json,sys; print(sum(c["limit"] for c in json.load(sys.stdin)))')
check "both admitted: their limits add to 6GiB on a 4GiB GPU" test "$limits" = $((6 * GiB))
check "A still running" test "$(state A)" = running
# Who waits because of the factor (item 6): B, in the API, top, the metrics; A does not wait.
check "API: B waits because of the factor" test "$(container_field B wait_reason)" = oversubscribed
check "API: A does not wait (null)" test -z "$(container_field A wait_reason)"
check "API: the GPU has promised 6GiB and one waits because of it" \
    test "$(dev limits) $(dev waiting_oversubscribed)" = "$((6 * GiB)) 1"
ps=$(cg ps)
check "ps: B's state says it waits because of the factor" \
    grep -Eq '^[^ ]+ +B +.* [a-z]+/oversub ' <<<"$ps"
check "ps: A's does not" grep -Eq '^[^ ]+ +A +.* running +[0-9]' <<<"$ps"
top=$(cg top --once)
check "top: B waiting (oversubscribed), limits 6GiB on 4GiB at factor 2" \
    grep -Eq '^  B +GPU 0  waiting \(oversubscribed\): limits 6GiB on 4GiB \(factor 2\.00\)$' <<<"$top"
check "top: A is not listed as waiting" bash -c "! grep -Eq '^  A +GPU 0  waiting' <<<\"\$1\"" _ "$top"
metrics=$(api GET /metrics)
check "metrics: one container waits because of the factor on GPU 0" \
    grep -q '^convgpu_device_waiting_oversubscribed{device="0",.*} 1$' <<<"$metrics"
check "metrics: that container is B" \
    grep -q '^convgpu_container_waiting_oversubscribed{container=".*",name="B",device="0"} 1$' <<<"$metrics"
check "metrics: not A" \
    grep -q '^convgpu_container_waiting_oversubscribed{container=".*",name="A",device="0"} 0$' <<<"$metrics"
touch "$TMP/release.A"
wait "$PID_A" && pass "A exits 0" || fail "A failed: $(cat "$TMP/A.out")"
wait_for "B resumes once A's memory returns" "$WAIT_S" used_over B $((2 * GiB)) \
    && pass "B resumed" || fail "B did not resume (state $(state B))"
touch "$TMP/release.B"
wait "$PID_B" && pass "B exits 0" || fail "B failed: $(cat "$TMP/B.out")"
check "no out-of-memory anywhere" bash -c "! grep -q OUT_OF_MEMORY $TMP/A.out $TMP/B.out"
check "nobody waits once both ended" test "$(dev waiting_oversubscribed)" = 0

# ---- adaptive ---------------------------------------------------------------------------------
kill -TERM "$DAEMON_PID"; wait "$DAEMON_PID" 2>/dev/null || true; DAEMON_PID=
start_daemon --emulate 4GiB --oversubscribe adaptive
check "adaptive starts at 1.0 (no runs yet)" test "$(dev oversubscribe) $(dev oversubscribe_mode)" = "1.0 adaptive"
check "... promising the capacity" test "$(dev promised)" = $((4 * GiB))
# Eight runs (the rule's minimum) that peak near a quarter of their limits: 1/(0.26 x 1.1) is
# above the ceiling, so F rises to 2.0.
for i in 1 2 3 4 5 6 7 8; do
    cg run --quiet --name "r$i" --gpu-memory 1GiB -- "$SAMPLE" --size 256MiB --touch 1MiB --quiet \
        || fail "run $i failed"
    if [ "$i" = 7 ]; then check "seven runs: still 1.0" test "$(dev oversubscribe)" = 1.0; fi
done
wait_for "adaptive factor at its ceiling after eight runs" "$WAIT_S" prints 2.0 dev oversubscribe \
    && pass "adaptive: 2.0 after eight runs far below their limits" || fail "adaptive: $(dev oversubscribe)"
check "adaptive promises 8GiB" test "$(dev promised)" = $((8 * GiB))
check "convgpu devices marks the adaptive factor" grep -q '2\.00\*' <(cg devices)
check "the devices API says the factor is the adaptive rule's" \
    test "$(dev oversubscribe_mode) $(dev oversubscribe)" = "adaptive 2.0"
finish

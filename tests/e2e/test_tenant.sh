#!/usr/bin/env bash
# test_tenant.sh — tenants and the static fair share with real processes (docs/SCHEDULING.md,
# "Tenants and fair share"). On a 1 GiB emulated GPU: alice's a1 (limit 400 MiB) runs alone; bob's
# b1 (200 MiB) arrives, so each tenant's share is 512 MiB; alice's a2 (400 MiB) gets only 112 MiB
# (400 + 112 = her share) and its 300 MiB allocation waits at her ceiling while 312 MiB lie free
# and bob runs. Weight 3 for alice moves the shares to 768/256 MiB and a2 resumes. Then: bad input
# to the tenant API and CLI changes nothing, and tenants and weights survive a daemon restart.
. "$(dirname "$0")/lib.sh"
export CONVGPU_EMU_CONTEXT=6MiB
start_daemon --emulate 1GiB --fair-share static
SAMPLE=$BUILD/bin/convgpu-sample
MiB=1048576

field() { cg inspect "$1" | json_get "$2"; }
tenant_field() { # tenant_field NAME FIELD
    api GET "/v1/tenants/$1" | cut -d' ' -f2- | json_get "$2"
}
run_held() { # run_held NAME TENANT LIMIT SIZE: a container whose process allocates SIZE and holds it
    "$BUILD/bin/convgpu" --runtime-dir "$RUNDIR" run --quiet --name "$1" --tenant "$2" \
        --gpu-memory "$3" -- "$SAMPLE" --size "$4" --hold-until "$TMP/release.$1" --quiet \
        >"$TMP/$1.out" 2>&1 &
}

out=$(api GET /v1/policy)
check "policy shows the fair share" grep -q '"fair_share": *"static"' <<<"${out#* }"

run_held a1 alice 400MiB 380MiB
wait_for "a1 uses its memory" "$WAIT_S" bash -c "[ \"\$(cg() { \"$BUILD/bin/convgpu\" --runtime-dir $RUNDIR \"\$@\"; }; cg inspect a1 | python3 -c 'import json,sys;print(json.load(sys.stdin)[\"used\"])')\" -gt 0 ]"
check "alone, alice's ceiling is the whole device" test "$(tenant_field alice ceiling)" = $((1024 * MiB))
run_held b1 bob 200MiB 150MiB
wait_for "b1 uses its memory" "$WAIT_S" bash -c "[ \"\$(\"$BUILD/bin/convgpu\" --runtime-dir $RUNDIR inspect b1 | python3 -c 'import json,sys;print(json.load(sys.stdin)[\"used\"])')\" -gt 0 ]"
check "two tenants: alice's share is 512 MiB" test "$(tenant_field alice share)" = $((512 * MiB))
check "two tenants: bob's share is 512 MiB" test "$(tenant_field bob share)" = $((512 * MiB))

run_held a2 alice 400MiB 300MiB
wait_for "a2 suspended" "$WAIT_S" bash -c "\"$BUILD/bin/convgpu\" --runtime-dir $RUNDIR inspect a2 | grep -q '\"state\": \"suspended\"'" \
    && pass "alice's second container waits at her ceiling" || fail "a2 did not wait"
check "a2 was given only 112 MiB (alice's 512 MiB share less a1's 400)" \
    test "$(field a2 assigned)" = $((112 * MiB))
out=$(api GET /v1/devices)
check "312 MiB lie free while a2 waits" grep -q "\"free\": *$((312 * MiB))" <<<"$out"
out=$(api GET /v1/events)
check "the suspension names the fair share" grep -q 'tenant at its fair-share ceiling' <<<"$out"
check "bob's b1 runs meanwhile" test "$(field b1 state)" = running
check "alice has one waiting container" test "$(tenant_field alice waiting)" = 1
cg ps >"$TMP/ps.out"
check "ps shows a TENANT column" grep -q '^ID .*TENANT' "$TMP/ps.out"
check "ps shows a2 in tenant alice" grep -Eq '^[^ ]+ +a2 +alice ' "$TMP/ps.out"
cg tenant list >"$TMP/tenants.out"
check "tenant list shows alice waiting" grep -Eq '^alice +1 +2 +1 ' "$TMP/tenants.out"
cg top --once >"$TMP/top.out"
check "top shows the tenants" grep -q '^fair share: static' "$TMP/top.out"
out=$(api GET /metrics)
check "metrics: alice's ceiling" grep -q "convgpu_tenant_ceiling_bytes{tenant=\"alice\",device=\"0\"} $((512 * MiB))" <<<"$out"
check "metrics: alice's waiting container" grep -q 'convgpu_tenant_waiting_containers{tenant="alice",device="0"} 1' <<<"$out"

# Bad input: a clear error, nothing changed.
before=$(api GET /v1/tenants)
for body in '{"weight":0}' '{"weight":-1}' '{"weight":"abc"}' '{"weight":1.5}' '{"weight":1000001}' \
            '{}' '{"weight":2,"x":1}' 'not json'; do
    out=$(api PUT /v1/tenants/alice "$body")
    check "PUT weight $body is refused (400)" test "${out%% *}" = 400
done
out=$(api PUT /v1/tenants/carol '{"weight":0}')
check "weight 0 for an unknown tenant is refused" test "${out%% *}" = 400
long=$(printf 'x%.0s' $(seq 33))
out=$(api PUT "/v1/tenants/$long" '{"weight":2}')
check "a 33-character tenant name is refused" test "${out%% *}" = 400
for name in '.dot' '-dash' 'a;b' 'a%20b'; do
    out=$(api PUT "/v1/tenants/$name" '{"weight":2}')
    check "tenant name '$name' is refused" test "${out%% *}" = 400
done
out=$(api GET /v1/tenants/nobody-here)
check "an unknown tenant is 404" test "${out%% *}" = 404
out=$(api POST /v1/containers '{"gpu_memory":"64MiB","tenant":"bad name"}')
check "a container in tenant 'bad name' is refused" test "${out%% *}" = 400
set +e
cg tenant set alice --weight 0 2>"$TMP/err"; rc=$?
check "cg tenant set --weight 0 fails with a message" bash -c "[ $rc = 2 ] && grep -q 'whole number' '$TMP/err'"
cg tenant set alice --weight abc 2>/dev/null; rc=$?
check "cg tenant set --weight abc fails" test "$rc" = 2
cg tenant set alice --weight -3 2>/dev/null; rc=$?
check "cg tenant set --weight -3 fails" test "$rc" = 2
cg tenant set 'a b' --weight 2 2>/dev/null; rc=$?
check "cg tenant set 'a b' fails" test "$rc" = 2
set -e
check "nothing changed by bad input" test "$(api GET /v1/tenants)" = "$before"
check "a2 still waits" test "$(field a2 state)" = suspended

# Weights move the ceilings: alice 3, bob 1 -> 768/256 MiB; a2 resumes.
cg tenant set alice --weight 3 >/dev/null
check "alice's share is 768 MiB" test "$(tenant_field alice share)" = $((768 * MiB))
check "bob's share is 256 MiB" test "$(tenant_field bob share)" = $((256 * MiB))
wait_for "a2 resumed" "$WAIT_S" bash -c "\"$BUILD/bin/convgpu\" --runtime-dir $RUNDIR inspect a2 | grep -q '\"state\": \"running\"'" \
    && pass "a2 resumed when alice's weight grew" || fail "a2 still suspended"
for c in a1 a2 b1; do touch "$TMP/release.$c"; done
wait_for "all runs ended" "$WAIT_S" bash -c "[ \"\$(\"$BUILD/bin/convgpu\" --runtime-dir $RUNDIR ps --json)\" = '[]' ]" \
    && pass "every container ended" || fail "containers left"
check "a2's run succeeded" bash -c "! grep -qi error '$TMP/a2.out'"

# Tenants and weights survive a restart.
cg create --name p1 --tenant carol --gpu-memory 64MiB >/dev/null
cg tenant set carol --weight 5 >/dev/null
stop_daemon_hard
start_daemon --emulate 1GiB --fair-share static
check "p1 is still carol's after a restart" test "$(field p1 tenant)" = carol
check "carol's weight is still 5" test "$(tenant_field carol weight)" = 5
check "alice's weight is still 3" test "$(tenant_field alice weight)" = 3
cg create --name own --gpu-memory 64MiB >/dev/null
check "without --tenant the tenant is the creator's user" test "$(field own tenant)" = "$(id -un)"
finish

#!/usr/bin/env bash
# test_api.sh — the control API and CLI against a real daemon on the emulated GPU: devices,
# create/inspect/rm, limits, policies, and every kind of bad input answered clearly with
# nothing changed.
. "$(dirname "$0")/lib.sh"
start_daemon --emulate 5GiB

out=$(api GET /v1/devices)
check "devices answers 200" test "${out%% *}" = 200
check "one 5GiB device" grep -q '"total":5368709120' <<<"$out"
check "context charge is the configured 66MiB" grep -q '"context_charge":69206016' <<<"$out"

out=$(api POST /v1/containers '{"gpu_memory":"1GiB","name":"alpha"}')
check "create answers 201" test "${out%% *}" = 201
check "create returns the interposer env" grep -q '"CONVGPU_SOCKET"' <<<"$out"
check "full assignment when memory is free" grep -q '"assigned":1073741824' <<<"$out"
check "container socket exists" test -S "$RUNDIR/containers/$(cg inspect alpha | json_get id)/container.sock"

# Bad input: clear error, nothing changes.
n_before=$(cg ps --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')
for body in '{"gpu_memory":"6GiB"}' '{"gpu_memory":"lots"}' '{"gpu_memory":0}' '{}' \
            '{"gpu_memory":"1GiB","colour":"red"}' '[1,2]' 'not json' '{"gpu_memory":"1GiB","device":7}' \
            '{"gpu_memory":"1GiB","name":"alpha"}' '{"gpu_memory":"1GiB","name":"../etc"}' \
            '{"gpu_memory":"1GiB","id":"a/b"}' '{"gpu_memory":-5}' '{"gpu_memory":"1GiB","auto_remove":"yes"}'; do
    out=$(api POST /v1/containers "$body")
    code=${out%% *}
    if [ "$code" -ge 400 ] && [ "$code" -lt 500 ] && grep -q '"error"' <<<"$out"; then
        pass "rejected $body ($code)"
    else
        fail "bad body $body answered: $out"
    fi
done
n_after=$(cg ps --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')
check "bad requests created nothing" test "$n_before" = "$n_after"
check "oversized body refused" bash -c "head -c 100000 /dev/zero | tr '\\0' 'x' | curl -s -o /dev/null -w '%{http_code}' --unix-socket '$RUNDIR/control.sock' -X POST --data-binary @- http://convgpu/v1/containers | grep -q 413"
# A body up to the limit (64 KiB) is read whole, though it is larger than the connection's
# buffers (32 KiB in all): it streams into the request, as kubelet-sized requests must.
printf '{"id":"wide","gpu_memory":"64MiB"}%60000s' " " >"$TMP/wide.json"
check "a 60 KB body within the limit is accepted" bash -c "curl -s -o /dev/null -w '%{http_code}' --unix-socket '$RUNDIR/control.sock' -X POST --data-binary @'$TMP/wide.json' http://convgpu/v1/containers | grep -q 201"
out=$(api DELETE /v1/containers/wide); check "... and removed" test "${out%% *}" = 200

out=$(api GET /v1/nope);                 check "unknown path is 404" test "${out%% *}" = 404
out=$(api PATCH /v1/containers);         check "wrong method is 405" test "${out%% *}" = 405
out=$(api GET /v1/containers/missing);   check "unknown container is 404" test "${out%% *}" = 404

# The container's user (integrations create containers for another uid) and its init pid.
out=$(api POST /v1/containers '{"gpu_memory":"64MiB","name":"owned","uid":4321,"gid":4321}')
check "root may create a container for another user" test "${out%% *}" = 201
check "its socket belongs to that user" test "$(stat -c %u "$RUNDIR/containers/$(cg inspect owned | json_get id)/container.sock")" = 4321
for body in '{"gpu_memory":"64MiB","uid":5}' '{"gpu_memory":"64MiB","uid":-1,"gid":0}' \
            '{"gpu_memory":"64MiB","uid":"root","gid":0}' '{"gpu_memory":"64MiB","uid":4294967295,"gid":0}'; do
    out=$(api POST /v1/containers "$body")
    check "refused owner $body" test "${out%% *}" = 400
done
out=$(api POST /v1/containers/owned/start "{\"pid\":$$}")
check "start records the init pid" grep -q "\"init_pid\":$$" <<<"$out"
for body in '{}' '{"pid":0}' '{"pid":"1"}' '{"pid":1,"x":2}' '{"pid":2147483647}'; do
    out=$(api POST /v1/containers/owned/start "$body")
    check "refused start $body" test "${out%% *}" = 400
done
for body in '{"pid":1,"auto_remove":"yes"}' '{"pid":1,"auto_remove":1}' '{"pid":1,"auto_remove":null}'; do
    out=$(api POST /v1/containers/owned/start "$body")
    check "refused start $body" test "${out%% *}" = 400
done
check "refused starts changed nothing (not auto_remove)" test "$(container_field owned auto_remove)" = False
out=$(api GET /v1/containers/owned/start); check "start needs POST" test "${out%% *}" = 405
out=$(api POST /v1/containers/nobody/start '{"pid":1}'); check "start of an unknown container is 404" test "${out%% *}" = 404
cg rm owned >/dev/null

# start with auto_remove: the init's exit is the container's stop, also across a daemon restart.
api POST /v1/containers '{"gpu_memory":"64MiB","name":"initw"}' >/dev/null
idle_process & init1=$!
out=$(api POST /v1/containers/initw/start "{\"pid\":$init1,\"auto_remove\":true}")
check "start with auto_remove accepted" test "${out%% *}" = 200
check "container now auto_remove" test "$(container_field initw auto_remove)" = True
kill "$init1"; wait "$init1" 2>/dev/null || true
wait_for "the container is removed when its init exits" "$WAIT_S" bash -c \
    "[ \"\$(curl -s -o /dev/null -w '%{http_code}' --unix-socket '$RUNDIR/control.sock' http://convgpu/v1/containers/initw)\" = 404 ]" &&
    pass "removed when its init exited" || fail "still registered after its init exited"
for name in initx inity; do api POST /v1/containers "{\"gpu_memory\":\"64MiB\",\"name\":\"$name\"}" >/dev/null; done
idle_process & initx=$!
idle_process & inity=$!
api POST /v1/containers/initx/start "{\"pid\":$initx,\"auto_remove\":true}" >/dev/null
api POST /v1/containers/inity/start "{\"pid\":$inity,\"auto_remove\":true}" >/dev/null
stop_daemon_hard
kill "$initx"; wait "$initx" 2>/dev/null || true
start_daemon
check "an init that exited while the daemon was down: removed at restart" test "$(api GET /v1/containers/initx | cut -d' ' -f1)" = 404
check "a live init: kept at restart, with its pid" test "$(container_field inity init_pid)" = "$inity"
kill "$inity"; wait "$inity" 2>/dev/null || true
wait_for "the restored watch removes it" "$WAIT_S" bash -c \
    "[ \"\$(curl -s -o /dev/null -w '%{http_code}' --unix-socket '$RUNDIR/control.sock' http://convgpu/v1/containers/inity)\" = 404 ]" &&
    pass "restored container removed when its init exited" || fail "restored container not removed when its init exited"

# The daemon's version document is also a file while it runs (read by convgpu docker run).
check "convgpud.json has the version and mode" python3 -c '
import json,sys; v=json.load(open(sys.argv[1])); assert v["mode"]=="emulated" and v["pid"]==int(sys.argv[2]) and v["api"]>=1' \
    "$RUNDIR/convgpud.json" "$DAEMON_PID"
check "convgpud.json matches GET /v1/version" bash -c \
    "[ \"\$(python3 -c 'import json,sys;print(json.load(open(sys.argv[1])))' '$RUNDIR/convgpud.json')\" = \"\$(curl -s --unix-socket '$RUNDIR/control.sock' http://convgpu/v1/version | python3 -c 'import json,sys;print(json.load(sys.stdin))')\" ]"

# Limits: lowering below use is refused; changing works; over capacity is refused.
out=$(api PUT /v1/containers/alpha/limit '{"gpu_memory":"512MiB"}')
check "lower limit accepted" test "${out%% *}" = 200
check "limit now 512MiB" test "$(container_field alpha limit)" = 536870912
out=$(api PUT /v1/containers/alpha/limit '{"gpu_memory":"9GiB"}')
check "limit above capacity refused" test "${out%% *}" = 409
check "limit unchanged after refusal" test "$(container_field alpha limit)" = 536870912
out=$(api PUT /v1/containers/alpha/limit '{"size":"1GiB"}')
check "limit with unknown field refused" test "${out%% *}" = 400

# Partial assignment: 5GiB device, alpha holds 512MiB; beta asks 4.5GiB -> all of it fits.
out=$(api POST /v1/containers '{"gpu_memory":"4.5GiB","name":"beta"}')
check "beta created" test "${out%% *}" = 201
out=$(api POST /v1/containers '{"gpu_memory":"1GiB","name":"gamma"}')
check "gamma created with what is left" test "${out%% *}" = 201
check "gamma assigned 0 (device full)" test "$(container_field gamma assigned)" = 0

# Policies.
out=$(api PUT /v1/policy '{"resume":"best-fit"}')
check "policy change" grep -q '"resume":"best-fit"' <<<"$out"
out=$(api PUT /v1/policy '{"resume":"shortest"}')
check "unknown policy refused" test "${out%% *}" = 400
check "policy unchanged after refusal" bash -c "$BUILD/bin/convgpu --runtime-dir $RUNDIR policy | grep -q 'resume: best-fit'"

# CLI errors are clear and exit non-zero.
check "run without --gpu-memory fails" bash -c "! $BUILD/bin/convgpu --runtime-dir $RUNDIR run -- true 2>/dev/null"
check "run with a bad size fails with a message" bash -c "$BUILD/bin/convgpu --runtime-dir $RUNDIR run --gpu-memory 1.3B -- true 2>&1 | grep -q 'bad --gpu-memory'"
check "every command has --help" bash -c "for c in run create rm ps inspect set devices policy top events docker setup demo sim; do $BUILD/bin/convgpu \$c --help >/dev/null || exit 1; done"
check "convgpud --help" "$BUILD/bin/convgpud" --help
check "convgpu --version" bash -c "$BUILD/bin/convgpu --version | grep -Eqx 'convgpu [0-9]+\.[0-9]+\.[0-9]+'"
check "convgpud --version" bash -c "$BUILD/bin/convgpud --version | grep -Eqx 'convgpud [0-9]+\.[0-9]+\.[0-9]+'"
check "--runtime-dir=RELATIVE refused like --runtime-dir RELATIVE" bash -c "$BUILD/bin/convgpu --runtime-dir=relative ps 2>&1 | grep -q 'must be an absolute path'; rc=\${PIPESTATUS[0]}; [ \$rc -eq 2 ]"
check "state database is owner-only (0600)" test "$(stat -c %a "$RUNDIR/state.db")" = 600
check "control socket is owner/group only (0660)" test "$(stat -c %a "$RUNDIR/control.sock")" = 660
check "convgpud refuses an unknown control group" bash -c "! $BUILD/bin/convgpud --control-group no-such-group-here 2>/dev/null"
check "convgpud rejects a bad option" bash -c "! $BUILD/bin/convgpud --policy nope 2>/dev/null"

# Removal returns the assignment: gamma then gets memory.
check "rm beta" cg rm beta
out=$(api GET /v1/devices)
check "removal returned beta's assignment to the device" grep -q '"assigned":536870912' <<<"$out"

# State survives a daemon restart (kill -9).
stop_daemon_hard
start_daemon --emulate 5GiB
check "alpha survives restart" test "$(container_field alpha limit)" = 536870912
check "gamma survives restart" test "$(container_field gamma limit)" = 1073741824
check "alpha's assignment restored exactly" test "$(container_field alpha assigned)" = 536870912
check "gamma's assignment restored exactly (0)" test "$(container_field gamma assigned)" = 0
check "policy survives restart" bash -c "$BUILD/bin/convgpu --runtime-dir $RUNDIR policy | grep -q 'resume: best-fit'"
# Detached (no --foreground): convgpud.pid and convgpud.json name the daemon that runs, not the
# parent that exited while detaching (they named the parent before).
D2=$TMP/detached
"$BUILD/bin/convgpud" --runtime-dir "$D2" --emulate 1GiB --log-level warn 2>>"$DAEMON_LOG"
wait_for "the detached daemon answers" "$WAIT_S" curl -sf -o /dev/null --unix-socket "$D2/control.sock" http://convgpu/v1/version
dpid=$(cat "$D2/convgpud.pid")
check "detached: convgpud.pid names the running daemon" bash -c "[ -n '$dpid' ] && grep -q convgpud /proc/$dpid/cmdline"
check "detached: convgpud.json has the same pid" python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["pid"]==int(sys.argv[2])' "$D2/convgpud.json" "$dpid"
kill -TERM "$dpid"
wait_for "the detached daemon stops cleanly" "$WAIT_S" bash -c "[ ! -e '$D2/control.sock' ]" # (its zombie may linger: its parent is whoever adopted it)
check "clean stop removes convgpud.json" test ! -e "$D2/convgpud.json"
finish

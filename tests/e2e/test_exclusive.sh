#!/usr/bin/env bash
# test_exclusive.sh — exclusive containers (issue 21 item 4) through a real daemon on two
# emulated GPUs (1GiB and 512MiB): an exclusive container takes a whole GPU (its capacity as its limit unless it
# gives one), refuses to join a busy GPU ("device N is busy: K containers"), keeps every other
# container off its GPU (an error naming it), sends others to the other GPU, survives a daemon
# killed with -9, and frees its GPU when it ends. `convgpu run --exclusive` runs a workload that
# uses nearly the whole GPU. Bad input (an exclusive limit above the capacity, a non-boolean
# field) is refused with a clear error and changes nothing.
. "$(dirname "$0")/lib.sh"
export CONVGPU_EMU_CONTEXT=6MiB
start_daemon --emulate 1GiB,512MiB --placement first-fit
SAMPLE=$BUILD/bin/convgpu-sample
GiB=$((1 << 30))

code() { cut -d' ' -f1 <<<"$1"; }
snapshot() { cg ps --json | python3 -c 'import json,sys; print(sorted((c["name"], c["device"], c["limit"], c["exclusive"]) for c in json.load(sys.stdin)))'; }
refused() { # refused WHAT CODE PATTERN OUT
    if [ "$(code "$4")" = "$2" ] && grep -q "$3" <<<"$4"; then pass "$1"; else fail "$1: $4"; fi
}

out=$(api POST /v1/containers '{"name":"whole","device":0,"exclusive":true}')
check "an exclusive container without a limit: 201" test "$(code "$out")" = 201
check "its limit is the GPU's capacity" test "$(container_field whole limit)" = "$GiB"
check "it says it is exclusive" test "$(container_field whole exclusive)" = True

before=$(snapshot)
out=$(api POST /v1/containers '{"gpu_memory":"64MiB","name":"intruder","device":0}')
refused "another container on its GPU is refused, naming it" 409 \
    'device 0 is held by exclusive container [0-9a-f]* (whole)' "$out"
out=$(api POST /v1/containers '{"gpu_memory":"1GiB","name":"big"}')
refused "placement: only its GPU could hold 1GiB" 409 'held by exclusive container .*(whole)' "$out"
out=$(api POST /v1/containers '{"gpu_memory":"64MiB","name":"other"}')
check "placement sends others to the other GPU" test "$(code "$out") $(container_field other device)" = "201 1"
before=$(snapshot)
out=$(api POST /v1/containers '{"name":"second","device":1,"exclusive":true}')
refused "exclusive on a busy GPU: refused" 409 'device 1 is busy: 1 container;' "$out"
out=$(api POST /v1/containers '{"name":"second","exclusive":true}')
refused "exclusive with no empty GPU: refused" 409 'no device is free for an exclusive container' "$out"
out=$(api POST /v1/containers '{"gpu_memory":"2GiB","name":"second","exclusive":true}')
refused "exclusive above the capacity: refused" 400 'limit 2GiB does not fit' "$out"
out=$(api POST /v1/containers '{"gpu_memory":"64MiB","name":"second","exclusive":"yes"}')
refused "exclusive must be a boolean" 400 'exclusive must be true or false' "$out"
set +e
cg run --quiet --exclusive -- true 2>"$TMP/run.err"; rc=$?
set -e
check "run --exclusive with no empty GPU exits 125" test "$rc" = 125
check "... saying why" grep -q 'no device is free for an exclusive container' "$TMP/run.err"
check "refusals changed nothing" test "$(snapshot)" = "$before"

# A restart keeps it exclusive.
stop_daemon_hard
start_daemon --emulate 1GiB,512MiB --placement first-fit
check "still exclusive after kill -9 and restart" test "$(container_field whole exclusive)" = True
out=$(api POST /v1/containers '{"gpu_memory":"64MiB","name":"intruder","device":0}')
refused "and still alone on its GPU" 409 'held by exclusive container' "$out"

# Its end frees the GPU.
cg rm whole >/dev/null
out=$(api POST /v1/containers '{"gpu_memory":"64MiB","name":"intruder","device":0}')
check "after it is removed others join GPU 0" test "$(code "$out")" = 201
cg rm intruder >/dev/null

# convgpu run --exclusive: a workload using nearly the whole GPU, while others stay off it.
"$BUILD/bin/convgpu" --runtime-dir "$RUNDIR" run --name solo --exclusive -- \
    "$SAMPLE" --size 960MiB --touch 1MiB --hold-until "$TMP/release.solo" --quiet >"$TMP/solo.out" 2>&1 &
runner=$!
wait_for "solo allocates 960MiB, or ends" "$WAIT_S" bash -c \
    "[ \"\$('$BUILD/bin/convgpu' --runtime-dir '$RUNDIR' inspect solo 2>/dev/null | sed -n 's/^  \"used\": \\([0-9]*\\),/\\1/p')\" = $((966 << 20)) ] || ! kill -0 $runner"
check "run --exclusive took GPU 0 and its capacity" \
    test "$(container_field solo device) $(container_field solo limit) $(container_field solo used)" = "0 $GiB $((966 << 20))"
out=$(api POST /v1/containers '{"gpu_memory":"64MiB","name":"late","device":0}')
refused "nobody joins while it runs" 409 'held by exclusive container .*(solo)' "$out"
touch "$TMP/release.solo"
wait "$runner" && pass "solo ran to its end" || fail "solo: $(cat "$TMP/solo.out")"
out=$(api GET /v1/devices)
check "GPU 0 is free and shared again" test "$(cg devices --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["containers"])')" = 0
finish

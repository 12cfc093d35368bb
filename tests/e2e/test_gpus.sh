#!/usr/bin/env bash
# test_gpus.sh — containers on several GPUs (issue 22 item 1) through a real daemon on three
# emulated 2GiB GPUs: `convgpu run --gpus 2` gives a real CUDA program two devices, each with
# its own limit (cuMemGetInfo and NVML per device), each allocation charged to the GPU it is on
# (the daemon's per-device use and the GPUs' assignments agree), an allocation over one GPU's
# limit refused while the other GPU's succeed; the whole limit is reserved on each GPU at
# creation; a gang that does not fit now waits, queued, holding nothing on any GPU, and is
# admitted on all of its GPUs at once when they have room (issue 37 item 4); limit changes go to
# every GPU or none; a daemon killed with -9 brings the gang back linked, and a queued gang back
# queued; its end frees every GPU. Bad input (--gpus 0, more GPUs than the node, a GPU named twice or unknown, a malformed
# body) is refused with a clear error and changes nothing.
. "$(dirname "$0")/lib.sh"
export CONVGPU_EMU_CONTEXT=6MiB
EMU="--emulate 2GiB,2GiB,2GiB --placement first-fit"
start_daemon $EMU
PROBE=$BUILD/bin/ip_probe
GiB=$((1 << 30))
MiB=$((1 << 20))

code() { cut -d' ' -f1 <<<"$1"; }
devices() { # devices -> "assigned0 assigned1 assigned2"
    cg devices --json | python3 -c 'import json,sys; print(" ".join(str(d["assigned"]) for d in json.load(sys.stdin)))'
}
members() { # members NAME -> "device:limit:used ..." for each GPU of the container
    cg inspect "$1" | python3 -c '
import json,sys
c=json.load(sys.stdin)
print(" ".join("%d:%d:%d" % (m["device"], m["limit"], m["used"]) for m in c.get("members", [])))'
}
snapshot() { echo "$(cg ps --json | python3 -c 'import json,sys; print(sorted((c["name"], c["devices"], c["limit"]) for c in json.load(sys.stdin)))') $(devices)"; }
refused() { # refused WHAT CODE PATTERN OUT
    if [ "$(code "$1")" = "$2" ] && grep -q "$3" <<<"$1"; then pass "$4"; else fail "$4: $1"; fi
}

# --- a CUDA program on two GPUs --------------------------------------------------------------
cg run --quiet --name duo --gpus 2 --gpu-memory 1GiB -- \
    "$PROBE" gpus "$TMP/hold" 600MiB 300MiB >"$TMP/duo.out" 2>&1 &
duo=$!
wait_for "the program holds memory on both GPUs" "$WAIT_S" test -e "$TMP/hold"
check "the container has 2 GPUs, 0 and 1 (first-fit)" \
    test "$(container_field duo gpus) $(container_field duo devices)" = "2 [0, 1]"
check "CUDA sees each GPU's own limit (cuMemGetInfo and NVML)" \
    test "$(grep -c "total=$GiB nvml_total=$GiB" "$TMP/duo.out")" = 2
m=$(members duo)
used0=$(cut -d' ' -f1 <<<"$m" | cut -d: -f3)
used1=$(cut -d' ' -f2 <<<"$m" | cut -d: -f3)
check "each allocation is charged to its own GPU (600MiB+ctx on 0, 300MiB+ctx on 1): $m" \
    test "$used0" = $((606 * MiB)) -a "$used1" = $((306 * MiB))
check "the whole limit is reserved on each of its GPUs" test "$(devices)" = "$GiB $GiB 0"
out=$(api GET /metrics)
check "/metrics: one container, a used-bytes series per GPU" \
    test "$(grep -c "^convgpu_container_used_bytes{container=\"[0-9a-f]*\",name=\"duo\",device=\"[01]\"}" <<<"$out")" = 2

# A gang that does not fit now waits, queued, holding nothing (issue 37 item 4).
before=$(devices)
out=$(api POST /v1/containers '{"name":"big","gpus":2,"gpu_memory":"1536MiB"}')
check "2 x 1.5GiB when only GPU 2 has it free: created (201), queued" \
    test "$(code "$out") $(container_field big state) $(container_field big wait_reason)" = "201 queued gpus"
check "... holding nothing on any GPU" test "$(devices)" = "$before"
check "... on the two GPUs with the most free (2, then 0: GPUs 0 and 1 tie, the lower)" \
    test "$(container_field big devices)" = "[0, 2]"
check "ps shows it queued" grep -Eq '^[0-9a-f]+ +big .* queued ' <(cg ps)
check "the daemon logged why" grep -q "queued for 2 GPUs with 1.5GiB free each" "$DAEMON_LOG"
out=$(api DELETE /v1/containers/big)
check "a queued gang can be removed" test "$(code "$out")" = 200
out=$(api POST /v1/containers '{"name":"big","devices":[2,0],"gpu_memory":"1536MiB","gpus":3}')
check "bad input is still refused (devices and gpus disagree)" test "$(code "$out")" = 400
check "nothing left of it" test "$(devices)" = "$before"

# Limits change on every GPU or on none.
out=$(api PUT /v1/containers/duo/limit '{"gpu_memory":"1536MiB"}')
check "a raise that fits on both GPUs: 200" test "$(code "$out")" = 200
check "... both GPUs have the new limit and reserve it" \
    test "$(devices)" = "$((1536 * MiB)) $((1536 * MiB)) 0"
cg run --quiet --name single --device 1 --gpu-memory 256MiB -- "$PROBE" hold 100MiB "$TMP/hold1" \
    >/dev/null 2>&1 &
single=$!
wait_for "a single container on GPU 1 holds memory" "$WAIT_S" test -e "$TMP/hold1"
before=$(snapshot)
out=$(api PUT /v1/containers/duo/limit '{"gpu_memory":"1900MiB"}')
refused "$out" 409 'not free' "a raise that does not fit on GPU 1: 409"
check "... and GPU 0 kept its limit too" test "$(snapshot)" = "$before"
out=$(api PUT /v1/containers/duo/limit '{"gpu_memory":"1GiB"}')
check "lowering on both: 200, and both GPUs give it back" \
    test "$(code "$out") $(devices)" = "200 $GiB $((GiB + 256 * MiB)) 0"

# A daemon killed with -9 brings the gang back, linked, with its processes' use.
stop_daemon_hard
start_daemon $EMU
check "after kill -9 and restart: still 2 GPUs" \
    test "$(container_field duo gpus) $(container_field duo devices)" = "2 [0, 1]"
check "... each GPU's use restored: $(members duo)" test "$(members duo)" = "$m"
check "... the reservations restored" test "$(devices)" = "$GiB $((GiB + 256 * MiB)) 0"
out=$(api POST /v1/containers '{"name":"big","devices":[0,2],"gpu_memory":"1536MiB"}')
check "... and still held: 1.5GiB more on GPU 0 queued, holding nothing" \
    test "$(code "$out") $(container_field big state) $(devices)" = "201 queued $GiB $((GiB + 256 * MiB)) 0"
stop_daemon_hard
start_daemon $EMU
check "a daemon killed with -9 brings the queued gang back queued" \
    test "$(container_field big state) $(container_field big devices) $(devices)" = "queued [0, 2] $GiB $((GiB + 256 * MiB)) 0"
rm -f "$TMP/hold" "$TMP/hold1"
rc=0; wait "$duo" || rc=$?
check "the program freed on both GPUs and exited 0" test "$rc" = 0
wait "$single" || true
wait_for "duo gone: the queued gang admitted on GPUs 0 and 2 at once" "$WAIT_S" \
    prints "$((1536 * MiB)) 0 $((1536 * MiB))" devices &&
    pass "admitted when its GPUs had room" || fail "not admitted: $(devices) $(container_field big state)"
check "... running now" test "$(container_field big state) $(container_field big wait_reason)" = "running "
api DELETE /v1/containers/big >/dev/null
wait_for "every GPU free again" "$WAIT_S" prints "0 0 0" devices
check "nothing left: no container" test "$(cg ps --json)" = "[]"

# A real program in a queued gang: its first allocation waits until its GPUs have room, then
# it runs to the end. A single container holds 1.5GiB of GPU 0; the gang wants 1GiB on 0 and 2.
cg run --quiet --name holder --device 0 --gpu-memory 1536MiB -- "$PROBE" hold 1400MiB "$TMP/hold4" \
    >/dev/null 2>&1 &
holder=$!
wait_for "the holder holds 1.4GiB of GPU 0" "$WAIT_S" test -e "$TMP/hold4"
cg run --quiet --name waiter --devices 0,2 --gpu-memory 1GiB -- \
    "$PROBE" gpus "$TMP/hold5" 500MiB 500MiB >"$TMP/waiter.out" 2>&1 &
waiter=$!
wait_for "the waiter is queued" "$WAIT_S" prints queued container_field waiter state
wait_for "... its first allocation waits (a request pending)" "$WAIT_S" \
    prints 1 container_field waiter pending
check "... holding nothing, having allocated nothing" \
    test "$(devices) $(test -e "$TMP/hold5" && echo held)" = "$((1536 * MiB)) 0 0 "
rm -f "$TMP/hold4"
wait "$holder" || true
wait_for "the holder gone: the waiter's program holds its memory on both GPUs" "$WAIT_S" \
    test -e "$TMP/hold5"
check "... admitted on GPUs 0 and 2 at once, 1GiB each" test "$(devices)" = "$GiB 0 $GiB"
rm -f "$TMP/hold5"
rc=0; wait "$waiter" || rc=$?
check "the waiter's program ran to its end (exit 0), nothing out of memory" \
    bash -c "[ $rc = 0 ] && grep -q 'gpu 1 alloc rc=0' '$TMP/waiter.out'"

# One GPU's limit is that GPU's: 1.2GiB on GPU 1 of a 1GiB-per-GPU gang is refused there only.
set +e
cg run --quiet --gpus 2 --gpu-memory 1GiB -- "$PROBE" gpus "$TMP/hold2" 800MiB 1200MiB \
    >"$TMP/over.out" 2>&1 &
over=$!
wait_for "the over-limit program reached its hold" "$WAIT_S" test -e "$TMP/hold2"
check "GPU 0's 800MiB granted" grep -q "gpu 0 alloc rc=0" "$TMP/over.out"
check "GPU 1's 1.2GiB refused: out of memory (2)" grep -q "gpu 1 alloc rc=2$" "$TMP/over.out"
rm -f "$TMP/hold2"
wait "$over"; rc=$?
set -e
check "the program saw the refusal (exit 2)" test "$rc" = 2

# --- bad input --------------------------------------------------------------------------------
before=$(snapshot)
bad_run() { # bad_run WANT_RC PATTERN DESCRIPTION ARGS...
    local want=$1 pat=$2 what=$3; shift 3
    set +e
    cg run --quiet "$@" -- true 2>"$TMP/bad.err"; local rc=$?
    set -e
    if [ "$rc" = "$want" ] && grep -q -- "$pat" "$TMP/bad.err"; then pass "$what"; else
        fail "$what: rc $rc, $(cat "$TMP/bad.err")"; fi
}
bad_run 2 "bad --gpus '[^']*': a whole number from 1 to 64" "--gpus 0: exit 2" --gpus 0 --gpu-memory 1GiB
bad_run 2 "bad --gpus '[^']*': a whole number from 1 to 64" "--gpus two: exit 2" --gpus two --gpu-memory 1GiB
bad_run 125 'gpus must be an integer from 1 to 3' "--gpus 4 on a 3-GPU node: refused" \
    --gpus 4 --gpu-memory 1GiB
bad_run 2 "bad --devices '[^']*': GPU indexes such as 0,2 (each once)" "--devices 0,0: exit 2" --devices 0,0 --gpu-memory 1GiB
bad_run 2 "bad --devices '[^']*': GPU indexes such as 0,2 (each once)" "--devices 0,: exit 2" --devices 0, --gpu-memory 1GiB
bad_run 125 'devices\[1\] must be a GPU index below 3' "--devices 0,5: refused" \
    --devices 0,5 --gpu-memory 1GiB
bad_run 2 'not with --device' "--device with --devices: exit 2" --device 0 --devices 1,2 \
    --gpu-memory 1GiB
out=$(api POST /v1/containers '{"gpus":"2","gpu_memory":"1GiB"}')
refused "$out" 400 'gpus must be an integer' "gpus as a string: 400"
out=$(api POST /v1/containers '{"gpus":3,"devices":[0,1],"gpu_memory":"1GiB"}')
refused "$out" 400 'as many as gpus' "gpus and devices disagreeing: 400"
out=$(api POST /v1/containers '{"device":0,"devices":[0,1],"gpu_memory":"1GiB"}')
refused "$out" 400 'device or devices, not both' "device and devices together: 400"
out=$(api POST /v1/containers '{"devices":[],"gpu_memory":"1GiB"}')
refused "$out" 400 'devices must be an array' "an empty devices list: 400"
check "bad input changed nothing" test "$(snapshot)" = "$before"
finish

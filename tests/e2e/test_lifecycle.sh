#!/usr/bin/env bash
# test_lifecycle.sh — containers end with their runner: `convgpu run` exits with its command's
# status and removes the container; if the runner itself is SIGKILLed, the daemon removes the
# container and the workload dies with it, so no GPU memory stays unaccounted.
. "$(dirname "$0")/lib.sh"
export CONVGPU_EMU_CONTEXT=6MiB
start_daemon --emulate 512MiB
SAMPLE=$BUILD/bin/convgpu-sample

# A new container's ledger (1024 process slots and the header: 98,496 bytes, CG_LEDGER_SIZE in
# src/common/ledger.h; a layout change must show here) is sparse: memory backs a slot's page
# only once a process takes that slot, not every page of every container at registration. It is
# a memfd (no file in the runtime directory), seen here through the daemon's descriptor.
cg create --name sparse --gpu-memory 64MiB >/dev/null
sparse_id=$(cg inspect sparse | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
ledger=
for f in /proc/"$DAEMON_PID"/fd/*; do
    [ "$(readlink "$f")" = "/memfd:convgpu-ledger:$sparse_id (deleted)" ] && ledger=$f
done
check "the daemon holds the new container's ledger memfd" test -n "$ledger"
check "no ledger file in the container's directory" test ! -e "$RUNDIR/containers/$sparse_id/ledger"
check "a new container's ledger is 98,496 bytes long" test "$(stat -L -c %s "$ledger")" = 98496
check "a new container's ledger occupies at most 8 KiB ($(stat -L -c '%b x %B' "$ledger") bytes)" \
    test "$(( $(stat -L -c '%b * %B' "$ledger") ))" -le 8192
cg rm sparse >/dev/null

set +e
cg run --quiet --gpu-memory 64MiB -- sh -c 'exit 7'; rc=$?
check "run passes exit status 7 through" test "$rc" = 7
cg run --quiet --gpu-memory 64MiB -- /nonexistent/program 2>/dev/null; rc=$?
check "run of a missing program exits 127" test "$rc" = 127
cg run --quiet --gpu-memory 64MiB -- sh -c 'kill -TERM $$'; rc=$?
check "run reports death by signal as 128+n" test "$rc" = 143
cg run --quiet --gpu-memory 64MiB -- "$SAMPLE" --size 100MiB --quiet 2>/dev/null; rc=$?
check "over the limit exits 2 (CUDA_ERROR_OUT_OF_MEMORY)" test "$rc" = 2
set -e
check "containers are removed after run" test "$(cg ps --json)" = "[]"

"$BUILD/bin/convgpu" --runtime-dir "$RUNDIR" run --quiet --name held --gpu-memory 128MiB -- \
    "$SAMPLE" --size 100MiB --hold-until "$TMP/release.held" --quiet >"$TMP/held.out" 2>&1 &
runner=$!
wait_for "held container uses memory" "$WAIT_S" bash -c "[ \"\$($BUILD/bin/convgpu --runtime-dir $RUNDIR inspect held | python3 -c 'import json,sys;print(json.load(sys.stdin)[\"used\"])')\" -gt 0 ]"
workload=$(cg inspect held | python3 -c 'import json,sys; print(json.load(sys.stdin)["process_list"][0]["pid"])')
kill -KILL "$runner"
wait_for "container removed after its runner was killed" "$WAIT_S" bash -c "[ \"\$($BUILD/bin/convgpu --runtime-dir $RUNDIR ps --json)\" = '[]' ]" \
    && pass "daemon removed the orphaned container" || fail "container survived its runner"
wait_for "workload died with its runner" "$WAIT_S" bash -c "! kill -0 $workload 2>/dev/null" \
    && pass "workload died with its runner" || fail "workload $workload still running"
out=$(api GET /v1/devices)
check "device fully free again" grep -q '"assigned":0' <<<"$out"
finish

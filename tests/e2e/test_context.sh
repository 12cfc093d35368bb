#!/usr/bin/env bash
# test_context.sh — a process's context is charged when the context is created, not at its first
# allocation: the driver takes the context's memory at creation. With the device full, a new
# process must wait (suspended) before its context exists, instead of failing in the driver or
# holding memory nobody accounts for; it finishes once memory returns.
. "$(dirname "$0")/lib.sh"
export CONVGPU_EMU_CONTEXT=64MiB
start_daemon --emulate 512MiB
SAMPLE=$BUILD/bin/convgpu-sample

"$BUILD/bin/convgpu" --runtime-dir "$RUNDIR" run --quiet --name X --gpu-memory 512MiB -- \
    "$SAMPLE" --size 448MiB --touch 1MiB --hold-until "$TMP/release.X" --quiet >"$TMP/X.out" 2>&1 &
X=$!
wait_for "X holds the whole device" "$WAIT_S" bash -c "[ \"\$($BUILD/bin/convgpu --runtime-dir $RUNDIR inspect X | python3 -c 'import json,sys;print(json.load(sys.stdin)[\"used\"])')\" = $((512 << 20)) ]"

"$BUILD/bin/convgpu" --runtime-dir "$RUNDIR" run --quiet --name Y --gpu-memory 256MiB -- \
    "$SAMPLE" --size 64MiB --touch 1MiB --quiet >"$TMP/Y.out" 2>&1 &
Y=$!
wait_for "Y suspended before its context exists" "$WAIT_S" bash -c "[ \"\$($BUILD/bin/convgpu --runtime-dir $RUNDIR inspect Y 2>/dev/null | python3 -c 'import json,sys;print(json.load(sys.stdin)[\"state\"])')\" = suspended ]" \
    && pass "Y waits for its context's memory" || fail "Y was not suspended: $(cat "$TMP/Y.out")"
check "Y's process is still alive (not failed in the driver)" kill -0 "$Y"
touch "$TMP/release.X"; wait "$X" || true
rc=0; wait "$Y" || rc=$?
check "Y finished once X's memory returned (exit $rc)" test "$rc" -eq 0
check "no out-of-memory in Y" bash -c "! grep -q OUT_OF_MEMORY $TMP/Y.out"
finish

# test_threads.sh — a suspended request blocks only its own thread: with two threads suspended
# (their container's assignment is short while another container holds the GPU), the main thread
# keeps freeing and allocating; when the other container exits, both waiters are granted.
# Sizes: Y is assigned 448MiB while X holds the GPU, so a 448MiB waiter cannot fit in Y's own
# assignment however much the main thread frees (2MiB context + 448MiB > 448MiB).
. "$(dirname "$0")/lib.sh"
need_emulator
export CONVGPU_EMU_CONTEXT=2MiB
start_daemon --emulate 2GiB

run_in 1600MiB "$PROBE" hold 1500MiB "$TMP/x.ready" >"$TMP/x.out" 2>&1 &
wait_for "container X holds its memory" "$WAIT_S" test -e "$TMP/x.ready" || { fail "X did not start"; cat "$TMP/x.out"; finish; exit 1; }
cg run --name Y --gpu-memory 1GiB -- "$PROBE" threads 64MiB 2 448MiB "$TMP/y.go" >"$TMP/y.out" 2>&1 &
YPID=$!
# The main thread starts its rounds once the daemon holds both waiters' requests.
pending_in_y() { [ "$(container_field Y pending)" = "$1" ]; }
wait_for "both waiters of Y suspended" "$WAIT_S" pending_in_y 2 ||
    fail "Y's waiters were not suspended: $(cg inspect Y 2>&1 | tr -d '\n' | cut -c1-300)"
touch "$TMP/y.go"
if wait_for "main thread of Y done" "$WAIT_S" grep -q main-ok "$TMP/y.out"; then
    pass "main thread freed and allocated 20 times while two threads were suspended"
else
    fail "main thread of Y was blocked"
fi
check "no waiter granted while X holds the GPU" grep -q "granted_meanwhile=0" "$TMP/y.out"
rm -f "$TMP/x.ready" # X frees and exits
rc=0; wait "$YPID" || rc=$?
check "both waiters granted once X is gone (exit $rc)" test "$rc" -eq 0
grep -q "all-done granted=2" "$TMP/y.out" || { fail "waiters"; sed 's/^/    | /' "$TMP/y.out"; }
finish

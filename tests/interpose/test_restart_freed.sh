# test_restart_freed.sh — a free after a daemon restart wakes a sibling waiting in the same
# container, though the freeing process had not spoken to the new daemon.
#
# A 2GiB device: F (1GiB) takes its whole limit, so X (1.5GiB) is assigned only the other 1GiB.
# In X, A holds 600MiB and B asks for 600MiB: past X's assignment, under its limit, so B waits.
# The daemon is killed and restarted; B re-sends its request. A then frees, through its ledger
# alone: A's connection died with the old daemon and A has asked the new one for nothing, so its
# FREED notice is lost unless the interposer connects again to send it. B must get its memory.
# Once A's memory is back, X holds B's 600MiB and the accounting shows A without its 600MiB.
. "$(dirname "$0")/lib.sh"
need_emulator
export CONVGPU_EMU_CONTEXT=2MiB
export CONVGPU_DAEMON_TIMEOUT=120 # the processes wait out the restart: this only bounds a hang
T=$TMP
start_daemon --emulate 2GiB
cg create --gpu-memory 1GiB --name filler >/dev/null || fail "create filler"
cg create --gpu-memory 1536MiB --name x >"$T/env.x" || fail "create x"
xenv() { env $(tail -n +2 "$T/env.x") "$@"; }

xenv "$PROBE" release 600MiB "$T/a.held" "$T/a.freed" >"$T/a.out" 2>&1 &
PA=$!
wait_for "A holds 600MiB" "$WAIT_S" test -e "$T/a.held" || fail "A did not allocate"
xenv "$PROBE" hold 600MiB "$T/b.held" >"$T/b.out" 2>&1 &
PB=$!
x_pending() { cg ps --json | python3 -c 'import json,sys
print(sum(c["pending"] for c in json.load(sys.stdin) if c["name"] == "x"))' | grep -qx 1; }
wait_for "B waits in a suspended request" "$WAIT_S" x_pending || fail "B's request is not pending"

stop_daemon_hard
wait_for "B finds the daemon gone" "$WAIT_S" grep -q "daemon unreachable" "$T/b.out" ||
    fail "B did not notice the daemon was down"
start_daemon --emulate 2GiB
wait_for "B re-sends its request to the new daemon" "$WAIT_S" x_pending ||
    fail "B's request did not come back"

rm -f "$T/a.held"
wait_for "A freed" "$WAIT_S" test -e "$T/a.freed" || fail "A did not free"
check "A's free succeeded" grep -q "release free rc=0" "$T/a.out"
wait_for "B granted once A's memory is back" "$WAIT_S" test -e "$T/b.held" || true
check "a free after the restart, by a process that had not spoken to the new daemon, wakes its waiting sibling" \
    test -e "$T/b.held"
check "the daemon found the free in A's slot, without a notice" \
    grep -q "a free without a notice" "$DAEMON_LOG"
used=$(cg inspect x | python3 -c 'import json,sys
c=json.load(sys.stdin); print(c["used"], c["pending"] if "pending" in c else len(c["pending_requests"]))')
check "x: B's 600MiB and two contexts in use, nothing pending ($used)" \
    test "$used" = "$(( (600 << 20) + 2 * (2 << 20) )) 0"

rm -f "$T/b.held" "$T/a.freed"
rc=0; wait "$PB" || rc=$?
check "B freed and exited 0 ($rc)" test "$rc" -eq 0
rc=0; wait "$PA" || rc=$?
check "A exited 0 ($rc)" test "$rc" -eq 0
finish

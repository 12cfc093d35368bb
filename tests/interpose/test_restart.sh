# test_restart.sh — a daemon restart in the middle of a run: a request made while the daemon is
# down waits (reconnecting) and is granted by the restarted daemon; with a short
# CONVGPU_DAEMON_TIMEOUT it gets out of memory instead.
. "$(dirname "$0")/lib.sh"
need_emulator
export CONVGPU_EMU_CONTEXT=2MiB
start_daemon --emulate 2GiB

CONVGPU_DAEMON_TIMEOUT=30 run_in 1GiB "$PROBE" steps 100MiB "$TMP/s1" >"$TMP/r1.out" 2>&1 &
P=$!
wait_for "first allocation" 20 test -e "$TMP/s1"
stop_daemon_hard
rm -f "$TMP/s1"          # the second allocation now needs the daemon, which is down
sleep 1
start_daemon --emulate 2GiB
rc=0; wait "$P" || rc=$?
check "request made while the daemon was down is granted after its restart (exit $rc)" test "$rc" -eq 0
grep -q "step2 rc=0" "$TMP/r1.out" || sed 's/^/    | /' "$TMP/r1.out"

CONVGPU_DAEMON_TIMEOUT=1 run_in 1GiB "$PROBE" steps 100MiB "$TMP/s2" >"$TMP/r2.out" 2>&1 &
P=$!
wait_for "first allocation" 20 test -e "$TMP/s2"
stop_daemon_hard
rm -f "$TMP/s2"
rc=0; wait "$P" || rc=$?
check "with the daemon gone for longer than CONVGPU_DAEMON_TIMEOUT: out of memory (exit $rc)" test "$rc" -eq 2
finish

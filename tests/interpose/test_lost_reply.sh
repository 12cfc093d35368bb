# test_lost_reply.sh — a grant whose reply never left a dying daemon is not charged twice. Fault
# injection: the daemon dies right after charging its first grant (the process's context and one
# granule, asked for before its context exists), before the reply is sent. The process
# reconnects to the restarted daemon and asks again with the same request id; the daemon finds
# the grant noted in the slot and charged, and answers GRANTED without charging it again. Before
# the notes, the re-sent request was charged again (one more granule, kept until the process
# exited): the container showed 166MiB where it holds 164MiB. And the other side: a daemon that
# dies after noting a grant but before charging it leaves the quota as noted, so its successor
# forgets the note and the re-sent request is decided and charged once (not answered unpaid).
. "$(dirname "$0")/lib.sh"
need_emulator
export CONVGPU_EMU_CONTEXT=64MiB PROBE T=$TMP
export CONVGPU_DAEMON_TIMEOUT=120 # the probe waits out the restart: this only bounds a hang
MIB=$((1 << 20))

used_of_only_container() {
    curl -s --unix-socket "$RUNDIR/control.sock" http://convgpu/v1/containers |
        python3 -c 'import json,sys; c=json.load(sys.stdin); c=c.get("containers", c) if isinstance(c, dict) else c; print(c[0]["used"] if len(c) == 1 else "n=%d" % len(c))'
}

# scenario WHERE: the daemon dies at its first grant, WHERE = before-charge | after-charge
scenario() {
    local where=$1
    rm -f "$T/held"
    CONVGPUD_TEST_CRASH=$where:1 start_daemon --emulate 2GiB
    run_in 1GiB "$PROBE" hold 100MiB "$T/held" >"$T/p.out" 2>&1 &
    P=$!
    wait_for "the daemon to die at the injected fault" "$WAIT_S" bash -c "! kill -0 $DAEMON_PID" ||
        { fail "$where: the fault was not reached"; kill -KILL "$DAEMON_PID"; }
    rc=0; wait "$DAEMON_PID" || rc=$?
    DAEMON_PID=
    check "$where: the daemon died at the injected fault, before the reply (exit $rc)" test "$rc" -eq 99
    start_daemon --emulate 2GiB
    if wait_for "the probe holds its 100MiB" "$WAIT_S" test -e "$T/held"; then
        pass "$where: the request re-sent to the restarted daemon was granted"
    else
        fail "$where: the probe never got its 100MiB"; sed 's/^/    | /' "$T/p.out"
    fi
    used=$(used_of_only_container)
    check "$where: charged once: the container uses 64MiB context + 100MiB = 164MiB (got $((used / MIB))MiB)" \
        test "$used" -eq $((164 * MIB))
    rm -f "$T/held"
    rc=0; wait "$P" || rc=$?
    check "$where: the probe exits 0 (exit $rc)" test "$rc" -eq 0
    wait_for "the container's memory returns" "$WAIT_S" bash -c "[ \"\$(curl -s --unix-socket '$RUNDIR/control.sock' http://convgpu/v1/devices | python3 -c 'import json,sys; print(json.load(sys.stdin)[0][\"used\"])')\" = 0 ]" ||
        fail "$where: device use did not return to 0"
    stop_daemon_hard
}

# Charged, not answered: the restarted daemon answers the re-sent request from its note.
: >"$DAEMON_LOG"
scenario after-charge
check "after-charge: the daemon answered a noted grant again" grep -q "answered again, not charged again" "$DAEMON_LOG"
# Noted, not charged (the quota is as noted): the note is forgotten and the request decided anew.
: >"$DAEMON_LOG"
scenario before-charge
check "before-charge: the noted grant was not taken as charged" bash -c "! grep -q \"answered again\" \"$DAEMON_LOG\""
finish

# test_kill.sh — SIGKILL of a process returns its memory at once: another process of the same
# container can then allocate it (and cannot while the first one holds it).
. "$(dirname "$0")/lib.sh"
need_emulator
export CONVGPU_EMU_CONTEXT=2MiB
start_daemon --emulate 2GiB
export PROBE R="$TMP/ready"

expect_rc 2 "while P1 holds 400MiB, P2 cannot get 400MiB of a 512MiB container" run_in 512MiB sh -c '
    "$PROBE" hold 400MiB "$R" & p=$!
    while [ ! -e "$R" ]; do sleep 0.02; done
    rc=0; "$PROBE" alloc 400MiB || rc=$?
    rm -f "$R"; wait $p; exit $rc'
expect_rc 0 "after SIGKILL of P1, P2 gets its 400MiB" run_in 512MiB sh -c '
    "$PROBE" hold 400MiB "$R" & p=$!
    while [ ! -e "$R" ]; do sleep 0.02; done
    kill -KILL $p; wait $p; rm -f "$R"; sleep 0.2
    exec "$PROBE" alloc 400MiB'
finish

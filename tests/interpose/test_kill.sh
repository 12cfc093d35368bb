# test_kill.sh — SIGKILL of a process returns its memory: another process of the same container
# can then allocate it (and cannot while the first one holds it).
. "$(dirname "$0")/lib.sh"
need_emulator
export CONVGPU_EMU_CONTEXT=2MiB
start_daemon --emulate 2GiB
export PROBE R="$TMP/ready" CLI="$BUILD/bin/convgpu" RUNDIR WAIT_S

expect_rc 2 "while P1 holds 400MiB, P2 cannot get 400MiB of a 512MiB container" run_in 512MiB sh -c '
    "$PROBE" hold 400MiB "$R" & p=$!
    while [ ! -e "$R" ]; do sleep 0.02; done
    rc=0; "$PROBE" alloc 400MiB || rc=$?
    rm -f "$R"; wait $p; exit $rc'
# The daemon learns of the death when P1's socket hangs up, a moment after wait returns: P2
# asks once the container's use is back to 0 (waiting at most WAIT_S: only a hang fails).
expect_rc 0 "after SIGKILL of P1, P2 gets its 400MiB" cg run --name killed --gpu-memory 512MiB -- sh -c '
    "$PROBE" hold 400MiB "$R" & p=$!
    while [ ! -e "$R" ]; do sleep 0.02; done
    kill -KILL $p; wait $p; rm -f "$R"
    used() { "$CLI" --runtime-dir "$RUNDIR" inspect killed | python3 -c "import json,sys; print(json.load(sys.stdin)[\"used\"])"; }
    t=$(( $(date +%s) + WAIT_S ))
    until [ "$(used)" = 0 ]; do [ "$(date +%s)" -lt $t ] || { echo "the memory of P1 never returned"; exit 1; }; sleep 0.02; done
    exec "$PROBE" alloc 400MiB'
finish

# test_swap_crash.sh — the daemon killed in the middle of a swap (issue 20, "nothing lost"): at an
# injected fault after the processes' reports reached the core but before the move ended, and
# right after a swap-in was ordered (quotas raised) but before anyone reported. Restarted, the
# daemon ends the container either out (held, as ordered) or in; the data comes back
# bit-identical and the container is charged exactly once. Real processes, emulated GPU.
. "$(dirname "$0")/lib.sh"
need_emulator
export CONVGPU_EMU_CONTEXT=2MiB
SWAP_PROBE=${IP_SWAP_PROBE:?}
MIB=1048576
SZ=64; [ -z "${CONVGPU_SANITIZE:-}" ] || SZ=16 # every byte costs under a sanitizer
f() { container_field v "$1"; }
is() { test "$(f "$1")" = "$2"; }

died_at_fault() { # died_at_fault WHERE: waits for the daemon to exit 99
    wait_for "the daemon to die at $1" "$WAIT_S" bash -c "! kill -0 $DAEMON_PID" ||
        { fail "$1: the fault was not reached"; kill -KILL "$DAEMON_PID"; }
    local rc=0; wait "$DAEMON_PID" || rc=$?
    DAEMON_PID=
    check "$1: the daemon died at the injected fault (exit $rc)" test "$rc" -eq 99
}

scenario() { # scenario WHERE
    local where=$1 out="$TMP/$1.out" rel="$TMP/$1.go"
    CONVGPUD_TEST_CRASH=$where:1 start_daemon --emulate 256MiB --swap yes
    cg run --name v --gpu-memory 128MiB -- "$SWAP_PROBE" big "$rel" "$SZ" >"$out" 2>&1 & local p=$!
    wait_for "$where: probe ready" "$WAIT_S" grep -q '^ready$' "$out" || fail "$where: probe never ready"
    local used_in; used_in=$(f used)
    if [ "$where" = swap-reported ]; then
        expect_rc 0 "$where: convgpu swap" cg swap v
        died_at_fault "$where"
        start_daemon --emulate 256MiB --swap yes
        wait_for "$where: restored out" "$WAIT_S" is swap out && pass "$where: the restarted daemon keeps it out" \
            || fail "$where: it is $(f swap)"
        check "$where: still held by the operator's order" is swap_held True
        check "$where: its $SZ MiB count as on the host ($(f swapped_bytes))" test "$(f swapped_bytes)" -eq $((SZ * MIB))
        check "$where: use on the device is what stayed ($(f used) = $used_in - $SZ MiB)" \
            test "$(f used)" -eq $((used_in - SZ * MIB))
        expect_rc 0 "$where: convgpu unswap" cg unswap v
    else
        expect_rc 0 "$where: convgpu swap" cg swap v
        wait_for "$where: out" "$WAIT_S" is swap out || fail "$where: never out"
        cg unswap v >/dev/null 2>&1 || true # the daemon dies while it answers
        died_at_fault "$where"
        start_daemon --emulate 256MiB --swap yes
    fi
    wait_for "$where: back in" "$WAIT_S" is swap in && pass "$where: back in" || fail "$where: it is $(f swap)"
    check "$where: charged once: use $(f used) = $used_in" test "$(f used)" -eq "$used_in"
    touch "$rel"
    local rc=0; wait "$p" || rc=$?
    check "$where: every byte came back (rc $rc)" test "$rc" = 0 -a "$(tail -n1 "$out")" = ok
    stop_daemon_hard
}

scenario swap-reported
scenario swap-in-ordered
finish

#!/usr/bin/env bash
# test_docker_scenarios.sh — the paper's Figure 3 with four real Docker containers, and
# isolation between containers, on a private dockerd (lib.sh: start_dockerd).
#
# Figure 3 (as tests/e2e/test_figure3.sh with plain processes), scaled to a 512MiB emulated
# device with a 6MiB context charge (sizes in MiB), run once per resume policy (fifo, best-fit),
# switched at run time with `convgpu policy`:
#   A: limit 200, uses 150    B: limit 100, uses 90      -> free 212
#   C: limit 358 -> assigned 212; asks 250+6 -> suspended
#   D: limit 76  -> assigned 0;   asks 50+6  -> suspended at its first request
#   docker kill B (poststop hook: its assignment returns) -> fifo resumes C (the oldest),
#   best-fit resumes D (its shortfall fits); the other stays suspended until A is killed; C and
#   D then finish with exit 0 (nobody ran out of memory).
#
# Isolation: containers X and Y (each with its own socket); from inside X (docker exec) X's own
# socket answers with X's limit, but Y's socket is not there: not under /run/convgpu, not at its
# host path, not through /proc/PID/root of Y's init, and neither is the daemon's control socket
# (connects with SOCK_STREAM and SOCK_SEQPACKET: tests/containers/sockprobe.c). The same probe
# run on the host reaches Y's socket, so the check can fail.
. "$(dirname "$0")/lib.sh"
docker_prereqs
PROBE=$BUILD/bin/sockprobe
PROTO=$BUILD/bin/proto_client
[ -x "$PROBE" ] || { fail "missing $PROBE (build first)"; finish; }
[ -x "$PROTO" ] || { fail "missing $PROTO (build first)"; finish; }
export CONVGPU_EMU_CONTEXT=6MiB
start_daemon --emulate 512MiB
start_dockerd
ROOTFS_EXTRA="$PROBE $PROTO" docker_images
"$DOCKER" image inspect cg-sample:1 >/dev/null && pass "private dockerd started, image imported" ||
    fail "image not imported"

field() { container_field "$@"; } # field ID FIELD (the daemon's view of a container)
is_state() { [ "$(field "$1" state)" = "$2" ]; }
is_used() { [ "$(field "$1" used)" -gt 0 ] 2>/dev/null; }
gone_or_running() { ! cg inspect "$1" >/dev/null 2>&1 || is_state "$1" running; }
dwait() { timeout "$WAIT_S" "$DOCKER" wait "$1" 2>/dev/null || echo timeout; }
release() { local x; for x in "$@"; do touch "$GATE/release.$x"; done; }
MiB=$((1 << 20))

figure3() { # figure3 POLICY EXPECT OTHER
    local pol=$1 expect=$2 other=$3 a b c d
    cg policy "$pol" >/dev/null
    check "[$pol] resume policy set" bash -c "'$BUILD/bin/convgpu' --runtime-dir '$RUNDIR' policy | grep -q '$pol'"
    # A and B hold until killed; C and D until released (the gate's release.POLICY.C/D), so
    # that the states checked below last as long as the checks take.
    a=$(dr -d --gpu-memory 200MiB cg-sample:1 convgpu-sample --size 150MiB --touch 1MiB --hold --quiet)
    b=$(dr -d --gpu-memory 100MiB cg-sample:1 convgpu-sample --size 90MiB --touch 1MiB --hold --quiet)
    wait_for "A holds its memory" "$WAIT_S" is_used "$a" && wait_for "B holds its memory" "$WAIT_S" is_used "$b" &&
        pass "[$pol] A and B run and hold their memory" || fail "[$pol] A or B did not start"
    c=$(dr -d -v "$GATE:/gate:ro" --gpu-memory 358MiB cg-sample:1 convgpu-sample --size 250MiB \
        --touch 1MiB --hold-until "/gate/release.$pol.C" --quiet)
    wait_for "C suspended" "$WAIT_S" is_state "$c" suspended && pass "[$pol] C suspended when it needs more" ||
        fail "[$pol] C was not suspended ($(field "$c" state))"
    check "[$pol] C got a partial assignment (212MiB)" test "$(field "$c" assigned)" = $((212 * MiB))
    d=$(dr -d -v "$GATE:/gate:ro" --gpu-memory 76MiB cg-sample:1 convgpu-sample --size 50MiB \
        --touch 1MiB --hold-until "/gate/release.$pol.D" --quiet)
    wait_for "D suspended" "$WAIT_S" is_state "$d" suspended && pass "[$pol] D suspended at its first request" ||
        fail "[$pol] D was not suspended ($(field "$d" state))"
    check "[$pol] D got no assignment" test "$(field "$d" assigned)" = 0
    check "[$pol] A and B still running" bash -c "[ \"\$1\" = running ] && [ \"\$2\" = running ]" _ \
        "$(field "$a" state)" "$(field "$b" state)"
    local e=$c o=$d
    [ "$expect" = C ] || { e=$d; o=$c; }

    "$DOCKER" kill "$b" >/dev/null
    wait_for "B released" "$WAIT_S" bash -c "! '$BUILD/bin/convgpu' --runtime-dir '$RUNDIR' inspect $b" &&
        pass "[$pol] docker kill B: released" || fail "[$pol] B not released after docker kill"
    wait_for "$expect resumes" "$WAIT_S" gone_or_running "$e" && pass "[$pol] $pol resumes $expect" ||
        fail "[$pol] $pol did not resume $expect ($(field "$e" state))"
    check "[$pol] $other still suspended after $expect resumed" is_state "$o" suspended
    release "$pol.$expect"
    check "[$pol] $expect finishes: exit 0" test "$(dwait "$e")" = 0

    "$DOCKER" kill "$a" >/dev/null
    release "$pol.$other"
    check "[$pol] A killed: $other resumes and finishes: exit 0" test "$(dwait "$o")" = 0
    "$DOCKER" rm -f "$a" "$b" "$c" "$d" >/dev/null
    check "[$pol] nothing left registered" test "$(registered_count)" = 0
}
figure3 fifo C D
figure3 best-fit D C

# --- isolation: one container cannot reach another's socket, nor the control socket ---
X=$(dr -d --gpu-memory 64MiB cg-sample:1 sleep infinity)
Y=$(dr -d --gpu-memory 96MiB cg-sample:1 sleep infinity)
wait_for "X and Y running" "$WAIT_S" bash -c "[ \"\$('$DOCKER' inspect -f '{{.State.Running}}' $X $Y | sort -u)\" = true ]" ||
    fail "X or Y did not start"
XS=$(field "$X" id) YS=$(field "$Y" id)
YSOCK=$RUNDIR/containers/$YS/container.sock
YPID=$("$DOCKER" inspect -f '{{.State.Pid}}' "$Y")
check "on the host, the probe reaches Y's socket (the probe can see a reachable socket)" \
    bash -c "! '$PROBE' '$YSOCK' >/dev/null"
xexec() { "$DOCKER" exec "$X" "$@"; }
xexec proto_client /run/convgpu/container.sock hello recv >"$TMP/x.hello" 2>&1 || true
check "inside X, X's own socket answers HELLO with X's limit (64MiB)" \
    grep -q "recv=WELCOME .*limit=$((64 * MiB)) " "$TMP/x.hello"
xexec ls -a /run/convgpu >"$TMP/x.ls" 2>&1 || true
check "inside X, /run/convgpu holds only X's own socket (the ledger is a memfd)" \
    test "$(grep -v '^\.\.\?$' "$TMP/x.ls" | sort | tr '\n' ' ')" = "container.sock "
xexec sh -c ': >/run/convgpu/x' 2>/dev/null && rc=0 || rc=$?
check "inside X, /run/convgpu is read-only" test "$rc" != 0
xexec sockprobe "$YSOCK" "$RUNDIR/control.sock" "/proc/$YPID/root/run/convgpu/container.sock" \
    /run/convgpu/control.sock /run/convgpu/../control.sock >"$TMP/x.probe" 2>&1 && rc=0 || rc=$?
cat "$TMP/x.probe"
check "inside X, neither Y's socket (host path, /proc/PID/root) nor the control socket is reachable" \
    test "$rc" = 0
check "... they do not exist there (ENOENT), 5 paths probed" \
    test "$(grep -c 'stream=ENOENT seqpacket=ENOENT' "$TMP/x.probe")" = 5
# (The emulator's state file is mounted at /run/convgpu-emu/state: nothing of the host's runtime
# directory exists inside.)
xexec sh -c 'test ! -e '"$RUNDIR"' && test -e /run/convgpu-emu/state' && rc=0 || rc=$?
check "inside X, the daemon's runtime directory does not exist (only the emulator's state file)" test "$rc" = 0
check "inside X, Y's processes are not visible (pid namespace)" \
    bash -c "! '$DOCKER' exec $X ls /proc | grep -qx '$YPID'"
xexec proto_client "$YSOCK" hello recv >"$TMP/x.y" 2>&1 && rc=0 || rc=$?
check "inside X, a protocol client naming Y's socket cannot connect (exit 3, ENOENT)" \
    bash -c "[ $rc = 3 ] && grep -q 'connect=error errno=ENOENT' '$TMP/x.y'"
check "Y is untouched: still registered and running" is_state "$Y" running
"$DOCKER" rm -f "$X" "$Y" >/dev/null
check "X and Y released" test "$(registered_count)" = 0
finish

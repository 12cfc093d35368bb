#!/usr/bin/env bash
# test_figure3.sh POLICY — the paper's Figure 3 with real processes on a real daemon:
# A and B run; C gets a partial assignment and is suspended when it needs more; D gets nothing
# and is suspended at its first request; B exits and the policy decides who resumes.
# Scaled to a 512MiB device with a 6MiB context charge (sizes in MiB):
#   A: limit 200, uses 150    B: limit 100, uses 90      -> free 212
#   C: limit 358 -> assigned 212; asks 250+6 -> suspended (shortfall 146)
#   D: limit 76  -> assigned 0;   asks 50+6  -> suspended (shortfall 76)
#   B exits -> free 100: fifo resumes C (oldest; 100 covers its need), best-fit / recent /
#   aging-fit resume D (shortfall fits / suspended last), random resumes one of them.
# Then A exits and everyone left finishes: nobody failed with out-of-memory.
# Every workload holds its memory until the test touches $TMP/release.NAME: the states the checks
# look at last as long as the checks take.
. "$(dirname "$0")/lib.sh"
POLICY=${1:?usage: test_figure3.sh POLICY}
export CONVGPU_EMU_CONTEXT=6MiB
start_daemon --emulate 512MiB --policy "$POLICY"
SAMPLE=$BUILD/bin/convgpu-sample

run_bg() { # run_bg NAME LIMIT SIZE: holds SIZE until release NAME
    "$BUILD/bin/convgpu" --runtime-dir "$RUNDIR" run --quiet --name "$1" --gpu-memory "$2" -- \
        "$SAMPLE" --size "$3" --hold-until "$TMP/release.$1" --quiet >"$TMP/$1.out" 2>&1 &
    eval "PID_$1=$!"
}
state() { container_field "$1" state; }
used() { container_field "$1" used; }
release() { local x; for x in "$@"; do touch "$TMP/release.$x"; done; }

run_bg A 200MiB 150MiB
run_bg B 100MiB 90MiB
wait_for "A holds its memory" "$WAIT_S" bash -c "[ \"\$($BUILD/bin/convgpu --runtime-dir $RUNDIR inspect A | python3 -c 'import json,sys;print(json.load(sys.stdin)[\"used\"])')\" -gt 0 ]"
wait_for "B holds its memory" "$WAIT_S" bash -c "[ \"\$($BUILD/bin/convgpu --runtime-dir $RUNDIR inspect B | python3 -c 'import json,sys;print(json.load(sys.stdin)[\"used\"])')\" -gt 0 ]"

run_bg C 358MiB 250MiB
wait_for "C suspended" "$WAIT_S" bash -c "[ \"\$($BUILD/bin/convgpu --runtime-dir $RUNDIR inspect C | python3 -c 'import json,sys;print(json.load(sys.stdin)[\"state\"])')\" = suspended ]" \
    && pass "C suspended" || fail "C was not suspended"
check "C got a partial assignment (212MiB)" test "$(container_field C assigned)" = $((212 << 20))

run_bg D 76MiB 50MiB
wait_for "D suspended" "$WAIT_S" bash -c "[ \"\$($BUILD/bin/convgpu --runtime-dir $RUNDIR inspect D | python3 -c 'import json,sys;print(json.load(sys.stdin)[\"state\"])')\" = suspended ]" \
    && pass "D suspended" || fail "D was not suspended"
check "D got no assignment" test "$(container_field D assigned)" = 0
check "A still running" test "$(state A)" = running

# B exits: its container is removed when its `convgpu run` ends.
kill -TERM "$PID_B"
wait "$PID_B" || true
case $POLICY in
    fifo) expect=C other=D ;;
    best-fit|recent|aging-fit) expect=D other=C ;;
    random) expect= other= ;;
esac
if [ -n "$expect" ]; then
    wait_for "$expect resumes" "$WAIT_S" bash -c "! $BUILD/bin/convgpu --runtime-dir $RUNDIR inspect $expect >/dev/null 2>&1 || [ \"\$($BUILD/bin/convgpu --runtime-dir $RUNDIR inspect $expect | python3 -c 'import json,sys;print(json.load(sys.stdin)[\"state\"])')\" = running ]" \
        && pass "$POLICY resumes $expect" || fail "$POLICY did not resume $expect"
    check "$other still suspended after $expect resumed" test "$(state $other 2>/dev/null)" = suspended
    release "$expect"
    eval "wait \$PID_$expect" && pass "$expect finished its work" || fail "$expect failed: $(cat "$TMP/$expect.out")"
else
    wait_for "someone resumes" "$WAIT_S" bash -c "[ \"\$($BUILD/bin/convgpu --runtime-dir $RUNDIR ps --json | python3 -c 'import json,sys;print(sum(c[\"state\"]==\"suspended\" for c in json.load(sys.stdin)))')\" -le 1 ]" \
        && pass "random resumed one" || fail "random resumed nobody"
fi

# A exits: whoever still waits resumes and finishes.
kill -TERM "$PID_A"
wait "$PID_A" || true
release C D
for x in C D; do
    eval "wait \$PID_$x" && pass "$x finished" || fail "$x failed: $(cat "$TMP/$x.out")"
done
check "no container left" test "$(cg ps --json)" = "[]"
check "no out-of-memory anywhere" bash -c "! grep -q OUT_OF_MEMORY $TMP/[CD].out"
finish

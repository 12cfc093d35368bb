#!/usr/bin/env bash
# test_gang_wait_max.sh — the bound on a queued gang's wait (convgpud --gang-wait-max; core:
# cg_gang_expire) through a real daemon on two emulated 2GiB GPUs: a single container holds
# 1.5GiB of GPU 0, so a container that wants 1GiB on GPUs 0 and 1 is queued; its real program's
# first allocation waits; past the bound the daemon gives the gang up: the waiting allocation is
# refused (the program sees out-of-memory and ends, exit 2), a later program's is refused at
# once, the daemon logs why, and the gang holds nothing on either GPU; a gang given up is not admitted when
# its GPUs later have room (nothing is reserved for it) and shows as "expired" until removed;
# a gang that fits is never touched by the bound. Bad values of the setting are refused.
. "$(dirname "$0")/lib.sh"
export CONVGPU_EMU_CONTEXT=6MiB
PROBE=$BUILD/bin/ip_probe
SAMPLE=$BUILD/bin/convgpu-sample
MiB=$((1 << 20))

for bad in -1 x 604801 1.5; do
    "$BUILD/bin/convgpud" --gang-wait-max "$bad" --runtime-dir "$TMP/bad" --emulate 1GiB \
        >/dev/null 2>"$TMP/bad.err" && rc=0 || rc=$?
    check "--gang-wait-max $bad: refused (exit 2), saying what it takes" \
        bash -c "[ $rc = 2 ] && grep -q 'gang-wait-max' '$TMP/bad.err'"
done

start_daemon --emulate 2GiB,2GiB --gang-wait-max 10
devices() { cg devices --json | python3 -c 'import json,sys; print(" ".join(str(d["assigned"]) for d in json.load(sys.stdin)))'; }

cg run --quiet --name holder --device 0 --gpu-memory 1536MiB -- "$PROBE" hold 1400MiB "$TMP/hold" \
    >/dev/null 2>&1 &
holder=$!
wait_for "the holder holds 1.4GiB of GPU 0" "$WAIT_S" test -e "$TMP/hold"

# A real program in a gang that cannot be admitted within the bound; after it, a second one in
# the same container, whose first allocation (its context) is refused at once.
cg run --quiet --name waiter --devices 0,1 --gpu-memory 1GiB -- bash -c \
    "'$SAMPLE' --size 500MiB --touch 1MiB; echo first=\$?; '$SAMPLE' --size 500MiB --touch 1MiB; echo second=\$?" \
    >"$TMP/waiter.out" 2>&1 &
waiter=$!
wait_for "the bound passes: the waiter's programs are answered and end" "$WAIT_S" \
    grep -q '^second=' "$TMP/waiter.out"
check "... the waiting allocation was refused: out of device memory (exit 2)" \
    bash -c "grep -q 'out of device memory' '$TMP/waiter.out' && grep -qx 'first=2' '$TMP/waiter.out'"
check "... and the next program's, at once (exit 2)" grep -qx "second=2" "$TMP/waiter.out"
# The bound is the daemon's clock, not the test's: the daemon's own events, in order, say the
# program's allocation waited for all its GPUs before it was refused, however slow this machine.
gang_events() { # prints the types and reasons of the gang decisions, in order, one a line
    api GET '/v1/events?since=0' | cut -d' ' -f2- | python3 -c '
import json, sys
for e in json.load(sys.stdin)["events"]:
    if e.get("reason") in ("waits for all its GPUs",
                           "its GPUs were not all free within the bound (gang-wait-max)"):
        print(e["type"], e["reason"])'
}
gang_events >"$TMP/gang.events"
check "the program's first allocation waited for all its GPUs (a suspend event)" \
    grep -qx "suspend waits for all its GPUs" "$TMP/gang.events"
check "... then was refused for the bound (a reject event after it), the next at once" \
    python3 -c '
import sys
lines = open(sys.argv[1]).read().splitlines()
first = lines.index("suspend waits for all its GPUs")
rejects = [i for i, l in enumerate(lines) if l.startswith("reject its GPUs were not all free")]
sys.exit(not (len(rejects) >= 2 and rejects[0] > first))' "$TMP/gang.events"
check "the daemon logged why, with the bound" \
    grep -q "container .*: its 2 GPUs did not all have 1GiB free within 10 s (gang-wait-max): its waiting allocations are refused, it reserves nothing" "$DAEMON_LOG"
check "it held nothing on either GPU" test "$(devices)" = "$((1536 * MiB)) 0"
rc=0; wait "$waiter" || rc=$?
check "convgpu run ended normally (its command's status, not a signal)" test "$rc" -lt 128

# A gang with no process yet: given up at the bound, and not admitted when room comes.
out=$(api POST /v1/containers '{"name":"idle","devices":[0,1],"gpu_memory":"1GiB"}')
state=$(container_field idle state)
check "a second gang: created (201), queued (or already given up: $state)" \
    bash -c "[ '$(cut -d' ' -f1 <<<"$out")' = 201 ] && { [ '$state' = queued ] || [ '$state' = expired ]; }"
wait_for "it is given up at the bound" "$WAIT_S" prints expired container_field idle state
rm -f "$TMP/hold"
wait "$holder" || true
wait_for "the holder gone: GPU 0 free" "$WAIT_S" prints "0 0" devices
check "the given-up gang was not admitted when its GPUs had room: nothing reserved" \
    test "$(container_field idle state) $(devices)" = "expired 0 0"
out=$(api DELETE /v1/containers/idle)
check "a given-up gang can be removed" test "$(cut -d' ' -f1 <<<"$out")" = 200

# A gang that fits is admitted at once; the bound never touches it.
cg run --quiet --name fits --devices 0,1 --gpu-memory 1GiB -- \
    "$PROBE" gpus "$TMP/f" 500MiB 500MiB >"$TMP/fits.out" 2>&1 &
fits=$!
wait_for "a gang that fits runs" "$WAIT_S" test -e "$TMP/f"
check "... both allocations granted" \
    bash -c "grep -qx 'gpu 0 alloc rc=0' '$TMP/fits.out' && grep -qx 'gpu 1 alloc rc=0' '$TMP/fits.out'"
check "... running, reserving its limit on both GPUs" \
    test "$(container_field fits state) $(devices)" = "running $((1024 * MiB)) $((1024 * MiB))"
rm -f "$TMP/f"
rc=0; wait "$fits" || rc=$?
check "... and exits 0" test "$rc" = 0
finish

# test_swap.sh — the interposer's swap mechanism with real processes (docs/SWAP.md): a round trip
# keeps every byte (threads, streams with queued kernels, a forked child), threads that keep
# launching and copying only wait, the device and the slot give back exactly what moved; a process killed
# while swapped out leaves nothing behind (container use 0, NVML shows none of it); the daemon
# ends a move on the processes' SWAPPED notices (its fallback poll set to an hour). The probe
# gives the orders itself through its ledger, as the daemon will (ledger.h, "Swap").
. "$(dirname "$0")/lib.sh"
need_emulator
export CONVGPU_EMU_CONTEXT=2MiB
# The daemon's fallback poll of a moving container's reports set to an hour: every move below
# ends on the processes' SWAPPED notices, or the waits for it time out.
export CONVGPUD_TEST_SWAP_POLL_MS=3600000
start_daemon --emulate 2GiB --swap yes
SWAP_PROBE=${IP_SWAP_PROBE:?}
export SWAP_PROBE R="$TMP/release" OUT="$TMP/hold.out" CLI="$BUILD/bin/convgpu" RUNDIR WAIT_S

expect_rc 0 "round trip: data, threads, streams, fork, launches wait, accounts" \
    run_in 1GiB "$SWAP_PROBE" roundtrip
grep -q '^ok moved=37748736$' "$TMP/out" && pass "moved exactly the 36 MiB charged" \
    || { fail "moved the wrong amount"; sed 's/^/    | /' "$TMP/out"; }

expect_rc 0 "killed while swapped out: nothing left behind" cg run --name swapkill --gpu-memory 1GiB -- sh -c '
    "$SWAP_PROBE" hold "$R" >"$OUT" & p=$!
    t=$(( $(date +%s) + WAIT_S ))
    until grep -q "^out " "$OUT"; do [ "$(date +%s)" -lt $t ] || { echo "never swapped out"; exit 1; }; sleep 0.02; done
    grep -q "^out bytes=12582912 nvml=2097152$" "$OUT" || { echo "while out: $(cat "$OUT")"; exit 1; }
    kill -KILL $p; wait $p
    used() { "$CLI" --runtime-dir "$RUNDIR" inspect swapkill | python3 -c "import json,sys; print(json.load(sys.stdin)[\"used\"])"; }
    until [ "$(used)" = 0 ]; do [ "$(date +%s)" -lt $t ] || { echo "its use never returned"; exit 1; }; sleep 0.02; done'
# Through the daemon: convgpu swap / unswap, the state in inspect, the core's account.
W="$TMP/wait.out"
cg run --name swapcli --gpu-memory 1GiB -- "$SWAP_PROBE" wait "$R.2" >"$W" 2>&1 & wp=$!
wait_for "the probe's allocations" "$WAIT_S" grep -q '^ready$' "$W" || fail "probe never ready"
f() { container_field swapcli "$1"; }
swap_is() { test "$(f swap)" = "$1"; }
before_used=$(f used)
# While it moves, nothing here asks the daemon anything (a request would run its poll): the
# daemon's log says when and how the move ended.
SID=$(f id) # the daemon's log names containers by id
moved() { grep "container $SID: swapped $1, " "$DAEMON_LOG" | tail -n 1; }
on_notice() { moved "$1" | grep -q "on its processes' notices"; }
expect_rc 0 "convgpu swap" cg swap swapcli
wait_for "the daemon's log: swapped out" "$WAIT_S" grep -q "container $SID: swapped out, " "$DAEMON_LOG"
check "the move out ended on the processes' notice ($(moved out))" \
    on_notice out
wait_for "swapped out" "$WAIT_S" swap_is out && pass "inspect: swap out" || fail "never out"
check "state swapped" test "$(f state)" = swapped
check "swapped_bytes = the 12 MiB charged" test "$(f swapped_bytes)" = 12582912
check "use dropped by 12 MiB ($before_used -> $(f used))" test $(( before_used - $(f used) )) = 12582912
check "the core's account is what is left on the device ($(f committed))" \
    test "$(f committed)" = "$(f used)"
metric() { api GET /metrics | awk -v m="$1" 'index($0, m "{") == 1 && /name="swapcli"/ { print $NF }'; }
check "metrics: swapped 1, 12 MiB" test "$(metric convgpu_container_swapped)" = 1 -a \
    "$(metric convgpu_container_swapped_bytes)" = 12582912
expect_rc 1 "a second swap-out is refused" cg swap swapcli
# The daemon killed while the container is out, and started again: it is still out, and comes
# back in on the order (the processes reconnect to charge their memory again).
stop_daemon_hard
start_daemon --emulate 2GiB --swap yes
wait_for "restored out" "$WAIT_S" swap_is out && pass "after a daemon restart: still out" \
    || fail "after a daemon restart: swap is $(f swap)"
expect_rc 0 "convgpu unswap" cg unswap swapcli
wait_for "the daemon's log: swapped in" "$WAIT_S" grep -q "container $SID: swapped in, " "$DAEMON_LOG"
check "the move in ended on the processes' notice ($(moved in))" \
    on_notice in
wait_for "swapped in" "$WAIT_S" swap_is in && pass "inspect: swap in" || fail "never in"
check "state running" test "$(f state)" = running
touch "$R.2"
rc=0; wait $wp || rc=$?
check "every byte back after swap and unswap through the daemon (rc $rc)" test "$rc" = 0 -a "$(tail -n1 "$W")" = ok
finish

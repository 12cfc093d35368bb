# test_swap.sh — the interposer's swap mechanism with real processes (docs/SWAP.md): a round trip
# keeps every byte (threads, streams with queued kernels, a forked child), threads that keep
# launching and copying only wait, the device and the slot give back exactly what moved; a process killed
# while swapped out leaves nothing behind (container use 0, NVML shows none of it). The probe
# gives the orders itself through its ledger, as the daemon will (ledger.h, "Swap").
. "$(dirname "$0")/lib.sh"
need_emulator
export CONVGPU_EMU_CONTEXT=2MiB
start_daemon --emulate 2GiB --swap yes
SWAP_PROBE=${IP_SWAP_PROBE:?}
export SWAP_PROBE R="$TMP/release" OUT="$TMP/hold.out" CLI="$BUILD/bin/convgpu" RUNDIR WAIT_S

expect_rc 0 "round trip: data, threads, streams, fork, launches wait, accounts" \
    run_in 1GiB "$SWAP_PROBE" roundtrip
grep -q '^ok moved=27262976$' "$TMP/out" && pass "moved exactly the 26 MiB charged" \
    || { fail "moved the wrong amount"; sed 's/^/    | /' "$TMP/out"; }

expect_rc 0 "killed while swapped out: nothing left behind" cg run --name swapkill --gpu-memory 1GiB -- sh -c '
    "$SWAP_PROBE" hold "$R" >"$OUT" & p=$!
    t=$(( $(date +%s) + WAIT_S ))
    until grep -q "^out " "$OUT"; do [ "$(date +%s)" -lt $t ] || { echo "never swapped out"; exit 1; }; sleep 0.02; done
    grep -q "^out bytes=12582912 nvml=2097152$" "$OUT" || { echo "while out: $(cat "$OUT")"; exit 1; }
    kill -KILL $p; wait $p
    used() { "$CLI" --runtime-dir "$RUNDIR" inspect swapkill | python3 -c "import json,sys; print(json.load(sys.stdin)[\"used\"])"; }
    until [ "$(used)" = 0 ]; do [ "$(date +%s)" -lt $t ] || { echo "its use never returned"; exit 1; }; sleep 0.02; done'
finish

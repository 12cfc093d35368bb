# test_swap_host.sh — host copies kept between round trips (src/interpose/swap.c, the spares;
# docs/SWAP.md, "Host memory between round trips"): after a swap-in each host copy stays, lazily
# freed (MADV_FREE), and the allocation's next swap-out writes into it instead of new memory.
# swap_probe rounds: three round trips of six allocations whose every byte a kernel changes
# between two, each byte checked after every swap-in.
#   1. as shipped (CONVGPU_SWAP_PIN=keep, the default): every round trip exact; the first swap-out goes into new memory, the next two
#      wholly into the kept copies (the interposer's log says how much);
#   2. the kernel's reclaim (CONVGPU_SWAP_KEEP_HOST=test-reclaim drops every kept page at once,
#      so it reads as zero, as a reclaimed one does): still exact;
#   3. CONVGPU_SWAP_KEEP_HOST=0: nothing kept, still exact;
#   4. a malformed setting: named in a warning, the default kept;
#   5. CONVGPU_SWAP_PIN=1: each host copy page-locked for its copy (cuMemHostRegister) and
#      unlocked after it (otherwise the next round's lock of the same kept copy would fail):
#      every byte of both directions in all three round trips; still exact;
#   6. CONVGPU_SWAP_PIN=keep: each host copy locked at its first copy and kept locked, spare
#      included (a second lock of the same range would be refused and counted as not locked):
#      every copy of all three round trips locked, exact, and every lock undone when the
#      allocations are freed (no warning that one could not be);
#   7. CONVGPU_SWAP_PIN=test-fail (every lock refused): copied from pageable memory, exact;
#      a malformed CONVGPU_SWAP_PIN: named in a warning, the default (kept locked);
#   8. the pin budget (docs/SWAP.md, "Page-locked copies"): with --swap-limit 1GiB the copies
#      kept locked after a swap-in are all of them; under a daemon with --swap-limit 12MiB at
#      most 12 MiB stay locked (the rest kept pageable), and every round trip is still exact.
. "$(dirname "$0")/lib.sh"
need_emulator
export CONVGPU_EMU_CONTEXT=2MiB
start_daemon --emulate 2GiB --swap yes
SWAP_PROBE=${IP_SWAP_PROBE:?}
export CONVGPU_LOG=info
MOVED=$(( (4 + 2 + 6 + 2 + 8 + 2) << 20 )) # the six allocations, each in whole 2 MiB granules

spares() { # spares: the "into host memory kept" figure of each swap-out in $TMP/out, in order
    sed -n 's/.*swapped out [0-9]* bytes (\([0-9]*\) into host memory kept since the last swap-in).*/\1/p' \
        "$TMP/out" | tr '\n' ' '
}

pinned() { # pinned out|in [WHY]: the "page-locked WHY" figure of each swap-out or swap-in
    local why=${2:-for the copy}
    case $1 in
    out) sed -n "s/.*swapped out [0-9]* bytes (.*); \([0-9]*\) page-locked $why.*/\1/p" "$TMP/out" ;;
    in) sed -n "s/.*swapped in [0-9]* bytes; \([0-9]*\) page-locked $why.*/\1/p" "$TMP/out" ;;
    esac | tr '\n' ' '
}

malformed() { # malformed NAME VALUE: two round trips with the setting NAME=VALUE: exact, warned
    export "$1=$2"
    expect_rc 0 "a malformed $1: still exact" run_in 1GiB "$SWAP_PROBE" rounds 2
    unset "$1"
    check "a malformed $1: a warning naming it" grep -q "ignoring $1=$2" "$TMP/out"
}

expect_rc 0 "three round trips, every byte checked after each" run_in 1GiB "$SWAP_PROBE" rounds 3
check "moved the $MOVED bytes charged each time" grep -q "^ok rounds=3 moved=$MOVED\$" "$TMP/out"
check "the first swap-out into new memory, the next two into the kept copies ($(spares))" \
    test "$(spares)" = "0 $MOVED $MOVED "

CONVGPU_SWAP_KEEP_HOST=test-reclaim expect_rc 0 "kept copies reclaimed by the kernel: still exact" \
    run_in 1GiB "$SWAP_PROBE" rounds 3
check "reclaimed: the kept mappings were still used ($(spares))" \
    test "$(spares)" = "0 $MOVED $MOVED "

CONVGPU_SWAP_KEEP_HOST=0 expect_rc 0 "CONVGPU_SWAP_KEEP_HOST=0: still exact" \
    run_in 1GiB "$SWAP_PROBE" rounds 2
check "CONVGPU_SWAP_KEEP_HOST=0: every swap-out into new memory ($(spares))" \
    test "$(spares)" = "0 0 "

malformed CONVGPU_SWAP_KEEP_HOST bogus
check "malformed CONVGPU_SWAP_KEEP_HOST: the default (kept) ($(spares))" test "$(spares)" = "0 $MOVED "

locked_rounds() { # locked_rounds VALUE WHY: three round trips with CONVGPU_SWAP_PIN=VALUE, every
    # copy of both directions counted as "page-locked WHY", exact, the kept copies still used
    CONVGPU_SWAP_PIN=$1 expect_rc 0 "CONVGPU_SWAP_PIN=$1: three round trips, every byte checked" \
        run_in 1GiB "$SWAP_PROBE" rounds 3
    check "CONVGPU_SWAP_PIN=$1: every swap-out's copy page-locked ($(pinned out "$2"))" \
        test "$(pinned out "$2")" = "$MOVED $MOVED $MOVED "
    check "CONVGPU_SWAP_PIN=$1: every swap-in's copy page-locked ($(pinned in "$2"))" \
        test "$(pinned in "$2")" = "$MOVED $MOVED $MOVED "
    check "CONVGPU_SWAP_PIN=$1: the kept copies still used ($(spares))" \
        test "$(spares)" = "0 $MOVED $MOVED "
}
locked_rounds 1 "for the copy"
locked_rounds keep "(kept locked)"
check "CONVGPU_SWAP_PIN=keep: every lock undone at the frees" \
    bash -c "! grep -q 'could not be unlocked' '$TMP/out'"

CONVGPU_SWAP_PIN=test-fail expect_rc 0 "every page lock refused: still exact" \
    run_in 1GiB "$SWAP_PROBE" rounds 2
check "refused locks: nothing page-locked ($(pinned out)/$(pinned in))" \
    test "$(pinned out)/$(pinned in)" = "0 0 /0 0 "

malformed CONVGPU_SWAP_PIN yes
check "malformed CONVGPU_SWAP_PIN: the default, kept locked ($(pinned out '(kept locked)'))" \
    test "$(pinned out '(kept locked)')" = "$MOVED $MOVED "

kept_locked() { # the "the container keeps N page-locked" figure of each swap-in
    sed -n 's/.*swapped in .*the container keeps \([0-9]*\) page-locked (pin budget \([0-9]*\)).*/\1:\2/p' \
        "$TMP/out" | tr '\n' ' '
}
stop_daemon_hard
start_daemon --emulate 2GiB --swap yes --swap-limit 1GiB
expect_rc 0 "swap limit 1GiB: three round trips, exact" run_in 1GiB "$SWAP_PROBE" rounds 3
check "swap limit 1GiB: every copy kept locked after each swap-in ($(kept_locked))" \
    test "$(kept_locked)" = "$MOVED:1073741824 $MOVED:1073741824 $MOVED:1073741824 "
stop_daemon_hard
start_daemon --emulate 2GiB --swap yes --swap-limit 12MiB
expect_rc 0 "swap limit 12MiB: three round trips, exact" run_in 1GiB "$SWAP_PROBE" rounds 3
within=1
for kb in $(kept_locked); do
    k=${kb%%:*} b=${kb##*:}
    [ "$b" -eq $((12 << 20)) ] && [ "$k" -le "$b" ] && [ "$k" -gt 0 ] || within=0
done
check "swap limit 12MiB: at most 12 MiB kept locked after each swap-in ($(kept_locked))" \
    test "$within" = 1 -a -n "$(kept_locked)"
finish

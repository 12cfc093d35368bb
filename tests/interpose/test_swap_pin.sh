# test_swap_pin.sh — page-locked host copies kept between moves are bounded by --swap-limit and
# released when swap needs the budget (issue 38 item 6; docs/SWAP.md "Page-locked copies").
# Two containers that swap, each of limit 100 MiB, under --swap-limit 160MiB: each may keep 80
# MiB locked. A's 64 MiB go out and come back (convgpu swap / unswap): its copy stays locked
# (pinned_bytes 64 MiB). Then B's 64 MiB are swapped out: the room left is 96 MiB, A's budget
# falls to 48 MiB, and A's process, woken, unlocks its copy (pinned_bytes 0). B comes back, the budget grows again; every byte of both is checked.
. "$(dirname "$0")/lib.sh"
need_emulator
export CONVGPU_EMU_CONTEXT=2MiB
SWAP_PROBE=${IP_SWAP_PROBE:?}
MIB=1048576
f() { container_field "$1" "$2"; }
is() { test "$(f "$1" "$2")" = "$3"; }

start_daemon --emulate 1GiB --swap yes --swap-limit 160MiB
for n in a b; do
    cg run --name "$n" --gpu-memory 100MiB -- "$SWAP_PROBE" big "$TMP/$n.go" 64 >"$TMP/$n.out" 2>&1 &
    eval "P_$n=\$!"
    wait_for "$n ready" "$WAIT_S" grep -q '^ready$' "$TMP/$n.out" || fail "$n never ready"
done
check "each may keep 80 MiB locked ($(f a pin_budget), $(f b pin_budget))" \
    test "$(f a pin_budget)" -eq $((80 * MIB)) -a "$(f b pin_budget)" -eq $((80 * MIB))
check "nothing locked before a move ($(f a pinned_bytes))" test "$(f a pinned_bytes)" -eq 0
expect_rc 0 "convgpu swap a" cg swap a
wait_for "a out" "$WAIT_S" is a swap out || fail "a is $(f a swap)"
expect_rc 0 "convgpu unswap a" cg unswap a
wait_for "a in" "$WAIT_S" is a swap in || fail "a is $(f a swap)"
check "a keeps its 64 MiB copy locked ($(f a pinned_bytes))" test "$(f a pinned_bytes)" -eq $((64 * MIB))

expect_rc 0 "convgpu swap b" cg swap b
wait_for "b out" "$WAIT_S" is b swap out || fail "b is $(f b swap)"
wait_for "a's budget shrank to its half of what is left" "$WAIT_S" is a pin_budget $((48 * MIB)) ||
    fail "a's budget is $(f a pin_budget)"
wait_for "a's locked copy released" "$WAIT_S" is a pinned_bytes 0 ||
    fail "a still keeps $(f a pinned_bytes) locked"
expect_rc 0 "convgpu unswap b" cg unswap b
wait_for "b in" "$WAIT_S" is b swap in || fail "b is $(f b swap)"
wait_for "a's budget back to 80 MiB" "$WAIT_S" is a pin_budget $((80 * MIB)) ||
    fail "a's budget is $(f a pin_budget)"
for n in a b; do
    touch "$TMP/$n.go"
    rc=0; eval "wait \$P_$n" || rc=$?
    check "$n: every byte came back (rc $rc)" test "$rc" = 0 -a "$(tail -n1 "$TMP/$n.out")" = ok
done
finish

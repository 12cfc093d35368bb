# test_swap_cache.sh — the reservation cache of a container that may swap (src/interpose/swap.c,
# docs/SWAP.md "Costs"): a freed range serves the next allocation of its size, also after a swap
# round trip, with every byte intact; the cache's bounds (count and bytes) hold; threads that
# allocate and free at once never get one range twice; a forked child never takes its parent's
# ranges; turned off (CONVGPU_SWAP_RESERVE_CACHE=0) nothing is kept. The interposer logs each
# range it keeps, reuses and gives back at level debug; the checks read those lines.
# `test_swap_cache.sh fork` runs the fork case alone (not under TSan: CMakeLists.txt says why).
. "$(dirname "$0")/lib.sh"
need_emulator
export CONVGPU_EMU_CONTEXT=2MiB
start_daemon --emulate 2GiB --swap yes
PROBE_C=${IP_SWAP_CACHE_PROBE:?}
export CONVGPU_LOG=debug
# The reservation cache alone: memory kept whole (test_swap_keep.sh) would take every free first.
export CONVGPU_SWAP_KEEP_FREED=0

lines() { grep -c "$1" "$TMP/out" || true; } # lines MATCHING in the last run's output

if [ "${1:-}" = fork ]; then
    expect_rc 0 "fork: the child allocates on its own" run_in 1GiB "$PROBE_C" fork
    kid=$(sed -n 's/^child \([0-9]*\)$/\1/p' "$TMP/out")
    check "the child reused none of its parent's ranges" \
        test -n "$kid" -a "$(lines "\[$kid\] swap: reservation .* reused")" = 0
    check "the parent reused its own after the fork" test "$(lines ' reused,')" = 1
    finish
    exit
fi

expect_rc 0 "reuse: same address, round trip keeps every byte, reused again after it" \
    run_in 1GiB "$PROBE_C" reuse
check "two ranges reused" test "$(lines 'reservation .* (4194304 bytes) reused')" = 2

CONVGPU_SWAP_RESERVE_CACHE=0 expect_rc 0 "reuse with the cache off: still correct" \
    run_in 1GiB "$PROBE_C" reuse
check "cache off: nothing kept or reused" \
    test "$(lines 'reused\| kept,')" = 0 -a "$(lines 'given back')" = 4

# Bounds: 4 ranges, 10 MiB. Six 2 MiB allocations freed: 4 kept, 2 given back; made again:
# 4 reused; two 4 MiB ones push 2 MiB ones out by bytes; 12 MiB is over the bytes alone.
CONVGPU_SWAP_RESERVE_CACHE=4,10 expect_rc 0 "bound: allocations freed past the bounds" \
    run_in 1GiB "$PROBE_C" bound
most() { sed -n "s/.* kept, \([0-9]*\) cached (\([0-9]*\) bytes)/\\$1/p" "$TMP/out" | sort -n | tail -n 1; }
check "never more than 4 ranges cached, and 4 reached ($(most 1))" test "$(most 1)" = 4
check "never more than 10 MiB cached, and 10 MiB reached ($(most 2))" test "$(most 2)" = 10485760
check "the second round reused 4 of its 6 ranges" \
    test "$(lines 'reservation .* (2097152 bytes) reused')" = 4
check "12 MiB, over the bytes alone, was given back and never kept" \
    test "$(lines '(12582912 bytes) given back')" = 1 -a "$(lines '(12582912 bytes) kept')" = 0
CONVGPU_SWAP_RESERVE_CACHE=bogus expect_rc 0 "a malformed bound is refused, the defaults kept" \
    run_in 1GiB "$PROBE_C" bound
check "malformed bound: a warning" test "$(lines 'ignoring CONVGPU_SWAP_RESERVE_CACHE=bogus')" = 1
check "the defaults hold all 9 ranges, none given back ($(most 1))" \
    test "$(most 1)" = 9 -a "$(lines 'given back')" = 0

expect_rc 0 "stress: threads allocating and freeing, a round trip meanwhile, no range twice" \
    run_in 1GiB "$PROBE_C" stress
check "the threads reused ranges ($(lines ' reused,'))" test "$(lines ' reused,')" -gt 100

finish

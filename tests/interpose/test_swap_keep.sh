# test_swap_keep.sh — kept memory in a container that may swap (src/interpose/swap.c, "Kept
# memory"; docs/SWAP.md): a free keeps its memory mapped and charged for the next allocation of
# its size, and lets it go whenever anyone could want it.
#
# 1. One process (swap_cache_probe keep): reuse at the same address without a charge, the drop
#    on a miss, a swap-out that releases kept memory without moving it, the drop before the
#    primary context is released; cuMemGetInfo counts kept memory as free. Then threads that
#    allocate and free at once, with a swap round trip meanwhile (swap_cache_probe stress).
# 2. Two processes of one container at its limit: A allocates 600MiB and frees it (kept: the
#    container's use and `inspect`'s kept_bytes still show it); B then asks for 600MiB, which
#    only A's kept memory can give. B's request waits, the daemon wakes A's swap thread, A drops
#    what it keeps, and B is granted while A still lives.
# 3. A holder that never drops (stopped): the sibling's request is put to the core after the
#    daemon's bound and refused (the kept memory counts), not left waiting for ever.
# 4. CONVGPU_SWAP_KEEP_FREED=0: a free releases at once, as before kept memory existed.
. "$(dirname "$0")/lib.sh"
need_emulator
export CONVGPU_EMU_CONTEXT=2MiB
T=$TMP
start_daemon --emulate 2GiB --swap yes
PROBE_C=${IP_SWAP_CACHE_PROBE:?}
export CONVGPU_LOG=debug

expect_rc 0 "one process: reuse, the drop on a miss, on a swap-out and on a context release" \
    run_in 1GiB "$PROBE_C" keep
check "the reuse and the three drops are in the interposer's log" \
    test "$(grep -c 'kept 0x.* reused' "$TMP/out")" = 1 -a \
    "$(grep -c 'dropped: an allocation of another size' "$TMP/out")" = 1 -a \
    "$(grep -c 'dropped: swap-out' "$TMP/out")" = 1 -a \
    "$(grep -c 'dropped: the primary context is released' "$TMP/out")" = 1
# A malformed setting is named in a warning and changes nothing: memory is still kept (the probe
# checks the reuse and the drops).
CONVGPU_SWAP_KEEP_FREED=bogus expect_rc 0 "a malformed CONVGPU_SWAP_KEEP_FREED: the default kept" \
    run_in 1GiB "$PROBE_C" keep
check "malformed setting: a warning naming it" \
    grep -q "ignoring CONVGPU_SWAP_KEEP_FREED=bogus" "$TMP/out"

# Threads allocating and freeing two sizes at once, with a round trip under way: kept memory
# is reused many times and never handed to two live allocations (the probe tags and checks).
expect_rc 0 "threads: kept memory reused under contention, a round trip meanwhile" \
    run_in 1GiB "$PROBE_C" stress
check "the threads reused kept memory ($(grep -c 'kept 0x.* reused' "$TMP/out"))" \
    test "$(grep -c 'kept 0x.* reused' "$TMP/out")" -gt 100

cg create --gpu-memory 1GiB --name x >"$T/env.x" || fail "create x"
xenv() { env $(tail -n +2 "$T/env.x") "$@"; }
x_field() { cg inspect x | python3 -c "import json,sys; c=json.load(sys.stdin)
print(' '.join(str(c[k]) for k in sys.argv[1:]))" "$@"; }

xenv "$PROBE" release 600MiB "$T/a.held" "$T/a.freed" >"$T/a.out" 2>&1 &
PA=$!
wait_for "A holds 600MiB" "$WAIT_S" test -e "$T/a.held" || fail "A did not allocate"
rm -f "$T/a.held"
wait_for "A freed" "$WAIT_S" test -e "$T/a.freed" || fail "A did not free"
check "A's free succeeded" grep -q "release free rc=0" "$T/a.out"
check "A kept its 600MiB: the container still uses it" \
    prints "$(( (600 << 20) + (2 << 20) ))" x_field used
check "inspect shows the 600MiB kept" prints "$(( 600 << 20 ))" x_field kept_bytes

xenv "$PROBE" hold 600MiB "$T/b.held" >"$T/b.out" 2>&1 &
PB=$!
wait_for "B granted A's kept memory" "$WAIT_S" test -e "$T/b.held" || true
check "B got 600MiB while A, which kept them, still lives" test -e "$T/b.held"
check "the daemon woke A's swap thread" grep -q "keeps freed memory: waking it" "$DAEMON_LOG"
check "A dropped what it kept because a request waited" \
    grep -q "dropped: a request of the container waits" "$T/a.out"
check "x: B's 600MiB and two contexts in use, nothing kept" \
    prints "$(( (600 << 20) + 2 * (2 << 20) )) 0" x_field used kept_bytes
rm -f "$T/b.held" "$T/a.freed"
rc=0; wait "$PB" || rc=$?
check "B freed and exited 0 ($rc)" test "$rc" -eq 0
rc=0; wait "$PA" || rc=$?
check "A exited 0 ($rc)" test "$rc" -eq 0

# A holder that never drops (stopped here): the waiting request goes to the core after the
# daemon's bound (10 s), which counts the kept memory as use and refuses it. Nothing hangs.
xenv "$PROBE" release 600MiB "$T/d.held" "$T/d.freed" >"$T/d.out" 2>&1 &
PD=$!
wait_for "D holds 600MiB" "$WAIT_S" test -e "$T/d.held" || fail "D did not allocate"
rm -f "$T/d.held"
wait_for "D freed" "$WAIT_S" test -e "$T/d.freed" || fail "D did not free"
check "D kept its 600MiB" prints "$(( 600 << 20 ))" x_field kept_bytes
pkill -STOP -f "release 600MiB $T/d.held" || fail "cannot stop D"
rc=0; xenv "$PROBE" hold 600MiB "$T/e.held" >"$T/e.out" 2>&1 || rc=$?
check "E, waiting for memory a stopped process keeps, is refused once the bound passed ($rc)" \
    test "$rc" -eq 2
check "the daemon said why" grep -q "still keeps freed memory after 10 s" "$DAEMON_LOG"
# E took the slot B left: B's claim to keep memory went with B (the daemon clears it).
epid=$(sed -n 's/^convgpu: [a-z]*: \[\([0-9]*\)\].*/\1/p' "$T/e.out" | head -n 1)
check "E ($epid) never taken for a keeper through its slot's last owner" \
    test -n "$epid" -a "$(grep -c "a request waits and pid $epid keeps" "$DAEMON_LOG")" = 0
pkill -CONT -f "release 600MiB $T/d.held"
rm -f "$T/d.freed"
rc=0; wait "$PD" || rc=$?
check "D exited 0 ($rc)" test "$rc" -eq 0

CONVGPU_SWAP_KEEP_FREED=0 xenv "$PROBE" release 600MiB "$T/c.held" "$T/c.freed" \
    >"$T/c.out" 2>&1 &
PC=$!
wait_for "C holds 600MiB" "$WAIT_S" test -e "$T/c.held" || fail "C did not allocate"
rm -f "$T/c.held"
wait_for "C freed" "$WAIT_S" test -e "$T/c.freed" || fail "C did not free"
check "keeping off: the free gave the 600MiB back at once" \
    prints "$(( 2 << 20 )) 0" x_field used kept_bytes
rm -f "$T/c.freed"
rc=0; wait "$PC" || rc=$?
check "C exited 0 ($rc)" test "$rc" -eq 0
finish

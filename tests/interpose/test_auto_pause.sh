# test_auto_pause.sh — the scheduler's choice of back end in convgpud (issue 38 item 3,
# docs/SCHEDULING.md "Swap or checkpoint for a victim"), real processes on the emulated GPU with
# a 64 MiB context: a low-priority container holding 16 MiB beside its context is the victim of
# a high-priority request 38 MiB short; swap cannot free that (swap is off here, and its
# allocations are only 16 MiB), a checkpoint frees 80. With --auto-pause yes the daemon
# checkpoints it (state paused, NVML shows it gone), the request runs, and once it ends the
# victim comes back by itself with every byte, also across a daemon kill -9 while it is paused;
# with --auto-pause no the request just waits.
. "$(dirname "$0")/lib.sh"
need_emulator
export CONVGPU_EMU_CONTEXT=64MiB
SWAP_PROBE=${IP_SWAP_PROBE:?}
MIB=1048576
f() { container_field "$1" "$2"; }
is() { test "$(f "$1" state)" = "$2"; }
is_any() { local s; s=$(f "$1" state); test "$s" = "$2" -o "$s" = "$3"; }

round() { # round yes|no
    local auto=$1
    RUNDIR=$TMP/run-$auto
    start_daemon --emulate 256MiB --auto-pause "$auto"
    cg run --name a --gpu-memory 100MiB --priority 0 -- "$SWAP_PROBE" big "$TMP/a.go" 16 \
        >"$TMP/a.out" 2>&1 & pa=$!
    wait_for "a ready" "$WAIT_S" grep -q '^ready$' "$TMP/a.out" || fail "a never ready"
    used_a=$(f a used)
    check "[$auto] a uses 16 MiB + its 64 MiB context ($used_a)" test "$used_a" -eq $((80 * MIB))
    cg run --name b --priority 5 --gpu-memory 250MiB -- "$BUILD/bin/convgpu-sample" \
        --size 150MiB --hold-until "$TMP/b.go" --quiet >"$TMP/b.out" 2>&1 & pb=$!
    if [ "$auto" = yes ]; then
        wait_for "a checkpointed for b" "$WAIT_S" is a paused || fail "a is $(f a state)"
        check "a holds nothing on the device ($(f a used))" test "$(f a used)" -eq 0
        check "a's 80 MiB are off the device ($(f a paused_bytes))" \
            test "$(f a paused_bytes)" -eq $((80 * MIB))
        wait_for "b runs on a's memory" "$WAIT_S" is b running || fail "b is $(f b state)"
        # Why, from the events: the scheduler's victim (not an operator's order), and paused
        # (checkpointed) rather than swapped.
        victim_paused() { has_event swap-out a "swapped out for a waiting request" && has_event paused a; }
        check "the events say why: a is the scheduler's victim, checkpointed" victim_paused
        # kill -9 while a is the scheduler's pause: the restarted daemon keeps it off the device
        # and brings it back by itself once b is done (it was held by nobody).
        stop_daemon_hard
        start_daemon --emulate 256MiB --auto-pause yes --context-charge 64MiB # b holds the GPU: not measurable now
        wait_for "a restored paused" "$WAIT_S" is_any a paused resuming || fail "a is $(f a state)"
        check "a still holds nothing after the restart ($(f a used))" test "$(f a used)" -eq 0
        touch "$TMP/b.go"
        wait "$pb"; rc=$?
        check "b ran to the end (rc $rc)" test "$rc" = 0
        wait_for "a back by itself" "$WAIT_S" is a running || fail "a is $(f a state)"
        check "a charged once ($(f a used))" test "$(f a used)" -eq $((80 * MIB))
    else
        wait_for "b waits" "$WAIT_S" is b suspended || fail "b is $(f b state)"
        check "[no] a runs on, untouched ($(f a state))" is a running
        check "[no] no checkpoint" test "$(f a pauses)" = 0
        touch "$TMP/a.go"
        wait "$pa"; rc=$?
        check "[no] a every byte (rc $rc)" test "$rc" = 0 -a "$(tail -n1 "$TMP/a.out")" = ok
        wait_for "[no] b runs once a ends" "$WAIT_S" is b running || fail "b is $(f b state)"
        touch "$TMP/b.go"
        wait "$pb" || true
        stop_daemon_hard
        rm -f "$TMP/a.go" "$TMP/b.go"
        return
    fi
    touch "$TMP/a.go"
    wait "$pa"; rc=$?
    check "a: every byte came back (rc $rc)" test "$rc" = 0 -a "$(tail -n1 "$TMP/a.out")" = ok
    stop_daemon_hard
    rm -f "$TMP/a.go" "$TMP/b.go"
}

round no
round yes
finish

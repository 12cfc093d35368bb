# test_pause.sh — whole-container pause, resume and move through the driver's checkpoint API
# (issue 38, docs/PAUSE.md), real processes on the emulated GPU (two devices of one model, one
# of another):
#   - pause: the process is gone from NVML, the container holds nothing, a waiting container
#     gets the memory; resume waits until that memory is free again (reserved first), then
#     every byte is back and the container is charged once;
#   - move: refused onto another model (nothing changes); onto the same model the process runs
#     on device 1, NVML shows it there and nowhere else, every byte is back;
#   - restart safety: the daemon killed -9 while held after the checkpoint (before anything was
#     stored), after the restore (before the core was told), and while paused: it ends running,
#     running, and paused, charged once, every byte back;
#   - a driver without the API: 501 with the reason, or a swap-out with --pause-fallback swap.
. "$(dirname "$0")/lib.sh"
need_emulator
export CONVGPU_EMU_CONTEXT=2MiB
SWAP_PROBE=${IP_SWAP_PROBE:?}
MIB=1048576
DEVS=256MiB,256MiB,512MiB
f() { container_field "$1" "$2"; }
is() { test "$(f "$1" state)" = "$2"; }

# NVML's view (the emulated libnvidia-ml.so.1, as nvidia-smi would read it): bytes process PID
# uses on device DEV (0 when it is not listed).
nvml_proc() { # nvml_proc PID DEV
    LD_LIBRARY_PATH=$BUILD/lib/emu python3 - "$1" "$2" <<'EOF'
import ctypes, sys
pid, dev = int(sys.argv[1]), int(sys.argv[2])
n = ctypes.CDLL("libnvidia-ml.so.1")
class P(ctypes.Structure):
    _fields_ = [("pid", ctypes.c_uint), ("used", ctypes.c_ulonglong),
                ("gi", ctypes.c_uint), ("ci", ctypes.c_uint)]
assert n.nvmlInit_v2() == 0
h = ctypes.c_void_p()
assert n.nvmlDeviceGetHandleByIndex_v2(dev, ctypes.byref(h)) == 0
arr, cnt = (P * 64)(), ctypes.c_uint(64)
assert n.nvmlDeviceGetComputeRunningProcesses_v3(h, ctypes.byref(cnt), arr) == 0
print(sum(p.used for p in arr[:cnt.value] if p.pid == pid))
EOF
}
nvml_is() { test "$(nvml_proc "$1" "$2")" "$3" "$4"; } # nvml_is PID DEV OP VALUE
# NVML is read through python's ctypes, which cannot load a TSan-built NVML (the TSan runtime
# must be the process's first library): under TSan those checks are named and skipped; the
# plain and ASan runs make them.
if ldd "$BUILD/lib/emu/libnvidia-ml.so.1" 2>/dev/null | grep -q libtsan; then
    nvml_check() { echo "skip (TSan build): $1"; }
else
    nvml_check() { check "$@"; }
fi

probe_pid() { # the first process of container $1
    cg inspect "$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["process_list"][0]["pid"])'
}

start_probe() { # start_probe NAME DEVICE-ARGS... : a container holding 64 MiB of a pattern
    local name=$1; shift
    cg run --name "$name" --gpu-memory 100MiB "$@" -- "$SWAP_PROBE" big "$TMP/$name.go" 64 \
        >"$TMP/$name.out" 2>&1 &
    eval "PROBE_$name=\$!"
    wait_for "$name ready" "$WAIT_S" grep -q '^ready$' "$TMP/$name.out" || fail "$name never ready"
}

end_probe() { # end_probe NAME : releases it; it checks every byte
    local name=$1 rc=0 pid
    pid=$(eval echo "\$PROBE_$name")
    touch "$TMP/$name.go"
    wait "$pid" || rc=$?
    check "$name: every byte came back (rc $rc)" test "$rc" = 0 -a "$(tail -n1 "$TMP/$name.out")" = ok
}

# ---- pause, a waiter, resume ------------------------------------------------------------------
start_daemon --emulate "$DEVS" --placement first-fit
start_probe a --device 0
pid=$(probe_pid a)
used_in=$(f a used)
check "a uses 64 MiB + its context ($used_in)" test "$used_in" -eq $((66 * MIB))
nvml_check "NVML lists a's process on device 0" nvml_is "$pid" 0 -eq $((66 * MIB))
cg run --name b --device 0 --gpu-memory 250MiB -- "$BUILD/bin/convgpu-sample" --size 200MiB \
    --hold-until "$TMP/b.go" --quiet >"$TMP/b.out" 2>&1 & pb=$!
wait_for "b waits for a's memory" "$WAIT_S" is b suspended || fail "b is $(f b state)"
expect_rc 0 "convgpu pause a" cg pause a
check "a is paused" is a paused
check "a holds nothing (assigned $(f a assigned), used $(f a used))" \
    test "$(f a assigned)" -eq 0 -a "$(f a used)" -eq 0
check "a's limit stays" test "$(f a limit)" -eq $((100 * MIB))
check "a's 66 MiB are off the device ($(f a paused_bytes))" test "$(f a paused_bytes)" -eq $((66 * MIB))
nvml_check "NVML no longer lists a's process" nvml_is "$pid" 0 -eq 0
wait_for "b got a's memory and runs" "$WAIT_S" is b running || fail "b is $(f b state)"
expect_rc 1 "a second pause is refused" cg pause a
grep -q "is paused already" "$TMP/out" && pass "... saying why" || fail "... saying why: $(cat "$TMP/out")"
expect_rc 0 "convgpu resume a --no-wait" cg resume a --no-wait
check "a waits for its memory (resuming) while b holds it" is a resuming
nvml_check "NVML still does not list a" nvml_is "$pid" 0 -eq 0
touch "$TMP/b.go"
rc=0; wait "$pb" || rc=$?
check "b ran to its end (rc $rc)" test "$rc" = 0
wait_for "a back once b's memory was freed" "$WAIT_S" is a running || fail "a is $(f a state)"
check "a is charged once: used $(f a used) = $used_in" test "$(f a used)" -eq "$used_in"
nvml_check "NVML lists a's process again" nvml_is "$pid" 0 -eq $((66 * MIB))
end_probe a
ev=$(api GET /v1/events)
for what in '"paused"' '"resumed"'; do
    grep -q "$what" <<<"$ev" && pass "the events say $what" || fail "the events say $what: $ev"
done

# ---- move ---------------------------------------------------------------------------------------
start_probe m --device 0
pid=$(probe_pid m)
expect_rc 1 "a move onto another model is refused" cg move m --device 2
grep -q "restored only onto a GPU of the model" "$TMP/out" && pass "... saying why" ||
    fail "... saying why: $(cat "$TMP/out")"
check "... and m still runs on device 0" test "$(f m state)/$(f m device)" = running/0
expect_rc 0 "convgpu move m --device 1" cg move m --device 1
check "m runs on device 1" test "$(f m state)/$(f m device)" = running/1
nvml_check "NVML lists m's process on device 1" nvml_is "$pid" 1 -eq $((66 * MIB))
nvml_check "... and not on device 0" nvml_is "$pid" 0 -eq 0
check "m is charged once on device 1 ($(f m used))" test "$(f m used)" -eq $((66 * MIB))
end_probe m

# ---- the API's refusals -----------------------------------------------------------------------
r=$(api POST /v1/containers/nosuch/pause)
check "pause of no such container: 404" test "${r%% *}" = 404
start_probe r --device 0
r=$(api POST /v1/containers/r/move '{"device":9}')
check "move to no such device: 400 ($r)" test "${r%% *}" = 400
r=$(api POST /v1/containers/r/move '{"gpu":1}')
check "move with a bad body: 400" test "${r%% *}" = 400
r=$(api POST /v1/containers/r/resume)
check "resume of a running container: 409" test "${r%% *}" = 409
end_probe r
stop_daemon_hard

# ---- restart safety -----------------------------------------------------------------------------
killed_at() { # killed_at STEP NAME : the daemon held at STEP is killed -9 and started again
    wait_for "the daemon held at $1" "$WAIT_S" test -e "$TMP/held.$1" || fail "never held at $1"
    stop_daemon_hard
    start_daemon --emulate "$DEVS"
}

CONVGPUD_TEST_PAUSE_HOLD=checkpointed:$TMP/held.checkpointed start_daemon --emulate "$DEVS"
start_probe k1 --device 0
pid=$(probe_pid k1)
used_in=$(f k1 used)
cg pause k1 --no-wait >/dev/null
killed_at checkpointed
wait_for "k1 ends running" "$WAIT_S" is k1 running || fail "k1 is $(f k1 state)"
check "k1 charged once ($(f k1 used) = $used_in)" test "$(f k1 used)" -eq "$used_in"
nvml_check "NVML lists k1 again" nvml_is "$pid" 0 -eq "$used_in"
end_probe k1
stop_daemon_hard

CONVGPUD_TEST_PAUSE_HOLD=restored:$TMP/held.restored start_daemon --emulate "$DEVS"
start_probe k2 --device 0
pid=$(probe_pid k2)
used_in=$(f k2 used)
expect_rc 0 "k2 paused" cg pause k2
cg resume k2 --no-wait >/dev/null
killed_at restored
wait_for "k2 ends running" "$WAIT_S" is k2 running || fail "k2 is $(f k2 state)"
check "k2 charged once ($(f k2 used) = $used_in)" test "$(f k2 used)" -eq "$used_in"
nvml_check "NVML lists k2 once ($(nvml_proc "$pid" 0))" nvml_is "$pid" 0 -eq "$used_in"
end_probe k2

start_probe k3 --device 0
pid=$(probe_pid k3)
used_in=$(f k3 used)
expect_rc 0 "k3 paused" cg pause k3
stop_daemon_hard
start_daemon --emulate "$DEVS"
check "k3 is still paused after a kill -9" is k3 paused
check "k3 holds nothing (assigned $(f k3 assigned), used $(f k3 used))" \
    test "$(f k3 assigned)" -eq 0 -a "$(f k3 used)" -eq 0
nvml_check "NVML does not list k3" nvml_is "$pid" 0 -eq 0
expect_rc 0 "k3 resumed" cg resume k3
check "k3 charged once ($(f k3 used) = $used_in)" test "$(f k3 used)" -eq "$used_in"
end_probe k3
stop_daemon_hard

# ---- a driver without the API -----------------------------------------------------------------
printf '#!/bin/sh\necho "convgpu-checkpoint: the driver has no cuCheckpointProcessLock" >&2\nexit 3\n' \
    >"$TMP/old-driver"
chmod +x "$TMP/old-driver"
start_daemon --emulate "$DEVS" --checkpoint-helper "$TMP/old-driver"
start_probe n --device 0
r=$(api POST /v1/containers/n/pause)
check "no checkpoint API: 501" test "${r%% *}" = 501
grep -q "has no cuCheckpointProcessLock" <<<"$r" && pass "... with the driver's reason" ||
    fail "... with the driver's reason: $r"
check "... and n still runs" is n running
end_probe n
stop_daemon_hard
start_daemon --emulate "$DEVS" --checkpoint-helper "$TMP/old-driver" --pause-fallback swap --swap yes
start_probe s --device 0
expect_rc 0 "with --pause-fallback swap, convgpu pause swaps it out" cg pause s
wait_for "s swapped out" "$WAIT_S" is s swapped || fail "s is $(f s state)"
expect_rc 0 "convgpu unswap s" cg unswap s
wait_for "s back in" "$WAIT_S" is s running || fail "s is $(f s state)"
end_probe s
finish

#!/usr/bin/env bash
# test_tenant_files.sh — a tenant cannot reach root, stop the daemon or take from another tenant
# through anything it can write (issue #15, items 1-5 and 9). Real daemons on the emulated GPU;
# the attacks run as unprivileged uids (setpriv): 1101 (X, also in the control group) and 1102
# (Y). ledger_attack.c does what a tenant's process can do with the ledger it is handed.
#
#   A. unsafe runtime directories are refused (foreign owner, mode 0777, an ancestor others can
#      write) before anything is created in them;
#   B. symlink race: X creates and deletes a container through the control socket 100 times
#      while swapping its socket for a symlink to a root-owned canary (the old daemon chowned
#      the canary to X within 1-71 cycles);
#   C. the old layout (a container directory owned by its user, holding a FIFO named ledger
#      and a symlink to the canary) and a FIFO in the daemon's records at restart: the daemon
#      starts, the canary stays root's;
#   D. the ledger fd cannot be shrunk or grown (the old daemon died of SIGBUS at the next ALLOC
#      and at every restart);
#   E. forged numbers (header assignment, own quota) and forged slots (another tenant's GPU
#      process, a root process with start time 0 and with its real one) survive no restart:
#      assignments and uses come back as they were, nobody is adopted, and the watchdog in kill
#      mode kills none of them;
#   F. a runtime directory on a full tmpfs: creation fails with an error, the daemon serves on.
# Set LEDGER_ATTACK/PROTO to run the attacks against another build (e.g. the commit before).
. "$(dirname "$0")/lib.sh"
export CONVGPU_EMU_CONTEXT=2MiB
ATTACK=${LEDGER_ATTACK:-$BUILD/bin/ledger_attack}
MiB=$((1024 * 1024))
UX=1101
UY=1102
GROUP=convgpu-sectest
CANARY=$TMP/canary
SMALL=$TMP/small
: >"$CANARY"; chmod 0600 "$CANARY"
getent group "$GROUP" >/dev/null || groupadd -r "$GROUP"
GID=$(getent group "$GROUP" | cut -d: -f3)
extra_cleanup() {
    mountpoint -q "$SMALL" 2>/dev/null && umount -l "$SMALL"
    groupdel "$GROUP" 2>/dev/null || true
}
trap 'extra_cleanup; cleanup' EXIT
owner() { stat -c %u "$1"; }
as_member() { local u=$1; shift; setpriv --reuid="$u" --regid="$u" --groups="$GID" "$@"; }

# ---- A. unsafe runtime directories -------------------------------------------------------------
refused() { # refused DIR : the daemon exits 1 with a clear message and creates nothing in DIR
    local rc=0
    timeout 60 "$BUILD/bin/convgpud" --runtime-dir "$1" --emulate 1GiB --foreground >"$TMP/refuse.out" 2>&1 || rc=$?
    [ "$rc" = 1 ] && grep -q "unsafe runtime directory" "$TMP/refuse.out" && [ ! -e "$1/containers" ]
}
mkdir -p "$TMP/foreign" "$TMP/open" "$TMP/wide"
chown $UX:$UX "$TMP/foreign"; chmod 0777 "$TMP/open" "$TMP/wide"
check "a runtime directory owned by another user is refused" refused "$TMP/foreign"
check "... and the message names the owner" grep -q "owner uid $UX" "$TMP/refuse.out"
check "a runtime directory of mode 0777 is refused" refused "$TMP/open"
check "a runtime directory below a directory others can write is refused" refused "$TMP/wide/run"
check "... and is not created there" test ! -e "$TMP/wide/run"

# ---- B. the symlink race -------------------------------------------------------------------------
start_daemon --emulate 1GiB --control-group "$GROUP" --watchdog-interval 0
check "the control socket is the group's" test "$(stat -c %G "$RUNDIR/control.sock")" = "$GROUP"
RACEDIR=$RUNDIR/containers/race
as_member $UX bash -c '
    n=0 ok=0
    while [ ! -e "$1/stop.swap" ]; do
        n=$((n + 1))
        ln -sfn "$2" "$3/l" 2>/dev/null && mv -fT "$3/l" "$3/container.sock" 2>/dev/null && ok=$((ok + 1))
    done
    echo "swaps=$n planted=$ok"' _ "$TMP" "$CANARY" "$RACEDIR" >"$TMP/swap.out" &
SWAPPER=$!
BG_PIDS+=("$SWAPPER")
cycles=0
for i in $(seq 1 100); do
    as_member $UX curl -s -o /dev/null --unix-socket "$RUNDIR/control.sock" -X POST \
        -H 'Content-Type: application/json' --data '{"gpu_memory":"8MiB","id":"race"}' http://convgpu/v1/containers
    as_member $UX curl -s -o /dev/null --unix-socket "$RUNDIR/control.sock" -X DELETE http://convgpu/v1/containers/race
    cycles=$i
    [ "$(owner "$CANARY")" = 0 ] || break
done
touch "$TMP/stop.swap"
wait "$SWAPPER" 2>/dev/null || true
check "after $cycles create/delete cycles racing symlink swaps, the canary is still root's" test "$(owner "$CANARY")" = 0
check "the swaps ran ($(cat "$TMP/swap.out"))" grep -q "swaps=[1-9]" "$TMP/swap.out"
check "not one symlink could be planted in a container's directory" grep -q "planted=0" "$TMP/swap.out"
check "the daemon is still up" daemon_alive

# ---- D. the ledger cannot be resized ------------------------------------------------------------
# X is created first (so a restarted daemon restores it first) and its limit raised once Y holds
# the rest of the device: X is assigned less than its limit, and what it
# forges below is an assignment it was never given (a raised limit is assigned as memory
# becomes free, not at once).
X=$(create_for x 256MiB $UX)
Y=$(create_for y 640MiB $UY)
api PUT "/v1/containers/$X/limit" '{"gpu_memory":"768MiB"}' >/dev/null
XS=$RUNDIR/containers/$X/container.sock
YS=$RUNDIR/containers/$Y/container.sock
Z=$(create_for z 32MiB $UY)
check "a container's directory is the daemon's, mode 0711" test "$(stat -c '%u %a' "$RUNDIR/containers/$X")" = "0 711"
check "its socket is the container user's, mode 0600" test "$(stat -c '%u %a' "$XS")" = "$UX 600"
check "X cannot create anything in its directory" bash -c "! setpriv --reuid=$UX --regid=$UX --clear-groups mkfifo '$RUNDIR/containers/$X/ledger' 2>/dev/null"
as_uid $UX "$ATTACK" "$XS" resize alloc $((4 * MiB)) >"$TMP/resize.out" 2>&1 || true
check "shrinking the ledger is refused (sealed)" grep -q "shrink=EPERM" "$TMP/resize.out"
check "growing it is refused" grep -q "grow=EPERM" "$TMP/resize.out"
check "allocating past its end is refused" grep -q "fallocate=EPERM" "$TMP/resize.out"
check "the next ALLOC is answered (granted)" grep -q "alloc_status=0" "$TMP/resize.out"
check "the daemon is still up" daemon_alive

# ---- E. forged numbers and forged slots, then a restart ---------------------------------------------
check "X is assigned less than its limit ($(snap "$X" | cut -d' ' -f1-2))" test "$(snap "$X" | cut -d' ' -f2)" -lt $((768 * MiB))
bg "$TMP/y.out" $UY "$ATTACK" "$YS" alloc $((400 * MiB)) hold "$TMP/stop.y"
YP=$BGPID
wait_for "Y's process holds 400MiB" 60 grep -q "alloc_status=0" "$TMP/y.out" || { echo "y.out: $(cat "$TMP/y.out")"; grep -i "pid\|alloc\|y" "$DAEMON_LOG" | tail -5; }
sleep_start() { awk '{print $22}' "/proc/$1/stat"; }
setsid sleep infinity </dev/null >/dev/null 2>&1 &
ROOTP=$!
BG_PIDS+=("$ROOTP")
bg "$TMP/x.out" $UX "$ATTACK" "$XS" alloc $((8 * MiB)) forge-header $((768 * MiB)) \
    forge-own $((768 * MiB / 4096)) forge-slot 5 "$YP" "$(sleep_start "$YP")" \
    forge-slot 6 "$ROOTP" 0 forge-slot 7 "$ROOTP" "$(sleep_start "$ROOTP")" hold "$TMP/stop.x"
XP=$BGPID
wait_for "X's process forged its ledger" 60 grep -q "holding=yes" "$TMP/x.out"
check "X's small ALLOC was granted" grep -q "alloc_status=0" "$TMP/x.out"
before_x=$(snap "$X"); before_y=$(snap "$Y")
dev_before=$(api GET /v1/devices | cut -d' ' -f2- | "$PY" -c 'import json,sys; d=json.load(sys.stdin)[0]; print(d["assigned"], d["used"])')
stop_daemon_hard
# The old layout, as a tenant could leave it: its own directory, a FIFO for a ledger, a symlink
# for a socket; and something that is not a record where the record of Y is.
OLD=$RUNDIR/containers/$X
chown $UX:$UX "$OLD"; chmod 0700 "$OLD"
rm -f "$OLD/ledger"; mkfifo "$OLD/ledger"; ln -sfn "$CANARY" "$OLD/container.sock.new"
rm -f "$RUNDIR/records/$Z"; mkfifo "$RUNDIR/records/$Z"
start_daemon --emulate 1GiB --control-group "$GROUP" --watchdog-interval 0.2 --watchdog-kill yes --watchdog-tolerance 8MiB
pass "the daemon restarted over a FIFO ledger, a FIFO record and a tenant-owned directory"
check "the canary is still root's" test "$(owner "$CANARY")" = 0
check "X's directory is the daemon's again" test "$(stat -c '%u %a' "$RUNDIR/containers/$X")" = "0 711"
after_x=$(snap "$X")
check "X's assignment and use are what the daemon granted ($before_x -> $after_x)" test "$after_x" = "$before_x"
check "X's process list has only X's own process" test "$(api GET "/v1/containers/$X" | cut -d' ' -f2- | "$PY" -c 'import json,sys; print([p["pid"] for p in json.load(sys.stdin)["process_list"]])')" = "[$XP]"
check "Y's assignment, use and process took no harm ($before_y -> $(snap "$Y"))" test "$(snap "$Y")" = "$before_y"
check "Z, whose record was a FIFO, is back (afresh)" test "$(api GET "/v1/containers/$Z" | cut -d' ' -f1)" = 200
dev_after=$(api GET /v1/devices | cut -d' ' -f2- | "$PY" -c 'import json,sys; d=json.load(sys.stdin)[0]; print(d["assigned"], d["used"])')
check "the device promises no more than it has (assigned, used: $dev_before -> $dev_after)" \
    "$PY" -c "import sys; a=int('$dev_after'.split()[0]); sys.exit(0 if a <= $((1024 * MiB)) else 1)"
# The watchdog in kill mode: a process using the GPU without the interposer is killed at its
# next check; once it is, the adopted strangers (if any) would have been judged too.
EMU_ENV=(env LD_LIBRARY_PATH="$BUILD/lib/emu" CONVGPU_EMU_STATE="$RUNDIR/emu/state" CONVGPU_EMU_DEVICES=1GiB)
"${EMU_ENV[@]}" "$BUILD/bin/convgpu-sample" --size 16MiB --touch 1MiB --hold --quiet &
BYPASS=$!
BG_PIDS+=("$BYPASS")
wait_for "the watchdog killed a process that bypasses the interposer" 60 bash -c "! kill -0 $BYPASS 2>/dev/null" \
    || fail "the watchdog never ran"
check "Y's GPU process, which X named in its ledger, is alive" kill -0 "$YP"
check "the root process X named (start time 0 and real) is alive" kill -0 "$ROOTP"
check "X's own process is alive (it is within its limit)" kill -0 "$XP"
as_uid $UY "$ATTACK" "$YS" alloc $((300 * MiB)) >"$TMP/y2.out" 2>&1 || true
check "a new process of Y asking past Y's limit is refused (OVER_LIMIT)" grep -q "alloc_status=1" "$TMP/y2.out"
touch "$TMP/stop.x" "$TMP/stop.y"
x_procs() { api GET "/v1/containers/$X" | cut -d' ' -f2- | "$PY" -c 'import json,sys; print(len(json.load(sys.stdin)["process_list"]))'; }
x_empty() { [ "$(x_procs)" = 0 ]; }
wait_for "X's process gone from X" 60 x_empty || fail "X's process stayed in its list"
check "X uses nothing once its process is gone" test "$(snap "$X" | cut -d' ' -f3)" = 0

# ---- F. a full runtime file system --------------------------------------------------------------
kill -TERM "$DAEMON_PID"; wait "$DAEMON_PID" 2>/dev/null || true; DAEMON_PID=
mkdir -p "$SMALL"
mount -t tmpfs -o size=4m,mode=0755 tmpfs "$SMALL"
RUNDIR=$SMALL/run
export CONVGPU_EMU_STATE=$RUNDIR/emu/state
start_daemon --emulate 1GiB --watchdog-interval 0
T1=$(create_for t1 64MiB $UX)
check "the tenant cannot write the runtime directory" bash -c "! setpriv --reuid=$UX --regid=$UX --clear-groups touch '$RUNDIR/x' '$RUNDIR/containers/x' '$RUNDIR/containers/$T1/x' 2>/dev/null"
dd if=/dev/zero of="$SMALL/fill" bs=64k 2>/dev/null || true
out=$(api POST /v1/containers '{"gpu_memory":"64MiB","name":"t2"}')
check "creating a container on a full file system fails with an error (${out%% *})" \
    bash -c "[ '${out%% *}' != 201 ] && grep -q error <<<'$out'"
check "the daemon is still up" daemon_alive
as_uid $UX "$ATTACK" "$RUNDIR/containers/$T1/container.sock" alloc $((4 * MiB)) >"$TMP/t1.out" 2>&1 || true
check "an existing container is served on the full file system" grep -q "alloc_status=0" "$TMP/t1.out"
rm -f "$SMALL/fill"
kill -TERM "$DAEMON_PID"; wait "$DAEMON_PID" 2>/dev/null || true; DAEMON_PID=
finish

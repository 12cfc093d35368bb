#!/usr/bin/env bash
# test_isolation.sh — a process of container X cannot reach container Y, the control socket, or
# more memory than X's limit. Real daemon on the emulated GPU, real processes run as the
# containers' own uids (setpriv), a real client of the wire protocol (proto_client.c).
#
# X (uid 1101, 96MiB) and Y (uid 1102, 160MiB; 2MiB context charge) are created through the control API for those
# uids, the way the OCI shim does. Checked:
#   1. reach: X's process connects to X's socket (control), but gets EACCES on Y's socket, cannot
#      list Y's directory (nor its own, nor create anything in it: they are the daemon's), finds
#      no ledger file to read (ledgers are memfds), and cannot connect to the control socket.
#   2. no way to raise a limit: the container protocol has no message for it. Every message a
#      client may not send (WELCOME, ALLOC_REPLY, ERROR, type 0, type 99, ALLOC or FREED before
#      HELLO, a second HELLO) gets the client disconnected and changes nothing: limit and
#      assignment of X and Y (API) are as before. An ALLOC beyond the limit is refused.
#   3. no claiming of others' accounts: HELLO with CG_HELLO_RECONNECT naming a slot/generation
#      held by another live pid of X, Y's slot/generation on X's socket, a stale generation and
#      out-of-range slots all get a fresh slot of X's own ledger, never the other's account;
#      ALLOC and FREED in X never change Y's numbers.
#   4. identity is never claimed: no message has a pid or container field (see
#      src/common/proto.h: HELLO carries only flags, slot, generation), so the daemon's only
#      source is SO_PEERCRED and the socket; the process list shows the real pid of the
#      connecting process (also when it is started through setpriv, a different pid from the
#      shell that asked), and the process lands in the container whose socket it used.
. "$(dirname "$0")/lib.sh"
export CONVGPU_EMU_CONTEXT=2MiB
start_daemon --emulate 512MiB
UX=1101
UY=1102
X=$(create_for x 96MiB $UX)
Y=$(create_for y 160MiB $UY)
XS=$RUNDIR/containers/$X/container.sock
YS=$RUNDIR/containers/$Y/container.sock
MiB=$((1024 * 1024))
O=$TMP/out
type_name() { case $1 in 2) echo WELCOME ;; 4) echo ALLOC_REPLY ;; 6) echo ERROR ;; *) echo unknown ;; esac; }
not_in() { ! grep -q "($2, " <<<"$(snap "$1")"; }

# ---- 1. reach ---------------------------------------------------------------------------------
as_uid $UX "$CLIENT" "$XS" hello recv >"$O.own" 2>&1 || true
check "X's process reaches its own socket and is welcomed" grep -q "recv=WELCOME" "$O.own"
check "X's process gets X's ledger (limit 96MiB)" grep -q "ledger_limit=$((96 * MiB))" "$O.own"
rc=0; as_uid $UX "$CLIENT" "$YS" hello recv >"$O.y" 2>&1 || rc=$?
check "X's process cannot connect to Y's socket (EACCES)" grep -q "connect=error errno=EACCES" "$O.y"
check "... and the client says so in its exit status" test "$rc" = 3
rc=0; as_uid $UY "$CLIENT" "$YS" >"$O.yy" 2>&1 || rc=$?
check "Y's own process can connect to Y's socket (the refusal above is about X)" test "$rc" = 0
check "no ledger file to read: ledgers are memfds handed over the socket" test ! -e "$RUNDIR/containers/$Y/ledger"
check "X's process cannot list Y's directory" bash -c "! setpriv --reuid=$UX --regid=$UX --clear-groups ls '$RUNDIR/containers/$Y' >/dev/null 2>&1"
check "X's process cannot list the containers directory" bash -c "! setpriv --reuid=$UX --regid=$UX --clear-groups ls '$RUNDIR/containers' >/dev/null 2>&1"
check "X's process can list nothing in its own directory either (0711, the daemon's)" bash -c "! setpriv --reuid=$UX --regid=$UX --clear-groups ls '$RUNDIR/containers/$X' >/dev/null 2>&1"
check "X's process cannot create a file in its own directory" bash -c "! setpriv --reuid=$UX --regid=$UX --clear-groups touch '$RUNDIR/containers/$X/x' 2>/dev/null"
rc=0; as_uid $UX curl -sS -o /dev/null --unix-socket "$RUNDIR/control.sock" http://convgpu/v1/version 2>"$O.ctl" || rc=$?
check "X's process cannot connect to the control socket (curl: couldn't connect)" test "$rc" = 7
rc=0; as_uid $UX "$CLIENT" "$RUNDIR/control.sock" >"$O.ctl2" 2>&1 || rc=$?
check "... nor open it as a socket of any type (EACCES)" grep -q "errno=EACCES" "$O.ctl2"
check "root reaches the control socket (control)" test "$(api GET /v1/version | cut -d' ' -f1)" = 200

# ---- 2. no message raises a limit ----------------------------------------------------------------
before_x=$(snap "$X"); before_y=$(snap "$Y")
check "snapshots read the API ($before_x)" grep -q "^$((96 * MiB)) $((96 * MiB)) " <<<"$before_x"
n=0
for t in 2 4 6 0 99 65535; do
    # after HELLO (a welcomed process) ...
    as_uid $UX "$CLIENT" "$XS" hello recv type $t closed 3000 >"$O.t$t" 2>&1 || true
    if grep -q "recv=WELCOME" "$O.t$t" && grep -q "closed=yes" "$O.t$t"; then
        pass "type $t ($(type_name $t)) after HELLO: disconnected"
    else
        fail "type $t after HELLO: $(tr '\n' ' ' <"$O.t$t")"
    fi
    # ... and before it.
    as_uid $UX "$CLIENT" "$XS" type $t closed 3000 >"$O.u$t" 2>&1 || true
    check "type $t before HELLO: disconnected" grep -q "closed=yes" "$O.u$t"
    n=$((n + 2))
done
for seq in "alloc 1048576" "freed" "hello recv hello"; do
    # shellcheck disable=SC2086
    as_uid $UX "$CLIENT" "$XS" $seq closed 3000 >"$O.s" 2>&1 || true
    check "'$seq' (out of order): disconnected" grep -q "closed=yes" "$O.s"
    n=$((n + 1))
done
as_uid $UX "$CLIENT" "$XS" hello recv alloc $((200 * MiB)) recv alloc $((1 << 62)) recv >"$O.over" 2>&1 || true
check "an ALLOC beyond X's limit is refused (OVER_LIMIT)" test "$(grep -c 'recv=ALLOC_REPLY id=[0-9]* status=1' "$O.over")" = 2
check "X's limit, assignment, use unchanged after $n forbidden messages" test "$(snap "$X")" = "$before_x"
check "Y unchanged" test "$(snap "$Y")" = "$before_y"
check "the daemon logged the violations" grep -q "WELCOME refused or unanswerable; disconnecting" "$DAEMON_LOG"

# ---- 3. accounts of others cannot be claimed -------------------------------------------------------
# A1 in X and B1 in Y hold memory and stay connected.
bg "$O.a1" $UX "$CLIENT" "$XS" pid hello recv alloc $((16 * MiB)) recv slot hold "$TMP/stop.a1"
A1=$BGPID
bg "$O.b1" $UY "$CLIENT" "$YS" pid hello recv alloc $((32 * MiB)) recv slot hold "$TMP/stop.b1"
B1=$BGPID
wait_for "A1 granted" "$WAIT_S" grep -q "slot_word_used" "$O.a1"
wait_for "B1 granted" "$WAIT_S" grep -q "slot_word_used" "$O.b1"
check "A1 was granted" grep -q "recv=ALLOC_REPLY id=1 status=0" "$O.a1"
check "B1 was granted" grep -q "recv=ALLOC_REPLY id=1 status=0" "$O.b1"
sa=$(kv "$O.a1" slot); ga=$(kv "$O.a1" generation); sb=$(kv "$O.b1" slot); gb=$(kv "$O.b1" generation)
a1_used=$(kv "$O.a1" slot_word_used)
before_x=$(snap "$X"); before_y=$(snap "$Y")
check "A1 is in X's process list with its slot" grep -q "($A1, $sa, " <<<"$before_x"
check "B1 is in Y's process list with its slot" grep -q "($B1, $sb, " <<<"$before_y"

claims=0
for claim in "$sa $ga" "$sb $gb" "$sa $((ga + 1))" "$sa $((ga - 1))" "1023 1" "1024 1" "4294967295 $ga"; do
    # shellcheck disable=SC2086
    as_uid $UX "$CLIENT" "$XS" pid reconnect $claim recv slot >"$O.c" 2>&1 || true
    me=$(kv "$O.c" pid); got=$(kv "$O.c" slot)
    if grep -q "recv=WELCOME" "$O.c" && [ "$got" != "$sa" ] && grep -q "ledger_limit=$((96 * MiB))" "$O.c" &&
       grep -q "slot_word_used=0 slot_word_quota=[0-9]* slot_pid=$me" "$O.c"; then
        pass "reconnect claiming slot/generation $claim: fresh slot $got of X's own ledger, empty, ours"
    else
        fail "reconnect claiming $claim: $(tr '\n' ' ' <"$O.c")"
    fi
    claims=$((claims + 1))
done
# The same claims, each also trying to free and allocate afterwards.
as_uid $UX "$CLIENT" "$XS" reconnect "$sb" "$gb" recv freed alloc $((8 * MiB)) recv freed sleep 100 >"$O.c2" 2>&1 || true
check "an ALLOC in X after claiming Y's slot is granted from X (only)" grep -q "recv=ALLOC_REPLY id=1 status=0" "$O.c2"
check "A1's account untouched by $claims claims" test "$(snap "$X")" = "$before_x"
check "Y's numbers untouched by X's claims, ALLOCs and FREEDs" test "$(snap "$Y")" = "$before_y"
check "A1 still holds its slot and its use" grep -q "($A1, $sa, $((a1_used * 4096)))" <<<"$(snap "$X")"
check "the daemon logged the refused claims" grep -q "reconnect to slot $sa refused" "$DAEMON_LOG"

# A1 exits: its slot is free again, and still nobody else may claim it by number.
touch "$TMP/stop.a1"
wait "$A1" || true
wait_for "A1 gone from X" "$WAIT_S" not_in "$X" "$A1"
as_uid $UX "$CLIENT" "$XS" pid reconnect "$sa" "$ga" recv slot >"$O.c3" 2>&1 || true
check "claiming a dead process's slot by number gives an empty account" grep -q "slot_word_used=0 " "$O.c3"
check "Y still unchanged" test "$(snap "$Y")" = "$before_y"

# ---- 4. identity from SO_PEERCRED ---------------------------------------------------------------
# The client is exec'd by setpriv, which was started by this shell: the pid the daemon shows must
# be the client's own, reported by the client itself, not this shell's or setpriv's parent's.
bg "$O.id" $UX "$CLIENT" "$XS" pid hello recv hold "$TMP/stop.id"
ID=$BGPID
wait_for "identity client welcomed" "$WAIT_S" grep -q "recv=WELCOME" "$O.id"
real=$(kv "$O.id" pid)
check "the client's own pid is the one we started" test "$real" = "$ID"
check "X's process list shows the SO_PEERCRED pid $real" grep -q "($real, " <<<"$(snap "$X")"
check "and Y's does not" not_in "$Y" "$real"
touch "$TMP/stop.id" "$TMP/stop.b1"
check "the daemon is still up" daemon_alive
finish

#!/usr/bin/env bash
# test_flood.sh — one tenant floods the daemon with valid messages; the others are still served.
# Real daemon on the emulated GPU (1 GiB); figures are printed, timings are not asserted (machine
# speed varies; docs/SECURITY.md "Request floods" records them).
#
# Three containers: the victim V (uid 1102, 128 MiB, fully assigned, so its requests are always
# granted at once), a filler F (512 MiB) that keeps the device full, and the attacker A (uid 1101,
# 512 MiB, assigned only what F left). A's attack, as big as the bounds allow:
#   - churn: one process gets 32 MiB, then gives it back a page at a time, sending FREED after
#     every page and many more FREEDs after that (a FREED storm while A has waiting requests);
#   - swarm: 1023 more connections (A's whole allowance of 1024), each saying HELLO and then
#     queueing 256 ALLOCs (the per-process allowance) that can never be granted (bigger than A's
#     assignment can grow while F holds the rest of the device), reading every answer.
# Meanwhile V's process does ALLOC -> GRANTED -> free round trips (a baseline first, then through
# the whole attack), and the control API is queried. Asserted: every victim request is GRANTED,
# the API answers, A never has more requests waiting than the per-container bound, every ALLOC
# beyond the bound is answered CANCELLED, and once A's processes exit the accounting is exact:
# nothing waiting, use 0, V and F as before.
. "$(dirname "$0")/lib.sh"
export CONVGPU_EMU_CONTEXT=2MiB
start_daemon --emulate 1GiB
MiB=$((1024 * 1024))
O=$TMP/out
UA=1101
UV=1102
UF=1103
# The bounds the attack fills (docs/OPERATIONS.md): connections per container, requests waiting
# per process, requests waiting per container.
CONNS=1024
PER_PROC=256
BOUND=${FLOOD_BOUND:-4096}
SWARM=$((CONNS - 1))          # the churn process holds the last connection
V=$(create_for victim 128MiB $UV)
F=$(create_for filler 512MiB $UF)
A=$(create_for attacker 512MiB $UA)
VS=$RUNDIR/containers/$V/container.sock
AS=$RUNDIR/containers/$A/container.sock

get() { # get PATH : the body of GET PATH; a daemon that does not answer in 60 s fails it
    curl -sf -m 60 --unix-socket "$RUNDIR/control.sock" "http://convgpu$1"
}
field() { # field ID NAME : one field of GET /v1/containers/ID
    get "/v1/containers/$1" | "$PY" -c 'import json,sys; print(json.load(sys.stdin)[sys.argv[1]])' "$2"
}
a_assigned=$(field "$A" assigned)
# Bigger than A's assignment (which cannot grow while F holds the rest), within A's limit even
# with the churn's use and a context charge: waits forever, never refused as over the limit.
BIG=$((a_assigned + 8 * MiB))
check "A's assignment ($((a_assigned / MiB)) MiB) leaves room for requests that wait" \
    test $((BIG + 2 * MiB + 34 * MiB)) -le $((512 * MiB))
v0=$(snap "$V")
f0=$(snap "$F")

# ---- baseline: the victim alone -----------------------------------------------------------------
as_uid $UV "$CLIENT" "$VS" hello recv pingpong 500 $((4 * MiB)) >"$O.base" 2>&1 || true
check "baseline: 500 victim round trips granted" grep -q "pingpong_done=yes" "$O.base"

# ---- the attack ---------------------------------------------------------------------------------
bg "$O.churn" $UA nice -n 19 "$CLIENT" "$AS" hello recv timeout 60000 churn "$TMP/stop.attack" $((32 * MiB))
CHURN=$BGPID
wait_for "churn granted" 20 grep -q "churn_granted=" "$O.churn" || true
check "the attacker's churn process got its 32 MiB" grep -q "churn_granted=yes" "$O.churn"
bg "$O.victim" $UV "$CLIENT" "$VS" hello recv timeout 60000 pingpong-until "$TMP/stop.victim" $((4 * MiB))
VICTIM=$BGPID
wait_for "victim welcomed" 20 grep -q "recv=WELCOME" "$O.victim" || true
cpu() { awk '{print $14 + $15}' "/proc/$DAEMON_PID/stat"; }
c0=$(cpu)
t0=$(date +%s%N)
bg "$O.swarm" $UA nice -n 19 "$CLIENT" "$AS" hello recv swarm $SWARM $PER_PROC $BIG "$TMP/stop.attack"
SWARMPID=$BGPID
wait_for "swarm connected" 60 grep -q "swarm_connected=" "$O.swarm" || true
check "the swarm holds A's remaining $SWARM connections ($(kv "$O.swarm" swarm_connected))" \
    test "$(kv "$O.swarm" swarm_connected)" = $SWARM
total=$((SWARM * PER_PROC))
expect=$((total < BOUND ? total : BOUND))
wait_for "every ALLOC of the swarm written" 120 grep -q "swarm_sent=" "$O.swarm" || true
check "the swarm wrote all $total ALLOCs ($(kv "$O.swarm" swarm_sent))" grep -q "swarm_sent=$total$" "$O.swarm"
# The daemon has taken them all in when A has `expect` waiting and the rest were answered.
maxpending=0
taken_in() {
    local p
    p=$(field "$A" pending 2>/dev/null) || return 1
    [ "${p:-0}" -gt "$maxpending" ] && maxpending=$p
    [ "${p:-0}" -ge "$expect" ]
}
wait_for "A's requests waiting" 120 taken_in || true
t1=$(date +%s%N)
check "A has $expect requests waiting (the bound)" test "$(field "$A" pending)" = "$expect"

# The control API, under the attack (the churn keeps sending FREEDs meanwhile).
lat=()
api_ok=0
for i in $(seq 1 40); do
    for path in /v1/containers "/v1/containers/$A" /v1/devices; do
        out=$(curl -s -m 60 -o /dev/null -w '%{http_code} %{time_total}' --unix-socket "$RUNDIR/control.sock" \
            "http://convgpu$path" || true)
        [ "${out%% *}" = 200 ] && api_ok=$((api_ok + 1))
        lat+=("${out#* }")
    done
done
check "the control API answered all 120 requests under attack ($api_ok)" test "$api_ok" = 120
api_fig=$(printf '%s\n' "${lat[@]}" | sort -g | awk '{v[NR]=$1} END {printf "p50=%.1fms p99=%.1fms max=%.1fms", v[int(NR*0.5)+1]*1000, v[int(NR*0.99)+1]*1000, v[NR]*1000}')
check "the attacker's pending requests never exceeded the bound (max seen $maxpending)" test "$maxpending" -le "$BOUND"

touch "$TMP/stop.victim"
wait "$VICTIM" || true
c1=$(cpu)
t2=$(date +%s%N)
check "every victim request under attack was GRANTED ($(kv "$O.victim" pingpong_ok) round trips)" \
    grep -q "pingpong_done=yes" "$O.victim"
touch "$TMP/stop.attack"
wait "$SWARMPID" || true
wait "$CHURN" || true
check "no swarm ALLOC was granted, the $((total - expect)) beyond the bound were CANCELLED" \
    grep -q "swarm_granted=0 swarm_cancelled=$((total - expect)) " "$O.swarm"
wait_for "A empty" 60 test "$(field "$A" pending) $(field "$A" used) $(field "$A" processes)" = "0 0 0" || true
check "after the attack A has nothing waiting, no use, no processes" \
    test "$(field "$A" pending) $(field "$A" used) $(field "$A" processes)" = "0 0 0"
check "A's assignment is as before" test "$(field "$A" assigned)" = "$a_assigned"
wait_for "V empty" 10 test "$(snap "$V")" = "$v0" || true
check "V and F are as before" test "$(snap "$V") $(snap "$F")" = "$v0 $f0"
check "the daemon is up" daemon_alive

us() { kv "$1" "pingpong_$2_us"; }
echo "figures: attack ${SWARM}x${PER_PROC} ALLOCs + churn ($(kv "$O.churn" churn_freed) FREED," \
     "$(kv "$O.churn" churn_pages) pages given back); taken in after $(( (t1 - t0) / 1000000 )) ms;" \
     "daemon CPU $((c1 - c0)) ticks over $(( (t2 - t0) / 1000000 )) ms"
echo "figures: victim baseline p50=$(us "$O.base" p50)us p99=$(us "$O.base" p99)us max=$(us "$O.base" max)us"
echo "figures: victim under attack $(kv "$O.victim" pingpong_ok) round trips p50=$(us "$O.victim" p50)us" \
     "p99=$(us "$O.victim" p99)us max=$(us "$O.victim" max)us"
echo "figures: control API under attack $api_fig"
finish

#!/usr/bin/env bash
# test_control_flood.sh — issue #35 items 1 and 2: no local client silences the daemon. Against a
# real daemon (--control-group CTL, user-memory-quota 50%, a descriptor limit of 1024), A (uid
# 1101) attacks and V (uid 1102) goes about its business; both are members of CTL, neither is
# root or an operator. tests/security/api_flood.py is the attacker on the control socket,
# proto_client on A's container socket. Every attack is held until the test releases it.
#   1. A holds 256 silent connections: A gets 32 (api-user-connections), the rest are told 429;
#      meanwhile V lists and creates and root creates; after A lets go, the API still answers
#      (before: the daemon never accepted on control.sock again).
#   2. A trickles a request into 256 connections, a byte a second: every one A got is closed at
#      api-request-timeout (3 s here) although it never went silent, and V is served meanwhile.
#   3. A asks for 260 event streams: it gets 4 (api-user-followers), the rest are told 429; V
#      still follows the events, and the API answers afterwards.
#   4. Descriptors: the daemon starts under a 1024-descriptor limit and says the bounds do not
#      fit, with the numbers; A, inside every container's own bounds, opens 1,200 connections
#      to its two containers' sockets: it holds at most user-max-connections (128 here, derived),
#      and V's new process is still welcomed and V's create is 201 (before: V's process was cut
#      off and its create answered 500 "Too many open files").
. "$(dirname "$0")/lib.sh"
command -v prlimit >/dev/null || { echo "SKIP: prlimit (util-linux) missing"; exit 77; }
ctl_group cgt-fl
cleanup_flood() { touch "$TMP"/release.* 2>/dev/null; cleanup; groupdel "$CTL" 2>/dev/null; }
trap cleanup_flood EXIT
FLOOD=$(dirname "$0")/api_flood.py
SOCK=$RUNDIR/control.sock

# No user's connection left in the daemon (root reads /metrics): each attack starts from none,
# so its counts are its own, not a previous attack's connections the daemon is still closing.
# The answer whole, then grep (under pipefail `api | grep -q` fails when grep leaves early).
no_user_connections() { local m; m=$(api GET /metrics) && grep -q '^convgpu_api_tenant_connections 0$' <<<"$m"; }
flood() { # flood NAME MODE N [INTERVAL] : A's attacker in the background, until release.NAME
    wait_for "the previous attack's connections closed" "$WAIT_S" no_user_connections ||
        fail "user connections still open before attack $1"
    rm -f "$TMP/release.$1"
    as 1101 "$PY" "$FLOOD" "$2" "$SOCK" "$3" "$TMP/release.$1" "${4:-1}" >"$TMP/status.$1" 2>&1 &
    FLOOD_PID=$!
    BG_PIDS+=("$FLOOD_PID")
}
stat_of() { kv "$TMP/status.$1" "$2" 2>/dev/null; } # stat_of NAME KEY
stat_is() { [ "$(stat_of "$1" "$2")" = "$3" ]; }
stat_sum_is() { # stat_sum_is NAME WANT KEY... : the keys add up to WANT
    local name=$1 want=$2 sum=0 k v; shift 2
    for k in "$@"; do v=$(stat_of "$name" "$k"); sum=$((sum + ${v:-0})); done
    [ "$sum" = "$want" ]
}
release() { touch "$TMP/release.$1"; wait "$FLOOD_PID" 2>/dev/null || true; }
victim_served() { # victim_served WHAT : V lists, creates and removes; root creates and removes
    local r id
    r=$(capi 1102 GET /v1/containers)
    check "$1: V lists its containers (200)" test "$(status "$r")" = 200
    r=$(capi 1102 POST /v1/containers '{"gpu_memory":"256MiB"}')
    check "$1: V creates a container ($(status "$r"))" test "$(status "$r")" = 201
    id=$(id_of "$r")
    [ -z "$id" ] || capi 1102 DELETE "/v1/containers/$id" >/dev/null
    r=$(api POST /v1/containers '{"gpu_memory":"256MiB"}')
    check "$1: root creates a container (201)" test "$(status "$r")" = 201
    id=$(id_of "$r")
    [ -z "$id" ] || api DELETE "/v1/containers/$id" >/dev/null
}

# The shipped unit's descriptor limit is larger; 1024 lets the test reach it.
mkdir -p "$RUNDIR"
CONVGPU_EMU_CONTEXT=66MiB prlimit --nofile=1024:1024 "$BUILD/bin/convgpud" --runtime-dir "$RUNDIR" \
    --foreground --log-level debug --emulate 8GiB --control-group "$CTL" \
    --user-memory-quota 50% --api-request-timeout 3 >>"$DAEMON_LOG" 2>&1 &
DAEMON_PID=$!
wait_for "daemon answering" "$WAIT_S" \
    curl -sf -o /dev/null --unix-socket "$SOCK" http://convgpu/v1/version ||
    { fail "the daemon did not start"; exit 1; }
check "at start, the daemon says the bounds do not fit 1024 descriptors, with the numbers" \
    grep -q "descriptor limit (1024) is smaller than the connection bounds need: api-max-connections 512 + max-client-connections" "$DAEMON_LOG"

# ---- 1. silent connections ---------------------------------------------------------------------
flood silent hold 256
check "A: 32 connections held, 224 told 429" \
    wait_for "A's 224 refusals" "$WAIT_S" stat_is silent refused 224
check "... and 32 still open" stat_is silent open 32
victim_served "A holding 32 silent connections"
release silent
r=$(capi 1102 GET /v1/version)
check "after A let go, the API answers V (200)" test "$(status "$r")" = 200
victim_served "after the silent connections"

# ---- 2. trickling requests ---------------------------------------------------------------------
flood trickle trickle 256 1
check "A trickling: 224 told 429 at once" \
    wait_for "A's refusals" "$WAIT_S" stat_is trickle refused 224
victim_served "A trickling into 32 connections"
check "every trickling connection A got is closed at the request deadline, though never silent" \
    wait_for "the 32 trickling connections to be closed" "$WAIT_S" stat_is trickle closed 32
check "... none of them was answered" stat_is trickle answered 0
release trickle
check "the daemon logged the deadline" grep -q "did not send a whole request within 3 s" "$DAEMON_LOG"

# ---- 3. event followers ------------------------------------------------------------------------
flood follow follow 260
check "A asks for 260 streams: 256 told 429 (228 at accept, 28 by the stream bound)" \
    wait_for "A's refusals" "$WAIT_S" stat_is follow refused 256
check "... and holds 4" stat_sum_is follow 4 open answered
rm -f "$TMP/v.events"
setpriv --reuid=1102 --regid=1102 --groups="$CTL_GID" curl -sN -m 120 --unix-socket "$SOCK" \
    "http://convgpu/v1/events?follow=1&since=0" >"$TMP/v.events" 2>&1 &
V_FOLLOW=$!
BG_PIDS+=("$V_FOLLOW")
r=$(capi 1102 POST /v1/containers '{"gpu_memory":"256MiB","name":"v-seen"}')
check "V creates while A holds its streams (201)" test "$(status "$r")" = 201
V_SEEN=$(id_of "$r")
check "V's own stream shows its create" \
    wait_for "V's event" "$WAIT_S" grep -q "$V_SEEN" "$TMP/v.events"
capi 1102 DELETE "/v1/containers/$(id_of "$r")" >/dev/null
kill "$V_FOLLOW" 2>/dev/null || true
release follow
victim_served "after the streams"
# Streams whose clients hung up give their places back without waiting for an event (before: a
# stream waiting for events kept its place, and A's descriptors, until the next event).
no_streams() { local m; m=$(api GET /metrics) && grep -q '^convgpu_api_followers 0$' <<<"$m"; }
check "the streams whose clients hung up are closed without an event" \
    wait_for "no stream left" "$WAIT_S" no_streams
metric() { api GET /metrics | sed -n "s/^$1 //p"; }
timed_out=$(metric 'convgpu_api_connections_total{outcome="timed_out"}')
refused=$(metric 'convgpu_api_connections_total{outcome="refused"}')
check "... and /metrics counted the deadlines ($timed_out, at least the 32 trickling) and refusals ($refused)" \
    test "${timed_out:-0}" -ge 32 -a "${refused:-0}" -ge $((224 + 224 + 228))
flood follow2 follow 6
check "A may follow again: 4 held, 2 told 429" \
    wait_for "A's second streams" "$WAIT_S" stat_is follow2 refused 2
check "... and holds 4 again" stat_sum_is follow2 4 open answered
release follow2

# ---- 4. descriptors: container-socket connections ----------------------------------------------
check "the derived bounds are logged" grep -q "container sockets 512 (128 per user), descriptor limit 1024" "$DAEMON_LOG"
ra=$(capi 1101 POST /v1/containers '{"gpu_memory":"512MiB","name":"a1"}')
rb=$(capi 1101 POST /v1/containers '{"gpu_memory":"512MiB","name":"a2"}')
rv=$(capi 1102 POST /v1/containers '{"gpu_memory":"512MiB","name":"v1"}')
check "A's two containers and V's are created" test "$(status "$ra")$(status "$rb")$(status "$rv")" = 201201201
A1=$(id_of "$ra"); A2=$(id_of "$rb"); V1=$(id_of "$rv")
rm -f "$TMP/release.swarm"
bg "$TMP/swarm1.out" 1101 "$CLIENT" "$RUNDIR/containers/$A1/container.sock" hello recv \
    swarm 600 0 4096 "$TMP/release.swarm"
bg "$TMP/swarm2.out" 1101 "$CLIENT" "$RUNDIR/containers/$A2/container.sock" hello recv \
    swarm 600 0 4096 "$TMP/release.swarm"
swarm_total() { echo $(( $(kv "$TMP/swarm1.out" swarm_connected || echo 0) + $(kv "$TMP/swarm2.out" swarm_connected || echo 0) )); }
swarms_done() { grep -q swarm_connected "$TMP/swarm1.out" && grep -q swarm_connected "$TMP/swarm2.out"; }
check "A's two swarms have connected all they could" wait_for "A's swarms" "$WAIT_S" swarms_done
check "A holds at most 128 connections across its containers ($(swarm_total))" test "$(swarm_total)" -le 128
check "the daemon says why it refused A" grep -q "uid 1101's containers hold user-max-connections (128)" "$DAEMON_LOG"
out=$(as 1102 "$CLIENT" "$RUNDIR/containers/$V1/container.sock" hello recv 2>&1 || true)
check "V's new process is welcomed ($(grep -o 'recv=[A-Za-z_]*' <<<"$out"))" grep -q "recv=WELCOME" <<<"$out"
r=$(capi 1102 POST /v1/containers '{"gpu_memory":"256MiB"}')
check "V creates a container while A holds its connections ($(status "$r"))" test "$(status "$r")" = 201
touch "$TMP/release.swarm"
r=$(capi 1102 GET /v1/containers)
check "after A let go, the API answers (200)" test "$(status "$r")" = 200
finish

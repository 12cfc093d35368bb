#!/usr/bin/env bash
# test_access.sh — what a control-group member may see and hold through the control API, against
# a real daemon on a 5 GiB emulated GPU with --control-group CTL and, from its configuration
# file, operators-group = OPS, user-memory-quota = 50%, user-max-containers = 3 (bad values of
# each are refused at start). Callers are real processes of other uids
# (setpriv), in real groups created for the test (groupadd; removed at the end):
#   U1 (uid 1101) and U2 (uid 1102): members of CTL only; OP (uid 1103): CTL and OPS as a
#   supplementary group (SO_PEERGROUPS); OQ (uid 1104): OPS as its primary group.
# Checked:
#   1. per-user bounds: U2 cannot take 4.75 GiB of the 5 (the reported case) nor more than
#      2.5 GiB in total across containers (403 naming user-memory-quota and the numbers); a
#      raise over the quota is refused the same way, a lowering always passes; a fourth container
#      is refused (user-max-containers); root and operators are not bound.
#   2. reading: U1 lists, inspects, and acts on (DELETE, limit, start) only its own containers;
#      another's answers 404 with the same words as a container that does not exist, by id or
#      by name; /v1/events (listed and followed) and /metrics carry only U1's containers plus
#      device-level lines; operators (OP, OQ) and root see and act on everything.
#   3. the CLI (ps, inspect, events --once, top --once) works for both kinds of caller and
#      shows each what the API shows it.
. "$(dirname "$0")/lib.sh"
MiB=$((1024 * 1024))
command -v groupadd >/dev/null || { echo "SKIP: groupadd missing"; exit 77; }
CTL=cgt-ctl-$$
OPS=cgt-ops-$$
groupadd "$CTL" || { echo "SKIP: cannot create groups"; exit 77; }
groupadd "$OPS" || { groupdel "$CTL"; echo "SKIP: cannot create groups"; exit 77; }
cleanup_access() { cleanup; groupdel "$CTL" 2>/dev/null; groupdel "$OPS" 2>/dev/null; }
trap cleanup_access EXIT
CTL_GID=$(getent group "$CTL" | cut -d: -f3)
OPS_GID=$(getent group "$OPS" | cut -d: -f3)

# Bad values stop the daemon with a message, before it touches anything.
for bad in "--user-memory-quota 0%" "--user-memory-quota 101%" "--user-memory-quota 50.5%" \
    "--user-memory-quota 0" "--user-memory-quota lots" "--user-max-containers -1" \
    "--user-max-containers 100001" "--operators-group cgt-no-such-group-$$"; do
    # shellcheck disable=SC2086
    out=$("$BUILD/bin/convgpud" --runtime-dir "$TMP/never" --foreground $bad 2>&1) && rc=0 || rc=$?
    check "convgpud $bad: refused (exit $rc: $out)" test "$rc" = 2 -a ! -e "$TMP/never"
done
# The settings from the configuration file (flags: the same names).
printf 'user-memory-quota = 50%%\nuser-max-containers = 3\noperators-group = %s\n' "$OPS" >"$TMP/convgpud.conf"
start_daemon --emulate 5GiB --control-group "$CTL" --config "$TMP/convgpud.conf"

as() { # as CALLER CMD... : run CMD as that caller, with its groups
    local w=$1; shift
    case $w in
    U1) setpriv --reuid=1101 --regid=1101 --groups="$CTL_GID" "$@" ;;
    U2) setpriv --reuid=1102 --regid=1102 --groups="$CTL_GID" "$@" ;;
    OP) setpriv --reuid=1103 --regid=1103 --groups="$CTL_GID,$OPS_GID" "$@" ;;
    OQ) setpriv --reuid=1104 --regid="$OPS_GID" --groups="$CTL_GID" "$@" ;;
    esac
}
capi() { # capi CALLER METHOD PATH [BODY] -> "STATUS BODY", like api
    local w=$1 out; shift
    out=$(as "$w" curl -s -w ' %{http_code}' --unix-socket "$RUNDIR/control.sock" -X "$1" \
        ${3:+-H 'Content-Type: application/json' --data "$3"} "http://convgpu$2") || true
    echo "${out##* } ${out% *}"
}
ccg() { local w=$1; shift; as "$w" "$BUILD/bin/convgpu" --runtime-dir "$RUNDIR" "$@"; }
status() { echo "${1%% *}"; }
# The daemon writes compact JSON: names and ids are read with grep (python3 takes seconds to
# start on a loaded 2-core machine).
id_of() { grep -o '"id":"[^"]*"' <<<"$1" | head -n 1 | cut -d'"' -f4 || true; }
names() { { grep -o '"name":"[^"]*"' || true; } | cut -d'"' -f4 | sort | tr '\n' ' '; }
create() { # create CALLER NAME SIZE -> "STATUS BODY"
    capi "$1" POST /v1/containers "{\"gpu_memory\":\"$3\",\"name\":\"$2\"}"
}

# ---- 1. per-user bounds ------------------------------------------------------------------------
r=$(create U2 greedy 4.75GiB)
check "U2 cannot take 4.75GiB of the 5GiB node: 403 ($r)" test "$(status "$r")" = 403
check "... naming the bound and the numbers" grep -q '"bound":"user-memory-quota".*"quota":2684354560' <<<"$r"
check "... in words too" grep -q "at most 2.5GiB of GPU-memory limits (50% of the node's 5GiB)" <<<"$r"
r=$(create U1 a1 2GiB)
check "U1 creates a1 (2GiB): 201" test "$(status "$r")" = 201
A1=$(id_of "$r")
r=$(create U1 a2 1GiB)
check "U1 cannot add 1GiB to the 2GiB it holds (quota 2.5GiB): 403" test "$(status "$r")" = 403
check "... saying what it holds" grep -q "it holds 2GiB in 1 other container(s), and 1GiB more" <<<"$r"
r=$(create U1 a2 512MiB)
check "U1 creates a2 (512MiB, exactly up to the quota): 201" test "$(status "$r")" = 201
A2=$(id_of "$r")
r=$(capi U1 PUT "/v1/containers/$A2/limit" '{"gpu_memory":"1GiB"}')
check "U1 cannot raise a2 over its quota: 403 ($r)" test "$(status "$r")" = 403
check "... naming the bound" grep -q '"bound":"user-memory-quota"' <<<"$r"
check "... and a2 keeps its limit" grep -q "\"limit\":$((512 * MiB))," <<<"$(api GET "/v1/containers/$A2")"
r=$(capi U1 PUT "/v1/containers/$A1/limit" '{"gpu_memory":"1GiB"}')
check "U1 may always lower: a1 to 1GiB: 200" test "$(status "$r")" = 200
r=$(capi U1 PUT "/v1/containers/$A2/limit" '{"gpu_memory":"1GiB"}')
check "... and then raise a2 to 1GiB (2GiB in all): 200" test "$(status "$r")" = 200
for n in 1 2 3; do
    r=$(create U2 "b$n" 64MiB)
    check "U2 creates b$n: 201" test "$(status "$r")" = 201
    eval "B$n=$(id_of "$r")"
done
r=$(create U2 b4 64MiB)
check "U2's fourth container is refused: 403 ($r)" test "$(status "$r")" = 403
check "... naming user-max-containers and the numbers" grep -q '"bound":"user-max-containers","quota":3,"held":3' <<<"$r"
r=$(create OP opbig 2600MiB)
check "an operator is not bound by the quota (2600MiB): 201" test "$(status "$r")" = 201
r=$(api POST /v1/containers '{"gpu_memory":"64MiB","name":"rootown"}')
check "root creates its own container: 201" test "$(status "$r")" = 201

# ---- 2. what U1 sees and may touch ----------------------------------------------------------------
check "U1 lists only its own containers" test "$(capi U1 GET /v1/containers | names)" = "a1 a2 "
check "U2 lists only its own" test "$(capi U2 GET /v1/containers | names)" = "b1 b2 b3 "
check "OP (operators group, supplementary) lists every container" test "$(capi OP GET /v1/containers | names)" = "a1 a2 b1 b2 b3 opbig rootown "
check "OQ (operators group, primary) lists every container" test "$(capi OQ GET /v1/containers | names)" = "a1 a2 b1 b2 b3 opbig rootown "
check "root lists every container" test "$(api GET /v1/containers | names)" = "a1 a2 b1 b2 b3 opbig rootown "
missing=$(capi U1 GET /v1/containers/nosuchthing)
check "a missing container: 404" test "$(status "$missing")" = 404
for key in "$B1" b1 opbig rootown; do
    r=$(capi U1 GET "/v1/containers/$key")
    check "U1 inspecting $key (another's): 404 worded as a missing one" \
        test "$r" = "${missing//nosuchthing/$key}"
done
r=$(capi U1 DELETE "/v1/containers/$B1")
check "U1 cannot remove b1: 404 (not 403: existence is not confirmed)" test "$r" = "${missing//nosuchthing/$B1}"
r=$(capi U1 PUT "/v1/containers/$B1/limit" '{"gpu_memory":"32MiB"}')
check "U1 cannot resize b1: 404" test "$(status "$r")" = 404
r=$(capi U1 POST "/v1/containers/$B1/start" "{\"pid\":$$}")
check "U1 cannot start b1: 404" test "$(status "$r")" = 404
check "... and b1 is untouched" grep -q "\"limit\":$((64 * MiB))," <<<"$(api GET "/v1/containers/$B1")"
check "U1 inspects its own a1: 200" test "$(status "$(capi U1 GET /v1/containers/a1)")" = 200

# events: listed
ev=$(capi U1 GET /v1/events)
check "U1's event list has a1's events" grep -q "\"container\":\"$A1\"" <<<"$ev"
check "... and no event of another's container" bash -c "! grep -o '\"container\":\"[^\"]*\"' <<<'$ev' | grep -qv -e '\"$A1\"' -e '\"$A2\"' -e '\"\"'"
ev=$(capi OP GET /v1/events)
check "OP's event list has U2's events" grep -q "\"container\":\"$B1\"" <<<"$ev"
# events: followed from the current sequence number (so nothing depends on when the followers
# connect). Root changes b2, then a2: when a2's change reaches U1, b2's would have come first had
# it not been left out.
next=$(api GET /v1/events | grep -o '"next":[0-9]*' | cut -d: -f2)
declare -A FOLLOWER
follow() { # follow CALLER: (re)start CALLER's follower from $next; a restart appends
    as "$1" curl -sN --unix-socket "$RUNDIR/control.sock" \
        "http://convgpu/v1/events?follow=1&since=$next" >>"$TMP/follow.${1,,}" 2>&1 &
    FOLLOWER[$1]=$!
    BG_PIDS+=($!)
}
# sees CALLER: its stream has a2's change; a follower whose connection ended (a loaded machine's
# reset, seen once in a full run beside security.flood) is started again from the same point,
# which is what a client does: the sequence numbers say nothing was missed.
sees() {
    grep -q "\"container\":\"$A2\"" "$TMP/follow.${1,,}" && return 0
    if ! kill -0 "${FOLLOWER[$1]}" 2>/dev/null; then
        echo "note: $1's follower ended ($(wc -c <"$TMP/follow.${1,,}") bytes); following again"
        follow "$1"
    fi
    return 1
}
follow U1
follow OP
put_b2=$(api PUT "/v1/containers/$B2/limit" '{"gpu_memory":"32MiB"}')
put_a2=$(api PUT "/v1/containers/$A2/limit" '{"gpu_memory":"768MiB"}')
check "root lowers b2 and raises a2: 200 and 200" test "${put_b2%% *} ${put_a2%% *}" = "200 200"
for who in U1 OP; do
    wait_for "$who's follower sees a2's limit change" "$WAIT_S" sees "$who" ||
        { echo "--- $who's stream:"; cat "$TMP/follow.${who,,}"; echo "--- events now:";
          api GET "/v1/events?since=$next"; fail "$who's follower never saw a2's change"; }
done
check "U1's followed stream has a2's change" grep -q "\"type\":\"limit\".*\"container\":\"$A2\"" "$TMP/follow.u1"
check "... and not b2's" bash -c "! grep -q '$B2' '$TMP/follow.u1'"
check "OP's followed stream has b2's change" grep -q "\"container\":\"$B2\"" "$TMP/follow.op"

# metrics
m=$(capi U1 GET /metrics)
check "U1's /metrics: 200" test "$(status "$m")" = 200
check "... with device series" grep -q '^convgpu_device_capacity_bytes{device="0"' <<<"$m"
check "... with a1's series" grep -q "^convgpu_container_limit_bytes{container=\"$A1\"" <<<"$m"
check "... and only U1's containers" test "$(grep -o '^convgpu_container_limit_bytes{container="[^"]*",name="[^"]*"' <<<"$m" | cut -d'"' -f4 | sort | tr '\n' ' ')" = "a1 a2 "
m=$(capi OP GET /metrics)
check "OP's /metrics has every container" test "$(grep -c '^convgpu_container_limit_bytes{' <<<"$m")" = 7

# operators act on every container
r=$(capi OP PUT "/v1/containers/$B1/limit" '{"gpu_memory":"128MiB"}')
check "OP resizes U2's b1: 200" test "$(status "$r")" = 200
r=$(capi OQ DELETE "/v1/containers/$B3")
check "OQ removes U2's b3: 200" test "$(status "$r")" = 200
r=$(create U2 b4 64MiB)
check "U2, now holding 2 containers, may create a third: 201" test "$(status "$r")" = 201

# ---- 3. the CLI, for both kinds of caller ----------------------------------------------------------
rc=0; ccg U1 ps >"$TMP/ps.u1" 2>&1 || rc=$?
check "U1: convgpu ps works" test "$rc" = 0
check "... and lists a1" grep -qw a1 "$TMP/ps.u1"
check "... not b1" bash -c "! grep -qw b1 '$TMP/ps.u1'"
ccg OP ps >"$TMP/ps.op" 2>&1
check "OP: convgpu ps lists b1" grep -qw b1 "$TMP/ps.op"
ccg U1 inspect a1 >"$TMP/inspect.a1" 2>&1
check "U1: convgpu inspect a1 works" grep -q '"name": *"a1"' "$TMP/inspect.a1"
if ccg U1 inspect b1 >"$TMP/inspect.u1" 2>&1; then fail "U1: convgpu inspect b1 succeeded"; else pass "U1: convgpu inspect b1 fails"; fi
check "... saying no such container" grep -qi "no such container" "$TMP/inspect.u1"
ccg OP inspect b1 >"$TMP/inspect.op" 2>&1
check "OP: convgpu inspect b1 works" grep -q '"name": *"b1"' "$TMP/inspect.op"
ccg U1 events --once --json >"$TMP/events.u1" 2>&1
check "U1: convgpu events --once works and shows a1" grep -q "$A1" "$TMP/events.u1"
check "... and nothing of U2's" bash -c "! grep -q -e '$B1' -e '$B2' '$TMP/events.u1'"
ccg U1 top --once >"$TMP/top.u1" 2>&1
check "U1: convgpu top --once works and shows a1" grep -qw a1 "$TMP/top.u1"
check "... and not b1" bash -c "! grep -qw b1 '$TMP/top.u1'"
ccg OP top --once >"$TMP/top.op" 2>&1
check "OP: convgpu top --once shows b1" grep -qw b1 "$TMP/top.op"
kill -TERM "$DAEMON_PID"; rc=0; wait "$DAEMON_PID" || rc=$?; DAEMON_PID=
check "the daemon stops cleanly (exit $rc; under ASan: no leak)" test "$rc" = 0
finish

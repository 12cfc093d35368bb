#!/usr/bin/env bash
# test_extender_flood.sh — issue #35 item 6, run as written against the real scheduler extender:
# any local user can reach it (TCP on 127.0.0.1), so an unprivileged client must neither keep
# kube-scheduler's filter requests out nor grow the extender without bound.
#
#   1. 260 connections (more than the 256 allowed) trickle request headers, one byte every 5 s,
#      from uid 1101: filter requests are still answered while they are all connected; a
#      trickling request is closed at the request deadline (10 s) however steadily it trickles.
#   2. Twelve connections from uid 1101 each send 60 MiB of a 60 MiB + 1 body and hold it: the
#      extender's peak RSS (VmHWM) stays within its body budget (64 MiB) plus a margin over
#      what it used before, and filter requests are still answered.
#   3. The UNIX socket is 0660 whatever the umask it was started with.
# Every check waits for a condition (the attacker's own sleeps between bytes are the attack);
# before the fix, step 1 found the filter requests unanswered and step 2 an RSS of ~800 MiB.
# RSS figures are printed for docs/SECURITY.md.
. "$(dirname "$0")/lib.sh"
EXT=$BUILD/bin/convgpu-scheduler-extender
[ -x "$EXT" ] || { echo "SKIP: $EXT not built"; exit 77; }
HOSTILE=$(dirname "$(readlink -f "$0")")/extender_hostile.py
UA=1101
BUDGET_MIB=64 # the extender's default --body-budget
MARGIN_MIB=48 # allocator and libmicrohttpd overhead beside the budget
TRICKLERS=260
O=$TMP/out

start_extender() { # start_extender NAME ARGS... : sets EXT_PID and EXT_AT (where it listens)
    local name=$1; shift
    "$EXT" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err" &
    EXT_PID=$!
    BG_PIDS+=("$EXT_PID")
    wait_for "$name listening" "$WAIT_S" grep -q "listening on" "$TMP/$name.out" ||
        { fail "$name did not start: $(cat "$TMP/$name.err")"; return 1; }
    EXT_AT=$(sed -n 's/.*listening on \([^ ]*\).*/\1/p' "$TMP/$name.out")
}
status_kib() { awk -v k="$2:" '$1 == k {print $2}' "/proc/$1/status"; }
fds_at_least() { [ "$(ls "/proc/$1/fd" | wc -l)" -ge "$2" ]; }
# kv_at_least FILE KEY N : the last KEY=value in FILE is at least N
kv_at_least() { local v; v=$(kv "$1" "$2"); [ -n "$v" ] && [ "$v" -ge "$3" ]; }

start_extender tcp --listen 127.0.0.1:0 || exit 1
TCP_PID=$EXT_PID
TCP_AT=$EXT_AT

# ---- 1. tricklers --------------------------------------------------------------------------------
bg "$O.trickle" $UA "$PY" "$HOSTILE" "$TCP_AT" trickle $TRICKLERS 5 "$TMP/stop.trickle"
TRICKLE=$BGPID
wait_for "all $TRICKLERS tricklers connected" "$WAIT_S" grep -q "connected=$TRICKLERS" "$O.trickle" || true
check "the attacker opened $TRICKLERS connections" grep -q "connected=$TRICKLERS" "$O.trickle"
# The extender holds as many as it allows (256) before the filter requests are sent.
wait_for "the extender holding 256 connections" "$WAIT_S" fds_at_least "$TCP_PID" 256 || true
check "the extender holds $(($(ls "/proc/$TCP_PID/fd" | wc -l))) descriptors (>= 256) under the trickle" \
    fds_at_least "$TCP_PID" 256
"$PY" "$HOSTILE" "$TCP_AT" filter 20 >"$O.filter1" 2>&1 || true
check "20 filter requests among $TRICKLERS tricklers: all answered ($(kv "$O.filter1" filter_ok) ok, \
slowest $(kv "$O.filter1" filter_max_ms) ms$(grep -o 'filter_error=.*' "$O.filter1" | sed 's/^/, /'))" \
    grep -q "filter_ok=20$" "$O.filter1"
check "the extender is alive after the trickle" kill -0 "$TCP_PID"
touch "$TMP/stop.trickle"
wait "$TRICKLE" 2>/dev/null || true
# The deadline, on one trickler alone (no crowding to close it): it is closed, after trickling,
# however steadily it goes on. Before the fix it trickled on for good.
bg "$O.one" $UA "$PY" "$HOSTILE" "$TCP_AT" trickle 1 2 "$TMP/stop.one"
wait_for "the lone trickler closed" "$WAIT_S" grep -q "closed=1 slow=1" "$O.one" || true
check "a request trickling a byte every 2 s is closed at its deadline ($(grep -c . "$O.one") lines: \
$(grep -o 'closed=.*' "$O.one" | head -1))" grep -q "closed=1 slow=1" "$O.one"
touch "$TMP/stop.one"

# ---- 2. twelve 60 MiB partial bodies ------------------------------------------------------------
before=$(status_kib "$TCP_PID" VmRSS)
bg "$O.bodies" $UA "$PY" "$HOSTILE" "$TCP_AT" bigbodies 12 60 "$TMP/stop.bodies"
wait_for "twelve bodies sent" 240 grep -q "bodies_done=12" "$O.bodies" || true
check "the attacker sent its twelve bodies ($(grep -c 'closed=yes' "$O.bodies") closed under it)" \
    grep -q "bodies_done=12" "$O.bodies"
peak=$(status_kib "$TCP_PID" VmHWM)
now=$(status_kib "$TCP_PID" VmRSS)
echo "figure: extender RSS before the bodies ${before} KiB, peak ${peak} KiB, while held ${now} KiB"
# Under AddressSanitizer the allocator's quarantine and shadow memory are most of the figure, and
# they are ASan's, not the extender's: the bound is checked in the plain build (make test).
# ldd's whole answer first: under pipefail, `ldd | grep -q` fails when grep leaves early and ldd
# gets SIGPIPE, and the RSS bound was then checked in the ASan run (CI's asan stage failed so).
EXT_LIBS=$(ldd "$EXT" 2>/dev/null || true)
if grep -q 'libasan\|libtsan' <<<"$EXT_LIBS"; then
    echo "figure: sanitizer build: the RSS bound is checked in the plain build only"
else
    check "peak RSS $((peak / 1024)) MiB <= $((before / 1024)) MiB before + ${BUDGET_MIB} MiB budget + ${MARGIN_MIB} MiB" \
        test "$peak" -le $((before + (BUDGET_MIB + MARGIN_MIB) * 1024))
fi
"$PY" "$HOSTILE" "$TCP_AT" filter 5 >"$O.filter2" 2>&1 || true
check "filter requests while the bodies are held: all answered ($(kv "$O.filter2" filter_ok) of 5)" \
    grep -q "filter_ok=5$" "$O.filter2"
touch "$TMP/stop.bodies"

# ---- 3. the UNIX socket's mode --------------------------------------------------------------------
mkdir -m 0755 "$TMP/sock"
( umask 0; start_extender unix --socket "$TMP/sock/ext.sock" && echo "$EXT_PID" >"$TMP/unix.pid" )
[ -s "$TMP/unix.pid" ] && BG_PIDS+=("$(cat "$TMP/unix.pid")")
check "the UNIX socket is 0660 though the extender started with umask 0 ($(stat -c %a "$TMP/sock/ext.sock" 2>&1))" \
    test "$(stat -c %a "$TMP/sock/ext.sock" 2>/dev/null)" = 660

if [ "$FAILS" -ne 0 ]; then
    echo "--- extender stderr ---"; tail -n 20 "$TMP/tcp.err"
    echo "--- attacker ---"; tail -n 5 "$O.trickle" "$O.bodies" 2>/dev/null
fi
finish

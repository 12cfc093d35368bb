# test_idle.sh — a client that connects and then says nothing costs the daemon nothing and is
# closed after --api-idle-timeout (control socket) or 10 s (metrics over TCP), while nothing
# else happens on the daemon; event followers waiting for events are exempt.
#
# The bug this guards: the daemon ran its HTTP server (libmicrohttpd, external epoll) only on
# events of its epoll fd, never when the server's own timeout came due. A silent connection then
# stayed open for good, and from its deadline on the event loop spun on a zero timeout. The
# checks below wait for the close (their deadline only bounds a hang); before the fix they
# failed every time.
. "${CONVGPU_SOURCE_DIR:?}/tests/e2e/lib.sh"

for bad in 0 3601 -1 1.5 abc ''; do
    rc=0
    out=$("$BUILD/bin/convgpud" --runtime-dir "$TMP/bad" --foreground --emulate 1GiB \
        --api-idle-timeout "$bad" 2>&1) || rc=$?
    check "convgpud --api-idle-timeout '$bad': refused (exit $rc: $out)" \
        bash -c "[ $rc -eq 2 ] && grep -q 'api-idle-timeout takes whole seconds from 1 to 3600' <<<'$out'"
done

PORT=$((20000 + RANDOM % 20000))
start_daemon --emulate 1GiB --api-idle-timeout 1 --metrics "127.0.0.1:$PORT"

# A silent client (python3; the cleanup stops it, its arguments name $TMP) connects, sends half a
# request and waits; it writes "closed" to $TMP/NAME when the daemon closes the connection.
silent() { # silent NAME unix PATH | silent NAME tcp PORT
    python3 - "$TMP/$1" "$2" "$3" <<'PY' &
import socket, sys
out, kind, where = sys.argv[1:]
if kind == "unix":
    s = socket.socket(socket.AF_UNIX)
    s.connect(where)
else:
    s = socket.create_connection(("127.0.0.1", int(where)))
s.sendall(b"GET /v1/version HTTP/1.1\r\nHost: convgpu\r\n")  # no blank line: never complete
open(out + ".open", "w").close()
s.settimeout(600)  # only bounds a hang; the daemon's timeout ends it
try:
    while s.recv(4096):
        pass
    open(out, "w").write("closed\n")
except OSError as e:
    open(out, "w").write("error %s\n" % e)
PY
}

next=$(api GET /v1/events | grep -o '"next":[0-9]*' | cut -d: -f2)
curl -sN --unix-socket "$RUNDIR/control.sock" "http://convgpu/v1/events?follow=1&since=$next" \
    >"$TMP/follow" 2>&1 &
FOLLOWER=$!

silent ctl unix "$RUNDIR/control.sock"
wait_for "the silent client connected" "$WAIT_S" test -e "$TMP/ctl.open"
wait_for "the daemon closes the silent control-socket connection" "$WAIT_S" test -s "$TMP/ctl" || true
check "a silent control-socket connection is closed after --api-idle-timeout ($(cat "$TMP/ctl" 2>/dev/null || echo 'still open'))" \
    grep -qx closed "$TMP/ctl"

silent tcp tcp "$PORT"
wait_for "the silent metrics client connected" "$WAIT_S" test -e "$TMP/tcp.open"
wait_for "the daemon closes the silent metrics connection" "$WAIT_S" test -s "$TMP/tcp" || true
check "a silent metrics (TCP) connection is closed after its timeout ($(cat "$TMP/tcp" 2>/dev/null || echo 'still open'))" \
    grep -qx closed "$TMP/tcp"

check "the follower, waiting for events all along, is still connected" kill -0 "$FOLLOWER"
cg create --gpu-memory 64MiB --name after >/dev/null || fail "create after"
wait_for "the follower sees the new container's events" "$WAIT_S" grep -q '"container"' "$TMP/follow" || true
check "... and still receives events" grep -q '"container"' "$TMP/follow"
answers() { cg ps >/dev/null; }
check "the control socket still answers" answers
finish

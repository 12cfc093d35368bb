# lib.sh — shared helpers for end-to-end tests: a private daemon on the emulated GPU in a
# temporary runtime directory, polling helpers, and cleanup that leaves nothing running.
# Each test script sources this, calls start_daemon, and uses `cg` (the CLI) and `api` (curl).
# Tests wait for conditions, never for durations: a state a check inspects is held until the test
# releases it (convgpu-sample --hold-until "$TMP/release.NAME", ip_probe hold SIZE FILE), and
# every wait_for deadline is generous (WAIT_S): it only bounds a hang, on a loaded machine too.
set -eu

BUILD=${CONVGPU_BUILD_DIR:?CONVGPU_BUILD_DIR must point at the build tree}
TMP=$(mktemp -d /tmp/convgpu-e2e.XXXXXX)
RUNDIR=$TMP/run
DAEMON_PID=
DAEMON_LOG=$TMP/daemon.log
export CONVGPU_EMU_STATE=$RUNDIR/emu/state
FAILS=0
PASSES=0
WAIT_S=60 # the deadline of a wait that should end at once: only bounds a hang

cleanup() {
    set +e
    if [ -n "$DAEMON_PID" ]; then kill -TERM "$DAEMON_PID" 2>/dev/null; wait "$DAEMON_PID" 2>/dev/null; fi
    # Anything the test started in its process group is ours to stop.
    pkill -KILL -f "$TMP" 2>/dev/null
    if [ "$FAILS" -ne 0 ] || [ -n "${KEEP_TMP:-}" ]; then
        echo "--- daemon log ($DAEMON_LOG) ---"; tail -n 60 "$DAEMON_LOG" 2>/dev/null
    fi
    rm -rf "$TMP"
}
trap cleanup EXIT

fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }
pass() { echo "ok: $*"; PASSES=$((PASSES + 1)); }
check() { # check DESCRIPTION COMMAND...
    local what=$1; shift
    if "$@"; then pass "$what"; else fail "$what"; fi
}

cg() { "$BUILD/bin/convgpu" --runtime-dir "$RUNDIR" "$@"; }
api() { # api METHOD PATH [BODY] -> prints "STATUS BODY"
    local out
    out=$(curl -s -o "$TMP/api.out" -w '%{http_code}' --unix-socket "$RUNDIR/control.sock" \
        -X "$1" ${3:+-H 'Content-Type: application/json' --data "$3"} "http://convgpu$2") || true
    echo "$out $(cat "$TMP/api.out" 2>/dev/null)"
}

start_daemon() { # start_daemon [convgpud args...]; default: emulated 5GiB, 66MiB context
    mkdir -p "$RUNDIR"
    CONVGPU_EMU_CONTEXT=${CONVGPU_EMU_CONTEXT:-66MiB} \
        "$BUILD/bin/convgpud" --runtime-dir "$RUNDIR" --foreground --log-level debug \
        ${*:---emulate 5GiB} >>"$DAEMON_LOG" 2>&1 &
    DAEMON_PID=$!
    # The socket file may be a dead daemon's leftover: wait until the new one answers.
    # A daemon that never answers is a failure: counted, so that cleanup prints its log.
    wait_for "daemon answering on its control socket" "$WAIT_S" \
        curl -sf -o /dev/null --unix-socket "$RUNDIR/control.sock" http://convgpu/v1/version \
        || { fail "convgpud (pid $DAEMON_PID) did not answer on $RUNDIR/control.sock"; return 1; }
}

stop_daemon_hard() { kill -KILL "$DAEMON_PID"; wait "$DAEMON_PID" 2>/dev/null || true; DAEMON_PID=; }

wait_for() { # wait_for DESCRIPTION SECONDS COMMAND... (polls every 20 ms; SECONDS bounds a hang)
    local what=$1 secs=$2; shift 2
    local deadline=$(( $(date +%s%N) + secs * 1000000000 ))
    while ! "$@" >/dev/null 2>&1; do
        if [ "$(date +%s%N)" -gt "$deadline" ]; then
            echo "timed out after ${secs}s waiting for: $what"; return 1
        fi
        sleep 0.02
    done
}

# wait_for runs its command on every poll, so give it a command, never "$(...)": bash expands
# that once, before the first poll, and the wait then tests a value frozen at the call.
# prints EXPECTED COMMAND... : COMMAND prints exactly EXPECTED (wait_for X 60 prints 0 count).
prints() { local want=$1; shift; [ "$("$@" 2>/dev/null)" = "$want" ]; }

# A process that lives until the test kills it (a container's init, say). Run it in the
# background: `idle_process & pid=$!`. Its command line names $TMP, so cleanup stops it too.
idle_process() { exec -a "convgpu-test-idle $TMP" sleep infinity; }

# jq is not assumed: small JSON field reads go through python3 if present, else grep.
json_get() { # json_get FIELD  (reads a JSON object on stdin, prints a top-level field)
    python3 -c 'import json,sys; v=json.load(sys.stdin).get(sys.argv[1]); print("" if v is None else v)' "$1"
}

container_field() { # container_field ID FIELD
    cg inspect "$1" 2>/dev/null | json_get "$2"
}

# has_event TYPE CONTAINER [REASON]: the daemon's events (GET /v1/events) hold an event of TYPE
# about CONTAINER (its name or id), with REASON when one is given. Checks read what happened
# here or in inspect, not in the log, whose wording is for people and may change.
has_event() {
    local id body
    id=$(container_field "$2" id)
    body=$(api GET '/v1/events?since=0')
    python3 -c '
import json, sys
kind, names, reason = sys.argv[1], {sys.argv[2], sys.argv[3]}, sys.argv[4]
events = json.loads(sys.stdin.read().split(" ", 1)[1])["events"]
sys.exit(not any(e["type"] == kind and e["container"] in names
                 and (not reason or e.get("reason") == reason) for e in events))
' "$1" "$2" "${id:-$2}" "${3:-}" <<<"$body"
}

finish() { # a test that ran no check proves nothing: it fails
    echo "$PASSES passed, $FAILS failed"
    [ "$PASSES" -gt 0 ] || echo "FAIL: no check ran"
    [ "$FAILS" -eq 0 ] && [ "$PASSES" -gt 0 ]
}

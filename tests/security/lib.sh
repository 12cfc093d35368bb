# lib.sh — helpers for the security tests, on top of tests/e2e/lib.sh (start_daemon, api, cg,
# wait_for, check/pass/fail/finish). Adds: processes run as another uid, background clients
# tracked by pid (cleanup stops exactly those), JSON snapshots of containers and devices.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../e2e/lib.sh"
set -o pipefail

CLIENT=$BUILD/bin/proto_client
[ -x "$CLIENT" ] || { echo "SKIP: $CLIENT not built"; exit 77; }
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (runs clients as other uids)"; exit 77; }
command -v setpriv >/dev/null || { echo "SKIP: setpriv (util-linux) missing"; exit 77; }
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
# Clients run as other uids must reach the runtime directory (the daemon keeps its own modes below).
chmod 0755 "$TMP"
BG_PIDS=()

cleanup() { # replaces e2e's: stops the processes this test started, by pid, then the daemon
    set +e
    local p
    for p in "${BG_PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; done
    for p in "${BG_PIDS[@]}"; do wait "$p" 2>/dev/null; done
    if [ -n "$DAEMON_PID" ]; then kill -TERM "$DAEMON_PID" 2>/dev/null; wait "$DAEMON_PID" 2>/dev/null; fi
    if [ "$FAILS" -ne 0 ] || [ -n "${KEEP_TMP:-}" ]; then
        echo "--- daemon log ($DAEMON_LOG) ---"; tail -n 80 "$DAEMON_LOG" 2>/dev/null
    fi
    rm -rf "$TMP"
}
trap cleanup EXIT

as_uid() { local u=$1; shift; setpriv --reuid="$u" --regid="$u" --clear-groups "$@"; }

bg() { # bg OUTFILE UID CMD... : start CMD as UID in the background, output to OUTFILE; its pid
    # (setpriv execs CMD, so it is CMD's own) is tracked and left in $BGPID
    local out=$1 u=$2; shift 2
    setpriv --reuid="$u" --regid="$u" --clear-groups "$@" >"$out" 2>&1 &
    BGPID=$!
    BG_PIDS+=("$BGPID")
}

kv() { # kv FILE KEY : the last value of KEY=value in FILE
    grep -o "\b$2=[^ ]*" "$1" | tail -n 1 | cut -d= -f2
}

create_for() { # create_for NAME SIZE UID : a container for another user; prints its id
    local out
    out=$(api POST /v1/containers "{\"gpu_memory\":\"$2\",\"name\":\"$1\",\"uid\":$3,\"gid\":$3}")
    [ "${out%% *}" = 201 ] || { echo "cannot create $1: $out" >&2; return 1; }
    "$PY" -c 'import json,sys; print(json.loads(sys.argv[1].split(" ",1)[1])["id"])' "$out"
}

snap() { # snap ID : limit, assigned, used, state and the process list of a container, one line
    api GET "/v1/containers/$1" | cut -d' ' -f2- | "$PY" -c '
import json, sys
c = json.load(sys.stdin)
procs = sorted((p["pid"], p["slot"], p["used"]) for p in c["process_list"])
print(c["limit"], c["assigned"], c["used"], c["state"], c["pending"], procs)'
}

world() { # world : every container and device, as the API lists them (volatile fields dropped)
    { api GET /v1/containers; api GET /v1/devices; } | cut -d' ' -f2- | "$PY" -c '
import json, sys
for line in sys.stdin:
    v = json.loads(line)
    for o in v:
        o.pop("suspended_total_s", None); o.pop("suspended_for_s", None)
    print(json.dumps(v, sort_keys=True))'
}

fd_count() { ls "/proc/$DAEMON_PID/fd" | wc -l; }
daemon_alive() { kill -0 "$DAEMON_PID" 2>/dev/null; }

# Tests with a control group: ctl_group PREFIX makes a real group for the test (CTL, CTL_GID;
# the test's cleanup removes it with groupdel "$CTL"), `as UID CMD...` runs CMD as a member,
# `capi UID METHOD PATH [BODY]` calls the control API as one ("STATUS BODY", like api), and
# status / id_of read such an answer.
ctl_group() {
    CTL=$1-$$
    command -v groupadd >/dev/null || { echo "SKIP: groupadd missing"; exit 77; }
    groupadd "$CTL" || { echo "SKIP: cannot create groups"; exit 77; }
    CTL_GID=$(getent group "$CTL" | cut -d: -f3)
}
as() { local u=$1; shift; setpriv --reuid="$u" --regid="$u" --groups="$CTL_GID" "$@"; }
capi() {
    local u=$1 out; shift
    out=$(as "$u" curl -s -m 30 -w ' %{http_code}' --unix-socket "$RUNDIR/control.sock" -X "$1" \
        ${3:+-H 'Content-Type: application/json' --data "$3"} "http://convgpu$2") || true
    echo "${out##* } ${out% *}"
}
status() { echo "${1%% *}"; }
id_of() { grep -o '"id":"[^"]*"' <<<"$1" | head -n 1 | cut -d'"' -f4 || true; }

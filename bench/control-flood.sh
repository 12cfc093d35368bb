#!/usr/bin/env bash
# control-flood.sh — issue #35's target: under the worst control-socket flood one tenant can
# send, another tenant's `convgpu ps` (GET /v1/containers) and container create (POST, then
# DELETE) stay at or under 10 ms p99. A private daemon on the emulated GPU (--control-group);
# the attacker A (uid 1101) and the victim V (uid 1102) are members of the group, neither root
# nor an operator. Conditions, interleaved round by round so that the machine's drift falls on
# all of them alike:
#   none     nobody else connected
#   silent   A holds 256 silent connections (it gets 32; the rest are told 429)
#   trickle  A trickles a request into 256 connections, a byte a second
#   follow   A asks for 260 event streams (it gets 4)
# Each round starts the condition, waits until the daemon has answered every attacker connection
# it will answer at once, then times V's requests with curl's time_total (connect, request and
# answer; no process start).
#
#   bench/control-flood.sh BUILD_DIR [ROUNDS] [REQUESTS_PER_ROUND]     (root: setpriv, groupadd)
set -euo pipefail
BUILD=$(cd "${1:?usage: bench/control-flood.sh BUILD_DIR [ROUNDS] [N]}" && pwd)
ROUNDS=${2:-10}
N=${3:-20}
SRC=$(cd "$(dirname "$0")/.." && pwd)
[ "$(id -u)" = 0 ] || { echo "control-flood: needs root (runs clients as other uids)"; exit 77; }
TMP=$(mktemp -d /tmp/convgpu-bench-flood.XXXXXX)
chmod 0755 "$TMP"
RUN=$TMP/run
CTL=cgb-fl-$$
groupadd "$CTL"
DPID=
APID=
cleanup() {
    set +e
    [ -n "$APID" ] && kill "$APID" 2>/dev/null && wait "$APID" 2>/dev/null
    [ -n "$DPID" ] && kill "$DPID" 2>/dev/null && wait "$DPID" 2>/dev/null
    groupdel "$CTL" 2>/dev/null
    rm -rf "$TMP"
}
trap cleanup EXIT
GID=$(getent group "$CTL" | cut -d: -f3)
as() { local u=$1; shift; setpriv --reuid="$u" --regid="$u" --groups="$GID" "$@"; }
mkdir -p "$RUN"
CONVGPU_EMU_CONTEXT=66MiB "$BUILD/bin/convgpud" --runtime-dir "$RUN" --foreground --emulate 8GiB \
    --control-group "$CTL" --user-memory-quota 50% >"$TMP/daemon.log" 2>&1 &
DPID=$!
for _ in $(seq 1 3000); do
    curl -sf -o /dev/null --unix-socket "$RUN/control.sock" http://convgpu/v1/version && break
    sleep 0.02
done
PY=/usr/bin/python3

# Nothing of the previous condition left in the daemon (/metrics, read as root).
quiet() {
    curl -s --unix-socket "$RUN/control.sock" http://convgpu/metrics |
        grep -q '^convgpu_api_tenant_connections 0$'
}
refused_at_least() { local n; n=$(tail -n 1 "$TMP/status" 2>/dev/null | grep -o 'refused=[0-9]*' | cut -d= -f2); [ "${n:-0}" -ge "$1" ]; }
start_attack() { # start_attack MODE N REFUSED : A's flood; returns once the daemon refused what it will
    rm -f "$TMP/release" "$TMP/status"
    for _ in $(seq 1 3000); do quiet && break; sleep 0.02; done
    as 1101 "$PY" "$SRC/tests/security/api_flood.py" "$1" "$RUN/control.sock" "$2" "$TMP/release" 1 \
        >"$TMP/status" 2>&1 &
    APID=$!
    for _ in $(seq 1 3000); do
        refused_at_least "$3" && return 0
        sleep 0.02
    done
    echo "control-flood: the attack never settled: $(tail -n 1 "$TMP/status")" >&2
    return 1
}
stop_attack() { touch "$TMP/release"; wait "$APID" 2>/dev/null || true; APID=; }

time_requests() { # time_requests COND : N list requests and N create+delete pairs, as V
    local i out id
    for i in $(seq 1 "$N"); do
        out=$(as 1102 curl -s -m 30 -o /dev/null -w '%{http_code} %{time_total}' \
            --unix-socket "$RUN/control.sock" http://convgpu/v1/containers)
        [ "${out%% *}" = 200 ] || echo "control-flood: $1: list answered ${out%% *}" >&2
        echo "$1 ps ${out#* }" >>"$TMP/times"
        out=$(as 1102 curl -s -m 30 -w ' %{http_code} %{time_total}' --unix-socket "$RUN/control.sock" \
            -X POST -H 'Content-Type: application/json' --data '{"gpu_memory":"64MiB"}' \
            http://convgpu/v1/containers)
        id=$(grep -o '"id":"[^"]*"' <<<"$out" | head -n 1 | cut -d'"' -f4 || true)
        secs=${out##* }
        code=${out% *}
        code=${code##* }
        [ "$code" = 201 ] || echo "control-flood: $1: create answered $code" >&2
        echo "$1 create $secs" >>"$TMP/times"
        [ -z "$id" ] || as 1102 curl -s -o /dev/null -X DELETE --unix-socket "$RUN/control.sock" \
            "http://convgpu/v1/containers/$id"
    done
}

: >"$TMP/times"
for r in $(seq 1 "$ROUNDS"); do
    time_requests none
    start_attack hold 256 224 && time_requests silent; stop_attack
    start_attack trickle 256 224 && time_requests trickle; stop_attack
    start_attack follow 260 256 && time_requests follow; stop_attack
    echo "round $r of $ROUNDS done" >&2
done

echo "control-flood: $ROUNDS rounds x $N requests per condition and kind; $(nproc) cores; $(date -u +%Y-%m-%d)"
printf '%-8s %-7s %6s %8s %8s %8s\n' condition kind n p50_ms p99_ms max_ms
for cond in none silent trickle follow; do
    for kind in ps create; do
        awk -v c="$cond" -v k="$kind" '$1 == c && $2 == k {print $3}' "$TMP/times" | sort -g |
            awk -v c="$cond" -v k="$kind" '{v[NR] = $1} END {
                if (NR == 0) { printf "%-8s %-7s %6d\n", c, k, 0; exit }
                i99 = int(NR * 0.99) + 1; if (i99 > NR) i99 = NR
                printf "%-8s %-7s %6d %8.2f %8.2f %8.2f\n", c, k, NR, v[int(NR * 0.5) + 1] * 1000,
                       v[i99] * 1000, v[NR] * 1000}'
    done
done

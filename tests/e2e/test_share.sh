#!/usr/bin/env bash
# test_share.sh — a container's compute share through every entry point of a real daemon (two
# emulated GPUs): the control API (create and update), convgpu run/create/set, admission (the
# hard shares on one GPU sum to at most 100; placement finds the GPU that can take one), every
# bad input refused with a clear error and nothing changed (the whole state compared before and
# after), what ps, top, devices, events and /metrics show, a daemon restart (kill -9) that keeps
# every share, a state.db written before shares existed, and the configuration's default share.
. "$(dirname "$0")/lib.sh"
export CONVGPU_EMU_CONTEXT=6MiB
start_daemon --emulate 2x1GiB --placement first-fit

# Everything a share change could touch: each container's device, limit, share and mode, and
# each device's sum of hard shares.
snapshot() {
    python3 - "$RUNDIR/control.sock" <<'PY'
import json, socket, sys
def get(path):
    s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
    s.sendall(f"GET {path} HTTP/1.0\r\nHost: convgpu\r\n\r\n".encode())
    data = b""
    while chunk := s.recv(65536): data += chunk
    return json.loads(data.split(b"\r\n\r\n", 1)[1])
cs = sorted((c["name"], c["device"], c["limit"], c["gpu_compute"], c["compute_mode"])
            for c in get("/v1/containers"))
print(cs, [d["compute_hard_share"] for d in get("/v1/devices")])
PY
}
# field NAME KEY: a top-level field of `convgpu inspect NAME` (null: empty). Read with sed, not
# python: starting python costs more than the daemon's answer, and this test asks ~40 times.
field() {
    cg inspect "$1" 2>/dev/null | sed -n "s/^  \"$2\": \(.*\)\$/\1/p" | sed 's/,$//; s/^"\(.*\)"$/\1/; s/^null$//'
}
code() { cut -d' ' -f1 <<<"$1"; }
hard_sums() { cg devices --json | python3 -c 'import json,sys; print(*[d["compute_hard_share"] for d in json.load(sys.stdin)])'; }

# --- the API: create ---
out=$(api POST /v1/containers '{"gpu_memory":"64MiB","name":"h70","gpu_compute":70,"compute_mode":"hard"}')
check "create with a hard share: 201" test "$(code "$out")" = 201
check "create answers the share" grep -q '"gpu_compute":70,"compute_mode":"hard"' <<<"$out"
check "h70 on GPU 0 (first fit)" test "$(field h70 device)" = 0
out=$(api POST /v1/containers '{"gpu_memory":"64MiB","name":"h50","gpu_compute":50,"compute_mode":"hard"}')
check "a hard 50 goes where it is admitted: GPU 1 (GPU 0 has 30 left)" test "$(code "$out") $(field h50 device)" = "201 1"
out=$(api POST /v1/containers '{"gpu_memory":"64MiB","name":"e100","gpu_compute":100,"compute_mode":"elastic","device":0}')
check "an elastic 100 is admitted against nothing" test "$(code "$out")" = 201
out=$(api POST /v1/containers '{"gpu_memory":"64MiB","name":"none"}')
check "no gpu_compute, no default: no share" test "$(code "$out") $(field none gpu_compute)" = "201 "
out=$(api POST /v1/containers '{"gpu_memory":"64MiB","name":"nomode","gpu_compute":10}')
check "a share without a mode is elastic (the default mode)" test "$(field nomode compute_mode)" = elastic
check "devices show the hard sums 70 and 50" test "$(hard_sums)" = "70 50"

before=$(snapshot)
for body in '{"gpu_memory":"64MiB","gpu_compute":0}' '{"gpu_memory":"64MiB","gpu_compute":101}' \
            '{"gpu_memory":"64MiB","gpu_compute":-5}' '{"gpu_memory":"64MiB","gpu_compute":30.5}' \
            '{"gpu_memory":"64MiB","gpu_compute":30.0}' '{"gpu_memory":"64MiB","gpu_compute":"abc"}' \
            '{"gpu_memory":"64MiB","gpu_compute":"30"}' '{"gpu_memory":"64MiB","gpu_compute":true}' \
            '{"gpu_memory":"64MiB","gpu_compute":[30]}' '{"gpu_memory":"64MiB","gpu_compute":30,"compute_mode":"soft"}' \
            '{"gpu_memory":"64MiB","gpu_compute":30,"compute_mode":1}' '{"gpu_memory":"64MiB","gpu_compute":30,"compute_mode":null}' \
            '{"gpu_memory":"64MiB","gpu_compute":null,"compute_mode":"hard"}' '{"gpu_memory":"64MiB","compute_mode":"hard"}' \
            '{"gpu_memory":"64MiB","gpu_compute":30,"compute":"hard"}'; do
    out=$(api POST /v1/containers "$body")
    if [ "$(code "$out")" = 400 ] && grep -q '"error":".*compute' <<<"$out"; then pass "create refused (400): $body"
    else fail "create $body answered: $out"; fi
done
for body in '{"gpu_memory":"64MiB","gpu_compute":51,"compute_mode":"hard"}' \
            '{"gpu_memory":"64MiB","gpu_compute":31,"compute_mode":"hard","device":0}'; do
    out=$(api POST /v1/containers "$body")
    if [ "$(code "$out")" = 409 ] && grep -q 'hard compute share .* does not fit' <<<"$out"; then pass "admission refused (409): $body"
    else fail "create $body answered: $out"; fi
done
check "refused creations changed nothing" test "$(snapshot)" = "$before"

# --- the API: update (PUT .../limit) ---
for body in '{"gpu_compute":0}' '{"gpu_compute":101}' '{"gpu_compute":-5}' '{"gpu_compute":30.5}' \
            '{"gpu_compute":"abc"}' '{"gpu_compute":"30"}' '{"compute_mode":"soft"}' \
            '{"gpu_compute":null,"compute_mode":"hard"}' '{"gpu_compute":20,"colour":"red"}' '{}' \
            '{"gpu_memory":"lots","gpu_compute":20}'; do
    out=$(api PUT /v1/containers/h70/limit "$body")
    if [ "$(code "$out")" = 400 ] && grep -q '"error"' <<<"$out"; then pass "update refused (400): $body"
    else fail "update $body answered: $out"; fi
done
out=$(api PUT /v1/containers/none/limit '{"compute_mode":"hard"}')
check "a mode for a container without a share: 400" test "$(code "$out")" = 400
out=$(api PUT /v1/containers/e100/limit '{"compute_mode":"hard"}')
check "making the elastic 100 hard breaks admission: 409" test "$(code "$out")" = 409
check "the refusal says what the others hold" grep -q "other containers' hard shares there sum to 70%" <<<"$out"
out=$(api PUT /v1/containers/nomode/limit '{"gpu_compute":31,"compute_mode":"hard"}')
check "a hard 31 beside the hard 70: 409" test "$(code "$out")" = 409
out=$(api PUT /v1/containers/nomode/limit '{"gpu_memory":"32MiB","gpu_compute":31,"compute_mode":"hard"}')
check "limit and a refused share together: 409" test "$(code "$out")" = 409
out=$(api PUT /v1/containers/nomode/limit '{"gpu_memory":"9GiB","gpu_compute":20}')
check "a refused limit and a good share together: 409" test "$(code "$out")" = 409
check "refused updates changed nothing (limits included: all or nothing)" test "$(snapshot)" = "$before"

out=$(api PUT /v1/containers/h70/limit '{"gpu_compute":100}')
check "a hard share may grow into what is left: 200, 100% hard" bash -c "[ '$(code "$out")' = 200 ] && grep -q '\"gpu_compute\":100,\"compute_mode\":\"hard\"' <<<'$out'"
out=$(api PUT /v1/containers/h70/limit '{"gpu_compute":70}')
check "and shrink: its mode kept" test "$(field h70 gpu_compute) $(field h70 compute_mode)" = "70 hard"
out=$(api PUT /v1/containers/nomode/limit '{"gpu_memory":"32MiB","gpu_compute":30,"compute_mode":"hard"}')
check "limit and share in one update" test "$(code "$out") $(field nomode limit) $(field nomode gpu_compute) $(field nomode compute_mode)" = "200 $((32 << 20)) 30 hard"
check "GPU 0 is full: 100" test "$(hard_sums)" = "100 50"
out=$(api PUT /v1/containers/nomode/limit '{"compute_mode":"elastic"}')
check "a mode alone changes the mode of the share" test "$(field nomode gpu_compute) $(field nomode compute_mode)" = "30 elastic"
out=$(api PUT /v1/containers/nomode/limit '{"gpu_compute":null}')
check "null removes the share" test "$(code "$out") $(field nomode gpu_compute)" = "200 "

# --- the CLI: run, create, set ---
cg run --quiet --name r1 --gpu-memory 64MiB --gpu-compute 25 --compute-mode hard -- \
    bash -c "'$BUILD/bin/convgpu' --runtime-dir '$RUNDIR' inspect r1 >'$TMP/r1.json'"
check "run --gpu-compute 25 --compute-mode hard: the container had it" \
    test "$(json_get gpu_compute <"$TMP/r1.json") $(json_get compute_mode <"$TMP/r1.json")" = "25 hard"
check "run's container is gone again" test "$(code "$(api GET /v1/containers/r1)")" = 404
before=$(snapshot)
for bad in "--gpu-compute 0" "--gpu-compute 101" "--gpu-compute -5" "--gpu-compute 30.5" \
           "--gpu-compute abc" "--gpu-compute 30 --compute-mode soft" "--compute-mode hard"; do
    # shellcheck disable=SC2086
    cg run --quiet --gpu-memory 64MiB $bad -- true 2>"$TMP/err" && rc=0 || rc=$?
    check "run $bad: exit 2 with a message" bash -c "[ $rc = 2 ] && grep -q 'compute' '$TMP/err'"
    # shellcheck disable=SC2086
    cg create --gpu-memory 64MiB $bad >/dev/null 2>"$TMP/err" && rc=0 || rc=$?
    check "create $bad: exit 2 with a message" bash -c "[ $rc = 2 ] && grep -q 'compute' '$TMP/err'"
done
cg run --quiet --gpu-memory 64MiB --gpu-compute 60 --compute-mode hard --device 1 -- true 2>"$TMP/err" && rc=0 || rc=$?
check "run with a hard share GPU 1 cannot admit: refused (125), the daemon's reason" \
    bash -c "[ $rc = 125 ] && grep -q 'does not fit on device 1' '$TMP/err'"
check "bad CLI input changed nothing" test "$(snapshot)" = "$before"
cg create --name c1 --gpu-memory 64MiB --gpu-compute 20 --compute-mode hard --device 1 >/dev/null
check "create --gpu-compute 20 --compute-mode hard" test "$(field c1 gpu_compute) $(field c1 compute_mode) $(field c1 device)" = "20 hard 1"
check "set --gpu-compute 30: says so" test "$(cg set c1 --gpu-compute 30)" = "c1: compute share 30% hard"
before=$(snapshot)
for bad in "--gpu-compute 0" "--gpu-compute 101" "--gpu-compute 30.5" "--gpu-compute abc" \
           "--compute-mode soft" "--gpu-compute none --compute-mode hard"; do
    # shellcheck disable=SC2086
    cg set c1 $bad >/dev/null 2>"$TMP/err" && rc=0 || rc=$?
    check "set $bad: exit 2" bash -c "[ $rc = 2 ] && [ -s '$TMP/err' ]"
done
cg set c1 --gpu-compute 51 >/dev/null 2>"$TMP/err" && rc=0 || rc=$?
check "set beyond admission: exit 1, the reason" bash -c "[ $rc = 1 ] && grep -q 'sum to 50%' '$TMP/err'"
cg set c1 --gpu-memory 32MiB --gpu-compute 51 >/dev/null 2>&1 || true
check "refused sets changed nothing (the limit given with a refused share either)" test "$(snapshot)" = "$before"
cg set c1 --compute-mode elastic >/dev/null
cg set c1 --gpu-compute 51 >/dev/null
check "set --compute-mode elastic, then 51 fits" test "$(field c1 gpu_compute) $(field c1 compute_mode)" = "51 elastic"
cg set c1 --gpu-compute none >/dev/null
check "set --gpu-compute none removes it" test "$(field c1 gpu_compute)" = ""
cg set c1 --gpu-compute 15 --compute-mode hard >/dev/null

# --- what is shown ---
cg ps >"$TMP/ps.out"
check "ps shows the share" grep -qE '^[0-9a-f]+ +h70 .* 70% hard ' "$TMP/ps.out"
check "ps shows no share as -" grep -qE ' none .* - +0\.0% ' "$TMP/ps.out"
check "ps shows utilisation and throttled time" grep -qE 'COMPUTE +UTIL +THROTTLED$' "$TMP/ps.out"
cg top --once >"$TMP/top.out"
check "top shows shares" grep -q '15% hard' "$TMP/top.out"
check "top shows the devices' hard sums" grep -qE '^1 .* 65% ' "$TMP/top.out"
cg inspect c1 >"$TMP/c1.json"
check "inspect has the measurements (zeros: no process of c1 ran)" python3 -c '
import json,sys; c=json.load(open(sys.argv[1]))
assert (c["compute_busy_s"], c["compute_throttled_s"], c["compute_throttled_launches"], c["compute_utilization"]) == (0, 0, 0, 0)' "$TMP/c1.json"
cg events --once --json >"$TMP/events.out"
check "events: a compute event per change" test "$(grep -c '"type":"compute","container":"[^"]*","bytes":0,"device":1,"gpu_compute":15,"compute_mode":"hard"' "$TMP/events.out")" = 1
check "events: removing a share is a compute event with gpu_compute null" grep -q '"type":"compute".*"gpu_compute":null' "$TMP/events.out"
cg events --once >"$TMP/events.txt"
check "events text shows the share" grep -qE 'compute +[0-9a-f]+ +15% hard' "$TMP/events.txt"
api GET /metrics | sed '1s/^[0-9]* //' >"$TMP/metrics.txt"
check "metrics valid" python3 "$(dirname "$0")/prom_check.py" <"$TMP/metrics.txt"
check "metrics: share by mode" grep -q 'convgpu_container_compute_share_percent{container="[^"]*",name="h70",device="0",mode="hard"} 70' "$TMP/metrics.txt"
check "metrics: no share is 0 with an empty mode" grep -q 'convgpu_container_compute_share_percent{container="[^"]*",name="none",device="0",mode=""} 0' "$TMP/metrics.txt"
check "metrics: device hard sums" bash -c "grep -q 'convgpu_device_compute_hard_share_percent{device=\"0\",.*} 70$' '$TMP/metrics.txt' && grep -q 'convgpu_device_compute_hard_share_percent{device=\"1\",.*} 65$' '$TMP/metrics.txt'"
for f in convgpu_container_compute_utilization_ratio convgpu_container_compute_throttled_seconds_total \
         convgpu_container_compute_busy_seconds_total convgpu_device_compute_utilization_ratio; do
    check "metrics: $f" grep -q "^$f{.*} 0" "$TMP/metrics.txt"
done

# --- a restart keeps every share ---
before=$(snapshot)
stop_daemon_hard
start_daemon --emulate 2x1GiB --placement first-fit
check "kill -9 and restart: every share, mode and device back" test "$(snapshot)" = "$before"
check "and admission still counts them" test "$(code "$(api POST /v1/containers '{"gpu_memory":"64MiB","gpu_compute":31,"compute_mode":"hard","device":0}')")" = 409

# --- a state.db from before shares: opened, its containers kept, shares then stored ---
stop_daemon_hard
OLD=$TMP/old
mkdir -p "$OLD"
python3 - "$OLD/state.db" <<'PY'
import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1])
db.executescript("""
CREATE TABLE containers (seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE,
  name TEXT NOT NULL, device INTEGER NOT NULL, limit_bytes INTEGER NOT NULL,
  assigned INTEGER NOT NULL, uid INTEGER NOT NULL, gid INTEGER NOT NULL,
  owner_pid INTEGER NOT NULL, auto_remove INTEGER NOT NULL, created_unix INTEGER NOT NULL,
  created_mono INTEGER NOT NULL DEFAULT 0, owner_start INTEGER NOT NULL DEFAULT 0,
  init_pid INTEGER NOT NULL DEFAULT 0);
CREATE TABLE settings (key TEXT PRIMARY KEY, value TEXT NOT NULL);""")
db.execute("INSERT INTO containers (id, name, device, limit_bytes, assigned, uid, gid, owner_pid,"
           " auto_remove, created_unix) VALUES ('oldc', 'old', 0, 67108864, 0, 0, 0, 0, 0, ?)",
           (int(time.time()),))
db.commit()
PY
RUNDIR=$OLD
start_daemon --emulate 1GiB
check "an older state.db opens and keeps its container" test "$(field old limit) $(field old gpu_compute)" = "$((64 << 20)) "
check "the schema was upgraded" grep -q "column compute_pct added" "$DAEMON_LOG"
cg set old --gpu-compute 40 --compute-mode hard >/dev/null
stop_daemon_hard
start_daemon --emulate 1GiB
check "a share set after the upgrade survives a restart" test "$(field old gpu_compute) $(field old compute_mode)" = "40 hard"
stop_daemon_hard
# A state.db edited by hand to hold more hard shares than a GPU admits: the later container
# comes back with its share as an elastic one, and the log says so.
python3 - "$OLD/state.db" <<'PY'
import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1])
db.execute("INSERT INTO containers (id, name, device, limit_bytes, assigned, uid, gid, owner_pid,"
           " auto_remove, created_unix, compute_pct, compute_mode) VALUES ('edited', 'edited', 0,"
           " 67108864, 0, 0, 0, 0, 0, ?, 70, 'hard')", (int(time.time()),))
db.commit()
PY
start_daemon --emulate 1GiB
check "a hard share that no longer fits comes back elastic" test "$(field edited gpu_compute) $(field edited compute_mode) $(field old compute_mode)" = "70 elastic hard"
check "... and the log says so" grep -q "container edited: hard compute share 70% no longer fits on device 0; kept as an elastic share" "$DAEMON_LOG"
stop_daemon_hard

# --- the configuration's default share ---
RUNDIR=$TMP/defaults
printf 'emulate = 1GiB\ndefault-gpu-compute = 30\ndefault-compute-mode = hard\n' >"$TMP/share.conf"
start_daemon --config "$TMP/share.conf"
api POST /v1/containers '{"gpu_memory":"64MiB","name":"d1"}' >/dev/null
check "default-gpu-compute and default-compute-mode apply without gpu_compute" test "$(field d1 gpu_compute) $(field d1 compute_mode)" = "30 hard"
api POST /v1/containers '{"gpu_memory":"64MiB","name":"d2","gpu_compute":null}' >/dev/null
check "gpu_compute null: no share despite the default" test "$(field d2 gpu_compute)" = ""
api POST /v1/containers '{"gpu_memory":"64MiB","name":"d3","compute_mode":"elastic"}' >/dev/null
check "a mode alone takes the default share" test "$(field d3 gpu_compute) $(field d3 compute_mode)" = "30 elastic"
cg create --name d4 --gpu-memory 64MiB --gpu-compute 5 >/dev/null
check "a share without a mode takes default-compute-mode" test "$(field d4 compute_mode)" = hard
stop_daemon_hard
RUNDIR=$TMP/flags
start_daemon --config "$TMP/share.conf" --default-gpu-compute none
api POST /v1/containers '{"gpu_memory":"64MiB","name":"f1"}' >/dev/null
check "--default-gpu-compute none overrides the file" test "$(field f1 gpu_compute)" = ""
stop_daemon_hard
for bad in "default-gpu-compute = 0" "default-gpu-compute = 101" "default-gpu-compute = 30.5" \
           "default-gpu-compute = abc" "default-compute-mode = soft"; do
    printf 'emulate = 1GiB\n%s\n' "$bad" >"$TMP/bad.conf"
    out=$("$BUILD/bin/convgpud" --config "$TMP/bad.conf" --runtime-dir "$TMP/never" --foreground 2>&1) && rc=0 || rc=$?
    check "refused: $bad (exit $rc, names line 2)" bash -c "[ $rc = 2 ] && grep -q 'line 2: default-' <<<'$out'"
done
check "nothing started for them" test ! -e "$TMP/never/control.sock"
check "--help documents the defaults" bash -c "'$BUILD/bin/convgpud' --help | grep -q 'default-gpu-compute PCT' && '$BUILD/bin/convgpud' --help | grep -q 'default-compute-mode'"
finish

#!/bin/bash
# test_publish.sh — `convgpu k8s annotation` and `convgpu k8s publish` against a private convgpud
# on two emulated GPUs and an API server stand-in (apiserver_standin.py) that records every
# request and accepts only what the real one accepts (PATCH /api/v1/nodes/NAME,
# application/merge-patch+json, the bearer token): the annotation's units follow the daemon's
# containers, the PATCH is exactly the real request, over HTTPS with the CA file too, and
# publish --interval follows changes (and says [] when the daemon goes away).
. "$(dirname "$0")/../e2e/lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
UNIT=$((256 << 20))
STANDIN_PIDS=()
PUB_PID=
stop_ours() {
    [ -n "$PUB_PID" ] && kill "$PUB_PID" 2>/dev/null
    for p in "${STANDIN_PIDS[@]}"; do kill "$p" 2>/dev/null; done
    cleanup
}
trap stop_ours EXIT

start_daemon --emulate 4GiB,2GiB || exit 1

# Expected units from the daemon's own answers (capacity / unit, limits and shares subtracted).
expected() { # expected -> the annotation as the rule in annotation.h gives it
    python3 - "$RUNDIR" "$UNIT" <<'EOF'
import json, socket, sys, http.client
class C(http.client.HTTPConnection):
    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX); self.sock.connect(sys.argv[1] + "/control.sock")
def get(p):
    c = C("convgpu"); c.request("GET", p); return json.loads(c.getresponse().read())
unit = int(sys.argv[2])
devs, ctrs, rows = get("/v1/devices"), get("/v1/containers"), get("/v1/interference")
out = []
for d in devs:
    mine = [c for c in ctrs if c["device"] == d["index"]]
    lim = sum(c["limit"] for c in mine)
    share = sum(c["gpu_compute"] or 0 for c in mine)
    prom = d.get("promised", d["capacity"])  # capacity x the sharing factor
    # Nobody waits in these checks (waiting_since 0); the load is rounded to tens.
    waiting = [c for c in mine if c["state"] == "suspended"
               or (c["state"] == "swapped" and c["pending"] > 0)]
    assert not waiting, "expected() assumes nobody waits"
    apps = {}
    keys = {c["profile_key"] for c in mine if c["profile_key"]}
    for r in rows:  # the worst slowdown of each key beside a resident, either way round
        for joiner, present in ((r["foreground"], r["background"]), (r["background"], r["foreground"])):
            if present in keys:
                apps[joiner] = max(apps.get(joiner, 0), r["slowdown"])
    out.append({"index": d["index"], "uuid": d["uuid"],
                "memory_units": {"total": prom // unit, "free": max(prom - lim, 0) // unit,
                                 "max": d["capacity"] // unit},
                "compute_units": {"total": 100, "free": max(100 - share, 0)},
                "unit_bytes": unit,
                "pressure": {"capacity": d["capacity"], "free": min(d["free"], d["capacity"]),
                             "waiting": 0, "waiting_since": 0,
                             "swap_left": d.get("swap_budget_left", 0),
                             "compute_load_pct": min(100, int(d["compute_utilization"] * 10 + 0.5) * 10)},
                "apps": apps})
print(json.dumps(out, sort_keys=True))
EOF
}
run() { out=$("$@" 2>&1) && rc=0 || rc=$?; } # run CMD...: sets out and rc (set -e stays off it)
has() { grep -q -- "$1" <<<"$out"; }
canon() { python3 -c 'import json,sys; print(json.dumps(json.loads(sys.stdin.read()), sort_keys=True))'; }

# ---- annotation ---------------------------------------------------------------------------
ann=$(cg k8s annotation) || fail "convgpu k8s annotation failed"
check "annotation: two GPUs, all free, as the daemon's capacity gives" \
    [ "$(echo "$ann" | canon)" = "$(expected)" ]
check "annotation: GPU 0 has 4GiB minus the reserve in 256MiB units" \
    python3 -c 'import json,sys; a=json.loads(sys.argv[1]); sys.exit(not (a[0]["index"]==0 and 12 <= a[0]["memory_units"]["total"] <= 16 and a[0]["memory_units"]["free"]==a[0]["memory_units"]["total"] and a[1]["compute_units"]=={"total":100,"free":100}))' "$ann"
cg create --gpu-memory 1GiB --device 0 --gpu-compute 30 --name a >/dev/null || fail "create a"
cg create --gpu-memory 300MiB --device 1 --name b >/dev/null || fail "create b"
ann2=$(cg k8s annotation)
check "annotation: containers' limits and shares are taken off their GPU" \
    [ "$(echo "$ann2" | canon)" = "$(expected)" ]
check "annotation: 1GiB is 4 units off GPU 0, 300MiB rounds to 2 off GPU 1, 30% compute" \
    python3 -c 'import json,sys; a=json.loads(sys.argv[1]); b=json.loads(sys.argv[2]); sys.exit(not (b[0]["memory_units"]["free"]==a[0]["memory_units"]["free"]-4 and b[1]["memory_units"]["free"]==(a[1]["memory_units"]["total"]*'$UNIT'-(300<<20))//'$UNIT' and b[0]["compute_units"]["free"]==70))' "$ann" "$ann2"
# Seed 003's matrix: "train" slows down 1.5x beside "infer", "infer" 1.2x beside "train"; with
# a "train" container on GPU 0, an "infer" pod joining GPU 0 is weighed at the worse, 1.5.
api PUT /v1/interference '{"rows": [{"foreground": "train", "background": "infer", "slowdown": 1.5, "runs": 2}, {"foreground": "infer", "background": "train", "slowdown": 1.2, "runs": 2}, {"foreground": "x", "background": "y", "slowdown": 3.0, "runs": 1}]}' >/dev/null
api POST /v1/containers '{"gpu_memory":"256MiB","name":"trainer","device":0,"image":"train"}' >/dev/null
ann3=$(cg k8s annotation)
check "annotation: an infer pod joining the trainer's GPU 0 is weighed at 1.5 (the worse way round), GPU 1 at nothing; unpaired keys absent" \
    python3 -c 'import json,sys; a=json.loads(sys.argv[1]); sys.exit(not (a[0]["apps"]=={"infer":1.5} and a[1]["apps"]=={}))' "$ann3"
check "annotation: pressure and apps follow the rule in annotation.h" \
    [ "$(echo "$ann3" | canon)" = "$(expected)" ]
check "annotation: GPU 0's pressure shows its physical capacity and what is not assigned" \
    python3 -c 'import json,sys; a=json.loads(sys.argv[1]); p=a[0]["pressure"]; sys.exit(not (0 < p["free"] < p["capacity"] and p["waiting"] == 0))' "$ann3"
api DELETE /v1/containers/trainer >/dev/null
api DELETE /v1/interference >/dev/null
ann512=$(cg k8s annotation --memory-unit 512MiB)
check "annotation --memory-unit 512MiB halves the units and says so" \
    python3 -c 'import json,sys; a=json.loads(sys.argv[1]); b=json.loads(sys.argv[2]); sys.exit(not (b[0]["memory_units"]["total"]==a[0]["memory_units"]["total"]//2 and b[0]["unit_bytes"]==512<<20))' "$ann2" "$ann512"

# ---- the extender reads what the publisher writes -------------------------------------------
# GPU 0 has 12 units free, GPU 1 6: a pod of 12 fits, one of 13 fits no single GPU.
"$BUILD/bin/convgpu-scheduler-extender" --socket "$TMP/ext.sock" >"$TMP/ext.out" 2>&1 &
STANDIN_PIDS+=($!)
wait_for "the extender listening" "$WAIT_S" grep -q listening "$TMP/ext.out" || fail "extender"
filter_for() { # filter_for UNITS -> the extender's answer for a pod of UNITS on this node
    python3 -c 'import json,sys; print(json.dumps({"Pod": {"spec": {"containers": [{"name": "c", "resources": {"limits": {"convgpu.io/gpu-memory": sys.argv[1]}}}]}}, "Nodes": {"items": [{"metadata": {"name": "node-1", "annotations": {"convgpu.io/gpus": sys.argv[2]}}}]}}))' "$1" "$ann2" |
        curl -s --unix-socket "$TMP/ext.sock" -X POST --data-binary @- http://extender/filter
}
check "the extender keeps the node for a pod that fits GPU 0 (12 units)" \
    python3 -c 'import json,sys; a=json.loads(sys.argv[1]); sys.exit(not (len(a["Nodes"]["items"])==1 and not a["FailedNodes"] and not a["FailedAndUnresolvableNodes"]))' "$(filter_for 12)"
check "the extender fails the node for 13 units: no single GPU has them" \
    python3 -c 'import json,sys; a=json.loads(sys.argv[1]); sys.exit(not (a["Nodes"]["items"]==[] and "most free on any of the node" in a["FailedNodes"]["node-1"]))' "$(filter_for 13)"

# ---- publish: the request the API server gets --------------------------------------------
standin() { # standin NAME [args...]: starts a stand-in, sets PORT
    local name=$1; shift
    python3 "$HERE/apiserver_standin.py" --node node-1 --port-file "$TMP/$name.port" \
        --log "$TMP/$name.log" "$@" 2>>"$TMP/$name.err" &
    STANDIN_PIDS+=($!)
    wait_for "stand-in $name listening" "$WAIT_S" test -s "$TMP/$name.port" || fail "stand-in $name"
    PORT=$(cat "$TMP/$name.port")
}
printf 's3cret-token\n' >"$TMP/token"
standin plain --token s3cret-token
run cg k8s publish --node node-1 --api-server "http://127.0.0.1:$PORT/" --token-file "$TMP/token" \
    --ca-file ''
check "publish once succeeds" [ "$rc" -eq 0 ]
check "publish says what it set" has 'node-1 convgpu.io/gpus=\['

check "the stand-in got exactly the real request: PATCH /api/v1/nodes/node-1, merge patch, token, the annotation" \
    python3 - "$TMP/plain.log" "$(cg k8s annotation)" <<'EOF'
import json, sys
reqs = [json.loads(l) for l in open(sys.argv[1])]
r = reqs[-1]
ok = (len(reqs) == 1 and r["method"] == "PATCH" and r["path"] == "/api/v1/nodes/node-1"
      and r["headers"]["content-type"] == "application/merge-patch+json"
      and r["headers"]["authorization"] == "Bearer s3cret-token"
      and json.loads(r["body"]) == {"metadata": {"annotations": {"convgpu.io/gpus": sys.argv[2]}}})
sys.exit(not ok)
EOF
printf 'wrong-token\n' >"$TMP/badtoken"
run cg k8s publish --node node-1 --api-server "http://127.0.0.1:$PORT" --token-file "$TMP/badtoken" \
    --ca-file ''
check "a refused token fails (exit 1) with the API server's status and message" \
    test "$rc" -eq 1 -a -n "$(grep "answered 401: Unauthorized" <<<"$out")"
run cg k8s publish --node node-2 --api-server "http://127.0.0.1:$PORT" --token-file "$TMP/token" \
    --ca-file ''
check "an unknown Node fails with the API server's message" has 'answered 404: nodes "node-2" not found'


# ---- over HTTPS with the CA file ----------------------------------------------------------
if command -v openssl >/dev/null; then
    openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=kubernetes" \
        -addext "subjectAltName=IP:127.0.0.1" -keyout "$TMP/tls.key" -out "$TMP/tls.crt" \
        >/dev/null 2>&1 || fail "openssl could not make a certificate"
    standin tls --token s3cret-token --cert "$TMP/tls.crt" --key "$TMP/tls.key"
    check "publish over HTTPS with --ca-file" \
        cg k8s publish --node node-1 --api-server "https://127.0.0.1:$PORT" --token-file "$TMP/token" \
        --ca-file "$TMP/tls.crt" >/dev/null
    run cg k8s publish --node node-1 --api-server "https://127.0.0.1:$PORT" --token-file "$TMP/token" \
        --ca-file ''
    check "an API server the CA does not vouch for is refused" has "certificate"
    # In a pod: the address from the environment, the service account's files by default.
    export KUBERNETES_SERVICE_HOST=127.0.0.1 KUBERNETES_SERVICE_PORT=$PORT
    run cg k8s publish --node node-1 --ca-file "$TMP/tls.crt"
    check "in-cluster defaults: the service account's token file" \
        has "cannot read the token /var/run/secrets/kubernetes.io/serviceaccount/token"
    run cg k8s publish --node node-1 --ca-file "$TMP/tls.crt" --token-file "$TMP/token"
    check "in-cluster defaults: https://\$KUBERNETES_SERVICE_HOST:\$KUBERNETES_SERVICE_PORT" \
        has "node-1 convgpu.io/gpus="
    unset KUBERNETES_SERVICE_HOST KUBERNETES_SERVICE_PORT
else
    echo "skip: openssl missing, HTTPS not tested"
fi

# ---- bad arguments ------------------------------------------------------------------------
for args in "--node Bad_Name --api-server http://127.0.0.1:1" "--api-server http://127.0.0.1:1" \
    "--node n --api-server ftp://x" "--node n --api-server http://127.0.0.1:1 --interval 0" \
    "--node n --memory-unit 1KiB --api-server http://127.0.0.1:1"; do
    # shellcheck disable=SC2086
    run env -u NODE_NAME -u KUBERNETES_SERVICE_HOST "$BUILD/bin/convgpu" --runtime-dir "$RUNDIR" \
        k8s publish $args
    check "publish $args is refused (exit 2)" [ "$rc" -eq 2 ]
done
check "without --api-server outside a pod: exit 2 saying so" \
    bash -c "env -u KUBERNETES_SERVICE_HOST '$BUILD/bin/convgpu' --runtime-dir '$RUNDIR' k8s publish --node n 2>&1 | grep -q 'give --api-server'"
check "convgpu k8s --help names both commands" \
    bash -c "'$BUILD/bin/convgpu' k8s --help | grep -q 'k8s publish' && '$BUILD/bin/convgpu' --help | grep -q k8s"

# ---- publish --interval follows the daemon ------------------------------------------------
standin loop --token s3cret-token
cg k8s publish --node node-1 --api-server "http://127.0.0.1:$PORT" --token-file "$TMP/token" \
    --ca-file '' --interval 1 >"$TMP/pub.out" 2>&1 &
PUB_PID=$!
last_gpus() { # the annotation the stand-in was last given
    python3 -c 'import json,sys; l=[json.loads(x) for x in open(sys.argv[1])]; print(json.loads(l[-1]["body"])["metadata"]["annotations"]["convgpu.io/gpus"])' "$TMP/loop.log" 2>/dev/null
}
publisher_seen() { # on a failed wait: what the publisher said and what the stand-in was given
    echo "--- publisher output ---"; cat "$TMP/pub.out"
    echo "--- annotations the stand-in was given ---"
    python3 -c 'import json,sys
for x in open(sys.argv[1]):
    r = json.loads(x)
    print(r["method"], r["body"] and json.loads(r["body"])["metadata"]["annotations"]["convgpu.io/gpus"])' \
        "$TMP/loop.log" 2>&1
    echo "--- the daemon now: $(cg k8s annotation 2>&1)"
}
now=$(cg k8s annotation)
wait_for "the first PATCH" "$WAIT_S" prints "$now" last_gpus
check "publish --interval PATCHes the annotation" [ "$(last_gpus)" = "$now" ]
cg create --gpu-memory 1GiB --device 1 --name c >/dev/null || fail "create c"
now=$(cg k8s annotation)
wait_for "a PATCH with GPU 1's new free units" "$WAIT_S" prints "$now" last_gpus || publisher_seen
check "a new container is published" [ "$(last_gpus)" = "$now" ]
cg rm c >/dev/null || fail "rm c"
now=$(cg k8s annotation)
wait_for "a PATCH after the container went" "$WAIT_S" prints "$now" last_gpus || publisher_seen
check "a removed container is published" [ "$(last_gpus)" = "$now" ]
stop_daemon_hard
wait_for "a PATCH of [] once the daemon is gone" "$WAIT_S" prints "[]" last_gpus
check "with the daemon gone, the node offers nothing ([])" [ "$(last_gpus)" = "[]" ]
check "the publisher keeps running" kill -0 "$PUB_PID"

# ---- a sharing factor: units of what the GPUs promise, one pod within a GPU's memory -------
start_daemon --emulate 4GiB,2GiB --oversubscribe 2 || exit 1
ann2=$(cg k8s annotation) # a and b are still there (state.db)
check "with --oversubscribe 2: units of the promised memory, limits taken off, max the GPU's" \
    [ "$(echo "$ann2" | canon)" = "$(expected)" ]
check "... twice the total, max the capacity's units" \
    python3 -c 'import json,sys; a=json.loads(sys.argv[1]); b=json.loads(sys.argv[2]); sys.exit(not all(y["memory_units"]["total"]==2*x["memory_units"]["total"] and y["memory_units"]["max"]==x["memory_units"]["total"] for x, y in zip(a, b)))' "$ann" "$ann2"
max0=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])[0]["memory_units"]["max"])' "$ann2")
check "the extender keeps the node for a pod of GPU 0's whole memory ($max0 units)" \
    python3 -c 'import json,sys; a=json.loads(sys.argv[1]); sys.exit(not (len(a["Nodes"]["items"])==1 and not a["FailedNodes"]))' "$(filter_for "$max0")"
check "the extender fails the node for one unit more: promised, but more than a GPU has" \
    python3 -c 'import json,sys; a=json.loads(sys.argv[1]); sys.exit(not (a["Nodes"]["items"]==[] and "node-1" in a["FailedNodes"]))' "$(filter_for $((max0 + 1)))"
finish

#!/usr/bin/env bash
# test_dra_priority.sh — a pod's PriorityClass becomes its claim's convgpu priority, and on a full
# GPU the higher one swaps the lower out instead of waiting (issue 38, item 5). convgpu-dra-driver
# runs with --priority-map 1000000000:9,1000000:5,0:0 against the DRA kubelet stand-in and the API
# server stand-in, which admits pods as the Priority admission plugin does (spec.priority comes
# from the PriorityClass; a value the pod's author writes is refused). Follows two claims on one
# emulated GPU with swap on: pod `low` (class gpu-low, 100 -> priority 0) holds 160 MiB with a real
# process under its claim's CDI edits; pod `high` (class gpu-high, 1000000 -> priority 5) asks for
# 160 MiB that is not free: low's container is swapped out (its state, its bytes on the host, the
# daemon's swapped-out event) and high's process is granted; when high's pod is done and kubelet
# unprepares its claim, low comes back by itself and its process finds every byte. The same with
# an equal priority (a third pod of gpu-low) waits, moves nobody, and runs once low's claim goes. Also: a claim shared by both pods takes the higher; a pod
# annotation asking for priority 9 changes nothing; a consumer the API server no longer has has
# no say; a bad --priority-map is refused before anything starts.
. "$(dirname "$0")/../containers/lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
DRIVER=$BUILD/bin/convgpu-dra-driver
STANDIN=$BUILD/bin/dra-kubelet-standin
PROBE=${DRA_SWAP_PROBE:-}
[ -x "$DRIVER" ] && [ -x "$STANDIN" ] || skip "the DRA driver is not built (grpc++ missing)"
[ -n "$PROBE" ] && [ -x "$PROBE" ] || skip "swap_probe is not built"
command -v unshare >/dev/null && command -v chroot >/dev/null || skip "unshare/chroot missing"
[ "$(id -u)" = 0 ] || skip "mounting a process's CDI edits needs root"

# Bad maps: refused with the reason, exit 2, before the driver touches anything.
for bad in "1000:10" "abc:1" "1000:2,0:4" "1000" ""; do
    "$DRIVER" --node n --api-server http://127.0.0.1:1 --priority-map "$bad" >"$TMP/bad.out" 2>&1 && rc=0 || rc=$?
    check "--priority-map '$bad' refused (exit 2, saying why)" \
        bash -c "[ $rc = 2 ] && grep -q 'priority-map' '$TMP/bad.out'"
done

# 300 MiB with 2 MiB contexts: two 160 MiB processes do not fit together, each fits alone.
export CONVGPU_EMU_CONTEXT=2MiB
SZ=160
start_daemon --emulate 300MiB --oversubscribe 2 --swap yes --swap-limit 1GiB
python3 "$HERE/apiserver_standin.py" --node node-a --port-file "$TMP/api.port" --log "$TMP/api.log" \
    --dra-schema "$HERE/dra_openapi_v1.json" &
API_PID=$!
at_exit "kill $API_PID"
wait_for "the API stand-in listens" "$WAIT_S" test -s "$TMP/api.port"
API=http://127.0.0.1:$(cat "$TMP/api.port")
mkdir -p "$TMP/node-a/registry" "$TMP/cdi"
"$DRIVER" --node node-a --api-server "$API" --token-file "" --ca-file "" \
    --plugin-dir "$TMP/node-a/plugin" --registry-dir "$TMP/node-a/registry" \
    --cdi-dir "$TMP/cdi" --state-dir "$TMP/node-a/state" --runtime-dir "$RUNDIR" \
    --poll-ms 100 --no-publish --priority-map 1000000000:9,1000000:5,0:0 >>"$TMP/driver.log" 2>&1 &
at_exit "kill $!"
SOCK=$TMP/node-a/plugin/dra.sock
wait_for "the driver serves dra.sock" "$WAIT_S" test -S "$SOCK" || fail "no dra.sock ($(cat "$TMP/driver.log"))"

# k8s METHOD PATH [BODY]: one request to the stand-in; prints the answer, fails on an error.
k8s() {
    python3 - "$API" "$@" <<'PY'
import json, sys, urllib.request, urllib.error
api, method, path = sys.argv[1:4]
body = sys.argv[4].encode() if len(sys.argv) > 4 else None
req = urllib.request.Request(api + path, body, method=method, headers={"Content-Type": "application/json"})
try:
    print(urllib.request.urlopen(req).read().decode())
except urllib.error.HTTPError as e:
    print(e.read().decode()); sys.exit(1)
PY
}
field() { python3 -c 'import json,sys; o=json.load(sys.stdin)
for k in sys.argv[1].split("."): o=o[k]
print(o)' "$1"; }
k8s POST /apis/scheduling.k8s.io/v1/priorityclasses \
    '{"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass","metadata":{"name":"gpu-high"},"value":1000000}' >/dev/null
k8s POST /apis/scheduling.k8s.io/v1/priorityclasses \
    '{"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass","metadata":{"name":"gpu-low"},"value":100}' >/dev/null
# make_pod NAME CLASS [ANNOTATIONS-JSON]: prints the pod's UID
make_pod() {
    local ann=${3:-}
    [ -n "$ann" ] || ann='{}'
    k8s POST /api/v1/namespaces/team-a/pods "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"$1\",\"annotations\":$ann},\"spec\":{\"priorityClassName\":\"$2\",\"containers\":[{\"name\":\"c\",\"image\":\"x\"}]}}" |
        field metadata.uid
}
# An author who writes a priority is refused at admission: the value is the administrators'.
k8s POST /api/v1/namespaces/team-a/pods '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"sneaky"},"spec":{"priorityClassName":"gpu-low","priority":2000000000,"containers":[{"name":"c","image":"x"}]}}' >"$TMP/sneaky" && rc=0 || rc=$?
check "the stand-in's admission refuses a pod that writes spec.priority itself" \
    bash -c "[ $rc = 1 ] && grep -q 'must not be provided in pod spec' '$TMP/sneaky'"
POD_LOW=$(make_pod low gpu-low '{"convgpu.io/priority":"9","com.convgpu.priority":"9"}')
POD_HIGH=$(make_pod high gpu-high)
POD_PEER=$(make_pod peer gpu-low)

# make_claim NAME POD=UID...: a claim of 256Mi of gpu-0, allocated and reserved for the pods
make_claim() {
    python3 - "$API/apis/resource.k8s.io/v1" "$@" <<'PY'
import json, sys, urllib.request
r, name = sys.argv[1:3]
pods = [p.split("=", 1) for p in sys.argv[3:]]
def call(method, path, body):
    req = urllib.request.Request(r + path, json.dumps(body).encode(), method=method,
                                 headers={"Content-Type": "application/json"})
    return json.load(urllib.request.urlopen(req))
caps = {"memory": "256Mi"}
claim = call("POST", "/namespaces/team-a/resourceclaims", {
    "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": name},
    "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
        "deviceClassName": "gpu.convgpu.io", "capacity": {"requests": caps}}}]}}})
claim["status"] = {"allocation": {"devices": {"results": [{
    "request": "gpu", "driver": "gpu.convgpu.io", "pool": "node-a", "device": "gpu-0",
    "consumedCapacity": caps}]}},
    "reservedFor": [{"resource": "pods", "name": n, "uid": u} for n, u in pods]}
call("PUT", "/namespaces/team-a/resourceclaims/%s/status" % name, claim)
print(claim["metadata"]["uid"])
PY
}
prepare() { "$STANDIN" prepare --socket "$SOCK" "team-a/$1/$2" >"$TMP/prep-$1" 2>&1 && grep -q "^$2 request=gpu" "$TMP/prep-$1"; }
C_LOW=$(make_claim claim-low "low=$POD_LOW")
C_HIGH=$(make_claim claim-high "high=$POD_HIGH")
C_PEER=$(make_claim claim-peer "peer=$POD_PEER")
C_SHARED=$(make_claim claim-shared "low=$POD_LOW" "high=$POD_HIGH")
C_GONE=$(make_claim claim-gone "low=$POD_LOW" "vanished=0f0f0f0f-1111-2222-3333-444444444444")
for c in "claim-low $C_LOW" "claim-high $C_HIGH" "claim-peer $C_PEER" "claim-shared $C_SHARED" "claim-gone $C_GONE"; do
    set -- $c
    check "prepared $1" prepare "$1" "$2"
done
check "claim-low: pod low's class gpu-low (100) gives priority 0, its annotations asking for 9 count for nothing" \
    test "$(container_field "dra-$C_LOW" priority)" = 0
check "claim-high: pod high's class gpu-high (1000000) gives priority 5" \
    test "$(container_field "dra-$C_HIGH" priority)" = 5
check "claim-shared (low and high): the higher, 5" test "$(container_field "dra-$C_SHARED" priority)" = 5
check "claim-gone (low and a pod the API server no longer has): 0" \
    test "$(container_field "dra-$C_GONE" priority)" = 0
check "the driver read the pods from the API server" grep -q '"path": "/api/v1/namespaces/team-a/pods/high"' "$TMP/api.log"
"$STANDIN" unprepare --socket "$SOCK" "team-a/claim-shared/$C_SHARED" "team-a/claim-gone/$C_GONE" >/dev/null 2>&1 || true
wait_for "the shared claims' containers gone" "$WAIT_S" prints 3 registered_count || fail "unprepare left containers"

# Processes in pods, under their claim's CDI edits (own mount namespace and root).
ROOTFS_EXTRA=$PROBE make_rootfs "$TMP/img"
in_pod() { # in_pod CLAIM-UID CMD...
    local uid=$1 script; shift
    script=$(python3 "$HERE/cdi_apply.py" --cdi-dir "$TMP/cdi" --device "gpu.convgpu.io/claim=$uid" --script "$TMP/img") || return 99
    unshare --mount --propagation private bash -c "$script"'
        root=$1; shift
        # /proc as a runtime gives it: a sanitized build reads its options from /proc/self/environ
        # (without it ASan died at start in the sanitizer run, and the pods never became ready)
        mount -t proc proc "$root/proc"
        exec chroot "$root" /usr/bin/env -i PATH=/usr/local/bin:/usr/bin:/bin CONVGPU_EMU_CONTEXT=2MiB "${CDI_ENV[@]}" "$@"' \
        in-pod "$TMP/img" ${SAN_ENV[@]+"${SAN_ENV[@]}"} "$@"
}
probe() { in_pod "$1" /usr/local/bin/swap_probe big "/tmp/$2.go" "$SZ" >"$TMP/$2.out" 2>&1; } # probe CLAIM NAME
ready() { grep -q '^ready$' "$1"; }
is() { test "$(container_field "$1" "$2")" = "$3"; }
at_exit "touch '$TMP/img/tmp/low.go' '$TMP/img/tmp/high.go' '$TMP/img/tmp/peer.go' '$TMP/img/tmp/low2.go'"

probe "$C_LOW" low &
LOW=$!
wait_for "pod low holds ${SZ} MiB" "$WAIT_S" ready "$TMP/low.out" || fail "low never ready: $(cat "$TMP/low.out")"
probe "$C_HIGH" high &
HIGH=$!
wait_for "pod high granted" "$WAIT_S" ready "$TMP/high.out" && pass "the higher priority's ${SZ} MiB were granted" \
    || fail "high never ran: $(cat "$TMP/high.out"); low is $(container_field "dra-$C_LOW" state)"
check "low's container is swapped out" is "dra-$C_LOW" state swapped
check "low's ${SZ} MiB are on the host" test "$(container_field "dra-$C_LOW" swapped_bytes)" -ge $((SZ << 20))
cg events --once --json >"$TMP/events"
check "the daemon's events: low's container swapped out" bash -c "grep 'swapped-out' '$TMP/events' | grep -q 'dra-$C_LOW'"
check "high's container is in, not waiting" is "dra-$C_HIGH" swap in
touch "$TMP/img/tmp/high.go"
rc=0; wait $HIGH || rc=$?
check "high checked its bytes (rc $rc)" test "$rc" = 0
# High's pod is done: kubelet unprepares its claim, its container goes with what it was assigned.
"$STANDIN" unprepare --socket "$SOCK" "team-a/claim-high/$C_HIGH" >"$TMP/unprep-high" 2>&1 || true
check "claim-high unprepared" grep -qx "$C_HIGH ok" "$TMP/unprep-high"
wait_for "low back in by itself" "$WAIT_S" is "dra-$C_LOW" swap in || fail "low stayed $(container_field "dra-$C_LOW" swap)"
touch "$TMP/img/tmp/low.go"
rc=0; wait $LOW || rc=$?
check "low's ${SZ} MiB bit-identical after the round trip (rc $rc, $(tail -n1 "$TMP/low.out"))" \
    test "$rc" = 0 -a "$(tail -n1 "$TMP/low.out")" = ok

# Equal priorities (low and peer, both gpu-low): the second waits, nobody moves.
probe "$C_LOW" low2 &
LOW=$!
wait_for "pod low holds ${SZ} MiB again" "$WAIT_S" ready "$TMP/low2.out" || fail "low never ready"
probe "$C_PEER" peer &
PEER=$!
wait_for "pod peer waits" "$WAIT_S" is "dra-$C_PEER" state suspended && pass "an equal priority waits" \
    || fail "peer is $(container_field "dra-$C_PEER" state)"
check "low was not moved for it" is "dra-$C_LOW" swap in
check "peer's process is not running yet" bash -c "! grep -q '^ready$' '$TMP/peer.out'"
touch "$TMP/img/tmp/low2.go"
rc=0; wait $LOW || rc=$?
check "low done (rc $rc)" test "$rc" = 0
"$STANDIN" unprepare --socket "$SOCK" "team-a/claim-low/$C_LOW" >"$TMP/unprep-low" 2>&1 || true
check "claim-low unprepared" grep -qx "$C_LOW ok" "$TMP/unprep-low"
wait_for "peer granted once low is done" "$WAIT_S" ready "$TMP/peer.out" || fail "peer never ran"
touch "$TMP/img/tmp/peer.go"
rc=0; wait $PEER || rc=$?
check "peer's bytes (rc $rc)" test "$rc" = 0
finish

#!/usr/bin/env bash
# test_dra_containerd.sh — a claim prepared by convgpu-dra-driver starts a real container through
# a private real containerd 1.6 (k8s.dra_containerd; run under flock /tmp/convgpu-integ.lock):
# the DRA kubelet stand-in prepares a claim for memory 2Gi (allocated in the API server stand-in as
# the scheduler writes it), and `ctr run` gets the claim's CDI device as a CDI-aware runtime
# applies it (containerd 1.6 has no CDI: tests/k8s/cdi_apply.py --ctr turns the spec's mounts and
# variables into ctr's --mount and --env, the CDI variables after the pod's own) with plain runc,
# no convgpu runtime. Inside, the emulated GPU shows 2 GiB and 2100MiB is refused, with the pod's
# own CONVGPU_GPU_MEMORY=7GiB and CONVGPU_DISABLE=1; a running container's memory is counted in
# the claim's convgpud container. Skips (77) where containerd cannot run.
. "$(dirname "$0")/../containers/lib.sh"
. "$(dirname "$0")/containerd_lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
DRIVER=$BUILD/bin/convgpu-dra-driver
STANDIN=$BUILD/bin/dra-kubelet-standin
[ -x "$DRIVER" ] && [ -x "$STANDIN" ] || skip "the DRA driver is not built (grpc++ missing)"
command -v containerd >/dev/null || skip "containerd is not installed (apt-get install containerd)"

start_daemon --emulate 4GiB
python3 "$HERE/apiserver_standin.py" --node node-a --port-file "$TMP/api.port" --log /dev/null \
    --dra-schema "$HERE/dra_openapi_v1.json" &
API_PID=$!
at_exit "kill $API_PID"
wait_for "the API stand-in listens" "$WAIT_S" test -s "$TMP/api.port"
R=http://127.0.0.1:$(cat "$TMP/api.port")/apis/resource.k8s.io/v1
mkdir -p "$TMP/registry" "$TMP/cdi"
"$DRIVER" --node node-a --api-server "${R%/apis/*}" --token-file "" --ca-file "" \
    --plugin-dir "$TMP/plugin" --registry-dir "$TMP/registry" --cdi-dir "$TMP/cdi" \
    --state-dir "$TMP/state" --runtime-dir "$RUNDIR" --poll-ms 1000 >"$TMP/driver.log" 2>&1 &
DRIVER_PID=$!
at_exit "kill $DRIVER_PID"
"$STANDIN" register --registry "$TMP/registry" >/dev/null || fail "the driver did not register"
UID1=$(python3 - "$R" <<'PY'
import json, sys, urllib.request
r = sys.argv[1]
def call(method, path, body):
    req = urllib.request.Request(r + path, json.dumps(body).encode(), method=method,
                                 headers={"Content-Type": "application/json"})
    return json.load(urllib.request.urlopen(req))
caps = {"memory": "2Gi"}
c = call("POST", "/namespaces/team-a/resourceclaims", {"apiVersion": "resource.k8s.io/v1",
         "kind": "ResourceClaim", "metadata": {"name": "c"}, "spec": {"devices": {"requests": [
         {"name": "gpu", "exactly": {"deviceClassName": "gpu.convgpu.io", "capacity": {"requests": caps}}}]}}})
c["status"] = {"allocation": {"devices": {"results": [{"request": "gpu", "driver": "gpu.convgpu.io",
               "pool": "node-a", "device": "gpu-0", "consumedCapacity": caps}]}}}
call("PUT", "/namespaces/team-a/resourceclaims/c/status", c)
print(c["metadata"]["uid"])
PY
)
"$STANDIN" prepare --socket "$TMP/plugin/dra.sock" "team-a/c/$UID1" >"$TMP/prep" 2>&1 ||
    fail "prepare: $(cat "$TMP/prep")"
check "prepared: the claim's CDI device" grep -q "cdi=gpu.convgpu.io/claim=$UID1" "$TMP/prep"

start_containerd "$SHIM"
ctd_image cg-sample:1 || skip "ctr cannot import an image here"
IMG=docker.io/library/cg-sample:1
if ! ctr_ run --rm --snapshotter "$CTD_SNAP" "$IMG" probe true 2>"$TMP/probe.err"; then
    skip "containerd cannot run a container here: $(tail -n 1 "$TMP/probe.err")"
fi
mapfile -t CDI < <(python3 "$HERE/cdi_apply.py" --cdi-dir "$TMP/cdi" --device "gpu.convgpu.io/claim=$UID1" --ctr)
POD=(--env PATH=/usr/local/bin:/usr/bin:/bin --env CONVGPU_GPU_MEMORY=7GiB --env CONVGPU_DISABLE=1)
for e in ${SAN_ENV[@]+"${SAN_ENV[@]}"}; do POD+=(--env "$e"); done
crun() { ctr_ run --snapshotter "$CTD_SNAP" --runtime io.containerd.runc.v2 "${POD[@]}" "${CDI[@]}" "$@"; }
crun --rm "$IMG" d1 convgpu-sample --size 1900MiB --report >"$TMP/out1" 2>&1 && rc=0 || rc=$?
check "a container with the claim's CDI edits, 1900MiB of its 2GiB: exit 0" test "$rc" = 0
check "... memory info inside shows 2GiB" grep -qx "mem_total_before=$((2 << 30))" "$TMP/out1"
crun --rm "$IMG" d2 convgpu-sample --size 2100MiB --quiet >"$TMP/out2" 2>&1 && rc=0 || rc=$?
check "2100MiB with the pod's own CONVGPU_GPU_MEMORY=7GiB and CONVGPU_DISABLE=1: refused (exit 2)" test "$rc" = 2
crun -d "$IMG" d3 convgpu-sample --size 700MiB --hold --quiet >/dev/null
used_at_least() { [ "$(container_field "$1" used)" -ge "$2" ] 2>/dev/null; }
wait_for "d3 holds 700MiB" "$WAIT_S" used_at_least "dra-$UID1" $((700 << 20)) &&
    pass "a running container's memory is counted in the claim's container" ||
    fail "d3's memory was not seen in dra-$UID1"
ctr_ tasks kill -s KILL d3 >/dev/null
ctr_ tasks delete d3 >/dev/null 2>&1 || true
ctr_ containers delete d3 >/dev/null 2>&1 || true
"$STANDIN" unprepare --socket "$TMP/plugin/dra.sock" "team-a/c/$UID1" >/dev/null
check "unprepared: the claim's container is gone" test "$(registered_count)" = 0
finish

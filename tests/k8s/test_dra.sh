#!/usr/bin/env bash
# test_dra.sh — convgpu-dra-driver against a kubelet stand-in that speaks the real gRPC protocols
# (plugin registration v1; DRA v1 and v1beta1: dra_kubelet_standin.cc) and an API server stand-in
# that keeps resource.k8s.io/v1 objects in their real JSON shapes, checked against the published
# OpenAPI fields (apiserver_standin.py, dra_openapi_v1.json). Follows one claim: the driver
# publishes this node's ResourceSlice (one device per emulated GPU, consumable memory and compute
# with their request policies); kubelet registers it; a ResourceClaim for memory 2Gi and compute 30
# of gpu-0 is created and allocated (its status written as the scheduler writes it); kubelet
# prepares it and gets a CDI device; the CDI spec's edits, applied to a real process in its own
# mount namespace and root (as runc applies them), give a process that sees 2 GiB on the emulated
# GPU and is refused beyond it, whatever the pod's own environment says (CONVGPU_GPU_MEMORY=7GiB,
# CONVGPU_DISABLE=1). Prepare again: the same answer, one container. Two pods' processes share
# the claim's container. Oversubscription: two claims that together take more than a GPU's
# memory but within what it promises (convgpud --oversubscribe 2) are both prepared; one claim
# above the GPU's memory is refused with the reason (the slice's request policy says so too).
# A claim whose
# UID is not the API server's, one not allocated, one of another driver: refused, nothing made.
# Unprepare releases it; again: fine. The partitioned shape (--partitions 2) publishes a counters
# slice and a devices slice the schema accepts.
. "$(dirname "$0")/../containers/lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
DRIVER=$BUILD/bin/convgpu-dra-driver
STANDIN=$BUILD/bin/dra-kubelet-standin
[ -x "$DRIVER" ] && [ -x "$STANDIN" ] || skip "the DRA driver is not built (grpc++ missing)"
command -v unshare >/dev/null && command -v chroot >/dev/null || skip "unshare/chroot missing"
[ "$(id -u)" = 0 ] || skip "mounting a process's CDI edits needs root"

start_daemon --emulate 4GiB,3GiB --oversubscribe 2
python3 "$HERE/apiserver_standin.py" --node node-a --port-file "$TMP/api.port" --log "$TMP/api.log" \
    --dra-schema "$HERE/dra_openapi_v1.json" &
API_PID=$!
at_exit "kill $API_PID"
wait_for "the API stand-in listens" "$WAIT_S" test -s "$TMP/api.port"
API=http://127.0.0.1:$(cat "$TMP/api.port")
R=$API/apis/resource.k8s.io/v1
mkdir -p "$TMP/registry" "$TMP/cdi"
start_driver() { # start_driver NODE ARGS...: a driver for NODE with its own directories
    local node=$1; shift
    "$DRIVER" --node "$node" --api-server "$API" --token-file "" --ca-file "" \
        --plugin-dir "$TMP/$node/plugin" --registry-dir "$TMP/$node/registry" \
        --cdi-dir "$TMP/cdi" --state-dir "$TMP/$node/state" --runtime-dir "$RUNDIR" \
        --poll-ms 100 "$@" >>"$TMP/$node.log" 2>&1 &
    DRIVER_PID=$!
}
mkdir -p "$TMP/node-a/registry" "$TMP/node-b/registry"
start_driver node-a
A_PID=$DRIVER_PID
at_exit "kill $A_PID"
slices() { curl -sf "$R/resourceslices"; }
has_slices() { [ "$(slices | python3 -c 'import json,sys; print(len([s for s in json.load(sys.stdin)["items"] if s["spec"]["nodeName"] == sys.argv[1]]))' "$1")" = "$2" ]; }
wait_for "node-a's slice published" "$WAIT_S" has_slices node-a 1 || fail "no ResourceSlice for node-a"
slices >"$TMP/slices.json"
check "the slice: driver, pool, one device per GPU with attributes, consumable memory and compute" \
    python3 - "$TMP/slices.json" <<'PY'
import json, sys
s = [x for x in json.load(open(sys.argv[1]))["items"] if x["spec"]["nodeName"] == "node-a"][0]
sp = s["spec"]
assert s["apiVersion"] == "resource.k8s.io/v1" and s["kind"] == "ResourceSlice"
assert sp["driver"] == "gpu.convgpu.io" and sp["pool"]["name"] == "node-a"
assert sp["pool"]["resourceSliceCount"] == 1 and sp["pool"]["generation"] > 0
d = {x["name"]: x for x in sp["devices"]}
assert sorted(d) == ["gpu-0", "gpu-1"], sorted(d)
g = d["gpu-0"]
assert g["allowMultipleAllocations"] is True
assert g["attributes"]["index"] == {"int": 0} and "string" in g["attributes"]["uuid"]
assert g["attributes"]["memory"]["int"] == 4 << 30
mem = g["capacity"]["memory"]
# what the GPU promises: its assignable memory x 2 (--oversubscribe 2), in 256 MiB steps
assert int(mem["value"]) % (256 << 20) == 0 and int(mem["value"]) > 4 << 30, mem
assert mem["requestPolicy"] == {"default": "256Mi", "validRange": {
    "min": "256Mi", "max": str(4 << 30), "step": "256Mi"}}, mem
comp = g["capacity"]["compute"]
assert comp["value"] == "100" and comp["requestPolicy"]["validRange"] == {"min": "1", "max": "100", "step": "1"}
PY

"$STANDIN" register --registry "$TMP/node-a/registry" >"$TMP/reg.out" 2>&1 || fail "register: $(cat "$TMP/reg.out")"
check "registration: a DRAPlugin named gpu.convgpu.io, v1.DRAPlugin chosen, v1beta1 offered too" \
    bash -c "grep -qx name=gpu.convgpu.io '$TMP/reg.out' && grep -qx version=v1.DRAPlugin '$TMP/reg.out' &&
             grep -qx supported=v1beta1.DRAPlugin '$TMP/reg.out' && grep -qx 'endpoint=$TMP/node-a/plugin/dra.sock' '$TMP/reg.out'"
wait_for "the driver heard it was registered" "$WAIT_S" grep -q "kubelet registered the driver" "$TMP/node-a.log" ||
    fail "NotifyRegistrationStatus did not reach the driver"
SOCK=$TMP/node-a/plugin/dra.sock

# make_claim NS NAME GPU MEMORY COMPUTE [DRIVER]: a ResourceClaim, then its allocation written to
# /status as the scheduler writes it; prints the claim's UID.
make_claim() {
    python3 - "$R" "$@" <<'PY'
import json, sys, urllib.request
r, ns, name, dev, mem, comp = sys.argv[1:7]
driver = sys.argv[7] if len(sys.argv) > 7 else "gpu.convgpu.io"
def call(method, path, body):
    req = urllib.request.Request(r + path, json.dumps(body).encode(), method=method,
                                 headers={"Content-Type": "application/json"})
    return json.load(urllib.request.urlopen(req))
caps = {"memory": mem}
if comp != "-":
    caps["compute"] = comp
claim = call("POST", "/namespaces/%s/resourceclaims" % ns, {
    "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": name},
    "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
        "deviceClassName": "gpu.convgpu.io", "capacity": {"requests": caps}}}]}}})
claim["status"] = {"allocation": {"devices": {"results": [{
    "request": "gpu", "driver": driver, "pool": "node-a", "device": dev,
    "shareID": "5c6d8a1e-0000-4000-8000-00000000000%d" % len(name), "consumedCapacity": caps}]}},
    "reservedFor": [{"resource": "pods", "name": "pod-" + name, "uid": "pod-uid-" + name}]}
call("PUT", "/namespaces/%s/resourceclaims/%s/status" % (ns, name), claim)
print(claim["metadata"]["uid"])
PY
}
UID1=$(make_claim team-a claim-1 gpu-0 2Gi 30) || fail "the claim could not be created"
"$STANDIN" prepare --socket "$SOCK" "team-a/claim-1/$UID1" >"$TMP/prep1" 2>&1 || true
check "NodePrepareResources (v1): the claim's device with its CDI ID" \
    grep -qx "$UID1 request=gpu pool=node-a device=gpu-0 cdi=gpu.convgpu.io/claim=$UID1" "$TMP/prep1"
check "a convgpud container owned by the claim: 2GiB" test "$(container_field "dra-$UID1" limit)" = $((2 << 30))
check "... on GPU 0" test "$(container_field "dra-$UID1" device)" = 0
check "... with the 30% compute share" test "$(container_field "dra-$UID1" gpu_compute)" = 30
check "... in the claim's namespace's tenant" test "$(container_field "dra-$UID1" tenant)" = team-a
CDI_FILE=$TMP/cdi/convgpu-claim-$UID1.json
check "the claim's CDI spec: kind gpu.convgpu.io/claim, the socket's directory mounted, no limit in it" \
    python3 - "$CDI_FILE" "$UID1" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
assert s["kind"] == "gpu.convgpu.io/claim" and s["devices"][0]["name"] == sys.argv[2]
e = s["devices"][0]["containerEdits"]
assert {m["containerPath"] for m in e["mounts"]} >= {"/run/convgpu", "/etc/ld.so.preload", "/usr/lib/convgpu/libconvgpu.so"}
assert "CONVGPU_SOCKET=/run/convgpu/container.sock" in e["env"] and "CONVGPU_DISABLE=0" in e["env"]
assert not [v for v in e["env"] if v.startswith("CONVGPU_GPU_MEMORY")]
PY
"$STANDIN" prepare --socket "$SOCK" --version v1beta1 "team-a/claim-1/$UID1" >"$TMP/prep1b" 2>&1 || true
check "prepared again (v1beta1): the same answer" cmp -s "$TMP/prep1" "$TMP/prep1b"
check "... and still one container" test "$(registered_count)" = 1

# A real process under the CDI edits: its own mount namespace and root, the spec's mounts bound
# in, the pod's own variables first and the CDI variables over them (as runtimes apply them).
make_rootfs "$TMP/img"
in_pod() { # in_pod ROOT POD-ENV... -- CMD...: runs CMD as a container of a pod using claim 1
    local root=$1 envs=() script; shift
    while [ "$1" != -- ]; do envs+=("$1"); shift; done; shift
    script=$(python3 "$HERE/cdi_apply.py" --cdi-dir "$TMP/cdi" --device "gpu.convgpu.io/claim=$UID1" --script "$root") || return 99
    unshare --mount --propagation private bash -c "$script"'
        root=$1; shift; n=$1; shift; pod=("${@:1:$n}"); shift "$n"
        # /proc as a runtime gives it (a sanitized build reads its options from /proc/self/environ)
        mount -t proc proc "$root/proc"
        exec chroot "$root" /usr/bin/env -i PATH=/usr/local/bin:/usr/bin:/bin "${pod[@]}" "${CDI_ENV[@]}" "$@"' \
        in-pod "$root" "${#envs[@]}" ${envs[@]+"${envs[@]}"} ${SAN_ENV[@]+"${SAN_ENV[@]}"} "$@"
}
POD_ENV=(CONVGPU_GPU_MEMORY=7GiB CONVGPU_DISABLE=1 CONVGPU_SOCKET=/tmp/none CONVGPU_GPU_COMPUTE=100)
in_pod "$TMP/img" "${POD_ENV[@]}" -- convgpu-sample --size 1900MiB --report >"$TMP/run1" 2>&1 && rc=0 || rc=$?
check "in the pod, 1900MiB within the claim's 2GiB: exit 0" test "$rc" = 0
check "... memory info inside shows 2GiB" grep -qx "mem_total_before=$((2 << 30))" "$TMP/run1"
check "... on the claim's GPU (the 4GiB one)" grep -qx "device_name=ConvGPU Emulated GPU 4GiB" "$TMP/run1"
in_pod "$TMP/img" "${POD_ENV[@]}" -- convgpu-sample --size 2100MiB --quiet >"$TMP/run2" 2>&1 && rc=0 || rc=$?
check "2100MiB, with the pod's own CONVGPU_GPU_MEMORY=7GiB and CONVGPU_DISABLE=1: refused (exit 2)" test "$rc" = 2
check "the claim's container kept its 2GiB" test "$(container_field "dra-$UID1" limit)" = $((2 << 30))
# Two pods sharing the claim: their processes are one budget. One holds 1200MiB; the other's
# 1000MiB does not fit beside it.
make_rootfs "$TMP/img2"
in_pod "$TMP/img" -- convgpu-sample --size 1200MiB --hold-until /tmp/release --quiet >/dev/null 2>&1 &
HOLD_PID=$!
at_exit "touch '$TMP/img/tmp/release'; kill $HOLD_PID"
used_at_least() { [ "$(container_field "$1" used)" -ge "$2" ] 2>/dev/null; }
wait_for "pod 1 holds 1200MiB of the claim" "$WAIT_S" used_at_least "dra-$UID1" $((1200 << 20)) ||
    fail "pod 1's memory was not counted in the claim's container"
in_pod "$TMP/img2" -- convgpu-sample --size 1000MiB --quiet >"$TMP/run3" 2>&1 && rc=0 || rc=$?
check "pod 2 on the same claim: 1000MiB beside pod 1's 1200MiB is refused (one 2GiB budget)" test "$rc" = 2
touch "$TMP/img/tmp/release"
wait "$HOLD_PID" || true

# Oversubscription: GPU 1 has 3GiB and promises twice its memory (its slice's capacity, which
# the scheduler shares out); one claim is one container and stays within the GPU.
UID2=$(make_claim team-a claim-over gpu-1 3Gi -)
UID2B=$(make_claim team-a claim-over-b gpu-1 3Gi -)
"$STANDIN" prepare --socket "$SOCK" "team-a/claim-over/$UID2" "team-a/claim-over-b/$UID2B" >"$TMP/prep2" 2>&1 || true
check "two claims of 3Gi on the 3GiB GPU, within what it promises (--oversubscribe 2): prepared" \
    bash -c "grep -q '^$UID2 request=gpu pool=node-a device=gpu-1 cdi=' '$TMP/prep2' &&
             grep -q '^$UID2B request=gpu pool=node-a device=gpu-1 cdi=' '$TMP/prep2'"
check "... each container has its 3GiB limit" \
    test "$(container_field "dra-$UID2" limit) $(container_field "dra-$UID2B" limit)" = "$((3 << 30)) $((3 << 30))"
check "the slice's memory request policy keeps one claim within the GPU (max: its memory)" \
    python3 -c 'import json,sys; d=[x for s in json.load(open(sys.argv[1]))["items"] for x in s["spec"]["devices"] if x["name"]=="gpu-1"][0]; c=d["capacity"]["memory"]; assert int(c["requestPolicy"]["validRange"]["max"]) == 3<<30 and int(c["value"]) == 6<<30' "$TMP/slices.json"
UID3=$(make_claim team-a claim-toomuch gpu-1 4Gi -)
"$STANDIN" prepare --socket "$SOCK" "team-a/claim-toomuch/$UID3" >"$TMP/prep3" 2>&1 && rc=0 || rc=$?
check "one claim of 4Gi on it: refused, saying why" \
    bash -c "[ $rc = 1 ] && grep -q '^$UID3 error: .*one claim stays within the GPU' '$TMP/prep3'"
check "... no container for it" test "$(api GET "/v1/containers/dra-$UID3")" = 404

# Claims kubelet must not get: a UID that is not the claim's, one never allocated, another
# driver's device, one the API server does not have.
"$STANDIN" prepare --socket "$SOCK" "team-a/claim-1/0f0f0f0f-1111-2222-3333-444444444444" >"$TMP/prep4" 2>&1 && rc=0 || rc=$?
check "a UID that is not the claim's: refused" bash -c "[ $rc = 1 ] && grep -q 'has UID' '$TMP/prep4'"
UID5=$(make_claim team-b claim-other gpu-0 1Gi - other.example.com)
"$STANDIN" prepare --socket "$SOCK" "team-b/claim-other/$UID5" >"$TMP/prep5" 2>&1 && rc=0 || rc=$?
check "a claim holding only another driver's device: refused" bash -c "[ $rc = 1 ] && grep -q 'no device of gpu.convgpu.io' '$TMP/prep5'"
"$STANDIN" prepare --socket "$SOCK" "team-b/missing/$UID5" >"$TMP/prep6" 2>&1 && rc=0 || rc=$?
check "a claim the API server does not have: refused with its answer" bash -c "[ $rc = 1 ] && grep -q '404' '$TMP/prep6'"
check "none of them left a container" test "$(registered_count)" = 3

"$STANDIN" unprepare --socket "$SOCK" "team-a/claim-1/$UID1" "team-a/claim-over/$UID2" \
    "team-a/claim-over-b/$UID2B" >"$TMP/unprep" 2>&1 || true
check "NodeUnprepareResources: all three released" \
    bash -c "grep -qx '$UID1 ok' '$TMP/unprep' && grep -qx '$UID2 ok' '$TMP/unprep' && grep -qx '$UID2B ok' '$TMP/unprep'"
check "... their containers gone" test "$(registered_count)" = 0
check "... the CDI spec removed" test ! -e "$CDI_FILE"
"$STANDIN" unprepare --socket "$SOCK" "team-a/claim-1/$UID1" >"$TMP/unprep2" 2>&1 && rc=0 || rc=$?
check "unprepared again: fine" test "$rc" = 0

# The partitioned shape, for clusters without consumable capacity: counters and devices.
start_driver node-b --partitions 2
B_PID=$DRIVER_PID
at_exit "kill $B_PID"
wait_for "node-b's two slices published" "$WAIT_S" has_slices node-b 2 || fail "node-b's slices (its log: $TMP/node-b.log)"
slices >"$TMP/slices-b.json"
check "partitions: a counters slice and a devices slice; each partition consumes its GPU's counters" \
    python3 - "$TMP/slices-b.json" <<'PY'
import json, sys
items = [x for x in json.load(open(sys.argv[1]))["items"] if x["spec"]["nodeName"] == "node-b"]
counters = [x for x in items if "sharedCounters" in x["spec"]]
devices = [x for x in items if "devices" in x["spec"]]
assert len(counters) == 1 and len(devices) == 1 and "devices" not in counters[0]["spec"]
sets = {c["name"]: c["counters"] for c in counters[0]["spec"]["sharedCounters"]}
assert set(sets) == {"gpu-0-counters", "gpu-1-counters"}
d = {x["name"]: x for x in devices[0]["spec"]["devices"]}
assert set(d) == {"gpu-0", "gpu-0-part-0", "gpu-0-part-1", "gpu-1", "gpu-1-part-0", "gpu-1-part-1"}
p = d["gpu-0-part-1"]
assert p["consumesCounters"][0]["counterSet"] == "gpu-0-counters"
assert int(p["consumesCounters"][0]["counters"]["memory"]["value"]) * 2 <= int(sets["gpu-0-counters"]["memory"]["value"])
assert "allowMultipleAllocations" not in p
PY
check "the stand-in refused nothing it was sent" bash -c "! grep -q '\"Invalid\"' '$TMP/node-a.log' '$TMP/node-b.log'"
finish

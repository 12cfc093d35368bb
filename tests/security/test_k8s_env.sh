#!/usr/bin/env bash
# test_k8s_env.sh — on Kubernetes a container's limits come only from what the device plugin
# allocated, never from the pod's own environment or annotations (issue #35, item 5). The
# attacks as written: a bundle with the plugin's allocation plus its own
# CONVGPU_GPU_MEMORY=7GiB, CONVGPU_EXCLUSIVE=yes, a device and the com.convgpu annotations; a
# second CONVGPU_ALLOCATION; a guessed token; a token another pod already claimed; a pod that
# asks for no convgpu resource but carries convgpu's variables; a tenant chosen by
# process.user.uid. None gains anything.
#
# The shim runs as containerd's runc v2 shim runs it on a node (root, CONVGPU_SHIM_MODE=
# kubernetes in its environment as the drop-in sets it, `create --bundle B --pid-file F ID`),
# in front of a fake runtime; the plugin's Allocate is played by its call, POST
# /v1/allocations as root.
. "$(dirname "$0")/lib.sh"
SHIM=$BUILD/bin/convgpu-runtime
[ -x "$SHIM" ] || { echo "SKIP: $SHIM not built"; exit 77; }
MiB=$((1024 * 1024))
UX=1101
# UX reaches the control socket through its group, as a tenant does on a node.
GROUP=convgpu-k8senv
command -v groupadd >/dev/null || { echo "SKIP: groupadd missing"; exit 77; }
getent group "$GROUP" >/dev/null || groupadd -r "$GROUP" || { echo "SKIP: cannot create groups"; exit 77; }
GID=$(getent group "$GROUP" | cut -d: -f3)
trap 'groupdel "$GROUP" 2>/dev/null; cleanup' EXIT
as_member() { local u=$1; shift; setpriv --reuid="$u" --regid="$u" --groups="$GID" "$@"; }
start_daemon --emulate 8GiB --control-group "$GROUP"

FAKE=$TMP/fake-runtime
cat >"$FAKE" <<'SH'
#!/bin/sh
# Records that it ran; its "init" holds until the test kills it (FAKE_INIT: a pid to report).
echo "$*" >>"$FAKE_DIR/runtime-ran"
prev=
for a in "$@"; do [ "$prev" = --pid-file ] && printf '%s' "$FAKE_INIT" >"$a"; prev=$a; done
exit 0
SH
chmod +x "$FAKE"
export FAKE_DIR=$TMP
sleep infinity &
export FAKE_INIT=$!
BG_PIDS+=("$FAKE_INIT")

allocate() { # allocate BODY : the plugin's Allocate; prints the token
    local out
    out=$(api POST /v1/allocations "$1")
    [ "${out%% *}" = 201 ] || { echo "allocation refused: $out" >&2; return 1; }
    "$PY" -c 'import json,sys; print(json.loads(sys.argv[1].split(" ",1)[1])["token"])' "$out"
}
bundle() { # bundle DIR SANDBOX NAMESPACE ENV... : a bundle as containerd's CRI writes it
    local dir=$1 sb=$2 ns=$3; shift 3
    mkdir -p "$dir/rootfs/etc"
    "$PY" - "$dir/config.json" "$sb" "$ns" "$@" <<'PYEOF'
import json, sys
path, sb, ns, env = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
json.dump({"ociVersion": "1.0.2",
           "process": {"args": ["/bin/true"], "env": ["PATH=/bin"] + env,
                       "user": {"uid": 1101, "gid": 1101}},
           "root": {"path": "rootfs"},
           "annotations": {"io.kubernetes.cri.container-type": "container",
                           "io.kubernetes.cri.sandbox-id": sb,
                           "io.kubernetes.cri.sandbox-namespace": ns,
                           "com.convgpu.gpu-memory": "6GiB", "com.convgpu.exclusive": "yes",
                           "com.nvidia.memory.limit": "6GiB", "com.convgpu.device": "1"}},
          open(path, "w"))
PYEOF
}
create() { # create ID BUNDLE : the shim's create as containerd runs it; its exit status
    rm -f "$TMP/runtime-ran"
    local rc=0
    timeout -s KILL 60 env CONVGPU_SHIM_MODE=kubernetes "$SHIM" --runtime "$FAKE" \
        --runtime-dir "$RUNDIR" create --bundle "$2" --pid-file "$2/pid" "$1" \
        >"$TMP/create-$1.out" 2>&1 || rc=$?
    return "$rc"
}
field() { api GET "/v1/containers/$1" | cut -d' ' -f2- | "$PY" -c 'import json,sys; v=json.load(sys.stdin).get(sys.argv[1]); print("null" if v is None else v)' "$2"; }
gone() { [ "$(api GET "/v1/containers/$1" | cut -d' ' -f1)" = 404 ]; }

SB1=$(printf 'a%.0s' {1..64}) SB2=$(printf 'b%.0s' {1..64})
# ---- the pod's own env and annotations beside the plugin's allocation --------------------------
T1=$(allocate '{"gpu_memory": 268435456, "device": 0}')
check "the plugin's allocation is a 128-bit token" test "${#T1}" = 32
B=$TMP/b1
bundle "$B" "$SB1" team-a "CONVGPU_ALLOCATION=$T1" CONVGPU_GPU_MEMORY=7GiB CONVGPU_EXCLUSIVE=yes \
    CONVGPU_GPU_DEVICE=1 CONVGPU_GPU_COMPUTE=100 CONVGPU_TENANT=root CONVGPU_PRIORITY=9
check "a bundle with the allocation and its own 7GiB: created" create pod1 "$B"
check "... registered with the allocation's 256 MiB, not 7 GiB" test "$(field pod1 limit)" = $((256 * MiB))
check "... not exclusive" test "$(field pod1 exclusive)" = False
check "... on the allocation's GPU 0, not its own 1" test "$(field pod1 device)" = 0
check "... with no compute share of its own" test "$(field pod1 gpu_compute)" = null
check "... in its namespace's tenant, not its uid's" test "$(field pod1 tenant)" = team-a

# ---- a second CONVGPU_ALLOCATION -----------------------------------------------------------------
T2=$(allocate '{"gpu_memory": 268435456, "device": 0}')
B=$TMP/b2
bundle "$B" "$SB2" team-b "CONVGPU_ALLOCATION=$T2" "CONVGPU_ALLOCATION=$T1"
rc=0; create pod2 "$B" || rc=$?
check "two CONVGPU_ALLOCATION: the create is refused" test "$rc" != 0
check "... saying the variable is set twice" grep -q "CONVGPU_ALLOCATION is set 2 times" "$TMP/create-pod2.out"
check "... no runtime ran" test ! -e "$TMP/runtime-ran"
check "... nothing registered" gone pod2

# ---- a guessed token, a token another pod claimed -------------------------------------------------
B=$TMP/b3
bundle "$B" "$SB2" team-b CONVGPU_ALLOCATION=0123456789abcdef0123456789abcdef
rc=0; create pod3 "$B" || rc=$?
check "a guessed token: refused" test "$rc" != 0
check "... the daemon knows no such allocation" grep -q "no such allocation" "$TMP/create-pod3.out"
check "... nothing registered" gone pod3
B=$TMP/b4
bundle "$B" "$SB2" team-b "CONVGPU_ALLOCATION=$T1"
rc=0; create pod4 "$B" || rc=$?
check "another pod's token, its container running: refused" test "$rc" != 0
check "... nothing registered" gone pod4
"$SHIM" --runtime "$FAKE" --runtime-dir "$RUNDIR" delete pod1 >/dev/null 2>&1 || true
api DELETE /v1/containers/pod1 >/dev/null
rc=0; create pod5 "$B" || rc=$?
check "another pod's token, its container gone: still refused" test "$rc" != 0
check "... nothing registered" gone pod5
B=$TMP/b1r
bundle "$B" "$SB1" team-a "CONVGPU_ALLOCATION=$T1"
check "the same pod's restarted container claims it again" create pod1r "$B"
check "... with the allocation's 256 MiB" test "$(field pod1r limit)" = $((256 * MiB))

# ---- a pod that asked for no convgpu resource -----------------------------------------------------
B=$TMP/b6
bundle "$B" "$SB2" team-b CONVGPU_GPU_MEMORY=7GiB CONVGPU_EXCLUSIVE=yes CONVGPU_GPU_DEVICE=0
cp "$B/config.json" "$TMP/b6.orig"
check "no allocation but convgpu's variables: passed through" create pod6 "$B"
check "... the runtime ran" test -e "$TMP/runtime-ran"
check "... nothing registered" gone pod6
check "... config.json untouched" cmp -s "$B/config.json" "$TMP/b6.orig"

# ---- who may record and claim allocations ---------------------------------------------------------
out=$(as_member $UX curl -s -o /dev/null -w '%{http_code}' --unix-socket "$RUNDIR/control.sock" \
    -X POST --data '{"gpu_memory": 7516192768}' http://convgpu/v1/allocations || true)
check "a tenant cannot record an allocation (403)" test "$out" = 403
T3=$(allocate '{"gpu_memory": 268435456}')
out=$(as_member $UX curl -s -o /dev/null -w '%{http_code}' --unix-socket "$RUNDIR/control.sock" \
    -X POST --data "{\"allocation\": \"$T3\"}" http://convgpu/v1/containers || true)
check "a tenant cannot claim one (403)" test "$out" = 403
out=$(api POST /v1/containers "{\"allocation\": \"$T3\", \"gpu_memory\": \"7GiB\"}")
check "an allocation beside gpu_memory is refused (400)" test "${out%% *}" = 400
out=$(api POST /v1/containers "{\"allocation\": \"$T3\", \"exclusive\": true}")
check "an allocation beside exclusive is refused (400)" test "${out%% *}" = 400
out=$(api POST /v1/containers "{\"id\": \"direct\", \"allocation\": \"$T3\"}")
check "root claims it once (201)" test "${out%% *}" = 201
out=$(api POST /v1/containers "{\"id\": \"again\", \"allocation\": \"$T3\"}")
check "... a second claim is refused (409)" test "${out%% *}" = 409
finish

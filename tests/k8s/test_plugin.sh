#!/usr/bin/env bash
# test_plugin.sh — convgpu-device-plugin against the kubelet stand-in (kubelet-standin, the real
# gRPC API v1beta1 on UNIX sockets) and a private convgpud with two emulated GPUs: it registers
# its three resources (memory units, compute units, GPU slots); kubelet's calls (GetDevicePluginOptions, ListAndWatch, GetPreferredAllocation,
# Allocate) get the right answers: Allocate answers only a token of the record it made with
# convgpud, and the record (claimed as the shim claims it) holds what the units grant; bad IDs get
# a clear gRPC error and register nothing; a kubelet
# restart (its sockets removed, kubelet.sock re-created) brings a second registration; units turn
# Unhealthy when convgpud stops or no longer lists a GPU and Healthy when it comes back; bad
# flags are refused; GPU slots are preferred by the topology convgpud reports (three GPUs, two
# of them NVLinked). Everything runs in a temporary directory and is stopped at exit.
. "$(dirname "$0")/../containers/lib.sh"
STANDIN=$BUILD/bin/kubelet-standin
PLUGIN=$BUILD/bin/convgpu-device-plugin
[ -x "$STANDIN" ] && [ -x "$PLUGIN" ] || skip "the device plugin is not built (grpc++ missing)"
DP=$TMP/device-plugins
mkdir -p "$DP"
MEM=$DP/convgpu-memory.sock
CMP=$DP/convgpu-compute.sock
GPU=$DP/convgpu-gpu.sock
MEMRES=convgpu.io_gpu-memory
CMPRES=convgpu.io_gpu-compute
GPURES=convgpu.io_gpu

STANDIN_PID=
ST= # the running stand-in's state directory
start_standin() { # start_standin NAME: a fresh kubelet with its state in $TMP/NAME
    ST=$TMP/$1
    mkdir -p "$ST"
    "$STANDIN" serve --dir "$DP" --state "$ST" >>"$TMP/standin.log" 2>&1 &
    STANDIN_PID=$!
    wait_for "the kubelet stand-in serves kubelet.sock" "$WAIT_S" test -e "$ST/ready"
}
stop_standin() {
    [ -n "$STANDIN_PID" ] || return 0
    kill -TERM "$STANDIN_PID"; wait "$STANDIN_PID"; STANDIN_PID=
}
at_exit stop_standin
PLUGIN_PID=
stop_plugin() { [ -z "$PLUGIN_PID" ] || { kill -TERM "$PLUGIN_PID"; wait "$PLUGIN_PID"; PLUGIN_PID=; }; }
at_exit stop_plugin

# The units in the stand-in's last list: lines "ID HEALTH".
units() { cat "$ST/$1.list" 2>/dev/null; }
count_units() { units "$1" | grep -c "$2" || true; } # count_units RES PATTERN
listed() { # listed RES TOTAL HEALTHY: the last list has TOTAL units, HEALTHY of them Healthy
    [ "$(units "$1" | wc -l)" = "$2" ] && [ "$(count_units "$1" ' Healthy$')" = "$3" ]
}
sa() { "$STANDIN" "$@" 2>"$TMP/sa.err"; } # a kubelet call; its error in $TMP/sa.err
refused() { # refused CODE TEXT COMMAND...: the call fails with gRPC code CODE saying TEXT
    local code=$1 text=$2; shift 2
    ! sa "$@" >/dev/null && grep -q "^error $code: .*$text" "$TMP/sa.err"
}

# ---- flags ------------------------------------------------------------------------------------
"$PLUGIN" --help | grep -q "convgpu.io/gpu-memory" && pass "--help names the resources" ||
    fail "--help"
for bad in "--bogus" "--memory-unit 12x" "--memory-unit 1KiB" "--poll-ms 0" "--plugin-dir rel" "extra" \
    "--gpu-slots 0" "--gpu-slots 1001" "--gpu-slots x" "--gpu-slots +3" "--priority 10" \
    "--priority x" "--priority"; do
    "$PLUGIN" $bad >/dev/null 2>&1 && rc=0 || rc=$?
    check "refused: $bad (exit 2)" test "$rc" = 2
done
"$PLUGIN" --plugin-dir "$TMP/nonexistent" >/dev/null 2>"$TMP/err" && rc=0 || rc=$?
check "a missing plugin directory: exit 1, said" test "$rc" = 1 -a -s "$TMP/err"

# ---- registration and the first lists --------------------------------------------------------
start_daemon --emulate 2GiB,1GiB
cap() { curl -s --unix-socket "$RUNDIR/control.sock" http://convgpu/v1/devices |
    python3 -c "import json,sys; print(json.load(sys.stdin)[$1]['capacity'] // (256 << 20))"; }
U0=$(cap 0); U1=$(cap 1)
echo "memory units: GPU 0 $U0, GPU 1 $U1"
start_standin kubelet1
# Started with umask 0, so that the sockets' modes show whether the plugin sets its own.
(umask 0; exec "$PLUGIN" --plugin-dir "$DP" --runtime-dir "$RUNDIR" --poll-ms 100 >>"$TMP/plugin.log" 2>&1) &
PLUGIN_PID=$!
wait_for "the three resources registered" "$WAIT_S" bash -c "[ \$(wc -l <'$ST/registrations') = 3 ]" &&
    pass "registered" || fail "not registered"
check "the plugin's sockets are 0600 though it started with umask 0 ($(stat -c %a "$MEM" "$CMP" "$GPU" | tr '\n' ' '))" \
    test "$(stat -c %a "$MEM" "$CMP" "$GPU" | sort -u)" = 600
check "memory registered on its own endpoint" grep -qx "convgpu.io/gpu-memory convgpu-memory.sock" "$ST/registrations"
check "compute registered on its own endpoint" grep -qx "convgpu.io/gpu-compute convgpu-compute.sock" "$ST/registrations"
check "GPU slots registered on their own endpoint" grep -qx "convgpu.io/gpu convgpu-gpu.sock" "$ST/registrations"
wait_for "options read" "$WAIT_S" test -s "$ST/$MEMRES.options"
check "options: preferred allocation available, no PreStartContainer" \
    grep -qx "pre_start_required=0 preferred=1" "$ST/$MEMRES.options"
wait_for "memory units listed" "$WAIT_S" listed $MEMRES $((U0 + U1)) $((U0 + U1)) &&
    pass "ListAndWatch: $((U0 + U1)) memory units, all Healthy" || { fail "memory list"; units $MEMRES | head -3; }
wait_for "compute units listed" "$WAIT_S" listed $CMPRES 200 200 &&
    pass "ListAndWatch: 200 compute units, all Healthy" || fail "compute list"
wait_for "GPU slots listed" "$WAIT_S" listed $GPURES 16 16 &&
    pass "ListAndWatch: 8 slots per GPU, all Healthy" || fail "slot list"
check "IDs name the GPU and unit" grep -qx "gpu1-mem-$((U1 - 1)) Healthy" "$ST/$MEMRES.list"

# ---- GetPreferredAllocation -------------------------------------------------------------------
ids() { local g=$1 kind=$2 from=$3 to=$4 i out=; for ((i = from; i <= to; i++)); do out+="${out:+,}gpu$g-$kind-$i"; done; echo "$out"; }
AVAIL="$(ids 0 mem 0 $((U0 - 1))),$(ids 1 mem 0 $((U1 - 1)))"
check "2 units: on GPU 1, the tighter fit" test "$(sa prefer --socket "$MEM" --available "$AVAIL" --size 2)" = "gpu1-mem-0,gpu1-mem-1"
check "$((U1 + 1)) units: only GPU 0 holds them" test "$(sa prefer --socket "$MEM" --available "$AVAIL" --size $((U1 + 1)) | cut -d, -f1)" = gpu0-mem-0
check "must-include units are kept, on their GPU" test "$(sa prefer --socket "$MEM" --available "$AVAIL" --must gpu0-mem-3 --size 2)" = "gpu0-mem-3,gpu0-mem-0"
check "larger than any GPU (a two-GPU pod's total): GPU 0's units, then GPU 1's" \
    test "$(sa prefer --socket "$MEM" --available "$AVAIL" --size $((U0 + 1)))" = "$(ids 0 mem 0 $((U0 - 1))),gpu1-mem-0"
check "a compute ID offered to memory: refused" refused 3 "gpu0-compute-0" prefer --socket "$MEM" --available "$AVAIL,gpu0-compute-0" --size 1
SLOTS="$(ids 0 slot 0 7),$(ids 1 slot 0 2)"
check "2 GPU slots: one on each GPU" test "$(sa prefer --socket "$GPU" --available "$SLOTS" --size 2)" = "gpu0-slot-0,gpu1-slot-0"
check "3 GPU slots on a node of 2 GPUs: refused (FAILED_PRECONDITION)" refused 9 "fewer than 3 GPUs" prefer --socket "$GPU" --available "$SLOTS" --size 3
check "two must-include slots of one GPU: refused" refused 3 "on one GPU" prefer --socket "$GPU" --available "$SLOTS" --must gpu0-slot-0,gpu0-slot-1 --size 2
check "compute: 30 units from the fuller GPU" test "$(sa prefer --socket "$CMP" --available "$(ids 0 compute 0 99),$(ids 1 compute 0 49)" --size 30 | cut -d, -f1)" = gpu1-compute-0

# ---- Allocate: convgpud records what the IDs grant; kubelet gets only the record's token --------
token() { sed -n "s/^$1 $2=//p" "$TMP/alloc"; } # token CONTAINER VARIABLE, from the last answer
claim() { # claim ID TOKEN...: root claims the tokens as the shim does; prints "LIMIT DEVICE SHARE DEVICES"
    local id=$1; shift
    local body
    body=$(python3 -c 'import json,sys; print(json.dumps({"id": sys.argv[1], "allocation": sys.argv[2:], "allocation_pod": "pod-" + sys.argv[1]}))' "$id" "$@")
    curl -s -o /dev/null --unix-socket "$RUNDIR/control.sock" -X POST --data "$body" http://convgpu/v1/containers
    cg inspect "$id" 2>/dev/null | python3 -c 'import json,sys; c=json.load(sys.stdin); print(" ".join(json.dumps(c.get(k)) for k in ("limit", "device", "gpu_compute", "devices")))'
    curl -s -o /dev/null --unix-socket "$RUNDIR/control.sock" -X DELETE "http://convgpu/v1/containers/$id"
}
sa allocate --socket "$MEM" gpu1-mem-0,gpu1-mem-1 >"$TMP/alloc" || fail "allocate: $(cat "$TMP/sa.err")"
check "Allocate: one variable, CONVGPU_ALLOCATION, a 128-bit token" \
    bash -c "[ \$(wc -l <'$TMP/alloc') = 1 ] && grep -Eqx '0 CONVGPU_ALLOCATION=[0-9a-f]{32}' '$TMP/alloc'"
check "... the record: the units' bytes on their GPU 1" prints "$((2 * 256 << 20)) 1 null [1]" claim a1 "$(token 0 CONVGPU_ALLOCATION)"
sa allocate --socket "$CMP" "$(ids 0 compute 0 24)" >"$TMP/alloc" || fail "allocate compute"
TC=$(token 0 CONVGPU_ALLOCATION_COMPUTE)
check "Allocate compute: its own variable, CONVGPU_ALLOCATION_COMPUTE" grep -Eqx '0 CONVGPU_ALLOCATION_COMPUTE=[0-9a-f]{32}' "$TMP/alloc"
sa allocate --socket "$MEM" gpu0-mem-0 gpu1-mem-2,gpu1-mem-3,gpu1-mem-1 >"$TMP/alloc" || fail "two containers"
check "Allocate, two containers: a token each" bash -c "[ \$(grep -c '^[01] CONVGPU_ALLOCATION=' '$TMP/alloc') = 2 ] && [ '$(token 0 CONVGPU_ALLOCATION)' != '$(token 1 CONVGPU_ALLOCATION)' ]"
check "... the second's record: 3 units on GPU 1" prints "$((3 * 256 << 20)) 1 null [1]" claim a2 "$(token 1 CONVGPU_ALLOCATION)"
check "... the first's with the compute token: 1 unit on GPU 0, the 25 units its share there" \
    prints "$((256 << 20)) 0 25 [0]" claim a3 "$(token 0 CONVGPU_ALLOCATION)" "$TC"
check "unknown ID: refused" refused 3 "unknown device ID" allocate --socket "$MEM" gpu0-mem-zz
check "another resource's ID: refused" refused 3 "is a unit of convgpu.io/gpu-compute" allocate --socket "$MEM" gpu0-compute-1
check "another node's GPU: refused" refused 3 "no such GPU" allocate --socket "$MEM" gpu7-mem-0
check "beyond a GPU's units: refused" refused 3 "beyond that GPU" allocate --socket "$MEM" "gpu1-mem-$U1"
sa allocate --socket "$MEM" gpu0-mem-0,gpu1-mem-0 >"$TMP/alloc" || fail "allocate split"
TS=$(token 0 CONVGPU_ALLOCATION)
sa allocate --socket "$GPU" gpu1-slot-4,gpu0-slot-2 >"$TMP/alloc" || fail "allocate slots"
check "Allocate slots: their own variable, CONVGPU_ALLOCATION_GPUS" grep -Eqx '0 CONVGPU_ALLOCATION_GPUS=[0-9a-f]{32}' "$TMP/alloc"
check "units of two GPUs (a two-GPU pod's total) with slots of GPUs 1 and 0: half on each" \
    prints "$((256 << 20)) 0 null [0, 1]" claim a4 "$TS" "$(token 0 CONVGPU_ALLOCATION_GPUS)"
check "two slots of one GPU: refused" refused 3 "on one GPU" allocate --socket "$GPU" gpu0-slot-0,gpu0-slot-1
check "a slot beyond --gpu-slots: refused" refused 3 "beyond that GPU" allocate --socket "$GPU" gpu0-slot-8
check "the same unit twice: refused" refused 3 "twice" allocate --socket "$MEM" gpu0-mem-0,gpu0-mem-0
check "one bad container fails the whole call" refused 3 "twice" allocate --socket "$MEM" gpu0-mem-0 gpu0-mem-1,gpu0-mem-1
check "nothing was registered with convgpud" test "$(registered_count)" = 0

# ---- kubelet restarts: sockets removed, kubelet.sock re-created, registered again --------------
stop_standin
start_standin kubelet2
wait_for "registered again after the kubelet restart" "$WAIT_S" bash -c "[ \$(wc -l <'$ST/registrations' 2>/dev/null) = 3 ]" &&
    pass "kubelet restart: the three resources registered again" || fail "no second registration"
wait_for "listed again" "$WAIT_S" listed $MEMRES $((U0 + U1)) $((U0 + U1)) &&
    pass "kubelet restart: ListAndWatch again" || fail "no list after the restart"
check "kubelet restart: the re-created endpoint answers" bash -c "'$STANDIN' allocate --socket '$MEM' gpu0-mem-1 | grep -q CONVGPU_ALLOCATION="

# ---- health: the daemon goes away and comes back; a GPU goes away and comes back ---------------
kill -TERM "$DAEMON_PID"; wait "$DAEMON_PID"; DAEMON_PID=
wait_for "all memory units Unhealthy" "$WAIT_S" listed $MEMRES $((U0 + U1)) 0 &&
    pass "convgpud stopped: every memory unit Unhealthy" || fail "units stayed Healthy"
wait_for "all compute units Unhealthy" "$WAIT_S" listed $CMPRES 200 0 &&
    pass "convgpud stopped: every compute unit Unhealthy" || fail "compute units stayed Healthy"
wait_for "all slots Unhealthy" "$WAIT_S" listed $GPURES 16 0 &&
    pass "convgpud stopped: every GPU slot Unhealthy" || fail "slots stayed Healthy"
check "Allocate with the daemon down: refused (UNAVAILABLE)" refused 14 "not reachable" allocate --socket "$MEM" gpu0-mem-0
start_daemon --emulate 2GiB
wait_for "GPU 0 Healthy, GPU 1 not" "$WAIT_S" listed $MEMRES $((U0 + U1)) "$U0" &&
    pass "convgpud back with GPU 0 only: GPU 0 Healthy, GPU 1's units still listed, Unhealthy" ||
    { fail "health after a GPU went away"; units $MEMRES | sort -k2 | uniq -c -f1 | head; }
check "Allocate on the missing GPU: refused (FAILED_PRECONDITION)" refused 9 "no longer listed" allocate --socket "$MEM" gpu1-mem-0
check "Allocate on the present GPU works" bash -c "'$STANDIN' allocate --socket '$MEM' gpu0-mem-0 | grep -q CONVGPU_ALLOCATION="
kill -TERM "$DAEMON_PID"; wait "$DAEMON_PID"; DAEMON_PID=
start_daemon --emulate 2GiB,1GiB
wait_for "all Healthy again" "$WAIT_S" listed $MEMRES $((U0 + U1)) $((U0 + U1)) &&
    pass "both GPUs back: every unit Healthy" || fail "not Healthy again"

# ---- a sharing factor: convgpud --oversubscribe 2 doubles the memory units (issue 37) ---------
kill -TERM "$DAEMON_PID"; wait "$DAEMON_PID"; DAEMON_PID=
start_daemon --emulate 2GiB,1GiB --oversubscribe 2
wait_for "twice the memory units listed" "$WAIT_S" listed $MEMRES $((2 * (U0 + U1))) $((2 * (U0 + U1))) &&
    pass "--oversubscribe 2: ListAndWatch lists $((2 * (U0 + U1))) memory units, all Healthy" ||
    { fail "memory list with the factor"; units $MEMRES | wc -l; }
check "... up to gpu1-mem-$((2 * U1 - 1))" grep -qx "gpu1-mem-$((2 * U1 - 1)) Healthy" "$ST/$MEMRES.list"
check "compute stays 100 units per GPU" listed $CMPRES 200 200
check "Allocate: GPU 1's memory in its upper units works" \
    bash -c "'$STANDIN' allocate --socket '$MEM' $(ids 1 mem "$U1" $((2 * U1 - 1))) | grep -q CONVGPU_ALLOCATION="
check "Allocate: more units of GPU 1 than its memory: refused, saying why" \
    refused 3 "exceed GPU 1's memory" allocate --socket "$MEM" "$(ids 1 mem 0 "$U1")"
check "GetPreferredAllocation never gives one container more of a GPU than it has" \
    refused 3 "memory holds" prefer --socket "$MEM" --available "$(ids 1 mem 0 $((2 * U1 - 1)))" --size $((U1 + 1))
check "... and the refusal says how to ask instead" \
    refused 3 "convgpu.io/gpu: N to spread" allocate --socket "$MEM" "$(ids 1 mem 0 "$U1")"
# Units of two GPUs adding up to more than either has: kubelet may hand them to one container
# (Allocate cannot tell a one-GPU container from a two-GPU one: slots are another resource).
# Without slots convgpud refuses the container at create, saying why.
SPREAD=$((U0 + 1))
sa allocate --socket "$MEM" "$(ids 0 mem 0 $((U0 - 1))),$(ids 1 mem 0 $((SPREAD - U0 - 1)))" >"$TMP/alloc" ||
    fail "allocate units of two GPUs: $(cat "$TMP/sa.err")"
TBIG=$(token 0 CONVGPU_ALLOCATION)
body=$(printf '{"id": "big1", "allocation": ["%s"], "allocation_pod": "pod-big1"}' "$TBIG")
out=$(curl -s -w ' %{http_code}' --unix-socket "$RUNDIR/control.sock" -X POST --data "$body" http://convgpu/v1/containers)
check "$SPREAD units on one GPU, more than any has: refused at create (400), saying why" \
    bash -c '[ "${1##* }" = 400 ] && grep -q "more than any GPU of this node has (the largest, GPU 0, has [0-9]* MiB and lists units for more).*convgpu.io/gpu: N" <<<"$1"' _ "$out"
check "... and nothing was created" bash -c "! cg inspect big1 >/dev/null 2>&1"
kill -TERM "$DAEMON_PID"; wait "$DAEMON_PID"; DAEMON_PID=
start_daemon --emulate 2GiB,1GiB
wait_for "back to the capacity's units" "$WAIT_S" listed $MEMRES $((U0 + U1)) $((U0 + U1)) &&
    pass "factor 1 again: the capacity's units listed" ||
    fail "units after the factor went back to 1: $(units $MEMRES | wc -l) listed"

# ---- GPU slots follow the topology: three GPUs, 1 and 2 NVLinked ------------------------------
kill -TERM "$DAEMON_PID"; wait "$DAEMON_PID"; DAEMON_PID=
printf 'nvlink 1 2 2\n' >"$TMP/pair.topo"
start_daemon --emulate 1GiB,1GiB,1GiB --topology "$TMP/pair.topo"
wait_for "the third GPU's slots listed" "$WAIT_S" listed $GPURES 24 24 ||
    fail "the slots of three GPUs were not listed"
SLOTS3="$(ids 0 slot 0 7),$(ids 1 slot 0 7),$(ids 2 slot 0 7)"
check "2 GPU slots: the NVLinked pair (1, 2), not the lowest indexes" \
    test "$(sa prefer --socket "$GPU" --available "$SLOTS3" --size 2)" = "gpu1-slot-0,gpu2-slot-0"
check "must include GPU 0: with GPU 1 (every link from GPU 0 is alike; the lower index)" \
    test "$(sa prefer --socket "$GPU" --available "$SLOTS3" --must gpu0-slot-3 --size 2)" = "gpu0-slot-3,gpu1-slot-0"

# ---- the node operator's options (issue 41): --priority, --no-swap, --exclusive ------------------
# Recorded by the plugin with the memory, so the container gets them from convgpud's record;
# the pod's own CONVGPU_PRIORITY / CONVGPU_NO_SWAP / CONVGPU_EXCLUSIVE are never read.
check "--help lists the operator's options from the option table" \
    bash -c "'$PLUGIN' --help | grep -q -- '--priority N' && '$PLUGIN' --help | grep -q -- '--no-swap' && '$PLUGIN' --help | grep -q -- '--exclusive'"
"$PLUGIN" --priority 10 >/dev/null 2>"$TMP/err" || true
check "--priority 10: refused in the option table's words" grep -q "bad --priority '10'" "$TMP/err"
options_of() { # options_of ID TOKEN: root claims as the shim does; prints "PRIORITY SWAP EXCLUSIVE"
    local body
    body=$(printf '{"id": "%s", "allocation": ["%s"], "allocation_pod": "pod-%s"}' "$1" "$2" "$1")
    curl -s -o /dev/null --unix-socket "$RUNDIR/control.sock" -X POST --data "$body" http://convgpu/v1/containers
    cg inspect "$1" 2>/dev/null | python3 -c 'import json,sys; c=json.load(sys.stdin); print(c["priority"], c["swap_allowed"], c["exclusive"])'
    curl -s -o /dev/null --unix-socket "$RUNDIR/control.sock" -X DELETE "http://convgpu/v1/containers/$1"
}
kill -TERM "$DAEMON_PID"; wait "$DAEMON_PID"; DAEMON_PID=
start_daemon --emulate 1GiB,1GiB,1GiB --swap yes # so that a container's swap refusal shows
wait_for "the units Healthy again" "$WAIT_S" listed $MEMRES 12 12
sa allocate --socket "$MEM" gpu0-mem-0 >"$TMP/alloc" || fail "allocate: $(cat "$TMP/sa.err")"
check "without the options: priority 0, swappable, not exclusive" \
    prints "0 True False" options_of o1 "$(token 0 CONVGPU_ALLOCATION)"
stop_plugin
"$PLUGIN" --plugin-dir "$DP" --runtime-dir "$RUNDIR" --poll-ms 100 --priority 7 --no-swap --exclusive \
    >>"$TMP/plugin.log" 2>&1 &
PLUGIN_PID=$!
wait_for "the plugin serves again, with the operator's options" "$WAIT_S" test -S "$MEM"
wait_for "the memory units listed again" "$WAIT_S" listed $MEMRES 12 12
sa allocate --socket "$MEM" gpu1-mem-0,gpu1-mem-1 >"$TMP/alloc" || fail "allocate: $(cat "$TMP/sa.err")"
check "with --priority 7 --no-swap --exclusive: the container has priority 7, no swap, GPU 1 alone" \
    prints "7 False True" options_of o2 "$(token 0 CONVGPU_ALLOCATION)"

# ---- the plugin stops: its sockets go ---------------------------------------------------------
stop_plugin
check "stopped: endpoint sockets removed" test ! -e "$MEM" -a ! -e "$CMP" -a ! -e "$GPU"
[ "$FAILS" = 0 ] || { echo "--- plugin log ---"; tail -n 30 "$TMP/plugin.log"; }
finish

# cluster.sh — a real Slurm cluster for one test: munge, slurmctld and N slurmd nodes, each
# node with its own convgpud on the emulated GPU, all inside namespaces of the test's own, so
# nothing of the machine's Slurm, munge, network or /run is read or touched.
#
# Source it from a test script (after setting nothing), then call `start_cluster N`:
#
#   the test (PID 1 of a new pid+net+mount+uts namespace; `ctl` is its hostname)
#   ├── munged          its own key and socket in $TMP/munge
#   ├── slurmctld       on 10.77.0.1, bridge cgbr0; srun/sbatch/squeue run here
#   ├── node n1: net+mount+uts namespace, veth into cgbr0, 10.77.0.11, $TMP/nodes/n1 bound
#   │   ├── convgpud    --runtime-dir $TMP/node/run (each node sees its own) --emulate
#   │   └── slurmd -N n1
#   └── node n2 ...     10.77.0.12
#
# Why namespaces: Debian's slurmd is built without multiple-slurmd support, so two slurmd on one
# host would fight over port 6818 and one spool directory. A network namespace per node gives
# each its own address and ports; a mount namespace gives each the same path ($TMP/node) for
# different files, so slurm.conf and plugstack.conf can be one file for every node, as on a
# real cluster. The pid namespace is the cleanup that cannot be skipped: when the test's shell
# (its init) ends, however it ends, the kernel kills every process it started.
#
# Every wait is for a condition (munge answers, sinfo lists the nodes idle, convgpud answers),
# bounded by a generous deadline (WAIT_S) that only catches a hang.
set -eu

SLURM_TEST_SCRIPT=$(readlink -f "$0")
SLURM_SKIP=77 # CTest's SKIP_RETURN_CODE for these tests

slurm_skip() { echo "SKIP: $*"; exit "$SLURM_SKIP"; }

# Outside: check what the cluster needs, then run the test again as PID 1 of fresh namespaces.
if [ -z "${CONVGPU_SLURM_INSIDE:-}" ]; then
    [ "$(id -u)" -eq 0 ] || slurm_skip "the Slurm tests start slurmctld/slurmd/munged: run as root"
    for b in slurmctld slurmd srun sbatch sinfo squeue scancel munged unshare nsenter ip; do
        command -v "$b" >/dev/null 2>&1 || PATH=$PATH:/usr/sbin command -v "$b" >/dev/null 2>&1 ||
            slurm_skip "$b not found (install Debian's slurmctld slurmd slurm-client munge:" \
                "scripts/install-deps.sh)"
    done
    unshare --net --pid --fork --mount --uts true 2>/dev/null ||
        slurm_skip "cannot create network/pid/mount namespaces here"
    marker=$(mktemp /tmp/convgpu-slurm-marker.XXXXXX)
    # --kill-child: if ctest kills this wrapper, the namespace's init goes too, and with it
    # every process of the cluster.
    rc=0
    CONVGPU_SLURM_INSIDE=1 CONVGPU_SLURM_MARKER=$marker PATH=$PATH:/usr/sbin \
        unshare --net --pid --fork --mount-proc --uts --propagation private \
        --kill-child=TERM bash "$SLURM_TEST_SCRIPT" "$@" || rc=$?
    # The inside removes its directory; this catches a shell killed before its trap ran.
    left=$(cat "$marker" 2>/dev/null || true)
    case $left in /tmp/convgpu-e2e.*) rm -rf "$left" ;; esac
    rm -f "$marker"
    exit "$rc"
fi

# Inside: PID 1 of the namespaces.
# shellcheck source=../e2e/lib.sh
. "${CONVGPU_SOURCE_DIR:?}/tests/e2e/lib.sh"
echo "$TMP" >"$CONVGPU_SLURM_MARKER"
unset CONVGPU_EMU_STATE # lib.sh's single daemon; each node's daemon has its own
# Job steps run as the job's user, who must reach the node's convgpud socket, munge's socket and
# the tools: the tree is world-traversable (nothing in it is secret but munge's key, 0600).
chmod 0755 "$TMP"
hostname ctl

SLURM_NODES=()      # node names, n1..nN
declare -A NODE_NS  # node -> pid of the process holding its namespaces
declare -A NODE_DAEMON NODE_SLURMD
SLURMCTLD_PID=
MUNGED_PID=
export SLURM_CONF=$TMP/slurm.conf
SUBNET=10.77.0
SPANK_SO=${SPANK_SO-$BUILD/lib/convgpu/convgpu_spank.so} # empty: no plugin (the harness alone)

cluster_cleanup() {
    local rc=$?
    set +e
    # Ask politely first (slurmstepd's SPANK exit hooks run, daemons save nothing we need).
    for n in "${SLURM_NODES[@]}"; do
        [ -n "${NODE_SLURMD[$n]:-}" ] && kill -TERM "${NODE_SLURMD[$n]}" 2>/dev/null
    done
    [ -n "$SLURMCTLD_PID" ] && kill -TERM "$SLURMCTLD_PID" 2>/dev/null
    for n in "${SLURM_NODES[@]}"; do
        [ -n "${NODE_SLURMD[$n]:-}" ] && wait "${NODE_SLURMD[$n]}" 2>/dev/null
        [ -n "${NODE_DAEMON[$n]:-}" ] && kill -TERM "${NODE_DAEMON[$n]}" 2>/dev/null &&
            wait "${NODE_DAEMON[$n]}" 2>/dev/null
    done
    [ -n "$SLURMCTLD_PID" ] && wait "$SLURMCTLD_PID" 2>/dev/null
    [ -n "$MUNGED_PID" ] && kill -TERM "$MUNGED_PID" 2>/dev/null && wait "$MUNGED_PID" 2>/dev/null
    if [ "$rc" -ne 0 ] || [ "$FAILS" -ne 0 ] || [ -n "${KEEP_TMP:-}" ]; then
        echo "--- slurmctld log ---"; tail -n 40 "$TMP/ctld/slurmctld.log" 2>/dev/null
        tail -n 10 "$TMP/ctld/slurmctld.out" 2>/dev/null
        for n in "${SLURM_NODES[@]}"; do
            echo "--- $n: slurmd log ---"; tail -n 40 "$TMP/nodes/$n/slurmd.log" 2>/dev/null
            echo "--- $n: convgpud log ---"; tail -n 30 "$TMP/nodes/$n/daemon.log" 2>/dev/null
        done
    fi
    for n in "${SLURM_NODES[@]}"; do
        [ -n "${NODE_NS[$n]:-}" ] && kill -KILL "${NODE_NS[$n]}" 2>/dev/null &&
            wait "${NODE_NS[$n]}" 2>/dev/null
    done
    cleanup # lib.sh: anything else naming $TMP, then the directory
    exit "$rc"
}
trap cluster_cleanup EXIT
trap 'exit 143' TERM
trap 'exit 130' INT

on_node() { # on_node NODE COMMAND...: run in the node's namespaces (its network, its $TMP/node)
    local n=$1; shift
    nsenter --target "${NODE_NS[$n]}" --net --mount --uts -- "$@"
}
# A daemon of the node is started with nsenter itself, not through on_node: nsenter (entering
# no pid namespace) execs the daemon, so $! is the daemon's pid, not a subshell's.
NSENTER_NODE=(nsenter --net --mount --uts --target)

node_api() { # node_api NODE METHOD PATH: the node's convgpud control API, prints "STATUS BODY"
    curl -s -o - -w ' %{http_code}' --unix-socket "$TMP/nodes/$1/run/control.sock" \
        -X "$2" "http://convgpu$3" || true
}

node_containers() { # node_containers NODE: the ids of the containers registered on the node
    curl -sf --unix-socket "$TMP/nodes/$1/run/control.sock" http://convgpu/v1/containers |
        python3 -c 'import json,sys
d=json.load(sys.stdin)
for c in (d if isinstance(d,list) else d.get("containers",[])): print(c["id"])'
}

start_munge() {
    mkdir -p "$TMP/munge"
    chmod 0755 "$TMP/munge"
    dd if=/dev/urandom of="$TMP/munge/munge.key" bs=1024 count=1 status=none
    chmod 0400 "$TMP/munge/munge.key"
    # --force: munged refuses root without it; the directory checks are the point of it
    # elsewhere, and this tree is the test's own.
    munged --foreground --force --socket="$TMP/munge/munge.socket" \
        --key-file="$TMP/munge/munge.key" --pid-file="$TMP/munge/munged.pid" \
        --log-file="$TMP/munge/munged.log" --seed-file="$TMP/munge/munged.seed" \
        >>"$TMP/munge/munged.out" 2>&1 &
    MUNGED_PID=$!
    wait_for "munged answering" "$WAIT_S" \
        sh -c "munge -n -S '$TMP/munge/munge.socket' | unmunge -S '$TMP/munge/munge.socket'"
}

write_slurm_conf() { # write_slurm_conf: slurm.conf, gres.conf, plugstack.conf, job_submit.lua
    mkdir -p "$TMP/ctld/state"
    {
        cat <<EOF
# Generated by tests/slurm/cluster.sh for one test; lives in $TMP.
ClusterName=convgpu
SlurmctldHost=ctl($SUBNET.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$TMP/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$TMP/ctld/state
SlurmctldPidFile=$TMP/ctld/slurmctld.pid
SlurmctldLogFile=$TMP/ctld/slurmctld.log
SlurmctldDebug=info
SlurmdSpoolDir=$TMP/node/spool
SlurmdPidFile=$TMP/node/slurmd.pid
SlurmdLogFile=$TMP/node/slurmd.log
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
PlugStackConfig=$TMP/plugstack.conf
GresTypes=gpumem,gpucompute
JobSubmitPlugins=lua
${EXTRA_SLURM_CONF:-}
EOF
        local n gres
        for n in "${SLURM_NODES[@]}"; do
            gres=$(sed -n 's/^# Gres=//p' "$TMP/nodes/$n/gres-conf")
            echo "NodeName=$n NodeAddr=$SUBNET.$((10 + ${n#n})) CPUs=${NODE_CPUS:-2} Gres=$gres State=UNKNOWN"
        done
        echo "PartitionName=main Nodes=ALL Default=YES MaxTime=INFINITE State=UP ${PARTITION_ARGS:-}"
    } >"$SLURM_CONF"
    for n in "${SLURM_NODES[@]}"; do grep -v '^#' "$TMP/nodes/$n/gres-conf"; done >"$TMP/gres.conf"
    if [ -n "$SPANK_SO" ]; then
        echo "required $SPANK_SO runtime_dir=$TMP/node/run ${SPANK_ARGS:-}"
    fi >"$TMP/plugstack.conf"
    cp "$CONVGPU_SOURCE_DIR/src/integrations/slurm/job_submit.lua" "$TMP/job_submit.lua"
}

own_netns() { # own_netns PID: the process has left our network namespace (unshare is done)
    [ "$(readlink "/proc/$1/ns/net")" != "$(readlink /proc/self/ns/net)" ]
}

# The node's namespaces are held by one idle process; everything of the node enters them.
start_node() { # start_node INDEX: the node's namespaces, network and convgpud (slurmd later)
    local i=$1 n="n$1"
    local dir=$TMP/nodes/$n
    mkdir -p "$dir/spool" "$dir/run" "$TMP/node"
    chmod 0755 "$TMP/nodes" "$dir" "$dir/run"
    unshare --net --mount --uts --propagation private sleep infinity &
    NODE_NS[$n]=$!
    SLURM_NODES+=("$n")
    wait_for "namespaces of $n" "$WAIT_S" own_netns "${NODE_NS[$n]}"
    ip link add "cgv$i" type veth peer name eth0 netns "${NODE_NS[$n]}"
    ip link set "cgv$i" master cgbr0 up
    on_node "$n" hostname "$n"
    on_node "$n" ip link set lo up
    on_node "$n" ip addr add "$SUBNET.$((10 + i))/24" dev eth0
    on_node "$n" ip link set eth0 up
    on_node "$n" mount --bind "$dir" "$TMP/node"
    # What an administrator prepares on a node so that tasks which clear their environment stay
    # fenced (task_mounts.h): an empty /etc/ld.so.preload and a /run/convgpu directory. Here
    # they are made in the node's own view only, on overlays of /etc and /run kept in $dir.
    local d
    for d in etc run; do
        mkdir -p "$dir/overlay/$d/upper" "$dir/overlay/$d/work"
        on_node "$n" mount -t overlay "overlay-$n-$d" \
            -o "lowerdir=/$d,upperdir=$dir/overlay/$d/upper,workdir=$dir/overlay/$d/work" "/$d"
    done
    on_node "$n" touch /etc/ld.so.preload
    on_node "$n" mkdir -p /run/convgpu
    start_node_daemon "$n"
    # The emulated GPU is one state file the daemon creates 0600; a job's tasks run as the job's
    # user and open it as a driver would open /dev/nvidia*, so it is opened up to them here (a
    # test-only step: a real GPU's device nodes are the administrator's).
    chmod 0755 "$dir/run/emu"
    chmod 0666 "$dir/run/emu/state"
    # The node's GRES, as an administrator would take them: from `convgpu slurm gres-conf`.
    "$BUILD/bin/convgpu" --runtime-dir "$dir/run" slurm gres-conf --node "$n" >"$dir/gres-conf"
}

start_node_daemon() { # start_node_daemon NODE: convgpud on the node's emulated GPU
    local n=$1 dir=$TMP/nodes/$1
    # Its runtime dir is $TMP/node/run inside the node, $TMP/nodes/NODE/run from here.
    CONVGPU_EMU_STATE=$TMP/node/run/emu/state CONVGPU_EMU_CONTEXT=66MiB \
        "${NSENTER_NODE[@]}" "${NODE_NS[$n]}" -- "$BUILD/bin/convgpud" \
        --runtime-dir "$TMP/node/run" --foreground --log-level debug \
        --emulate "${NODE_GPU:-4GiB}" ${NODE_DAEMON_ARGS:-} >>"$dir/daemon.log" 2>&1 &
    NODE_DAEMON[$n]=$!
    wait_for "convgpud on $n answering" "$WAIT_S" \
        curl -sf -o /dev/null --unix-socket "$dir/run/control.sock" http://convgpu/v1/version
}

stop_node_daemon() { # stop_node_daemon NODE
    kill -TERM "${NODE_DAEMON[$1]}" && wait "${NODE_DAEMON[$1]}" || true
    NODE_DAEMON[$1]=
}

start_slurmd() { # start_slurmd NODE
    local n=$1
    "${NSENTER_NODE[@]}" "${NODE_NS[$n]}" -- slurmd -D -N "$n" -f "$SLURM_CONF" \
        >>"$TMP/nodes/$n/slurmd.out" 2>&1 &
    NODE_SLURMD[$n]=$!
}

nodes_idle() { # every node idle in sinfo
    local want=$1 got
    got=$(sinfo -h -N -o '%N %t' 2>/dev/null | awk '$2 == "idle"' | wc -l)
    [ "$got" -eq "$want" ]
}

start_cluster() { # start_cluster N: munge, N nodes' convgpud, slurmctld, slurmd; all idle
    local nodes=${1:-2} n
    [ -z "$SPANK_SO" ] || [ -f "$SPANK_SO" ] ||
        slurm_skip "the SPANK plugin was not built (no spank.h: libslurm-dev)"
    ip link set lo up
    ip link add cgbr0 type bridge
    ip addr add "$SUBNET.1/24" dev cgbr0
    ip link set cgbr0 up
    start_munge
    # The daemons first: slurm.conf carries each node's GRES, which come from its daemon.
    for i in $(seq 1 "$nodes"); do start_node "$i"; done
    write_slurm_conf
    slurmctld -D -i -f "$SLURM_CONF" >>"$TMP/ctld/slurmctld.out" 2>&1 &
    SLURMCTLD_PID=$!
    wait_for "slurmctld answering" "$WAIT_S" sh -c "scontrol ping | grep -q UP"
    for n in "${SLURM_NODES[@]}"; do start_slurmd "$n"; done
    wait_for "$nodes nodes idle in sinfo" "$WAIT_S" nodes_idle "$nodes"
}

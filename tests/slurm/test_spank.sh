#!/usr/bin/env bash
# test_spank.sh — the SPANK plugin on a real two-node Slurm cluster (cluster.sh) with a convgpud
# on two emulated GPUs of each node: the options' checks at submission, a step within its limit,
# a step past it (out of memory), the container's owner and limit while the step runs, its
# removal when the step ends, when it is cancelled and when its slurmstepd is killed, a step on
# both nodes, a step on two GPUs of a node (--gpu-count), and a job that asks for nothing.
. "$(dirname "$(readlink -f "$0")")/cluster.sh"

SAMPLE=$BUILD/bin/convgpu-sample
PROBE=$BUILD/bin/ip_probe
NOBODY=65534
MiB=$((1 << 20))
NODE_GPU=2x2GiB # every node's convgpud, also when the test restarts one
start_cluster 2

as_user() { setpriv --reuid="$NOBODY" --regid="$NOBODY" --clear-groups "$@"; }
containers_on() { node_containers "$1" | tr '\n' ' '; }
no_containers() { [ -z "$(node_containers "$1")" ]; }
has_container() { node_containers "$1" | grep -qx "$2"; }
any_container() { [ -n "$(node_containers "$1")" ]; }
processes_are() { [ "$(field "$1" "$2" processes)" = "$3" ]; }
field() { # field NODE ID FIELD
    curl -sf --unix-socket "$TMP/nodes/$1/run/control.sock" "http://convgpu/v1/containers/$2" |
        json_get "$3"
}
job_state() { squeue -h -j "$1" -o %T 2>/dev/null; }
job_gone() { [ -z "$(job_state "$1")" ]; }
job_running() { [ "$(job_state "$1")" = RUNNING ]; }
eventually() { # eventually WHAT COMMAND...: a check that may need a moment (bounded by WAIT_S)
    local what=$1; shift
    if wait_for "$what" "$WAIT_S" "$@"; then pass "$what"; else fail "$what"; fi
}
refused() { # refused WHAT PATTERN COMMAND...: the command fails and says PATTERN
    local what=$1 pat=$2 out rc=0; shift 2
    out=$("$@" 2>&1) || rc=$?
    if [ "$rc" -ne 0 ] && grep -q -- "$pat" <<<"$out"; then pass "$what"; else
        fail "$what (rc $rc): $out"; fi
}
cd /tmp # the user's working directory must exist on the nodes, and nobody can enter $TMP's subdirs

# --- bad input: refused at submission, nothing queued or registered
refused "srun --gpu-mem=abc refused" "gpu-mem=abc" srun --gpu-mem=abc true
refused "srun --gpu-mem=0 refused" "gpu-mem=0" srun --gpu-mem=0 true
refused "srun --gpu-compute=0 refused" "gpu-compute=0" srun --gpu-mem=1GiB --gpu-compute=0 true
refused "srun --gpu-compute=101 refused" "gpu-compute=101" \
    srun --gpu-mem=1GiB --gpu-compute=101 true
refused "--gpu-compute without --gpu-mem refused" "needs --gpu-mem" srun --gpu-compute=30 true
refused "srun --gpu-count=0 refused, naming the option and value" "gpu-count=0: .*1 to 64" \
    srun -w n1 --gpu-mem=1GiB --gpu-count=0 touch "$TMP/count0-ran"
check "... its program never started" test ! -e "$TMP/count0-ran"
refused "srun --gpu-count=65 refused" "gpu-count=65" srun --gpu-mem=1GiB --gpu-count=65 true
refused "srun --gpu-priority=10 refused (the option table's bounds)" "bad --gpu-priority '10'" \
    srun --gpu-mem=1GiB --gpu-priority=10 true
refused "srun --gpu-compute-mode=soft refused" "bad --gpu-compute-mode 'soft'" \
    srun --gpu-mem=1GiB --gpu-compute=30 --gpu-compute-mode=soft true
refused "--gpu-exclusive without --gpu-mem refused" "gpu-exclusive needs --gpu-mem" \
    srun --gpu-exclusive true
refused "sbatch --gpu-count=two refused" "gpu-count=two" \
    sbatch --gpu-mem=1GiB --gpu-count=two --wrap true
refused "--gpu-count without --gpu-mem refused" "gpu-count needs --gpu-mem" \
    srun --gpu-count=2 true
refused "sbatch --gpu-mem=abc refused" "gpu-mem=abc" sbatch --gpu-mem=abc --wrap true
refused "salloc --gpu-mem=1x refused" "gpu-mem=1x" salloc --gpu-mem=1x true
check "nothing was queued by the refused submissions" test -z "$(squeue -h)"
check "nothing was registered by the refused submissions" no_containers n1

# --- more than the node's GPU has: refused at submission (slurmctld counts the node's GRES)
refused "a step asking more than the node's GPU is refused" "not available" \
    srun -w n1 --gpu-mem=100GiB true

# --- the node's convgpud cannot fence the step: the step does not run, the reason reaches
# the user (each task prints it and exits 1)
stop_node_daemon n1
refused "a step on a node whose convgpud is down does not run" "cannot reach convgpud" \
    srun -w n1 --gpu-mem=100MiB bash -c "touch $TMP/unfenced-ran"
check "... its program never started" test ! -e "$TMP/unfenced-ran"
start_node_daemon n1
check "nothing stays registered after the refusal" no_containers n1

# --- a job that asks for nothing is not touched
out=$(srun -w n1 env)
not() { ! "$@"; }
check "a step without --gpu-mem gets no LD_PRELOAD" not grep -q '^LD_PRELOAD=' <<<"$out"
check "a step without --gpu-mem gets no CONVGPU_SOCKET" not grep -q '^CONVGPU_SOCKET=' <<<"$out"

# --- within its limit: runs; past it: out of memory (convgpu-sample exits 2)
rc=0; srun -w n1 --gpu-mem=256MiB "$SAMPLE" --size 128MiB --quiet || rc=$?
check "a step within its limit runs (rc $rc)" test "$rc" -eq 0
rc=0; srun -w n1 --gpu-mem=256MiB "$SAMPLE" --size 512MiB --quiet 2>/dev/null || rc=$?
check "a step past its limit gets out-of-memory (rc $rc, want 2)" test "$rc" -eq 2
rc=0; LD_LIBRARY_PATH="$BUILD/lib/emu" CONVGPU_EMU_STATE="$TMP/node/run/emu/state" \
    srun -w n1 "$SAMPLE" --size 512MiB --touch 1MiB --quiet || rc=$?
check "the same allocation without the plugin's limit fits the node's GPU (rc $rc)" test "$rc" -eq 0
eventually "steps' containers gone from n1 after they ended" no_containers n1

# --- a task that clears its environment is still fenced: its own mount namespace has the
# interposer in /etc/ld.so.preload and its container's socket at /run/convgpu
rc=0; srun -w n1 --gpu-mem=256MiB env -u LD_PRELOAD -u CONVGPU_SOCKET \
    "$SAMPLE" --size 512MiB --touch 1MiB --quiet 2>/dev/null || rc=$?
check "a task without LD_PRELOAD and CONVGPU_SOCKET still gets out-of-memory (rc $rc)" \
    test "$rc" -eq 2
rc=0; srun -w n1 --gpu-mem=256MiB env -u LD_PRELOAD -u CONVGPU_SOCKET \
    "$SAMPLE" --size 128MiB --quiet || rc=$?
check "... and runs within its limit (rc $rc)" test "$rc" -eq 0
check "the machine's own /etc/ld.so.preload was never created" test ! -e /etc/ld.so.preload
out=$(srun -w n1 cat /etc/ld.so.preload)
check "a step without --gpu-mem sees the node's (empty) /etc/ld.so.preload" test -z "$out"

# --- while a step runs: the container, its limit and its owner (a user's job)
# (with the option table's other SPANK options: compute share and mode, priority)
as_user srun -w n1 --gpu-mem=300MiB --gpu-compute=30 --gpu-compute-mode=hard --gpu-priority=7 \
    "$SAMPLE" --size 64MiB --quiet --hold-until "$TMP/release.1" &
srun_pid=$!
eventually "the user's step registered on n1" any_container n1
id=$(node_containers n1 | head -n1)
check "the container is named after the step ($id)" bash -c "[[ '$id' =~ ^slurm-[0-9]+\.0$ ]]"
check "its limit is --gpu-mem" test "$(field n1 "$id" limit)" = $((300 << 20))
check "its owner is the job's uid" test "$(field n1 "$id" uid)" = "$NOBODY"
check "its share is --gpu-compute, hard (--gpu-compute-mode)" \
    test "$(field n1 "$id" gpu_compute) $(field n1 "$id" compute_mode)" = "30 hard"
check "its priority is --gpu-priority" test "$(field n1 "$id" priority)" = 7
check "the daemon watches the step's slurmstepd (its owner, removed when it exits)" \
    grep -q slurmstepd "/proc/$(field n1 "$id" owner_pid)/comm"
eventually "the step's process connected to its container" processes_are n1 "$id" 1
touch "$TMP/release.1"
rc=0; wait "$srun_pid" || rc=$?
check "the user's step ran to its end (rc $rc)" test "$rc" -eq 0
eventually "its container removed when the step ended" no_containers n1

# --- --gpu-count=2: the step's container has two GPUs of the node, each with the whole
# --gpu-mem; CUDA in the step sees two devices, each with its own limit
srun -w n1 --gpu-mem=256MiB --gpu-count=2 \
    "$PROBE" gpus "$TMP/gang.hold" 64MiB 32MiB >"$TMP/gang.out" 2>&1 &
srun_pid=$!
# Either the program holds its memory, or the step ended early (then what it said is shown).
wait_for "the two-GPU step's program holding memory, or its end" "$WAIT_S" \
    sh -c "test -e '$TMP/gang.hold' || ! kill -0 $srun_pid" || true
check "the two-GPU step's program holds memory on both devices" test -e "$TMP/gang.hold"
[ -e "$TMP/gang.hold" ] || sed 's/^/  step: /' "$TMP/gang.out" >&2
id=$(node_containers n1 | head -n1)
check "its container ($id) has 2 GPUs" test "$(field n1 "$id" gpus)" = 2
check "... GPUs 0 and 1 of the node" test "$(field n1 "$id" devices)" = "[0, 1]"
check "... each with the --gpu-mem limit" test "$(field n1 "$id" limit)" = $((256 * MiB))
check "CUDA sees 2 devices" test "$(grep -c '^gpu [0-9]* free=' "$TMP/gang.out")" = 2
check "... each with total 256MiB (cuMemGetInfo and NVML)" \
    test "$(grep -c "total=$((256 * MiB)) nvml_total=$((256 * MiB))\$" "$TMP/gang.out")" = 2
check "... both allocations succeeded" test "$(grep -c 'alloc rc=0$' "$TMP/gang.out")" = 2
rm -f "$TMP/gang.hold"
rc=0; wait "$srun_pid" || rc=$?
check "the two-GPU step ran to its end (rc $rc)" test "$rc" -eq 0
eventually "its container removed when the step ended" no_containers n1
refused "--gpu-count=3 on a node of 2 GPUs: the step does not run, the daemon's reason shown" \
    "gpus must be an integer from 1 to 2" \
    srun -w n1 --gpu-mem=256MiB --gpu-count=3 touch "$TMP/count3-ran"
check "... its program never started" test ! -e "$TMP/count3-ran"
check "... and nothing stays registered" no_containers n1

# --- a step on both nodes: one container on each
srun -N2 --gpu-mem=200MiB "$SAMPLE" --size 64MiB --quiet --hold-until "$TMP/release.2" &
srun_pid=$!
eventually "the two-node step registered on n1" any_container n1
eventually "the two-node step registered on n2" any_container n2
touch "$TMP/release.2"
rc=0; wait "$srun_pid" || rc=$?
check "the two-node step ran (rc $rc)" test "$rc" -eq 0
eventually "its container on n1 removed" no_containers n1
eventually "its container on n2 removed" no_containers n2

# --- scancel of a running batch job: its memory returns at once
job=$(sbatch --parsable -w n2 --gpu-mem=400MiB \
    --wrap "exec $SAMPLE --size 64MiB --quiet --hold-until $TMP/never")
eventually "the batch job running" job_running "$job"
eventually "its batch step registered on n2" has_container n2 "slurm-$job.batch"
scancel "$job"
eventually "scancel removed its container" no_containers n2
eventually "the cancelled job gone from the queue" job_gone "$job"

# --- slurmstepd killed outright (no exit hook runs): convgpud removes the container itself
job=$(sbatch --parsable -w n2 --gpu-mem=400MiB \
    --wrap "exec $SAMPLE --size 64MiB --quiet --hold-until $TMP/never")
eventually "the second batch job's step registered on n2" \
    has_container n2 "slurm-$job.batch"
stepd=$(field n2 "slurm-$job.batch" owner_pid)
kill -KILL "$stepd"
eventually "the container removed when its slurmstepd was killed" no_containers n2
scancel "$job" 2>/dev/null || true

# --- a batch job's srun steps run in the batch step's container on the batch node (the job's
# limit once, as slurmctld counted it) and in their own on the other node
job=$(sbatch --parsable -N2 --gpu-mem=500MiB -o "$TMP/batch.out" \
    --wrap "srun -N2 $SAMPLE --size 64MiB --quiet --hold-until $TMP/release.3 && echo steps-ok")
eventually "the two-node batch job running" job_running "$job"
bhost=$(squeue -h -j "$job" -o %B)
ohost=n1; [ "$bhost" = n1 ] && ohost=n2
eventually "its srun step registered on the other node ($ohost)" \
    has_container "$ohost" "slurm-$job.0"
eventually "the step's task on the batch node ($bhost) connected to the batch step's container" \
    processes_are "$bhost" "slurm-$job.batch" 1
check "no container of its own for the step on the batch node" \
    test "$(containers_on "$bhost")" = "slurm-$job.batch "
check "the batch step's environment is kept for the job's steps, root's only" \
    test "$(stat -c '%U %a' "$TMP/nodes/$bhost/run/slurm/$job.env")" = "root 600"
touch "$TMP/release.3"
eventually "the batch job ended" job_gone "$job"
check "its steps ran" grep -q steps-ok "$TMP/batch.out"
eventually "its containers removed from $bhost" no_containers "$bhost"
eventually "... and from $ohost" no_containers "$ohost"
check "the kept environment removed with the batch step" \
    test ! -e "$TMP/nodes/$bhost/run/slurm/$job.env"

finish

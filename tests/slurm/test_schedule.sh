#!/usr/bin/env bash
# test_schedule.sh — slurmctld schedules GPU memory: each node's GRES come from its convgpud
# (`convgpu slurm gres-conf`), job_submit.lua turns --gpu-mem/--gpu-compute/--gpu-count into GRES
# requests (N GPUs: N times the memory and share), so a job that asks more than a node has free
# waits in the queue with Reason=Resources and starts when the other ends; more than any node has
# is refused at submission; a job cannot request the GRES behind --gpu-mem's back.
. "$(dirname "$(readlink -f "$0")")/cluster.sh"

SAMPLE=$BUILD/bin/convgpu-sample
NODE_GPU=4GiB start_cluster 2
cd /tmp

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
job_state() { squeue -h -j "$1" -o %T 2>/dev/null; }
job_is() { [ "$(job_state "$1")" = "$2" ]; }
not() { ! "$@"; }
job_pends_for() { [ "$(squeue -h -j "$1" -o '%T %r' 2>/dev/null)" = "PENDING $2" ]; }
job_gone() { [ -z "$(job_state "$1")" ]; }
has_container() {
    curl -sf --unix-socket "$TMP/nodes/$1/run/control.sock" "http://convgpu/v1/containers/$2" \
        >/dev/null
}

# --- the node's GRES are its daemon's capacity
gc=$("$BUILD/bin/convgpu" --runtime-dir "$TMP/nodes/n1/run" slurm gres-conf --node n1)
check "gres-conf: gpumem is the device's capacity in MiB" \
    grep -qx "NodeName=n1 Name=gpumem Count=4096" <<<"$gc"
check "gres-conf: gpucompute is 100 per GPU" \
    grep -qx "NodeName=n1 Name=gpucompute Count=100" <<<"$gc"
check "gres-conf: the node line's Gres" grep -qx "# Gres=gpumem:4096,gpucompute:100" <<<"$gc"
refused "gres-conf refuses a bad node name" "not a node name" \
    "$BUILD/bin/convgpu" --runtime-dir "$TMP/nodes/n1/run" slurm gres-conf --node 'n1 x'
check "slurmctld counts the node's GRES" \
    bash -c "scontrol show node n1 | grep -q 'Gres=gpumem:4K,gpucompute:100'"

# --- one request: --gpu-mem is the GRES request
job=$(sbatch --parsable -w n1 --gpu-mem=1.5GiB --gpu-compute=30 -o /dev/null --wrap true)
check "--gpu-mem=1.5GiB --gpu-compute=30 asks gres gpumem:1536 and gpucompute:30" \
    bash -c "squeue -h -j $job -o %b | grep -q 'gres:gpumem:1536,gres:gpucompute:30'"
# --gpu-count=N: N GPUs on the node, each with the whole limit and share, so N times the GRES.
# Held (-H), so that it stays in the queue while squeue is asked.
gang=$(sbatch --parsable -H -w n1 --gpu-mem=1.5GiB --gpu-compute=30 --gpu-count=2 -o /dev/null \
    --wrap true)
check "--gpu-mem=1.5GiB --gpu-compute=30 --gpu-count=2 asks gres gpumem:3072 and gpucompute:60" \
    bash -c "squeue -h -j $gang -o %b | grep -q 'gres:gpumem:3072,gres:gpucompute:60'"
scancel "$gang"
refused "--gpu-count=3 of 1.5GiB (4.5GiB) on 4GiB nodes is refused at submission" \
    "not available" sbatch --gpu-mem=1.5GiB --gpu-count=3 --wrap true
refused "a job naming the gres itself beside --gpu-mem is refused" "give --gpu-mem" \
    sbatch --gpu-mem=1GiB --gres=gpumem:10 --wrap true
refused "more than any node has is refused at submission" "not available" \
    sbatch --gpu-mem=5GiB --wrap true
eventually "the small job ended" job_gone "$job"

# --- more than is free: pends with Reason=Resources, starts when the other ends
big=$(sbatch --parsable -w n1 --gpu-mem=3GiB -o /dev/null \
    --wrap "exec $SAMPLE --size 64MiB --quiet --hold-until $TMP/release.big")
eventually "the 3GiB job runs on n1" job_is "$big" RUNNING
eventually "its step holds 3GiB on n1's convgpud" has_container n1 "slurm-$big.batch"
next=$(sbatch --parsable -w n1 --gpu-mem=2GiB -o "$TMP/next.out" \
    --wrap "$SAMPLE --size 1GiB --quiet && echo next-ran")
# The scheduler's verdict, once it has looked at the job (right after submission the reason
# is None): it waits in the queue for Resources, not inside the node.
eventually "the 2GiB job pends with Reason=Resources" job_pends_for "$next" Resources
check "... and nothing of it is registered on n1" not has_container n1 "slurm-$next.batch"
# Another node with room is not held up by n1:
other=$(sbatch --parsable -w n2 --gpu-mem=2GiB -o /dev/null --wrap true)
eventually "a 2GiB job on n2 runs meanwhile and ends" job_gone "$other"
touch "$TMP/release.big"
eventually "the 3GiB job ended" job_gone "$big"
eventually "the pending job started and ended" job_gone "$next"
check "the pending job's program ran within its limit" grep -q next-ran "$TMP/next.out"

# --- a sharing factor at run time (issue 37): n1's convgpud restarted with --oversubscribe 2,
# `gres-conf --apply` tells slurmctld (scontrol update), and two 3GiB jobs run on n1 at once.
stop_node_daemon n1
NODE_DAEMON_ARGS="--oversubscribe 2" start_node_daemon n1
chmod 0666 "$TMP/nodes/n1/run/emu/state"
out=$("$BUILD/bin/convgpu" --runtime-dir "$TMP/nodes/n1/run" slurm gres-conf --node n1 --apply 2>&1)
check "gres-conf --apply runs scontrol update with the promised MiB" \
    grep -qx "# applied: scontrol update NodeName=n1 Gres=gpumem:8192,gpucompute:100" <<<"$out"
check "slurmctld now counts 8K of gpumem on n1, without a restart" \
    bash -c "scontrol show node n1 | grep -q 'Gres=gpumem:8K,gpucompute:100'"
j1=$(sbatch --parsable -w n1 --gpu-mem=3GiB -o "$TMP/j1.out" \
    --wrap "$SAMPLE --size 64MiB --quiet --hold-until $TMP/release.j && echo j1-ran")
j2=$(sbatch --parsable -w n1 --gpu-mem=3GiB -o "$TMP/j2.out" \
    --wrap "$SAMPLE --size 64MiB --quiet --hold-until $TMP/release.j && echo j2-ran")
eventually "two 3GiB jobs run on the 4GiB node at once" \
    bash -c "[ \"\$(squeue -h -w n1 -t RUNNING -o %i | sort | tr '\n' ' ')\" = '$j1 $j2 ' ]"
touch "$TMP/release.j"
eventually "both ended" bash -c "[ -z \"\$(squeue -h -j $j1,$j2 -o %i 2>/dev/null)\" ]"
check "both ran to their end" bash -c "grep -q j1-ran '$TMP/j1.out' && grep -q j2-ran '$TMP/j2.out'"
stop_node_daemon n1
start_node_daemon n1
chmod 0666 "$TMP/nodes/n1/run/emu/state"
out=$("$BUILD/bin/convgpu" --runtime-dir "$TMP/nodes/n1/run" slurm gres-conf --node n1 --apply 2>&1)
check "back to F = 1: --apply sets 4096 again" \
    bash -c "scontrol show node n1 | grep -q 'Gres=gpumem:4K,gpucompute:100'"
out=$(PATH=/nonexistent "$BUILD/bin/convgpu" --runtime-dir "$TMP/nodes/n1/run" slurm gres-conf \
    --node n1 --apply 2>&1) && rc=0 || rc=$?
check "--apply without scontrol: exit 1, saying so" \
    bash -c "[ $rc = 1 ] && grep -q 'cannot run scontrol' <<<\"\$1\"" _ "$out"

finish

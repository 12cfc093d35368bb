#!/usr/bin/env bash
# test_jobs.sh — jobs as a cluster runs them: two jobs on one GPU do not reach into each
# other's memory, a job array's tasks each get their own limit, and a node's slurmd restarted
# while a job runs loses nothing (the step, its container and its memory carry on).
. "$(dirname "$(readlink -f "$0")")/cluster.sh"

SAMPLE=$BUILD/bin/convgpu-sample
NODE_GPU=4GiB start_cluster 2
cd /tmp

eventually() { # eventually WHAT COMMAND...: a check that may need a moment (bounded by WAIT_S)
    local what=$1; shift
    if wait_for "$what" "$WAIT_S" "$@"; then pass "$what"; else fail "$what"; fi
}
job_state() { squeue -h -j "$1" -o %T 2>/dev/null; }
job_running() { [ "$(job_state "$1")" = RUNNING ]; }
job_gone() { [ -z "$(job_state "$1")" ]; }
api_get() { curl -sf --unix-socket "$TMP/nodes/$1/run/control.sock" "http://convgpu$2"; }
field() { api_get "$1" "/v1/containers/$2" | json_get "$3"; }
has_container() { api_get "$1" "/v1/containers/$2" >/dev/null; }
no_containers() { [ "$(api_get "$1" /v1/containers)" = "[]" ]; }
used_is_at_least() { [ "$(field "$1" "$2" used)" -ge "$3" ] 2>/dev/null; }
exit_code() { # exit_code JOB: the job's exit status as slurmctld recorded it ("0:0")
    scontrol show job "$1" 2>/dev/null | sed -n 's/.* ExitCode=\([0-9:]*\).*/\1/p'
}

# --- two jobs on one GPU: each within its own limit, whatever the other does
a=$(sbatch --parsable -w n1 --gpu-mem=1GiB -o "$TMP/a.out" \
    --wrap "$SAMPLE --size 512MiB --touch 1MiB --quiet --hold-until $TMP/release.a; echo a-rc=\$?")
eventually "job A holds 512MiB of its 1GiB on n1" \
    used_is_at_least n1 "slurm-$a.batch" $((512 << 20))
b=$(sbatch --parsable -w n1 --gpu-mem=1GiB -o "$TMP/b.out" \
    --wrap "$SAMPLE --size 2GiB --quiet; echo b-rc=\$?")
eventually "job B ran" job_gone "$b"
check "B's 2GiB allocation is refused (out of memory) though the GPU has 3.5GiB free" \
    grep -q b-rc=2 "$TMP/b.out"
check "A's memory is untouched: it still holds 512MiB" \
    used_is_at_least n1 "slurm-$a.batch" $((512 << 20))
touch "$TMP/release.a"
eventually "job A ended" job_gone "$a"
check "A verified its data after B's attempt (rc 0)" grep -q a-rc=0 "$TMP/a.out"

# --- a job array: each task is a job with its own limit and container
arr=$(sbatch --parsable -w n2 --array=1-3 --gpu-mem=1GiB -o "$TMP/arr.%a.out" \
    --wrap "$SAMPLE --size 768MiB --touch 1MiB --quiet; echo task-rc=\$?")
# Two at a time (2 CPUs per node): the deadline is for three jobs one after the other.
WAIT_S=$((3 * WAIT_S)) eventually "the array's tasks all ended" job_gone "$arr"
for t in 1 2 3; do
    check "array task $t ran within its limit" grep -q task-rc=0 "$TMP/arr.$t.out"
done
eventually "no container left on n2" no_containers n2

# --- slurmd restarted while a job runs: the step, its container and its memory carry on
job=$(sbatch --parsable -w n1 --gpu-mem=1GiB -o "$TMP/r.out" \
    --wrap "$SAMPLE --size 256MiB --quiet --hold-until $TMP/release.r; echo r-rc=\$?")
eventually "the job holds its memory on n1" used_is_at_least n1 "slurm-$job.batch" $((256 << 20))
stepd=$(field n1 "slurm-$job.batch" owner_pid)
kill -TERM "${NODE_SLURMD[n1]}"
wait "${NODE_SLURMD[n1]}" || true
check "slurmd stopped, the step's slurmstepd still runs" kill -0 "$stepd"
check "... its container still registered" has_container n1 "slurm-$job.batch"
start_slurmd n1
eventually "n1's slurmd back: the node is allocated again, not down" \
    sh -c "sinfo -h -n n1 -o %t | grep -qx 'mix\|alloc'"
check "the job still runs" job_running "$job"
check "its memory is still its own" used_is_at_least n1 "slurm-$job.batch" $((256 << 20))
touch "$TMP/release.r"
eventually "the job ended" job_gone "$job"
check "its program verified its data (rc 0)" grep -q r-rc=0 "$TMP/r.out"
eventually "its container removed" no_containers n1

finish

#!/usr/bin/env bash
# test_suspend.sh — `scontrol suspend` of a job on a node whose convgpud follows stops
# (--follow-stop slurm-): its container is paused (its memory off the device, free for another
# job), and `scontrol resume` brings every byte back before its process can touch the GPU
# again.
. "$(dirname "$(readlink -f "$0")")/cluster.sh"

SAMPLE=$BUILD/bin/convgpu-sample
NODE_GPU=2GiB NODE_DAEMON_ARGS="--follow-stop slurm-" start_cluster 1
cd /tmp

eventually() { # eventually WHAT COMMAND...: a check that may need a moment (bounded by WAIT_S)
    local what=$1; shift
    if wait_for "$what" "$WAIT_S" "$@"; then pass "$what"; else fail "$what"; fi
}
job_state() { squeue -h -j "$1" -o %T 2>/dev/null; }
job_is() { [ "$(job_state "$1")" = "$2" ]; }
job_gone() { [ -z "$(job_state "$1")" ]; }
api_get() { curl -sf --unix-socket "$TMP/nodes/$1/run/control.sock" "http://convgpu$2"; }
field() { api_get "$1" "/v1/containers/$2" | json_get "$3"; }
field_is() { [ "$(field "$1" "$2" "$3")" = "$4" ]; }
used_is_at_least() { [ "$(field "$1" "$2" used)" -ge "$3" ] 2>/dev/null; }
used_below() { [ "$(field "$1" "$2" used)" -lt "$3" ] 2>/dev/null; }
file_has() { grep -q "$2" "$1" 2>/dev/null; }
node_event() { # node_event NODE TYPE ID: the node daemon's events (GET /v1/events) hold TYPE about ID
    api_get "$1" '/v1/events?since=0' | python3 -c '
import json, sys
sys.exit(not any(e["type"] == sys.argv[1] and e["container"] == sys.argv[2]
                 for e in json.load(sys.stdin)["events"]))' "$2" "$3"
}

# A holds 1280MiB of the node's 2GiB (every byte written, complemented on the device and read
# back), then, released, reads all of it back again (--recheck).
A_BYTES=$((1280 << 20))
a=$(sbatch --parsable -w n1 --gpu-mem=1536MiB -o "$TMP/a.out" \
    --wrap "$SAMPLE --size 1280MiB --recheck --hold-until $TMP/release.a; echo a-rc=\$?")
eventually "job A holds 1280MiB on n1" used_is_at_least n1 "slurm-$a.batch" "$A_BYTES"
# Suspended only once it has verified and holds: a process stopped inside a copy cannot be
# locked (docs/SLURM.md, Suspend and resume).
eventually "A verified its memory and holds it" file_has "$TMP/a.out" "verified"
check "A is running, not paused" field_is n1 "slurm-$a.batch" pause running

scontrol suspend "$a"
eventually "Slurm says A is suspended" job_is "$a" SUSPENDED
eventually "convgpud paused A's container once its processes stopped" \
    field_is n1 "slurm-$a.batch" pause paused
check "A's memory is off the device (used below 1MiB)" used_below n1 "slurm-$a.batch" $((1 << 20))
paused=$(field n1 "slurm-$a.batch" paused_bytes)
aid=$(field n1 "slurm-$a.batch" id) # the events name containers by id
check "what A's process held is kept for it (paused_bytes $paused >= 1280MiB)" \
    test "$paused" -ge "$A_BYTES"

# B, another container on n1 (convgpu run; not a Slurm job: slurmctld keeps a suspended job's
# gpumem GRES allocated, so no job asking for it could start), needs what A held: its
# allocation waits while the memory is taken (convgpu run) and is served once A is paused.
"${NSENTER_NODE[@]}" "${NODE_NS[n1]}" -- "$BUILD/bin/convgpu" --runtime-dir "$TMP/node/run" \
    run --gpu-memory 1536MiB --name other -- "$SAMPLE" --size 1280MiB --touch 16MiB \
    >"$TMP/b.out" 2>&1 && echo b-rc=0 >>"$TMP/b.out" || echo "b-rc=$?" >>"$TMP/b.out" &
eventually "B ran while A was suspended" file_has "$TMP/b.out" "b-rc="
check "B got and verified its 1280MiB (rc 0)" file_has "$TMP/b.out" b-rc=0
check "A is still paused" field_is n1 "slurm-$a.batch" pause paused

# A is released before it runs again: its first GPU call after SIGCONT must wait for the restore.
touch "$TMP/release.a"
scontrol resume "$a"
# (Its container goes with the job; the daemon's events keep what happened to it.)
eventually "A's container resumed once its processes ran again" node_event n1 resumed "$aid"
eventually "job A ended" job_gone "$a"
check "A read back every byte after the resume (rc 0)" file_has "$TMP/a.out" a-rc=0
check "... its check after the hold ran" file_has "$TMP/a.out" "read back after the hold verified"
# Why it resumed (its processes run again, not an operator's order) is the log's alone: the
# event says resumed either way.
check "the resume was the daemon's answer to SIGCONT" \
    file_has "$TMP/nodes/n1/daemon.log" "slurm-$a.batch: its processes run again: resuming it"

finish

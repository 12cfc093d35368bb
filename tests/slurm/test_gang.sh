#!/usr/bin/env bash
# test_gang.sh — Slurm's own gang scheduler time-slices two GPU jobs that do not fit together:
# PreemptMode=SUSPEND,GANG, a partition with OverSubscribe=FORCE:2, one core, and a node whose
# convgpud promises twice its GPU memory (--oversubscribe 2, so the gpumem GRES of both jobs
# fit) and follows stops (--follow-stop slurm-: a suspended job's container is paused, its
# memory off the device). Each job needs 70% of the GPU's memory; on the device both cannot be
# at once. Both finish, neither runs out of memory, each reads back its own bytes bit for bit
# (different patterns), and a fresh allocation made while the other was paused holds nothing.
. "$(dirname "$(readlink -f "$0")")/cluster.sh"

SAMPLE=$BUILD/bin/convgpu-sample
EXTRA_SLURM_CONF="PreemptType=preempt/partition_prio
PreemptMode=SUSPEND,GANG
SchedulerTimeSlice=5" PARTITION_ARGS="OverSubscribe=FORCE:2" NODE_CPUS=1 NODE_GPU=1GiB \
    NODE_DAEMON_ARGS="--follow-stop slurm- --oversubscribe 2" start_cluster 1
cd /tmp

# A wait across time slices: a slice (5 s) and a pause or restore of 783MiB each way, on a
# loaded machine; the bound only catches a hang.
SLICES_S=$((WAIT_S * 4))
eventually() { # eventually WHAT COMMAND...: a check that may need a few slices
    local what=$1; shift
    if wait_for "$what" "$SLICES_S" "$@"; then pass "$what"; else fail "$what"; fi
}
job_state() { squeue -h -j "$1" -o %T 2>/dev/null; }
job_started() { [ -n "$(squeue -h -j "$1" -t RUNNING,SUSPENDED -o %T 2>/dev/null)" ]; }
job_gone() { [ -z "$(job_state "$1")" ]; }
api_get() { curl -sf --unix-socket "$TMP/nodes/$1/run/control.sock" "http://convgpu$2"; }
field() { api_get "$1" "/v1/containers/$2" | json_get "$3"; }
field_is() { [ "$(field "$1" "$2" "$3")" = "$4" ]; }
file_has() { grep -q -- "$2" "$1" 2>/dev/null; }
node_event() { # node_event NODE TYPE ID: the node daemon's events (GET /v1/events) hold TYPE about ID
    api_get "$1" '/v1/events?since=0' | python3 -c '
import json, sys
sys.exit(not any(e["type"] == sys.argv[1] and e["container"] == sys.argv[2]
                 for e in json.load(sys.stdin)["events"]))' "$2" "$3"
}
lacks() { ! grep -q -- "$2" "$1" 2>/dev/null; }

# The node's GRES promise twice the GPU: two jobs of 800MiB fit in Slurm's count.
gres=$(sed -n 's/^# Gres=gpumem:\([0-9]*\),.*/\1/p' "$TMP/nodes/n1/gres-conf")
check "gres-conf promises more than the GPU has (gpumem $gres >= 2 x 800)" \
    test "${gres:-0}" -ge 1600
check "the partition oversubscribes and the gang scheduler is on" \
    sh -c "scontrol show config | grep -q 'PreemptMode *= *GANG,SUSPEND' &&
           scontrol show partition main | grep -q 'OverSubscribe=FORCE:2'"

# 70% of the 1GiB GPU each (717MiB, with its 66MiB context 783MiB): one at a time.
SIZE=717MiB
submit() { # submit NAME SEED: a job that writes its own pattern, holds it, reads it back
    sbatch --parsable -w n1 --gpu-mem=800MiB -o "$TMP/$1.out" --wrap \
        "$SAMPLE --size $SIZE --seed $2 --fresh-check --recheck --hold-until $TMP/release.$1; echo $1-rc=\$?"
}
a=$(submit a 1)
eventually "job A holds its 717MiB, verified" file_has "$TMP/a.out" "verified"
aid=$(field n1 "slurm-$a.batch" id) # the events name containers by id
b=$(submit b 2)
eventually "Slurm's gang scheduler runs B beside A on n1 (started suspended)" job_started "$b"
# The slice ends: Slurm suspends A and resumes B; A's container is paused, B's memory served.
eventually "B got its 717MiB and verified it (A paused for it)" file_has "$TMP/b.out" "verified"
bid=$(field n1 "slurm-$b.batch" id)
check "A's container was paused when Slurm suspended it" node_event n1 paused "$aid"
check "B's fresh memory held nothing of A's" file_has "$TMP/b.out" "held nobody's data"
# The next slice: B suspended and paused, A restored and running again.
eventually "B's container paused when Slurm suspended it in turn" node_event n1 paused "$bid"
eventually "A's container resumed (restored) when Slurm resumed A" node_event n1 resumed "$aid"

touch "$TMP/release.a" "$TMP/release.b"
eventually "job A ended" job_gone "$a"
eventually "job B ended" job_gone "$b"
for j in a b; do
    check "$j: finished, rc 0" file_has "$TMP/$j.out" "$j-rc=0"
    check "$j: read back every byte of its own pattern after the slices" \
        file_has "$TMP/$j.out" "read back after the hold verified"
    check "$j: never out of memory" lacks "$TMP/$j.out" "out of device memory"
done
pauses=$(api_get n1 '/v1/events?since=0' | python3 -c '
import json, sys
print(sum(e["type"] == "paused" for e in json.load(sys.stdin)["events"]))')
echo "pauses by follow-stop: $pauses"

finish

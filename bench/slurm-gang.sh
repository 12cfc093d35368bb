#!/usr/bin/env bash
# slurm-gang.sh — issue 38 item 4: two GPU jobs that do not fit on the GPU together, run by
# Slurm's own gang scheduler (time slices) against one after the other, on a real Slurm
# cluster (tests/slurm/cluster.sh: Debian's slurmctld, slurmd and munged in namespaces of their
# own; one node of one core, its convgpud on one emulated 1 GiB GPU with --oversubscribe 2 and
# --follow-stop slurm-, docs/SLURM.md "Gang scheduling").
#
#   bench/slurm-gang.sh [--record] BUILD_DIR      (as root; takes /tmp/convgpu-integ.lock)
# Environment: ROUNDS (default 2), WORK_MS (default 10000), SLICE_S (default 10).
#
# Each job: --gpu-mem=800MiB, convgpu-sample holding 717 MiB (70% of the GPU; with its 66 MiB
# context 783 MiB) verified, WORK_MS of host CPU time with it held (a 1 MiB piece read back
# every 50 ms; time stopped does not count), then every byte read back (--recheck).
# "one after the other": B submitted with --dependency=afterany:A. "gang": both submitted at
# once; Slurm starts B suspended and swaps the two every SLICE_S (SchedulerTimeSlice); each
# suspended job's container is paused (memory and context off the device), the resumed one's
# restored. Measured: makespan (first sbatch to an empty queue, 0.2 s resolution), each job's
# exit status (2: out of device memory), the pauses convgpud made. Figures: medians, and the
# median of the paired ratios gang / one after the other, the order alternating by round.
set -euo pipefail

. "$(dirname "$0")/slurm_entry.sh" "$@"

ROUNDS=${ROUNDS:-2}
WORK_MS=${WORK_MS:-10000}
SLICE_S=${SLICE_S:-10}
SAMPLE=$BUILD/bin/convgpu-sample
EXTRA_SLURM_CONF="PreemptType=preempt/partition_prio
PreemptMode=SUSPEND,GANG
SchedulerTimeSlice=$SLICE_S" PARTITION_ARGS="OverSubscribe=FORCE:2" NODE_CPUS=1 NODE_GPU=1GiB \
    NODE_DAEMON_ARGS="--follow-stop slurm- --oversubscribe 2" start_cluster 1
cd /tmp

queue_empty() { [ -z "$(squeue -h -o %i 2>/dev/null)" ]; }
until_empty() { # until_empty SECONDS (polls every 0.2 s: slurmctld shares the cores)
    local deadline=$(( $(date +%s) + $1 ))
    until queue_empty; do
        [ "$(date +%s)" -le "$deadline" ] || return 1
        sleep 0.2
    done
}
job() { # job OUT SEED [sbatch args...]: the job id
    local out=$1 seed=$2; shift 2
    sbatch --parsable -w n1 --gpu-mem=800MiB -o "$out" "$@" --wrap \
        "$SAMPLE --size 717MiB --seed $seed --work-ms $WORK_MS --recheck --quiet; echo rc=\$?"
}
pauses() { grep -c "container slurm-[0-9]*.batch: paused," "$TMP/nodes/n1/daemon.log" || true; }

run() { # run MODE ROUND: appends "MODE makespan_s failures ooms pauses"
    local mode=$1 r=$2 out=$TMP/out.$1.$2 p0 t0 t1 a
    mkdir -p "$out"
    p0=$(pauses)
    t0=$(date +%s%N)
    a=$(job "$out/a" 1)
    if [ "$mode" = seq ]; then job "$out/b" 2 --dependency=afterany:"$a" >/dev/null; else
        job "$out/b" 2 >/dev/null; fi
    until_empty 1800 || fail "$mode round $r: jobs still queued after 1800 s"
    t1=$(date +%s%N)
    local ok ooms
    ok=$(cat "$out"/a "$out"/b 2>/dev/null | grep -c '^rc=0$' || true)
    ooms=$(cat "$out"/a "$out"/b 2>/dev/null | grep -c '^rc=2$' || true)
    echo "$mode $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", (b - a) / 1e9 }') $((2 - ok)) $ooms $(($(pauses) - p0))" \
        >>"$TMP/runs"
    echo "[bench] $mode round $r: $(tail -n 1 "$TMP/runs")" >&2
}

: >"$TMP/runs"
for r in $(seq 1 "$ROUNDS"); do
    if [ $((r % 2)) = 1 ]; then run seq "$r"; run gang "$r"; else run gang "$r"; run seq "$r"; fi
done
restore=$(sed -n 's/.*: resumed, [0-9]* bytes back in \([0-9.]*\) s$/\1/p' "$TMP/nodes/n1/daemon.log" |
          sort -n | awk '{ a[NR] = $1 } END { if (NR) print a[int((NR + 1) / 2)]; else print "-" }')
pause_s=$(sed -n 's/.*: paused, 8[0-9]* bytes off the device in \([0-9.]*\) s$/\1/p' "$TMP/nodes/n1/daemon.log" |
          sort -n | awk '{ a[NR] = $1 } END { if (NR) print a[int((NR + 1) / 2)]; else print "-" }')

python3 - "$TMP/runs" "$ROUNDS" "$WORK_MS" "$SLICE_S" "$pause_s" "$restore" >"$TMP/result.md" <<'PY'
import statistics, sys
runs = [l.split() for l in open(sys.argv[1])]
rounds, work, slice_s, pause_s, restore_s = sys.argv[2:7]
by = {"seq": [], "gang": []}
for m, t, fails, ooms, p in runs:
    by[m].append((float(t), int(fails), int(ooms), int(p)))
ratios = [g[0] / s[0] for s, g in zip(by["seq"], by["gang"])]
med = statistics.median
print("Command: `bench/slurm-gang.sh --record build` (as root), on this machine (2 cores shared")
print("with other work; slurmctld, the node's slurmd and convgpud on it). Two jobs of")
print(f"--gpu-mem=800MiB, each holding 717 MiB (70% of one emulated 1 GiB GPU; 783 MiB with its")
print(f"context) for {int(work) / 1000:g} s of CPU time; one node of one core, PreemptMode=SUSPEND,GANG,")
print(f"OverSubscribe=FORCE:2, SchedulerTimeSlice={slice_s}; {rounds} rounds, the order alternating.")
print()
print("| run | makespan, median (runs) | jobs failed | out-of-memory | pauses, median |")
print("|---|---|---|---|---|")
for m, name in (("seq", "one after the other (`--dependency=afterany`)"), ("gang", "gang-scheduled pair")):
    rs = by[m]
    print(f"| {name} | {med([x[0] for x in rs]):.1f} s ({', '.join('%.1f' % x[0] for x in rs)}) "
          f"| {sum(x[1] for x in rs)} of {2 * len(rs)} | {sum(x[2] for x in rs)} "
          f"| {med([x[3] for x in rs]):.0f} |")
print()
print(f"Makespan gang / one after the other, median of the paired ratios: {med(ratios):.2f} "
      f"(per round: {', '.join('%.2f' % r for r in ratios)}). A switch costs a pause of the "
      f"stopped job (median {pause_s} s for 783 MiB here) and a restore of the resumed one "
      f"(median {restore_s} s), inside the resumed job's slice.")
PY
cat "$TMP/result.md"
check "no job failed and none ran out of memory, in either mode" \
    awk '{ f += $3; o += $4 } END { exit !(f == 0 && o == 0) }' "$TMP/runs"
if [ "${BENCH_RECORD:-0}" = 1 ]; then
    write_section "$CONVGPU_SOURCE_DIR/docs/BENCHMARKS.md" "<!-- bench:slurm-gang:begin -->" \
        "<!-- bench:slurm-gang:end -->" "$TMP/result.md" \
        "## Gang-scheduled GPU jobs on a real Slurm cluster (issue 38)"
    echo "[bench] results written to docs/BENCHMARKS.md" >&2
fi
finish

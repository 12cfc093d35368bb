#!/usr/bin/env bash
# k8s-oversub.sh — issue 37 item 5 through Kubernetes' device-plugin path: a sharing factor with
# real processes on one node (tests/k8s/oversub_node.sh: convgpud on one emulated 4 GiB GPU, the
# kubelet stand-in speaking the real device plugin gRPC API, convgpu-device-plugin registered
# with it) runs the same pods with F = 1 and with F = 2 (convgpud --oversubscribe 2: the plugin
# lists 32 memory units instead of 16), the two alternating, ROUNDS times each.
#
#   bench/k8s-oversub.sh [--record] BUILD_DIR
# Environment: ROUNDS (default 3), JOBS (default 16), SEED (default 37).
#
# The pods are bench/slurm-oversub.sh's jobs, drawn the same way from the same SEED: each asks
# for convgpu.io/gpu-memory: 8 (2 GiB, its limit) and its container runs convgpu-sample holding
# a base of 600 MiB for A ms, then one holding a peak of 1700 MiB for B ms (A from 3000, 4000,
# 5000, B from 300, 600, 900). A pod starts when the node has 8 free units, first come first
# served (tests/k8s/oversub_pods.py plays kube-scheduler's queue and kubelet's device manager:
# GetPreferredAllocation and Allocate through the stand-in, then the shim's claim of the
# plugin's token with convgpud, then the process with the container's environment). At F = 1
# two pods run at once; at F = 2 four, whose limits add to twice the GPU's memory; two peaks
# and the others' bases no longer fit together, so a peak that collides waits in convgpud
# (suspended) until memory returns, instead of failing.
#
# Measured per run: the makespan (the first pod admitted to the last one done), every pod's exit
# status (convgpu-sample exits 2 when an allocation ran out of device memory: an out-of-memory
# kill in a real program) and the suspensions convgpud decided (/metrics). Figures: each
# factor's median makespan, and the median over rounds of the paired ratio makespan(F=2) /
# makespan(F=1), the pair run back to back, the order alternating by round.
set -euo pipefail
RECORD=0
if [ "${1:-}" = "--record" ]; then RECORD=1; shift; fi
[ $# -eq 1 ] || { echo "usage: bench/k8s-oversub.sh [--record] BUILD_DIR" >&2; exit 2; }
export CONVGPU_BUILD_DIR
CONVGPU_BUILD_DIR=$(cd "$1" && pwd)
SRC=$(cd "$(dirname "$0")/.." && pwd)
. "$SRC/tests/containers/lib.sh"
. "$SRC/tests/k8s/oversub_node.sh"
. "$SRC/bench/section.sh"
set +e # lib.sh's checks count failures; a run that fails is reported, not aborted halfway
ROUNDS=${ROUNDS:-3}
JOBS=${JOBS:-16}
SEED=${SEED:-37}
export CONVGPU_EMU_CONTEXT=16MiB
oversub_node_start

# The pods' phases, the same for both factors (bench/slurm-oversub.sh's draw).
python3 - "$SEED" "$JOBS" >"$TMP/phases" <<'PY'
import random, sys
r = random.Random(int(sys.argv[1]))
for i in range(int(sys.argv[2])):
    print(i, r.choice([3000, 4000, 5000]), r.choice([300, 600, 900]))
PY
cat >"$TMP/job.sh" <<JOB
#!/bin/bash
# One pod's container: a base footprint for A ms, then a peak for B ms; exits with the first
# failure's status (2: out of memory).
"$SAMPLE" --size 600MiB --touch 1MiB --hold-ms "\$1" --quiet || exit \$?
exec "$SAMPLE" --size 1700MiB --touch 1MiB --hold-ms "\$2" --quiet
JOB
chmod 0755 "$TMP/job.sh"

run_batch() { # run_batch F ROUND: appends "F makespan_s failed ooms suspensions maxrunning"
    local f=$1 r=$2 out=$TMP/out.$1.$2 s0 i a b mk npods failed ooms maxrun maxunits
    oversub_set_factor "$f"
    while read -r i a b; do echo "p$r-$f-$i 8 $TMP/job.sh $a $b"; done <"$TMP/phases" >"$TMP/pods.$f.$r"
    s0=$(oversub_suspends)
    oversub_pods "$TMP/pods.$f.$r" "$out" 2>>"$TMP/pods.log" ||
        fail "F=$f round $r: the pods' runner failed"
    read -r mk npods failed ooms maxrun maxunits <"$out/summary"
    echo "$f $mk $failed $ooms $(($(oversub_suspends) - s0)) $maxrun" >>"$TMP/runs"
    echo "[bench] F=$f round $r: $(tail -n 1 "$TMP/runs") ($npods pods, $maxunits units at most)" >&2
}

: >"$TMP/runs"
LOAD0=$(cut -d' ' -f1 /proc/loadavg)
for r in $(seq 1 "$ROUNDS"); do
    if [ $((r % 2)) = 1 ]; then run_batch 1 "$r"; run_batch 2 "$r"; else
        run_batch 2 "$r"; run_batch 1 "$r"; fi
done

LOAD1=$(cut -d' ' -f1 /proc/loadavg)
python3 - "$TMP/runs" "$JOBS" "$ROUNDS" "$(date -u +%F)" "$LOAD0" "$LOAD1" \
    "$(git -C "$SRC" rev-parse --short HEAD 2>/dev/null || echo unknown)" >"$TMP/result.md" <<'PY'
import statistics, sys
runs = [l.split() for l in open(sys.argv[1])]
jobs, rounds = int(sys.argv[2]), int(sys.argv[3])
day, load0, load1, commit = sys.argv[4:8]
by = {"1": [], "2": []}
for f, m, fails, ooms, susp, maxrun in runs:
    by[f].append((float(m), int(fails), int(ooms), int(susp), int(maxrun)))
ratios = [b[0] / a[0] for a, b in zip(by["1"], by["2"])]
def med(xs): return statistics.median(xs)
print("Command: `bench/k8s-oversub.sh --record build`, on this machine (2 cores shared with other")
print("work; convgpud, the kubelet stand-in, the device plugin and the pods on it). "
      f"{jobs} pods of convgpu.io/gpu-memory: 8 (2 GiB), each 600 MiB for 3-5 s then 1700 MiB "
      "for 0.3-0.9 s (bench/slurm-oversub.sh's jobs); one node of one emulated 4 GiB GPU; "
      f"{rounds} rounds, F = 1 and F = 2 back to back, the order alternating; {day}, commit "
      f"{commit}, load average {load0} at the start and {load1} at the end.")
print()
print("| factor | units listed | pods at once | makespan, median (runs) | pods failed | out-of-memory | suspensions, median |")
print("|---|---|---|---|---|---|---|")
for f in ("1", "2"):
    rs = by[f]
    print(f"| F = {f} | {16 * int(f)} | {max(x[4] for x in rs)} "
          f"| {med([x[0] for x in rs]):.1f} s ({', '.join('%.1f' % x[0] for x in rs)}) "
          f"| {sum(x[1] for x in rs)} of {jobs * len(rs)} | {sum(x[2] for x in rs)} "
          f"| {med([x[3] for x in rs]):.0f} |")
print()
print(f"Makespan F=2 / F=1, median of the paired ratios: {med(ratios):.2f} "
      f"(per round: {', '.join('%.2f' % r for r in ratios)}).")
PY
cat "$TMP/result.md"
check "no pod failed and none ran out of memory, at either factor" \
    awk '{ f += $3; o += $4 } END { exit !(f == 0 && o == 0) }' "$TMP/runs"
if [ "$RECORD" = 1 ]; then
    write_section "$SRC/docs/BENCHMARKS.md" "<!-- bench:k8s-oversub:begin -->" \
        "<!-- bench:k8s-oversub:end -->" "$TMP/result.md" \
        "## A sharing factor through the device plugin (issue 37)"
    echo "[bench] results written to docs/BENCHMARKS.md" >&2
fi
finish

#!/usr/bin/env bash
# bench_srun.sh — what the SPANK plugin adds to `srun` of a trivial command: PAIRS interleaved
# pairs on one node of a test cluster (cluster.sh), `srun -w n1 true` and
# `srun -w n1 --gpu-mem=64MiB true`, the order within each pair alternating; prints the medians
# and the median of the paired differences. Not a CTest test: run it by hand, as root:
#   CONVGPU_BUILD_DIR=build CONVGPU_SOURCE_DIR=$PWD bash tests/slurm/bench_srun.sh [PAIRS]
. "$(dirname "$(readlink -f "$0")")/cluster.sh"

PAIRS=${1:-21}
start_cluster 1
cd /tmp
ms() { # ms COMMAND...: its wall time in microseconds
    local t0 t1
    t0=$(date +%s%N); "$@" >/dev/null; t1=$(date +%s%N)
    echo $(((t1 - t0) / 1000))
}
srun -w n1 true # the first srun pays for loading the cluster's caches: not counted
: >"$TMP/plain" ; : >"$TMP/gpu"
for i in $(seq 1 "$PAIRS"); do
    if [ $((i % 2)) -eq 0 ]; then
        ms srun -w n1 true >>"$TMP/plain"; ms srun -w n1 --gpu-mem=64MiB true >>"$TMP/gpu"
    else
        ms srun -w n1 --gpu-mem=64MiB true >>"$TMP/gpu"; ms srun -w n1 true >>"$TMP/plain"
    fi
done
python3 - "$TMP/plain" "$TMP/gpu" <<'PY'
import statistics, sys
a = [int(x) / 1000 for x in open(sys.argv[1])]
b = [int(x) / 1000 for x in open(sys.argv[2])]
d = sorted(y - x for x, y in zip(a, b))
print(f"pairs {len(a)}: srun true median {statistics.median(a):.1f} ms; "
      f"with --gpu-mem {statistics.median(b):.1f} ms; "
      f"paired difference median {statistics.median(d):+.1f} ms "
      f"[quartiles {d[len(d)//4]:+.1f} .. {d[(3*len(d))//4]:+.1f}]")
PY
# The plugin's own work in slurmstepd, from n1's slurmd log (the --gpu-mem steps only).
python3 - "$TMP/nodes/n1/slurmd.log" <<'PY'
import re, statistics, sys
reg, rel = [], []
for line in open(sys.argv[1]):
    m = re.search(r"convgpu: \S+ (registered|released) in ([0-9.]+) ms", line)
    if m:
        (reg if m.group(1) == "registered" else rel).append(float(m.group(2)))
if reg and rel:
    print(f"in slurmstepd: register median {statistics.median(reg):.2f} ms (n={len(reg)}, "
          f"max {max(reg):.2f}); release median {statistics.median(rel):.2f} ms (max {max(rel):.2f})")
PY
finish

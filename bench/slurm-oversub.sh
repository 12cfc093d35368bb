#!/usr/bin/env bash
# slurm-oversub.sh — issue 37 item 5: a sharing factor with real processes on a real Slurm
# cluster. A 2-node cluster (tests/slurm/cluster.sh: Debian's slurmctld, slurmd and munged in
# namespaces of their own, each node with its convgpud on one emulated 4 GiB GPU) runs the same
# batch of jobs with F = 1 and with F = 2 (convgpud --oversubscribe 2, told to slurmctld with
# `convgpu slurm gres-conf --apply`), the two alternating, ROUNDS times each.
#
#   bench/slurm-oversub.sh [--record] BUILD_DIR      (as root; takes /tmp/convgpu-integ.lock)
# Environment: ROUNDS (default 3), JOBS (default 16), SEED (default 37).
#
# The jobs. Every job asks --gpu-mem=2GiB (its limit: Slurm counts 2048 MiB of gpumem for it)
# and runs two programs one after the other in its step: convgpu-sample holding a base
# footprint of 600 MiB for A ms, then one holding a peak of 1700 MiB for B ms (A from 3000,
# 4000, 5000 and B from 300, 600, 900, drawn per job from SEED, the same jobs for both
# factors). So limits are padded (2 GiB asked, 1.7 GiB at most used) and peaks are short. At
# F = 1 a 4 GiB node promises 4096 MiB: Slurm starts 2 jobs per node. At F = 2 it promises 8192:
# 4 jobs per node, whose limits add to twice the memory; two peaks and the others' base
# footprints no longer fit together, so a peak that collides waits in convgpud (suspended) until
# memory returns, instead of failing.
#
# Measured per run: the makespan (the first sbatch to the last job gone from squeue; the same
# submission for both factors), every job's two exit statuses (convgpu-sample exits 2 when an
# allocation ran out of device memory: an out-of-memory kill in a real program), and the
# suspensions convgpud decided (/metrics convgpu_decisions_total{kind="suspend"}, both nodes).
# Figures: each factor's median makespan, and the median over rounds of the paired ratio
# makespan(F=2) / makespan(F=1), the pair run back to back, the order alternating by round.
set -euo pipefail

. "$(dirname "$0")/slurm_entry.sh" "$@"

ROUNDS=${ROUNDS:-3}
JOBS=${JOBS:-16}
SEED=${SEED:-37}
SAMPLE=$BUILD/bin/convgpu-sample
NODE_GPU=4GiB NODE_CPUS=8 EXTRA_SLURM_CONF="SlurmdParameters=config_overrides" start_cluster 2
cd /tmp

# The jobs' phases, the same for both factors.
python3 - "$SEED" "$JOBS" >"$TMP/phases" <<'PY'
import random, sys
r = random.Random(int(sys.argv[1]))
for i in range(int(sys.argv[2])):
    print(i, r.choice([3000, 4000, 5000]), r.choice([300, 600, 900]))
PY
cat >"$TMP/job.sh" <<EOF
#!/bin/bash
# One job: a base footprint for A ms, then a peak for B ms; prints both exit statuses.
a=0; b=0
"$SAMPLE" --size 600MiB --touch 1MiB --hold-ms "\$2" --quiet || a=\$?
"$SAMPLE" --size 1700MiB --touch 1MiB --hold-ms "\$3" --quiet || b=\$?
echo "job \$1 base \$a peak \$b"
EOF
chmod 0755 "$TMP/job.sh"

set_factor() { # set_factor F: both nodes' convgpud at F, and slurmctld told
    local f=$1 n
    for n in "${SLURM_NODES[@]}"; do
        stop_node_daemon "$n"
        if [ "$f" = 1 ]; then start_node_daemon "$n"; else
            NODE_DAEMON_ARGS="--oversubscribe $f" start_node_daemon "$n"; fi
        chmod 0666 "$TMP/nodes/$n/run/emu/state"
        "$BUILD/bin/convgpu" --runtime-dir "$TMP/nodes/$n/run" slurm gres-conf --node "$n" \
            --apply >/dev/null
    done
    wait_for "slurmctld counts $((4096 * f)) MiB on every node" "$WAIT_S" gres_counted "$f"
}
gres_counted() { # gres_counted F: every node's gpumem is 4096 x F MiB in slurmctld
    local n
    n=$(scontrol show node | grep -c "Gres=gpumem:$((4 * $1))K")
    [ "$n" = "${#SLURM_NODES[@]}" ]
}
suspends() { # suspensions decided so far, both nodes
    local n s=0 v
    for n in "${SLURM_NODES[@]}"; do
        v=$(curl -s --unix-socket "$TMP/nodes/$n/run/control.sock" http://convgpu/metrics |
            sed -n 's/^convgpu_decisions_total{kind="suspend"} //p')
        s=$((s + ${v:-0}))
    done
    echo "$s"
}
queue_empty() { [ -z "$(squeue -h -o %i 2>/dev/null)" ]; }
# Polls every 0.2 s, not wait_for's 20 ms: squeue is a call into slurmctld, which shares these
# two cores with the jobs being measured. The makespan's resolution is the same 0.2 s.
until_empty() { # until_empty SECONDS
    local deadline=$(( $(date +%s) + $1 ))
    until queue_empty; do
        [ "$(date +%s)" -le "$deadline" ] || return 1
        sleep 0.2
    done
}

run_batch() { # run_batch F ROUND: one batch; appends "F makespan_s failures ooms suspensions"
    local f=$1 r=$2 out=$TMP/out.$1.$2 s0 t0 t1 i a b
    mkdir -p "$out"
    set_factor "$f"
    s0=$(suspends)
    t0=$(date +%s%N)
    while read -r i a b; do
        sbatch --parsable --gpu-mem=2GiB -o "$out/$i.out" "$TMP/job.sh" "$i" "$a" "$b" >/dev/null
    done <"$TMP/phases"
    until_empty 900 || fail "F=$f round $r: jobs still queued after 900 s"
    t1=$(date +%s%N)
    local done_ok fails ooms
    done_ok=$(cat "$out"/*.out 2>/dev/null | grep -c '^job .* base 0 peak 0$' || true)
    ooms=$(cat "$out"/*.out 2>/dev/null | grep -Ec '^job .* (base 2 |peak 2$)' || true)
    fails=$((JOBS - done_ok))
    echo "$f $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", (b - a) / 1e9 }') $fails $ooms $(($(suspends) - s0))" \
        >>"$TMP/runs"
    echo "[bench] F=$f round $r: $(tail -n 1 "$TMP/runs")" >&2
}

: >"$TMP/runs"
for r in $(seq 1 "$ROUNDS"); do
    if [ $((r % 2)) = 1 ]; then run_batch 1 "$r"; run_batch 2 "$r"; else
        run_batch 2 "$r"; run_batch 1 "$r"; fi
done

python3 - "$TMP/runs" "$JOBS" "$ROUNDS" >"$TMP/result.md" <<'PY'
import statistics, sys
runs = [l.split() for l in open(sys.argv[1])]
jobs, rounds = int(sys.argv[2]), int(sys.argv[3])
by = {"1": [], "2": []}
for f, m, fails, ooms, susp in runs:
    by[f].append((float(m), int(fails), int(ooms), int(susp)))
ratios = [b[0] / a[0] for a, b in zip(by["1"], by["2"])]
def med(xs): return statistics.median(xs)
print("Command: `bench/slurm-oversub.sh --record build` (as root), on this machine (2 cores shared")
print("with other work; the cluster's two nodes, slurmctld and both convgpud on it). "
      f"{jobs} jobs of --gpu-mem=2GiB, each 600 MiB for 3-5 s then 1700 MiB for 0.3-0.9 s; "
      f"two nodes of one emulated 4 GiB GPU; {rounds} rounds, F = 1 and F = 2 back to back, "
      "the order alternating.")
print()
print("| factor | makespan, median (runs) | jobs failed | out-of-memory | suspensions, median |")
print("|---|---|---|---|---|")
for f in ("1", "2"):
    rs = by[f]
    print(f"| F = {f} | {med([x[0] for x in rs]):.1f} s ({', '.join('%.1f' % x[0] for x in rs)}) "
          f"| {sum(x[1] for x in rs)} of {jobs * len(rs)} | {sum(x[2] for x in rs)} "
          f"| {med([x[3] for x in rs]):.0f} |")
print()
print(f"Makespan F=2 / F=1, median of the paired ratios: {med(ratios):.2f} "
      f"(per round: {', '.join('%.2f' % r for r in ratios)}).")
PY
cat "$TMP/result.md"
check "no job failed and none ran out of memory, at either factor" \
    awk '{ f += $3; o += $4 } END { exit !(f == 0 && o == 0) }' "$TMP/runs"
if [ "${BENCH_RECORD:-0}" = 1 ]; then
    write_section "$CONVGPU_SOURCE_DIR/docs/BENCHMARKS.md" "<!-- bench:slurm-oversub:begin -->" \
        "<!-- bench:slurm-oversub:end -->" "$TMP/result.md" \
        "## A sharing factor on a real Slurm cluster (issue 37)"
    echo "[bench] results written to docs/BENCHMARKS.md" >&2
fi
finish

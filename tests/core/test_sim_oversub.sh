#!/usr/bin/env bash
# test_sim_oversub.sh — `convgpu sim --experiment oversub` on a small cluster (2 nodes x 8 GPUs,
# 600 jobs, every core checked after every event): no out-of-memory kill anywhere, a factor of
# 2.0 admits more jobs at once than 1.0, and with the step-aside rule a later job runs while an
# earlier one waits out on the host; placing jobs by pressure (--placement pressure) lowers the
# time suspended at F = 2; the CSV contract and bad options.
set -u
SIM=$1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
out=$("$SIM" --experiment oversub --nodes 2 --jobs 600 --factors 1,2 --format csv --check) ||
    fail "exit $?"
[ "$(head -1 <<<"$out")" = "workload,factor,step_aside,jobs_per_hour,mean_jct_s,p95_jct_s,mem_util,mean_suspended_s,swapped_gib,swap_outs,step_asides,backfills,oom_kills,max_concurrent,mean_concurrent" ] ||
    fail "header: $(head -1 <<<"$out")"
[ "$(grep -c '^[a-z]*,[0-9]' <<<"$out")" = 8 ] || fail "8 rows expected: $out"
awk -F, 'NR > 1 && $13 != 0 { bad = 1 } END { exit bad }' <<<"$out" || fail "OOM kills: $out"
for w in profiles heavy; do
    awk -F, -v w="$w" '$1 == w && $3 == "no" { c[$2] = $14 } END { exit !(c["2.0"] > c["1.0"]) }' \
        <<<"$out" || fail "$w: 2.0 does not admit more at once than 1.0: $out"
    awk -F, -v w="$w" '$1 == w && $2 == "2.0" && $3 == "yes" { b = $12 } END { exit !(b >= 1) }' \
        <<<"$out" || fail "$w: no later job ran while one that stepped aside waited: $out"
    awk -F, -v w="$w" '$1 == w && $3 == "no" && $11 != 0 { bad = 1 } END { exit bad }' \
        <<<"$out" || fail "$w: stepped aside with the rule off: $out"
done
# Placement by pressure (core/pressure.h, what the k8s extender ranks by): the same jobs at F = 2
# wait less suspended in total, on both workloads, and still nothing is killed.
first=$("$SIM" --experiment oversub --nodes 2 --jobs 600 --factors 2 --step-aside no --format csv \
    --check --placement first) || fail "first: exit $?"
pressed=$("$SIM" --experiment oversub --nodes 2 --jobs 600 --factors 2 --step-aside no \
    --format csv --check --placement pressure) || fail "pressure: exit $?"
awk -F, 'NR > 1 && $13 != 0 { bad = 1 } END { exit bad }' <<<"$pressed" || fail "OOM kills: $pressed"
for w in profiles heavy; do
    a=$(awk -F, -v w="$w" '$1 == w { print $8 }' <<<"$first")
    b=$(awk -F, -v w="$w" '$1 == w { print $8 }' <<<"$pressed")
    awk -v a="$a" -v b="$b" 'BEGIN { exit !(b < a) }' ||
        fail "$w: placing by pressure did not lower the time suspended ($a -> $b)"
done
for bad in "--nodes 0" "--factors 0.5" "--factors x" "--step-aside maybe" "--workload none" \
           "--jobs" "--bogus 1" "--placement best"; do
    # shellcheck disable=SC2086 # word splitting wanted
    o=$("$SIM" --experiment oversub $bad 2>/dev/null); rc=$?
    [ "$rc" = 2 ] && [ -z "$o" ] || fail "'$bad': exit $rc, stdout '$o'"
done
[ "$fails" = 0 ] && echo "core.sim_oversub: all checks passed"
exit $((fails > 0))

#!/usr/bin/env bash
# test_sim_compute_matrix.sh — the simulator's compute model (`convgpu sim compute`) against the
# emulated GPU's figures: for every scenario of bench/compute.sh's last recorded matrix
# (tests/core/compute_matrix.tsv: each container's pattern with the host turnaround its loop
# measured in that run, the mean shares and idle time the emulator gave, and how often each
# container's gate was closed), the simulation with the real controller predicts each
# container's mean share, and the device's idle time where the hard shares add to 100, within
# TOL points (2: issue 39), so that a design change can be tried in the simulator first.
#
# The model's host is ideal apart from the measured turnarounds: a saturating loop always has
# its queue full. Where the emulator's host was starved instead (a saturating container whose
# gate was closed in at most 5% of the steps, yet more than 2 points below its share: nothing
# held it back but its own launching thread waiting for a CPU), the scenario is outside the
# model: it is printed, not judged. (Synchronising containers gated at most of their steps
# were left out too while convgpu-burn's turnaround counted the wait at the gate; it does not
# any more, and they are judged.) The target (issue 39) is every judged scenario within TOL,
# and the test asks exactly that: since the emulated GPU and the model both time-slice (1024 us
# turns) and the daemon steps every 25 ms, the matrix recorded on a quiet machine (2026-11-29
# 17:57, load below 0.6, tests/core/compute_matrix.tsv) has all 33 within TOL (the farthest,
# hard 25/75 loops of one 50 us kernel and a sync, 1.6 points; the record before, 1.2). With turns of
# whole kernels 29 of 33 were (the two hard mixes 3.9 and 4.6 points apart: unequal kernels
# alternating), and at load 12-18, 18 of 30. None may be beyond WIDE (15) points, and at least
# half the scenarios must be judged.
set -u
SIM=$1
MATRIX=${2:-$(dirname "$0")/compute_matrix.tsv}
TOL=${TOL:-2}
WIDE=${WIDE:-15}
fails=0 n=0 judged=0 close=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
[ -s "$MATRIX" ] || { echo "FAIL: no recorded matrix $MATRIX"; exit 1; }
while IFS=$'\t' read -r name containers means idle gated; do
    case $name in '#'*|'') continue ;; esac
    n=$((n + 1))
    out=$("$SIM" compute --containers "$containers" --seconds 12 --window-s 1 --sample-delay-ms 41 \
          --judge-from 2) || { fail "$name: the simulator failed"; continue; }
    sim_means=$(sed -n 's/^# mean shares from [0-9]* s: //p' <<<"$out")
    sim_idle=$(sed -n 's/^# mean idle from [0-9]* s: //p' <<<"$out")
    starved=$(awk -v c="$containers" -v m="$means" -v g="${gated:--}" 'BEGIN {
        n = split(c, C, ","); split(m, M, "/"); split(g, G, "/")
        for (i = 1; i <= n; i++) { split(C[i], f, ":")
            if (f[4] == 0 && (i in G) && G[i] != "" && G[i] + 0 <= 5 && M[i] < f[1] - 2) { print i " saturating, its gate open, below its share (a starved host)"; exit } } }')
    # Elastic containers whose shares add up to less than 100 share out the rest as the
    # device's turns fall: no controller promise says how, and the emulator's own split moves
    # between runs (e2050_s8, five runs on 2026-11-29: the 20 got 30.6-35.3). There the model
    # is held to what is promised: the device time they take together, and how far each one
    # falls below its share.
    verdict=$(awk -v a="$means" -v b="$sim_means" -v i="$idle" -v j="$sim_idle" -v tol="$TOL" \
        -v c="$containers" 'BEGIN {
        n = split(a, A, "/"); split(b, B, "/"); worst = 0; split(c, C, ","); spare = 1; sum = 0
        for (k = 1; k <= n; k++) { split(C[k], f, ":"); S[k] = f[1]; sum += f[1]; if (f[2] != "elastic") spare = 0 }
        spare = spare && sum < 100
        for (k = 1; k <= n; k++) {
            if (spare) { sa = S[k] - A[k]; sb = S[k] - B[k]; d = (sa > 0 ? sa : 0) - (sb > 0 ? sb : 0); ta += A[k]; tb += B[k] }
            else d = A[k] - B[k]
            if (d < 0) d = -d; if (d > worst) worst = d }
        if (spare) { d = ta - tb; if (d < 0) d = -d; if (d > worst) worst = d }
        if (i >= 0) { d = i - j; if (d < 0) d = -d; if (d > worst) worst = d }
        printf "%s %.1f points%s", worst <= tol ? "ok" : "apart", worst, spare ? " (spare time: the total and each one below its share)" : "" }')
    line="$name: emulator $means (idle $idle, gated $gated), simulator $sim_means (idle $sim_idle): ${verdict#* }"
    if [ -n "$starved" ]; then
        echo "$line; not judged: container $starved"
        continue
    fi
    judged=$((judged + 1))
    echo "$line"
    case $verdict in
    ok*) close=$((close + 1)) ;;
    *) d=${verdict#apart }; d=${d%% *}
       awk -v d="$d" -v w="$WIDE" 'BEGIN { exit !(d > w) }' &&
           fail "$name: the simulator is $d points from the emulator (beyond $WIDE)" ;;
    esac
done <"$MATRIX"
[ "$n" -gt 0 ] || fail "no scenario in $MATRIX"
[ $((2 * judged)) -ge "$n" ] || fail "only $judged of $n scenarios judged"
[ "$close" -eq "$judged" ] || fail "only $close of $judged judged scenarios within $TOL points"
[ "$fails" = 0 ] && echo "core.sim_compute_matrix: $close of $judged judged scenarios ($n recorded) within $TOL points, none beyond $WIDE"
exit $((fails > 0))

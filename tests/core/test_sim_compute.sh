#!/usr/bin/env bash
# test_sim_compute.sh — `convgpu sim compute`: the CLI contract (CSV of shares per window, the
# worst hard-share line, bad arguments exit 2 with nothing on stdout) and that hard shares hold
# on the simulated GPU with the real controller.
set -u
SIM=$1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
out=$("$SIM" compute --containers 30:hard,70:hard --kernel-us 1000 --seconds 30) || fail "exit $?"
[ "$(head -1 <<<"$out")" = "window_s,c0_30hard,c1_70hard" ] || fail "header: $(head -1 <<<"$out")"
[ "$(grep -c '^[0-9]' <<<"$out")" = 3 ] || fail "3 windows of 10 s expected"
worst=$(sed -n 's/^# worst hard-share window: \([0-9.]*\) points off$/\1/p' <<<"$out")
awk -v w="${worst:-99}" 'BEGIN { exit !(w <= 3) }' || fail "worst window $worst points off"
for bad in "--containers 101:hard" "--containers 30:soft" "--containers" "--kernel-us 0 --containers 5" \
           "--containers 30,40 --start 0,x" "--bogus 1 --containers 5"; do
    # shellcheck disable=SC2086 # word splitting wanted
    o=$("$SIM" compute $bad 2>/dev/null); rc=$?
    [ "$rc" = 2 ] && [ -z "$o" ] || fail "'$bad': exit $rc, stdout '$o'"
done
"$SIM" compute --help | grep -q "usage: convgpu sim compute" || fail "--help"
[ "$fails" = 0 ] && echo "core.sim_compute: all checks passed"
exit $((fails > 0))

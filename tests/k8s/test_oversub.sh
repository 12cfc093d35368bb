#!/usr/bin/env bash
# test_oversub.sh — issue 37 item 5 through Kubernetes' device-plugin path: a node whose convgpud
# runs at --oversubscribe 2 on one emulated 4 GiB GPU lists 32 memory units to the kubelet
# stand-in (real gRPC) through convgpu-device-plugin; six pods asking for 8 units (2 GiB) each go
# through GetPreferredAllocation, Allocate, the shim's claim of the plugin's token and real
# processes (tests/k8s/oversub_pods.py). Four run at once, their limits adding to 8 GiB, twice
# the GPU; two stay pending for units. Each pod holds a 600 MiB base, then a 1700 MiB peak,
# each until the test releases it (files, not durations): the peaks are held together, and at
# most two fit the GPU, so the other pods' allocations wait in convgpud (suspended) instead of
# failing. When the peaks are released every pod, the pending ones too, ends with exit 0: none
# ran out of memory, and nothing is left registered. (The makespan against F = 1: bench/k8s-oversub.sh.)
set -eu
SRC=$(cd "$(dirname "$0")/../.." && pwd)
. "$SRC/tests/containers/lib.sh"
. "$SRC/tests/k8s/oversub_node.sh"
export CONVGPU_EMU_CONTEXT=16MiB
oversub_node_start
oversub_set_factor 2

cat >"$TMP/job.sh" <<JOB
#!/bin/bash
# A pod's container: a base footprint until released, then a peak until released.
"$SAMPLE" --size 600MiB --touch 1MiB --hold-until "$TMP/go" --quiet || exit \$?
exec "$SAMPLE" --size 1700MiB --touch 1MiB --hold-until "$TMP/end" --quiet
JOB
chmod 0755 "$TMP/job.sh"
for i in 1 2 3 4 5 6; do echo "pod-$i 8 $TMP/job.sh"; done >"$TMP/pods"
oversub_pods "$TMP/pods" "$TMP/out" >"$TMP/pods.log" 2>&1 &
PODS_PID=$!
at_exit 'kill $PODS_PID'

running() { wc -l <"$TMP/out/running" 2>/dev/null; }
limits_mib() { cg ps --json | python3 -c 'import json,sys; print(sum(c["limit"] for c in json.load(sys.stdin)) >> 20)'; }
started() { ls "$TMP/out/"pod-*.out 2>/dev/null | wc -l; }
suspended_at_least() { [ "$(oversub_suspends)" -ge "$1" ]; }

wait_for "four pods running" "$WAIT_S" prints 4 running
check "kubelet admitted 4 pods of 8 units: 32 units, all the node lists" \
    prints "4 32" cat "$TMP/out/max_running"
check "their limits add to 8192 MiB, twice the GPU's 4096" prints 8192 limits_mib
check "... registered with convgpud from the plugin's records (4 containers)" prints 4 registered_count
check "the other two pods are pending (no units left), not started" \
    test ! -e "$TMP/out/pod-5.rc" -a ! -e "$TMP/out/pod-5.out" -a ! -e "$TMP/out/pod-6.out"
check "... their four processes started, the pending pods' not" prints 4 started
touch "$TMP/go"
wait_for "the peaks collide: allocations of two pods wait in convgpud (suspended)" "$WAIT_S" \
    suspended_at_least 2
check "... and no pod has ended meanwhile (none was refused)" \
    bash -c "! ls '$TMP/out/'*.rc >/dev/null 2>&1"
touch "$TMP/end"
wait_for "every pod done" "$WAIT_S" test -e "$TMP/out/summary"
read -r makespan npods failed ooms maxrun maxunits <"$TMP/out/summary"
echo "summary: makespan ${makespan}s, $npods pods, $failed failed, $ooms out of memory, at most $maxrun running ($maxunits units)"
check "all 6 pods ran, none failed" test "$npods $failed" = "6 0"
check "none ran out of memory" test "$ooms" = 0
check "every pod exited 0" bash -c "[ \$(cat '$TMP/out/'pod-*.rc | grep -cx 0) = 6 ]"
check "suspensions decided: $(oversub_suspends) (at least 2)" suspended_at_least 2
wait_for "nothing left registered" "$WAIT_S" prints 0 registered_count
check "the GPU has nothing assigned" \
    bash -c "'$BUILD/bin/convgpu' --runtime-dir '$RUNDIR' devices --json | grep -q '\"assigned\": 0'"
wait "$PODS_PID" || fail "the pods' runner exited $?"
[ "$FAILS" = 0 ] || { echo "--- pods ---"; cat "$TMP/pods.log"; tail -n 20 "$TMP/plugin.log"; }
finish

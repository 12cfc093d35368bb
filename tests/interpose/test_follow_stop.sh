# test_follow_stop.sh — --follow-stop PREFIX across a daemon restart (issue 38, docs/SLURM.md
# "Suspend and resume"): a container paused because all its processes were stopped (SIGSTOP,
# as Slurm's `scontrol suspend` sends) is remembered as such in state.db, so the daemon killed
# -9 while it is paused, restarted
#   - after the processes were continued (SIGCONT while no daemon ran): resumes it at once;
#   - while they are still stopped: resumes it when they are continued;
# each time every byte comes back, charged once. An operator's pause of a container whose
# processes run is not undone by a restart (interpose.pause checks that one).
. "$(dirname "$0")/lib.sh"
need_emulator
# The checkpoint helper takes a stopped process's driver thread out of the stop with ptrace.
[ "$(id -u)" -eq 0 ] || { echo "SKIP: --follow-stop checkpoints stopped processes (ptrace): run as root"; exit 77; }
export CONVGPU_EMU_CONTEXT=2MiB
SWAP_PROBE=${IP_SWAP_PROBE:?}
MIB=1048576
f() { container_field "$1" "$2"; }
is() { test "$(f "$1" state)" = "$2"; }
probe_pid() { # the first process of container $1
    cg inspect "$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["process_list"][0]["pid"])'
}
declare -A PROBE # name -> its `convgpu run`
# --follow-stop matches container ids: the containers are made through the API with theirs (as
# Slurm's plugin makes slurm-JOB.STEP), the probe run with the interposer environment given.
start_probe() { # start_probe NAME: a container of id NAME holding 64 MiB of a pattern
    local name=$1 out env
    out=$(api POST /v1/containers "{\"gpu_memory\":\"100MiB\",\"id\":\"$name\",\"name\":\"$name\"}")
    [ "${out%% *}" = 201 ] || fail "$name not created: $out"
    env=$(python3 -c 'import json,sys
e = json.loads(sys.argv[1]).get("env", {})
print("\n".join(k + "=" + v for k, v in e.items()))' "${out#* }")
    mapfile -t envs <<<"$env"
    env "${envs[@]}" "$SWAP_PROBE" big "$TMP/$name.go" 64 >"$TMP/$name.out" 2>&1 &
    PROBE[$name]=$!
    wait_for "$name ready" "$WAIT_S" grep -q '^ready$' "$TMP/$name.out" || fail "$name never ready"
}
end_probe() { # end_probe NAME: releases it; it checks every byte
    local name=$1 rc=0 pid
    pid=${PROBE[$name]}
    touch "$TMP/$name.go"
    wait "$pid" || rc=$?
    check "$name: every byte came back (rc $rc)" test "$rc" = 0 -a "$(tail -n1 "$TMP/$name.out")" = ok
    api DELETE "/v1/containers/$name" >/dev/null
}
daemon() { start_daemon --emulate 512MiB --follow-stop fs-; }

# ---- continued while no daemon ran ----------------------------------------------------------
daemon
start_probe fs-a
pid=$(probe_pid fs-a)
used_in=$(f fs-a used)
check "fs-a uses 64 MiB + its context ($used_in)" test "$used_in" -eq $((66 * MIB))
kill -STOP "$pid"
wait_for "fs-a paused once its process stopped" "$WAIT_S" is fs-a paused ||
    fail "fs-a is $(f fs-a state)"
check "fs-a holds nothing while paused (used $(f fs-a used))" test "$(f fs-a used)" -eq 0
stop_daemon_hard
kill -CONT "$pid"
daemon
wait_for "fs-a resumed by the restarted daemon (its process runs)" "$WAIT_S" is fs-a running ||
    fail "fs-a is $(f fs-a state) after the restart"
check "fs-a charged once ($(f fs-a used) = $used_in)" test "$(f fs-a used)" -eq "$used_in"
check "the restarted daemon said why" grep -q "container fs-a: its processes run again: resuming it" "$DAEMON_LOG"
end_probe fs-a

# ---- still stopped at the restart -----------------------------------------------------------
start_probe fs-b
pid=$(probe_pid fs-b)
used_in=$(f fs-b used)
kill -STOP "$pid"
wait_for "fs-b paused once its process stopped" "$WAIT_S" is fs-b paused ||
    fail "fs-b is $(f fs-b state)"
stop_daemon_hard
daemon
check "fs-b restored paused while its process is stopped" is fs-b paused
check "fs-b holds nothing (used $(f fs-b used))" test "$(f fs-b used)" -eq 0
kill -CONT "$pid"
wait_for "fs-b resumed when its process ran again" "$WAIT_S" is fs-b running ||
    fail "fs-b is $(f fs-b state)"
check "fs-b charged once ($(f fs-b used) = $used_in)" test "$(f fs-b used)" -eq "$used_in"
end_probe fs-b

# ---- an operator's pause is not a stop --------------------------------------------------------
start_probe op-c
expect_rc 0 "op-c paused by the operator" cg pause op-c
stop_daemon_hard
daemon
check "op-c (not followed, running processes) is still paused after a kill -9" is op-c paused
expect_rc 0 "op-c resumed by the operator" cg resume op-c
end_probe op-c
stop_daemon_hard
finish

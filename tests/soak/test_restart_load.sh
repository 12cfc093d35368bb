# test_restart_load.sh — kill -9 of the daemon under load, twice, loses nothing.
#
# Six containers on a 3GiB emulated GPU (limits 1GiB, 768MiB, 768MiB, 768MiB, 512MiB, 1GiB: 4.75GiB
# asked, so c4 gets only part of its limit and c5, c6 get nothing at first), 2-3 `churn`
# processes in each allocating and freeing random 2MiB-multiples within a budget that fits the
# limit. Processes of c4, c5 and c6 end up waiting in suspended requests.
#
#  restart 1 (quiescent): the processes are paused between operations (the suspended ones stay
#    blocked in their request); snapshot; kill -9; restart; once every waiting process has
#    re-sent its request, the snapshot must be identical: containers, limits, assignments, every
#    process's use and ledger slot, the pending requests, the device's totals.
#  restart 2 (mid-run): kill -9 while every process allocates and frees; restart; limits and
#    assignments are back at once; then a paused snapshot must be consistent.
#  Every snapshot checks: per-process use in the daemon == what the process says it holds (+ the
#    context charge) == the emulator's NVML per-process figure; container use == the sum of its
#    processes'; device assigned/used == the sums over containers; NVML device use == daemon's.
#  Then containers are stopped and removed one at a time: the suspended requests are granted by
#    the resume policy (after the restarts), every process exits 0, and at the end the device
#    shows assigned 0, used 0 and NVML no process.
. "${CONVGPU_SOURCE_DIR:?}/tests/e2e/lib.sh"
CHURN=${CHURN:?CHURN must point at the churn binary}
STATE_PY="$CONVGPU_SOURCE_DIR/tests/soak/state.py"
if [ ! -e "$BUILD/lib/emu/libcuda.so.1" ]; then echo "SKIP: no emulator built"; exit 77; fi
export CONVGPU_EMU_CONTEXT=2MiB CTX=$((2 << 20))
export CONVGPU_DAEMON_TIMEOUT=120 # the processes wait out each restart: this only bounds a hang
DEV=3GiB
PIDS=()              # every churn process, in start order
declare -A PNAME PSTAT
kill_tracked() {
    local p
    for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; done
    for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
}
trap 'set +e; kill_tracked; cleanup' EXIT

start_daemon --emulate $DEV

# name limit nprocs
SPEC="c1 1GiB 3
c2 768MiB 2
c3 768MiB 3
c4 768MiB 2
c5 512MiB 2
c6 1GiB 3"
declare -A LIMIT NPROC
NAMES=()
while read -r name limit n; do
    NAMES+=("$name"); LIMIT[$name]=$limit; NPROC[$name]=$n
    cg create --gpu-memory "$limit" --name "$name" >"$TMP/env.$name" || fail "create $name"
done <<<"$SPEC"
free0=$(cg devices --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["free"])')
check "the six containers ask more than the device: nothing is left free (free=$free0)" test "$free0" -eq 0

bytes() { python3 -c 'import sys
n=sys.argv[1]; u={"KiB":1<<10,"MiB":1<<20,"GiB":1<<30}
for k,v in u.items():
    if n.endswith(k): print(int(n[:-3])*v); break
else: print(int(n))' "$1"; }

seed=1
for name in "${NAMES[@]}"; do
    n=${NPROC[$name]}
    lim=$(bytes "${LIMIT[$name]}")
    # Budgets that fit the limit together with every process's context charge.
    budget=$(( (lim / n - CTX) / (2 << 20) * (2 << 20) ))
    for i in $(seq 1 "$n"); do
        st=$TMP/st.$name.$i
        env $(tail -n +2 "$TMP/env.$name") "$CHURN" --budget "$budget" --max 96MiB --ops 100000000 \
            --sleep-ms 2:6 --seed $((seed++)) --status "$st" --pause "$TMP/pause" \
            --stop "$TMP/stop.$name" >"$TMP/out.$name.$i" 2>&1 &
        PIDS+=($!); PNAME[$!]=$name; PSTAT[$!]=$st
    done
done
echo "started ${#PIDS[@]} processes in ${#NAMES[@]} containers"

live_procs() { # "PID NAME STATUS" for processes still running
    local p
    for p in "${PIDS[@]}"; do
        if kill -0 "$p" 2>/dev/null; then echo "$p ${PNAME[$p]} ${PSTAT[$p]}"; fi
    done
}

statuses() { # every tracked process's status line, in start order
    local p
    for p in "${PIDS[@]}"; do echo "$p $(cat "${PSTAT[$p]}" 2>/dev/null)"; done
}

collect() { # collect DIR: the processes' statuses, then the daemon's and the emulator's view
    local d=$1 name
    mkdir -p "$d"
    echo "$CTX" >"$d/ctx"
    statuses >"$d/statuses.txt"
    cg ps --json >"$d/ps.json"
    for name in "${NAMES[@]}"; do
        cg inspect "$name" >"$d/inspect.$name.json" 2>/dev/null || rm -f "$d/inspect.$name.json"
    done
    cg devices --json >"$d/devices.json"
    LD_LIBRARY_PATH="$BUILD/lib/emu" CONVGPU_EMU_DEVICES=$DEV "$CHURN" --nvml >"$d/nvml.txt"
    live_procs >"$d/procs.txt"
}

quiescent_in() { # quiescent_in DIR: in that view, every live process is paused, or waits in a
    # request the daemon holds as pending
    local d=$1 p name st state
    local pend
    pend=$(python3 "$STATE_PY" pending "$d" | awk '{print $1}' | sort -u)
    while read -r p name st; do
        [ -n "$p" ] || continue
        state=$(awk -v p="$p" '$1 == p' "$d/statuses.txt" | sed -n 's/.*state=\([a-z]*\).*/\1/p')
        case $state in
            paused|done) ;;
            alloc) grep -qx "$p" <<<"$pend" || return 1 ;;
            *) return 1 ;;
        esac
    done <"$d/procs.txt"
}

# A quiescent view is not yet a settled one: a FREED notice the daemon has not handled yet can
# still grant a waiting request, and that process then allocates and pauses while a snapshot is
# being read (its status before the grant, the daemon's figures after). Settled: two views in a
# row, identical in the processes' statuses, the daemon's accounting and NVML's, and quiescent.
# While every process is paused only a grant changes anything, and a grant shows in the daemon's
# figures before the process moves, so equal views mean nothing moved from the first view's
# statuses to the second's last figure: the second is a consistent snapshot.
view_digest() { # view_digest DIR: what must not change between the two views
    cat "$1/statuses.txt" "$1/nvml.txt" "$1/procs.txt"
    python3 "$STATE_PY" digest "$1"
}
settled_into() { # settled_into DIR: DIR holds a settled view
    local a=$TMP/settle.a d=$1
    rm -rf "$a" "$d"
    collect "$a" >/dev/null 2>&1 && quiescent_in "$a" || return 1
    collect "$d" >/dev/null 2>&1 || return 1
    [ "$(view_digest "$a")" = "$(view_digest "$d")" ]
}

tally() { # tally OUTPUT: counts state.py's ok:/FAIL: lines into the harness's totals
    local n
    n=$(grep -c '^ok:' <<<"$1" || true); PASSES=$((PASSES + n))
    n=$(grep -c '^FAIL:' <<<"$1" || true); FAILS=$((FAILS + n))
}

verify() { # verify LABEL: pause, wait for a settled state, check it; leaves it paused
    local d=$TMP/snap.$1
    touch "$TMP/pause"
    wait_for "a settled state ($1)" "$WAIT_S" settled_into "$d" || fail "no settled state ($1)"
    echo "--- $1: $(grep -c . "$d/procs.txt") live processes, pending: $(python3 "$STATE_PY" pending "$d" | wc -l)"
    local out rc=0
    out=$(python3 "$STATE_PY" check "$d") || rc=$?
    tally "$out"
    sed "s/^\(ok\|FAIL\): /\1: [$1] /" <<<"$out"
}

ops_total() { local s=0 p o; for p in "${PIDS[@]}"; do o=$(sed -n 's/.*ops=\([0-9]*\).*/\1/p' "${PSTAT[$p]}" 2>/dev/null); s=$((s + ${o:-0})); done; echo $s; }
# The phases below wait for what they need to have happened, never for a time: on a loaded
# machine the processes may do little in a second. (Deadlines only bound a hang.)
ops_grew() { [ "$(ops_total)" -ge $(($1 + $2)) ]; } # ops_grew FROM BY
pending_total() { cg ps --json | python3 -c 'import json,sys; print(sum(c["pending"] for c in json.load(sys.stdin)))'; }
pending_at_least() { [ "$(pending_total)" -ge "$1" ]; }
unreachable_lines() { cat "$TMP"/out.* 2>/dev/null | grep -c "daemon unreachable" || true; }
unreachable_grew() { [ "$(unreachable_lines)" -gt "$1" ]; } # a waiting process found the daemon gone

wait_for "processes of c4, c5, c6 waiting in suspended requests" "$WAIT_S" pending_at_least 3 ||
    fail "fewer than 3 requests pending: $(pending_total)"
t_start=$(date +%s%N); ops_start=$(ops_total)

# ---- restart 1: quiescent, exact ------------------------------------------------------------
verify before-restart-1
npend1=$(python3 "$STATE_PY" pending "$TMP/snap.before-restart-1" | wc -l)
check "some processes wait in suspended requests before the restart ($npend1)" test "$npend1" -ge 3
ps_before=$(cg ps --json)
u0=$(unreachable_lines)
stop_daemon_hard
wait_for "a waiting process finds the daemon gone" "$WAIT_S" unreachable_grew "$u0" ||
    fail "no waiting process noticed the daemon was gone"
start_daemon --emulate $DEV
# The waiting processes re-send their requests when they reconnect.
same_pending() {
    collect "$TMP/r1" >/dev/null 2>&1 &&
        [ "$(python3 "$STATE_PY" pending "$TMP/r1" | sort)" = \
          "$(python3 "$STATE_PY" pending "$TMP/snap.before-restart-1" | sort)" ]
}
wait_for "waiting processes re-send their requests" "$WAIT_S" same_pending || fail "pending requests did not come back"
verify after-restart-1
out=$(python3 "$STATE_PY" compare "$TMP/snap.before-restart-1/snapshot.json" "$TMP/snap.after-restart-1/snapshot.json") || true
tally "$out"
echo "$out"

# ---- restart 2: mid-run -----------------------------------------------------------------------
rm -f "$TMP/pause"
ops0=$(ops_total)
wait_for "the processes run again" "$WAIT_S" ops_grew "$ops0" 100 || fail "the processes did not run again"
ps_before=$(cg ps --json)
stop_daemon_hard
# The processes go on allocating within their quota meanwhile.
ops0=$(ops_total)
wait_for "the processes allocate while the daemon is down" "$WAIT_S" ops_grew "$ops0" 20 ||
    fail "no process went on while the daemon was down"
start_daemon --emulate $DEV
ps_after=$(cg ps --json)
out=$(python3 - "$ps_before" "$ps_after" <<'EOF'
import json, sys
a = {c["name"]: (c["id"], c["limit"], c["assigned"], c["device"]) for c in json.loads(sys.argv[1])}
b = {c["name"]: (c["id"], c["limit"], c["assigned"], c["device"]) for c in json.loads(sys.argv[2])}
print("same" if a == b else "before %s\nafter  %s" % (a, b))
EOF
)
check "restart 2 (mid-run): every container back at once with its id, limit, assignment, device" test "$out" = same
[ "$out" = same ] || echo "$out"
ops0=$(ops_total)
wait_for "the processes run on after the restart" "$WAIT_S" ops_grew "$ops0" 100 ||
    fail "the processes did not run on after the second restart"
verify after-restart-2
rm -f "$TMP/pause"
t_end=$(date +%s%N); ops_end=$(ops_total)
npend2=$(python3 "$STATE_PY" pending "$TMP/snap.after-restart-2" | wc -l)
check "suspended requests still wait after both restarts ($npend2)" test "$npend2" -ge 1

# ---- drain: stop and remove containers one by one; the policy resumes the suspended ----------
waiting_pids=$(python3 "$STATE_PY" pending "$TMP/snap.after-restart-2" | awk '{print $1}' | sort -u)
gone() { ! kill -0 "$1" 2>/dev/null || [ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" = Z ]; }
for name in "${NAMES[@]}"; do
    touch "$TMP/stop.$name"
    for p in "${PIDS[@]}"; do
        [ "${PNAME[$p]}" = "$name" ] || continue
        wait_for "$name's process $p to finish" "$WAIT_S" gone "$p" || kill -KILL "$p" 2>/dev/null
        wait "$p" 2>/dev/null || true
    done
    cg rm "$name" >/dev/null || fail "rm $name"
done
bad_exit=0
for p in "${PIDS[@]}"; do
    i=$(basename "${PSTAT[$p]}" | sed 's/.*\.//')
    line=$(grep '^churn pid=' "$TMP/out.${PNAME[$p]}.$i" | tail -n 1)
    case $line in *" rc=0 "*) ;; *) bad_exit=$((bad_exit + 1)); echo "    | $p (${PNAME[$p]}): ${line:-no final line}"; sed 's/^/    | /' "$TMP/out.${PNAME[$p]}.$i";; esac
done
check "every process (${#PIDS[@]}) exited 0: the applications noticed nothing" test "$bad_exit" -eq 0
granted_late=0
for p in $waiting_pids; do
    i=$(basename "${PSTAT[$p]}" | sed 's/.*\.//')
    allocs=$(sed -n 's/.*allocs=\([0-9]*\).*/\1/p' "$TMP/out.${PNAME[$p]}.$i")
    [ "${allocs:-0}" -gt 0 ] && granted_late=$((granted_late + 1))
done
check "every process waiting across both restarts was granted afterwards ($granted_late of $(wc -w <<<"$waiting_pids"))" \
    test "$granted_late" -eq "$(wc -w <<<"$waiting_pids")"
# The third daemon's own count of resume decisions (/metrics starts at zero with each daemon).
resumes=$(api GET /metrics | awk '$1 == "convgpu_decisions_total{kind=\"resume\"}" { print $2 }')
check "the policy resumed suspended containers after the second restart ($resumes resume decisions)" test "$resumes" -ge 1

# ---- the end: nothing left anywhere ------------------------------------------------------------
collect "$TMP/end"
dev=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))[0]; print(d["assigned"], d["used"], d["containers"])' "$TMP/end/devices.json")
check "device after all containers are removed: assigned 0, used 0, no container ($dev)" test "$dev" = "0 0 0"
check "ps lists no container" test "$(cat "$TMP/end/ps.json" | tr -d ' \n')" = "[]"
check "NVML: no process, device use 0 ($(tr '\n' ' ' <"$TMP/end/nvml.txt"))" \
    test "$(grep -c '^proc' "$TMP/end/nvml.txt")" -eq 0 -a "$(awk '/^device/{print $2}' "$TMP/end/nvml.txt")" -eq 0
secs=$(( (t_end - t_start) / 1000000 ))
echo "figures: ${#PIDS[@]} processes in ${#NAMES[@]} containers, $((ops_end - ops_start)) operations in ${secs} ms" \
     "($(( (ops_end - ops_start) * 1000 / (secs > 0 ? secs : 1) )) ops/s) across 2 daemon kill -9 + restarts"
finish

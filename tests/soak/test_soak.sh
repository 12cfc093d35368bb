# test_soak.sh — a bounded soak: many processes in many containers doing random allocate / free /
# fork / exit-without-free, the test SIGKILLing some of them, the resume policy switched through
# fifo, best-fit, recent, random and aging-fit while it runs. Stops by itself.
#
# Each "job" is a container with a random limit L (256MiB..2GiB) and 4-8 churn processes: either
# `convgpu run --gpu-memory L -- bash -c '...'` or `convgpu create` + the processes + `convgpu rm`,
# on an emulated GPU of PROCS * 96MiB (at least 2GiB); the test keeps about SOAK_PROCS churn
# processes alive at once, so the containers ask well over the device and some are suspended.
# churn allows out-of-memory answers (a container whose processes together ask over its limit
# gets them). The load is built up before the clock starts: until 3/4 of SOAK_PROCS are alive,
# the processes pause after their first request (however slowly a busy machine starts them).
#
# Asserts:
#  - no process outlives the deadline (load phase + SOAK_DRAIN_S): the watchdog fails the test and
#    kills whatever is left — no request waits forever;
#  - no churn process reports an error other than out of memory;
#  - at the end every container is gone and the device shows assigned 0, used 0, no suspended
#    container; the emulator's NVML shows no process and 0 used: accounting is exactly zero;
#  - the daemon's open fds at the end == at the start (empty daemon), and its RSS grows at most
#    SOAK_RSS_TOL_KB (default 4096) between a sample taken a third of the way in and the samples
#    at two thirds, at the end of the load and after the drain. The numbers are printed. In
#    sanitizer builds (SOAK_SANITIZER=1) the RSS is reported, not checked: ASan's quarantine holds
#    freed memory back (up to 256 MiB), so RSS grows with the number of frees; instead the daemon
#    must exit 0 on SIGTERM, which LeakSanitizer turns into a failure when anything leaked.
#
# Scale (defaults are the CI profile, < 90 s on 2 cores):
#   SOAK_SECONDS=40   length of the load phase (each policy gets a fifth of it)
#   SOAK_PROCS=64     churn processes alive at once
#   SOAK_DRAIN_S=120  time allowed after the load phase for everything to finish (a hang bound:
#                     a drain takes seconds, more on a loaded machine)
#   SOAK_KILL_PM=150  per mille chance, every 100 ms, that the test SIGKILLs a random process
#   SOAK_DEVICE_MIB=N size of the emulated GPU (default PROCS * 96, at least 2048)
#   SOAK_SEED=N       seed of the test's choices (default: time)
#   SOAK_VALGRIND=1   run the daemon under valgrind memcheck (--leak-check=full,
#                     --error-exitcode); the test then also requires a clean valgrind exit
# e.g. a long run: SOAK_SECONDS=1800 SOAK_PROCS=128 SOAK_DRAIN_S=120 ctest -R soak.soak --timeout 2400
. "${CONVGPU_SOURCE_DIR:?}/tests/e2e/lib.sh"
CHURN=${CHURN:?CHURN must point at the churn binary}
set +u   # empty associative arrays below
if [ ! -e "$BUILD/lib/emu/libcuda.so.1" ]; then echo "SKIP: no emulator built"; exit 77; fi
SECONDS_LOAD=${SOAK_SECONDS:-40}
PROCS=${SOAK_PROCS:-64}
DRAIN=${SOAK_DRAIN_S:-120}
KILL_PM=${SOAK_KILL_PM:-150}
RSS_TOL=${SOAK_RSS_TOL_KB:-4096}
SEED=${SOAK_SEED:-$(date +%s)}
RANDOM=$SEED
# The device shrinks with the load so that containers are always suspended: about 6 processes
# per container and 1.1GiB per container on average, so PROCS * 96MiB is about half of what the
# containers live at once may ask (6GiB at 64 processes; never under 2GiB, the largest limit).
DEV_MIB=${SOAK_DEVICE_MIB:-$(( PROCS * 96 > 2048 ? PROCS * 96 : 2048 ))}
DEV=${DEV_MIB}MiB
export CONVGPU_EMU_CONTEXT=2MiB
export CONVGPU_DAEMON_TIMEOUT=30
PIDDIR=$TMP/pids
JOBDIR=$TMP/jobs
mkdir -p "$PIDDIR" "$JOBDIR"
echo "soak: ${SECONDS_LOAD}s, $PROCS processes on a ${DEV} device, drain ${DRAIN}s, seed $SEED${SOAK_VALGRIND:+, daemon under valgrind}"

declare -A JOBN           # live job (convgpu run) pid -> its number of processes
ALLJOBS=()
not() { ! "$@"; }
ours() { tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null | grep -qF -- "$TMP"; }
kill_everything() {
    local p f
    for p in "${ALLJOBS[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
    for f in "$PIDDIR"/*; do
        [ -e "$f" ] || continue
        p=${f##*/}; if ours "$p"; then kill -KILL "$p" 2>/dev/null || true; fi
    done
    for p in "${ALLJOBS[@]}"; do wait "$p" 2>/dev/null || true; done
}
trap 'set +e; kill_everything; cleanup' EXIT

start_soak_daemon() {
    mkdir -p "$RUNDIR"
    local pre=()
    if [ -n "${SOAK_VALGRIND:-}" ]; then
        command -v valgrind >/dev/null || { echo "SKIP: valgrind not installed"; exit 77; }
        pre=(valgrind --tool=memcheck --error-exitcode=99 --leak-check=full
             --show-leak-kinds=definite,indirect,possible --errors-for-leak-kinds=definite,indirect
             --num-callers=30 "--log-file=$TMP/valgrind.%p.log")
    fi
    "${pre[@]}" "$BUILD/bin/convgpud" --runtime-dir "$RUNDIR" --foreground --log-level info \
        --emulate $DEV >>"$DAEMON_LOG" 2>&1 &
    DAEMON_PID=$!
    # A daemon that never answers is a failure: counted, so that cleanup prints its log.
    wait_for "daemon answering on its control socket" "$WAIT_S" \
        curl -sf -o /dev/null --unix-socket "$RUNDIR/control.sock" http://convgpu/v1/version \
        || { fail "convgpud (pid $DAEMON_PID) did not answer on $RUNDIR/control.sock"; return 1; }
}

declare -A RSS FDS
sample() { # sample LABEL: the daemon's RSS (kB) and open fds
    RSS[$1]=$(awk '/^VmRSS:/{print $2}' "/proc/$DAEMON_PID/status")
    FDS[$1]=$(ls "/proc/$DAEMON_PID/fd" | wc -l)
    echo "sample $1: RSS ${RSS[$1]} kB, fds ${FDS[$1]}, live processes $(live)"
}
live() { ls "$PIDDIR" | wc -l; }

LIMITS=(256MiB 512MiB 768MiB 1GiB 1GiB 1536MiB 2GiB)
NJOBS=0
spawn_job() { # spawn_job N
    local n=$1 lim=${LIMITS[RANDOM % ${#LIMITS[@]}]} j=$NJOBS
    NJOBS=$((NJOBS + 1))
    # Budget per process: about the limit shared out, sometimes more (out-of-memory answers).
    local mib=${lim%MiB}; [ "$mib" = "$lim" ] && mib=$(( ${lim%GiB} * 1024 ))
    local budget=$(( (mib * (2 + RANDOM % 3) / (2 * n) - 2) / 2 * 2 ))
    [ "$budget" -ge 4 ] || budget=4
    local args="--budget ${budget}MiB --max 64MiB --sleep-ms 4:16 --oom-ok --fork-pm 8 --exit-pm 2 --managed-pm 100 --pid-dir $PIDDIR --pause $RAMP"
    local script='for i in $(seq 1 "$1"); do
            "$2" $3 --ops $((100 + RANDOM % 200)) --seed $(($4 * 1000 + i)) &
        done
        wait'
    # Half the jobs are `convgpu run` (the container goes when its owner exits), half are
    # create + processes + rm. Under valgrind only the latter: valgrind 3.19 lacks pidfd_open,
    # which the daemon uses to watch a run's owner.
    if [ -z "${SOAK_VALGRIND:-}" ] && [ $((RANDOM % 2)) -eq 0 ]; then
        cg run --gpu-memory "$lim" -- bash -c "$script" job "$n" "$CHURN" "$args" "$((SEED + j))" \
            >"$JOBDIR/$j.out" 2>&1 &
    else
        (
            cg create --gpu-memory "$lim" >"$JOBDIR/$j.env" || exit 1
            env $(tail -n +2 "$JOBDIR/$j.env") bash -c "$script" job "$n" "$CHURN" "$args" "$((SEED + j))"
            cg rm "$(head -n 1 "$JOBDIR/$j.env")" >/dev/null
        ) >"$JOBDIR/$j.out" 2>&1 &
    fi
    JOBN[$!]=$n
    ALLJOBS+=($!)
}
reap() {
    local p
    for p in "${!JOBN[@]}"; do
        if ! kill -0 "$p" 2>/dev/null; then wait "$p" 2>/dev/null || true; unset "JOBN[$p]"; fi
    done
}
KILLS=0
kill_random() {
    local files=("$PIDDIR"/*)
    [ -e "${files[0]}" ] || return 0
    local f=${files[RANDOM % ${#files[@]}]}
    local p=${f##*/}
    if ours "$p" && kill -KILL "$p" 2>/dev/null; then KILLS=$((KILLS + 1)); fi
    rm -f "$f"
}

start_soak_daemon
sample start

# ---- ramp-up: the planned load is reached before the clock starts --------------------------------
# Processes pause after their first request while $RAMP exists: on a loaded machine starting a
# job takes longer than a process lives, and the load would never build up otherwise.
RAMP=$TMP/ramp
touch "$RAMP"
cg policy fifo >/dev/null || fail "policy fifo"
peak=0
ramp_end=$(( $(date +%s) + 4 * WAIT_S ))
while [ "$(date +%s)" -lt "$ramp_end" ]; do
    reap
    n=$(live); [ "$n" -gt "$peak" ] && peak=$n
    [ "$n" -lt $((PROCS * 3 / 4)) ] || break
    k=$(( 4 + RANDOM % 5 ))
    if [ $(( n + k )) -le "$PROCS" ] && [ "${#JOBN[@]}" -lt $(( PROCS / 2 )) ]; then spawn_job "$k"; fi
    sleep 0.1
done
echo "ramp-up: $(live) live processes"
rm -f "$RAMP"

POLICIES=(fifo best-fit recent random aging-fit)
period_ms=$(( SECONDS_LOAD * 1000 / ${#POLICIES[@]} ))
t0=$(date +%s%N)
end=$(( t0 + SECONDS_LOAD * 1000000000 ))
pol=-1 s1= s2=
declare -A RESUMES SUSPENDS
# The decisions so far by kind, from the daemon's /metrics (its counters of the core's events),
# not from the log's wording.
count_decisions() {
    curl -sf --unix-socket "$RUNDIR/control.sock" http://convgpu/metrics |
        awk -v k="convgpu_decisions_total{kind=\"$1\"}" '$1 == k { print $2; n++ } END { if (!n) print 0 }'
}
while :; do
    now=$(date +%s%N)
    [ "$now" -lt "$end" ] || break
    el_ms=$(( (now - t0) / 1000000 ))
    want=$(( el_ms / period_ms )); [ "$want" -lt ${#POLICIES[@]} ] || want=$(( ${#POLICIES[@]} - 1 ))
    if [ "$want" -ne "$pol" ]; then
        if [ "$pol" -ge 0 ]; then
            RESUMES[${POLICIES[$pol]}]=$(( $(count_decisions resume) - r0 ))
            SUSPENDS[${POLICIES[$pol]}]=$(( $(count_decisions suspend) - s0 ))
        fi
        pol=$want
        cg policy "${POLICIES[$pol]}" >/dev/null || fail "policy ${POLICIES[$pol]}"
        r0=$(count_decisions resume); s0=$(count_decisions suspend)
    fi
    if [ -z "$s1" ] && [ "$el_ms" -ge $(( SECONDS_LOAD * 1000 / 3 )) ]; then sample third; s1=1; fi
    if [ -z "$s2" ] && [ "$el_ms" -ge $(( SECONDS_LOAD * 2000 / 3 )) ]; then sample two-thirds; s2=1; fi
    reap
    n=$(live); [ "$n" -gt "$peak" ] && peak=$n
    # Start a job when there is room.
    k=$(( 4 + RANDOM % 5 ))
    if [ $(( n + k )) -le "$PROCS" ] && [ "${#JOBN[@]}" -lt $(( PROCS / 2 )) ]; then spawn_job "$k"; fi
    if [ $(( RANDOM % 1000 )) -lt "$KILL_PM" ]; then kill_random; fi
    sleep 0.1
done
RESUMES[${POLICIES[$pol]}]=$(( $(count_decisions resume) - r0 ))
SUSPENDS[${POLICIES[$pol]}]=$(( $(count_decisions suspend) - s0 ))
sample end-of-load
t_load=$(( ($(date +%s%N) - t0) / 1000000 ))

# ---- drain, under the watchdog ------------------------------------------------------------------
deadline=$(( $(date +%s%N) + DRAIN * 1000000000 ))
while :; do
    reap
    [ "${#JOBN[@]}" -gt 0 ] || break
    if [ "$(date +%s%N)" -gt "$deadline" ]; then
        fail "watchdog: ${#JOBN[@]} job(s) still running ${DRAIN}s after the load stopped (waiting forever?)"
        cg ps 2>&1 | sed 's/^/    | /'
        for f in "$PIDDIR"/*; do [ -e "$f" ] && echo "    | still alive: pid ${f##*/}"; done
        kill_everything
        break
    fi
    sleep 0.2
done
t_all=$(( ($(date +%s%N) - t0) / 1000000 ))
check "daemon still running after the soak" kill -0 "$DAEMON_PID"

# ---- accounting back to exactly zero -----------------------------------------------------------
empty() { [ "$(cg ps --json | tr -d ' \n')" = "[]" ]; }
wait_for "every container removed" "$WAIT_S" empty || true
check "every container removed" empty
dev=$(cg devices --json | python3 -c 'import json,sys; d=json.load(sys.stdin)[0]; print(d["assigned"], d["used"], d["containers"], d["suspended"])')
check "device: assigned 0, used 0, no container, none suspended ($dev)" test "$dev" = "0 0 0 0"
nv=$(LD_LIBRARY_PATH="$BUILD/lib/emu" CONVGPU_EMU_DEVICES=$DEV "$CHURN" --nvml)
check "emulator's NVML: no process, 0 used ($(echo $nv))" test "$(echo $nv)" = "device 0 $((DEV_MIB << 20))"
# The daemon closes the last connections as it sees them hang up: wait for that, not for a time.
fds_back() { [ "$(ls "/proc/$DAEMON_PID/fd" | wc -l)" -le "${FDS[start]}" ]; }
wait_for "the daemon's fds back to the start" "$WAIT_S" fds_back || true
sample end

# ---- what the processes said ---------------------------------------------------------------------
cat "$JOBDIR"/*.out >"$TMP/all.out"
finished=$(grep -c '^churn pid=.* rc=' "$TMP/all.out" || true)
errors=$(grep -c '^churn pid=.* rc=[^0]' "$TMP/all.out" || true)
check "no process reported an error ($errors of $finished finished processes)" test "$errors" -eq 0
if [ "$errors" -ne 0 ]; then grep -B3 '^churn pid=.* rc=[^0]' "$TMP/all.out" | head -n 30 | sed 's/^/    | /'; fi
odd=$(grep '^churn: ' "$TMP/all.out" | grep -v 'out of memory' | head -n 5 || true)
check "no churn error message other than out of memory" test -z "$odd"
[ -z "$odd" ] || echo "$odd" | sed 's/^/    | /'
ops=$(sed -n 's/^churn pid=.* ops=\([0-9]*\).*/\1/p' "$TMP/all.out" | awk '{s+=$1} END{print s+0}')
ooms=$(sed -n 's/^churn pid=.* ooms=\([0-9]*\).*/\1/p' "$TMP/all.out" | awk '{s+=$1} END{print s+0}')
forks=$(sed -n 's/^churn pid=.* forks=\([0-9]*\).*/\1/p' "$TMP/all.out" | awk '{s+=$1} END{print s+0}')
exits=$(grep -c 'exit-without-free' "$TMP/all.out" || true)
started=$(grep -o 'pid [0-9]* connected' "$DAEMON_LOG" | sort -u | wc -l)
check "the load was real: peak $peak live processes (want >= $((PROCS * 3 / 4)))" test "$peak" -ge $((PROCS * 3 / 4))
[ "$finished" -gt 0 ] || { echo "    | a job's output:"; head -n 20 "$JOBDIR/0.out" | sed 's/^/    | /'; }
suspends=$(count_decisions suspend); resumes=$(count_decisions resume)
check "containers were suspended and resumed ($suspends suspensions, $resumes resumptions)" \
    test "$suspends" -gt 0 -a "$resumes" -gt 0

# ---- daemon resources flat -----------------------------------------------------------------------
check "open fds no more than at the start: ${FDS[start]} -> ${FDS[end]}" test "${FDS[end]}" -le "${FDS[start]}"
# (under valgrind the RSS is mostly valgrind's own shadow memory, under ASan it holds the
# quarantine of freed memory: reported, not checked; leaks are found at exit instead)
for s in two-thirds end-of-load end; do
    d=$(( ${RSS[$s]} - ${RSS[third]} ))
    if [ -n "${SOAK_VALGRIND:-}${SOAK_SANITIZER:-}" ]; then echo "RSS under valgrind or a sanitizer: $s ${RSS[$s]} kB vs a third in ${RSS[third]} kB (+$d kB)"; continue; fi
    check "RSS flat: $s ${RSS[$s]} kB vs a third in ${RSS[third]} kB (+$d kB <= $RSS_TOL kB)" test "$d" -le "$RSS_TOL"
done

if [ -n "${SOAK_VALGRIND:-}" ]; then
    vlog=$TMP/valgrind.$DAEMON_PID.log
    kill -TERM "$DAEMON_PID"; rc=0; wait "$DAEMON_PID" || rc=$?; DAEMON_PID=
    for f in "$TMP"/valgrind.*.log; do
        echo "--- $(basename "$f"): $(grep -E 'ERROR SUMMARY|definitely lost|indirectly lost|possibly lost|still reachable' "$f" | sed 's/^==[0-9]*== *//' | tr '\n' ';')"
    done
    check "valgrind: the daemon exits 0 under memcheck (exit $rc; 99 = errors or leaks)" test "$rc" -eq 0
    check "valgrind: 0 errors in the daemon ($(basename "$vlog"))" grep -q "ERROR SUMMARY: 0 errors" "$vlog"
    check "valgrind: nothing definitely or indirectly lost" not grep -qE "(definitely|indirectly) lost: [1-9]" "$vlog"
    [ "$rc" -eq 0 ] || grep -A25 -E '^==[0-9]+== (Invalid|Conditional|Syscall|Mismatched|[0-9,]+ bytes in)' "$TMP"/valgrind.*.log | head -n 80
fi

if [ -n "${SOAK_SANITIZER:-}" ]; then
    kill -TERM "$DAEMON_PID"; rc=0; wait "$DAEMON_PID" || rc=$?; DAEMON_PID=
    check "sanitizer: the daemon exits 0 on SIGTERM after the soak (exit $rc; LeakSanitizer fails a leak)" test "$rc" -eq 0
    [ "$rc" -eq 0 ] || grep -B2 -A25 -E 'ERROR: (LeakSanitizer|AddressSanitizer)|runtime error' "$DAEMON_LOG" | head -n 80
fi

echo "policies: $(for p in "${POLICIES[@]}"; do printf '%s %s/%s  ' "$p" "${SUSPENDS[$p]:-0}" "${RESUMES[$p]:-0}"; done)(suspensions/resumptions)"
echo "figures: $NJOBS containers, $started processes connected (peak $peak at once), $ops operations" \
     "in ${t_load} ms load ($(( ops * 1000 / (t_load > 0 ? t_load : 1) )) ops/s), $KILLS SIGKILLs," \
     "$exits exits without free, $forks forks, $ooms out-of-memory answers; all done after ${t_all} ms"
echo "figures: RSS kB start ${RSS[start]} third ${RSS[third]} two-thirds ${RSS[two-thirds]} end-of-load ${RSS[end-of-load]} end ${RSS[end]};" \
     "fds start ${FDS[start]} third ${FDS[third]} two-thirds ${FDS[two-thirds]} end-of-load ${FDS[end-of-load]} end ${FDS[end]}"
finish

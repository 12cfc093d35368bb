#!/usr/bin/env bash
# compute.sh — compute-share benchmarks (issues #17, #39): how closely shares hold for the way
# real programs launch (a matrix of kernel lengths, synchronising loops, streams, host threads,
# graphs, mixes; pairs and triples of containers), and what the launch hook costs. With --record
# (as `make bench` runs it) writes its section of docs/BENCHMARKS.md (between the
# bench-compute:begin/end markers; bench-compute-gpu with --real-gpu, bench-compute-peer with
# --peer-lib); otherwise prints it and writes nothing.
#
#   bench/compute.sh [--record] [--quick] BUILD_DIR     the emulated GPU (its own private daemon)
#   bench/compute.sh --real-gpu [--quick] BUILD_DIR     the host's GPU (system libcuda; a private
#                                                       daemon), plus PyTorch / CuPy loops at
#                                                       30/70 where installed
#   bench/compute.sh --peer-lib PATH --peer-env 'VAR=VALUE ...' BUILD_DIR
#        the same matrix with another interposer instead of convgpu: every workload runs with
#        LD_PRELOAD=PATH and the given environment, where {share} is replaced by the container's
#        share, {mode} by hard|elastic and {id} by a name unique to the container in this run
#        (for a per-container file); without --peer-lib nothing of this runs. Its kernels are
#        launched with grids sized to their length (PEER_BLOCKS_PER_MS below).
# Environment: BENCH_KEEP=1 (keep the temporary directory: per-window shares, logs),
#              BENCH_ONLY=REGEX (only the scenarios whose name matches; the launch cost is then
#              measured only with BENCH_LAUNCH_COST=1), BENCH_OUT=FILE (write the
#              section there), BENCH_RUN_S=S (seconds each scenario runs after its last start),
#              BENCH_NICE=N (the workloads' and the daemon's nice value; default -20 as root,
#              else 0), BENCH_WIN_PERIODS=N (NVML sample periods per window; default 6, 1 s
#              with the emulator's 166 ms: with CONVGPU_EMU_SAMPLE_MS=1000, 1).
#
# Method. Every container runs one convgpu-burn process with the scenario's pattern: kernel
# length; a cuCtxSynchronize after every k launches (1, 8, 64) or never (saturating: 10 ms of
# kernels kept in flight per thread, at least 2); 1 or 4 streams; 1 or 4 host threads; graphs of
# 10 kernels. A container's share in a window is its process's device time in that window as
# the GPU accounts it (the emulator's busy time, read through NVML's per-process samples by
# bench/nvml_windows.py; windows of 6 sample periods, 1 s with the default 166 ms) over the
# window: device time, not wall-clock time of the workload, so a loaded host changes how much
# work the programs offer, never how it is counted. Windows are judged from the third after
# the last container started to the last one that ended before the workloads were told to stop
# (they do not stop together: a loop finishes its step first, and a window past the stop
# showed one container 10 points down while its neighbour ran on alone). The report gives for each scenario the
# worst window of any container (points off its target), the mean shares, and the device's idle
# time (the mean and the worst window) where the hard shares add to 100. The host's load is
# printed with every scenario: the machine is shared, and a starved host shows as idle device.
# So the workloads, their efficiency alone, and the daemon run at nice -20 where the benchmark
# may (root): other work on the machine then starves them less, and what is measured is the
# controller rather than the neighbours' builds (the host's own limits still show; the table
# says which priority the run had). Under --peer-lib every kernel is launched with a grid of
# one block per microsecond of its length (PEER_BLOCKS_PER_MS = 1000; a 2 ms kernel, 2000
# blocks, about two waves of 256-thread blocks on the emulated 108-SM device): a limiter that
# charges per thread block launched, not per unit of time, would never hold back a 1-block
# kernel, and sized grids charge it in proportion to the device time asked for. On the
# emulated GPU a kernel lasts its length whatever its grid, and convgpu's interposer never
# reads the grid, so the workloads are the same device time for both.
set -euo pipefail

REAL=0
RECORD=0
QUICK=0
PEER_LIB=
PEER_ENV=
while [ $# -gt 1 ]; do
    case $1 in
    --real-gpu) REAL=1 ;;
    --record) RECORD=1 ;;
    --quick) QUICK=1 ;;
    --peer-lib) PEER_LIB=$2; shift ;;
    --peer-env) PEER_ENV=$2; shift ;;
    *) break ;;
    esac
    shift
done
[ $# -eq 1 ] || { echo "usage: bench/compute.sh [--record] [--quick] [--real-gpu] [--peer-lib PATH --peer-env 'VAR=VALUE ...'] BUILD_DIR" >&2; exit 2; }
[ "${BENCH_QUICK:-0}" = 1 ] && QUICK=1
if [ -n "$PEER_ENV" ] && [ -z "$PEER_LIB" ]; then echo "compute.sh: --peer-env without --peer-lib" >&2; exit 2; fi
if [ -n "$PEER_LIB" ]; then
    [ -f "$PEER_LIB" ] || { echo "compute.sh: --peer-lib $PEER_LIB: no such file" >&2; exit 2; }
    PEER_LIB=$(cd "$(dirname "$PEER_LIB")" && pwd)/$(basename "$PEER_LIB")
fi
BUILD=$(cd "$1" && pwd)
SRC=$(cd "$(dirname "$0")/.." && pwd)
. "$SRC/bench/section.sh"
OUT=$(bench_destination "$RECORD" "$SRC")
BURN=$BUILD/bin/convgpu-burn
for p in "$BUILD/bin/convgpud" "$BUILD/bin/convgpu" "$BURN" "$BUILD/lib/libconvgpu.so"; do
    [ -e "$p" ] || { echo "compute.sh: missing $p (build first)" >&2; exit 1; }
done
HOST_LDLP=${LD_LIBRARY_PATH:-}
if [ "$(id -u)" = 0 ]; then NICE=${BENCH_NICE:--20}; else NICE=${BENCH_NICE:-0}; fi
# Root in a container may lack CAP_SYS_NICE: then nice warns and runs at 0; say so in the table.
[ "$(nice -n "$NICE" nice 2>/dev/null)" = "$NICE" ] || NICE=0
PRIO=(nice -n "$NICE")

TMP=$(mktemp -d /tmp/convgpu-bench-compute.XXXXXX)
DPID=
cleanup() {
    set +e
    trap - ERR # stopping the daemon and the workloads returns their statuses: not failures
    [ -z "$DPID" ] || { kill -TERM "$DPID" 2>/dev/null; wait "$DPID" 2>/dev/null; }
    # Workloads still running (a run stopped early), once the daemon is
    # stopped: every one names a file under $TMP.
    pkill -KILL -f "$TMP/" 2>/dev/null
    if [ -n "${BENCH_KEEP:-}" ]; then log "kept $TMP"; else rm -rf "$TMP"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
trap 'echo "compute.sh: line $LINENO: exit $?: $BASH_COMMAND" >&2' ERR
set -E # the trap also in functions and subshells
log() { echo "compute.sh: $*" >&2; }

SAMPLE_MS=${CONVGPU_EMU_SAMPLE_MS:-166}
WIN_PERIODS=${BENCH_WIN_PERIODS:-6} # 6 sample periods: 0.996 s with the emulator's default 166 ms
PEER_BLOCKS_PER_MS=1000
if [ "$QUICK" = 1 ]; then RUN_S=7; ROUNDS=2; LAUNCHES=20000
else RUN_S=10; ROUNDS=5; LAUNCHES=200000; fi
RUN_S=${BENCH_RUN_S:-$RUN_S}
ALONE_S=3
if [ "$REAL" = 1 ]; then # about 5 minutes of device time for the whole matrix
    RUN_S=${BENCH_RUN_S:-5}; ALONE_S=2; ROUNDS=2; LAUNCHES=50000
fi

. "$SRC/bench/daemon.sh"
# The controller's decisions, step by step (docs/OPERATIONS.md): which container was gated when.
[ -n "$PEER_LIB" ] || export CONVGPU_COMPUTE_TRACE=$TMP/trace
start_bench_daemon
[ "$NICE" = 0 ] || renice -n "$NICE" -p "$DPID" >/dev/null || log "cannot renice the daemon to $NICE"

# container SHARE MODE FILE: creates a container (memory 256MiB, the share if not "-"); its
# environment into FILE; prints its id. Under --peer-lib: no container, the peer's environment.
container() {
    if [ -n "$PEER_LIB" ]; then
        native_env "$3"
        echo "LD_PRELOAD=$PEER_LIB" >>"$3"
        local kv id
        id=$(basename "$TMP").$(basename "$3" .env)
        for kv in $PEER_ENV; do
            kv=${kv//\{share\}/$1}
            kv=${kv//\{id\}/$id}
            echo "${kv//\{mode\}/$2}" >>"$3"
        done
        echo peer
        return
    fi
    local args=(create --gpu-memory 256MiB) out
    [ "$1" = - ] || args+=(--gpu-compute "$1" --compute-mode "$2")
    out=$(cg "${args[@]}")
    echo "$out" | tail -n +2 >"$3"
    if [ "$REAL" = 1 ] && [ -n "$HOST_LDLP" ]; then echo "LD_LIBRARY_PATH=$HOST_LDLP" >>"$3"; fi
    printf '%s\n' "${out%%$'\n'*}" # its first line (head would take SIGPIPE under pipefail)
}
native_env() {
    if [ "$REAL" = 1 ]; then echo "LD_LIBRARY_PATH=$HOST_LDLP" >"$1"; return; fi
    printf '%s\n' "LD_LIBRARY_PATH=$BUILD/lib/emu" "CONVGPU_EMU_DEVICES=16GiB" \
        "CONVGPU_EMU_STATE=$RUN/emu/state" >"$1"
}
envrun() { local f=$1; shift; "${PRIO[@]}" env -i PATH="$PATH" HOME="${HOME:-/}" $(cat "$f") "$@"; }
native_env "$TMP/native.env"

# burn_args KUS SYNC STREAMS THREADS GRAPH: convgpu-burn's options for a pattern. In flight per
# thread: the whole step of a synchronising loop (k launches), else 10 ms of kernels (at least 2).
burn_args() {
    local kus=$1 sync=$2 streams=$3 threads=$4 graph=$5 per depth
    per=$(( kus * (graph > 0 ? graph : 1) ))
    depth=$(( 10000 / (per > 0 ? per : 1) )); [ "$depth" -ge 2 ] || depth=2
    [ "$sync" = 0 ] || depth=$sync
    echo "--kernel-us $kus --depth $depth --sync-every $sync --streams $streams --threads $threads$([ "$graph" = 0 ] || echo " --graph $graph")$([ -z "$PEER_LIB" ] || echo " --grid-blocks $(( kus * PEER_BLOCKS_PER_MS / 1000 > 0 ? kus * PEER_BLOCKS_PER_MS / 1000 : 1 ))")"
}

# pattern_name KUS SYNC STREAMS THREADS GRAPH: a short name for the table.
pattern_name() {
    local n
    if [ "$1" -ge 1000 ]; then n="$(( $1 / 1000 )) ms"; else n="$1 us"; fi
    [ "$5" = 0 ] || n="graph 10 x $n"
    if [ "$2" = 0 ]; then n="$n, saturating"; else n="$n, sync/$2"; fi
    [ "$3" = 1 ] || n="$n, $3 streams"
    [ "$4" = 1 ] || n="$n, $4 threads"
    printf '%s' "$n"
}

# alone KUS SYNC STREAMS THREADS GRAPH -> the pattern's own efficiency, in percent of the device:
# the device time it gets alone and unlimited (no container, no interposer) over its wall time,
# 3 s (2 on a real GPU), by its own account (kernels x length), measured once per pattern per run. A program that
# synchronises leaves the device idle while its host thread turns around (on this loaded machine
# milliseconds per synchronisation); that idle time is its own, and no controller can give it
# more than this fraction of what it is offered.
alone() {
    local key="$1_$2_$3_$4_$5" v
    if [ ! -f "$TMP/alone.$key" ]; then
        # shellcheck disable=SC2046 # word splitting wanted
        envrun "$TMP/native.env" "$BURN" $(burn_args "$@") --seconds "$ALONE_S" >"$TMP/alone.$key.out" 2>&1 || true
        sed -n 's/.*busy_us=\([0-9]*\) elapsed_us=\([0-9]*\).*/\1 \2/p' "$TMP/alone.$key.out" |
            awk '{ v = ($2 > 0) ? 100 * $1 / $2 : 0; printf "%.0f\n", (v > 100 ? 100 : v) }' >"$TMP/alone.$key"
    fi
    v=$(cat "$TMP/alone.$key"); echo "${v:-100}"
}

# scenario NAME "SHARE:MODE:KUS:SYNC:STREAMS:THREADS:GRAPH[:START_S] ..." -> one result line on
# stdout: "JUDGED WORST_OFF WORST_IDX MEAN1/MEAN2/.. IDLE_MEAN IDLE_WORST SHORT BOUND_OK", the
# per-window shares (each with the efficiency it was judged by) in $TMP/NAME.windows. Each
# container starts START_S seconds after the first; all stop together RUN_S seconds after the
# last one started.
scenario() {
    local name=$1 specs=$2 i=0 pids=() ids=() spec targets="" modes="" effs="" pers="" syncs="" ths=""
    rm -f "$TMP/stop.$name" "$TMP/stopnvml.$name"
    # Each pattern's efficiency alone first, with the device to itself.
    for spec in $specs; do
        IFS=: read -r share mode kus sync streams threads graph start <<<"$spec"
        effs="$effs $(alone "$kus" "$sync" "$streams" "$threads" "$graph")"
        pers="$pers $(( kus * (graph > 0 ? graph : 1) ))"
        syncs="$syncs $sync"; ths="$ths $threads"
    done
    envrun "$TMP/native.env" python3 "$SRC/bench/nvml_windows.py" "$SAMPLE_MS" "$WIN_PERIODS" \
        "$TMP/stopnvml.$name" "$TMP/$name.stopped_us" "$TMP/$name.origin" >"$TMP/$name.nvml" 2>"$TMP/$name.nvml.err" &
    local poller=$!
    local t0=$SECONDS
    for spec in $specs; do
        IFS=: read -r share mode kus sync streams threads graph start <<<"$spec"
        start=${start:-0}
        targets="$targets $share"; modes="$modes $mode"
        while [ $((SECONDS - t0)) -lt "$start" ]; do sleep 0.2; done
        ids+=("$(container "$share" "$mode" "$TMP/$name.$i.env")")
        # exec: the pid we keep is the burn's own, the one NVML reports.
        # shellcheck disable=SC2046 # word splitting wanted
        (exec "${PRIO[@]}" env -i PATH="$PATH" HOME="${HOME:-/}" $(cat "$TMP/$name.$i.env") "$BURN" \
            $(burn_args "$kus" "$sync" "$streams" "$threads" "$graph") --steps "$TMP/$name.$i.steps" --until "$TMP/stop.$name" \
            >"$TMP/$name.$i.out" 2>&1) &
        pids+=("$!")
        i=$((i + 1))
    done
    sleep "$RUN_S" # the benchmark's length: a measurement, not a wait for a condition
    # The instant the workloads are told to stop (NVML's time base: wall-clock microseconds):
    # windows that end later are not judged (nvml_windows.py).
    date +%s%6N >"$TMP/$name.stopped_us"
    touch "$TMP/stop.$name"
    for p in "${pids[@]}"; do wait "$p" || log "$name: a burn failed: $(cat "$TMP/$name".*.out)"; done
    sleep 0.5 # the last sample periods end, then the poller reads them
    touch "$TMP/stopnvml.$name"
    wait "$poller" || log "$name: the NVML poller failed: $(cat "$TMP/$name.nvml.err")"
    for id in "${ids[@]}"; do [ "$id" = peer ] || cg rm "$id" >/dev/null 2>&1 || true; done
    # How often each container's gate was closed while all ran (the controller's doing; the rest
    # of its shortfall is its own host time): the share of the daemon's steps.
    local gated="-"
    if [ -f "$TMP/trace" ] && [ "${ids[0]}" != peer ]; then
        gated=$(awk -v ids="${ids[*]}" 'BEGIN { n = split(ids, I, " "); for (c = 1; c <= n; c++) at[I[c]] = c }
            ($2 in at) { c = at[$2]; steps[c]++; if ($8 == 0) shut[c]++ }
            END { for (c = 1; c <= n; c++) printf "%s%d", (c > 1 ? "/" : ""), steps[c] ? 100 * shut[c] / steps[c] : 0 }' "$TMP/trace")
    fi
    echo "$gated" >"$TMP/$name.gated"
    # Each loop's efficiency in this run, from the host turnaround it measured here (a loop of
    # one thread: k launches of K each, then a turnaround T: E = k K / (k K + T)); saturating
    # loops have no turnaround (100); threads that each synchronise keep their efficiency
    # alone. On 2 cores the neighbours' host threads, the daemon and the poller take CPU from
    # a loop, so it turns around slower than alone (84-95% alone for 2 ms kernels, one per
    # sync, within one hour on this machine): the bound is judged with what its host gave it.
    local effr="" j=1 host
    for spec in $specs; do
        IFS=: read -r share mode kus sync streams threads graph start <<<"$spec"
        host=$(sed -n 's/.*host_turnaround_us=\([0-9]*\).*/\1/p' "$TMP/$name.$((j - 1)).out" 2>/dev/null)
        effr="$effr $(awk -v k="$sync" -v K="$(( kus * (graph > 0 ? graph : 1) ))" -v t="${host:-}" \
            -v th="$threads" -v alone="$(cut -d' ' -f"$((j + 1))" <<<"$effs")" 'BEGIN {
            if (k == 0) print 100; else if (th == 1 && t != "") printf "%.0f\n", 100 * k * K / (k * K + t); else print alone }')"
        j=$((j + 1))
    done
    # Judge the windows from the third after the last start to the last one that ended before
    # the stop (nvml_windows.py leaves out the later ones). A
    # container is judged against its target (its share), and, where its own host time makes
    # that impossible, against the bound that holds instead: at least its share scaled by its
    # efficiency in the run (E%, above), less 3 points; the device's idle time then may reach the idle its
    # neighbours' caps leave in the busy containers' own host turnarounds, sum (1 - E) x s.
    # Where one launch is long against a window, the bound's margin is what may run past a
    # closed gate: the run-ahead bound's launches (src/common/runahead.h: 10 ms of them, at
    # least 2; one for a launch of 5 ms or more, none for one of 10 ms or more) and the one
    # running, e.g. one 50 ms kernel = 5 points of a 1-s window, 3 points at least.
    # A one-thread loop's efficiency is taken window by window where it measured turnarounds in
    # the window (its --steps log, put in NVML's windows by the poller's grid): a host that
    # stalls a loop for 100 ms in one window takes 10 points from that window, not 0.2 from
    # each of fifty, and the run's mean efficiency would judge that window by what the host
    # gave the others. The idle bound is the mean over the windows of each one's.
    awk -v pids="${pids[*]}" -v targets="$targets" -v modes="$modes" -v effs="$effr" -v alone="$effs" \
        -v pers="$pers" -v syncs="$syncs" -v ths="$ths" -v steps="$TMP/$name" -v origin="$TMP/$name.origin" \
        -v wus="$((WIN_PERIODS * SAMPLE_MS * 1000))" -v out="$TMP/$name.windows" '
        BEGIN { n = split(pids, P, " "); split(targets, T, " "); split(modes, M, " "); split(effs, E, " ")
                split(pers, K, " "); split(syncs, S, " "); split(ths, TH, " ")
                if ((getline g < origin) > 0) { split(g, O, " "); first = O[1]; per = O[2] * O[3] }
                for (c = 1; c <= n && per > 0; c++)
                    while (S[c] > 0 && TH[c] == 1 && (getline g < (steps "." (c - 1) ".steps")) > 0) {
                        split(g, R, " "); w = int((R[1] - first) / per); tsum[w, c] += R[2]; tcnt[w, c]++ }
                for (c = 1; c <= n; c++) { idx[P[c]] = c; hard += (M[c] == "hard") * T[c]
                                           q = int(10000 / K[c]); if (q < 2) q = 2; if (K[c] >= 5000) q = 1; if (K[c] >= 10000) q = 0
                                           tol[c] = 100 * (q + 1) * K[c] / wus; if (tol[c] < 3) tol[c] = 3 } }
        { if ($1 > top) top = $1 }
        ($2 in idx) { c = idx[$2]; b[$1, c] = $3; if (!(c in lo) || $1 < lo[c]) lo[c] = $1 }
        END { L = -1
              for (c = 1; c <= n; c++) { if (!(c in lo)) { print "0 nan 0 - nan nan nan 0"; exit } if (lo[c] > L) L = lo[c] }
              worst = 0; wi = 0; nw = 0; idle = 0; idlew = 0; short = 0; ok = 1
              for (w = L + 2; w < top; w++) { nw++; line = w; dev = 0
                  for (c = 1; c <= n; c++) { pct = 100 * b[w, c] / wus; dev += pct; sum[c] += pct
                      Ew = E[c]; if (tcnt[w, c] > 0) Ew = 100 * S[c] * K[c] / (S[c] * K[c] + tsum[w, c] / tcnt[w, c])
                      hostidlew += (1 - Ew / 100) * T[c]
                      off = pct - T[c]; if (off < 0) off = -off
                      if (M[c] == "hard" && off > worst) { worst = off; wi = c }
                      if (M[c] == "elastic" && T[c] - pct > short) short = T[c] - pct
                      if (pct > T[c] + tol[c] && M[c] == "hard") ok = 0
                      if (pct < T[c] * Ew / 100 - tol[c]) ok = 0
                      line = line sprintf(" %.1f/E%.0f", pct, Ew) }
                  id = 100 - dev; if (id < 0) id = 0; idle += id; if (id > idlew) idlew = id
                  print line > out }
              means = ""
              for (c = 1; c <= n; c++) means = means (c > 1 ? "/" : "") sprintf("%.1f", nw ? sum[c] / nw : 0)
              if (hard != 100) { idle = -1; idlew = -1 } else if (nw) { idle /= nw; if (idle > hostidlew / nw + 3) ok = 0 }
              effl = ""; margin = 3
              split(alone, A, " ")
              for (c = 1; c <= n; c++) { effl = effl (c > 1 ? "/" : "") A[c] ":" E[c]; if (tol[c] > margin) margin = tol[c] }
              printf "%d %.1f %d %s %.1f %.1f %.1f %d %s %.0f\n", nw, worst, wi, means, idle, idlew, short, ok, effl, margin }' "$TMP/$name.nvml"
}

# ---- the matrix ---------------------------------------------------------------------------------
# NAME|SPECS|what it is. SPECS as for scenario(); "q" after the name: in the --quick subset.
MATRIX=$TMP/matrix
: >"$MATRIX"
m() { printf '%s\n' "$1" >>"$MATRIX"; }
for kus in 50 500 2000 20000; do
    for sync in 1 8 64 0; do
        quick=
        case "$kus/$sync" in 2000/8 | 500/1 | 50/0 | 20000/0) quick=q ;; esac
        m "h2575_${kus}_s$sync$quick|25:hard:$kus:$sync:1:1:0 75:hard:$kus:$sync:1:1:0|hard 25/75"
    done
done
for sync in 8 0; do
    m "h2575_2000_s${sync}_streams|25:hard:2000:$sync:4:1:0 75:hard:2000:$sync:4:1:0|hard 25/75"
    qq=; [ "$sync" != 8 ] || qq=q
    m "h2575_2000_s${sync}_threads$qq|25:hard:2000:$sync:1:4:0 75:hard:2000:$sync:1:4:0|hard 25/75"
done
m "h2575_graph_s0|25:hard:500:0:1:1:10 75:hard:500:0:1:1:10|hard 25/75"
m "h2575_graph_s1q|25:hard:500:1:1:1:10 75:hard:500:1:1:1:10|hard 25/75"
m "h3070_mix_q|30:hard:2000:0:1:1:0 70:hard:500:8:1:1:0|hard 30/70, a mix"
m "h3070_mix2|30:hard:50:1:4:1:0 70:hard:2000:64:1:4:0|hard 30/70, a mix"
m "h203050_s8q|20:hard:2000:8:1:1:0 30:hard:2000:8:1:1:0 50:hard:2000:8:1:1:0|hard 20/30/50"
m "h203050_mix|20:hard:20000:0:1:1:0 30:hard:500:1:1:1:0 50:hard:500:0:1:1:10|hard 20/30/50, a mix"
m "h2040_s8|20:hard:2000:8:1:1:0 40:hard:2000:8:1:1:0|hard 20/40 (60: 40 left idle)"
m "h75_2000_s8_alone|75:hard:2000:8:1:1:0|hard 75 alone (its cap: what the run-ahead bound leaves it)"
m "h75_500_s1_alone|75:hard:500:1:1:1:0|hard 75 alone (its cap: what the run-ahead bound leaves it)"
m "e2575_2000_s8q|25:elastic:2000:8:1:1:0 75:elastic:2000:8:1:1:0|elastic 25/75"
m "e2575_500_s0|25:elastic:500:0:1:1:0 75:elastic:500:0:1:1:0|elastic 25/75"
m "e3070_mix|30:elastic:2000:0:1:1:0 70:elastic:500:1:1:1:0|elastic 30/70, a mix"
m "e2050_s8|20:elastic:2000:8:1:1:0 50:elastic:2000:8:1:1:0|elastic 20/50 (70: idle handed out)"

GEN=$TMP/gen.md
emit() { printf '%s\n' "$@" >>"$GEN"; }
WHAT=bench/compute.sh
[ "$REAL" = 0 ] || WHAT="$WHAT --real-gpu"
[ "$QUICK" = 0 ] || WHAT="$WHAT --quick"
[ -z "$PEER_LIB" ] || WHAT="$WHAT --peer-lib $(basename "$PEER_LIB") --peer-env '$PEER_ENV'"
GPU_NAME=
[ "$REAL" = 0 ] || GPU_NAME=", GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | sed -n 1p)"
QUICK_NOTE=
[ "$QUICK" = 0 ] || QUICK_NOTE=". **--quick: a subset, short runs**"
emit "Generated by \`$WHAT\` on $(date -u '+%Y-%m-%d %H:%M UTC'), commit \`$(git -C "$SRC" rev-parse --short HEAD 2>/dev/null || echo unknown)\`, $(nproc) cores (shared; load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)), workloads and daemon at nice $NICE$GPU_NAME$QUICK_NOTE."
if [ -n "$PEER_LIB" ]; then
    PEER_VERSION=$(strings "$PEER_LIB" 2>/dev/null | grep -m1 -iE '(version|v)[ :]*[0-9]+\.[0-9]+' || true)
    emit "" "Peer: \`$PEER_LIB\`${PEER_VERSION:+, version string: \`$PEER_VERSION\`}; every kernel launched with a grid of $PEER_BLOCKS_PER_MS blocks per ms of its length (a limiter charging per block sees work in proportion to device time); NVML sample period ${SAMPLE_MS} ms, windows of $WIN_PERIODS periods."
fi
# The controller's step, as the daemon has it (the gated column counts steps).
STEP_MS=$(awk '$1 == "#define" && $2 == "COMPUTE_STEP_NS" { sub(/ull$/, "", $3); print $3 / 1000000 }' "$SRC/src/daemon/gates.h")
emit "" "Each container runs convgpu-burn with the pattern named for ${RUN_S} s after the last one started; its share of a window ($(awk -v p="$SAMPLE_MS" -v n="$WIN_PERIODS" 'BEGIN { printf "%.1f", p * n / 1000 }') s: $WIN_PERIODS NVML sample periods) is its device time by the GPU's own per-process accounting over the window. **worst** = the largest distance, in points, of a hard container's share in any judged window from its target (targets: <= 3); **means** = each container's mean share over the judged windows, in the order given; **idle** = the device's idle time, mean and worst window, where the hard shares add to 100 (target: <= 3%); **elastic short** = the most an elastic container fell below its share in a window (target: <= 3); **gated** = the share of the controller's steps (${STEP_MS:-?} ms) in which each container's gate was closed, from the daemon's trace: what the controller held back, as against the container's own host time. **load** = the host's 1-minute load average after the scenario (2 cores)." ""
emit "| scenario | containers: share, pattern | windows | worst (points) | means | idle mean / worst (%) | elastic short | gated (% of steps) | load | verdict |" "|---|---|---|---|---|---|---|---|---|---|"
FAILS=0
BOUNDS=0
TOTAL=0
while IFS='|' read -r name specs what; do
    q=no
    if [ "${name%q}" != "$name" ]; then q=yes; name=${name%q}; fi
    [ "$QUICK" = 0 ] || [ "$q" = yes ] || [ -n "${BENCH_ONLY:-}" ] || continue
    if [ -n "${BENCH_ONLY:-}" ] && ! [[ $name =~ $BENCH_ONLY ]]; then continue; fi
    desc=""
    for spec in $specs; do
        IFS=: read -r share mode kus sync streams threads graph _ <<<"$spec"
        desc="$desc${desc:+; }$share $mode: $(pattern_name "$kus" "$sync" "$streams" "$threads" "$graph")"
    done
    log "$name: $desc"
    read -r nw worst _ means idle idlew short bound_ok effl margin < <(scenario "$name" "$specs")
    gated=$(cat "$TMP/$name.gated" 2>/dev/null || echo -)
    load=$(cut -d' ' -f1 /proc/loadavg)
    verdict=pass
    if awk -v w="$worst" -v i="$idle" -v s="$short" 'BEGIN { exit !(w == "nan" || w > 3 || i > 3 || s > 3) }'; then
        if [ "$bound_ok" = 1 ]; then
            verdict="bound (E alone:in the run $effl%$([ "${margin:-3}" = 3 ] || echo "; margin ${margin} points: long launches"))"
        else verdict=FAIL; fi
    fi
    [ "$nw" -ge 2 ] || verdict="FAIL (no windows)"
    TOTAL=$((TOTAL + 1))
    case $verdict in pass) ;; bound*) BOUNDS=$((BOUNDS + 1)) ;; *) FAILS=$((FAILS + 1)) ;; esac
    idle_s="$idle / $idlew"; [ "$idle" != "-1.0" ] || idle_s=-
    echo "$name $nw $worst $means $idle $idlew $short $load $effl $verdict" >>"$TMP/results"
    # The same scenario for `convgpu sim compute`: each container's pattern with its host
    # turnaround; tests/core/test_sim_compute_matrix.sh compares.
    simc="" j=1
    for spec in $specs; do
        IFS=: read -r share mode kus sync streams threads graph _ <<<"$spec"
        e=$(cut -d/ -f"$j" <<<"$effl"); e=${e%%:*}
        per=$(( kus * (graph > 0 ? graph : 1) ))
        # Its turnaround as the loop measured it in this scenario, on the device's clock
        # (convgpu-burn: host_turnaround_us), else as its efficiency alone implies.
        host=$(sed -n 's/.*host_turnaround_us=\([0-9]*\).*/\1/p' "$TMP/$name.$((j - 1)).out" 2>/dev/null)
        [ -n "$host" ] || host=$(awk -v k="$per" -v s="$sync" -v e="$e" 'BEGIN { printf "%d", (s > 0 && e > 0) ? k * s * (100 / e - 1) : 0 }')
        # Threads that each synchronise the whole context step together: in the model, one
        # loop whose step is every thread's kernels.
        simc="$simc${simc:+,}$share:$mode:$per:$((sync * threads)):$host"
        j=$((j + 1))
    done
    [ "$nw" -lt 2 ] || printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$simc" "$means" "$idle" "$gated" >>"$TMP/simcmp"
    log "  -> windows $nw, worst $worst, means $means, idle $idle_s, elastic short $short, gated $gated, load $load: $verdict"
    emit "| $name ($what) | $desc | $nw | $worst | $means | $idle_s | $short | $gated | $load | $verdict |"
done <"$MATRIX"
emit "" "Matrix: $((TOTAL - FAILS - BOUNDS)) of $TOTAL scenarios within the targets, $BOUNDS within the bound their own host time leaves (verdict **bound**: each container's efficiency, E, is given alone (measured before the scenario) and in the run (from the turnarounds its loop measured during the scenario; the bound is judged with it, and for a one-thread loop window by window with the turnarounds it measured in that window); a container gets at least E x its share less 3 points, never above its hard share + 3, and the idle time is at most sum (1 - E) x share + 3; where one launch is long against a window, the margin is what may run past a closed gate, the run-ahead bound's launches and the one running, e.g. one 50 ms kernel = 5 points), $FAILS outside both." ""
[ -z "${BENCH_RESULTS:-}" ] || cp "$TMP/results" "$BENCH_RESULTS" 2>/dev/null || true
# A recorded emulator run also records the figures the simulator is held to.
if [ "$RECORD" = 1 ] && [ "$REAL" = 0 ] && [ -z "$PEER_LIB" ] && [ "$QUICK" = 0 ] && [ -z "${BENCH_ONLY:-}" ] && [ -s "$TMP/simcmp" ]; then
    { echo "# bench/compute.sh --record on $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git -C "$SRC" rev-parse --short HEAD 2>/dev/null || echo unknown): scenario, containers for convgpu sim compute (SHARE:MODE:KERNEL_US:SYNC_EVERY:HOST_US), the emulator's mean shares, its mean idle (-1: hard shares not at 100), the share of steps each container's gate was closed"
      cat "$TMP/simcmp"; } >"$SRC/tests/core/compute_matrix.tsv"
    log "wrote tests/core/compute_matrix.tsv"
fi

# ---- frameworks (real GPU only) -------------------------------------------------------------------
if [ "$REAL" = 1 ]; then
    for fw in torch cupy; do
        if ! python3 -c "import $fw" 2>/dev/null; then emit "$fw: not installed, skipped." ""; continue; fi
        log "$fw loop at 30/70 hard"
        rm -f "$TMP/stop.$fw" "$TMP/stopnvml.$fw"
        envrun "$TMP/native.env" python3 "$SRC/bench/nvml_windows.py" "$SAMPLE_MS" "$WIN_PERIODS" \
            "$TMP/stopnvml.$fw" >"$TMP/$fw.nvml" 2>/dev/null &
        poller=$!
        fpids=()
        for share in 30 70; do
            container "$share" hard "$TMP/$fw.$share.env" >/dev/null
            # shellcheck disable=SC2046 # word splitting wanted
            (exec env -i PATH="$PATH" HOME="${HOME:-/}" $(cat "$TMP/$fw.$share.env") python3 \
                "$SRC/bench/compute_frameworks.py" "$fw" "$TMP/stop.$fw" >"$TMP/$fw.$share.out" 2>&1) &
            fpids+=("$!")
        done
        sleep "$RUN_S"
        touch "$TMP/stop.$fw"
        for p in "${fpids[@]}"; do wait "$p" || true; done
        touch "$TMP/stopnvml.$fw"
        wait "$poller" || true
        shares=$(awk -v a="${fpids[0]}" -v b="${fpids[1]}" -v wus="$((WIN_PERIODS * SAMPLE_MS * 1000))" \
            '$2 == a { x[$1] = $3 } $2 == b { y[$1] = $3 } END { for (w in x) if ((w in y) && w > 1) { n++; sa += x[w]; sb += y[w] }
             if (n) printf "%.1f/%.1f over %d windows", 100 * sa / n / wus, 100 * sb / n / wus, n; else print "no windows" }' "$TMP/$fw.nvml")
        emit "$fw loop (bench/compute_frameworks.py) at hard 30/70: mean shares by NVML $shares." ""
    done
fi

# ---- launch cost (convgpu only; not with BENCH_ONLY) ----------------------------------------------
if [ -z "$PEER_LIB" ] && { [ -z "${BENCH_ONLY:-}" ] || [ -n "${BENCH_LAUNCH_COST:-}" ]; }; then
    log "launch cost"
    container - - "$TMP/none.env" >/dev/null
    container 100 hard "$TMP/full.env" >/dev/null
    # A share that bounds run-ahead but, alone, never closes its gate: 99, elastic.
    container 99 elastic "$TMP/marks.env" >/dev/null
    median_of() { sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
    : >"$TMP/cost"
    for r in $(seq "$ROUNDS"); do
        n=$(envrun "$TMP/native.env" "$BURN" --launches "$LAUNCHES" | sed -n 's/.*launch_ns_median=\([0-9]*\).*/\1/p')
        u=$(envrun "$TMP/none.env" "$BURN" --launches "$LAUNCHES" | sed -n 's/.*launch_ns_median=\([0-9]*\).*/\1/p')
        f=$(envrun "$TMP/marks.env" "$BURN" --launches "$LAUNCHES" | sed -n 's/.*launch_ns_median=\([0-9]*\).*/\1/p')
        echo "$n $u $f" >>"$TMP/cost"
    done
    N=$(awk '{ print $1 }' "$TMP/cost" | median_of)
    DU=$(awk '{ print $2 - $1 }' "$TMP/cost" | median_of)
    DF=$(awk '{ print $3 - $1 }' "$TMP/cost" | median_of)
    emit "Launch cost (\`convgpu-burn --launches $LAUNCHES\`, a 0 us kernel, each launch timed alone; $ROUNDS interleaved rounds): native median ${N} ns; added in a container without a share: **${DU} ns**; with a share (99, elastic, alone: gate read + run-ahead marks): **${DF} ns** (target: <= 50 ns for a launch within its budget)." ""

    log "throughput at share 100"
    : >"$TMP/tput"
    for r in $(seq "$ROUNDS"); do
        a=$(envrun "$TMP/native.env" "$BURN" --kernel-us 1000 --depth 10 --seconds 5 | sed -n 's/.*kernels=\([0-9]*\).*/\1/p')
        b=$(envrun "$TMP/full.env" "$BURN" --kernel-us 1000 --depth 10 --seconds 5 | sed -n 's/.*kernels=\([0-9]*\).*/\1/p')
        echo "$a $b" >>"$TMP/tput"
    done
    RATIO=$(awk '{ print ($1 > 0) ? $2 / $1 : 0 }' "$TMP/tput" | median_of)
    emit "Throughput at share 100 (1 ms kernels, 10 in flight, 5 s; a share of 100 never closes its gate, so it has no run-ahead bound, $ROUNDS interleaved rounds): $(awk -v r="$RATIO" 'BEGIN { printf "%.3f", r }') of native (median ratio; target >= 0.99)." ""
fi

if [ "$REAL" = 1 ]; then BEGIN='<!-- bench-compute-gpu:begin -->'; END='<!-- bench-compute-gpu:end -->'; HEAD='## Compute shares (real GPU)'
elif [ -n "$PEER_LIB" ]; then BEGIN='<!-- bench-compute-peer:begin -->'; END='<!-- bench-compute-peer:end -->'; HEAD='## Compute shares: a peer interposer on the same matrix'
else BEGIN='<!-- bench-compute:begin -->'; END='<!-- bench-compute:end -->'; HEAD='## Compute shares'; fi
if [ -n "$OUT" ]; then cat "$GEN"; fi # printed either way
write_or_print "$OUT" "$BEGIN" "$END" "$GEN" "$HEAD"

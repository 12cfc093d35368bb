#!/usr/bin/env bash
# run-all.sh — the whole benchmark suite (make bench). Prints the generated section, or with
# --record writes it into docs/BENCHMARKS.md (between the bench:begin/bench:end markers; text
# around them is kept).
#
#   bench/run-all.sh [--record] BUILD_DIR   emulated GPU: every benchmark (a few minutes)
#   bench/run-all.sh --real-gpu BUILD_DIR   real GPU host: the round trip, API response time and
#                                           application overhead only; no --emulate, the system's
#                                           libcuda; results go to the bench-gpu section.
#                                           BUILD_DIR may be a bundle (tests/gpu/bundle.sh) on a
#                                           host without the build packages
# Environment:
#   BENCH_QUICK=1   smoke run (< 1 min): few repetitions; numbers are not meaningful
#   BENCH_OUT=FILE  write the section into FILE (with or without --record)
# Without --record or BENCH_OUT nothing is written: the recorded figures are replaced only on
# purpose, never by a smoke run.
#
# Figure 5 with Docker: bench/docker-create.sh (its own private dockerd); the device plugin and a
# start through containerd (issue 18): bench/k8s-plugin.sh (its own containerd, kubelet stand-in
# and plugin). Each is skipped, with the reason printed and written, where its engine cannot run.
#
# Everything runs against private daemons (convgpud --runtime-dir TMP/... --foreground) in a
# temporary directory; a trap stops them and removes the directory. Comparisons are always made
# between things measured in the same run, interleaved (see docs/BENCHMARKS.md, "Method").
set -euo pipefail

REAL=0
RECORD=0
while [ $# -gt 1 ]; do
    case $1 in
        --real-gpu) REAL=1 ;;
        --record) RECORD=1 ;;
        *) break ;;
    esac
    shift
done
if [ $# -ne 1 ]; then
    echo "usage: bench/run-all.sh [--record] [--real-gpu] BUILD_DIR" >&2; exit 2
fi
BUILD=$(cd "$1" && pwd)
SRC=$(cd "$(dirname "$0")/.." && pwd)
. "$SRC/bench/section.sh"
OUT=$(bench_destination "$RECORD" "$SRC")
QUICK=${BENCH_QUICK:-0}
BB=$BUILD/bench
for p in "$BUILD/bin/convgpud" "$BUILD/bin/convgpu" "$BUILD/lib/libconvgpu.so" \
         "$BUILD/bin/convgpu-sample" "$BB/bench_api" "$BB/bench_roundtrip" "$BB/bench_scale" \
         "$BB/bench_ab"; do
    [ -x "$p" ] || [ -f "$p" ] || { echo "run-all.sh: missing $p (build first)" >&2; exit 1; }
done

# A bundle's daemon and CLI find their libraries in its deps/. The workloads run under `env -i`
# and get back only what the caller had on LD_LIBRARY_PATH (a real host's driver may be found
# through it), never the bundle's libraries.
HOST_LDLP=${LD_LIBRARY_PATH:-}
if [ -d "$BUILD/deps" ]; then
    export LD_LIBRARY_PATH="$BUILD/deps${HOST_LDLP:+:$HOST_LDLP}"
fi

TMP=$(mktemp -d /tmp/convgpu-bench.XXXXXX)
DAEMONS=()
cleanup() {
    set +e
    for pid in "${DAEMONS[@]}"; do
        kill -TERM "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
    done
    # Workloads still running (a run stopped early), once the daemon is
    # stopped: every one names a file under $TMP.
    pkill -KILL -f "$TMP/" 2>/dev/null
    rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
# A command that stops the run under set -e says which one it was (the smoke test once failed
# with nothing but its exit status under a heavy load). Not inherited (no set -E): a test that
# fails inside a command substitution or a function is the caller's to judge.
trap 'echo "run-all.sh: line $LINENO: exit $?: $BASH_COMMAND" >&2' ERR

if [ "$QUICK" = 1 ]; then
    API_REPS=2; API_ROUNDS=30; RT_PROCS=2; RT_ROUNDS=10; SCALE_MS=200; SCALE_REPS=1
    SCALE_N="1 4"; SCALE_N16="16"; SLOW_N="4"; SLOW_ROUNDS=4; AB_REPS=3; APP_SIZE=16MiB; SIM_REPS=2
else
    API_REPS=15; API_ROUNDS=1500; RT_PROCS=7; RT_ROUNDS=200; SCALE_MS=2000; SCALE_REPS=3
    SCALE_N="1 4 16 64"; SCALE_N16="16 64"; SLOW_N="1 4 16 64"; SLOW_ROUNDS=40; AB_REPS=31; APP_SIZE=64MiB; SIM_REPS=11
fi
EMU_SPEC=8GiB
CTX=2MiB
log() { echo "[bench] $*" >&2; }

# ---- daemons and containers ---------------------------------------------------------------

start_daemon() { # start_daemon NAME -> sets RUN (runtime dir) and DPID
    RUN=$TMP/$1
    mkdir -p "$RUN"
    if [ "$REAL" = 1 ]; then
        "$BUILD/bin/convgpud" --runtime-dir "$RUN" --foreground >"$TMP/$1.log" 2>&1 &
    else
        CONVGPU_EMU_STATE=$RUN/emu/state CONVGPU_EMU_CONTEXT=$CTX \
            "$BUILD/bin/convgpud" --runtime-dir "$RUN" --emulate "$EMU_SPEC" --foreground \
            >"$TMP/$1.log" 2>&1 &
    fi
    DPID=$!
    DAEMONS+=("$DPID")
    local i=0
    while [ ! -S "$RUN/control.sock" ]; do
        i=$((i + 1))
        if [ $i -gt 3000 ] || ! kill -0 "$DPID" 2>/dev/null; then # 60 s: bounds a hang only
            echo "run-all.sh: daemon $1 did not start:" >&2; cat "$TMP/$1.log" >&2; exit 1
        fi
        sleep 0.02
    done
}

cg() { "$BUILD/bin/convgpu" --runtime-dir "$RUN" "$@"; }

# create_container LIMIT FILE: the container's environment (KEY=VALUE lines) into FILE; prints
# the id. Processes run in it with `env $(cat FILE) CMD`.
create_container() {
    local out
    out=$(cg create --gpu-memory "$1")
    echo "$out" | tail -n +2 >"$2"
    if [ "$REAL" = 1 ] && [ -n "$HOST_LDLP" ]; then echo "LD_LIBRARY_PATH=$HOST_LDLP" >>"$2"; fi
    printf '%s\n' "${out%%$'\n'*}" # its first line (head would take SIGPIPE under pipefail)
}

# The environment of a process that uses the GPU without convgpu (the emulator alone, sharing
# the daemon's emulated device) -> file.
native_env() { # native_env FILE
    if [ "$REAL" = 1 ]; then
        if [ -n "$HOST_LDLP" ]; then echo "LD_LIBRARY_PATH=$HOST_LDLP" >"$1"; else : >"$1"; fi
        return
    fi
    printf '%s\n' "LD_LIBRARY_PATH=$BUILD/lib/emu" "CONVGPU_EMU_DEVICES=$EMU_SPEC" \
        "CONVGPU_EMU_STATE=$RUN/emu/state" "CONVGPU_EMU_CONTEXT=$CTX" >"$1"
}

# `env -i` keeps the runs free of whatever the caller's environment holds (a stray
# CONVGPU_SOCKET, LD_PRELOAD); PATH and HOME stay.
envrun() { local f=$1; shift; env -i PATH="$PATH" HOME="${HOME:-/}" $(cat "$f") "$@"; }

# ---- small statistics helpers (awk) ---------------------------------------------------------

# stats < numbers -> "median min max p25 p75 n"
stats() {
    sort -g | awk '{ a[NR] = $1 } END {
        if (NR == 0) { print "nan nan nan nan nan 0"; exit }
        m = (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2
        q1 = a[int(0.25 * (NR - 1) + 1.5)]; q3 = a[int(0.75 * (NR - 1) + 1.5)]
        print m, a[1], a[NR], q1, q3, NR }'
}
kv() { # kv KEY < line -> value of KEY=
    awk -v k="$1" '{ for (i = 1; i <= NF; i++) if (index($i, k "=") == 1) { print substr($i, length(k) + 2); next } }'
}
us() { awk -v x="$1" 'BEGIN { printf "%.2f", x / 1000 }'; }
fmt() { awk -v x="$1" -v f="$2" 'BEGIN { printf f, x }'; }

GEN=$TMP/gen.md
: >"$GEN"
emit() { printf '%s\n' "$@" >>"$GEN"; }

# ---- machine facts --------------------------------------------------------------------------

CPU=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
emit "Generated by \`bench/run-all.sh$([ "$REAL" = 1 ] && echo ' --real-gpu') $1\`$([ "$QUICK" = 1 ] && echo ' (BENCH_QUICK=1: smoke run, numbers not meaningful)') on $(date -u '+%Y-%m-%d %H:%M UTC'), commit \`$(git -C "$SRC" rev-parse --short HEAD 2>/dev/null || echo unknown)\`$(git -C "$SRC" diff --quiet HEAD -- src bench 2>/dev/null || echo ' (+ local changes)')."
emit "" "Machine: $(nproc) cores, ${CPU:-unknown CPU}, kernel $(uname -r), clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null || echo unknown), $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo) RAM$( [ "$REAL" = 1 ] && echo ", GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | sed -n 1p)")."
emit ""

# ---- 1. round trip: bare socket vs the real protocol ----------------------------------------

log "round trip: $RT_PROCS processes x $RT_ROUNDS rounds x 50"
start_daemon rt
RT_RUN=$RUN
native_env "$TMP/native.env"
ID=$(create_container 4GiB "$TMP/conv.env")
SOCK=$RUN/containers/$ID/container.sock
# One CPU for the daemon, the client and its forked bare server: on this VM a wake-up across
# vCPUs costs ~60 us more than one on the same vCPU when the other one idles, and where the
# scheduler puts the two ends differs from run to run, making either side of the ratio 6x off.
PIN=()
if command -v taskset >/dev/null && [ "$(nproc)" -gt 1 ]; then
    taskset -a -p -c 0 "$DPID" >/dev/null && PIN=(taskset -c 0)
fi
: >"$TMP/rt.txt"
for i in $(seq "$RT_PROCS"); do
    ${PIN[@]+"${PIN[@]}"} "$BB/bench_roundtrip" --socket "$SOCK" --rounds "$RT_ROUNDS" --batch 50 | sed "s/^/rep=$i /" >>"$TMP/rt.txt"
done
[ ${#PIN[@]} -eq 0 ] || taskset -a -p -c "0-$(($(nproc) - 1))" "$DPID" >/dev/null
rt_col() { grep "kind=$1 " "$TMP/rt.txt" | kv "$2" | stats; }
read -r BARE_MED BARE_MIN BARE_MAX _ <<<"$(rt_col bare med_ns)"
read -r PROTO_MED PROTO_MIN PROTO_MAX _ <<<"$(rt_col proto med_ns)"
read -r BARE_P99 _ <<<"$(rt_col bare p99_ns)"
read -r PROTO_P99 _ <<<"$(rt_col proto p99_ns)"
read -r LED_MED LED_MIN LED_MAX _ <<<"$(rt_col ledger med_ns)"
read -r HELLO_MED HELLO_MIN HELLO_MAX _ <<<"$(rt_col hello med_ns)"
read -r SCPU _ <<<"$(grep -o 'server_cpu_ns_per_req=[-0-9.]*' "$TMP/rt.txt" | cut -d= -f2 | stats)"
read -r DCPU _ <<<"$(grep -o 'daemon_cpu_ns_per_req=[-0-9.]*' "$TMP/rt.txt" | cut -d= -f2 | stats)"
read -r RATIO_MED RATIO_MIN RATIO_MAX _ <<<"$(grep -o 'ratio_proto_over_bare=[0-9.]*' "$TMP/rt.txt" | cut -d= -f2 | stats)"

emit "### Slow path vs a bare UNIX-socket round trip" ""
emit "\`bench_roundtrip\` ($RT_PROCS processes, each $RT_ROUNDS interleaved batches of 50 bare and 50 protocol round trips, every round trip timed; figures are the median over processes of each process's median, [min-max over processes]).$([ ${#PIN[@]} -gt 0 ] && echo " The daemon, the client and its bare server share CPU 0 (taskset), so both sides of the ratio pay the same kind of wake-up.")" ""
emit "| what | median | spread (per-process medians) | p99 (median over processes) |" "|---|---|---|---|"
emit "| bare SOCK_SEQPACKET round trip, epoll server | $(us "$BARE_MED") us | $(us "$BARE_MIN")-$(us "$BARE_MAX") us | $(us "$BARE_P99") us |"
emit "| protocol ALLOC -> ALLOC_REPLY (daemon freezes, decides, charges the slot) | $(us "$PROTO_MED") us | $(us "$PROTO_MIN")-$(us "$PROTO_MAX") us | $(us "$PROTO_P99") us |"
emit "| **ratio protocol / bare** (per process, then median) | **$(fmt "$RATIO_MED" %.2f)x** | $(fmt "$RATIO_MIN" %.2f)-$(fmt "$RATIO_MAX" %.2f)x | |"
emit "| server-side CPU per request (/proc/PID/schedstat): bare epoll server vs convgpud | $(us "$SCPU") us vs $(us "$DCPU") us | | |"
emit "| fast path's own work: ledger CAS charge + uncharge | $(fmt "$LED_MED" %.1f) ns | $(fmt "$LED_MIN" %.1f)-$(fmt "$LED_MAX" %.1f) ns | |"
emit "| registration: connect + HELLO -> WELCOME + mmap ledger | $(us "$HELLO_MED") us | $(us "$HELLO_MIN")-$(us "$HELLO_MAX") us | |"
emit ""

# ---- 2. API response time (Figure 4 set) ----------------------------------------------------

log "API response time: $API_REPS x (native, preloaded-unconfigured, convgpu), $API_ROUNDS rounds each"
: >"$TMP/api.txt"
printf '%s\n' "LD_PRELOAD=$BUILD/lib/libconvgpu.so" >"$TMP/pre.env"
cat "$TMP/native.env" >>"$TMP/pre.env"
for i in $(seq "$API_REPS"); do
    # rotate the order each repetition so no variant always runs first
    case $((i % 3)) in
        0) order="native pre conv" ;; 1) order="pre conv native" ;; *) order="conv native pre" ;;
    esac
    for v in $order; do
        envrun "$TMP/$v.env" "$BB/bench_api" --rounds "$API_ROUNDS" | sed "s/^/variant=$v rep=$i /" >>"$TMP/api.txt"
    done
done
api_med() { # api_med VARIANT OP -> median over processes of the per-process median
    grep "variant=$1 " "$TMP/api.txt" | grep " op=$2 " | kv med_ns | stats
}
api_diff() { # api_diff OP VARIANT -> stats of paired (VARIANT - native) per repetition
    for i in $(seq "$API_REPS"); do
        a=$(grep "variant=native rep=$i op=$1 " "$TMP/api.txt" | kv med_ns)
        b=$(grep "variant=$2 rep=$i op=$1 " "$TMP/api.txt" | kv med_ns)
        awk -v a="$a" -v b="$b" 'BEGIN { print b - a }'
    done | stats
}
emit "### API response time (paper Figure 4)" ""
emit "\`bench_api\` with $API_ROUNDS rounds per process (every call timed on its own; per round 8x alloc/free/info/total-mem, 1x managed, pitch, 3D array, 200 pass-through calls), $API_REPS processes per variant, run interleaved (native, preloaded-unconfigured, convgpu; order rotated). Allocation size 2 MiB (= the charge granularity). Columns: median over processes of the per-process median; **added** = median over repetitions of the paired difference (convgpu - native of the same repetition) [p25..p75 of those differences]."
emit "" "| call | native | under convgpu | added by convgpu | ratio | paper: without / with ConVGPU |" "|---|---|---|---|---|---|"
declare -A PAPER=(
    [alloc]="0.035 ms / 0.082 ms (avg. of the allocation APIs)" [alloc_managed]="~40x the others (both sides)"
    [alloc_pitch]="first call ~2x the other allocations" [array3d_create]="cudaMalloc3D (same as allocation)"
    [free]="cudaFree: 0.032 ms with ConVGPU" [mem_get_info]="0.01 ms *faster* with ConVGPU"
    [device_total_mem]="cudaGetDeviceProperties: ~same")
for op in alloc free alloc_managed free_managed alloc_pitch free_pitch array3d_create array_destroy mem_get_info device_total_mem; do
    read -r N _ <<<"$(api_med native "$op")"
    read -r C _ <<<"$(api_med conv "$op")"
    read -r D _ _ D1 D3 _ <<<"$(api_diff "$op" conv)"
    eval "ADD_$op=\$D"
    emit "| $op | $(us "$N") us | $(us "$C") us | $(fmt "$D" %+.0f) ns [$(fmt "$D1" %+.0f)..$(fmt "$D3" %+.0f)] | $(awk -v a="$C" -v b="$N" 'BEGIN { printf "%.3f", a / b }') | ${PAPER[$op]:-} |"
done
read -r PT_N _ <<<"$(api_med native passthru)"
read -r PT_P _ <<<"$(api_med pre passthru)"
read -r PT_C _ <<<"$(api_med conv passthru)"
read -r PT_DP _ _ PT_DP1 PT_DP3 _ <<<"$(api_diff passthru pre)"
read -r PT_DC _ <<<"$(api_diff passthru conv)"
read -r FA_N FA_NMIN FA_NMAX _ <<<"$(api_med native first_alloc)"
read -r FA_C FA_CMIN FA_CMAX _ <<<"$(api_med conv first_alloc)"
read -r FA_D _ _ FA_D1 FA_D3 _ <<<"$(api_diff first_alloc conv)"
read -r A_PRE_D _ <<<"$(api_diff alloc pre)"
emit "" "| cheap hooked call (\`cuMemFree_v2(0)\`, batch-timed) | native | preloaded, unconfigured | under convgpu |" "|---|---|---|---|"
emit "| ns per call | $(fmt "$PT_N" %.1f) | $(fmt "$PT_P" %.1f) (added $(fmt "$PT_DP" %+.1f) [$(fmt "$PT_DP1" %+.1f)..$(fmt "$PT_DP3" %+.1f)]) | $(fmt "$PT_C" %.1f) (added $(fmt "$PT_DC" %+.1f): allocation-table lookup) |"
emit "" "First allocation of a process (the paper's 0.035 ms -> 0.082 ms analogue; under convgpu it connects, says HELLO, maps the ledger and sends one ALLOC): native $(us "$FA_N") us [$(us "$FA_NMIN")-$(us "$FA_NMAX")], convgpu $(us "$FA_C") us [$(us "$FA_CMIN")-$(us "$FA_CMAX")], paired difference $(us "$FA_D") us [p25..p75 $(us "$FA_D1")..$(us "$FA_D3")]."
emit ""

# ---- targets (issue 4) ----------------------------------------------------------------------
verdict() { awk -v x="$1" -v lim="$2" 'BEGIN { print (x <= lim) ? "met" : "**missed**" }'; }
emit "### Targets (issue 4)" "" "| target | measured (same run) | verdict |" "|---|---|---|"
emit "| fast-path allocation adds <= 1 us vs the native call | $(fmt "$ADD_alloc" %+.0f) ns (median paired difference) | $(verdict "$ADD_alloc" 1000) |"
emit "| slow-path allocation <= 1.2x a bare round trip | $(fmt "$RATIO_MED" %.2f)x ($(us "$PROTO_MED") us vs $(us "$BARE_MED") us) | $(verdict "$RATIO_MED" 1.2) |"
emit "| a free adds <= 1 us | $(fmt "$ADD_free" %+.0f) ns | $(verdict "$ADD_free" 1000) |"
emit "| memory-info calls need no round trip | cuMemGetInfo adds $(fmt "$ADD_mem_get_info" %+.0f) ns, cuDeviceTotalMem $(fmt "$ADD_device_total_mem" %+.0f) ns (a round trip is $(us "$BARE_MED") us) | $(verdict "$ADD_mem_get_info" "$BARE_MED") |"
emit "| unconfigured preloaded process pays <= 50 ns per hooked call | $(fmt "$PT_DP" %+.1f) ns (cheap call); $(fmt "$A_PRE_D" %+.0f) ns on an allocation | $(verdict "$PT_DP" 50) |"
emit ""

# ---- 3. application overhead (Figure 6 analogue) and process start-up ------------------------

log "application overhead: $AB_REPS interleaved pairs of convgpu-sample --size $APP_SIZE"
"$BB/bench_ab" --reps "$AB_REPS" --labels native,convgpu -- \
    env -i PATH="$PATH" $(cat "$TMP/native.env") "$BUILD/bin/convgpu-sample" --size "$APP_SIZE" --quiet --- \
    env -i PATH="$PATH" $(cat "$TMP/conv.env") "$BUILD/bin/convgpu-sample" --size "$APP_SIZE" --quiet >"$TMP/app.txt"
ab_line() { grep "^cmd=$1 " "$2"; }
A0=$(ab_line 0 "$TMP/app.txt"); A1=$(ab_line 1 "$TMP/app.txt")
emit "### Application overhead (paper Figure 6: TensorFlow MNIST 402.1 s -> 404.93 s, +0.7%)" ""
emit "\`convgpu-sample --size $APP_SIZE\` (allocate, copy in, complement kernel, copy back, verify) as a whole process, $AB_REPS interleaved pairs (\`bench_ab\`, order alternating), process already in a container (the container is created once; creation is measured below). $(if [ "$REAL" = 1 ]; then echo "On the real GPU the process's time is mostly the driver's start-up and context creation; the fixed per-process cost of convgpu (registration with the daemon) weighs more than it would for a long application (the training loop of tests/gpu/run.sh is that case)."; else echo "The emulator's page faults on the copied memory dominate large sizes on this VM, so the size is kept small to keep the run short; this makes the fixed per-process cost (registration with the daemon) weigh more than it would for a real application."; fi)" ""
emit "| | median | p25-p75 | min-max |" "|---|---|---|---|"
emit "| native | $(echo "$A0" | kv med_ms) ms | $(echo "$A0" | kv p25_ms)-$(echo "$A0" | kv p75_ms) ms | $(echo "$A0" | kv min_ms)-$(echo "$A0" | kv max_ms) ms |"
emit "| under convgpu | $(echo "$A1" | kv med_ms) ms | $(echo "$A1" | kv p25_ms)-$(echo "$A1" | kv p75_ms) ms | $(echo "$A1" | kv min_ms)-$(echo "$A1" | kv max_ms) ms |"
emit "| **ratio of medians** | **$(echo "$A1" | kv ratio)** | paired difference $(echo "$A1" | kv diff_med_ms) ms [$(echo "$A1" | kv diff_p25_ms)..$(echo "$A1" | kv diff_p75_ms)] | |"
emit ""

log "process start-up: $AB_REPS interleaved pairs of a process that initialises CUDA and allocates"
"$BB/bench_ab" --reps "$AB_REPS" --labels native,convgpu -- \
    env -i PATH="$PATH" $(cat "$TMP/native.env") "$BB/bench_api" --rounds 1 --- \
    env -i PATH="$PATH" $(cat "$TMP/conv.env") "$BB/bench_api" --rounds 1 >"$TMP/start.txt"
S0=$(ab_line 0 "$TMP/start.txt"); S1=$(ab_line 1 "$TMP/start.txt")
emit "### Process start-up (registration with the daemon; HAMi users report ~300 ms per process)" ""
emit "A whole process that loads the driver, creates its context, allocates once and exits (\`bench_api --rounds 1\`), $AB_REPS interleaved pairs: native $(echo "$S0" | kv med_ms) ms [$(echo "$S0" | kv p25_ms)-$(echo "$S0" | kv p75_ms)], under convgpu $(echo "$S1" | kv med_ms) ms [$(echo "$S1" | kv p25_ms)-$(echo "$S1" | kv p75_ms)]: **+$(echo "$S1" | kv diff_med_ms) ms per process** (paired median; ratio $(echo "$S1" | kv ratio)). It includes loading libconvgpu.so, connecting, HELLO/WELCOME and the first ALLOC round trip."
emit ""

# ---- 4. container creation (Figure 5) -------------------------------------------------------

if [ "$REAL" = 0 ]; then
    log "container creation: $AB_REPS interleaved triples"
    "$BB/bench_ab" --reps "$AB_REPS" --labels true,convgpu-run,create+rm -- \
        true --- \
        "$BUILD/bin/convgpu" --runtime-dir "$RUN" run --quiet --gpu-memory 64MiB -- true --- \
        "$SRC/bench/create-rm.sh" "$BUILD/bin/convgpu" "$RUN" >"$TMP/create.txt"
    C0=$(ab_line 0 "$TMP/create.txt"); C1=$(ab_line 1 "$TMP/create.txt"); C2=$(ab_line 2 "$TMP/create.txt")
    DOCKER="Docker itself: next section (\`bench/docker-create.sh\`)."
    emit "### Container registration without an engine (paper Figure 5 analogue)" ""
    emit "$AB_REPS interleaved triples (\`bench_ab\`). \`convgpu run --gpu-memory 64MiB -- true\` = POST /v1/containers (the daemon places, checks safety, writes SQLite with synchronous=FULL, creates the ledger and socket) + fork/exec of the command + DELETE. create+rm = \`convgpu create\` + \`convgpu rm\` through a shell script (\`bench/create-rm.sh\`). $DOCKER" ""
    emit "| command | median | p25-p75 | added vs \`true\` (paired median) |" "|---|---|---|---|"
    emit "| \`true\` | $(echo "$C0" | kv med_ms) ms | $(echo "$C0" | kv p25_ms)-$(echo "$C0" | kv p75_ms) ms | |"
    emit "| \`convgpu run ... -- true\` | $(echo "$C1" | kv med_ms) ms | $(echo "$C1" | kv p25_ms)-$(echo "$C1" | kv p75_ms) ms | **+$(echo "$C1" | kv diff_med_ms) ms** [$(echo "$C1" | kv diff_p25_ms)..$(echo "$C1" | kv diff_p75_ms)] |"
    emit "| \`convgpu create\` + \`convgpu rm\` (sh) | $(echo "$C2" | kv med_ms) ms | $(echo "$C2" | kv p25_ms)-$(echo "$C2" | kv p75_ms) ms | +$(echo "$C2" | kv diff_med_ms) ms |"
    emit ""
fi

# ---- 4b, 4c. container creation with Docker (Figure 5 proper); start through containerd -------

# sub_bench TITLE SCRIPT: a benchmark script with its own private engine, its Markdown section
# appended; skipped (exit 77, the reason printed and written) where its engine cannot run.
sub_bench() {
    local title=$1 script=$2 name rc why
    name=$(basename "$script" .sh)
    log "$title: bench/$name.sh (a private engine)"
    set +e
    "$SRC/bench/$name.sh" "$BUILD" >"$TMP/$name.md" 2>"$TMP/$name.log"
    rc=$?
    set -e
    if [ "$rc" = 0 ]; then
        cat "$TMP/$name.md" >>"$GEN"
    elif [ "$rc" = 77 ]; then
        why=$(grep '^SKIP: ' "$TMP/$name.log" | tail -1 | sed 's/^SKIP: //')
        log "$title skipped: $why"
        emit "### $title" "" "Not measured in this run: $why (\`bench/$name.sh\` skipped)." ""
    else
        log "$title failed (exit $rc):"; tail -n 20 "$TMP/$name.log" >&2
        emit "### $title" "" "\`bench/$name.sh\` failed in this run (exit $rc); see its output." ""
        SUB_FAILED+=("bench/$name.sh")
    fi
}
SUB_FAILED=()
if [ "$REAL" = 0 ]; then
    sub_bench "Container creation with Docker (paper Figure 5)" docker-create.sh
    sub_bench "Kubernetes: the device plugin's Allocate, and a container's start through containerd" k8s-plugin.sh
fi

# ---- 5. scaling ------------------------------------------------------------------------------

if [ "$REAL" = 0 ]; then
    log "scaling: N in {$SCALE_N} (1 container), {$SCALE_N16} (16 containers), ${SCALE_MS} ms each, $SCALE_REPS reps"
    start_daemon scale
    native_env "$TMP/snative.env"
    rss() { awk '/^VmRSS/ { print $2 }' "/proc/$DPID/status"; }
    RSS0=$(rss)
    S1ID=$(create_container 2GiB "$TMP/s1.env")
    S1SOCK=$RUN/containers/$S1ID/container.sock
    RSS1=$(rss)
    S16=()
    for k in $(seq 2 16); do
        id=$(create_container 256MiB /dev/null)
        S16+=("$RUN/containers/$id/container.sock")
    done
    S16+=("$S1SOCK")
    RSS16=$(rss)
    : >"$TMP/scale.txt"
    for r in $(seq "$SCALE_REPS"); do
        for n in $SCALE_N; do
            envrun "$TMP/snative.env" "$BB/bench_scale" --procs "$n" --duration-ms "$SCALE_MS" \
                | sed "s/^/mode=native rep=$r /" >>"$TMP/scale.txt"
            envrun "$TMP/snative.env" "$BB/bench_scale" --procs "$n" --duration-ms "$SCALE_MS" \
                --preload "$BUILD/lib/libconvgpu.so" --daemon-pid "$DPID" -- "$S1SOCK" \
                | sed "s/^/mode=c1 rep=$r /" >>"$TMP/scale.txt"
        done
        for n in $SCALE_N16; do
            envrun "$TMP/snative.env" "$BB/bench_scale" --procs "$n" --duration-ms "$SCALE_MS" \
                --preload "$BUILD/lib/libconvgpu.so" --daemon-pid "$DPID" -- "${S16[@]}" \
                | sed "s/^/mode=c16 rep=$r /" >>"$TMP/scale.txt"
        done
    done
    sc() { grep "^mode=$1 " "$TMP/scale.txt" | grep " procs=$2 " | kv "$3" | stats; }
    emit "### Scaling: concurrent allocating processes" ""
    emit "\`bench_scale\`: N processes allocate and free 4 KiB (charged 2 MiB) in a loop for ${SCALE_MS} ms after a common start, every allocation timed; containers of 2 GiB (1 container) or 16 x 256 MiB on an emulated ${EMU_SPEC} device, so memory is never the limit. Each line: median of $SCALE_REPS runs [min-max of allocs/s]; latency percentiles are computed over all allocations of a run, then the median over runs. The native line runs the same processes on the emulator without convgpu, in the same repetition loop. Daemon CPU = its time on a CPU during the timed phase (/proc/PID/schedstat); it shows how rarely the loop needs the daemon: after a freeze a process keeps quota equal to its use at that moment, which covers an alloc/free loop, so the steady state is all fast path. On 2 cores, more than 2 processes only share the CPU, and the emulator's own cross-process lock dominates (see the native lines)." ""
    emit "| N | mode | allocs/s | vs native | p50 | p99 | p99.9 | daemon CPU | first alloc p50 (registration) |" "|---|---|---|---|---|---|---|---|---|"
    for n in 1 4 16 64; do
        for m in native c1 c16; do
            grep -q "^mode=$m .* procs=$n " "$TMP/scale.txt" || continue
            read -r T TMIN TMAX _ <<<"$(sc "$m" "$n" allocs_per_s)"
            read -r TN _ <<<"$(sc native "$n" allocs_per_s)"
            read -r P50 _ <<<"$(sc "$m" "$n" p50_ns)"
            read -r P99 _ <<<"$(sc "$m" "$n" p99_ns)"
            read -r P999 _ <<<"$(sc "$m" "$n" p999_ns)"
            read -r CPU_US _ <<<"$(sc "$m" "$n" daemon_cpu_us)"
            read -r FA _ <<<"$(sc "$m" "$n" first_alloc_p50_ns)"
            case $m in native) label="native (no convgpu)";; c1) label="1 container";; c16) label="16 containers";; esac
            emit "| $n | $label | $(fmt "$T" %.0f) [$(fmt "$TMIN" %.0f)-$(fmt "$TMAX" %.0f)] | $(awk -v a="$T" -v b="$TN" 'BEGIN { if (b + 0 > 0) printf "%.2f", a / b; else printf "-" }') | $(us "$P50") us | $(us "$P99") us | $(us "$P999") us | $( [ "$m" = native ] && echo - || fmt "$CPU_US" "%.0f us") | $(us "$FA") us |"
        done
    done
    # Slow path under concurrency: N protocol clients (bench_roundtrip --proto-only), every
    # ALLOC crossing the socket, in 1 container or spread over 16.
    dcpu() { awk '{ print $1 }' "/proc/$DPID/schedstat"; }
    : >"$TMP/slow.txt"
    for n in $SLOW_N; do
        for m in c1 c16; do
            [ "$m" = c16 ] && [ "$n" -lt 16 ] && continue
            c0=$(dcpu); t0=$(date +%s%N); pids=()
            for k in $(seq "$n"); do
                if [ "$m" = c1 ]; then s=$S1SOCK; else s=${S16[$(( (k - 1) % 16 ))]}; fi
                "$BB/bench_roundtrip" --socket "$s" --proto-only --rounds "$SLOW_ROUNDS" --batch 50 \
                    >"$TMP/slow.$m.$n.$k" &
                pids+=($!)
            done
            wait "${pids[@]}"
            t1=$(date +%s%N); c1=$(dcpu)
            cat "$TMP/slow.$m.$n."* | grep '^kind=proto' | sed "s/^/mode=$m procs=$n /" >>"$TMP/slow.txt"
            echo "mode=$m procs=$n total=$((n * (SLOW_ROUNDS + 1) * 50)) wall_ns=$((t1 - t0)) dcpu_ns=$((c1 - c0))" >>"$TMP/slow.txt"
        done
    done
    emit "" "Slow path under concurrency: N processes speaking the protocol (\`bench_roundtrip --proto-only\`, each $((SLOW_ROUNDS + 1)) x 50 ALLOCs, every one decided by the daemon), started together; requests/s = all requests / wall time (including each client's start and HELLO), latency = median over clients of each client's median and p99." ""
    emit "| N | containers | daemon decisions/s | daemon CPU per request | client p50 | client p99 |" "|---|---|---|---|---|---|"
    for n in $SLOW_N; do
        for m in c1 c16; do
            L=$(grep "^mode=$m procs=$n total=" "$TMP/slow.txt") || continue
            read -r P50 _ <<<"$(grep "^mode=$m procs=$n kind=" "$TMP/slow.txt" | kv med_ns | stats)"
            read -r P99 _ <<<"$(grep "^mode=$m procs=$n kind=" "$TMP/slow.txt" | kv p99_ns | stats)"
            emit "| $n | $([ "$m" = c1 ] && echo 1 || echo 16) | $(awk -v t="$(echo "$L" | kv total)" -v w="$(echo "$L" | kv wall_ns)" 'BEGIN { printf "%.0f", t / (w / 1e9) }') | $(awk -v t="$(echo "$L" | kv total)" -v c="$(echo "$L" | kv dcpu_ns)" 'BEGIN { printf "%.2f us", c / t / 1000 }') | $(us "$P50") us | $(us "$P99") us |"
        done
    done
    RSSP_LINE=$(grep "^mode=c1 " "$TMP/scale.txt" | grep " procs=$(echo $SCALE_N | awk '{ print $NF }') " | sed -n 1p)
    NP=$(echo "$RSSP_LINE" | kv procs)
    RB=$(echo "$RSSP_LINE" | kv daemon_rss_kb_before); RD=$(echo "$RSSP_LINE" | kv daemon_rss_kb_during)
    emit "" "Daemon memory (VmRSS): $RSS0 KiB idle; +$((RSS1 - RSS0)) KiB for the first container; $RSS16 KiB with 16 containers ($(awk -v a="$RSS16" -v b="$RSS0" 'BEGIN { printf "%.0f", (a - b) / 16 }') KiB per container, including each container's mapped 64 KiB ledger as it is touched); $RD KiB with $NP processes connected vs $RB KiB before they started ($(awk -v a="$RD" -v b="$RB" -v n="$NP" 'BEGIN { printf "%.1f", (a - b) / n }') KiB per process)."
    emit ""
fi

# ---- 6. scheduling (Tables IV, V) and the simulator's speed -----------------------------------

if [ "$REAL" = 0 ]; then
    log "scheduling: convgpu sim --format csv, and bench_core"
    "$BUILD/bin/convgpu" sim --format csv >"$TMP/sim.csv"
    "$BB/bench_ab" --reps "$SIM_REPS" --warmup 1 --labels sim -- "$BUILD/bin/convgpu" sim --format csv >"$TMP/simtime.txt"
    SIMLINE=$(ab_line 0 "$TMP/simtime.txt")
    emit "### Scheduling (paper Tables IV and V)" ""
    emit "\`convgpu sim --format csv\` with the paper's defaults (one 5 GiB GPU, Table III containers, one every 5 s, 6 seeds, interference ps:3), mean over seeds; paper values in brackets. The whole sweep (5 policies x 18 sizes x 6 seeds) takes $(echo "$SIMLINE" | kv med_ms) ms (median of $SIM_REPS runs, [$(echo "$SIMLINE" | kv min_ms)-$(echo "$SIMLINE" | kv max_ms)])." ""
    PAPER4="fifo 67.6 134.1 111.9 159.3 103.6 155.4 198.4 339.8 262.4 266.6 242.8 362.1 455.8 414.1 423.1 566.4 507.9 593.8
best-fit 68.2 134.0 110.9 158.8 104.0 159.5 195.9 318.4 281.1 257.2 241.8 345.9 426.0 368.0 405.2 537.5 501.0 588.7
recent 68.4 134.5 112.5 159.0 106.5 157.7 197.9 342.1 271.3 267.8 253.5 386.4 453.6 403.7 436.4 555.8 526.2 591.0
random 69.1 133.9 111.8 159.1 103.6 155.2 196.7 344.8 277.2 275.8 251.8 386.7 452.7 393.7 432.1 553.4 529.9 620.4"
    PAPER5="fifo 2.4 33.7 35.7 27.2 19.2 38.1 45.6 90.4 72.2 77.6 58.1 72.6 135.8 132.5 115.3 162.5 157.1 182.7
best-fit 2.4 36.2 21.7 34.3 17.5 44.4 44.9 113.3 84.8 80.4 57.3 88.5 175.7 150.1 131.3 205.3 181.6 289.4
recent 2.4 35.6 31.2 28.1 20.0 37.7 51.3 88.9 76.6 75.2 56.7 80.9 117.4 122.9 95.3 170.9 154.6 182.6
random 2.4 32.0 23.6 27.3 19.4 37.5 44.0 76.5 75.5 78.4 60.5 67.9 129.4 127.5 118.1 165.3 175.8 174.2"
    simtable() { # simtable COLUMN PAPERDATA TITLE
        emit "**$3** (s): ours [paper]" "" "| N | fifo | best-fit | recent | random | aging-fit (ours only) |" "|---|---|---|---|---|---|"
        awk -F, -v col="$1" -v paper="$2" '
            BEGIN { np = split(paper, lines, "\n"); for (i = 1; i <= np; i++) { nf = split(lines[i], f, " ");
                    for (j = 2; j <= nf; j++) P[f[1], 4 + 2 * (j - 2)] = f[j] } }
            NR == 1 { for (i = 1; i <= NF; i++) if ($i == col) c = i; next }
            { s[$1, $2] += $c; k[$1, $2]++; ns[$2] = 1 }
            END { n = 0; for (x in ns) sizes[++n] = x + 0
                  for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (sizes[j] < sizes[i]) { t = sizes[i]; sizes[i] = sizes[j]; sizes[j] = t }
                  split("fifo best-fit recent random aging-fit", pol, " ")
                  for (i = 1; i <= n; i++) { N = sizes[i]; line = "| " N
                      for (p = 1; p <= 5; p++) { q = pol[p]
                          v = k[q, N] ? sprintf("%.1f", s[q, N] / k[q, N]) : "-"
                          if ((q, N) in P) v = v " [" P[q, N] "]"
                          line = line " | " v }
                      print line " |" } }' "$TMP/sim.csv" >>"$GEN"
        emit ""
    }
    simtable finished_s "$PAPER4" "Table IV, finished time"
    simtable avg_suspended_s "$PAPER5" "Table V, average suspended time"
    if [ -x "$BUILD/bin/bench_core" ]; then
        emit "Scheduling core and simulator speed (\`bench_core\`, raw output):" "" \
            '<!-- doc-test: illustration -->' '```'
        "$BUILD/bin/bench_core" >>"$GEN" 2>&1 ||
            { rc=$?; emit "(bench_core failed: exit $rc)"; SUB_FAILED+=(bench_core); }
        emit '```' ""
    fi
fi

# ---- write the results ------------------------------------------------------------------------

if [ "$REAL" = 1 ]; then BEGIN='<!-- bench-gpu:begin -->'; END='<!-- bench-gpu:end -->'
else BEGIN='<!-- bench:begin -->'; END='<!-- bench:end -->'; fi
write_or_print "$OUT" "$BEGIN" "$END" "$GEN"
# The other results are written, but a benchmark that broke fails the run (and bench.smoke).
# (SUB_FAILED: sub_bench's scripts and bench_core.)
if [ ${#SUB_FAILED[@]} -ne 0 ]; then
    log "failed: ${SUB_FAILED[*]}"
    exit 1
fi

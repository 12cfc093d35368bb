#!/usr/bin/env bash
# tests/gpu/run.sh — the real-GPU validation suite (issue #9; docs/GPU-VALIDATION.md).
#
# On a machine with an NVIDIA GPU and the CUDA toolkit (no network needed) it builds convgpu,
# starts a private daemon on the real GPU, runs every check with and without convgpu, and writes
# a Markdown fragment (for docs/BENCHMARKS.md), a TSV of every check, the step log and the
# daemon log into the directory of --out. Exit status 0 only if every check that ran passed.
#
#   tests/gpu/run.sh [--out FILE.md] [--dry-run] [--emulate] [--prebuilt DIR] [--build-dir DIR]
#                    [--budget SECONDS] [--train-reps N] [--keep]
#
#   --out FILE.md    results (default build-gpu/results/gpu-results.md); FILE.tsv, gpu-steps.log
#                    and convgpud.log go beside it. Through the session device tool:
#                    tests/gpu/run.sh --out "$OUT/gpu-results.md"
#   --dry-run        print the plan and check the prerequisites; needs no GPU, builds nothing
#   --emulate        run the same orchestration on convgpu's emulated GPU (checks of the script
#                    itself; the cudart program and the frameworks need a real driver: skipped)
#   --prebuilt DIR   use binaries made by tests/gpu/bundle.sh instead of building (default: the
#                    bundle in .gpu-bundle/ is used when the Debian build packages are missing)
#   --build-dir DIR  where to build (default build-gpu; never the developer's build/)
#   --budget S       wall-clock budget of the whole run (default 540 s); steps that would not
#                    fit are not started and the run fails
#   --train-reps N   interleaved repetitions of the training loop per side (default 3)
#   --keep           keep the temporary runtime directory
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
T_START=$(date +%s)

usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; }

OUT_MD=""
DRY=0
EMULATE=0
PREBUILT=""
BUILD_DIR="$ROOT/build-gpu"
BUDGET=540
TRAIN_REPS=3
KEEP=0
while [ $# -gt 0 ]; do
    case $1 in
        --out) OUT_MD=${2:?--out needs a file}; shift 2 ;;
        --out=*) OUT_MD=${1#--out=}; shift ;;
        --dry-run) DRY=1; shift ;;
        --emulate) EMULATE=1; shift ;;
        --prebuilt) PREBUILT=${2:?--prebuilt needs a directory}; shift 2 ;;
        --build-dir) BUILD_DIR=${2:?--build-dir needs a directory}; shift 2 ;;
        --budget) BUDGET=${2:?--budget needs seconds}; shift 2 ;;
        --train-reps) TRAIN_REPS=${2:?--train-reps needs a number}; shift 2 ;;
        --keep) KEEP=1; shift ;;
        -h|--help) usage; exit 0 ;;
        *) echo "run.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
done
case $BUDGET in ''|*[!0-9]*) echo "run.sh: --budget must be seconds" >&2; exit 2 ;; esac
case $TRAIN_REPS in ''|*[!0-9]*|0) echo "run.sh: --train-reps must be a positive number" >&2; exit 2 ;; esac
[ -n "$OUT_MD" ] || OUT_MD="$BUILD_DIR/results/gpu-results.md"
case $OUT_MD in /*) ;; *) OUT_MD="$PWD/$OUT_MD" ;; esac
OUT_DIR=$(dirname "$OUT_MD")
OUT_TSV="${OUT_MD%.md}.tsv"
STEPS_LOG="$OUT_DIR/gpu-steps.log"
DAEMON_LOG="$OUT_DIR/convgpud.log"
PYTHON=${PYTHON:-python3}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
NVCC=${NVCC:-}
if [ -z "$NVCC" ]; then
    if [ -x "$CUDA_HOME/bin/nvcc" ]; then NVCC="$CUDA_HOME/bin/nvcc"; else NVCC=$(command -v nvcc || true); fi
fi

# ---- sizes (MiB) ---------------------------------------------------------------------------
SAMPLE_LIMIT=1024 SAMPLE_WITHIN=512 SAMPLE_OVER=1536   # convgpu-sample, every --api (the limit
                                                      # grows by the context charge, step 3)
SWAP_PIN_SET=keep # the second kind of host copy the swap step measures (CONVGPU_SWAP_PIN)
TABLE2_LIMIT=2048                                      # cudart_table2
TIMING_LIMIT=4096                                      # gpu_probe timing
FW_LIMIT=4096                                          # PyTorch, JAX, CuPy
JAX_FRACTION=0.5
CAP=16384                                              # daemon capacity (total - --reserve)
SUSP_LIMIT=10240 SUSP_HOLD=8192                         # two containers, together over CAP
TRAIN_LIMIT=8192 TRAIN_STEPS=400
SWAP_MIB=4096 SWAP_CHUNK_MIB=256 SWAP_CHUNKS=8           # swap: the container's allocation, bench_swap's set
EMU_SPEC=24GiB

# ---- plan ----------------------------------------------------------------------------------
print_plan() {
    cat <<EOF
Plan (each step bounded by a timeout; the whole run by --budget ${BUDGET}s):
  1. build      make build BUILD=$(basename "$BUILD_DIR") (Debian packages: present, or
                scripts/install-deps.sh as root, or the prebuilt bundle .gpu-bundle/);
                make -C tests/gpu (nvcc: cudart_table2, default static cudart; cc: gpu_probe)
  2. measure    gpu_probe info + measure, natively: context charge (NVML device delta and
                per-process use), cuMemGetAllocationGranularity, free delta of 1 B..2 MiB+1
  3. daemon     convgpud --foreground on the real GPU, --reserve total-${CAP}MiB, log kept;
                its "context charge measured" line recorded
  4. sample     convgpu-sample --api plain|pitch|managed|vmm|async|pool|array, native and
                under ${SAMPLE_LIMIT}MiB plus the context charge: ${SAMPLE_WITHIN}MiB succeeds,
                ${SAMPLE_OVER}MiB exits 2 (native: 0)
  5. table2     cudart_table2 --native / --limit ${TABLE2_LIMIT}MiB: cudaMalloc, cudaMallocManaged,
                cudaMallocPitch, cudaMalloc3D, cudaFree, cudaMemGetInfo, totalGlobalMem
  6. suspend    two containers of ${SUSP_LIMIT}MiB each holding ${SUSP_HOLD}MiB (capacity ${CAP}MiB): the second
                is suspended (convgpu ps --json) and resumes when the first exits
  7. swap       bench_swap natively (${SWAP_CHUNKS} x ${SWAP_CHUNK_MIB} MiB: the copy bandwidth and each kind
                of host copy); convgpud again with --swap yes (as before after the step):
                swap_probe rounds 3 (round trips ordered through the ledger, every byte
                rewritten and checked); a container holding ${SWAP_MIB} MiB moved out and in twice
                with convgpu swap/unswap, times from inspect against the copy bandwidth
                (target >= 0.80), every byte checked; both again with CONVGPU_SWAP_PIN=$SWAP_PIN_SET (host
                copies page-locked once and kept so), whose figure the report gives beside it
  8. timing     gpu_probe timing: cuMemAlloc_v2/cuMemFree_v2 (2 MiB), cuMemGetInfo_v2, native
                and under ${TIMING_LIMIT}MiB
  9. torch      default allocator, expandable_segments:True, backend:cudaMallocAsync; native and
                under ${FW_LIMIT}MiB (skipped if torch is not importable)
 10. cupy       native and under ${FW_LIMIT}MiB (skipped if not importable)
 11. jax        XLA_PYTHON_CLIENT_MEM_FRACTION=${JAX_FRACTION}: native and under ${FW_LIMIT}MiB (skipped if not importable)
 12. train      PyTorch training loop (${TRAIN_STEPS} steps), ${TRAIN_REPS}x interleaved native / under ${TRAIN_LIMIT}MiB
 13. report     $OUT_MD, $(basename "$OUT_TSV"), $(basename "$STEPS_LOG"), $(basename "$DAEMON_LOG")
EOF
}

have() { command -v "$1" >/dev/null 2>&1; }
py_has() { have "$PYTHON" && "$PYTHON" -c "import importlib.util, sys; sys.exit(0 if importlib.util.find_spec('$1') else 1)" 2>/dev/null; }
build_deps_present() {
    have cmake && have make && have cc && have pkg-config &&
        pkg-config --exists libmicrohttpd jansson sqlite3 2>/dev/null && [ -e /usr/include/http_parser.h ]
}
libcuda_present() {
    { have ldconfig && grep -q 'libcuda\.so\.1' <<<"$(ldconfig -p 2>/dev/null)"; } ||
        [ -e /usr/lib/x86_64-linux-gnu/libcuda.so.1 ] || [ -e /usr/local/nvidia/lib64/libcuda.so.1 ] ||
        [ -e /usr/lib64/libcuda.so.1 ]
}

if [ "$DRY" -eq 1 ]; then
    echo "tests/gpu/run.sh --dry-run (repo $ROOT)"
    print_plan
    echo
    echo "Prerequisites on this machine:"
    pr() { printf '  %-34s %s\n' "$1" "$2"; }
    if libcuda_present; then pr "NVIDIA driver (libcuda.so.1)" ok; else pr "NVIDIA driver (libcuda.so.1)" "missing: the run needs a GPU host"; fi
    if have nvidia-smi; then pr nvidia-smi ok; else pr nvidia-smi "missing (optional)"; fi
    if [ -n "$NVCC" ] && [ -x "$NVCC" ]; then pr "nvcc" "$NVCC"; else pr nvcc "missing: cudart_table2 cannot be built"; fi
    if build_deps_present; then pr "build packages (make build)" ok
    elif [ -n "$PREBUILT" ] || [ -d "$ROOT/.gpu-bundle" ]; then pr "build packages (make build)" "missing; prebuilt bundle will be used"
    elif [ "$(id -u)" -eq 0 ]; then pr "build packages (make build)" "missing; scripts/install-deps.sh will run (needs network)"
    else pr "build packages (make build)" "missing and not root: the run will stop; see docs/GPU-VALIDATION.md"; fi
    for t in timeout "$PYTHON" curl; do if have "$t"; then pr "$t" ok; else pr "$t" missing; fi; done
    for m in torch jax cupy; do if py_has "$m"; then pr "python: $m" "importable (spec found)"; else pr "python: $m" "not installed: its checks are skipped"; fi; done
    for f in "$HERE/cudart_table2.cu" "$HERE/gpu_probe.c" "$HERE/frameworks.py" "$HERE/Makefile"; do
        if [ -r "$f" ]; then pr "$(basename "$f")" ok; else pr "$(basename "$f")" MISSING; exit 1; fi
    done
    if have "$PYTHON"; then
        "$PYTHON" -c "import ast, sys; ast.parse(open(sys.argv[1]).read())" "$HERE/frameworks.py"
        pr "frameworks.py syntax" ok
    fi
    echo "Output would go to: $OUT_DIR"
    exit 0
fi

# ---- state, records, cleanup ---------------------------------------------------------------
mkdir -p "$OUT_DIR"
TMP=$(mktemp -d /tmp/convgpu-gpu.XXXXXX)
RUNDIR=$TMP/run
mkdir -p "$RUNDIR"
: >"$STEPS_LOG"
: >"$DAEMON_LOG"
printf 'check\tmode\tresult\tseconds\tdetail\n' >"$OUT_TSV"
: >"$TMP/measure"
N_PASS=0 N_FAIL=0 N_SKIP=0
DAEMON_PID=""
CUR_PID=""
BG_PIDS=()
REPORT_DONE=0

log() { printf '[%4ss] %s\n' "$(( $(date +%s) - T_START ))" "$*" | tee -a "$STEPS_LOG"; }
tsv_clean() { printf '%s' "$1" | tr '\t\n' '  ' | cut -c1-400; }
record() { # record CHECK MODE RESULT SECONDS DETAIL
    local check=$1 mode=$2 res=$3 secs=${4:--} detail
    detail=$(tsv_clean "${5:-}")
    printf '%s\t%s\t%s\t%s\t%s\n' "$check" "$mode" "$res" "$secs" "$detail" >>"$OUT_TSV"
    case $res in
        pass) N_PASS=$((N_PASS + 1)) ;;
        fail) N_FAIL=$((N_FAIL + 1)) ;;
        skip) N_SKIP=$((N_SKIP + 1)) ;;
    esac
    log "$(printf '%-4s %-40s %-8s %s' "$res" "$check" "$mode" "$detail")"
}
measure() { printf '%s\t%s\n' "$1" "$2" >>"$TMP/measure"; } # measure KEY VALUE (report table)
kv() { # kv KEY FILE -> value of KEY= (first match), or empty
    awk -F= -v k="$1" '{ sub(/^INFO /, "") } $1 == k { print substr($0, length(k) + 2); exit }' "$2"
}

stop_daemon() {
    [ -n "$DAEMON_PID" ] || return 0
    kill -TERM "$DAEMON_PID" 2>/dev/null || true
    local _
    for _ in $(seq 1 50); do
        kill -0 "$DAEMON_PID" 2>/dev/null || break
        sleep 0.1
    done
    kill -KILL "$DAEMON_PID" 2>/dev/null || true
    wait "$DAEMON_PID" 2>/dev/null || true
    DAEMON_PID=""
}

cleanup() {
    local rc=$?
    set +e
    trap - EXIT INT TERM
    local p
    for p in "${BG_PIDS[@]}" $CUR_PID; do kill -TERM "$p" 2>/dev/null; done
    sleep 0.2
    for p in "${BG_PIDS[@]}" $CUR_PID; do kill -KILL "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
    stop_daemon
    if [ "$REPORT_DONE" -eq 0 ]; then
        record run.completed - fail 0 "interrupted (exit $rc) before the end; partial results"
        write_report
    fi
    if [ "$KEEP" -eq 1 ]; then echo "kept: $TMP"; else rm -rf "$TMP"; fi
    if [ "$N_FAIL" -gt 0 ]; then exit 1; fi
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# run_cmd SECONDS [native | under LIMIT_MIB] CMD... : runs CMD (natively: in NATIVE_ENV; under:
# through `convgpu run --gpu-memory LIMIT_MIB MiB`) with a timeout clamped to the budget; output
# in $TMP/out (and appended to the step log); sets RC and SECS. RC 124/137: timed out; 125: not
# started (budget).
RC=0 SECS=0
remaining() { echo $(( BUDGET - ($(date +%s) - T_START) - 15 )); }
run_cmd() {
    local t=$1; shift
    local left
    left=$(remaining)
    [ "$t" -le "$left" ] || t=$left
    if [ "$t" -lt 5 ]; then
        RC=125 SECS=0
        echo "not started: time budget exhausted" >"$TMP/out"
        BUDGET_HIT=1
        return 0
    fi
    {
        echo "---- $(date +%T) [timeout ${t}s] $*"
    } >>"$STEPS_LOG"
    local t0 t1 argv
    case $1 in
        native) shift; argv=(env "${NATIVE_ENV[@]}" "$@") ;;
        under) local lim=$2; shift 2
               ensure_daemon
               argv=(env "${CG_ENV[@]}" "$CLI" --runtime-dir "$RUNDIR" run --quiet --gpu-memory "${lim}MiB" -- "${RUNPFX[@]}" "$@") ;;
        *) argv=("$@") ;;
    esac
    t0=$(date +%s%N)
    RC=0
    # In the background and waited for, so that a signal to this script is handled at once
    # (the trap stops the step through timeout, which passes the signal on).
    timeout --kill-after=10 "$t" "${argv[@]}" >"$TMP/out" 2>&1 </dev/null &
    CUR_PID=$!
    wait "$CUR_PID" || RC=$?
    CUR_PID=""
    t1=$(date +%s%N)
    SECS=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')
    cat "$TMP/out" >>"$STEPS_LOG"
    echo "---- exit $RC after ${SECS}s" >>"$STEPS_LOG"
}
BUDGET_HIT=0
tail_out() { tail -n 3 "$TMP/out" | tr '\n' ' ' | cut -c1-300; }

# Results of a program that prints PASS/FAIL/SKIP lines: one record per line, prefixed.
record_lines() { # record_lines PREFIX MODE
    local prefix=$1 mode=$2 n=0 line kind name detail
    if [ "$RC" -eq 77 ]; then
        record "$prefix" "$mode" skip "$SECS" "skipped: not installed ($(grep -m1 '^SKIP' "$TMP/out" | cut -c1-200))"
        return 0
    fi
    while IFS= read -r line; do
        kind=${line%% *}
        case $kind in PASS|FAIL|SKIP) ;; *) continue ;; esac
        name=${line#* }; name=${name%%:*}
        detail=${line#*: }
        case $kind in
            PASS) record "$prefix.$name" "$mode" pass "" "$detail" ;;
            FAIL) record "$prefix.$name" "$mode" fail "" "$detail" ;;
            SKIP) record "$prefix.$name" "$mode" skip "" "$detail" ;;
        esac
        n=$((n + 1))
    done <"$TMP/out"
    if [ "$RC" -eq 0 ] && [ "$n" -gt 0 ]; then
        record "$prefix" "$mode" pass "$SECS" "$n checks"
    elif [ "$RC" -eq 0 ]; then
        record "$prefix" "$mode" fail "$SECS" "exit 0 but no check reported: $(tail_out)"
    else
        record "$prefix" "$mode" fail "$SECS" "exit $RC$( [ "$RC" -ge 124 ] && echo ' (timeout/not started)'): $(tail_out)"
    fi
}

# ---- the commands: native, and under convgpu -----------------------------------------------
CG_ENV=()      # environment of the daemon and the CLI (bundle libraries)
NATIVE_ENV=()  # environment of native runs (the emulator's, with --emulate)
SAMPLE_OPTS=() # convgpu-sample options of every run (with --emulate: verify 1 MiB per piece)
RUNPFX=()      # prefix of workloads under convgpu run (restores LD_LIBRARY_PATH with a bundle)
cg() { env "${CG_ENV[@]}" "$CLI" --runtime-dir "$RUNDIR" "$@"; }

json_get() { # json_get PYTHON-EXPR < JSON ; the JSON is `j`
    "$PYTHON" -c "import json, sys; j = json.load(sys.stdin); v = ($1); print('' if v is None else v)"
}

# ---- 1. build ------------------------------------------------------------------------------
use_bundle() { # use_bundle DIR
    local b=$1 missing
    for f in bin/convgpud bin/convgpu bin/convgpu-sample lib/libconvgpu.so; do
        [ -e "$b/$f" ] || { record build.bundle - fail 0 "$b/$f missing (make it with tests/gpu/bundle.sh)"; return 1; }
    done
    LIBDIR=$b/lib CLI=$b/bin/convgpu DAEMON=$b/bin/convgpud SAMPLE=$b/bin/convgpu-sample
    SWAP_PROBE=$b/bin/swap_probe BENCH_SWAP=$b/bench/bench_swap
    if [ -d "$b/deps" ]; then
        CG_ENV=("LD_LIBRARY_PATH=$b/deps${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")
        # In the container, take the bundle's directory out of LD_LIBRARY_PATH again (keeping
        # what the container's environment put there, e.g. the emulator's).
        # shellcheck disable=SC2016
        RUNPFX=(bash -c 'p=":${LD_LIBRARY_PATH:-}:"; p=${p//":$0:"/:}; p=${p#:}; p=${p%:}
                if [ -n "$p" ]; then export LD_LIBRARY_PATH=$p; else unset LD_LIBRARY_PATH; fi
                exec "$@"' "$b/deps")
    fi
    missing=$(env "${CG_ENV[@]}" ldd "$DAEMON" "$CLI" 2>&1 | grep 'not found' | sort -u | tr '\n' ' ' || true)
    if [ -n "$missing" ]; then record build.bundle - fail 0 "unresolved libraries: $missing"; return 1; fi
    record build.bundle - pass 0 "prebuilt binaries from $b ($(head -n1 "$b/ORIGIN" 2>/dev/null))"
}

build_convgpu() {
    if [ -n "$PREBUILT" ]; then use_bundle "$PREBUILT"; return; fi
    if ! build_deps_present; then
        if [ -d "$ROOT/.gpu-bundle" ]; then
            record build.convgpu - skip 0 "Debian build packages missing here; using the prebuilt bundle .gpu-bundle"
            use_bundle "$ROOT/.gpu-bundle"; return
        fi
        if [ "$(id -u)" -eq 0 ]; then
            log "build packages missing; running scripts/install-deps.sh"
            run_cmd 300 "$ROOT/scripts/install-deps.sh"
            if [ "$RC" -ne 0 ]; then
                record build.deps - fail "$SECS" "scripts/install-deps.sh failed (exit $RC; no network?): $(tail_out). Make a bundle elsewhere: tests/gpu/bundle.sh, then --prebuilt"
                return 1
            fi
            record build.deps - pass "$SECS" "installed by scripts/install-deps.sh"
        else
            record build.deps - fail 0 "missing build packages (cmake, pkg-config, libmicrohttpd-dev, libjansson-dev, libsqlite3-dev, libhttp-parser-dev) and not root: run scripts/install-deps.sh as root, or use --prebuilt DIR from tests/gpu/bundle.sh"
            return 1
        fi
    fi
    run_cmd 400 make -C "$ROOT" build BUILD="$BUILD_DIR"
    if [ "$RC" -ne 0 ]; then
        record build.convgpu - fail "$SECS" "make build failed (exit $RC): $(tail_out)"
        if [ -d "$ROOT/.gpu-bundle" ]; then use_bundle "$ROOT/.gpu-bundle"; return; fi
        return 1
    fi
    record build.convgpu - pass "$SECS" "make build BUILD=$BUILD_DIR"
    LIBDIR=$BUILD_DIR/lib CLI=$BUILD_DIR/bin/convgpu DAEMON=$BUILD_DIR/bin/convgpud SAMPLE=$BUILD_DIR/bin/convgpu-sample
    SWAP_PROBE=$BUILD_DIR/bin/swap_probe BENCH_SWAP=$BUILD_DIR/bench/bench_swap
}

build_gpu_programs() {
    GPU_BIN=$BUILD_DIR/gpu
    if [ -n "$NVCC" ] && [ -x "$NVCC" ]; then
        run_cmd 300 make -C "$HERE" OUT="$GPU_BIN" NVCC="$NVCC" CUDA_HOME="$CUDA_HOME"
        if [ "$RC" -eq 0 ]; then
            record build.gpu_programs - pass "$SECS" "cudart_table2, gpu_probe ($("$NVCC" --version | grep -m1 release))"
            return 0
        fi
        record build.gpu_programs - fail "$SECS" "make -C tests/gpu failed (exit $RC): $(tail_out)"
    else
        record build.gpu_programs - fail 0 "nvcc not found (CUDA_HOME=$CUDA_HOME)"
    fi
    local b=${PREBUILT:-$ROOT/.gpu-bundle}
    if [ -x "$b/gpu/cudart_table2" ] && [ -x "$b/gpu/gpu_probe" ]; then
        GPU_BIN=$b/gpu
        log "using the bundle's GPU programs ($b/gpu)"
        return 0
    fi
    return 1
}

# ---- report --------------------------------------------------------------------------------
md_escape() { sed 's/|/\\|/g'; }
write_report() {
    REPORT_DONE=1
    local m=$TMP/measure gpu
    gpu=$(awk -F'\t' '$1 == "GPU" { print $2 }' "$m" | head -n1)
    {
        echo "### Real-GPU validation: ${gpu:-unknown GPU} ($(date -u +%Y-%m-%d))"
        echo
        echo "\`tests/gpu/run.sh\`$([ "$EMULATE" -eq 1 ] && echo ' --emulate (EMULATED GPU: checks of the suite, not of a real driver)'),"
        echo "convgpu $(git -C "$ROOT" describe --always --dirty 2>/dev/null || echo '?'), host $(uname -n), $(uname -r)."
        echo "Checks: **$N_PASS passed, $N_FAIL failed, $N_SKIP skipped**; run took $(( $(date +%s) - T_START )) s."
        echo
        echo "| measured | value |"
        echo "|---|---|"
        awk -F'\t' '{ printf "| %s | %s |\n", $1, $2 }' "$m" | md_escape_keep_pipes
        echo
        echo "| check | mode | result | s | detail |"
        echo "|---|---|---|---|---|"
        tail -n +2 "$OUT_TSV" | while IFS=$'\t' read -r c mo r s d; do
            d=$(printf '%s' "$d" | cut -c1-160 | md_escape)
            case $r in fail) r="**FAIL**" ;; esac
            printf '| %s | %s | %s | %s | %s |\n' "$c" "$mo" "$r" "$s" "$d"
        done
        echo
        echo "Full TSV: \`$(basename "$OUT_TSV")\`; step log: \`$(basename "$STEPS_LOG")\`; daemon log: \`$(basename "$DAEMON_LOG")\`."
    } >"$OUT_MD"
    log "report: $OUT_MD ($N_PASS passed, $N_FAIL failed, $N_SKIP skipped)"
}
md_escape_keep_pipes() { cat; } # the measure table's own pipes are the table's

# ============================================================================================
log "convgpu real-GPU validation: repo $ROOT, out $OUT_DIR, budget ${BUDGET}s$([ "$EMULATE" -eq 1 ] && echo ', EMULATED GPU')"
log "temporary directory: $TMP"

LIBDIR="" CLI="" DAEMON="" SAMPLE="" GPU_BIN="" SWAP_PROBE="" BENCH_SWAP=""
if ! build_convgpu; then log "cannot build or find convgpu: stopping"; exit 1; fi
if ! build_gpu_programs; then log "cannot build or find the GPU programs: stopping"; exit 1; fi
PROBE=$GPU_BIN/gpu_probe TABLE2=$GPU_BIN/cudart_table2

DAEMON_ARGS=(--runtime-dir "$RUNDIR" --foreground --log-level debug)
if [ "$EMULATE" -eq 1 ]; then
    [ -e "$LIBDIR/emu/libcuda.so.1" ] || { record emulate - fail 0 "no emulator in $LIBDIR/emu"; exit 1; }
    export CONVGPU_EMU_CONTEXT=${CONVGPU_EMU_CONTEXT:-66MiB}
    mkdir -p "$TMP/emu-native"
    NATIVE_ENV=("LD_LIBRARY_PATH=$LIBDIR/emu" "CONVGPU_EMU_DEVICES=$EMU_SPEC"
                "CONVGPU_EMU_STATE=$TMP/emu-native/state" "CONVGPU_EMU_CONTEXT=$CONVGPU_EMU_CONTEXT")
    DAEMON_ARGS+=(--emulate "$EMU_SPEC")
    # The emulator's memory is host memory: verifying all of 1.5 GiB is minutes of CPU on a busy
    # 2-core machine, and checks nothing the emulated run is for (the suite's orchestration).
    SAMPLE_OPTS=(--touch 1MiB)
    # The swap step's copies are host memcpy here: small sets show the mechanics as well.
    SWAP_MIB=128 SWAP_CHUNK_MIB=16 SWAP_CHUNKS=4
fi

# ---- 2. the GPU, measured natively ---------------------------------------------------------
run_cmd 60 native "$PROBE" info
cp "$TMP/out" "$TMP/info"
if [ "$RC" -ne 0 ]; then
    record gpu.info native fail "$SECS" "gpu_probe info failed (exit $RC): $(tail_out)"
    log "no usable GPU: stopping"; exit 1
fi
TOTAL=$(kv device_total "$TMP/info")
GPU_NAME=$(kv device_name "$TMP/info" | tr '_' ' ')
record gpu.info native pass "$SECS" "$GPU_NAME, $((TOTAL >> 20)) MiB, driver $(kv nvml_driver_version "$TMP/info") (CUDA $(kv cuda_driver_version "$TMP/info"))"
measure GPU "$GPU_NAME"
measure "GPU memory (cuDeviceTotalMem)" "$((TOTAL >> 20)) MiB"
measure "driver" "$(kv nvml_driver_version "$TMP/info") (CUDA driver API $(kv cuda_driver_version "$TMP/info"))"
if [ -n "$NVCC" ] && [ -x "$NVCC" ]; then measure "nvcc" "$("$NVCC" --version | grep -m1 release)"; fi
have nvidia-smi && { nvidia-smi >>"$STEPS_LOG" 2>&1 || true; }

TOTAL_MIB=$((TOTAL >> 20))
if [ "$TOTAL_MIB" -lt $((CAP + 4096)) ]; then # a smaller GPU: scale the capacity-bound sizes
    CAP=$((TOTAL_MIB * 3 / 4)) SUSP_LIMIT=$((TOTAL_MIB * 3 / 8 + TOTAL_MIB / 16)) SUSP_HOLD=$((TOTAL_MIB * 3 / 8))
    TRAIN_LIMIT=$((CAP / 2))
    log "GPU smaller than planned: capacity ${CAP} MiB, suspend test ${SUSP_HOLD}/${SUSP_LIMIT} MiB"
fi

run_cmd 60 native "$PROBE" measure
cp "$TMP/out" "$TMP/measure.out"
if [ "$RC" -eq 0 ]; then
    record measure.native native pass "$SECS" "$(grep -E '^(context_|vmm_|alloc_delta_1B)' "$TMP/out" | tr '\n' ' ')"
    for k in context_nvml_device_delta context_nvml_process_used; do
        v=$(kv "$k" "$TMP/out")
        case $v in ''|*[!0-9-]*) measure "context charge, $k (gpu_probe)" "${v:-n/a}" ;;
                   *) measure "context charge, $k (gpu_probe)" "$((v >> 20)) MiB ($v B)" ;; esac
    done
    measure "cuMemGetAllocationGranularity minimum / recommended" "$(kv vmm_granularity_minimum "$TMP/out") / $(kv vmm_granularity_recommended "$TMP/out") B"
    measure "free-memory delta of cuMemAlloc 1 B / 4 KiB / 64 KiB / 1 MiB / 2 MiB+1" \
        "$(kv alloc_delta_1B "$TMP/out") / $(kv alloc_delta_4KiB "$TMP/out") / $(kv alloc_delta_64KiB "$TMP/out") / $(kv alloc_delta_1MiB "$TMP/out") / $(kv alloc_delta_2MiBplus1 "$TMP/out") B"
    # 64 held at once: about 64 x 2 MiB = 128 MiB means a page each (what convgpu charges);
    # much less means the driver packs small allocations and convgpu over-charges them.
    held=""
    for sz in 4KiB 64KiB 1MiB; do
        v=$(kv "held64_delta_$sz" "$TMP/out")
        case $v in ''|*[!0-9-]*) held="$held${held:+ / }n/a" ;;
                   *) held="$held${held:+ / }$(awk -v b="$v" 'BEGIN { printf "%.1f MiB (%.2f MiB each)", b / 1048576, b / 1048576 / 64 }')" ;; esac
    done
    measure "free-memory delta of 64 cuMemAlloc held at once, 4 KiB / 64 KiB / 1 MiB (convgpu charges 64 x granularity)" "$held"
else
    record measure.native native fail "$SECS" "gpu_probe measure failed (exit $RC): $(tail_out)"
fi
CTX_FALLBACK=$(kv context_nvml_process_used "$TMP/measure.out")
case $CTX_FALLBACK in ''|*[!0-9]*) CTX_FALLBACK=$(kv context_nvml_device_delta "$TMP/measure.out") ;; esac
case $CTX_FALLBACK in ''|*[!0-9]*|0) CTX_FALLBACK=$((512 << 20)) ;; esac

# ---- 3. the daemon -------------------------------------------------------------------------
start_daemon() { # start_daemon EXTRA-ARGS... ; 0 once the control socket answers
    log "starting convgpud ${DAEMON_ARGS[*]} $*"
    echo "==== convgpud ${DAEMON_ARGS[*]} $* ($(date +%T))" >>"$DAEMON_LOG"
    env "${CG_ENV[@]}" "$DAEMON" "${DAEMON_ARGS[@]}" "$@" >>"$DAEMON_LOG" 2>&1 </dev/null &
    DAEMON_PID=$!
    local _
    for _ in $(seq 1 600); do
        if [ -S "$RUNDIR/control.sock" ] && cg devices >/dev/null 2>&1; then return 0; fi
        kill -0 "$DAEMON_PID" 2>/dev/null || { wait "$DAEMON_PID" 2>/dev/null || true; DAEMON_PID=""; return 1; }
        sleep 0.1
    done
    stop_daemon
    return 1
}
# The daemon must live through the run; if it died (crash, or a signal from outside), that is a
# failure, and it is restarted once with the same arguments so that the other checks still run.
DAEMON_EXTRA=()
DAEMON_RESTARTS=0
ensure_daemon() {
    if [ -n "$DAEMON_PID" ] && kill -0 "$DAEMON_PID" 2>/dev/null; then return 0; fi
    [ -n "$DAEMON_PID" ] && { wait "$DAEMON_PID" 2>/dev/null || true; }
    DAEMON_PID=""
    record daemon.alive convgpu fail "" "convgpud is gone: $(tail -n 2 "$DAEMON_LOG" | tr '\n' ' ')"
    if [ "$DAEMON_RESTARTS" -lt 1 ]; then
        DAEMON_RESTARTS=$((DAEMON_RESTARTS + 1))
        start_daemon "${DAEMON_EXTRA[@]}" || record daemon.restart convgpu fail "" "could not restart convgpud"
    fi
}
RESERVE_MIB=$((TOTAL_MIB - CAP))
[ "$RESERVE_MIB" -ge 0 ] || RESERVE_MIB=0
T_D=$(date +%s%N)
DAEMON_EXTRA=(--reserve "${RESERVE_MIB}MiB")
if start_daemon "${DAEMON_EXTRA[@]}"; then
    record daemon.start convgpu pass "$(awk -v a="$T_D" -v b="$(date +%s%N)" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')" "control socket up; capacity ${CAP} MiB (reserve ${RESERVE_MIB} MiB)"
else
    record daemon.start convgpu fail 0 "convgpud did not start: $(tail -n 3 "$DAEMON_LOG" | tr '\n' ' ')"
    if grep -q 'context charge' "$DAEMON_LOG"; then
        log "retrying with --context-charge $CTX_FALLBACK (measured by gpu_probe) so the other checks run"
        rm -rf "$RUNDIR"; mkdir -p "$RUNDIR"
        DAEMON_EXTRA+=(--context-charge "$CTX_FALLBACK")
        start_daemon "${DAEMON_EXTRA[@]}" ||
            { record daemon.start_with_context_charge convgpu fail 0 "still no daemon"; exit 1; }
        record daemon.start_with_context_charge convgpu pass 0 "--context-charge $CTX_FALLBACK"
    else
        exit 1
    fi
fi
line=$(grep -m1 'context charge measured' "$DAEMON_LOG" || true)
if [ -n "$line" ]; then
    measure "context charge (convgpud's probe, log)" "${line#*context charge measured: }"
    record daemon.context_probe convgpu pass "" "${line#*context charge measured: }"
else
    record daemon.context_probe convgpu fail "" "no 'context charge measured' line in the daemon log"
fi
cg devices --json >"$TMP/devices.json" 2>>"$STEPS_LOG" || true
cat "$TMP/devices.json" >>"$STEPS_LOG"
CTX_DAEMON=$(json_get 'j[0]["context_charge"]' <"$TMP/devices.json" 2>/dev/null || true)
[ -n "$CTX_DAEMON" ] && measure "context charge (convgpud, charged per process)" "$((CTX_DAEMON >> 20)) MiB ($CTX_DAEMON B)"
# The sample's limit holds its context too (518 MiB on an H200 with CUDA 13): SAMPLE_WITHIN
# must fit beside it and SAMPLE_OVER must not, whatever the GPU's context costs.
case $CTX_DAEMON in ''|*[!0-9]*) ctx_b=$CTX_FALLBACK ;; *) ctx_b=$CTX_DAEMON ;; esac
SAMPLE_LIMIT=$((SAMPLE_LIMIT + (ctx_b + (1 << 20) - 1) / (1 << 20)))

# ---- 4. convgpu-sample, every allocation API ----------------------------------------------
for api in plain pitch managed vmm async pool array mipmap; do
    run_cmd 60 native "$SAMPLE" ${SAMPLE_OPTS[@]+"${SAMPLE_OPTS[@]}"} --api "$api" --size "${SAMPLE_WITHIN}MiB" --quiet
    if [ "$RC" -eq 0 ]; then record "sample.$api.within" native pass "$SECS" "${SAMPLE_WITHIN}MiB"
    else record "sample.$api.within" native fail "$SECS" "exit $RC: $(tail_out)"; fi
    run_cmd 60 native "$SAMPLE" ${SAMPLE_OPTS[@]+"${SAMPLE_OPTS[@]}"} --api "$api" --size "${SAMPLE_OVER}MiB" --quiet
    if [ "$RC" -eq 0 ]; then record "sample.$api.unrestricted" native pass "$SECS" "${SAMPLE_OVER}MiB"
    else record "sample.$api.unrestricted" native fail "$SECS" "exit $RC: $(tail_out)"; fi
    run_cmd 60 under "$SAMPLE_LIMIT" "$SAMPLE" ${SAMPLE_OPTS[@]+"${SAMPLE_OPTS[@]}"} --api "$api" --size "${SAMPLE_WITHIN}MiB" --quiet
    if [ "$RC" -eq 0 ]; then record "sample.$api.within" convgpu pass "$SECS" "${SAMPLE_WITHIN}MiB under ${SAMPLE_LIMIT}MiB"
    else record "sample.$api.within" convgpu fail "$SECS" "exit $RC: $(tail_out)"; fi
    run_cmd 60 under "$SAMPLE_LIMIT" "$SAMPLE" ${SAMPLE_OPTS[@]+"${SAMPLE_OPTS[@]}"} --api "$api" --size "${SAMPLE_OVER}MiB" --quiet
    if [ "$RC" -eq 2 ]; then record "sample.$api.over_limit" convgpu pass "$SECS" "${SAMPLE_OVER}MiB under ${SAMPLE_LIMIT}MiB: exit 2 (out of memory)"
    else record "sample.$api.over_limit" convgpu fail "$SECS" "exit $RC, want 2: $(tail_out)"; fi
done

# ---- 5. the paper's Table II through the static cudart ------------------------------------
if [ "$EMULATE" -eq 1 ]; then
    record table2 - skip 0 "skipped: the CUDA runtime needs a real driver (the emulator implements the driver API subset convgpu uses)"
else
    run_cmd 90 native "$TABLE2" --native "${TABLE2_LIMIT}MiB"
    record_lines table2 native
    run_cmd 90 under "$TABLE2_LIMIT" "$TABLE2" --limit "${TABLE2_LIMIT}MiB"
    record_lines table2 convgpu
    ctx=$(kv meminfo_free "$TMP/out")
    [ -n "$ctx" ] && measure "context charge seen by a cudart program (limit - cudaMemGetInfo free)" "$(( (TABLE2_LIMIT << 20) - ctx >> 20 )) MiB"
    # How the runtime found the real driver's entry points: the interposer's debug log names the
    # wrapper each lookup of a hooked entry point got. On the emulator (gpu.cudart_lookups) this
    # runtime's lookups hand out, among others, the wrappers below; a real driver must too.
    run_cmd 90 under "$TABLE2_LIMIT" env CONVGPU_LOG=debug "$TABLE2" --limit "${TABLE2_LIMIT}MiB"
    got=$(sed -n 's/.*) -> ours \([A-Za-z0-9_]*\)$/\1/p' "$TMP/out" | sort -u | tr '\n' ' ')
    fallbacks=$(grep -c 'unknown pointer, using' "$TMP/out" || true)
    missing=""
    for w in cuMemAlloc_v2 cuMemAllocPitch_v2 cuMemAllocManaged cuMemFree_v2 cuMemGetInfo_v2 \
             cuArray3DCreate_v2 cuMipmappedArrayCreate cuDevicePrimaryCtxRetain cuMemAllocAsync; do
        case " $got " in *" $w "*) ;; *) missing="$missing $w" ;; esac
    done
    measure "cudart lookups answered with our wrappers (driver pointer not recognised: $fallbacks)" "${got:-none}"
    if [ -z "$missing" ]; then record cudart.lookups convgpu pass "$SECS" "wrappers handed out: $got; fallbacks by name: $fallbacks"
    else record cudart.lookups convgpu fail "$SECS" "the runtime did not get our$missing (got: ${got:-none})"; fi
fi

# bg_container NAME LIMIT_MIB OUT READY CMD... : CMD in container NAME, in the background (its
# pid in BG_PID, stopped at cleanup), output in OUT; waits until a line of OUT matches the
# regular expression READY (bounded: 120 s, or until it exits). 1 if it never did (stopped).
BG_PID=""
bg_container() {
    local name=$1 lim=$2 out=$3 ready=$4 _
    shift 4
    timeout 600 env "${CG_ENV[@]}" "$CLI" --runtime-dir "$RUNDIR" run --quiet --name "$name" --gpu-memory "${lim}MiB" -- \
        "${RUNPFX[@]}" "$@" >"$out" 2>&1 </dev/null &
    BG_PID=$!
    BG_PIDS+=("$BG_PID")
    for _ in $(seq 1 1200); do grep -q "$ready" "$out" && return 0; kill -0 "$BG_PID" 2>/dev/null || break; sleep 0.1; done
    grep -q "$ready" "$out" && return 0
    kill -TERM "$BG_PID" 2>/dev/null; wait "$BG_PID" 2>/dev/null || true
    return 1
}

# ---- 6. two containers over capacity: suspend and resume ----------------------------------
suspend_test() {
    local a_out=$TMP/susp_a.out b_out=$TMP/susp_b.out state="" a_rc=0 b_rc=0
    if [ "$(remaining)" -lt 60 ]; then record suspend - skip 0 "not started: time budget"; BUDGET_HIT=1; return; fi
    ensure_daemon
    log "suspend test: A and B, ${SUSP_LIMIT} MiB limits, ${SUSP_HOLD} MiB each, capacity ${CAP} MiB"
    # A holds its memory until this test has looked at B (it creates $release): however long
    # that takes on a busy machine. The polls below are bounded by 120 s each; only a hang fails.
    local release=$TMP/susp.release
    rm -f "$release"
    if ! bg_container gpuA "$SUSP_LIMIT" "$a_out" '^alloc_at_unix_ms=' "$PROBE" hold-until "${SUSP_HOLD}MiB" "$release"; then
        record suspend.first_allocates convgpu fail 0 "A did not allocate: $(tail -n 3 "$a_out" | tr '\n' ' ')"
        return
    fi
    local a_pid=$BG_PID
    record suspend.first_allocates convgpu pass "" "A holds ${SUSP_HOLD} MiB until released"
    local t_b
    t_b=$(date +%s%3N)
    timeout 300 env "${CG_ENV[@]}" "$CLI" --runtime-dir "$RUNDIR" run --quiet --name gpuB --gpu-memory "${SUSP_LIMIT}MiB" -- \
        "${RUNPFX[@]}" "$PROBE" hold "${SUSP_HOLD}MiB" 0 >"$b_out" 2>&1 </dev/null &
    local b_pid=$!
    BG_PIDS+=("$b_pid")
    for _ in $(seq 1 1200); do
        state=$(cg ps --json 2>/dev/null | json_get '[c["state"] for c in j if c["name"] == "gpuB"][0] if any(c["name"] == "gpuB" for c in j) else ""' 2>/dev/null || true)
        [ "$state" = suspended ] && break
        kill -0 "$b_pid" 2>/dev/null || break
        sleep 0.1
    done
    cg ps >>"$STEPS_LOG" 2>&1 || true
    if [ "$state" = suspended ]; then
        record suspend.second_suspended convgpu pass "" "convgpu ps --json: gpuB state=suspended while gpuA holds its memory"
    else
        record suspend.second_suspended convgpu fail "" "gpuB state '${state}' (want suspended): $(tail -n 3 "$b_out" | tr '\n' ' ')"
    fi
    : >"$release"
    wait "$a_pid" || a_rc=$?
    wait "$b_pid" || b_rc=$?
    cat "$a_out" "$b_out" >>"$STEPS_LOG"
    local a_freed b_alloc
    a_freed=$(kv freed_at_unix_ms "$a_out")
    b_alloc=$(kv alloc_at_unix_ms "$b_out")
    if [ "$a_rc" -eq 0 ] && [ "$b_rc" -eq 0 ] && [ -n "$a_freed" ] && [ -n "$b_alloc" ] && [ "$b_alloc" -ge "$a_freed" ]; then
        record suspend.resumed_after_first convgpu pass "" "B allocated $((b_alloc - a_freed)) ms after A freed; B waited $((b_alloc - t_b)) ms in all"
        measure "resume latency (first frees -> suspended second allocates)" "$((b_alloc - a_freed)) ms"
    else
        record suspend.resumed_after_first convgpu fail "" "A exit $a_rc, B exit $b_rc, A freed at ${a_freed:-?}, B allocated at ${b_alloc:-?}"
    fi
}
suspend_test

# ---- 7. swap: device memory to the host and back, through the interposer -------------------
# The daemon runs with --swap yes for this step only (with it every allocation is VMM-backed),
# and is started again as before afterwards. Early in the run, so that a tight budget cuts the
# frameworks rather than this. What it answers: the swap round trip on this driver, byte for
# byte (issue 20's "Done when"), and its bandwidth against a plain copy measured in the same run
# (its target).
swap_field() { # swap_field NAME EXPR: of `convgpu inspect NAME` (j)
    cg inspect "$1" 2>/dev/null | json_get "$2" 2>/dev/null || true
}
swap_wait() { # swap_wait NAME STATE: until inspect shows swap=STATE; 1 after 300 s
    local _
    for _ in $(seq 1 3000); do
        [ "$(swap_field "$1" 'j.get("swap")')" = "$2" ] && return 0
        sleep 0.1
    done
    return 1
}
gbps() { awk -v b="$1" -v s="$2" 'BEGIN { if (s > 0) printf "%.2f", b / s / 1e9; else print "?" }'; }
swap_test() {
    if [ "$(remaining)" -lt 120 ]; then record swap - skip 0 "not started: time budget"; BUDGET_HIT=1; return; fi
    if [ ! -x "$SWAP_PROBE" ] || [ ! -x "$BENCH_SWAP" ]; then
        record swap - fail 0 "swap_probe or bench_swap missing ($SWAP_PROBE, $BENCH_SWAP)"; return
    fi
    # bench_swap first, natively: the run's copy bandwidth, and what each kind of host copy costs.
    run_cmd 240 native "$BENCH_SWAP" --rounds 5 --chunks "$SWAP_CHUNKS" --chunk "${SWAP_CHUNK_MIB}MiB"
    local co ci
    co=$(sed -n 's/^op=copy_out .*med_gbps=\([0-9.]*\).*/\1/p' "$TMP/out")
    ci=$(sed -n 's/^op=copy_in .*med_gbps=\([0-9.]*\).*/\1/p' "$TMP/out")
    if [ "$RC" -eq 0 ] && [ -n "$co" ] && [ -n "$ci" ]; then
        record swap.bench native pass "$SECS" "copy out $co GB/s, in $ci GB/s; $(grep '^ratio' "$TMP/out" | tr '\n' ' ')"
        measure "device-to-host / host-to-device copy (bench_swap, ${SWAP_CHUNKS} x ${SWAP_CHUNK_MIB} MiB)" "$co / $ci GB/s"
        measure "bench_swap: each kind of host copy, swap bandwidth / copy bandwidth" \
            "$(sed -n 's/^ratio //p' "$TMP/out" | tr '\n' ' ')"
    else
        record swap.bench native fail "$SECS" "exit $RC: $(tail_out)"
    fi
    stop_daemon
    if ! start_daemon "${DAEMON_EXTRA[@]}" --swap yes; then
        record swap.daemon convgpu fail 0 "convgpud --swap yes did not start: $(tail -n 3 "$DAEMON_LOG" | tr '\n' ' ')"
        start_daemon "${DAEMON_EXTRA[@]}" || record daemon.restart convgpu fail "" "could not start convgpud again"
        return
    fi
    swap_steps "$co" "$ci"
    stop_daemon
    start_daemon "${DAEMON_EXTRA[@]}" || record daemon.restart convgpu fail "" "could not start convgpud again after the swap step"
}
swap_steps() { # swap_steps COPY_OUT_GBPS COPY_IN_GBPS (bench_swap's; empty if it failed)
    local co=$1 ci=$2 limit=$((SWAP_MIB + 1024))
    # The mechanism alone: the probe orders its own moves through its ledger, as the daemon does;
    # with host copies in pageable memory (the default) and page-locked (SWAP_PIN_SET).
    run_cmd 180 under "$limit" env CONVGPU_LOG=info "$SWAP_PROBE" rounds 3
    local spares
    spares=$(sed -n 's/.*(\([0-9]*\) into host memory kept since the last swap-in).*/\1/p' "$TMP/out" | tr '\n' ' ')
    if [ "$RC" -eq 0 ] && grep -q '^ok rounds=3 ' "$TMP/out"; then
        record swap.rounds convgpu pass "$SECS" "3 round trips of 6 allocations, every byte rewritten between them and checked; bytes into kept host copies per swap-out: $spares"
    else
        record swap.rounds convgpu fail "$SECS" "exit $RC: $(tail_out)"
    fi
    run_cmd 180 under "$limit" env CONVGPU_LOG=info CONVGPU_SWAP_PIN=$SWAP_PIN_SET "$SWAP_PROBE" rounds 3
    local locked
    locked=$(sed -n 's/.*swapped out [0-9]* bytes (.*); \([0-9]*\) page-locked.*/\1/p' "$TMP/out" | tr '\n' ' ')
    # Every swap-out's copies locked: a driver that refuses would leave this mode untested.
    if [ "$RC" -eq 0 ] && grep -q '^ok rounds=3 ' "$TMP/out" &&
        [ "$(wc -w <<<"$locked")" -eq 3 ] && ! grep -qw 0 <<<"$locked"; then
        record swap.rounds.pinned convgpu pass "$SECS" "CONVGPU_SWAP_PIN=$SWAP_PIN_SET: the same, exact; bytes page-locked per swap-out: $locked"
    else
        record swap.rounds.pinned convgpu fail "$SECS" "CONVGPU_SWAP_PIN=$SWAP_PIN_SET: exit $RC, bytes page-locked per swap-out: ${locked:-none}: $(tail_out)"
    fi
    # Through the daemon: a container holding SWAP_MIB, moved out and in twice by the operator's
    # order, once per kind of host copy; the target is judged on the default's.
    local r_default r_pinned
    swap_big "" "" "$co" "$ci"
    r_default=$SWAP_R2
    swap_big .pinned "CONVGPU_SWAP_PIN=$SWAP_PIN_SET" "$co" "$ci"
    r_pinned=$SWAP_R2
    [ -n "$r_default" ] || return 0
    measure "swap bandwidth / copy bandwidth, round 2 (target >= 0.80)" \
        "pageable (default): $r_default; page-locked (CONVGPU_SWAP_PIN=$SWAP_PIN_SET): ${r_pinned:-?}"
    local also="page-locked (CONVGPU_SWAP_PIN=$SWAP_PIN_SET): ${r_pinned:-not measured}"
    if [ "$EMULATE" -eq 1 ]; then
        record swap.bandwidth convgpu skip "" "$r_default of the copy; $also: not judged on the emulator (its device memory is host memory)"
    elif meets_swap_target "$r_default"; then
        record swap.bandwidth convgpu pass "" "$r_default of the copy bandwidth (target >= 0.80); $also"
    elif [ -n "$r_pinned" ] && meets_swap_target "$r_pinned"; then
        record swap.bandwidth convgpu fail "" "$r_default of the copy bandwidth (target >= 0.80), but $also meets it (docs/SWAP.md, \"Page-locked copies\": what making it the default needs)"
    else
        record swap.bandwidth convgpu fail "" "$r_default of the copy bandwidth (target >= 0.80); $also"
    fi
}
meets_swap_target() { # meets_swap_target "out X, in Y"
    awk -v s="$1" 'BEGIN { split(s, f, /[ ,]+/); exit !(f[2] >= 0.8 && f[4] >= 0.8) }'
}
# swap_big SUFFIX ENV CO CI: the SWAP_MIB container (ENV: extra environment for its process, or
# empty), two round trips; sets SWAP_R2 to "out X, in Y" (round 2 against the copy), or empty.
swap_big() {
    local sfx=$1 extra=$2 co=$3 ci=$4 limit=$((SWAP_MIB + 1024))
    local rel=$TMP/swap$sfx.release out=$TMP/swap_big$sfx.out rc=0 round bytes so si
    local name=gpuS${sfx:+P} what=${extra:-pageable host copies}
    SWAP_R2=
    rm -f "$rel"
    if ! bg_container "$name" "$limit" "$out" '^ready$' env ${extra:+"$extra"} "$SWAP_PROBE" big "$rel" "$SWAP_MIB"; then
        record "swap.daemon$sfx" convgpu fail 0 "$what: the probe did not allocate ${SWAP_MIB} MiB: $(tail -n 3 "$out" | tr '\n' ' ')"
        return
    fi
    local pid=$BG_PID
    local ok_rounds=0 r2_out="" r2_in=""
    for round in 1 2; do
        if ! cg swap "$name" >>"$STEPS_LOG" 2>&1 || ! swap_wait "$name" out; then
            record "swap.daemon$sfx.round$round" convgpu fail "" "$what: never out: swap=$(swap_field "$name" 'j.get("swap")')"; break
        fi
        bytes=$(swap_field "$name" 'j.get("swapped_bytes")') so=$(swap_field "$name" 'j.get("swap_out_s")')
        if ! cg unswap "$name" >>"$STEPS_LOG" 2>&1 || ! swap_wait "$name" in; then
            record "swap.daemon$sfx.round$round" convgpu fail "" "$what: never back in: swap=$(swap_field "$name" 'j.get("swap")')"; break
        fi
        si=$(swap_field "$name" 'j.get("swap_in_s")')
        record "swap.daemon$sfx.round$round" convgpu pass "" "$what: $((bytes >> 20)) MiB; out: $(printf '%.3f' "$so") s ($(gbps "$bytes" "$so") GB/s); in: $(printf '%.3f' "$si") s ($(gbps "$bytes" "$si") GB/s)"
        measure "swap round trip $round through convgpud, $what ($((bytes >> 20)) MiB$([ "$round" = 2 ] && echo ', host copy kept from round 1'))" "out $(gbps "$bytes" "$so") GB/s, in $(gbps "$bytes" "$si") GB/s"
        ok_rounds=$round r2_out=$(gbps "$bytes" "$so") r2_in=$(gbps "$bytes" "$si")
    done
    : >"$rel"
    wait "$pid" || rc=$?
    cat "$out" >>"$STEPS_LOG"
    if [ "$rc" -eq 0 ] && [ "$(tail -n 1 "$out")" = ok ]; then
        record "swap.daemon$sfx.data" convgpu pass "" "$what: every byte of ${SWAP_MIB} MiB back after $ok_rounds round trips"
    else
        record "swap.daemon$sfx.data" convgpu fail "" "$what: exit $rc: $(tail -n 3 "$out" | tr '\n' ' ')"
    fi
    # The steady state (round 2: the host copy kept from round 1) against the copy.
    if [ "$ok_rounds" -eq 2 ] && [ -n "$co" ] && [ -n "$ci" ]; then
        SWAP_R2="out $(awk -v a="$r2_out" -v b="$co" 'BEGIN { printf "%.2f", a / b }'), in $(awk -v a="$r2_in" -v b="$ci" 'BEGIN { printf "%.2f", a / b }')"
    fi
}
swap_test

# ---- 8. API response times ----------------------------------------------------------------
timing() { # timing MODE
    if [ "$1" = native ]; then run_cmd 120 native "$PROBE" timing 2000; else run_cmd 120 under "$TIMING_LIMIT" "$PROBE" timing 2000; fi
    cp "$TMP/out" "$TMP/timing.$1"
    if [ "$RC" -eq 0 ]; then
        record "timing" "$1" pass "$SECS" "$(grep -E '_ns_median=|first_alloc' "$TMP/out" | tr '\n' ' ')"
    else
        record "timing" "$1" fail "$SECS" "exit $RC: $(tail_out)"
    fi
}
timing native
timing convgpu
for c in cuMemAlloc cuMemFree cuMemGetInfo; do
    n=$(kv "${c}_ns_median" "$TMP/timing.native") g=$(kv "${c}_ns_median" "$TMP/timing.convgpu")
    [ -n "$n" ] && [ -n "$g" ] && measure "$c median, native / under convgpu (2 MiB, fast path)" "$n ns / $g ns ($(awk -v a="$n" -v b="$g" 'BEGIN { printf "%+d ns", b - a }'))"
done
n=$(kv first_alloc_ns "$TMP/timing.native") g=$(kv first_alloc_ns "$TMP/timing.convgpu")
[ -n "$n" ] && [ -n "$g" ] && measure "first cuMemAlloc of a process, native / under convgpu (daemon round trip)" "$n ns / $g ns"

# ---- 9-11. frameworks ---------------------------------------------------------------------
framework_ok() { # framework_ok MODULE : importable (and, in --emulate, never)
    if [ "$EMULATE" -eq 1 ]; then SKIPWHY="skipped: frameworks need a real driver (--emulate)"; return 1; fi
    if ! have "$PYTHON"; then SKIPWHY="skipped: not installed (no $PYTHON)"; return 1; fi
    if ! py_has "$1"; then SKIPWHY="skipped: not installed ($1 not importable by $PYTHON)"; return 1; fi
    return 0
}
SKIPWHY=""
if framework_ok torch; then
    for conf in default expandable_segments:True backend:cudaMallocAsync; do
        tag=${conf%%:*}; [ "$tag" = backend ] && tag=cudaMallocAsync
        alloc_env=(); [ "$conf" = default ] || alloc_env=("PYTORCH_CUDA_ALLOC_CONF=$conf")
        run_cmd 120 native env "${alloc_env[@]}" "$PYTHON" "$HERE/frameworks.py" torch --native $((FW_LIMIT << 20))
        record_lines "torch.$tag" native
        run_cmd 120 under "$FW_LIMIT" env "${alloc_env[@]}" "$PYTHON" "$HERE/frameworks.py" torch --limit $((FW_LIMIT << 20))
        record_lines "torch.$tag" convgpu
    done
else
    record torch - skip 0 "$SKIPWHY"
fi
if framework_ok cupy; then
    run_cmd 120 native "$PYTHON" "$HERE/frameworks.py" cupy --native $((FW_LIMIT << 20))
    record_lines cupy native
    run_cmd 120 under "$FW_LIMIT" "$PYTHON" "$HERE/frameworks.py" cupy --limit $((FW_LIMIT << 20))
    record_lines cupy convgpu
else
    record cupy - skip 0 "$SKIPWHY"
fi
if framework_ok jax; then
    run_cmd 150 native env "XLA_PYTHON_CLIENT_MEM_FRACTION=$JAX_FRACTION" "$PYTHON" "$HERE/frameworks.py" jax --native $((FW_LIMIT << 20))
    record_lines jax native
    run_cmd 150 under "$FW_LIMIT" env "XLA_PYTHON_CLIENT_MEM_FRACTION=$JAX_FRACTION" "$PYTHON" "$HERE/frameworks.py" jax --limit $((FW_LIMIT << 20))
    record_lines jax convgpu
    bl=$(kv bytes_limit "$TMP/out")
    [ -n "$bl" ] && measure "JAX preallocation under ${FW_LIMIT} MiB (fraction $JAX_FRACTION)" "$((bl >> 20)) MiB"
else
    record jax - skip 0 "$SKIPWHY"
fi

# ---- 12. training loop, interleaved --------------------------------------------------------
if framework_ok torch; then
    : >"$TMP/train.native"; : >"$TMP/train.convgpu"
    for rep in $(seq 1 "$TRAIN_REPS"); do
        for mode in native convgpu; do
            if [ "$mode" = native ]; then run_cmd 120 native "$PYTHON" "$HERE/frameworks.py" train --steps "$TRAIN_STEPS"
            else run_cmd 120 under "$TRAIN_LIMIT" "$PYTHON" "$HERE/frameworks.py" train --steps "$TRAIN_STEPS"; fi
            s=$(kv train_seconds "$TMP/out")
            if [ "$RC" -eq 0 ] && [ -n "$s" ]; then
                echo "$s" >>"$TMP/train.$mode"
                record "train.rep$rep" "$mode" pass "$SECS" "train_seconds=$s startup_seconds=$(kv startup_seconds "$TMP/out")"
            else
                record "train.rep$rep" "$mode" fail "$SECS" "exit $RC: $(tail_out)"
            fi
        done
    done
    median() { sort -g "$1" | awk '{ v[NR] = $1 } END { if (NR == 0) print ""; else if (NR % 2) print v[(NR + 1) / 2]; else printf "%.4f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
    mn=$(median "$TMP/train.native") mg=$(median "$TMP/train.convgpu")
    if [ -n "$mn" ] && [ -n "$mg" ]; then
        ratio=$(awk -v a="$mn" -v b="$mg" 'BEGIN { printf "%.4f (%+.2f%%)", b / a, (b / a - 1) * 100 }')
        measure "training loop ($TRAIN_STEPS steps) median, native / under convgpu (paper: +0.7%)" "$mn s / $mg s, ratio $ratio"
    fi
else
    record train - skip 0 "$SKIPWHY"
fi


# ---- 13. done ------------------------------------------------------------------------------
stop_daemon
if grep -qiE 'assert|segmentation|sanitizer' "$DAEMON_LOG"; then
    record daemon.log - fail "" "the daemon log mentions an assertion or crash"
else
    record daemon.log - pass "" "$(wc -l <"$DAEMON_LOG") lines, no assertion or crash"
fi
if [ "$BUDGET_HIT" -eq 1 ]; then record run.time_budget - fail 0 "steps were cut short or not started (budget ${BUDGET}s)"; fi
write_report
[ "$N_FAIL" -eq 0 ]

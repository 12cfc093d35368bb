#!/usr/bin/env bash
# test_cli_docs.sh — docs.cli: what issue 43 found where the CLI and its pages disagreed with a
# reader, each checked as the reader met it: the create options the page promises, the
# messages that named API fields or the wrong remedy, --runtime-dir after the command, the exit
# statuses convgpu(1) lists, a new state.db that is not "upgraded", and a benchmark run that
# was not asked to record writing nowhere.
. "$(dirname "$0")/../e2e/lib.sh"
SRC=${CONVGPU_SOURCE_DIR:?}

start_daemon
rc_of() { local rc=0; "$@" >"$TMP/out" 2>"$TMP/err" || rc=$?; echo "$rc"; }

# ---- convgpu create takes what convgpu(1) says it takes ------------------------------------
check "create --exclusive without a size: a whole GPU" \
    prints 0 rc_of cg create --exclusive --name whole
check "... and it is exclusive" prints True \
    bash -c "'$BUILD/bin/convgpu' --runtime-dir '$RUNDIR' inspect whole | python3 -c 'import json,sys; print(json.load(sys.stdin)[\"exclusive\"])'"
cg rm whole >/dev/null
check "create without a size and without --exclusive: bad usage (2)" \
    prints 2 rc_of cg create --name nosize

# ---- messages in the CLI's words -------------------------------------------------------------
check "run without a limit: exit 125" prints 125 rc_of cg run -- true
check "... told the flags to give" grep -q -- "--gpu-memory SIZE" "$TMP/err"
check "... not the API's field names" bash -c "! grep -q profile_limit '$TMP/err'"
check "a client in another directory: exit 1" \
    prints 1 rc_of "$BUILD/bin/convgpu" --runtime-dir "$TMP/elsewhere" ps
check "... the hint names --runtime-dir and CONVGPU_RUNTIME_DIR" \
    bash -c "grep -q -- '--runtime-dir DIR' '$TMP/err' && grep -q CONVGPU_RUNTIME_DIR '$TMP/err'"
check "docker run with no daemon in the client's directory names --runtime-dir too" \
    bash -c "CONVGPU_RUNTIME_DIR='$TMP/elsewhere' CONVGPU_DOCKER=/bin/false '$BUILD/bin/convgpu' docker run --gpu-memory 1GiB img 2>&1 | grep -q -- '--runtime-dir'"

# ---- --runtime-dir after the command ---------------------------------------------------------
check "events --runtime-dir DIR --once (after the command) works" \
    prints 0 rc_of "$BUILD/bin/convgpu" events --runtime-dir "$RUNDIR" --once
check "ps --runtime-dir=DIR works" prints 0 rc_of "$BUILD/bin/convgpu" ps --runtime-dir="$RUNDIR"
check "... a relative one is bad usage" prints 2 rc_of "$BUILD/bin/convgpu" ps --runtime-dir rel

# ---- the exit statuses convgpu(1) lists ------------------------------------------------------
check "inspect of an unknown id: 3" prints 3 rc_of cg inspect nosuch
check "rm of an unknown id: 3" prints 3 rc_of cg rm nosuch
check "set of an unknown id: 3" prints 3 rc_of cg set nosuch --gpu-memory 1GiB
check "set ID SIZE (no flag): bad usage, 2" prints 2 rc_of cg set nosuch 3GiB
check "more GPUs than the node has: run exits 125" \
    prints 125 rc_of cg run --gpus 3 --gpu-memory 1GiB -- true
check "... create exits 1" prints 1 rc_of cg create --gpus 3 --gpu-memory 1GiB
check "--gpus 0: bad usage, 2" prints 2 rc_of cg create --gpus 0 --gpu-memory 1GiB

# ---- the unsafe-directory refusal names who may own it ---------------------------------------
mkdir -p "$TMP/wide"; chmod 0777 "$TMP/wide"
check "a runtime directory under a world-writable one is refused" \
    prints 1 rc_of timeout 60 "$BUILD/bin/convgpud" --runtime-dir "$TMP/wide/run" --emulate 1GiB --foreground
check "... naming its owners once (not 'uid 0 or root')" \
    bash -c "grep -q 'unsafe runtime directory' '$TMP/err' && ! grep -q 'uid 0 or root' '$TMP/err'"

# ---- a new state.db is created, not upgraded -------------------------------------------------
check "a new state.db logs no schema upgrade" bash -c "! grep -q upgraded '$DAEMON_LOG'"

# ---- a benchmark run not asked to record writes nowhere ---------------------------------------
dest() { (. "$SRC/bench/section.sh"; BENCH_OUT=${2:-} bench_destination "$1" "$SRC"); }
check "bench: no --record, no BENCH_OUT: nowhere" prints "" dest 0
check "bench: --record: docs/BENCHMARKS.md" prints "$SRC/docs/BENCHMARKS.md" dest 1
check "bench: BENCH_OUT wins" prints "$TMP/b.md" dest 1 "$TMP/b.md"
check "the Makefile's bench target records" \
    bash -c "grep -A3 '^bench:' '$SRC/Makefile' | grep -q 'run-all.sh --record'"

finish

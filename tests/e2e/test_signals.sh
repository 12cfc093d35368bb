#!/usr/bin/env bash
# test_signals.sh — `convgpu run` forwards SIGTERM, SIGINT, SIGHUP and SIGQUIT to its workload,
# waits for it, exits with its status and removes the container; a workload that handles the
# signal and carries on keeps its container. Also runs under ThreadSanitizer (label tsan): there
# the runner's old signal handler never ran while it sat in waitpid, and the workload held its
# memory for ever.
. "$(dirname "$0")/lib.sh"
export CONVGPU_EMU_CONTEXT=6MiB
start_daemon --emulate 512MiB
SAMPLE=$BUILD/bin/convgpu-sample

used_of() { cg inspect "$1" 2>/dev/null | json_get used; }
holds_memory() { [ "$(used_of "$1")" -gt 0 ] 2>/dev/null; }

# A script's background job starts with SIGINT and SIGQUIT ignored, and an ignored signal stays
# ignored by the runner and its workload (as under nohup): the runner gets default dispositions.
for sig in TERM INT HUP QUIT; do
    name=sig-$(tr 'A-Z' 'a-z' <<<"$sig")
    env --default-signal=INT,QUIT "$BUILD/bin/convgpu" --runtime-dir "$RUNDIR" run --quiet --name "$name" --gpu-memory 64MiB -- \
        "$SAMPLE" --size 16MiB --hold --quiet >"$TMP/$name.out" 2>&1 &
    runner=$!
    wait_for "$name's workload holds its memory" "$WAIT_S" holds_memory "$name" \
        || fail "$name's workload never allocated"
    kill "-$sig" "$runner"
    set +e
    wait_for "the runner exits after SIG$sig" "$WAIT_S" bash -c "! kill -0 $runner 2>/dev/null" \
        || { fail "the runner outlived SIG$sig"; kill -KILL "$runner"; }
    wait "$runner"; rc=$?
    set -e
    n=$(kill -l "$sig")
    check "SIG$sig reached the workload: run exits $((128 + n)) (got $rc)" test "$rc" = $((128 + n))
    check "its container is removed" bash -c "! '$BUILD/bin/convgpu' --runtime-dir '$RUNDIR' inspect '$name' >/dev/null 2>&1"
done

# A workload that handles SIGTERM itself: it says so, keeps running until released, exits 0.
"$BUILD/bin/convgpu" --runtime-dir "$RUNDIR" run --quiet --name handler --gpu-memory 64MiB -- \
    bash -c "trap 'echo got-term >$TMP/handler.sig' TERM; touch $TMP/handler.ready
             until [ -e $TMP/release.handler ]; do sleep 0.05; done; exit 0" &
runner=$!
wait_for "the handling workload is ready" "$WAIT_S" test -e "$TMP/handler.ready"
kill -TERM "$runner"
wait_for "the workload's handler ran" "$WAIT_S" test -s "$TMP/handler.sig" || fail "SIGTERM not forwarded"
check "the runner stays while its workload does" kill -0 "$runner"
check "the container stays while its workload does" bash -c "'$BUILD/bin/convgpu' --runtime-dir '$RUNDIR' inspect handler >/dev/null"
touch "$TMP/release.handler"
wait_for "the runner exits once its workload does" "$WAIT_S" bash -c "! kill -0 $runner 2>/dev/null" \
    || { fail "the runner outlived its workload"; kill -KILL "$runner"; }
set +e
wait "$runner"; rc=$?
set -e
check "run exits with the workload's own status (0, got $rc)" test "$rc" = 0
check "no container is left" test "$(cg ps --json)" = "[]"
finish

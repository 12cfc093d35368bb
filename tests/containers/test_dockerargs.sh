#!/usr/bin/env bash
# test_dockerargs.sh — `convgpu docker run` against a fake docker client that records its
# arguments: the limit (option, --nvidia-memory, image label, 1 GiB default) becomes
# --runtime convgpu -e CONVGPU_GPU_MEMORY=SIZE before the user's arguments, which reach docker
# untouched (clustered short flags, values, the command after the image); bad sizes and a
# daemon that is down are refused before docker runs; the daemon's mode (from its convgpud.json,
# trusted only while it holds its pid file's lock) decides --gpus.
. "$(dirname "$0")/lib.sh"
start_daemon
FAKE=$TMP/docker
cat >"$FAKE" <<'SH'
#!/bin/sh
if [ "$1 $2" = "image inspect" ]; then
    case "$5" in labeled*) echo 768MiB ;; badlabel*) echo lots ;; missing*) exit 1 ;; *) echo '<no value>' ;; esac
    exit 0
fi
printf '%s\n' "$@" >"$FAKE_OUT"
SH
chmod +x "$FAKE"
export CONVGPU_DOCKER=$FAKE FAKE_OUT=$TMP/args
got() { tr '\n' ' ' <"$TMP/args"; }
run() { rm -f "$TMP/args"; cg docker run "$@"; }

run --gpu-memory 2GiB -it --rm -e A=1 -v /x:/y --name n1 img:1 sh -c 'echo hi --gpu-memory 5'
check "option: ours first, the user's untouched (command after the image too)" test "$(got)" = \
    "run --runtime convgpu -e CONVGPU_GPU_MEMORY=2GiB -it --rm -e A=1 -v /x:/y --name n1 img:1 sh -c echo hi --gpu-memory 5 "
run -d --network=none --nvidia-memory=512MiB -eB=2 img:1
check "--nvidia-memory=SIZE and -eVALUE forms" test "$(got)" = \
    "run --runtime convgpu -e CONVGPU_GPU_MEMORY=512MiB -d --network=none -eB=2 img:1 "
run --rm labeled:1 true 2>"$TMP/err"
check "image label decides without the option" test "$(got)" = "run --runtime convgpu -e CONVGPU_GPU_MEMORY=768MiB --rm labeled:1 true "
run --rm plain:1 2>/dev/null
check "no label: 1GiB" test "$(got)" = "run --runtime convgpu -e CONVGPU_GPU_MEMORY=1GiB --rm plain:1 "
run --rm missing:1 2>"$TMP/err"
check "image not here: 1GiB, with a note" bash -c "[ '$(got)' = 'run --runtime convgpu -e CONVGPU_GPU_MEMORY=1GiB --rm missing:1 ' ] && grep -q 'pull' '$TMP/err'"
run --runtime other --gpu-memory 1GiB img 2>/dev/null
check "the user's --runtime is kept" test "$(got)" = "run -e CONVGPU_GPU_MEMORY=1GiB --runtime other img "
for bad in "--gpu-memory lots img" "--gpu-memory 0 img" "badlabel:1" "--gpu-memory 1GiB" "--gpu-memory"; do
    # shellcheck disable=SC2086
    if run $bad 2>"$TMP/err"; then fail "accepted: $bad"; else
        check "refused before docker runs: $bad" bash -c "[ ! -e '$TMP/args' ] && [ -s '$TMP/err' ]"; fi
done
rm -f "$TMP/args"
"$BUILD/bin/convgpu" --runtime-dir "$TMP/nodaemon" docker run --gpu-memory 1GiB img 2>"$TMP/err" &&
    fail "ran without a daemon" || check "daemon down: refused with the reason" grep -q "convgpud is not running" "$TMP/err"
check "daemon down: docker not run" test ! -e "$TMP/args"

# The mode comes from the daemon's convgpud.json, valid while the daemon holds its pid file's
# lock: a real-GPU daemon gets --gpus all; a killed daemon's leftover file is not believed.
F=$TMP/fakerun
mkdir -p "$F"
echo '{"version":"x","api":1,"mode":"nvidia","pid":1}' >"$F/convgpud.json"
: >"$F/convgpud.pid"
(exec 9<"$F/convgpud.pid"; flock -x 9; idle_process) & holder=$! # the lock dies with it
wait_for "the fake daemon holds its lock" "$WAIT_S" bash -c "! flock -n '$F/convgpud.pid' true"
rm -f "$TMP/args"
"$BUILD/bin/convgpu" --runtime-dir "$F" docker run --gpu-memory 1GiB img 2>/dev/null
check "a real-GPU daemon: --gpus all added" test "$(got)" = "run --runtime convgpu -e CONVGPU_GPU_MEMORY=1GiB --gpus all img "
"$BUILD/bin/convgpu" --runtime-dir "$F" docker run --gpu-memory 1GiB --gpus device=1 img 2>/dev/null
check "a real-GPU daemon: the user's --gpus kept" test "$(got)" = "run --runtime convgpu -e CONVGPU_GPU_MEMORY=1GiB --gpus device=1 img "
kill "$holder"; wait "$holder" 2>/dev/null || true
rm -f "$TMP/args"
"$BUILD/bin/convgpu" --runtime-dir "$F" docker run --gpu-memory 1GiB img 2>"$TMP/err" &&
    fail "believed a dead daemon's file" || check "a dead daemon's leftover file: not running" grep -q "convgpud is not running" "$TMP/err"
check "emulating daemon: no --gpus" bash -c "'$BUILD/bin/convgpu' --runtime-dir '$RUNDIR' docker run --gpu-memory 1GiB img && ! grep -q gpus '$TMP/args'"
mv "$RUNDIR/convgpud.json" "$TMP/saved.json"
rm -f "$TMP/args"
cg docker run --gpu-memory 1GiB img
check "no convgpud.json (an older daemon): asked over the API" test "$(got)" = "run --runtime convgpu -e CONVGPU_GPU_MEMORY=1GiB img "
mv "$TMP/saved.json" "$RUNDIR/convgpud.json"
check "docker --help" bash -c "'$BUILD/bin/convgpu' docker --help | grep -q nvidia-memory"
cg docker ps 2>/dev/null && fail "docker ps accepted" || pass "only 'run' is handled"
finish

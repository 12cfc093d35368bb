#!/usr/bin/env bash
# test_dockerargs.sh — `convgpu docker run` against a fake docker client that records its
# arguments: the limit (option, --nvidia-memory, image label, 1 GiB default) becomes
# --runtime convgpu -e CONVGPU_GPU_MEMORY=SIZE before the user's arguments, which reach docker
# untouched (clustered short flags, values, the command after the image); the compute share
# (--gpu-compute/--compute-mode, else the image's com.convgpu.gpu-compute/compute-mode labels when
# the labels are read) becomes -e CONVGPU_GPU_COMPUTE/CONVGPU_COMPUTE_MODE; bad sizes, bad shares
# and a daemon that is down are refused before docker runs; the daemon's mode (from its
# convgpud.json, trusted only while it holds its pid file's lock) decides --gpus.
. "$(dirname "$0")/lib.sh"
start_daemon
FAKE=$TMP/docker
cat >"$FAKE" <<'SH'
#!/bin/sh
if [ "$1 $2 $3 $4" = 'image inspect --format {{json .Config.Labels}}' ]; then
    echo "$5" >>"$FAKE_OUT.inspected"
    case "$5" in
    labeled*) echo '{"com.nvidia.memory.limit":"768MiB","maintainer":"x"}' ;;
    ours*) echo '{"com.convgpu.gpu-memory":"640MiB","com.nvidia.memory.limit":"768MiB","com.convgpu.gpu-compute":"40","com.convgpu.compute-mode":"hard"}' ;;
    shareonly*) echo '{"com.convgpu.gpu-compute":"25"}' ;;
    badlabel*) echo '{"com.nvidia.memory.limit":"lots"}' ;;
    badshare*) echo '{"com.convgpu.gpu-compute":"30.5"}' ;;
    badmode*) echo '{"com.convgpu.gpu-compute":"30","com.convgpu.compute-mode":"soft"}' ;;
    modeonly*) echo '{"com.convgpu.compute-mode":"hard"}' ;;
    missing*) exit 1 ;;
    *) echo 'null' ;;
    esac
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
# The compute share: options first, then (only when the labels are read, i.e. without
# --gpu-memory) the image's labels; each is validated before docker runs.
run --gpu-memory 1GiB --gpu-compute 30 --compute-mode hard --rm img:1 true
check "--gpu-compute and --compute-mode become env, not docker options" test "$(got)" = \
    "run --runtime convgpu -e CONVGPU_GPU_MEMORY=1GiB -e CONVGPU_GPU_COMPUTE=30 -e CONVGPU_COMPUTE_MODE=hard --rm img:1 true "
run --gpu-compute=70 --gpu-memory=2GiB -it img:1
check "--gpu-compute=PCT form, no mode: the daemon's default" test "$(got)" = \
    "run --runtime convgpu -e CONVGPU_GPU_MEMORY=2GiB -e CONVGPU_GPU_COMPUTE=70 -it img:1 "
rm -f "$FAKE_OUT.inspected"
run --gpu-memory 1GiB --rm ours:1
check "with --gpu-memory no image is inspected (labels not read)" bash -c "[ ! -e '$FAKE_OUT.inspected' ] && [ '$(got)' = 'run --runtime convgpu -e CONVGPU_GPU_MEMORY=1GiB --rm ours:1 ' ]"
run --rm ours:1 2>"$TMP/err"
check "labels: com.convgpu.gpu-memory before the paper's, share and mode from labels" test "$(got)" = \
    "run --runtime convgpu -e CONVGPU_GPU_MEMORY=640MiB -e CONVGPU_GPU_COMPUTE=40 -e CONVGPU_COMPUTE_MODE=hard --rm ours:1 "
check "one inspect reads every label" test "$(wc -l <"$FAKE_OUT.inspected")" = 1
check "a share from a label is said" grep -q "compute share 40% (image label com.convgpu.gpu-compute)" "$TMP/err"
run --gpu-compute 10 --compute-mode elastic ours:1 2>/dev/null
check "options beat labels, field by field" test "$(got)" = \
    "run --runtime convgpu -e CONVGPU_GPU_MEMORY=640MiB -e CONVGPU_GPU_COMPUTE=10 -e CONVGPU_COMPUTE_MODE=elastic ours:1 "
run --compute-mode elastic shareonly:1 2>/dev/null
check "a label's share with the option's mode" test "$(got)" = \
    "run --runtime convgpu -e CONVGPU_GPU_MEMORY=1GiB -e CONVGPU_GPU_COMPUTE=25 -e CONVGPU_COMPUTE_MODE=elastic shareonly:1 "
for bad in "--gpu-memory 1GiB --gpu-compute 0 img" "--gpu-memory 1GiB --gpu-compute 101 img" \
           "--gpu-memory 1GiB --gpu-compute -5 img" "--gpu-memory 1GiB --gpu-compute 30.5 img" \
           "--gpu-memory 1GiB --gpu-compute abc img" "--gpu-memory 1GiB --gpu-compute 30 --compute-mode soft img" \
           "--gpu-memory 1GiB --compute-mode hard img" "badshare:1" "badmode:1" "modeonly:1"; do
    # shellcheck disable=SC2086
    if run $bad 2>"$TMP/err"; then fail "accepted: $bad"; else
        check "refused before docker runs: $bad" bash -c "[ ! -e '$TMP/args' ] && [ -s '$TMP/err' ]"; fi
done
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

#!/usr/bin/env bash
# test_image_files.sh — nothing an image holds can leave a registration that never ends (issue
# #42, item 1). An image's /etc/ld.so.preload that is a FIFO (it survives layer unpacking), a
# symlink to /dev/zero, a 1 GiB sparse file or a directory: the OCI shim's `create` and the CDI
# hook both finish, refuse the container with a message that names the file, run no runtime and
# register nothing (the old ones registered first and then blocked in open() on the FIFO: the
# container stayed in `convgpu ps` with its memory, no owner and no removal). A registration
# whose shim or hook was killed before the container's init was reported is released by the
# daemon at its start deadline, a started container keeps its registration past it, and the
# deadline survives a daemon restart.
#
# The shim runs as containerd and Docker run it (root, `create --bundle B --pid-file F ID`) in
# front of a fake runtime; the hook runs as runc runs it (the OCI state on stdin) for a
# "container" that is an idle process in a mount namespace of its own. `timeout` only bounds a
# hang: it is what the old code hit.
. "$(dirname "$0")/lib.sh"
SHIM=$BUILD/bin/convgpu-runtime
[ -x "$SHIM" ] || { echo "SKIP: $SHIM not built"; exit 77; }
command -v unshare >/dev/null || { echo "SKIP: unshare (util-linux) missing"; exit 77; }
HANG_S=30 # what a shim or hook that waits on an image is given before it counts as hung
start_daemon

FAKE=$TMP/fake-runtime
cat >"$FAKE" <<'SH'
#!/bin/sh
# Records that it ran; writes its own pid as the init's (--pid-file), or holds until killed
# (FAKE_HOLD: a runtime that never finishes creating the container).
echo "$*" >>"$FAKE_DIR/runtime-ran"
prev=
for a in "$@"; do [ "$prev" = --pid-file ] && printf '%s' "$$" >"$a"; prev=$a; done
[ -n "${FAKE_HOLD:-}" ] && exec sleep infinity
exit 0
SH
chmod +x "$FAKE"
export FAKE_DIR=$TMP

bundle() { # bundle DIR : a bundle asking for 256 MiB, with rootfs/etc
    mkdir -p "$1/rootfs/etc"
    printf '%s\n' '{"ociVersion":"1.0.2","process":{"args":["/bin/true"],"env":["PATH=/bin","CONVGPU_GPU_MEMORY=256MiB"],"user":{"uid":0,"gid":0}},"root":{"path":"rootfs"}}' \
        >"$1/config.json"
}
registered() { [ "$(api GET "/v1/containers/$1" | cut -d' ' -f1)" = 200 ]; }
gone() { [ "$(api GET "/v1/containers/$1" | cut -d' ' -f1)" = 404 ]; }
none_registered() { [ "$(api GET /v1/containers | cut -d' ' -f2-)" = "[]" ]; }
not_grep() { ! grep -q "$@"; }

# A "container" for the hook: an idle process in a private mount namespace (the hook mounts
# into it). Prints its pid.
IDLE_PID=
idle_container() {
    unshare -m --propagation private sleep infinity &
    IDLE_PID=$!
    BG_PIDS+=("$IDLE_PID")
}
idle_container
# unshare execs sleep after it made the namespace: wait until the pid is sleep itself.
wait_for "the idle container runs" "$WAIT_S" grep -qx sleep "/proc/$IDLE_PID/comm"

hook_state() { # hook_state ID BUNDLE PID : the OCI state runc gives a createRuntime hook
    printf '{"ociVersion":"1.0.2","id":"%s","status":"created","pid":%s,"bundle":"%s"}' "$1" "$3" "$2"
}

# ---- A. what an image's /etc/ld.so.preload may be ---------------------------------------------
for kind in fifo symlink sparse directory; do
    B=$TMP/b-$kind
    bundle "$B"
    P=$B/rootfs/etc/ld.so.preload
    case $kind in
    fifo) mkfifo "$P" ;;
    symlink) ln -s /dev/zero "$P"; mkdir -p "$B/rootfs/dev"; mknod "$B/rootfs/dev/zero" c 1 5 ;;
    sparse) truncate -s 1G "$P" ;;
    directory) mkdir "$P" ;;
    esac
    rm -f "$TMP/runtime-ran"
    rc=0
    timeout -s KILL "$HANG_S" "$SHIM" --runtime "$FAKE" --runtime-dir "$RUNDIR" create \
        --bundle "$B" --pid-file "$B/pid" "shim-$kind" >"$TMP/shim-$kind.out" 2>&1 || rc=$?
    check "shim, /etc/ld.so.preload a $kind: create finishes (no hang)" test "$rc" != 137
    check "shim, $kind: the container is refused" test "$rc" != 0
    check "shim, $kind: the refusal names the image's /etc/ld.so.preload" \
        grep -q "image's /etc/ld.so.preload" "$TMP/shim-$kind.out"
    check "shim, $kind: no runtime ran" test ! -e "$TMP/runtime-ran"
    check "shim, $kind: nothing registered" gone "shim-$kind"
    check "shim, $kind: config.json untouched" \
        not_grep '"/run/convgpu"' "$B/config.json"

    rc=0
    hook_state "hook-$kind" "$B" "$IDLE_PID" | timeout -s KILL "$HANG_S" "$SHIM" \
        --runtime-dir "$RUNDIR" hook cdi-create-runtime --device 0 >"$TMP/hook-$kind.out" 2>&1 || rc=$?
    check "CDI hook, $kind: finishes (no hang)" test "$rc" != 137
    check "CDI hook, $kind: the container is refused" test "$rc" != 0
    check "CDI hook, $kind: the refusal names the image's /etc/ld.so.preload" \
        grep -q "image's /etc/ld.so.preload" "$TMP/hook-$kind.out"
    check "CDI hook, $kind: nothing registered" gone "hook-$kind"
done
check "after every bad image, nothing is registered at all" none_registered

# An ordinary image still works: its own lines are kept after the interposer.
B=$TMP/b-plain
bundle "$B"
printf '/lib/libimage.so\n' >"$B/rootfs/etc/ld.so.preload"
rc=0
timeout -s KILL "$HANG_S" "$SHIM" --runtime "$FAKE" --runtime-dir "$RUNDIR" create \
    --bundle "$B" --pid-file "$B/pid" shim-plain >"$TMP/shim-plain.out" 2>&1 || rc=$?
check "shim, a regular /etc/ld.so.preload: created" test "$rc" = 0
check "... its lines are kept in the container's ld.so.preload" \
    grep -qx /lib/libimage.so "$RUNDIR/oci/shim-plain/ld.so.preload"
# The fake runtime's "init" (its own pid) has exited: the daemon releases the container.
check "... and released when its init exits" wait_for "shim-plain released" "$WAIT_S" gone shim-plain

# ---- B. a registration whose shim or hook never finished ----------------------------------------
B=$TMP/b-hold
bundle "$B"
rm -f "$TMP/runtime-ran"
setsid env FAKE_HOLD=1 CONVGPU_START_WITHIN=2 "$SHIM" --runtime "$FAKE" --runtime-dir "$RUNDIR" \
    create --bundle "$B" --pid-file "$B/pid" shim-killed >"$TMP/shim-killed.out" 2>&1 &
SHIM_PID=$!
BG_PIDS+=("$SHIM_PID")
check "shim killed mid-create: registered while its runtime creates" \
    wait_for "shim-killed registered" "$WAIT_S" registered shim-killed
check "... with a start deadline" \
    test -n "$(api GET /v1/containers/shim-killed | cut -d' ' -f2- | "$PY" -c 'import json,sys; v=json.load(sys.stdin).get("start_by"); print(v if v else "")')"
wait_for "the runtime runs" "$WAIT_S" test -e "$TMP/runtime-ran"
kill -KILL -- -"$SHIM_PID" 2>/dev/null || kill -KILL "$SHIM_PID"
wait "$SHIM_PID" 2>/dev/null || true
check "... released by the daemon once its start deadline passed" \
    wait_for "shim-killed released" "$WAIT_S" gone shim-killed

# The hook: held in setns (strace's fault injection) after it registered, then killed with it.
if command -v strace >/dev/null; then
    B=$TMP/b-hook-hold
    bundle "$B"
    # As the CDI spec sets it: the GPU's UUID, which the hook checks against the daemon's.
    uuid=$(api GET /v1/devices | cut -d' ' -f2- | "$PY" -c 'import json,sys; print(json.load(sys.stdin)[0]["uuid"])')
    "$PY" - "$B/config.json" "$uuid" <<'PYEOF'
import json, sys
c = json.load(open(sys.argv[1]))
c["process"]["env"].append("CUDA_VISIBLE_DEVICES=" + sys.argv[2])
json.dump(c, open(sys.argv[1], "w"))
PYEOF
    hook_state hook-killed "$B" "$IDLE_PID" >"$TMP/hook-killed.state"
    setsid env CONVGPU_START_WITHIN=2 strace -f -o /dev/null -e trace=setns \
        -e inject=setns:delay_enter=3600s "$SHIM" --runtime-dir "$RUNDIR" hook \
        cdi-create-runtime --device 0 <"$TMP/hook-killed.state" >"$TMP/hook-killed.out" 2>&1 &
    HOOK_PID=$!
    BG_PIDS+=("$HOOK_PID")
    check "CDI hook killed mid-way: registered before it mounts" \
        wait_for "hook-killed registered" "$WAIT_S" registered hook-killed
    kill -KILL -- -"$HOOK_PID" 2>/dev/null || kill -KILL "$HOOK_PID"
    wait "$HOOK_PID" 2>/dev/null || true
    check "... released by the daemon once its start deadline passed" \
        wait_for "hook-killed released" "$WAIT_S" gone hook-killed
else
    echo "note: strace missing: the killed-hook case is not run"
fi

# ---- C. the deadline itself: kept across a restart, met by a start ------------------------------
out=$(api POST /v1/containers '{"id":"late","gpu_memory":"256MiB","start_within":2}')
check "a registration with start_within is accepted" test "${out%% *}" = 201
stop_daemon_hard
start_daemon
check "after a daemon restart it is still released at its deadline" \
    wait_for "late released" "$WAIT_S" gone late
out=$(api POST /v1/containers '{"id":"ontime","gpu_memory":"256MiB","start_within":2}')
check "a second one is accepted" test "${out%% *}" = 201
by=$(api GET /v1/containers/ontime | cut -d' ' -f2- | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["start_by"])')
out=$(api POST /v1/containers/ontime/start "{\"pid\":$IDLE_PID,\"auto_remove\":true}")
check "its init is reported in time" test "${out%% *}" = 200
past() { [ "$(date +%s)" -gt $(($1 + 1)) ]; }
wait_for "its deadline passed" "$WAIT_S" past "$by"
check "... and it stays registered past its deadline" registered ontime
check "a start_within out of bounds is refused" \
    test "$(api POST /v1/containers '{"gpu_memory":"256MiB","start_within":0}' | cut -d' ' -f1)" = 400
finish

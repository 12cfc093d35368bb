#!/usr/bin/env bash
# test_cdi_podman.sh — CDI with a real Podman (4.3) and plain runc, no runtime of ours in front:
# `convgpu cdi generate` writes the spec into /etc/cdi, `podman run --device convgpu.io/gpu=0
# -e CONVGPU_GPU_MEMORY=...` runs a workload under the interposer, the limit holds (over it: exit
# 2), the container is registered under its Podman id with its init pid while it runs and released
# when it ends (also at once on `podman kill`), an image's symlinks cannot make the hook mount or
# create anything outside the container's root, and every bad request fails the container with a
# clear error and leaves nothing registered: no size, a size no GPU has, two convgpu devices, an
# unknown device (Podman's own error), a broken spec (Podman's error), a stale spec.
#
# Podman 4.3 reads CDI specs only from /etc/cdi and /var/run/cdi (no --cdi-spec-dir, no
# cdi_spec_dirs), so the test runs in a private mount namespace with an overlay on /etc: the spec
# exists only there, the system's /etc is never written. Storage, runroot and configuration are
# private too. Skips (77) where Podman cannot run a container.
if [ -z "${CONVGPU_CDI_PRIVATE_NS:-}" ]; then
    command -v podman >/dev/null || { echo "SKIP: podman is not installed (apt-get install podman)"; exit 77; }
    [ "$(id -u)" = 0 ] || { echo "SKIP: these podman tests run rootful"; exit 77; }
    command -v unshare >/dev/null || { echo "SKIP: no unshare(1)"; exit 77; }
    CONVGPU_CDI_PRIVATE_NS=1 exec unshare --mount --propagation private bash "$0" "$@"
fi
. "$(dirname "$0")/../containers/lib.sh"

# /etc as an overlay, in this mount namespace only: /etc/cdi can be created without touching
# the system's /etc. Unmounted last (the namespace goes away with this script anyway).
mkdir -p "$TMP/etc-upper" "$TMP/etc-work"
mount -t overlay overlay -o "lowerdir=/etc,upperdir=$TMP/etc-upper,workdir=$TMP/etc-work" /etc ||
    skip "cannot mount an overlay on /etc in a private mount namespace"
at_exit 'umount -l /etc'
mkdir -p /etc/cdi
SPEC=/etc/cdi/convgpu.json

start_daemon
P=$TMP/podman
mkdir -p "$P/tmp"
# runc: Podman's default here, crun, refuses this VM's hybrid cgroup hierarchy.
printf '[engine]\nruntime = "runc"\n' >"$P/containers.conf"
export CONTAINERS_CONF=$P/containers.conf
unset CONVGPU_RUNTIME_DIR # the hooks get the runtime directory from the spec, nothing else
pm() {
    podman --root "$P/root" --runroot "$P/runroot" --tmpdir "$P/tmp" --storage-driver vfs \
        --cgroup-manager cgroupfs --events-backend file "$@"
}
at_exit 'pm rm -af -t 0; pm system reset -f'
LIMITS=(--ulimit "nofile=$(ulimit -Hn):$(ulimit -Hn)" --ulimit nproc=1024:1024)
prun() { pm run --network none "${LIMITS[@]}" ${SAN_ARGS[@]+"${SAN_ARGS[@]}"} "$@"; }
CURL_STATUS=(curl -s -o /dev/null -w '%{http_code}' --unix-socket "$RUNDIR/control.sock")

make_rootfs "$TMP/img"
tar -C "$TMP/img" -c . | pm import - cg-sample:1 >/dev/null 2>"$TMP/import.err" ||
    skip "podman cannot import an image here: $(tail -n 1 "$TMP/import.err")"
prun --rm cg-sample:1 true 2>"$TMP/probe.err" ||
    skip "podman cannot run a container here: $(tail -n 1 "$TMP/probe.err")"

cg cdi generate --output "$SPEC" 2>"$TMP/gen.err"
check "cdi generate wrote the spec" test -s "$SPEC"
gpu_run() { prun --rm --device convgpu.io/gpu=0 "$@"; }

# The limit holds: within it exit 0 and the memory info shows it; over it out of memory (2).
gpu_run -e CONVGPU_GPU_MEMORY=1GiB cg-sample:1 convgpu-sample --size 800MiB --report \
    >"$TMP/out1" 2>&1 && rc=0 || rc=$?
check "800MiB within a 1GiB limit: exit 0" test "$rc" = 0
check "memory info inside shows the 1GiB limit" grep -qx "mem_total_before=$((1 << 30))" "$TMP/out1"
gpu_run -e CONVGPU_GPU_MEMORY=1GiB cg-sample:1 convgpu-sample --size 1100MiB --quiet && rc=0 || rc=$?
check "1100MiB over a 1GiB limit: exit 2 (out of memory)" test "$rc" = 2
# The interposer comes from /etc/ld.so.preload, not LD_PRELOAD: a process that drops its
# environment is held all the same.
gpu_run -e CONVGPU_GPU_MEMORY=512MiB cg-sample:1 env -u LD_PRELOAD -u CONVGPU_SOCKET \
    convgpu-sample --size 600MiB --quiet && rc=0 || rc=$?
check "600MiB over 512MiB after env -u LD_PRELOAD: exit 2" test "$rc" = 2
# The size from an annotation (as for the OCI shim); the wiring seen from inside (the image has
# a shell and no coreutils beyond cat, ls, env).
gpu_run --annotation com.convgpu.gpu-memory=256MiB cg-sample:1 sh -c \
    'read -r l </etc/ld.so.preload && [ "$l" = /usr/lib/convgpu/libconvgpu.so ] &&
     [ -S /run/convgpu/container.sock ] && ! (: >/run/convgpu/x) 2>/dev/null &&
     [ -f /run/convgpu-emu/state ] && [ -z "${LD_PRELOAD:-}" ]' &&
    pass "annotation: ld.so.preload names the interposer, the socket's directory is read-only" ||
    fail "the container was not wired as expected"
check "all released when they ended" test "$(registered_count)" = 0

# An image whose /run is a symlink to a host path: the hook resolves the mount points inside the
# container's root (RESOLVE_IN_ROOT), so the host directory stays empty and the container works.
mkdir -p "$TMP/escape"
cp -a "$TMP/img" "$TMP/img-link"
rm -rf "$TMP/img-link/run"
ln -s "$TMP/escape" "$TMP/img-link/run"
tar -C "$TMP/img-link" -c . | pm import - cg-link:1 >/dev/null
prun --rm --device convgpu.io/gpu=0 -e CONVGPU_GPU_MEMORY=512MiB cg-link:1 \
    convgpu-sample --size 600MiB --quiet && rc=0 || rc=$?
check "an image with /run -> a host path: the limit holds inside (exit 2)" test "$rc" = 2
check "an image with /run -> a host path: nothing created on the host" test -z "$(ls -A "$TMP/escape")"

# A long-running container: registered under its id with the init pid; kill returns the memory.
id=$(prun -d --device convgpu.io/gpu=0 -e CONVGPU_GPU_MEMORY=512MiB \
    cg-sample:1 convgpu-sample --size 300MiB --hold --quiet)
wait_for "the container's process holds 300MiB" "$WAIT_S" \
    bash -c "[ \"\$('$BUILD/bin/convgpu' --runtime-dir '$RUNDIR' inspect '${id:0:32}' | python3 -c 'import json,sys;print(json.load(sys.stdin)[\"used\"])')\" -ge $((300 << 20)) ]" &&
    pass "registered under the Podman id, 300MiB accounted" || fail "the container's allocation was not seen"
check "registered with the 512MiB limit" test "$(container_field "${id:0:32}" limit)" = $((512 << 20))
init=$(pm inspect -f '{{.State.Pid}}' "$id")
check "the daemon knows the init pid ($init)" test "$(container_field "${id:0:32}" init_pid)" = "$init"
pm kill "$id" >/dev/null
wait_for "released at once when killed" "$WAIT_S" bash -c "[ \"\$(${CURL_STATUS[*]} http://convgpu/v1/containers/${id:0:32})\" = 404 ]" &&
    pass "podman kill: the memory returned at once" || fail "still registered after podman kill"
pm rm "$id" >/dev/null

# Bad requests: the container does not start, the error says why, nothing stays registered.
refused() { # refused DESCRIPTION PATTERN podman-run-args...
    local what=$1 pat=$2; shift 2
    if prun --rm "$@" cg-sample:1 true >"$TMP/bad.out" 2>"$TMP/bad.err"; then
        fail "$what: the container ran"
    elif ! grep -q -- "$pat" "$TMP/bad.err"; then
        fail "$what: no '$pat' in the error: $(tail -n 3 "$TMP/bad.err")"
    elif [ "$(registered_count)" != 0 ]; then
        fail "$what: something stayed registered"
    else
        pass "$what: refused ($pat), nothing registered"
        echo "    podman: $(grep -m 1 -- "$pat" "$TMP/bad.err")"
    fi
}
refused "no GPU-memory request" "set CONVGPU_GPU_MEMORY" --device convgpu.io/gpu=0
refused "100GiB, which no GPU has" "does not fit" --device convgpu.io/gpu=0 -e CONVGPU_GPU_MEMORY=100GiB
refused "a malformed size" "CONVGPU_GPU_MEMORY" --device convgpu.io/gpu=0 -e CONVGPU_GPU_MEMORY=lots
refused "an unknown convgpu device" "unresolvable CDI devices convgpu.io/gpu=7" --device convgpu.io/gpu=7 -e CONVGPU_GPU_MEMORY=1GiB

# Two devices of a two-GPU daemon in one container: refused (one GPU per container).
kill -TERM "$DAEMON_PID"; wait "$DAEMON_PID" 2>/dev/null || true; DAEMON_PID=
start_daemon --emulate 5GiB,2GiB
cg cdi generate --output "$SPEC" 2>"$TMP/gen.err"
check "the spec of a two-GPU daemon has devices 0 and 1" python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))
assert [d["name"] for d in s["devices"]] == ["0", "1"], s["devices"]' "$SPEC"
refused "two convgpu devices" "one GPU" --device convgpu.io/gpu=0 --device convgpu.io/gpu=1 \
    -e CONVGPU_GPU_MEMORY=1GiB
gpu1=$(prun -d --device convgpu.io/gpu=1 -e CONVGPU_GPU_MEMORY=1GiB \
    cg-sample:1 convgpu-sample --size 100MiB --hold --quiet)
wait_for "the container on GPU 1 is registered" "$WAIT_S" \
    bash -c "[ \"\$(${CURL_STATUS[*]} http://convgpu/v1/containers/${gpu1:0:32})\" = 200 ]" || true
check "convgpu.io/gpu=1 registers on device 1" test "$(container_field "${gpu1:0:32}" device)" = 1
pm rm -f -t 0 "$gpu1" >/dev/null

# A stale spec (GPU 0's UUID no longer the daemon's): refused, not run on a GPU it cannot see.
python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))
s["devices"][0]["containerEdits"]["env"] = ["CUDA_VISIBLE_DEVICES=GPU-00000000-0000-0000-0000-000000000000"]
json.dump(s, open(sys.argv[1], "w"))' "$SPEC"
refused "a stale spec" "stale" --device convgpu.io/gpu=0 -e CONVGPU_GPU_MEMORY=1GiB
# A broken spec: Podman 4.3 says only that the device cannot be resolved; nothing of ours runs.
echo '{"cdiVersion": "0.5.0", "kind": "convgpu.io/gpu", "devices": [' >"$SPEC"
refused "a spec that is not JSON" "unresolvable CDI devices convgpu.io/gpu=0" --device convgpu.io/gpu=0 -e CONVGPU_GPU_MEMORY=1GiB
check "nothing left registered" test "$(registered_count)" = 0
finish

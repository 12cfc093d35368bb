#!/usr/bin/env bash
# test_podman.sh — convgpu-runtime under a real Podman (conmon calls it as `create --pid-file`,
# like containerd), installed the way an operator would (`convgpu setup podman` writes the
# [engine.runtimes] entry, and conmon_env_vars with CONVGPU_RUNTIME_DIR, as Podman passes runtimes
# no options and conmon none of Podman's environment): the limit holds inside (over it: exit 2), memory info shows
# it, the container is registered under its id while it runs and released when it ends,
# `podman kill` returns the memory at once, a container that asks for nothing is untouched, and a
# limit no GPU has fails before the container starts. Private storage, runroot and configuration:
# the system's Podman state is never touched. Skips (77) where Podman cannot run a container.
. "$(dirname "$0")/lib.sh"
command -v podman >/dev/null || skip "podman is not installed (apt-get install podman)"
[ "$(id -u)" = 0 ] || skip "these podman tests run rootful"
start_daemon

P=$TMP/podman
mkdir -p "$P/tmp"
export CONTAINERS_CONF=$P/containers.conf
cg setup podman --config "$CONTAINERS_CONF" >"$TMP/setup.out"
check "setup podman names the shim" grep -q "convgpu = \[\"$SHIM\"\]" "$CONTAINERS_CONF"
check "setup podman passes the runtime directory through conmon" grep -q "\"CONVGPU_RUNTIME_DIR=$RUNDIR\"" "$CONTAINERS_CONF"
unset CONVGPU_RUNTIME_DIR # Podman would not pass it on anyway
pm() {
    podman --root "$P/root" --runroot "$P/runroot" --tmpdir "$P/tmp" --storage-driver vfs \
        --cgroup-manager cgroupfs --events-backend file "$@"
}
at_exit 'pm rm -af -t 0; pm system reset -f'
# Podman raises RLIMIT_NOFILE and RLIMIT_NPROC to its own defaults unless told, which a VM's
# limits may forbid. runc is the runtime in both roles (Podman's default here, crun, refuses
# hybrid cgroup hierarchies).
LIMITS=(--ulimit "nofile=$(ulimit -Hn):$(ulimit -Hn)" --ulimit nproc=1024:1024)
prun() { pm run --network none "${LIMITS[@]}" ${SAN_ARGS[@]+"${SAN_ARGS[@]}"} "$@"; }

make_rootfs "$TMP/img"
tar -C "$TMP/img" -c . | pm import - cg-sample:1 >/dev/null 2>"$TMP/import.err" ||
    skip "podman cannot import an image here: $(tail -n 1 "$TMP/import.err")"
if ! prun --rm --runtime runc cg-sample:1 true 2>"$TMP/probe.err"; then
    skip "podman cannot run a container here: $(tail -n 1 "$TMP/probe.err")"
fi

prun --rm --runtime convgpu -e CONVGPU_GPU_MEMORY=1GiB cg-sample:1 \
    convgpu-sample --size 800MiB --report >"$TMP/out1" 2>&1 && rc=0 || rc=$?
check "800MiB within a 1GiB limit: exit 0" test "$rc" = 0
check "memory info inside shows the 1GiB limit" grep -qx "mem_total_before=$((1 << 30))" "$TMP/out1"
prun --rm --runtime convgpu -e CONVGPU_GPU_MEMORY=1GiB cg-sample:1 \
    convgpu-sample --size 1100MiB --quiet && rc=0 || rc=$?
check "1100MiB over a 1GiB limit: exit 2 (out of memory)" test "$rc" = 2
check "both released when they ended" test "$(registered_count)" = 0

# A long-running container: registered under its id with the init pid; kill returns the memory.
id=$(prun -d --runtime convgpu -e CONVGPU_GPU_MEMORY=512MiB cg-sample:1 \
    convgpu-sample --size 300MiB --hold --quiet)
wait_for "the container's process holds 300MiB" "$WAIT_S" \
    bash -c "[ \"\$('$BUILD/bin/convgpu' --runtime-dir '$RUNDIR' inspect '${id:0:32}' | python3 -c 'import json,sys;print(json.load(sys.stdin)[\"used\"])')\" -ge $((300 << 20)) ]" &&
    pass "registered under the Podman id, 300MiB accounted" || fail "the container's allocation was not seen"
init=$(pm inspect -f '{{.State.Pid}}' "$id")
check "the daemon knows the init pid ($init)" test "$(container_field "${id:0:32}" init_pid)" = "$init"
pm kill "$id" >/dev/null
wait_for "released at once when killed" "$WAIT_S" bash -c "[ \"\$(curl -s -o /dev/null -w '%{http_code}' --unix-socket '$RUNDIR/control.sock' http://convgpu/v1/containers/${id:0:32})\" = 404 ]" &&
    pass "podman kill: the memory returned at once" || fail "still registered after podman kill"
pm rm "$id" >/dev/null

# Asks for nothing: untouched. A limit no GPU has: refused before the container starts.
prun --rm --runtime convgpu cg-sample:1 sh -c 'test ! -e /run/convgpu/container.sock && test -z "$LD_PRELOAD"' &&
    pass "no request: nothing mounted, no LD_PRELOAD" || fail "a container without a request was changed"
prun --rm --runtime convgpu -e CONVGPU_GPU_MEMORY=100GiB cg-sample:1 true 2>"$TMP/err" &&
    fail "100GiB accepted" || check "100GiB: refused with the daemon's reason" grep -q "does not fit" "$TMP/err"
check "nothing left registered" test "$(registered_count)" = 0
finish

#!/usr/bin/env bash
# test_docker.sh — convgpu with a real Docker engine: a private dockerd (vfs storage, no
# iptables, no bridge, its own data root, exec root and socket; a daemon.json written by
# `convgpu setup docker --config`), an image imported from a tiny local rootfs, containers run
# with --network none through `convgpu docker run`. Checks: the limit holds inside (over it:
# exit 2) and memory info shows it, --nvidia-memory, the image label fallback and the 1 GiB
# default, a container that asks for nothing is untouched, a second container that does not fit
# is suspended and resumes when the first exits, stop/start re-registers, kill and rm release at
# once, a limit no GPU has fails before the container starts; `convgpu doctor --deep` runs its
# tiny container through this engine, and names it broken with the daemon stopped. Skips (77)
# with the reason when dockerd cannot run here. Never touches a system dockerd or /etc/docker.
. "$(dirname "$0")/lib.sh"
docker_prereqs
start_daemon
start_dockerd
D=$DOCKER_DIR
check "setup docker wrote the runtime" grep -q '"convgpu"' "$D/daemon.json"
pass "private dockerd started"

# Images: the sample, a shell and their libraries; one with the paper's label.
docker_images
check "images imported" "$DOCKER" image inspect cg-sample:1 cg-labeled:1

# --- the limit inside a container ---
dr --rm --gpu-memory 1GiB cg-sample:1 convgpu-sample --size 800MiB --report >"$TMP/o1" 2>&1 && rc=0 || rc=$?
check "800MiB within 1GiB: exit 0" test "$rc" = 0
check "memory info inside shows the 1GiB limit" grep -qx "mem_total_before=$((1 << 30))" "$TMP/o1"
dr --rm --gpu-memory 1GiB cg-sample:1 convgpu-sample --size 1100MiB --quiet >"$TMP/o2" 2>&1 && rc=0 || rc=$?
check "1100MiB over 1GiB: exit 2 (out of memory)" test "$rc" = 2
dr --rm --nvidia-memory=512MiB cg-sample:1 convgpu-sample --size 600MiB --quiet >/dev/null 2>&1 && rc=0 || rc=$?
check "--nvidia-memory=512MiB (the paper's spelling): 600MiB refused" test "$rc" = 2
dr --rm cg-labeled:1 convgpu-sample --size 100MiB --report >"$TMP/o3" 2>"$TMP/e3" && rc=0 || rc=$?
check "image label com.nvidia.memory.limit=256MiB is the limit" grep -qx "mem_total_before=$((256 << 20))" "$TMP/o3"
check "label use is reported" grep -q "image label" "$TMP/e3"
dr --rm cg-sample:1 convgpu-sample --size 10MiB --report >"$TMP/o4" 2>/dev/null && rc=0 || rc=$?
check "no option, no label: the 1GiB default" grep -qx "mem_total_before=$((1 << 30))" "$TMP/o4"
# An environment without LD_PRELOAD and CONVGPU_SOCKET (as an ssh session gets): still limited.
noenv='exec env -i ${ASAN_OPTIONS:+ASAN_OPTIONS=$ASAN_OPTIONS} ${UBSAN_OPTIONS:+UBSAN_OPTIONS=$UBSAN_OPTIONS} LD_LIBRARY_PATH=$LD_LIBRARY_PATH CONVGPU_EMU_STATE=$CONVGPU_EMU_STATE CONVGPU_EMU_DEVICES=$CONVGPU_EMU_DEVICES /usr/local/bin/convgpu-sample --size 1100MiB --quiet'
dr --rm --gpu-memory 1GiB cg-sample:1 sh -c "$noenv" >/dev/null 2>&1 && rc=0 || rc=$?
check "a process whose environment was reset is still limited (ld.so.preload): exit 2" test "$rc" = 2
check "every container released after --rm" test "$(registered_count)" = 0

# --- asks for nothing: untouched ---
untouched='test ! -e /run/convgpu && test ! -e /etc/ld.so.preload && test -z "$LD_PRELOAD"'
"$DOCKER" run --rm --network none cg-sample:1 sh -c "$untouched" && rc=0 || rc=$?
check "plain docker run (runc): nothing of convgpu inside" test "$rc" = 0
"$DOCKER" run --rm --network none --runtime convgpu cg-sample:1 sh -c "$untouched" && rc=0 || rc=$?
check "--runtime convgpu without a request: passed through untouched" test "$rc" = 0
check "nothing registered for them" test "$(registered_count)" = 0

# --- a limit no GPU has: fails before the container starts ---
dr --rm --gpu-memory 100GiB cg-sample:1 convgpu-sample >/dev/null 2>"$TMP/e5" && rc=0 || rc=$?
check "100GiB on a 5GiB GPU: docker run fails" test "$rc" != 0
check "... with the daemon's reason" grep -q "does not fit" "$TMP/e5"
check "... and nothing registered" test "$(registered_count)" = 0

# --- two containers whose limits exceed the device: the second waits for the first ---
# A holds its memory until the test has seen B suspended (it touches release.A in the gate).
# Both verify only 1 MiB of each piece: copying 3.5 GiB took A about 50 s of CPU on a loaded
# machine, after "A holds its memory" (use is charged at allocation) and past `docker wait`'s
# deadline; what is tested here is the suspension, other tests verify whole allocations.
A=$(dr -d -v "$GATE:/gate:ro" --gpu-memory 4GiB cg-sample:1 convgpu-sample --size 3500MiB \
    --touch 1MiB --hold-until /gate/release.A --quiet)
wait_for "A holds its memory" "$WAIT_S" bash -c "[ \"\$('$BUILD/bin/convgpu' --runtime-dir '$RUNDIR' inspect $A | python3 -c 'import json,sys;print(json.load(sys.stdin)[\"used\"])')\" -gt 0 ]" &&
    pass "A runs and holds 3500MiB" || fail "A did not start"
B=$(dr -d --gpu-memory 3GiB cg-sample:1 convgpu-sample --size 2GiB --touch 1MiB --quiet)
wait_for "B suspended" "$WAIT_S" bash -c "[ \"\$('$BUILD/bin/convgpu' --runtime-dir '$RUNDIR' inspect $B | python3 -c 'import json,sys;print(json.load(sys.stdin)[\"state\"])')\" = suspended ]" &&
    pass "B (3GiB limit, 2GiB asked) is suspended while A holds its memory" || fail "B was not suspended"
touch "$GATE/release.A"
check "A finishes: exit 0" test "$(timeout "$WAIT_S" "$DOCKER" wait "$A")" = 0
check "B resumes when A exits and finishes: exit 0" test "$(timeout "$WAIT_S" "$DOCKER" wait "$B")" = 0
check "A released when it stopped" test "$(api GET "/v1/containers/$A")" = 404
"$DOCKER" rm "$A" "$B" >/dev/null

# --- stop, start again, kill, rm ---
C=$(dr -d --gpu-memory 1GiB cg-sample:1 convgpu-sample --size 500MiB --hold --quiet)
check "running container registered under its Docker id" test "$(api GET "/v1/containers/$C")" = 200
"$DOCKER" stop -t 1 "$C" >/dev/null
check "docker stop: released" test "$(api GET "/v1/containers/$C")" = 404
"$DOCKER" start "$C" >/dev/null
check "docker start: registered again" test "$(api GET "/v1/containers/$C")" = 200
wait_for "C holds memory again" "$WAIT_S" bash -c "[ \"\$('$BUILD/bin/convgpu' --runtime-dir '$RUNDIR' inspect $C | python3 -c 'import json,sys;print(json.load(sys.stdin)[\"used\"])')\" -gt 0 ]" || true
"$DOCKER" kill "$C" >/dev/null
released() { [ "$(api GET "/v1/containers/$1")" = 404 ]; }
wait_for "kill releases" "$WAIT_S" released "$C" &&
    pass "docker kill: released, its memory returned" || fail "docker kill did not release"
check "device assignment back to 0" bash -c "curl -s --unix-socket '$RUNDIR/control.sock' http://convgpu/v1/devices | python3 -c 'import json,sys; d=json.load(sys.stdin); d=d[0] if isinstance(d,list) else d[\"devices\"][0]; assert d[\"assigned\"]==0, d'"
"$DOCKER" start "$C" >/dev/null
"$DOCKER" rm -f "$C" >/dev/null
check "docker rm -f: released" test "$(api GET "/v1/containers/$C")" = 404
check "nothing left registered" test "$(registered_count)" = 0

# --- convgpu doctor --deep with this real engine: a tiny container under the convgpu runtime.
# The docker it runs is this engine's client, given the sanitizer's variables as dr() gives
# them (an instrumented interposer is preloaded into the container's processes).
printf '#!/bin/sh\nverb=$1; shift\nexec "%s" "$verb" %s "$@"\n' "$DOCKER" "${SAN_ARGS[*]:-}" >"$TMP/docker-deep"
chmod +x "$TMP/docker-deep"
deep_status() { # deep_status: the container check's status and what it said
    CONVGPU_DOCKER=$TMP/docker-deep CONVGPU_DOCTOR_IMAGE=cg-sample:1 \
        "$BUILD/bin/convgpu" --runtime-dir "$RUNDIR" doctor --deep --json 2>/dev/null |
        python3 -c 'import json,sys; c=next(c for c in json.load(sys.stdin)["checks"] if c["check"]=="container"); print(c["status"], c["what"])'
}
st=$(deep_status)
check "doctor --deep: a real 64MiB container ran under the convgpu runtime ($st)" \
    grep -q "^ok a 64MiB container of cg-sample:1 ran under the convgpu runtime" <<<"$st"
check "... and was released" test "$(registered_count)" = 0
# Planted: the daemon stopped, so the runtime's hook cannot register the container.
kill -TERM "$DAEMON_PID"; wait "$DAEMON_PID" 2>/dev/null; DAEMON_PID=
st=$(deep_status)
check "doctor --deep with convgpud stopped: broken, with docker's words ($st)" \
    grep -q "^broken a 64MiB container of cg-sample:1 under the convgpu runtime failed: .*[a-z]" <<<"$st"
finish

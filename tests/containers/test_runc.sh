#!/usr/bin/env bash
# test_runc.sh — convgpu-runtime in front of real runc on a bundle (`runc spec` + a tiny rootfs),
# no engine: the limit holds inside the container (over it: exit 2), memory info shows it, the
# daemon sees the container's process, a process whose environment lacks LD_PRELOAD is still
# limited (ld.so.preload), a container that asks for nothing is untouched, stop + start again
# re-registers, delete and poststop release; with --pid-file (containerd's way) no hooks, and the
# daemon releases the container when its init exits.
. "$(dirname "$0")/lib.sh"
command -v runc >/dev/null || skip "runc is not installed (apt-get install runc)"
[ "$(id -u)" = 0 ] || skip "runc needs root here"
start_daemon

ROOT=$TMP/runc-root
at_exit 'for c in $(runc --root "$ROOT" list -q 2>/dev/null); do runc --root "$ROOT" delete -f "$c"; done'
rt() { "$SHIM" --runtime-dir "$RUNDIR" --root "$ROOT" "$@"; }

B=$TMP/bundle
mkdir -p "$B"
make_rootfs "$B/rootfs"
(cd "$B" && runc spec && mv config.json "$TMP/spec.json")
set_config() { # set_config ENV-JSON-LIST ARGS-JSON-LIST: a fresh config.json from runc spec's
    python3 - "$B/config.json" "$1" "$2" "$TMP/spec.json" "$(san_env_json)" <<'PY'
import json, sys
p, env, args = sys.argv[1], json.loads(sys.argv[2]) + json.loads(sys.argv[5]), json.loads(sys.argv[3])
c = json.load(open(sys.argv[4]))
c["process"]["terminal"] = False
c["process"]["env"] = ["PATH=/usr/local/bin:/bin:/usr/bin"] + env
c["process"]["args"] = args
json.dump(c, open(p, "w"), indent="\t")
PY
}

# --- within and over the limit ---
set_config '["CONVGPU_GPU_MEMORY=1GiB"]' '["convgpu-sample","--size","800MiB","--report"]'
rt run --bundle "$B" lim1 </dev/null >"$TMP/out1" 2>&1 && rc=0 || rc=$?
check "800MiB within a 1GiB limit: exit 0" test "$rc" = 0
check "memory info inside shows the 1GiB limit" grep -qx "mem_total_before=$((1 << 30))" "$TMP/out1"
check "run ended: released" test "$(api GET /v1/containers/lim1)" = 404
set_config '["CONVGPU_GPU_MEMORY=1GiB"]' '["convgpu-sample","--size","1100MiB","--quiet"]'
rt run --bundle "$B" lim2 </dev/null >"$TMP/out2" 2>&1 && rc=0 || rc=$?
check "1100MiB over a 1GiB limit: exit 2 (out of memory)" test "$rc" = 2
set_config '[]' '["convgpu-sample","--size","100MiB","--quiet"]'
python3 - "$B/config.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1])); c["annotations"] = {"com.nvidia.memory.limit": "64MiB"}
json.dump(c, open(sys.argv[1], "w"), indent="\t")
PY
rt run --bundle "$B" lim3 </dev/null >"$TMP/out3" 2>&1 && rc=0 || rc=$?
check "the paper's annotation com.nvidia.memory.limit=64MiB: 100MiB is refused (exit 2)" test "$rc" = 2

# --- a long-running container: the daemon sees it; ld.so.preload without LD_PRELOAD ---
set_config '["CONVGPU_GPU_MEMORY=512MiB"]' '["convgpu-sample","--size","200MiB","--hold","--quiet"]'
rt create --bundle "$B" long1 </dev/null >/dev/null 2>"$TMP/create.err"
check "create: registered before start" test "$(api GET /v1/containers/long1)" = 200
rt start long1
check "createRuntime hook logged the init pid" grep -q "container long1: init pid [0-9]" "$RUNDIR/oci/runtime.log"
wait_for "the container's process holds memory" "$WAIT_S" \
    bash -c "[ \"\$('$BUILD/bin/convgpu' --runtime-dir '$RUNDIR' inspect long1 | python3 -c 'import json,sys;print(json.load(sys.stdin)[\"used\"])')\" -ge $((200 << 20)) ]" &&
    pass "daemon accounts 200MiB used by the container" || fail "daemon did not see the container's allocation"
init=$(runc --root "$ROOT" state long1 | json_get pid)
check "daemon's process list has the container's init (host pid $init)" bash -c \
    "'$BUILD/bin/convgpu' --runtime-dir '$RUNDIR' inspect long1 | grep -q '\"pid\": *$init\\b'"
check "createRuntime hook told the daemon the init pid" bash -c \
    "'$BUILD/bin/convgpu' --runtime-dir '$RUNDIR' inspect long1 | grep -q '\"init_pid\": *$init\\b'"
check "/etc/ld.so.preload names the interposer" bash -c \
    "runc --root '$ROOT' exec long1 cat /etc/ld.so.preload | grep -qx /usr/lib/convgpu/libconvgpu.so"
emu=$(python3 -c 'import json,sys
print(json.dumps([e for e in json.load(open(sys.argv[1]))["process"]["env"] if e.split("=")[0] in ("LD_LIBRARY_PATH","CONVGPU_EMU_STATE","CONVGPU_EMU_DEVICES","PATH","ASAN_OPTIONS","UBSAN_OPTIONS")]))' "$B/config.json")
cat >"$TMP/proc.json" <<JSON
{"terminal": false, "user": {"uid": 0, "gid": 0}, "cwd": "/", "env": $emu,
 "args": ["convgpu-sample", "--size", "400MiB", "--quiet"]}
JSON
runc --root "$ROOT" exec -p "$TMP/proc.json" long1 </dev/null >"$TMP/out4" 2>&1 && rc=0 || rc=$?
check "a process without LD_PRELOAD/CONVGPU_SOCKET is still limited (ld.so.preload): exit 2" test "$rc" = 2
runc --root "$ROOT" kill long1 KILL
wait_for "container stopped" "$WAIT_S" bash -c "runc --root '$ROOT' state long1 | grep -q '\"status\": \"stopped\"'"
rt delete long1
check "delete: released" test "$(api GET /v1/containers/long1)" = 404
rt delete long1 2>/dev/null || true
check "delete again: still released, nothing else" test "$(registered_count)" = 0

# --- stopped and started again: registered again ---
rt create --bundle "$B" again1 </dev/null >/dev/null
rt start again1
runc --root "$ROOT" kill again1 KILL
wait_for "container stopped" "$WAIT_S" bash -c "runc --root '$ROOT' state again1 | grep -q '\"status\": \"stopped\"'"
rt delete again1
check "first life released" test "$(api GET /v1/containers/again1)" = 404
rt create --bundle "$B" again1 </dev/null >/dev/null
check "second create on the same (rewritten) bundle registers again" test "$(api GET /v1/containers/again1)" = 200
check "mounts not duplicated" test "$(grep -c '"destination": "/run/convgpu"' "$B/config.json")" = 1
runc --root "$ROOT" delete -f again1 # the real runtime directly: the poststop hook releases
check "poststop hook releases when runc itself deletes" test "$(api GET /v1/containers/again1)" = 404

# --- create --pid-file, as containerd calls it: no hooks; the shim reports the init and the
#     daemon releases the container the moment it exits ---
set_config '["CONVGPU_GPU_MEMORY=256MiB"]' '["convgpu-sample","--size","100MiB","--hold","--quiet"]'
rt create --bundle "$B" --pid-file "$TMP/pf1.pid" pf1 </dev/null >/dev/null
check "pid-file: no hooks in config.json" bash -c "! grep -q 'create-runtime' '$B/config.json'"
check "pid-file: the daemon has the init pid from the pid file" test "$(container_field pf1 init_pid)" = "$(cat "$TMP/pf1.pid")"
check "pid-file: the init pid is runc's" test "$(runc --root "$ROOT" state pf1 | json_get pid)" = "$(cat "$TMP/pf1.pid")"
rt start pf1
wait_for "the container's process holds memory" "$WAIT_S" \
    bash -c "[ \"\$('$BUILD/bin/convgpu' --runtime-dir '$RUNDIR' inspect pf1 | python3 -c 'import json,sys;print(json.load(sys.stdin)[\"used\"])')\" -ge $((100 << 20)) ]" &&
    pass "pid-file: the limit applies (100MiB accounted)" || fail "pid-file: allocation not seen"
runc --root "$ROOT" kill pf1 KILL
wait_for "released at the init's exit, before any delete" "$WAIT_S" bash -c "[ \"\$(curl -s -o /dev/null -w '%{http_code}' --unix-socket '$RUNDIR/control.sock' http://convgpu/v1/containers/pf1)\" = 404 ]" &&
    pass "pid-file: released when the container stopped" || fail "pid-file: still registered after the container stopped"
rt delete pf1
check "pid-file: delete cleans the shim state" test ! -e "$RUNDIR/oci/pf1"
rt create --bundle "$B" --pid-file "$TMP/pf1.pid" pf1 </dev/null >/dev/null
check "pid-file: created again, registered again" test "$(api GET /v1/containers/pf1)" = 200
rt delete --force pf1
wait_for "delete --force of a created container releases it (its init is killed)" "$WAIT_S" bash -c "[ \"\$(curl -s -o /dev/null -w '%{http_code}' --unix-socket '$RUNDIR/control.sock' http://convgpu/v1/containers/pf1)\" = 404 ]" &&
    pass "pid-file: delete --force released it" || fail "pid-file: still registered after delete --force"

# --- asks for nothing: untouched ---
# (runc left the earlier mount points in this rootfs: empty, as nothing is mounted on them now)
set_config '[]' '["/bin/sh","-c","test ! -e /run/convgpu/container.sock && test ! -s /etc/ld.so.preload && test -z \"$LD_PRELOAD\""]'
cp "$B/config.json" "$TMP/plain.json"
rt run --bundle "$B" plain1 </dev/null && rc=0 || rc=$?
check "no request: nothing mounted, no LD_PRELOAD inside" test "$rc" = 0
check "no request: config.json byte-identical" cmp -s "$B/config.json" "$TMP/plain.json"
check "no request: nothing registered" test "$(registered_count)" = 0
finish

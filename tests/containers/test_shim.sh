#!/usr/bin/env bash
# test_shim.sh — convgpu-runtime against a fake runtime that records its arguments: pass-through
# is byte-identical, the real runtime gets every argument untouched, create registers before
# the runtime runs and delete releases (both idempotent), a failed create leaves nothing
# registered, bad inputs change nothing, the hooks read OCI state from stdin, the log follows
# runc's --log/--log-format and nothing is written on stdout.
. "$(dirname "$0")/lib.sh"
start_daemon

FAKE=$TMP/fake-runc
cat >"$FAKE" <<'SH'
#!/bin/sh
# Records its arguments (one per line) and whether the container was registered when it ran.
printf '%s\n' "$@" >"$FAKE_DIR/args.$FAKE_N"
for a in "$@"; do last=$a; done
curl -s -o /dev/null -w '%{http_code}' --unix-socket "$FAKE_RUNDIR/control.sock" \
    "http://convgpu/v1/containers/$last" >"$FAKE_DIR/seen.$FAKE_N"
case " $* " in *" state "*) exit "${FAKE_STATE_RC:-1}" ;; esac
exit "${FAKE_RC:-0}"
SH
chmod +x "$FAKE"
export FAKE_DIR=$TMP FAKE_RUNDIR=$RUNDIR FAKE_N=0
n=0
next_call() { n=$((n + 1)); } # call before `out=$(shim ...)`: a subshell cannot count for us
shim() { FAKE_N=$n "$SHIM" --runtime "$FAKE" --runtime-dir "$RUNDIR" "$@"; }
args_of() { cat "$TMP/args.$1"; }

B=$TMP/bundle
mkdir -p "$B"
plain='{"ociVersion":"1.0.2","process":{"args":["/bin/true"],"env":["PATH=/bin"]},"root":{"path":"rootfs"}}'
asks='{"ociVersion":"1.0.2","process":{"args":["/bin/true"],"env":["PATH=/bin","CONVGPU_GPU_MEMORY=1GiB"]},"root":{"path":"rootfs"}}'

# --- pass-through ---
printf '%s\n' "$plain" >"$B/config.json"; chmod 0640 "$B/config.json"; cp -p "$B/config.json" "$TMP/orig.json"
next_call
out=$(shim --root "$TMP/r" --log "$TMP/l.json" --log-format json create --bundle "$B" --pid-file "$B/pid" plain1)
check "pass-through: config.json byte-identical" cmp -s "$B/config.json" "$TMP/orig.json"
check "pass-through: nothing on stdout" test -z "$out"
check "pass-through: runtime got every argument but the shim's" test "$(args_of $n | tr '\n' ' ')" = \
    "--root $TMP/r --log $TMP/l.json --log-format json create --bundle $B --pid-file $B/pid plain1 "
check "pass-through: nothing registered" test "$(registered_count)" = 0
check "pass-through: no shim state" test ! -e "$RUNDIR/oci/plain1"
next_call
shim --debug state plain1 || true
check "other commands go through untouched" test "$(args_of $n | tr '\n' ' ')" = "--debug state plain1 "

# --- create registers first, delete releases ---
printf '%s\n' "$asks" >"$B/config.json"; chmod 0640 "$B/config.json"
next_call
out=$( (cd "$B" && shim --root "$TMP/r" create c1) )
check "create: runtime saw the container registered (200)" test "$(cat "$TMP/seen.$n")" = 200
check "create: runtime got the arguments untouched" test "$(args_of $n | tr '\n' ' ')" = "--root $TMP/r create c1 "
check "create: nothing on stdout" test -z "$out"
check "create: limit 1GiB in the daemon" test "$(container_field c1 limit)" = $((1 << 30))
check "create: config.json mode kept" test "$(stat -c %a "$B/config.json")" = 640
check "create: config.json has the socket mount" grep -q '"/run/convgpu"' "$B/config.json"
check "create: config.json has LD_PRELOAD" grep -q 'LD_PRELOAD=/usr/lib/convgpu/libconvgpu.so' "$B/config.json"
check "create: ld.so.preload generated" grep -qx /usr/lib/convgpu/libconvgpu.so "$RUNDIR/oci/c1/ld.so.preload"
check "create: no temporary file left" test ! -e "$B/config.json.convgpu-tmp"
cp "$B/config.json" "$TMP/after1.json"
next_call
shim delete c1
check "delete: released" test "$(api GET /v1/containers/c1)" = 404
check "delete: shim state removed" test ! -e "$RUNDIR/oci/c1"
next_call
FAKE_RC=1 shim delete c1 && fail "delete of a deleted container should fail like runc" || true
check "delete again: idempotent" test "$(api GET /v1/containers/c1)" = 404
next_call
(cd "$B" && shim create c1)
check "created again on the rewritten bundle: registered again" test "$(container_field c1 limit)" = $((1 << 30))
check "created again: config.json identical to the first rewrite" cmp -s "$B/config.json" "$TMP/after1.json"
next_call
FAKE_RC=1 FAKE_STATE_RC=0 shim delete c1 && fail "delete that fails should fail" || true
check "failed delete of a container that still exists keeps it" test "$(api GET /v1/containers/c1)" = 200
next_call
shim delete --force c1
check "delete --force releases" test "$(api GET /v1/containers/c1)" = 404

# --- the runtime fails to create: nothing stays registered ---
printf '%s\n' "$asks" >"$B/config.json"
next_call
FAKE_RC=3 shim create --bundle "$B" c2 && rc=0 || rc=$?
check "failed create: exit status of the runtime" test "$rc" = 3
check "failed create: released" test "$(api GET /v1/containers/c2)" = 404

# --- stale registration without processes is replaced ---
curl -s -o /dev/null --unix-socket "$RUNDIR/control.sock" -X POST \
    -d '{"gpu_memory":"2GiB","id":"c3","auto_remove":false}' http://convgpu/v1/containers
next_call
shim create --bundle "$B" c3
check "stale registration replaced (limit now 1GiB)" test "$(container_field c3 limit)" = $((1 << 30))
next_call
shim delete c3

# --- bad inputs: clear error, config untouched, nothing registered, runtime never run ---
bad_case() { # bad_case DESCRIPTION EXPECTED-STDERR CONFIG-TEXT [shim options]
    local what=$1 want=$2 text=$3; shift 3
    printf '%s\n' "$text" >"$B/config.json"; cp "$B/config.json" "$TMP/bad.json"
    local before=$n
    next_call
    if shim "$@" create --bundle "$B" bad1 2>"$TMP/err"; then fail "$what: accepted"; return; fi
    grep -q "$want" "$TMP/err" && pass "$what: says '$want'" || fail "$what: stderr: $(cat "$TMP/err")"
    check "$what: config.json untouched" cmp -s "$B/config.json" "$TMP/bad.json"
    check "$what: nothing registered" test "$(registered_count)" = 0
    check "$what: runtime not run" test ! -e "$TMP/args.$((before + 1))"
}
bad_case "malformed config.json" "not valid JSON" '{"process": {'
bad_case "malformed size" "bad GPU-memory size 'lots'" '{"process":{"env":["CONVGPU_GPU_MEMORY=lots"]}}'
bad_case "zero size" "greater than zero" '{"process":{"env":["CONVGPU_GPU_MEMORY=0"]}}'
bad_case "absurd size" "does not fit" '{"process":{"env":["CONVGPU_GPU_MEMORY=100TiB"]}}'
bad_case "no process section" "no \"process\" section" '{"annotations":{"com.nvidia.memory.limit":"1GiB"}}'
bad_case "bad device" "bad GPU index" '{"process":{"env":["CONVGPU_GPU_MEMORY=1GiB","CONVGPU_GPU_DEVICE=seven"]}}'
mkdir -p "$TMP/nodaemon"
bad_case "daemon down" "cannot reach convgpud" "$asks" --runtime-dir "$TMP/nodaemon"
printf '%s\n' "$asks" >"$B/config.json"
rm -f "$TMP/l.json"
next_call
shim --runtime-dir "$TMP/nodaemon" --log "$TMP/l.json" --log-format json create --bundle "$B" bad2 2>/dev/null || true
check "errors reach runc's --log in its JSON format" python3 -c '
import json,sys
ls=[json.loads(l) for l in open(sys.argv[1])]
assert any(l["level"]=="error" and "cannot reach convgpud" in l["msg"] for l in ls)' "$TMP/l.json"

# --- hooks ---
next_call
shim create --bundle "$B" h1
echo "{\"ociVersion\":\"1.0.2\",\"id\":\"h1\",\"status\":\"creating\",\"pid\":4242,\"bundle\":\"$B\"}" |
    "$SHIM" --runtime-dir "$RUNDIR" hook create-runtime
check "create-runtime hook logs the init pid" grep -q "container h1: init pid 4242" "$RUNDIR/oci/runtime.log"
echo '{"id":"nobody","pid":1}' | "$SHIM" --runtime-dir "$RUNDIR" hook create-runtime 2>/dev/null &&
    fail "create-runtime accepted an unregistered container" || pass "create-runtime refuses an unregistered container"
echo 'garbage' | "$SHIM" --runtime-dir "$RUNDIR" hook create-runtime 2>/dev/null &&
    fail "create-runtime accepted garbage" || pass "create-runtime refuses a state that is not JSON"
echo '{"id":"h1"}' | "$SHIM" --runtime-dir "$RUNDIR" hook create-runtime 2>/dev/null &&
    fail "create-runtime accepted a state without pid" || pass "create-runtime refuses a state without pid"
echo '{"id":"h1","status":"stopped"}' | "$SHIM" --runtime-dir "$RUNDIR" hook poststop
check "poststop hook releases" test "$(api GET /v1/containers/h1)" = 404
echo '{"id":"h1","status":"stopped"}' | "$SHIM" --runtime-dir "$RUNDIR" hook poststop
check "poststop again: idempotent, shim state gone" test ! -e "$RUNDIR/oci/h1"

# --- help ---
check "convgpu-runtime --help" bash -c "'$SHIM' --help | grep -q 'OCI runtime'"
check "hook --help" bash -c "'$SHIM' hook --help | grep -q poststop"
finish

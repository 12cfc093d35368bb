#!/usr/bin/env bash
# test_shim.sh — convgpu-runtime against a fake runtime that records its arguments: pass-through
# is byte-identical, the real runtime gets every argument untouched, create registers before
# the runtime runs and delete releases (both idempotent), create --pid-file reports the init
# (released when it exits; delete then needs no daemon), a failed create leaves nothing
# registered, bad inputs change nothing, the hooks read OCI state from stdin, the log follows
# runc's --log/--log-format and nothing is written on stdout. A compute share (env
# CONVGPU_GPU_COMPUTE/CONVGPU_COMPUTE_MODE, else the com.convgpu.* annotations) is registered
# with the container, and a bad one is refused like a bad size.
. "$(dirname "$0")/lib.sh"
start_daemon

FAKE=$TMP/fake-runc
cat >"$FAKE" <<'SH'
#!/bin/sh
# Records its arguments (one per line) and whether the container was registered when it ran.
printf '%s\n' "$@" >"$FAKE_DIR/args.$FAKE_N"
prev=
for a in "$@"; do
    [ "$prev" = --pid-file ] && printf '%s' "${FAKE_PID:-$$}" >"$a" # as runc: the init's pid
    prev=$a last=$a
done
curl -s -o /dev/null -w '%{http_code}' --unix-socket "$FAKE_RUNDIR/control.sock" \
    "http://convgpu/v1/containers/$last" >"$FAKE_DIR/seen.$FAKE_N"
[ -n "${FAKE_RM:-}" ] && curl -s -o /dev/null -X DELETE --unix-socket "$FAKE_RUNDIR/control.sock" \
    "http://convgpu/v1/containers/$last"
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
next_call
out=$(shim --version)
check "--version: ours first, then the runtime's" test "$(head -n 1 <<<"$out")" = "convgpu-runtime version $(sed -n 's/^convgpu \(.*\)/\1/p' < <("$BUILD/bin/convgpu" --version))"
check "--version: the runtime got it" test "$(args_of $n | tr '\n' ' ')" = "--version "

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

# --- create --pid-file (containerd's way): the shim reports the init, no hooks, the daemon
#     removes the container when the init exits, delete has nothing to tell the daemon ---
printf '%s\n' "$asks" >"$B/config.json"
idle_process & init=$!
next_call
FAKE_PID=$init shim create --bundle "$B" --pid-file "$TMP/c4.pid" c4
check "pid-file: init pid reported" test "$(container_field c4 init_pid)" = "$init"
check "pid-file: removed when the init exits" test "$(container_field c4 auto_remove)" = True
check "pid-file: no hooks in config.json" bash -c "! grep -q 'create-runtime\|poststop' '$B/config.json'"
check "pid-file: marked watched" test -e "$RUNDIR/oci/c4/init-watched"
check "the log says how long registering and rewriting took" \
    grep -Eq "container c4: registered .*\(register [0-9]+\.[0-9]+ ms, rewrite [0-9]+\.[0-9]+ ms\)" "$RUNDIR/oci/runtime.log"
check "the log says how long the runtime's create and the report took" \
    grep -Eq "container c4: init pid $init reported \(runtime create [0-9]+\.[0-9] ms, report [0-9]+\.[0-9]+ ms\)" "$RUNDIR/oci/runtime.log"
kill "$init"; wait "$init" 2>/dev/null || true
wait_for "released when the init exits" "$WAIT_S" bash -c "[ \"\$(curl -s -o /dev/null -w '%{http_code}' --unix-socket '$RUNDIR/control.sock' http://convgpu/v1/containers/c4)\" = 404 ]" &&
    pass "pid-file: released as soon as the init exited" || fail "pid-file: still registered after the init exited"
mv "$RUNDIR/control.sock" "$RUNDIR/control.away" # delete must not need the daemon now
next_call
shim delete c4 2>"$TMP/err" && rc=0 || rc=$?
mv "$RUNDIR/control.away" "$RUNDIR/control.sock"
check "pid-file: delete succeeds without the daemon" test "$rc" = 0
check "pid-file: delete quiet" bash -c "[ ! -s '$TMP/err' ] && ! grep -q 'c4.*cannot' '$RUNDIR/oci/runtime.log'"
check "pid-file: delete removed the shim state" test ! -e "$RUNDIR/oci/c4"
check "pid-file: runtime got delete untouched" test "$(args_of $n | tr '\n' ' ')" = "delete c4 "
# A pid file that is not a pid: the container still runs with its limit; delete releases it.
next_call
FAKE_PID=garbage shim create --bundle "$B" --pid-file "$TMP/c5.pid" c5 && rc=0 || rc=$?
check "garbage pid file: create still succeeds" test "$rc" = 0
check "garbage pid file: registered, not watched" bash -c "[ \"\$(curl -s -o /dev/null -w '%{http_code}' --unix-socket '$RUNDIR/control.sock' http://convgpu/v1/containers/c5)\" = 200 ] && [ ! -e '$RUNDIR/oci/c5/init-watched' ]"
check "garbage pid file: logged" grep -q "cannot read the init pid from $TMP/c5.pid" "$RUNDIR/oci/runtime.log"
next_call
shim delete c5
check "garbage pid file: delete releases" test "$(api GET /v1/containers/c5)" = 404
# Removed from the daemon while the runtime created it: the container must not run.
idle_process & init=$!
next_call
FAKE_RM=1 FAKE_PID=$init shim create --bundle "$B" --pid-file "$TMP/c6.pid" c6 2>"$TMP/err" && rc=0 || rc=$?
kill "$init"; wait "$init" 2>/dev/null || true
check "registration gone during create: create fails" test "$rc" != 0
check "registration gone during create: the runtime was told to delete it" test "$(args_of $n | tr '\n' ' ')" = "delete --force c6 "
check "registration gone during create: said why" grep -q "c6 was removed from convgpud" "$RUNDIR/oci/runtime.log"
check "registration gone during create: no shim state" test ! -e "$RUNDIR/oci/c6"

# --- the runtime fails to create: nothing stays registered ---
printf '%s\n' "$asks" >"$B/config.json"
next_call
FAKE_RC=3 shim create --bundle "$B" c2 && rc=0 || rc=$?
check "failed create: exit status of the runtime" test "$rc" = 3
check "failed create: released" test "$(api GET /v1/containers/c2)" = 404
# A runtime that cannot be started at all (the shim starts it with posix_spawn, which reports
# the exec's failure to the shim): 127 like a shell, said on stderr, nothing registered.
printf '%s\n' "$asks" >"$B/config.json"
"$SHIM" --runtime "$TMP/no-such-runc" --runtime-dir "$RUNDIR" create --bundle "$B" c3 \
    2>"$TMP/err" && rc=0 || rc=$?
check "runtime missing: exit status 127" test "$rc" = 127
check "runtime missing: said which" grep -q "cannot run $TMP/no-such-runc" "$TMP/err"
check "runtime missing: released" test "$(api GET /v1/containers/c3)" = 404

# --- a compute share: env first, then annotations; registered with the container ---
printf '%s\n' '{"process":{"env":["CONVGPU_GPU_MEMORY=64MiB","CONVGPU_GPU_COMPUTE=30","CONVGPU_COMPUTE_MODE=hard"]},"annotations":{"com.convgpu.gpu-compute":"60","com.convgpu.compute-mode":"elastic"}}' >"$B/config.json"
next_call
shim create --bundle "$B" share1
check "share from the env: 30% hard in the daemon" test "$(container_field share1 gpu_compute) $(container_field share1 compute_mode)" = "30 hard"
printf '%s\n' '{"process":{"env":["CONVGPU_GPU_MEMORY=64MiB"]},"annotations":{"com.convgpu.gpu-compute":"60%","com.convgpu.compute-mode":"elastic"}}' >"$B/config.json"
next_call
shim create --bundle "$B" share2
check "share from the annotations: 60% elastic" test "$(container_field share2 gpu_compute) $(container_field share2 compute_mode)" = "60 elastic"
check "the shim's log names the share" grep -q "container share2: registered with 64MiB of GPU memory (from CONVGPU_GPU_MEMORY) and a 60% elastic compute share" "$RUNDIR/oci/runtime.log"
printf '%s\n' '{"process":{"env":["CONVGPU_GPU_MEMORY=64MiB","CONVGPU_GPU_COMPUTE=71","CONVGPU_COMPUTE_MODE=hard"]}}' >"$B/config.json"
cp "$B/config.json" "$TMP/bad.json"
before=$n
next_call
if shim create --bundle "$B" share3 2>"$TMP/err"; then fail "a hard share over 100% in all was accepted"; else
    check "hard shares over 100%: the daemon's refusal reaches the caller" grep -q "does not fit" "$TMP/err"
    check "hard shares over 100%: config.json untouched" cmp -s "$B/config.json" "$TMP/bad.json"
    check "hard shares over 100%: runtime not run" test ! -e "$TMP/args.$((before + 1))"
    check "hard shares over 100%: not registered" test "$(api GET /v1/containers/share3)" = 404
fi
next_call
shim delete share1
next_call
shim delete share2
printf '%s\n' "$asks" >"$B/config.json"

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
for share in 0 101 -5 30.5 abc ''; do
    bad_case "compute share '$share'" "bad compute share '$share'" "{\"process\":{\"env\":[\"CONVGPU_GPU_MEMORY=1GiB\",\"CONVGPU_GPU_COMPUTE=$share\"]}}"
done
bad_case "annotated compute share 30.5" "bad compute share '30.5' in com.convgpu.gpu-compute" '{"process":{},"annotations":{"com.convgpu.gpu-memory":"1GiB","com.convgpu.gpu-compute":"30.5"}}'
bad_case "unknown compute mode" "bad compute mode 'soft'" '{"process":{"env":["CONVGPU_GPU_MEMORY=1GiB","CONVGPU_GPU_COMPUTE=30","CONVGPU_COMPUTE_MODE=soft"]}}'
bad_case "compute mode without a share" "needs a share" '{"process":{"env":["CONVGPU_GPU_MEMORY=1GiB"]},"annotations":{"com.convgpu.compute-mode":"hard"}}'
bad_case "compute share without GPU memory" "but no GPU memory" '{"process":{"env":["CONVGPU_GPU_COMPUTE=30"]}}'
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

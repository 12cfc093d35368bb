#!/usr/bin/env bash
# test_cdi_generate.sh — `convgpu cdi generate` against a private daemon on a two-GPU emulator,
# without Podman: the spec's fields (cdiVersion 0.5.0, the kind and device names CDI accepts, one
# device per GPU with that GPU's UUID, the hooks with absolute paths and this runtime directory,
# the emulator's variables at their in-container paths, no LD_PRELOAD), --output written
# atomically (a new inode, no temporary file left, the old spec untouched when the daemon is
# down), every bad flag refused with exit 2, and the CDI hook refusing bad requests before it
# registers anything. test_cdi_podman.sh runs the spec under a real Podman.
. "$(dirname "$0")/../e2e/lib.sh"
start_daemon --emulate 5GiB,2GiB

cg cdi generate >"$TMP/spec.json" 2>"$TMP/gen.err"
check "generate to stdout: exit 0" test -s "$TMP/spec.json"
api GET /v1/devices | cut -d" " -f2- >"$TMP/devices.json"
check "the spec's fields" python3 - "$TMP/spec.json" "$TMP/devices.json" "$BUILD/bin/convgpu-runtime" "$RUNDIR" <<'EOF'
import json, re, sys
spec = json.load(open(sys.argv[1]))
devices = json.load(open(sys.argv[2]))
shim, rundir = sys.argv[3], sys.argv[4]
assert spec["cdiVersion"] == "0.5.0", spec["cdiVersion"]
# CDI's kind: a DNS-subdomain vendor, '/', a class name; device names: alphanumerics, - _ . :
assert re.fullmatch(r"[a-z0-9]([a-z0-9.-]*[a-z0-9])?/[A-Za-z0-9]([A-Za-z0-9_.-]*[A-Za-z0-9])?", spec["kind"])
assert spec["kind"] == "convgpu.io/gpu"
assert [d["name"] for d in spec["devices"]] == [str(d["index"]) for d in devices] == ["0", "1"]
for d, dev in zip(spec["devices"], devices):
    assert re.fullmatch(r"[A-Za-z0-9]([A-Za-z0-9_.:-]*[A-Za-z0-9])?", d["name"])
    e = d["containerEdits"]
    assert e["env"] == ["CUDA_VISIBLE_DEVICES=" + dev["uuid"]], e["env"]
    (h,) = e["hooks"]
    assert h["hookName"] == "createRuntime" and h["path"] == shim and h["timeout"] > 0, h
    assert h["args"] == ["convgpu-runtime", "--runtime-dir", rundir, "hook", "cdi-create-runtime",
                         "--device", d["name"]], h["args"]
common = spec["containerEdits"]
env = dict(v.split("=", 1) for v in common["env"])
assert env["CONVGPU_SOCKET"] == "/run/convgpu/container.sock", env
assert env["CONVGPU_EMU_STATE"] == "/run/convgpu-emu/state", env
assert env["CONVGPU_EMU_DEVICES"] == "5GiB,2GiB", env
assert env["LD_LIBRARY_PATH"].startswith("/"), env
assert "LD_PRELOAD" not in env, env  # the hook's /etc/ld.so.preload loads the interposer
(h,) = common["hooks"]
assert h["hookName"] == "poststop" and h["path"] == shim, h
assert h["args"] == ["convgpu-runtime", "--runtime-dir", rundir, "hook", "poststop"], h["args"]
for kind in ("mounts", "deviceNodes"):
    assert kind not in common, kind  # what is per container is mounted by the hook
EOF

# --output: a missing directory is created; the file is the same spec, mode 0644.
out=$TMP/etc/cdi/convgpu.json
cg cdi generate --output "$out" 2>"$TMP/gen.err"
check "--output into a missing directory: written" cmp -s "$out" "$TMP/spec.json"
check "--output: mode 0644" test "$(stat -c %a "$out")" = 644
check "--output: says what it wrote" grep -q "wrote $out (2 devices" "$TMP/gen.err"
ino=$(stat -c %i "$out")
cg cdi generate --output "$out" 2>/dev/null
check "regenerated: replaced by rename (a new inode), same content" \
    bash -c "[ \"\$(stat -c %i '$out')\" != '$ino' ] && cmp -s '$out' '$TMP/spec.json'"
check "no temporary file left beside it" test "$(ls "$TMP/etc/cdi")" = convgpu.json

# Bad flags: exit 2, nothing written.
bad() { # bad DESCRIPTION PATTERN ARGS...
    local what=$1 pat=$2; shift 2
    local rc=0
    cg cdi "$@" >"$TMP/bad.out" 2>"$TMP/bad.err" || rc=$?
    if [ "$rc" != 2 ]; then fail "$what: exit $rc, not 2"
    elif ! grep -q -- "$pat" "$TMP/bad.err"; then fail "$what: no '$pat' in: $(head -n 2 "$TMP/bad.err")"
    elif [ -s "$TMP/bad.out" ]; then fail "$what: wrote a spec to stdout"
    else pass "$what: exit 2 ($pat)"; fi
}
bad "no subcommand" "convgpu cdi generate"
bad "an unknown subcommand" "convgpu cdi generate" list
bad "an unknown option" "unknown option" generate --bogus
bad "--output without a value" "missing value" generate --output
bad "--output that is a directory" "not a regular file" generate --output "$TMP"
bad "a relative --runtime-dir" "absolute" generate --runtime-dir run
bad "a stray argument" "unexpected argument 'extra'" generate extra
: >"$TMP/plain-file"; chmod 644 "$TMP/plain-file"
bad "a --runtime-path that is not executable" "no executable convgpu-runtime" generate --runtime-path "$TMP/plain-file"
bad "a --runtime-path that is a directory" "no executable convgpu-runtime" generate --runtime-path "$BUILD/bin"
bad "a relative --runtime-path" "no executable convgpu-runtime" generate --runtime-path convgpu-runtime
check "convgpu --help lists cdi" bash -c "'$BUILD/bin/convgpu' --help | grep -q '^  cdi '"
check "cdi generate --help: exit 0 with the usage" bash -c "'$BUILD/bin/convgpu' cdi generate --help | grep -q 'Usage: convgpu cdi generate'"

# The daemon down: exit 1 with the reason; the installed spec stays as it was.
cp "$out" "$TMP/before.json"
stop_daemon_hard
rc=0
cg cdi generate --output "$out" 2>"$TMP/down.err" || rc=$?
check "daemon down: exit 1" test "$rc" = 1
check "daemon down: says it cannot reach convgpud" grep -q "cannot reach convgpud" "$TMP/down.err"
check "daemon down: the old spec untouched, no temporary file" \
    bash -c "cmp -s '$out' '$TMP/before.json' && [ \"\$(ls '$TMP/etc/cdi')\" = convgpu.json ]"

# The hook refuses what it cannot honour before registering anything (its mounting and the
# registration are exercised by test_cdi_podman.sh under a real runc).
start_daemon --emulate 5GiB,2GiB
mkdir -p "$TMP/bundle/rootfs"
bundle() { # bundle ENV-JSON-ARRAY CREATE-RUNTIME-HOOK-COUNT [MOUNT-DESTINATION]
    python3 - "$TMP/bundle/config.json" "$1" "$2" "${3:-}" <<'EOF'
import json, sys
hook = {"path": "/x", "args": ["convgpu-runtime", "hook", "cdi-create-runtime", "--device", "0"]}
mounts = [{"destination": sys.argv[4], "type": "bind", "source": "/tmp"}] if sys.argv[4] else []
json.dump({"ociVersion": "1.0.2", "root": {"path": "rootfs"}, "mounts": mounts,
           "process": {"args": ["true"], "cwd": "/", "env": json.loads(sys.argv[2])},
           "hooks": {"createRuntime": [hook] * int(sys.argv[3])}}, open(sys.argv[1], "w"))
EOF
}
SHIM=$BUILD/bin/convgpu-runtime
hook() { # hook ARGS... < state
    "$SHIM" --runtime-dir "$RUNDIR" hook cdi-create-runtime "$@"
}
# The state names a process that has exited: a hook that got past its checks could not mount
# into any namespace, least of all this test's own.
true & gone=$!; wait "$gone"
STATE="{\"ociVersion\":\"1.0.2\",\"id\":\"cdi-hook-test\",\"status\":\"creating\",\"pid\":$gone,\"bundle\":\"$TMP/bundle\"}"
hook_refuses() { # hook_refuses DESCRIPTION PATTERN EXPECTED-RC ARGS...
    local what=$1 pat=$2 want=$3; shift 3
    local rc=0
    echo "$STATE" | hook "$@" >/dev/null 2>"$TMP/hook.err" || rc=$?
    if [ "$rc" != "$want" ]; then fail "$what: exit $rc, not $want"
    elif ! grep -q -- "$pat" "$TMP/hook.err"; then fail "$what: no '$pat' in: $(head -n 2 "$TMP/hook.err")"
    elif [ "$(api GET /v1/containers | cut -d' ' -f2-)" != "[]" ]; then fail "$what: something registered"
    else pass "hook: $what: refused, nothing registered"; fi
}
bundle '["CONVGPU_GPU_MEMORY=1GiB"]' 1
hook_refuses "no --device" "Usage" 2
hook_refuses "a device that is not an index" "Usage" 2 --device gpu0
hook_refuses "a negative device" "Usage" 2 --device -1
bundle '[]' 1
hook_refuses "no GPU-memory request" "set CONVGPU_GPU_MEMORY" 1 --device 0
bundle '["CONVGPU_GPU_MEMORY=1GiB"]' 2
hook_refuses "two convgpu devices" "ask for one" 1 --device 0
bundle '["CONVGPU_GPU_MEMORY=1GiB", "CONVGPU_GPU_DEVICE=1"]' 1
hook_refuses "CONVGPU_GPU_DEVICE against the CDI device" "one GPU only" 1 --device 0
bundle '["CONVGPU_GPU_MEMORY=1GiB"]' 1 /run/convgpu
hook_refuses "a container the OCI shim wired already" "not both" 1 --device 0
uuid0=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[0]["uuid"])' "$TMP/devices.json")
bundle "[\"CONVGPU_GPU_MEMORY=1GiB\", \"CUDA_VISIBLE_DEVICES=$uuid0\"]" 1
hook_refuses "a container whose init is gone (registered, then released)" "/proc/$gone/ns/mnt" 1 --device 0
check "hook: the daemon saw the registration it released (its events: cdi-hook-test removed)" \
    has_event removed cdi-hook-test
rc=0; echo '{"id": "x"' | hook --device 0 >/dev/null 2>"$TMP/hook.err" || rc=$?
check "hook: a state that is not JSON: exit 1" test "$rc" = 1
rc=0; echo "{\"id\":\"x\",\"bundle\":\"$TMP/bundle\"}" | hook --device 0 >/dev/null 2>"$TMP/hook.err" || rc=$?
check "hook: a state without a pid: exit 1, says so" bash -c "[ $rc = 1 ] && grep -q 'no init pid' '$TMP/hook.err'"
finish

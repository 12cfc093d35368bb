#!/usr/bin/env bash
# test_setup.sh — `convgpu setup docker|podman` on files of the test's own (--config): installs
# the runtime preserving every other key, backs up first, is idempotent, keeps the file mode,
# refuses invalid JSON without touching it, --dry-run changes nothing, --remove undoes it.
. "$(dirname "$0")/lib.sh"
C="$BUILD/bin/convgpu --runtime-dir /run/cg-test"
F=$TMP/daemon.json
backups() { ls "$F".convgpu-backup-* 2>/dev/null | wc -l; }

# A fresh file (and its directory) is created.
$C setup docker --config "$TMP/new/dir/daemon.json" >"$TMP/out"
check "new daemon.json created with the runtime" python3 -c '
import json,sys; c=json.load(open(sys.argv[1]))
r=c["runtimes"]["convgpu"]; assert r["path"].endswith("/convgpu-runtime"), r
assert r["runtimeArgs"]==["--runtime-dir","/run/cg-test"], r' "$TMP/new/dir/daemon.json"
check "tells what to restart" grep -q "restart" "$TMP/out"
# The default runtime directory needs no runtimeArgs, which would make dockerd run a /bin/sh
# wrapper for every OCI command.
"$BUILD/bin/convgpu" --runtime-dir /run/convgpu setup docker --config "$TMP/default/daemon.json" >/dev/null
check "default runtime directory: no runtimeArgs" python3 -c '
import json,sys; r=json.load(open(sys.argv[1]))["runtimes"]["convgpu"]
assert r["path"].endswith("/convgpu-runtime") and "runtimeArgs" not in r, r' "$TMP/default/daemon.json"
"$BUILD/bin/convgpu" --runtime-dir /run/convgpu setup docker --config "$TMP/default/daemon.json" --runc /usr/bin/crun >/dev/null
check "default directory with --runc: only the runtime" python3 -c '
import json,sys; r=json.load(open(sys.argv[1]))["runtimes"]["convgpu"]
assert r["runtimeArgs"]==["--runtime","/usr/bin/crun"], r' "$TMP/default/daemon.json"

# An existing file keeps every other key; a backup is made; mode kept.
cat >"$F" <<'JSON'
{"log-level": "warn", "default-runtime": "runc", "runtimes": {"nvidia": {"path": "nvidia-container-runtime", "runtimeArgs": []}},
 "storage-opts": ["a=1", "b=2"], "default-ulimits": {"nofile": {"Name": "nofile", "Hard": 64000, "Soft": 64000}}, "mtu": 1450, "debug": false}
JSON
chmod 0600 "$F"
cp "$F" "$TMP/orig.json"
$C setup docker --config "$F" --runc /usr/sbin/runc >/dev/null
check "other keys preserved exactly" python3 -c '
import json,sys; a=json.load(open(sys.argv[1])); b=json.load(open(sys.argv[2]))
conv=b["runtimes"].pop("convgpu"); assert a==b, (a,b)
assert conv["runtimeArgs"][-2:]==["--runtime","/usr/sbin/runc"], conv' "$TMP/orig.json" "$F"
check "backup made, identical to the old file" cmp -s "$TMP/orig.json" "$(ls "$F".convgpu-backup-* | head -1)"
check "mode kept (0600)" test "$(stat -c %a "$F")" = 600
cp "$F" "$TMP/installed.json"
$C setup docker --config "$F" --runc /usr/sbin/runc >"$TMP/out2"
check "second run: nothing changed" cmp -s "$F" "$TMP/installed.json"
check "second run: says so, no new backup" bash -c "grep -q 'already installed' '$TMP/out2' && [ \$(ls '$F'.convgpu-backup-* | wc -l) = 1 ]"
$C setup docker --config "$F" --dry-run >"$TMP/dry.json"
check "--dry-run prints valid JSON with the change" python3 -c '
import json,sys; c=json.load(open(sys.argv[1])); assert "--runtime" not in c["runtimes"]["convgpu"]["runtimeArgs"]' "$TMP/dry.json"
check "--dry-run changes nothing" cmp -s "$F" "$TMP/installed.json"
sleep 1 # backups are named by the second
$C setup docker --config "$F" --remove >/dev/null
check "--remove restores the original content" python3 -c '
import json,sys; assert json.load(open(sys.argv[1]))==json.load(open(sys.argv[2]))' "$TMP/orig.json" "$F"
$C setup docker --config "$F" --remove >"$TMP/out3"
check "--remove again: nothing to do" grep -q "not installed" "$TMP/out3"

# Refusals leave the file as it was.
printf '{"log-level": "warn",\n' >"$TMP/bad.json"; cp "$TMP/bad.json" "$TMP/bad.orig"
$C setup docker --config "$TMP/bad.json" 2>"$TMP/err" && fail "invalid JSON accepted" || pass "invalid JSON refused"
check "... with a clear message" grep -q "not valid JSON" "$TMP/err"
check "... file untouched, no backup" bash -c "cmp -s '$TMP/bad.json' '$TMP/bad.orig' && ! ls '$TMP'/bad.json.convgpu-backup-* 2>/dev/null"
echo '{"runtimes": []}' >"$TMP/bad2.json"
$C setup docker --config "$TMP/bad2.json" 2>/dev/null && fail "runtimes array accepted" || pass "\"runtimes\" that is not an object refused"
$C setup docker --config "$F" --runtime-path /nonexistent 2>"$TMP/err" && fail "missing runtime accepted" ||
    pass "a runtime path that does not exist is refused"
$C setup 2>/dev/null && fail "setup without an engine accepted" || pass "setup without an engine: usage error"

# Podman: a drop-in file of its own.
P=$TMP/containers.conf.d/50-convgpu.conf
$C setup podman --config "$P" >"$TMP/out4"
check "podman drop-in written" grep -q '^convgpu = \["/.*convgpu-runtime"\]' "$P"
check "podman: the runtime directory (not the default) through conmon_env_vars" \
    grep -q "^conmon_env_vars = \[\"PATH=[^\"]*\", \"CONVGPU_RUNTIME_DIR=/run/cg-test\"\]" "$P"
check "podman: says conmon_env_vars replaces the user's" grep -q conmon_env_vars "$TMP/out4"
check "podman: valid TOML" python3 -c 'import sys, tomllib; c = tomllib.load(open(sys.argv[1], "rb")); assert c["engine"]["runtimes"]["convgpu"][0].endswith("convgpu-runtime")' "$P"
cp "$P" "$TMP/p1"
$C setup podman --config "$P" >/dev/null
check "podman: idempotent" cmp -s "$P" "$TMP/p1"
"$BUILD/bin/convgpu" setup podman --config "$TMP/default.conf" >/dev/null
check "podman, default runtime directory: no conmon_env_vars" bash -c "! grep -q conmon_env_vars '$TMP/default.conf'"
$C setup podman --config "$TMP/runc.conf" --runc /usr/bin/crun >/dev/null
check "podman --runc: CONVGPU_RUNC too" grep -q '"CONVGPU_RUNC=/usr/bin/crun"\]' "$TMP/runc.conf"
$C setup podman --config "$TMP/bad.conf" --runc '/opt/x"y' 2>"$TMP/err" && fail "a quote in a path accepted" ||
    check "podman: a path TOML cannot hold is refused, nothing written" bash -c "[ ! -e '$TMP/bad.conf' ] && grep -q TOML '$TMP/err'"
$C setup podman --config "$P" --remove >/dev/null
check "podman: --remove deletes the drop-in (after a backup)" bash -c "[ ! -e '$P' ] && ls '$P'.convgpu-backup-* >/dev/null"
check "setup --help" bash -c "$C setup --help | grep -q daemon.json"
finish

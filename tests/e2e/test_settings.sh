#!/usr/bin/env bash
# test_settings.sh — every daemon setting comes from one table (src/daemon/settings.def): walked
# here through --help. Each setting given a value no setting accepts is refused at start with
# exit 2, one line naming the setting, and nothing created; the same through the configuration
# file; each default is a value its own parser accepts (the daemon starts with no setting).
# --emulate is left out of the bad-value walk: any spec passes its parser and the emulator
# judges it when the daemon starts.
. "$(dirname "$0")/lib.sh"
D=$BUILD/bin/convgpud
names=$("$D" --help | grep -o '^  --[a-z][a-z0-9-]*' | sed 's/^  --//' |
    grep -vxE 'config|foreground|check-config|version|routes|help|emulate')
n=$(wc -w <<<"$names")
check "--help lists the settings ($n)" test "$n" -ge 35
for name in $names; do
    out=$("$D" --runtime-dir "$TMP/never" --foreground "--$name" '@x-bad-x' 2>&1) && rc=0 || rc=$?
    check "--$name @x-bad-x: exit 2, naming the setting ($rc: $out)" \
        bash -c "[ $rc = 2 ] && grep -q -- '$name' <<<\"\$1\" && [ \$(wc -l <<<\"\$1\") = 1 ]" _ "$out"
    printf '%s = @x-bad-x\n' "$name" >"$TMP/bad.conf"
    out=$("$D" --runtime-dir "$TMP/never" --foreground --config "$TMP/bad.conf" 2>&1) && rc=0 || rc=$?
    check "config $name = @x-bad-x: exit 2, naming it" bash -c "[ $rc = 2 ] && grep -q -- '$name' <<<\"\$1\"" _ "$out"
done
check "nothing was created for the refused settings" test ! -e "$TMP/never"
out=$("$D" --runtime-dir "$TMP/never" --foreground --no-such-setting 1 2>&1) && rc=0 || rc=$?
check "an unknown flag: exit 2 ($rc)" test "$rc" = 2
printf 'no-such-setting = 1\n' >"$TMP/unknown.conf"
out=$("$D" --runtime-dir "$TMP/never" --foreground --config "$TMP/unknown.conf" 2>&1) && rc=0 || rc=$?
check "an unknown key: exit 2, naming it ($out)" bash -c "[ $rc = 2 ] && grep -q 'unknown setting' <<<\"\$1\"" _ "$out"
# Every default parses: a daemon with no setting but where to run starts and answers.
start_daemon --emulate 1GiB
check "the defaults: the daemon started with none given" curl -sf -o /dev/null \
    --unix-socket "$RUNDIR/control.sock" http://convgpu/v1/version
finish

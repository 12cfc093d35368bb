#!/usr/bin/env bash
# test_demo.sh — the README's first command ends in `convgpu demo`: it must run to completion
# with every process succeeding, and leave no process and no file behind.
# The machine may be shared: other demos (other checkouts, other users) come and go in /tmp
# meanwhile, so the checks look at this demo only: its daemon is the one started from this
# build's convgpud, and its temporary directory is that daemon's, learned while the demo runs.
. "$(dirname "$0")/lib.sh"
OUR_DAEMON=$(readlink -f "$BUILD/bin/convgpud")
our_demo_daemons() { # pids of convgpud processes of this build serving a demo
    local p
    for p in $(pgrep -f 'convgpud --runtime-dir /tmp/convgpu-demo\.' || true); do
        [ "$(readlink -f "/proc/$p/exe" 2>/dev/null)" = "$OUR_DAEMON" ] && echo "$p"
    done
    return 0
}
demo_dir_of() { # demo_dir_of PID: the demo's temporary directory, from its daemon's arguments
    tr '\0' '\n' <"/proc/$1/cmdline" 2>/dev/null | sed -n 's|^\(/tmp/convgpu-demo\.[^/]*\)/run$|\1|p'
}
[ -z "$(our_demo_daemons)" ] || { fail "a demo of this build is already running"; finish; exit 1; }

"$BUILD/bin/convgpu" demo >"$TMP/demo.out" 2>&1 &
DEMO=$!
learn_dir() { local p; p=$(our_demo_daemons | head -n 1); [ -n "$p" ] && DIR=$(demo_dir_of "$p") && [ -n "$DIR" ]; }
DIR=
# The daemon lives through the whole demo (tens of seconds): catch it while it runs.
wait_for "the demo's daemon" "$WAIT_S" learn_dir || true
check "the demo's temporary directory seen while it ran (${DIR:-none})" test -n "$DIR"
rc=0; wait "$DEMO" || rc=$?
check "demo exits 0 (rc $rc)" test "$rc" = 0
check "demo shows Figure 3" grep -q "Figure 3" "$TMP/demo.out"
check "demo shows a suspension and a resume" bash -c "grep -q SUSPENDED $TMP/demo.out && grep -q RESUMED $TMP/demo.out"
check "demo prints the per-policy summary" bash -c "for p in fifo best-fit recent random aging-fit; do grep -qE \"^  \$p +[0-9]\" $TMP/demo.out || exit 1; done"
check "no job failed" bash -c "! grep -q 'failed (status' $TMP/demo.out"
check "no temporary directory left" test -n "$DIR" -a ! -e "${DIR:-/nonexistent}"
check "no demo daemon left running" test -z "$(our_demo_daemons)"
[ "$FAILS" -eq 0 ] || cat "$TMP/demo.out"
finish

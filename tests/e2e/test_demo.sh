#!/usr/bin/env bash
# test_demo.sh — the README's first command ends in `convgpu demo`: it must run to completion
# with every process succeeding, and leave no process and no file behind.
. "$(dirname "$0")/lib.sh"
before=$(ls -d /tmp/convgpu-demo.* 2>/dev/null | sort)
"$BUILD/bin/convgpu" demo >"$TMP/demo.out" 2>&1 && rc=0 || rc=$?
check "demo exits 0 (rc $rc)" test "$rc" = 0
check "demo shows Figure 3" grep -q "Figure 3" "$TMP/demo.out"
check "demo shows a suspension and a resume" bash -c "grep -q SUSPENDED $TMP/demo.out && grep -q RESUMED $TMP/demo.out"
check "demo prints the per-policy summary" bash -c "for p in fifo best-fit recent random aging-fit; do grep -qE \"^  \$p +[0-9]\" $TMP/demo.out || exit 1; done"
check "no job failed" bash -c "! grep -q 'failed (status' $TMP/demo.out"
after=$(ls -d /tmp/convgpu-demo.* 2>/dev/null | sort)
check "no temporary directory left" test "$before" = "$after"
check "no demo daemon left running" bash -c "! pgrep -f 'convgpu[d] --runtime-dir /tmp/convgpu-demo' >/dev/null"
[ "$FAILS" -eq 0 ] || cat "$TMP/demo.out"
finish

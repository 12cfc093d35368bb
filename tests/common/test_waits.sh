#!/bin/bash
# test_waits.sh — the test scripts wait for conditions the way wait_for can see them change:
# no wait_for is given "$(...)" unescaped. Bash expands that once, before the first poll, so
# such a wait tests a value frozen at the call and passes only when the machine happened to be
# slow enough for the condition to hold already (k8s.publish failed this way on a quiet
# machine). Use `prints EXPECTED COMMAND...` (tests/e2e/lib.sh) or a function instead.
set -u
SRC=${CONVGPU_SOURCE_DIR:?CONVGPU_SOURCE_DIR must point at the source tree}
# A wait_for command (its comment and what follows its || or && cut off) with a $( that is not
# escaped as \$( ($(( arithmetic is a constant, and so fine).
bad=$(grep -rn --include='*.sh' -E '^[^#]*\bwait_for\b' "$SRC/tests" "$SRC/bench" |
      grep -v -E '^[^:]+:[0-9]+:[[:space:]]*wait_for\(\)' |
      sed -E 's/#.*$//; s/ (\|\||&&)( .*)?$//' | grep -E '(^|[^\\])\$\([^(]' || true)
if [ -n "$bad" ]; then
    echo "FAIL: wait_for given a value expanded once, before its first poll:"
    echo "$bad"
    exit 1
fi
n=$(grep -rn --include='*.sh' -E '^[^#]*\bwait_for\b' "$SRC/tests" "$SRC/bench" | wc -l)
echo "ok: none of $n wait_for lines is given an unescaped \$(...)"

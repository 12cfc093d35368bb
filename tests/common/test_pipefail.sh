#!/bin/bash
# test_pipefail.sh — no script that runs under `set -o pipefail` (itself, or through the
# library beside it that it sources) pipes into `grep -q`. grep -q leaves at its first match;
# whatever still writes into the pipe then gets SIGPIPE, the pipeline fails under pipefail,
# and the condition reads false exactly when it held, depending on who ran first
# (security.extender_flood took the ASan build for a plain one so, in CI only). Capture the
# output first: `out=$(cmd) && grep -q PATTERN <<<"$out"`.
set -u
SRC=${CONVGPU_SOURCE_DIR:?CONVGPU_SOURCE_DIR must point at the source tree}
libs=$(grep -rlE --include='*.sh' '^[^#]*set -[a-z]*o pipefail' "$SRC/tests" "$SRC/bench" "$SRC/scripts" | sort)
strict=()
for f in $(grep -rl --include='*.sh' . "$SRC/tests" "$SRC/bench" "$SRC/scripts" | sort); do
    if grep -qxF "$f" <<<"$libs"; then
        strict+=("$f")
        continue
    fi
    # sources a library beside it that sets pipefail (. "$(dirname "$0")/lib.sh" and the like)
    for lib in $libs; do
        if [ "$(dirname "$lib")" = "$(dirname "$f")" ] &&
            grep -qE "^[^#]*(\.|source) .*/$(basename "$lib")\b" "$f"; then
            strict+=("$f")
            break
        fi
    done
done
# A pipe inside `bash -c "..."` or `sh -c` runs in a new shell, without pipefail: not counted;
# nor one reading a single line (head -n1), which cannot outlast grep.
bad=$(grep -nE '^[^#]*\|[[:space:]]*grep[[:space:]]+(-[a-zA-Z]*q|--quiet)' "${strict[@]}" |
      grep -vE '\b(ba)?sh -c |head -n ?1 ' || true)
if [ -n "$bad" ]; then
    echo "FAIL: a pipe into grep -q under pipefail (capture the output, then grep it):"
    echo "$bad"
    exit 1
fi
echo "ok: none of ${#strict[@]} scripts under pipefail pipes into grep -q"

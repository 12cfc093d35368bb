#!/usr/bin/env bash
# gpu.dryrun: the suite's scripts parse, are shellcheck-clean (when shellcheck is installed), and
# run.sh --dry-run prints its plan and the prerequisites without a GPU, building nothing.
set -euo pipefail
SRC=${CONVGPU_SOURCE_DIR:?}/tests/gpu
OUT=${GPU_TEST_OUT:-/tmp}/dryrun
rm -rf "$OUT"
for s in run.sh bundle.sh test_dryrun.sh test_build.sh test_emulate.sh; do
    bash -n "$SRC/$s"
done
echo "ok: bash -n"
if command -v shellcheck >/dev/null 2>&1; then
    shellcheck -x "$SRC"/*.sh
    echo "ok: shellcheck"
else
    echo "note: shellcheck not installed; skipped"
fi
if command -v python3 >/dev/null 2>&1; then
    python3 -c "import ast, sys; ast.parse(open(sys.argv[1]).read())" "$SRC/frameworks.py"
    echo "ok: frameworks.py parses"
fi
log=$(mktemp)
trap 'rm -f "$log"' EXIT
bash "$SRC/run.sh" --dry-run --out "$OUT/gpu-results.md" >"$log" 2>&1 || { cat "$log"; echo "FAIL: --dry-run exit $?"; exit 1; }
cat "$log"
for want in "Plan (" "cudart_table2" "suspend" "Prerequisites on this machine:" "Output would go to: $OUT"; do
    grep -qF "$want" "$log" || { echo "FAIL: dry-run output lacks '$want'"; exit 1; }
done
[ ! -e "$OUT" ] || { echo "FAIL: --dry-run wrote $OUT"; exit 1; }
# Bad arguments are refused before anything runs.
if bash "$SRC/run.sh" --bogus >/dev/null 2>&1; then echo "FAIL: unknown argument accepted"; exit 1; fi
if bash "$SRC/run.sh" --dry-run --budget x >/dev/null 2>&1; then echo "FAIL: bad --budget accepted"; exit 1; fi
grep -q -- '--dry-run' <<<"$(bash "$SRC/run.sh" --help)" || { echo "FAIL: --help"; exit 1; }
echo "ok: run.sh --dry-run"

#!/usr/bin/env bash
# gpu.emulate: run.sh --emulate on this build tree — the whole orchestration (daemon, native and
# convgpu runs, every sample API, suspend/resume, timing, report files, cleanup) on the emulated
# GPU, the swap step included. The CUDA runtime program and the frameworks need a real driver and
# are skipped there (and the swap bandwidth is not judged).
# 77 without nvcc (gpu_probe is built against the toolkit's cuda.h).
set -euo pipefail
SRC=${CONVGPU_SOURCE_DIR:?}/tests/gpu
BUILD=${CONVGPU_BUILD_DIR:?}
OUT=${GPU_TEST_OUT:-/tmp}/emulate
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
if [ ! -x "$CUDA_HOME/bin/nvcc" ] && ! command -v nvcc >/dev/null 2>&1; then echo "SKIP: no nvcc"; exit 77; fi
[ -e "$BUILD/lib/emu/libcuda.so.1" ] || { echo "SKIP: no emulator in $BUILD"; exit 77; }
rm -rf "$OUT"
rc=0
# The context an H200 costs with CUDA 13 (518 MiB, measured by the first real-GPU run): limits
# sized for a small context failed there, not here, until the emulated one was as large.
export CONVGPU_EMU_CONTEXT=518MiB
bash "$SRC/run.sh" --emulate --prebuilt "$BUILD" --build-dir "$OUT/build" --budget 400 \
    --out "$OUT/gpu-results.md" || rc=$?
fail() { echo "FAIL: $*"; exit 1; }
[ "$rc" -eq 0 ] || { cat "$OUT/gpu-results.md" 2>/dev/null; fail "run.sh --emulate exit $rc"; }
for f in gpu-results.md gpu-results.tsv gpu-steps.log convgpud.log; do
    [ -s "$OUT/$f" ] || fail "$f missing or empty"
done
tsv=$OUT/gpu-results.tsv
head -n1 "$tsv" | grep -q "^check	mode	result	seconds	detail$" || fail "TSV header"
awk -F'\t' 'NR > 1 && NF != 5 { bad = 1 } END { exit bad }' "$tsv" || fail "TSV rows without 5 fields"
for c in sample.plain.over_limit sample.vmm.over_limit sample.pool.over_limit suspend.second_suspended \
         swap.bench swap.rounds swap.daemon.round1 swap.daemon.round2 swap.daemon.data \
         swap.rounds.pinned swap.daemon.pinned.round1 swap.daemon.pinned.round2 swap.daemon.pinned.data \
         suspend.resumed_after_first daemon.context_probe; do
    awk -F'\t' -v c="$c" '$1 == c && $3 == "pass" { ok = 1 } END { exit !ok }' "$tsv" || fail "$c did not pass"
done
for c in table2 torch jax cupy train swap.bandwidth; do
    awk -F'\t' -v c="$c" '$1 == c && $3 == "skip" { ok = 1 } END { exit !ok }' "$tsv" || fail "$c not recorded as skipped"
done
grep -q '^| check | mode | result' "$OUT/gpu-results.md" || fail "Markdown table missing"
grep -q 'context charge (convgpud' "$OUT/gpu-results.md" || fail "measured context charge missing"
# The emulator backs every allocation with its own 2 MiB granule: the probe must see exactly that.
grep -q '^| free-memory delta of 64 cuMemAlloc held at once.*| 128.0 MiB (2.00 MiB each) / 128.0 MiB (2.00 MiB each) / 128.0 MiB (2.00 MiB each) |$' \
    "$OUT/gpu-results.md" || fail "64 held allocations: not 3 x 128 MiB on the emulator: $(grep 'held at once' "$OUT/gpu-results.md")"
# Nothing left running, nothing left behind: the run's temporary directory is gone.
tmpdir=$(sed -n 's/.*temporary directory: //p' "$OUT/gpu-steps.log" | head -n1)
[ -n "$tmpdir" ] || fail "the step log does not name the temporary directory"
if pgrep -f "$tmpdir" >/dev/null 2>&1; then fail "processes of the run are still alive"; fi
[ ! -e "$tmpdir" ] || fail "$tmpdir left behind"
echo "ok: run.sh --emulate ($(grep -m1 'Checks:' "$OUT/gpu-results.md"))"

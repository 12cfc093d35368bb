#!/usr/bin/env bash
# gpu.bundle: tests/gpu/bundle.sh packs what a GPU host without build packages needs (the
# session device machines: no libmicrohttpd, no network). Every library the daemon and the CLI
# load beyond glibc must come from the bundle's deps/ once it is on LD_LIBRARY_PATH, and the
# binaries must start that way; the benchmark suite's --real-gpu mode must run from it.
set -euo pipefail
SRC=${CONVGPU_SOURCE_DIR:?}/tests/gpu
BUILD=${CONVGPU_BUILD_DIR:?}
OUT=${GPU_TEST_OUT:-/tmp}/bundle
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$OUT"
mkdir -p "$OUT"
B=$OUT/b

rc=0; bash "$SRC/bundle.sh" --bogus >/dev/null 2>&1 || rc=$?
[ "$rc" -eq 2 ] || fail "bundle.sh --bogus: exit $rc, want 2"
rc=0; bash "$SRC/bundle.sh" --build "$OUT/nonexistent" --dest "$B" >"$OUT/missing.log" 2>&1 || rc=$?
if [ "$rc" -ne 1 ] || ! grep -q "make build" "$OUT/missing.log"; then
    fail "bundle.sh from a build tree without binaries: exit $rc"
fi
[ ! -e "$B" ] || fail "a failed bundle.sh left $B behind"

bash "$SRC/bundle.sh" --build "$BUILD" --dest "$B" >"$OUT/bundle.log" 2>&1 ||
    { cat "$OUT/bundle.log"; fail "bundle.sh failed"; }
for f in bin/convgpud bin/convgpu bin/convgpu-sample lib/libconvgpu.so ORIGIN \
         bench/bench_ab bench/bench_api bench/bench_roundtrip bench/bench_scale; do
    [ -s "$B/$f" ] || fail "$f missing from the bundle"
done
ls "$B/deps"/libmicrohttpd.so.* "$B/deps"/libsqlite3.so.* "$B/deps"/libjansson.so.* >/dev/null 2>&1 ||
    fail "deps/ lacks libmicrohttpd, libsqlite3 or libjansson: $(ls "$B/deps")"

glibc='^(libc|libm|libdl|libpthread|librt|libresolv)\.so\.|^ld-linux'
for bin in convgpud convgpu; do
    LD_LIBRARY_PATH=$B/deps ldd "$B/bin/$bin" >"$OUT/ldd.$bin" 2>&1 || fail "ldd $bin: $(cat "$OUT/ldd.$bin")"
    if grep -q "not found" "$OUT/ldd.$bin"; then fail "$bin: $(grep 'not found' "$OUT/ldd.$bin")"; fi
    while read -r name _ path _; do
        [ -n "$path" ] || continue
        if [[ $name =~ $glibc ]]; then continue; fi
        case $path in "$B/deps/"*) ;; *) fail "$bin loads $name from $path, not from the bundle" ;; esac
    done < <(awk '$2 == "=>" && $3 ~ /^\// { print $1, $2, $3 }' "$OUT/ldd.$bin")
    LD_LIBRARY_PATH=$B/deps "$B/bin/$bin" --version >"$OUT/version.$bin" 2>&1 ||
        fail "$bin --version with the bundle's libraries: $(cat "$OUT/version.$bin")"
done
# The interposer, the sample and the benchmarks' workloads need nothing beyond glibc.
for f in lib/libconvgpu.so bin/convgpu-sample bench/bench_ab bench/bench_api bench/bench_roundtrip bench/bench_scale; do
    extra=$(readelf -d "$B/$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | grep -Ev "$glibc" || true)
    [ -z "$extra" ] || fail "$f needs $extra"
done
if command -v nvcc >/dev/null 2>&1 || [ -x "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc" ]; then
    if [ ! -x "$B/gpu/cudart_table2" ] || [ ! -x "$B/gpu/gpu_probe" ]; then
        fail "nvcc is here but gpu/ lacks the CUDA programs"
    fi
fi
# `bench/run-all.sh --real-gpu BUNDLE`, what a GPU session runs, with the emulator standing in as
# the host's driver, found through LD_LIBRARY_PATH as a real one may be. Its workloads run under
# `env -i`, so they use the emulator's default state file: removed afterwards unless it was there.
shm=/dev/shm/convgpu-emu-$(id -u)
had_shm=0; [ -e "$shm" ] && had_shm=1
rc=0
LD_LIBRARY_PATH=$BUILD/lib/emu BENCH_QUICK=1 BENCH_OUT=$OUT/bench.md \
    timeout 600 bash "$CONVGPU_SOURCE_DIR/bench/run-all.sh" --real-gpu "$B" >"$OUT/bench.log" 2>&1 || rc=$?
[ "$had_shm" -eq 1 ] || rm -f "$shm"
[ "$rc" -eq 0 ] || { tail -n 30 "$OUT/bench.log"; fail "bench/run-all.sh --real-gpu BUNDLE: exit $rc"; }
for h in '<!-- bench-gpu:begin -->' '### API response time' '### Application overhead' '<!-- bench-gpu:end -->'; do
    grep -qF "$h" "$OUT/bench.md" || fail "the real-GPU bench from the bundle lacks '$h'"
done
if grep -qiE 'failed|\bnan\b' "$OUT/bench.md"; then fail "the real-GPU bench from the bundle: $(grep -iE 'failed|\bnan\b' "$OUT/bench.md" | head -n 3)"; fi
echo "ok: bundle of $(du -sh "$B" | cut -f1), $(find "$B/deps" -type f | wc -l) libraries in deps/"

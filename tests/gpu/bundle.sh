#!/usr/bin/env bash
# tests/gpu/bundle.sh — packs prebuilt convgpu binaries for a GPU host that cannot build them
# (no Debian build packages and no network, like the session device tool's machines).
#
#   tests/gpu/bundle.sh [--build DIR] [--dest DIR]     (defaults: build, .gpu-bundle)
#
# DEST gets bin/{convgpud,convgpu,convgpu-sample,convgpu-burn,swap_probe}, lib/libconvgpu.so,
# bench/bench_* (so that `bench/run-all.sh --real-gpu DEST` and run.sh's swap step run there
# too), deps/ (every shared library convgpud and convgpu need beyond glibc, e.g. libmicrohttpd,
# libjansson, libsqlite3, libhttp_parser and theirs), gpu/{cudart_table2,gpu_probe} when nvcc is
# here, and ORIGIN (where and from what it was built). run.sh uses the bundle when the build
# packages are missing (or with --prebuilt DIR) and puts deps/ on LD_LIBRARY_PATH of the daemon
# and the CLI only, never of the workloads.
# The binaries need a glibc at least as new as this machine's (Debian 12: 2.36) and x86-64.
#
# Through the session device tool: the default DEST is added to .git/info/exclude, so name it in
# `carry`:  run(command='tests/gpu/run.sh --out "$OUT/gpu-results.md"', carry=['.gpu-bundle'])
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
BUILD=$ROOT/build
DEST=$ROOT/.gpu-bundle
while [ $# -gt 0 ]; do
    case $1 in
        --build) BUILD=${2:?}; shift 2 ;;
        --dest) DEST=${2:?}; shift 2 ;;
        -h|--help) sed -n '2,16p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "bundle.sh: unknown argument '$1'" >&2; exit 2 ;;
    esac
done

BENCH_BINS=(bench_ab bench_api bench_roundtrip bench_scale bench_swap)
for f in bin/convgpud bin/convgpu bin/convgpu-sample bin/convgpu-burn bin/swap_probe lib/libconvgpu.so "${BENCH_BINS[@]/#/bench/}"; do
    [ -e "$BUILD/$f" ] || { echo "bundle.sh: $BUILD/$f missing: run 'make build' first" >&2; exit 1; }
done
[ "$(uname -m)" = x86_64 ] || echo "bundle.sh: warning: built on $(uname -m); the GPU machines are x86-64" >&2

rm -rf "$DEST"
mkdir -p "$DEST/bin" "$DEST/lib" "$DEST/deps" "$DEST/bench"
cp "$BUILD/bin/convgpud" "$BUILD/bin/convgpu" "$BUILD/bin/convgpu-sample" "$BUILD/bin/convgpu-burn" "$BUILD/bin/swap_probe" \
    "$DEST/bin/"
cp "$BUILD/lib/libconvgpu.so" "$DEST/lib/"
for b in "${BENCH_BINS[@]}"; do cp "$BUILD/bench/$b" "$DEST/bench/"; done

# Shared libraries beyond glibc's own (the target has its own glibc, and must use it).
ldd "$BUILD/bin/convgpud" "$BUILD/bin/convgpu" |
    awk '$2 == "=>" && $3 ~ /^\// { print $3 }' | sort -u |
    while IFS= read -r lib; do
        case $(basename "$lib") in
            libc.so.*|libm.so.*|libdl.so.*|libpthread.so.*|librt.so.*|ld-linux*|libresolv.so.*) continue ;;
        esac
        cp -L "$lib" "$DEST/deps/"
    done

CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
if [ -x "$CUDA_HOME/bin/nvcc" ] || command -v nvcc >/dev/null 2>&1; then
    make -s -C "$HERE" OUT="$DEST/gpu" CUDA_HOME="$CUDA_HOME" >/dev/null
else
    echo "bundle.sh: no nvcc here: the GPU programs will be built on the GPU host" >&2
fi

{
    echo "convgpu $(git -C "$ROOT" describe --always --dirty 2>/dev/null || echo '?') built on $(uname -n) $(date -u +%Y-%m-%dT%H:%MZ)"
    echo "glibc $(ldd --version | head -n1 | awk '{ print $NF }'), $(uname -m)"
} >"$DEST/ORIGIN"

if [ "$DEST" = "$ROOT/.gpu-bundle" ] && excl=$(git -C "$ROOT" rev-parse --git-path info/exclude 2>/dev/null); then
    case $excl in /*) ;; *) excl=$ROOT/$excl ;; esac
    mkdir -p "$(dirname "$excl")"
    grep -qx '/.gpu-bundle/' "$excl" 2>/dev/null || echo '/.gpu-bundle/' >>"$excl"
fi
echo "bundle: $DEST ($(du -sh "$DEST" | cut -f1)); $(head -n1 "$DEST/ORIGIN")"

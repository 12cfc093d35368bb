#!/usr/bin/env bash
# gpu.build: the real-GPU programs compile warning-free here (nvcc with its default static cudart;
# cc against the toolkit's cuda.h) and answer bad usage without touching a GPU. 77 without nvcc.
set -euo pipefail
SRC=${CONVGPU_SOURCE_DIR:?}/tests/gpu
OUT=${GPU_TEST_OUT:-/tmp}/build
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
NVCC=$CUDA_HOME/bin/nvcc
[ -x "$NVCC" ] || NVCC=$(command -v nvcc || true)
if [ -z "$NVCC" ]; then echo "SKIP: no nvcc (CUDA_HOME=$CUDA_HOME)"; exit 77; fi
rm -rf "$OUT"
make -C "$SRC" OUT="$OUT" NVCC="$NVCC" CUDA_HOME="$CUDA_HOME"
for p in cudart_table2 gpu_probe; do [ -x "$OUT/$p" ] || { echo "FAIL: $p not built"; exit 1; }; done
# The default cudart is static: no libcudart.so among the needed libraries.
if grep -q 'libcudart' <<<"$(readelf -d "$OUT/cudart_table2")"; then echo "FAIL: cudart_table2 links libcudart.so"; exit 1; fi
# gpu_probe reaches the driver only through dlopen: it links no CUDA library.
if grep -qE 'libcuda|libnvidia' <<<"$(readelf -d "$OUT/gpu_probe")"; then echo "FAIL: gpu_probe links a CUDA library"; exit 1; fi
rc=0; "$OUT/cudart_table2" >/dev/null 2>&1 || rc=$?
[ "$rc" -eq 1 ] || { echo "FAIL: cudart_table2 without arguments: exit $rc, want 1 (usage)"; exit 1; }
rc=0; "$OUT/gpu_probe" bogus >/dev/null 2>&1 || rc=$?
[ "$rc" -eq 1 ] || { echo "FAIL: gpu_probe bogus: exit $rc, want 1"; exit 1; }
# convgpu-sample's embedded PTX (src/tools/complement_ptx.h) is still nvcc's rendering of
# complement.cu, apart from its comments and the lowered `.version`, and ptxas assembles it for
# Hopper, which is what a real driver's JIT does with it.
ROOT=$CONVGPU_SOURCE_DIR
printf '#include <stdio.h>\n#include "complement_ptx.h"\nint main(void) { fputs(complement_ptx, stdout); return 0; }\n' |
    cc -x c -I"$ROOT/src/tools" -o "$OUT/print_ptx" -
"$OUT/print_ptx" >"$OUT/embedded.ptx"
make -C "$SRC" OUT="$OUT" NVCC="$NVCC" CUDA_HOME="$CUDA_HOME" "$OUT/complement.ptx"
body() { grep -v -e '^//' -e '^\.version ' "$1" | sed -e :a -e '/^\n*$/{$d;N;ba' -e '}'; }
diff <(body "$OUT/complement.ptx") <(body "$OUT/embedded.ptx") ||
    { echo "FAIL: src/tools/complement_ptx.h is not nvcc's PTX of tests/gpu/complement.cu (regenerate it)"; exit 1; }
grep -qx '\.version 6\.3' "$OUT/embedded.ptx" || { echo "FAIL: embedded PTX is not .version 6.3"; exit 1; }
PTXAS=$(dirname "$NVCC")/ptxas
"$PTXAS" -arch=sm_90 "$OUT/embedded.ptx" -o "$OUT/embedded.cubin" ||
    { echo "FAIL: ptxas rejects the embedded PTX for sm_90"; exit 1; }
echo "ok: cudart_table2 and gpu_probe built with $("$NVCC" --version | grep -m1 release)"

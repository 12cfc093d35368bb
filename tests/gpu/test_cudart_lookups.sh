#!/usr/bin/env bash
# gpu.cudart_lookups: how a real CUDA runtime finds the driver's entry points, and that every
# one it could take device memory with reaches us. Runs cudart_table2 (nvcc's default, static
# cudart) on the emulator with libconvgpu.so preloaded. The runtime dlopens libcuda.so.1,
# dlsyms cuGetProcAddress and looks up every entry point it knows (about 440 in CUDA 13.0),
# then stops at cuGetExportTable (private tables the emulator does not have). That much of a
# real runtime runs without a GPU, so it is checked exactly:
#  - the runtime's lookups reached the driver through our cuGetProcAddress (our dlsym answered
#    its dlsym on the driver's handle);
#  - each lookup of an entry point we hook got our wrapper of the very variant the driver chose
#    (the emulator's trace names the variant, the interposer's debug log names the wrapper);
#  - each entry point the runtime looks up that may take device memory (its name says Alloc,
#    Create, Register, Import, Retain or Reserve) is hooked, or listed below with the reason it
#    is not charged. A CUDA release that adds such an entry point fails here until someone
#    decides.
# Skipped (77) without nvcc. The toolkit's version is in the output.
set -euo pipefail
SRC=${CONVGPU_SOURCE_DIR:?}/tests/gpu
BUILD=${CONVGPU_BUILD_DIR:?}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
NVCC=$CUDA_HOME/bin/nvcc
[ -x "$NVCC" ] || NVCC=$(command -v nvcc || true)
if [ -z "$NVCC" ]; then echo "SKIP: no nvcc (CUDA_HOME=$CUDA_HOME)"; exit 77; fi
[ -e "$BUILD/lib/emu/libcuda.so.1" ] || { echo "SKIP: no emulator built"; exit 77; }
TMP=$(mktemp -d "${TMPDIR:-/tmp}/convgpu-cudart.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
FAILED=0
check() { # check DESCRIPTION CMD...
    local what=$1; shift
    if "$@"; then echo "ok: $what"; else echo "FAIL: $what"; FAILED=1; fi
}

# The only program of the suite with a static cudart; built here with a single target to keep
# the test short (the suite builds it for sm_90 + PTX).
make -s -C "$SRC" OUT="$TMP" NVCC="$NVCC" CUDA_HOME="$CUDA_HOME" NVCC_ARCH="-arch=sm_75" \
    "$TMP/cudart_table2" >/dev/null
rc=0
env -u LD_PRELOAD LD_PRELOAD="$BUILD/lib/libconvgpu.so" LD_LIBRARY_PATH="$BUILD/lib/emu" \
    CONVGPU_EMU_STATE="$TMP/emu.state" CONVGPU_EMU_DEVICES=1GiB \
    CONVGPU_EMU_TRACE_LOOKUPS="$TMP/driver.trace" CONVGPU_LOG=debug \
    "$TMP/cudart_table2" --native 64MiB >"$TMP/out" 2>"$TMP/err" || rc=$?
echo "cudart_table2 on the emulator: exit $rc (the runtime cannot start without export tables); $("$NVCC" --version | grep -m1 release)"
touch "$TMP/driver.trace"
n=$(wc -l <"$TMP/driver.trace")
check "the runtime looked up entry points through the driver's cuGetProcAddress ($n lookups)" test "$n" -ge 100
ours=$(grep -c -- '-> ours ' "$TMP/err" || true)
check "the interposer answered lookups with its wrappers ($ours)" test "$ours" -ge 10

# Our hooks: "base variant" per line, from hooks.def (the CUDA rows).
sed -n 's/^CG_HOOK(CUDA, *\([A-Za-z0-9_]*\), *"\([A-Za-z0-9_]*\)".*/\2 \1/p' "$SRC/../../src/interpose/hooks.def" >"$TMP/hooks"
hooked_base() { grep -q "^$1 " "$TMP/hooks"; }

# Each successful lookup of a hooked base name: the interposer's answer must be its wrapper of
# the variant the driver chose. (The log and the trace are in the same order: one lookup, one
# line each.)
grep -- '-> ours ' "$TMP/err" | sed 's/.*cuGetProcAddress(\([^,]*\), \([0-9]*\), \([0-9]*\)) -> ours \(.*\)/\1 \2 \3 \4/' >"$TMP/answers"
bad=0 seen=0
while read -r name version flags result symbol; do
    [ "$result" = 0 ] || continue
    hooked_base "$name" || continue
    seen=$((seen + 1))
    got=$(grep -m1 "^$name $version $flags " "$TMP/answers" | awk '{print $4}' || true)
    if [ "$got" != "$symbol" ]; then
        echo "    | $name (CUDA $version, flags $flags): the driver answered $symbol, the runtime got ${got:-its own function}"
        bad=$((bad + 1))
    fi
done <"$TMP/driver.trace"
check "each of the $seen lookups of a hooked entry point got our wrapper of the driver's variant ($bad wrong)" test "$bad" -eq 0

# Entry points that may take device memory but are not ours to charge, and why.
declare -A WHY=(
    [cuMemHostAlloc]="pinned host memory"
    [cuMemHostRegister]="pinned host memory"
    [cuMemPoolCreate]="an empty pool; its allocations are charged"
    [cuMemPoolImportPointer]="memory exported by another process, charged there"
    [cuMemPoolImportFromShareableHandle]="memory exported by another process, charged there"
    [cuImportExternalMemory]="memory of another API or process, charged there"
    [cuImportExternalSemaphore]="a semaphore"
    [cuGraphAddMemAllocNode]="graph memory nodes: taken at launch from the device's graph pool; NOT charged (docs/INTERPOSER.md, Limits)"
    [cuGraphMemAllocNodeGetParams]="reads a node"
    [cuGLCtxCreate]="OpenGL interop context (deprecated; no display on a compute server)"
    [cuVDPAUCtxCreate]="VDPAU interop context (deprecated; no display on a compute server)"
    [cuGLRegisterBufferObject]="OpenGL's memory"
    [cuGraphicsGLRegisterBuffer]="OpenGL's memory"
    [cuGraphicsGLRegisterImage]="OpenGL's memory"
    [cuGraphicsEGLRegisterImage]="EGL's memory"
    [cuGraphicsVDPAURegisterOutputSurface]="VDPAU's memory"
    [cuGraphicsVDPAURegisterVideoSurface]="VDPAU's memory"
    [cuDeviceRegisterAsyncNotification]="a callback"
    [cuLogsRegisterCallback]="a callback"
    [cuEventCreate]="an event"
    [cuStreamCreate]="a stream"
    [cuStreamCreateWithPriority]="a stream"
    [cuGraphCreate]="an empty graph"
    [cuGraphConditionalHandleCreate]="a graph handle"
    [cuGraphRetainUserObject]="a reference"
    [cuUserObjectCreate]="a host object"
    [cuUserObjectRetain]="a reference"
    [cuLinkCreate]="a JIT linker"
    [cuTexObjectCreate]="a view of memory already charged"
    [cuSurfObjectCreate]="a view of memory already charged"
)
unknown=0
awk '{print $1}' "$TMP/driver.trace" | sort -u | grep -E 'Alloc|Create|Register|Import|Retain|Reserve' >"$TMP/takers" || true
while read -r name; do
    if hooked_base "$name"; then continue; fi
    if [ -n "${WHY[$name]:-}" ]; then continue; fi
    echo "    | $name: may take device memory and is neither hooked nor explained in $(basename "$0")"
    unknown=$((unknown + 1))
done <"$TMP/takers"
check "every entry point the runtime may take device memory with is hooked or explained ($unknown undecided)" test "$unknown" -eq 0
covered=$(awk '{print $1}' "$TMP/driver.trace" | sort -u | while read -r n; do if hooked_base "$n"; then echo "$n"; fi; done | tr '\n' ' ')
echo "hooked entry points the runtime looks up: $covered"
if [ "$FAILED" -ne 0 ]; then
    echo "--- runtime's stderr (tail) ---"; tail -n 20 "$TMP/err"
    exit 1
fi

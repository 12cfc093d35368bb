# lib.sh — helpers of the interposer tests, on top of the end-to-end harness (tests/e2e/lib.sh:
# private runtime dir + emulator state under a mktemp dir, a private daemon, cleanup that stops
# everything the test started).
. "${CONVGPU_SOURCE_DIR:?}/tests/e2e/lib.sh"

LIB=$BUILD/lib/libconvgpu.so
SAMPLE=$BUILD/bin/convgpu-sample
PROBE=${IP_PROBE:?}

# An ASan-built libconvgpu.so preloaded ahead of the ASan runtime: the runtime is still loaded
# (it is the library's own dependency) and intercepts as usual, it only cannot be first in the
# list. Tell it that is fine; nothing else changes.
if [ -n "${CONVGPU_SANITIZE:-}" ]; then
    export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
fi

need_emulator() {
    if [ ! -e "$BUILD/lib/emu/libcuda.so.1" ]; then
        echo "SKIP: no emulator built ($BUILD/lib/emu/libcuda.so.1)"; exit 77
    fi
}

# The emulator alone, as a plain (unconfigured) process sees it: no daemon, no socket.
emu_env() { # emu_env [DEVICES]
    mkdir -p "$RUNDIR/emu"
    export LD_LIBRARY_PATH="$BUILD/lib/emu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    export CONVGPU_EMU_DEVICES=${1:-5GiB}
    export CONVGPU_EMU_CONTEXT=${CONVGPU_EMU_CONTEXT:-2MiB}
    unset CONVGPU_SOCKET CONVGPU_DISABLE
}

# Runs CMD in a container of LIMIT through `convgpu run`.
run_in() { # run_in LIMIT CMD...
    local limit=$1; shift
    cg run --gpu-memory "$limit" -- "$@"
}

expect_rc() { # expect_rc WANT DESCRIPTION CMD...
    local want=$1 what=$2; shift 2
    local rc=0
    "$@" >"$TMP/out" 2>&1 || rc=$?
    if [ "$rc" -eq "$want" ]; then pass "$what"; else
        fail "$what (exit $rc, want $want)"; sed 's/^/    | /' "$TMP/out" | tail -n 20
    fi
}

field() { # field TAG KEY < output  -> value of KEY= on the first line starting with TAG
    awk -v tag="$1" -v key="$2" '$1 == tag || index($0, tag) == 1 {
        for (i = 1; i <= NF; i++) if (index($i, key "=") == 1) { print substr($i, length(key) + 2); exit } }'
}

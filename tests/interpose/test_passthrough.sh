# test_passthrough.sh — preloaded into a process with no convgpu configuration, the interposer
# changes nothing: every API of the sample program works, lookups hand out our wrappers for hooked
# names and the driver's functions for the rest, and CONVGPU_DISABLE=1 is honoured.
. "$(dirname "$0")/lib.sh"
need_emulator
emu_env 5GiB
[ -e /run/convgpu/container.sock ] && { echo "SKIP: this machine has /run/convgpu/container.sock"; exit 77; }

expect_rc 0 "lookups: dlsym, RTLD_NEXT, cuGetProcAddress (4 and 5 args)" env LD_PRELOAD="$LIB" "$PROBE" lookup
if [ -x "$SAMPLE" ]; then
    for api in plain pitch managed vmm async pool array mipmap; do
        expect_rc 0 "sample --api $api unchanged" env LD_PRELOAD="$LIB" "$SAMPLE" --api "$api" --size 64MiB --chunks 2
    done
    # Over the *device* size, the driver's own out-of-memory still comes through unchanged.
    expect_rc 2 "device-size out of memory passes through" env LD_PRELOAD="$LIB" "$SAMPLE" --api plain --size 6GiB
else
    echo "note: $SAMPLE not built; sample checks skipped"
fi
expect_rc 0 "CONVGPU_DISABLE=1 with a socket set still passes through" \
    env LD_PRELOAD="$LIB" CONVGPU_DISABLE=1 CONVGPU_SOCKET=/nonexistent/sock "$PROBE" alloc 64MiB
# Memory info untouched without configuration: the device's 5GiB.
env LD_PRELOAD="$LIB" "$PROBE" info >"$TMP/info" 2>&1 || true
check "cuMemGetInfo total is the device's" test "$(field info total <"$TMP/info")" = $((5 << 30))
finish

# test_enforce.sh — through `convgpu run`, every allocation API is held to the container's limit:
# within it the sample runs, over it the program gets CUDA_ERROR_OUT_OF_MEMORY (exit 2), never a
# crash; the same for a program that finds the driver via dlopen + dlsym + cuGetProcAddress_v2.
. "$(dirname "$0")/lib.sh"
need_emulator
[ -x "$SAMPLE" ] || { echo "SKIP: $SAMPLE not built"; exit 77; }
export CONVGPU_EMU_CONTEXT=2MiB
start_daemon --emulate 2GiB

for api in plain pitch managed vmm async pool array mipmap; do
    expect_rc 0 "$api: 2 x 64MiB within a 256MiB limit" run_in 256MiB "$SAMPLE" --api "$api" --size 128MiB --chunks 2
    expect_rc 2 "$api: 5 x 64MiB over a 256MiB limit -> out of memory" run_in 256MiB "$SAMPLE" --api "$api" --size 320MiB --chunks 5
    check "$api: reported as CUDA_ERROR_OUT_OF_MEMORY" grep -q -i "out_of_memory\|out of memory" "$TMP/out"
done
expect_rc 0 "dlopen+cuGetProcAddress_v2 program within its limit" run_in 256MiB "$PROBE" alloc 200MiB
expect_rc 2 "dlopen+cuGetProcAddress_v2 program over its limit" run_in 256MiB "$PROBE" alloc 300MiB
# Rounding: the charge is what the driver takes (2MiB granules): 120 x (2MiB + 1) is 240MiB as
# asked but 480MiB as taken, so it cannot fit 256MiB.
expect_rc 2 "charges are rounded up to the granularity" run_in 256MiB "$SAMPLE" --api plain --size $((120 * 2097153)) --chunks 120
# What each kind of array is charged (array_bytes.h, rounded to 2MiB): every mipmap level; the
# depth of layered and cubemap arrays counts layers and faces (not halved); sparse and
# deferred-mapping arrays nothing (their memory comes from cuMemCreate handles).
expect_rc 0 "arrays of every kind within a 512MiB limit" run_in 512MiB "$PROBE" arrays
cp "$TMP/out" "$TMP/arrays"
drop() { sed -n "s/^array $1 drop=//p" "$TMP/arrays"; }
for want in array2d:16777216 array3d:4194304 cubemap:25165824 sparse:0 mipmap:23068672 \
            mipmap-layered:41943040 mipmap-deferred:0 destroyed:0; do
    check "${want%%:*} charged ${want#*:} bytes ($(drop "${want%%:*}"))" test "$(drop "${want%%:*}")" = "${want#*:}"
done
finish

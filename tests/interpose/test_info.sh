# test_info.sh — memory information is the container's: cuMemGetInfo, cuDeviceTotalMem and NVML
# (v1 and v2) report the limit as total and limit - use as free, consistently.
. "$(dirname "$0")/lib.sh"
need_emulator
export CONVGPU_EMU_CONTEXT=2MiB
start_daemon --emulate 2GiB

run_in 1GiB "$PROBE" alloc 100MiB >"$TMP/info" 2>&1 || true
G=$((1 << 30))
check "cuMemGetInfo total = limit" test "$(field 'after cuMemGetInfo' total <"$TMP/info")" = "$G"
check "cuDeviceTotalMem = limit" test "$(field 'after cuDeviceTotalMem' total <"$TMP/info")" = "$G"
free=$(field 'after cuMemGetInfo' free <"$TMP/info")
check "free = limit - use (100MiB + context)" test "${free:-0}" -le $((G - (100 << 20))) -a "${free:-0}" -ge $((G - (110 << 20)))
if grep -q "after nvml rc=0" "$TMP/info"; then
    check "NVML total = limit" test "$(field 'after nvml ' total <"$TMP/info")" = "$G"
    check "NVML v2 total = limit" test "$(field 'after nvml_v2' total <"$TMP/info")" = "$G"
    check "NVML free = cuMemGetInfo free" test "$(field 'after nvml ' free <"$TMP/info")" = "$free"
    check "NVML v2 free = cuMemGetInfo free" test "$(field 'after nvml_v2' free <"$TMP/info")" = "$free"
else
    fail "NVML not usable"; cat "$TMP/info"
fi
finish

#!/usr/bin/env bash
# test_install.sh — `make install` (PREFIX/DESTDIR) gives a working installation: the installed
# daemon finds the installed interposer and emulator, and the installed CLI runs a workload.
. "$(dirname "$0")/lib.sh"
STAGE=$TMP/stage
DESTDIR=$STAGE cmake --install "$BUILD" --prefix /opt/convgpu >"$TMP/install.log" 2>&1 \
    && pass "cmake --install into DESTDIR" || { fail "install failed"; cat "$TMP/install.log"; finish; exit 1; }
P=$STAGE/opt/convgpu
for f in bin/convgpud bin/convgpu bin/convgpu-runtime bin/convgpu-sample lib/convgpu/libconvgpu.so \
         lib/convgpu/emu/libcuda.so.1 lib/convgpu/emu/libnvidia-ml.so.1 \
         lib/systemd/system/convgpud.service share/convgpu/convgpud.conf.example; do
    check "installed $f" test -e "$P/$f"
done
check "unit starts the installed daemon" grep -q "ExecStart=/opt/convgpu/bin/convgpud --foreground" "$P/lib/systemd/system/convgpud.service"
# --check-config reads the file through the settings table and exits: the example must pass as
# is, and the same file with one bad line planted must not (else the first check proves nothing).
EXAMPLE=$P/share/convgpu/convgpud.conf.example
check "example configuration is accepted as is" "$P/bin/convgpud" --config "$EXAMPLE" --check-config
nlines=$(wc -l <"$EXAMPLE")
for bad in "no-such-setting = 1" "reserve = lots" "api-max-connections = 3"; do
    { cat "$EXAMPLE"; echo "$bad"; } >"$TMP/bad.conf"
    set +e
    "$P/bin/convgpud" --config "$TMP/bad.conf" --check-config >"$TMP/bad.out" 2>&1
    rc=$?
    set -e
    check "example plus '$bad' is refused (exit $rc)" test "$rc" = 2
    check "... with the file and the planted line $((nlines + 1))" \
        grep -q "bad.conf: line $((nlines + 1)): " "$TMP/bad.out"
done
check "--check-config checks the flags too (--reserve lots is refused)" \
    bash -c "! '$P/bin/convgpud' --config '$EXAMPLE' --check-config --reserve lots 2>/dev/null"

mkdir -p "$RUNDIR"
CONVGPU_EMU_CONTEXT=6MiB "$P/bin/convgpud" --runtime-dir "$RUNDIR" --emulate 256MiB --foreground \
    >>"$DAEMON_LOG" 2>&1 &
DAEMON_PID=$!
wait_for "installed daemon ready" "$WAIT_S" curl -sf -o /dev/null --unix-socket "$RUNDIR/control.sock" http://convgpu/v1/version
out=$("$P/bin/convgpu" --runtime-dir "$RUNDIR" create --gpu-memory 64MiB --name probe)
check "container env points into the installation" grep -q "LD_PRELOAD=$P/lib/convgpu/libconvgpu.so" <<<"$out"
"$P/bin/convgpu" --runtime-dir "$RUNDIR" rm probe >/dev/null
"$P/bin/convgpu" --runtime-dir "$RUNDIR" run --quiet --gpu-memory 64MiB -- "$P/bin/convgpu-sample" --size 32MiB --quiet \
    && pass "installed CLI runs a workload within its limit" || fail "installed run failed"
set +e
"$P/bin/convgpu" --runtime-dir "$RUNDIR" run --quiet --gpu-memory 64MiB -- "$P/bin/convgpu-sample" --size 100MiB --quiet 2>/dev/null
rc=$?
set -e
check "installed interposer enforces the limit (exit $rc)" test "$rc" = 2
finish

#!/usr/bin/env bash
# test_install_deb.sh — package.install: the .debs of `make deb` install into a fresh Debian 12
# root, the daemon they install runs there on the emulated GPU and limits a workload, `convgpu
# demo` works, and removing and purging them leaves no file behind.
#
# The root is debootstrap's minbase, made once and kept (DEB_DIR/cache/bookworm, with apt's
# lists); each run sees it through an overlay on a tmpfs, so it starts fresh and the cache is
# never written. Everything runs in a private mount namespace: the overlay, /proc and /dev
# vanish with it however the test ends; the EXIT trap also unmounts them and stops what the
# test started (by pid). Needs root, debootstrap and Debian's mirror (the packages'
# dependencies come from it); the .debs from `make deb` (CONVGPU_DEB_DIR, default
# SOURCE/build-deb). `make package` builds them and runs this.
set -eu
PKG_TEST=package.install
. "$(dirname "$0")/root_lib.sh"
deb_list=$(debs_of "$DEB_DIR") || exit 1
mapfile -t debs <<<"$deb_list"
root_up

# The files of the root as it is, less what is not the packages' to keep clean: kernel and
# tmpfs mounts, logs, apt's and dpkg's own books (a purged package leaves no list file anyway,
# and that is checked below).
snapshot() {
    (cd "$ROOT" && find . \( -path ./proc -o -path ./dev -o -path ./sys -o -path ./tmp \
        -o -path ./run -o -path ./var/log -o -path ./var/cache -o -path ./var/lib/apt \
        -o -path ./var/lib/dpkg \) -prune -o -print) | sort
}
snapshot >"$WORK/before"

mkdir "$ROOT/tmp/debs"
cp "${debs[@]}" "$ROOT/tmp/debs/"
in_root_debs=()
for f in "${debs[@]}"; do in_root_debs+=("/tmp/debs/${f##*/}"); done
install_debs() { in_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
    --no-install-recommends "${in_root_debs[@]}" >"$WORK/apt.log" 2>&1; }
install_debs || { tail -n 30 "$WORK/apt.log"; die "apt-get install ./*.deb failed"; }
pass "apt-get install of ${debs[*]##*/}"

# What the packages promise.
for f in /usr/bin/convgpud /usr/bin/convgpu /usr/bin/convgpu-runtime /usr/bin/convgpu-sample \
         /usr/bin/convgpu-device-plugin /usr/bin/convgpu-scheduler-extender \
         /usr/lib/convgpu/libconvgpu.so /usr/lib/convgpu/emu/libcuda.so.1 \
         /usr/lib/convgpu/emu/libnvidia-ml.so.1 /lib/systemd/system/convgpud.service \
         /usr/lib/tmpfiles.d/convgpu.conf /etc/convgpu/convgpud.conf \
         /usr/share/man/man8/convgpud.8.gz /usr/share/man/man5/convgpud.conf.5.gz; do
    check "installed $f" test -e "$ROOT$f"
done
check "the unit is enabled on install" \
    test -L "$ROOT/etc/systemd/system/multi-user.target.wants/convgpud.service"
check "/etc/convgpu/convgpud.conf is a conffile" \
    grep -q "/etc/convgpu/convgpud.conf" <(in_root dpkg-query -W -f='${Conffiles}\n' convgpu)
check "the emulated libcuda.so.1 is not on the loader's path" \
    bash -c "! chroot '$ROOT' ldconfig -p | grep -q 'libcuda\|libnvidia-ml'"

# Boot's part: what systemd-tmpfiles would make from the package's entry (no systemd here).
read -r kind path mode owner group _ < <(grep -v '^#' "$ROOT/usr/lib/tmpfiles.d/convgpu.conf")
check "tmpfiles.d makes /run/convgpu (d, root-owned)" \
    test "$kind $path $owner $group" = "d /run/convgpu root root"
in_root install -d -m "$mode" "$path"

# The installed daemon, started as the unit starts it, on the emulated GPU.
chroot "$ROOT" env -i PATH=/usr/bin:/bin CONVGPU_EMU_CONTEXT=66MiB \
    /usr/bin/convgpud --foreground --emulate 5GiB >"$ROOT/tmp/convgpud.log" 2>&1 &
DAEMON_PID=$!
daemon_answers() {
    kill -0 "$DAEMON_PID" 2>/dev/null || die "convgpud exited"
    in_root convgpu devices >/dev/null 2>&1
}
wait_until "convgpud answering" daemon_answers || die "convgpud did not answer within ${WAIT_S}s"
pass "convgpud answers on /run/convgpu/control.sock"
check "a workload within its limit runs" \
    in_root convgpu run --quiet --gpu-memory 256MiB -- convgpu-sample --size 64MiB --quiet
set +e
in_root convgpu run --quiet --gpu-memory 128MiB -- convgpu-sample --size 200MiB --quiet 2>/dev/null
rc=$?
set -e
check "the installed interposer enforces the limit (exit $rc, want 2)" test "$rc" = 2
kill -TERM "$DAEMON_PID"
wait "$DAEMON_PID" || true
DAEMON_PID=

if in_root convgpu demo >"$WORK/demo.log" 2>&1 && grep -q "finished in" "$WORK/demo.log"; then
    pass "convgpu demo"
else
    tail -n 30 "$WORK/demo.log"; fail "convgpu demo"
fi

in_root env DEBIAN_FRONTEND=noninteractive apt-get purge -y -q convgpu libconvgpu convgpu-emu convgpu-slurm convgpu-k8s \
    >>"$WORK/apt.log" 2>&1 || { tail -n 20 "$WORK/apt.log"; die "apt-get purge failed"; }
in_root env DEBIAN_FRONTEND=noninteractive apt-get autoremove --purge -y -q >>"$WORK/apt.log" 2>&1 \
    || { tail -n 20 "$WORK/apt.log"; die "apt-get autoremove --purge failed"; }
check "dpkg knows no convgpu package any more" \
    bash -c "! chroot '$ROOT' dpkg-query -W -f='\${Package}\n' 2>/dev/null | grep -q '^\(lib\)\?convgpu'"
check "dpkg keeps no file list of them" \
    bash -c "! ls '$ROOT'/var/lib/dpkg/info/ | grep -q '^\(lib\)\?convgpu'"
snapshot >"$WORK/after"
if diff "$WORK/before" "$WORK/after" >"$WORK/diff"; then
    pass "remove + purge leave nothing behind ($(wc -l <"$WORK/before") paths compared)"
else
    cat "$WORK/diff"; fail "files left behind or removed (above: < before only, > after only)"
fi
echo "$PASSES passed, $FAILS failed"
[ "$FAILS" -eq 0 ]

# root_lib.sh — what the package tests share (sourced by test_install_deb.sh,
# test_upgrade_deb.sh and test_image.sh after they set PKG_TEST, their ctest name): a private
# mount namespace (the test re-runs itself in one, as root), the check counters, a bounded
# poll for a condition (wait_until), the packages' .debs found in a
# directory, and a fresh Debian 12 root: debootstrap's cached minbase (packaging/debian-root.sh,
# DEB_DIR/cache/bookworm) seen through an overlay on a tmpfs, with /proc and /dev, so every run
# starts clean and the cache is never written. The EXIT trap stops the daemon (DAEMON_PID) and
# whatever runs inside the root, shows the daemon's log on failure and unmounts it all.
SRC=${CONVGPU_SOURCE_DIR:?CONVGPU_SOURCE_DIR must point at the source tree}
DEB_DIR=${CONVGPU_DEB_DIR:-$SRC/build-deb}
MIRROR=${CONVGPU_DEBIAN_MIRROR:-http://deb.debian.org/debian}
CACHE=$DEB_DIR/cache/bookworm
WAIT_S=120 # bounds a hang only; the daemon answers in well under a second

if [ -z "${CONVGPU_PKG_NS:-}" ]; then
    [ "$(id -u)" -eq 0 ] || { echo "FAIL: $PKG_TEST needs root (chroot, mounts)"; exit 1; }
    exec unshare --mount --propagation private env CONVGPU_PKG_NS=1 bash "$0" "$@"
fi

FAILS=0 PASSES=0
fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }
pass() { echo "ok: $*"; PASSES=$((PASSES + 1)); }
check() { local what=$1; shift; if "$@"; then pass "$what"; else fail "$what"; fi; }
die() { fail "$*"; echo "$PASSES passed, $FAILS failed"; exit 1; }
wait_until() { # wait_until WHAT COMMAND...: polls; the deadline only bounds a hang
    local what=$1 deadline=$(( $(date +%s) + WAIT_S )); shift
    until "$@"; do
        [ "$(date +%s)" -le "$deadline" ] || { fail "waited ${WAIT_S}s for: $what"; return 1; }
        sleep 0.05
    done
}

# debs_of DIR: the five packages' newest .debs there, a line each; fails, saying which is
# missing on stderr (it runs in $(...), where a die would only end the subshell), when one is.
debs_of() {
    local p f
    for p in convgpu libconvgpu convgpu-emu convgpu-slurm convgpu-k8s; do
        f=$(ls "$1"/${p}_*.deb 2>/dev/null | tail -n 1)
        [ -n "$f" ] || { echo "FAIL: no ${p}_*.deb in $1: run make deb (and make deb-next) first" >&2; return 1; }
        echo "$f"
    done
}

# root_up: the fresh root at $ROOT (under $WORK), its cleanup trapped; in_root runs in it.
root_up() {
    "$SRC/packaging/debian-root.sh" "$CACHE" "$MIRROR" || die "no Debian 12 root in $CACHE"
    WORK=$(mktemp -d /tmp/convgpu-pkg.XXXXXX)
    ROOT=$WORK/root
    DAEMON_PID=
    trap root_cleanup EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
    mount -t tmpfs -o mode=0755 convgpu-pkg "$WORK"
    mkdir "$WORK/upper" "$WORK/work" "$ROOT"
    mount -t overlay overlay -o "lowerdir=$CACHE,upperdir=$WORK/upper,workdir=$WORK/work" "$ROOT"
    mount -t proc proc "$ROOT/proc"
    mount --rbind /dev "$ROOT/dev"
    cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
}
root_cleanup() {
    set +e
    [ -n "$DAEMON_PID" ] && kill -TERM "$DAEMON_PID" 2>/dev/null && wait "$DAEMON_PID" 2>/dev/null
    # Whatever still runs inside the root was started by this test (the demo's children, say).
    for p in /proc/[0-9]*; do
        [ "$(readlink "$p/root" 2>/dev/null)" = "$ROOT" ] && kill -KILL "${p#/proc/}" 2>/dev/null
    done
    if [ "$FAILS" -ne 0 ] && [ -f "$ROOT/tmp/convgpud.log" ]; then
        echo "--- convgpud log ---"; tail -n 40 "$ROOT/tmp/convgpud.log"
    fi
    for m in "$ROOT/dev" "$ROOT/proc" "$ROOT" "$WORK"; do
        mountpoint -q "$m" && umount -R "$m"
    done
    rmdir "$WORK" 2>/dev/null
}
in_root() { chroot "$ROOT" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 "$@"; }

#!/usr/bin/env bash
# measure-deps.sh — what each package set of scripts/install-deps.sh costs a fresh Debian 12
# machine: the number of packages apt would install (apt-get --simulate against the fresh
# root's dpkg status and lists) and, with --install, the wall time of really installing them
# there (apt-get update + install from the mirror, as install-deps.sh does); with --demo as
# well, `make demo` then runs in the `build` set's root on a copy of this tree (the build set
# is enough: nothing else is there), and its wall time is printed.
#
# The fresh machine is the package test's cached debootstrap minbase root (packaging/
# debian-root.sh), seen through an overlay on a tmpfs in a private mount namespace: it is
# never written, and each set starts from the same fresh state. Needs root and the mirror.
# docs/TESTING.md records the figures.
#
# Usage: scripts/measure-deps.sh CACHE_ROOT [--install [--demo]]
set -eu
[ "$#" -ge 1 ] || { echo "usage: $0 CACHE_ROOT [--install]" >&2; exit 2; }
CACHE=$(realpath "$1")
INSTALL=${2:-}
DEMO=${3:-}
SRC=$(cd "$(dirname "$0")/.." && pwd)
[ -x "$CACHE/usr/bin/apt-get" ] || { echo "measure-deps: no Debian root in $CACHE" >&2; exit 1; }

if [ -z "${CONVGPU_MEASURE_NS:-}" ]; then
    [ "$(id -u)" -eq 0 ] || { echo "measure-deps: needs root (overlay, chroot)" >&2; exit 1; }
    exec unshare --mount --propagation private env CONVGPU_MEASURE_NS=1 bash "$0" "$@"
fi

WORK=$(mktemp -d /tmp/convgpu-measure.XXXXXX)
trap 'umount -R "$WORK/root" 2>/dev/null; umount "$WORK" 2>/dev/null; rm -rf "$WORK"; true' EXIT
mount -t tmpfs tmpfs "$WORK"

for set in build all; do
    mkdir -p "$WORK/$set/upper" "$WORK/$set/work" "$WORK/root"
    mount -t overlay overlay \
        -o "lowerdir=$CACHE,upperdir=$WORK/$set/upper,workdir=$WORK/$set/work" "$WORK/root"
    mount -t proc proc "$WORK/root/proc"
    cp /etc/resolv.conf "$WORK/root/etc/resolv.conf"
    in_root() { chroot "$WORK/root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
        LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"; }
    # shellcheck disable=SC2046
    count=$(in_root apt-get --simulate install --no-install-recommends \
        $("$SRC/scripts/install-deps.sh" --list "$set") | grep -c '^Inst ')
    line="set $set: $count packages (apt-get --simulate on a fresh minbase root)"
    if [ "$INSTALL" = "--install" ]; then
        start=$(date +%s)
        in_root apt-get update -qq
        # shellcheck disable=SC2046
        in_root apt-get install -y -qq --no-install-recommends \
            $("$SRC/scripts/install-deps.sh" --list "$set") >"$WORK/$set.log" 2>&1 ||
            { tail -n 20 "$WORK/$set.log"; echo "measure-deps: set $set failed" >&2; exit 1; }
        line="$line; installed in $(($(date +%s) - start)) s"
        if [ "$set" = build ] && [ "$DEMO" = "--demo" ]; then
            mkdir "$WORK/root/src"
            (cd "$SRC" && tar -c --exclude='./build*' --exclude=./.git .) | tar -x -C "$WORK/root/src"
            start=$(date +%s)
            in_root sh -c 'cd /src && make demo JOBS=2' >"$WORK/demo.log" 2>&1 ||
                { tail -n 30 "$WORK/demo.log"; echo "measure-deps: make demo failed" >&2; exit 1; }
            line="$line; then make demo (build + demo) in $(($(date +%s) - start)) s"
        fi
    fi
    echo "$line"
    # apt may leave a daemon of its own (gpg's agent) in the root: detach rather than fail.
    umount -l "$WORK/root/proc"
    umount -l "$WORK/root"
done
exit 0

#!/usr/bin/env bash
# build-image.sh — the node image for a Kubernetes DaemonSet, made only of Debian's packages and
# ours: a Debian 12 minbase root (packaging/debian-root.sh), the .debs of `make deb` installed
# with apt, apt's caches and lists removed. Writes two files to OUT:
#   convgpu-node-rootfs.tar  the root filesystem:  docker import convgpu-node-rootfs.tar convgpu-node:VERSION
#   convgpu-node-image.tar   the same as a one-layer image (entrypoint convgpud --foreground):
#                            ctr images import convgpu-node-image.tar   or   docker load -i ...
#
# Usage: packaging/image/build-image.sh DEB_DIR OUT [MIRROR]      (root; `make image`)
set -eu
[ "$#" -ge 2 ] || { echo "usage: $0 DEB_DIR OUT [MIRROR]" >&2; exit 2; }
HERE=$(cd "$(dirname "$0")" && pwd)
DEB_DIR=$(cd "$1" && pwd)
mkdir -p "$2"
OUT=$(cd "$2" && pwd)
MIRROR=${3:-http://deb.debian.org/debian}
if [ -z "${CONVGPU_IMAGE_NS:-}" ]; then
    [ "$(id -u)" -eq 0 ] || { echo "build-image: needs root (chroot, mounts)" >&2; exit 1; }
    # A private mount namespace: the overlay and /proc vanish with it, however this ends.
    exec unshare --mount --propagation private env CONVGPU_IMAGE_NS=1 bash "$0" "$@"
fi

debs=()
for p in convgpu libconvgpu convgpu-emu convgpu-k8s; do
    f=$(ls "$DEB_DIR"/${p}_*.deb 2>/dev/null | tail -n 1)
    [ -n "$f" ] || { echo "build-image: no ${p}_*.deb in $DEB_DIR: run make deb first" >&2; exit 1; }
    debs+=("$f")
done
VERSION=$(dpkg-deb -f "${debs[0]}" Version)
CACHE=$DEB_DIR/cache/bookworm
"$HERE/../debian-root.sh" "$CACHE" "$MIRROR"

WORK=$(mktemp -d /tmp/convgpu-image.XXXXXX)
ROOT=$WORK/root
cleanup() {
    for m in "$ROOT/proc" "$ROOT" "$WORK"; do mountpoint -q "$m" && umount -R "$m"; done
    rmdir "$WORK" 2>/dev/null || true
}
trap cleanup EXIT
mount -t tmpfs -o mode=0755 convgpu-image "$WORK"
mkdir "$WORK/upper" "$WORK/work" "$ROOT"
mount -t overlay overlay -o "lowerdir=$CACHE,upperdir=$WORK/upper,workdir=$WORK/work" "$ROOT"
mount -t proc proc "$ROOT/proc"
cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
mkdir "$ROOT/tmp/debs"
cp "${debs[@]}" "$ROOT/tmp/debs/"
in_root=()
for f in "${debs[@]}"; do in_root+=("/tmp/debs/${f##*/}"); done
chroot "$ROOT" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -q --no-install-recommends "${in_root[@]}" >"$OUT/image-apt.log" 2>&1 \
    || { tail -n 30 "$OUT/image-apt.log"; echo "build-image: apt-get install failed" >&2; exit 1; }
chroot "$ROOT" apt-get clean
umount "$ROOT/proc"
# What a container runtime provides, or what only describes the build, is left empty.
rm -rf "$ROOT"/tmp/* "$ROOT"/var/lib/apt/lists/* "$ROOT"/var/log/* "$ROOT"/var/cache/apt/*.bin
: >"$ROOT/etc/resolv.conf"
: >"$ROOT/etc/hostname"
tar --numeric-owner --xattrs -C "$ROOT" -cf "$OUT/convgpu-node-rootfs.tar" .
python3 "$HERE/oci_archive.py" "$OUT/convgpu-node-rootfs.tar" "$OUT/convgpu-node-image.tar" \
    "convgpu-node:$VERSION" /usr/bin/convgpud --foreground
echo "build-image: $OUT/convgpu-node-rootfs.tar (docker import), $OUT/convgpu-node-image.tar (ctr images import, docker load)"

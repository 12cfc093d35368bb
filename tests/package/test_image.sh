#!/usr/bin/env bash
# test_image.sh — package.image: the DaemonSet's node image is built from the packages alone
# (packaging/image/build-image.sh), holds what the node needs and no apt lists, its image archive
# is consistent (every blob's name is its digest, the layer's diff_id is its uncompressed
# digest, the manifests name the config and the layer), and a container root made from its
# rootfs runs `convgpud --version` and `convgpu demo`. Needs root, debootstrap and Debian's
# mirror, and the .debs of `make deb` (CONVGPU_DEB_DIR, default SOURCE/build-deb); leaves the
# image in DEB_DIR/image.
set -eu
PKG_TEST=package.image
# The package tests' harness: root in a private mount namespace, the check counters.
. "$(dirname "$0")/root_lib.sh"

OUT=$DEB_DIR/image
rm -f "$OUT"/convgpu-node-*.tar
"$SRC/packaging/image/build-image.sh" "$DEB_DIR" "$OUT" >"$DEB_DIR/image-build.log" 2>&1 \
    || { tail -n 30 "$DEB_DIR/image-build.log"; echo "FAIL: build-image.sh"; exit 1; }
pass "build-image.sh from the packages"
ROOTFS=$OUT/convgpu-node-rootfs.tar
IMAGE=$OUT/convgpu-node-image.tar

WORK=$(mktemp -d /tmp/convgpu-imgtest.XXXXXX)
cleanup() {
    set +e
    for p in /proc/[0-9]*; do
        [ "$(readlink "$p/root" 2>/dev/null)" = "$WORK/root" ] && kill -KILL "${p#/proc/}" 2>/dev/null
    done
    for m in "$WORK/root/proc" "$WORK"; do mountpoint -q "$m" && umount -R "$m"; done
    rmdir "$WORK" 2>/dev/null
}
trap cleanup EXIT
mount -t tmpfs -o mode=0755 convgpu-imgtest "$WORK"

tar -tf "$ROOTFS" | sed 's|^\./||' | sort >"$WORK/files"
for f in usr/bin/convgpud usr/bin/convgpu usr/bin/convgpu-runtime usr/lib/convgpu/libconvgpu.so \
         usr/lib/convgpu/emu/libcuda.so.1 etc/convgpu/convgpud.conf usr/bin/convgpu-device-plugin; do
    check "the rootfs has $f" grep -qx "$f" "$WORK/files"
done
check "no emulated library where a driver's belongs" bash -c \
    "! grep -E '(^|/)lib(cuda|nvidia-ml)\.so' '$WORK/files' | grep -v '^usr/lib/convgpu/emu/'"
check "no apt lists or downloaded packages" \
    bash -c "! grep -E '^var/lib/apt/lists/.|^var/cache/apt/archives/.*\.deb$' '$WORK/files'"

python3 - "$IMAGE" <<'PY' && pass "the image archive is consistent (docker load, ctr import)" \
    || fail "the image archive is not consistent"
import gzip, hashlib, json, sys, tarfile
t = tarfile.open(sys.argv[1])
blob = lambda d: t.extractfile("blobs/sha256/" + d.split(":", 1)[1]).read()
for m in t.getmembers():
    if m.name.startswith("blobs/sha256/"):
        assert hashlib.sha256(t.extractfile(m).read()).hexdigest() == m.name.rsplit("/", 1)[1], m.name
assert json.load(t.extractfile("oci-layout"))["imageLayoutVersion"] == "1.0.0"
index = json.load(t.extractfile("index.json"))
name = index["manifests"][0]["annotations"]["io.containerd.image.name"]
assert name.startswith("docker.io/library/convgpu-node:"), name
manifest = json.loads(blob(index["manifests"][0]["digest"]))
config = json.loads(blob(manifest["config"]["digest"]))
layer = gzip.decompress(blob(manifest["layers"][0]["digest"]))
assert config["rootfs"]["diff_ids"] == ["sha256:" + hashlib.sha256(layer).hexdigest()]
assert config["config"]["Entrypoint"] == ["/usr/bin/convgpud", "--foreground"]
docker = json.load(t.extractfile("manifest.json"))[0]
assert docker["Config"] == "blobs/sha256/" + manifest["config"]["digest"].split(":")[1]
assert docker["Layers"] == ["blobs/sha256/" + manifest["layers"][0]["digest"].split(":")[1]]
PY

mkdir "$WORK/root"
tar --numeric-owner -C "$WORK/root" -xf "$ROOTFS"
mount -t proc proc "$WORK/root/proc"
check "convgpud runs in the image's root" chroot "$WORK/root" /usr/bin/convgpud --version
# The DaemonSet's second container (packaging/k8s/daemonset.yaml): its libraries are in the image.
check "the device plugin runs in the image's root" chroot "$WORK/root" /usr/bin/convgpu-device-plugin --version
if chroot "$WORK/root" env -i PATH=/usr/bin:/bin /usr/bin/convgpu demo >"$WORK/demo.log" 2>&1 \
    && grep -q "finished in" "$WORK/demo.log"; then
    pass "convgpu demo in the image's root"
else
    tail -n 20 "$WORK/demo.log"; fail "convgpu demo in the image's root"
fi
echo "$PASSES passed, $FAILS failed"
[ "$FAILS" -eq 0 ]

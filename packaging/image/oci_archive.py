#!/usr/bin/env python3
"""oci_archive.py — wraps a root filesystem tarball as a one-layer container image archive that
both `ctr images import` (OCI image layout: oci-layout, index.json, blobs/sha256/...) and
`docker load` (its manifest.json beside them) accept. The rootfs tarball itself is what
`docker import` takes; this adds only the image's configuration (entrypoint, environment).

Usage: oci_archive.py ROOTFS.tar OUT.tar NAME:TAG ENTRYPOINT...
Only the standard library: the image is made of Debian's packages and ours, nothing fetched.
"""
import gzip
import hashlib
import io
import json
import os
import sys
import tarfile


def digest(data):
    return "sha256:" + hashlib.sha256(data).hexdigest()


def main(argv):
    if len(argv) < 5 or ":" not in argv[3]:
        sys.exit("usage: oci_archive.py ROOTFS.tar OUT.tar NAME:TAG ENTRYPOINT...")
    rootfs, out, ref, entrypoint = argv[1], argv[2], argv[3], argv[4:]
    name, tag = ref.rsplit(":", 1)
    # containerd (and so Kubernetes' CRI) names images in full; `convgpu-node:TAG` in a pod spec
    # means docker.io/library/convgpu-node:TAG.
    full_ref = ref if "/" in name else "docker.io/library/" + ref
    with open(rootfs, "rb") as f:
        layer = f.read()
    # mtime 0: the same rootfs gives the same compressed layer, hence the same image id.
    layer_gz = gzip.compress(layer, compresslevel=6, mtime=0)
    config = json.dumps({
        "architecture": "amd64" if os.uname().machine == "x86_64" else os.uname().machine,
        "os": "linux",
        "config": {
            "Entrypoint": entrypoint,
            "Env": ["PATH=/usr/sbin:/usr/bin:/sbin:/bin"],
            "Labels": {"org.opencontainers.image.title": name,
                       "org.opencontainers.image.version": tag},
        },
        "rootfs": {"type": "layers", "diff_ids": [digest(layer)]},
        "history": [{"created_by": "packaging/image/build-image.sh: debootstrap + convgpu .debs"}],
    }, sort_keys=True).encode()
    manifest = json.dumps({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json",
                   "digest": digest(config), "size": len(config)},
        "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip",
                    "digest": digest(layer_gz), "size": len(layer_gz)}],
    }, sort_keys=True).encode()
    index = json.dumps({
        "schemaVersion": 2,
        "manifests": [{"mediaType": "application/vnd.oci.image.manifest.v1+json",
                       "digest": digest(manifest), "size": len(manifest),
                       "annotations": {"io.containerd.image.name": full_ref,
                                       "org.opencontainers.image.ref.name": tag}}],
    }, sort_keys=True).encode()
    blob = lambda d: "blobs/sha256/" + d.split(":", 1)[1]
    docker_manifest = json.dumps([{"Config": blob(digest(config)), "RepoTags": [ref],
                                   "Layers": [blob(digest(layer_gz))]}]).encode()
    with tarfile.open(out, "w", format=tarfile.PAX_FORMAT) as t:
        def add(path, data):
            info = tarfile.TarInfo(path)
            info.size, info.mode, info.mtime = len(data), 0o644, 0
            t.addfile(info, io.BytesIO(data))
        add("oci-layout", b'{"imageLayoutVersion":"1.0.0"}')
        add("index.json", index)
        add("manifest.json", docker_manifest)
        for data in (config, manifest, layer_gz):
            add(blob(digest(data)), data)
    print(f"{out}: {ref}, layer {len(layer_gz)} bytes compressed ({len(layer)} as a tar)")


if __name__ == "__main__":
    main(sys.argv)

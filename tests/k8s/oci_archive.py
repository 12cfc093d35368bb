#!/usr/bin/env python3
"""oci_archive.py ROOTFS NAME OUT.tar — an OCI image archive (image layout, one uncompressed
layer) from a root filesystem directory, for `ctr images import`: the containerd tests' image
is made from host binaries (tests/containers/lib.sh make_rootfs), never pulled."""
import hashlib
import io
import json
import sys
import tarfile


def blob(out, data, media):
    digest = "sha256:" + hashlib.sha256(data).hexdigest()
    info = tarfile.TarInfo("blobs/sha256/" + digest[7:])
    info.size = len(data)
    out.addfile(info, io.BytesIO(data))
    return {"mediaType": media, "digest": digest, "size": len(data)}


def main():
    rootfs, name, path = sys.argv[1:4]
    layer_buf = io.BytesIO()
    with tarfile.open(fileobj=layer_buf, mode="w", format=tarfile.PAX_FORMAT) as layer:
        layer.add(rootfs, arcname=".")
    layer_bytes = layer_buf.getvalue()
    config = {
        "architecture": "amd64", "os": "linux",
        "config": {"Env": ["PATH=/usr/local/bin:/usr/bin:/bin"]},
        "rootfs": {"type": "layers",
                   "diff_ids": ["sha256:" + hashlib.sha256(layer_bytes).hexdigest()]},
    }
    with tarfile.open(path, mode="w") as out:
        layer_desc = blob(out, layer_bytes, "application/vnd.oci.image.layer.v1.tar")
        config_desc = blob(out, json.dumps(config).encode(),
                           "application/vnd.oci.image.config.v1+json")
        manifest = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
                    "config": config_desc, "layers": [layer_desc]}
        manifest_desc = blob(out, json.dumps(manifest).encode(),
                             "application/vnd.oci.image.manifest.v1+json")
        manifest_desc["annotations"] = {"org.opencontainers.image.ref.name": name}
        for fname, data in (("oci-layout", {"imageLayoutVersion": "1.0.0"}),
                            ("index.json", {"schemaVersion": 2, "manifests": [manifest_desc]})):
            raw = json.dumps(data).encode()
            info = tarfile.TarInfo(fname)
            info.size = len(raw)
            out.addfile(info, io.BytesIO(raw))


if __name__ == "__main__":
    main()

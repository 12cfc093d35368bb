#!/usr/bin/env python3
"""cdi_apply.py — what a container runtime does with one CDI device, for the DRA tests where no
CDI-aware runtime runs (containerd 1.6 has none): reads the spec holding DEVICE (kind=name) from
the CDI directory and prints, one per line, either `ctr run` options (--ctr) or a shell script
(--script ROOTFS) that bind-mounts the device's mounts into ROOTFS (creating the targets, as runc
does) and sets its variables over the pod's own (CDI edits replace a variable of the same name).

Usage: cdi_apply.py --cdi-dir DIR --device KIND=NAME (--ctr | --script ROOTFS)
"""
import argparse
import glob
import json
import shlex
import sys

ap = argparse.ArgumentParser()
ap.add_argument("--cdi-dir", required=True)
ap.add_argument("--device", required=True)
ap.add_argument("--ctr", action="store_true")
ap.add_argument("--script")
opt = ap.parse_args()
kind, name = opt.device.split("=", 1)
edits = None
for path in sorted(glob.glob(opt.cdi_dir + "/*.json")):
    spec = json.load(open(path))
    if spec.get("kind") != kind:
        continue
    for d in spec.get("devices", []):
        if d.get("name") == name:
            edits = [spec.get("containerEdits", {}), d.get("containerEdits", {})]
if edits is None:
    sys.exit("no CDI device %s under %s" % (opt.device, opt.cdi_dir))
env = [e for ed in edits for e in ed.get("env", [])]
mounts = [m for ed in edits for m in ed.get("mounts", [])]
if opt.ctr:
    for m in mounts:
        print("--mount")
        print("type=bind,src=%s,dst=%s,options=%s" % (m["hostPath"], m["containerPath"],
                                                      ":".join(m.get("options", ["rbind"]))))
    for e in env:
        print("--env")
        print(e)
else:
    root = opt.script
    print("set -e")
    for m in mounts:
        dst = root + m["containerPath"]
        src = m["hostPath"]
        print("if [ -d %s ]; then mkdir -p %s; else mkdir -p %s && touch %s; fi" % (
            shlex.quote(src), shlex.quote(dst), shlex.quote(dst.rsplit("/", 1)[0]), shlex.quote(dst)))
        print("mount --bind %s %s" % (shlex.quote(src), shlex.quote(dst)))
        if "ro" in m.get("options", []):
            print("mount -o remount,bind,ro %s" % shlex.quote(dst))
    print("CDI_ENV=(%s)" % " ".join(shlex.quote(e) for e in env))

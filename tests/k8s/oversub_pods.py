#!/usr/bin/env python3
# oversub_pods.py — the pod side of a node for issue 37 item 5 (k8s.oversub, bench/k8s-oversub.sh):
# what kube-scheduler and kubelet do with pods that ask for convgpu.io/gpu-memory, on one node,
# with the device plugin reached only through the kubelet stand-in's real gRPC calls.
#
#   oversub_pods.py --standin BIN --socket MEM_SOCK --list LIST --rundir DIR --out OUT PODS
#
# PODS: one pod a line, "NAME UNITS COMMAND...": each pod's one container asks for UNITS memory
# units (limits = requests). The node: LIST is the stand-in's last ListAndWatch list of the
# memory resource ("ID HEALTH" lines, as kubelet sees the plugin's units). Pods are admitted in
# order, first come first served, as a scheduler binds them: the head pod starts when the
# Healthy units no running pod holds are at least UNITS (a pod that does not fit waits pending,
# and so do the pods behind it, as kube-scheduler's queue does on a one-node cluster). A pod's
# start is what kubelet and the runtime do:
#   GetPreferredAllocation(available, UNITS) -> Allocate(the chosen IDs) -> the plugin's token
#   (kubelet-standin prefer / allocate), then the shim's claim: POST /v1/containers
#   {"id", "allocation": [token], "allocation_pod"} (convgpud registers it from its record),
#   the command started with the container's environment (interposer, socket, emulator), and
#   its pid reported (POST .../start) so that convgpud removes the container when it ends.
# When its process exits the pod is done: its units are free again (kubelet frees its device
# IDs), and the container is deleted as the shim's delete does.
#
# Written for tests and benchmarks to wait on (OUT is a directory; files written whole):
#   running         the names of the running pods, one a line
#   max_running     the most pods that ran at once, and the most units they held together
#   NAME.rc         a finished pod's exit status; NAME.out its output
#   times           one line per finished pod: "NAME START END" in seconds from the first admission
#   summary         "makespan_s PODS failed ooms max_running max_units" when every pod is done
# A pod whose Allocate or claim fails counts as failed (exit status 100), never retried.
import argparse
import json
import os
import socket
import subprocess
import sys
import time


def write(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def api(rundir, method, path, body=None):
    s = socket.socket(socket.AF_UNIX)
    s.connect(os.path.join(rundir, "control.sock"))
    data = json.dumps(body).encode() if body is not None else b""
    s.sendall(f"{method} {path} HTTP/1.1\r\nHost: c\r\nConnection: close\r\n"
              f"Content-Length: {len(data)}\r\n\r\n".encode() + data)
    out = b""
    while chunk := s.recv(65536):
        out += chunk
    s.close()
    head, _, rest = out.partition(b"\r\n\r\n")
    return int(head.split()[1]), (json.loads(rest) if rest.strip() else None)


def healthy_units(listfile):
    try:
        with open(listfile) as f:
            return [l.split()[0] for l in f if l.split()[1:] == ["Healthy"]]
    except OSError:
        return []


def standin(binary, *args):
    p = subprocess.run([binary, *args], capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(p.stderr.strip())
    return p.stdout


def main():
    ap = argparse.ArgumentParser()
    for a in ("--standin", "--socket", "--list", "--rundir", "--out"):
        ap.add_argument(a, required=True)
    ap.add_argument("--poll", type=float, default=0.05)
    ap.add_argument("pods")
    o = ap.parse_args()
    pods = []
    for line in open(o.pods):
        f = line.split()
        if f:
            pods.append((f[0], int(f[1]), f[2:]))
    os.makedirs(o.out, exist_ok=True)
    held = {}      # name -> (Popen, [unit IDs])
    failed = ooms = max_running = max_units = 0
    t0 = time.monotonic()
    queue = list(pods)

    started = {}
    times = []

    def finish(name, rc):
        nonlocal failed, ooms
        times.append(f"{name} {started.get(name, 0.0):.2f} {time.monotonic() - t0:.2f}\n")
        write(os.path.join(o.out, "times"), "".join(times))
        failed += rc != 0
        ooms += rc == 2   # convgpu-sample and the job scripts exit 2 on out-of-memory
        write(os.path.join(o.out, name + ".rc"), f"{rc}\n")

    while queue or held:
        for name in [n for n, (p, _) in held.items() if p.poll() is not None]:
            p, _ = held.pop(name)
            api(o.rundir, "DELETE", f"/v1/containers/{name}")
            finish(name, p.returncode)
        while queue:
            name, units, cmd = queue[0]
            taken = {u for _, ids in held.values() for u in ids}
            free = [u for u in healthy_units(o.list) if u not in taken]
            if len(free) < units:
                break
            queue.pop(0)
            try:
                ids = standin(o.standin, "prefer", "--socket", o.socket, "--available",
                              ",".join(free), "--size", str(units)).strip()
                env = dict(l.split(" ", 1)[1].split("=", 1) for l in
                           standin(o.standin, "allocate", "--socket", o.socket, ids).splitlines())
                st, c = api(o.rundir, "POST", "/v1/containers",
                            {"id": name, "allocation": [env["CONVGPU_ALLOCATION"]],
                             "allocation_pod": "pod-" + name})
                if st != 201:
                    raise RuntimeError(f"claim: HTTP {st} {c}")
            except (RuntimeError, KeyError, ValueError) as e:
                print(f"pod {name}: not started: {e}", file=sys.stderr)
                finish(name, 100)
                continue
            penv = dict(os.environ)
            penv.update({k: str(v) for k, v in c["env"].items()})
            out = open(os.path.join(o.out, name + ".out"), "w")
            p = subprocess.Popen(cmd, env=penv, stdout=out, stderr=subprocess.STDOUT)
            out.close()
            api(o.rundir, "POST", f"/v1/containers/{name}/start", {"pid": p.pid})
            held[name] = (p, ids.split(","))
            started[name] = time.monotonic() - t0
            max_running = max(max_running, len(held))
            max_units = max(max_units, sum(len(i) for _, i in held.values()))
            write(os.path.join(o.out, "max_running"), f"{max_running} {max_units}\n")
        write(os.path.join(o.out, "running"), "".join(n + "\n" for n in held))
        if queue or held:
            time.sleep(o.poll)
    makespan = time.monotonic() - t0
    write(os.path.join(o.out, "summary"),
          f"{makespan:.2f} {len(pods)} {failed} {ooms} {max_running} {max_units}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

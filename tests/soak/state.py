#!/usr/bin/env python3
"""state.py — accounting checks of the reliability tests, over one quiescent snapshot.

  state.py check DIR      DIR holds devices.json, ps.json, inspect.NAME.json (one per container),
                          nvml.txt (churn --nvml), procs.txt ("PID NAME STATUSFILE" per live
                          process), ctx (the context charge in bytes). Prints "ok: ..." or
                          "FAIL: ..." lines and writes DIR/snapshot.json.
  state.py compare A B    compares two snapshots (containers, limits, assignments, devices,
                          per-process use, pending requests); "ok:"/"FAIL:" lines.
  state.py pending DIR    prints "PID BYTES" for every pending request in DIR's inspect files.
  state.py digest DIR     prints DIR's accounting (devices, containers, processes, pending
                          requests) canonically, without what changes by itself (times): two
                          views of an unchanged state print the same.

  DIR may hold statuses.txt ("PID STATUSLINE" per process, read with the daemon's view); check
  then reads the processes' statuses from it rather than from their files, which may have moved.
"""
import glob
import json
import os
import sys

fails = 0


def ok(msg):
    print("ok: " + msg)


def fail(msg):
    global fails
    fails += 1
    print("FAIL: " + msg)


def expect(cond, msg):
    (ok if cond else fail)(msg)
    return cond


def load(d):
    devices = json.load(open(os.path.join(d, "devices.json")))
    ps = json.load(open(os.path.join(d, "ps.json")))
    insp = {}
    for f in glob.glob(os.path.join(d, "inspect.*.json")):
        o = json.load(open(f))
        insp[o["name"] or o["id"]] = o
    return devices, ps, insp


def parse_status(words):
    """{key: value} of a churn status line's KEY=VALUE words."""
    return dict(kv.split("=", 1) for kv in words if "=" in kv)


def read_status(path):
    try:
        return parse_status(open(path).read().split())
    except OSError:
        return None


def statuses_of(d):
    """{pid: status dict} from DIR/statuses.txt, or None where the view has none."""
    path = os.path.join(d, "statuses.txt")
    if not os.path.exists(path):
        return None
    out = {}
    for line in open(path):
        f = line.split()
        if f:
            out[int(f[0])] = parse_status(f[1:]) or None
    return out


def check(d):
    devices, ps, insp = load(d)
    captured = statuses_of(d)
    ctx = int(open(os.path.join(d, "ctx")).read())
    nvml_procs, nvml_dev = {}, None
    for line in open(os.path.join(d, "nvml.txt")):
        f = line.split()
        if f and f[0] == "proc":
            nvml_procs[int(f[1])] = int(f[2])
        elif f and f[0] == "device":
            nvml_dev = int(f[1])
    procs = []
    if os.path.exists(os.path.join(d, "procs.txt")):
        for line in open(os.path.join(d, "procs.txt")):
            f = line.split()
            if len(f) == 3:
                procs.append((int(f[0]), f[1], f[2]))

    # Containers: use is the sum of the processes' use; use <= assignment <= limit.
    bad = []
    for name, c in sorted(insp.items()):
        s = sum(p["used"] for p in c["process_list"])
        if s != c["used"]:
            bad.append("%s: used %d != sum over its processes %d" % (name, c["used"], s))
        if not (c["used"] <= c["assigned"] <= c["limit"]):
            bad.append("%s: not used %d <= assigned %d <= limit %d"
                       % (name, c["used"], c["assigned"], c["limit"]))
        # The core counts quota handed out as use: used <= committed <= assigned.
        if not (c["used"] <= c.get("committed", c["used"]) <= c["assigned"]):
            bad.append("%s: not ledger use %d <= core use %d <= assigned %d"
                       % (name, c["used"], c["committed"], c["assigned"]))
    expect(not bad, "every container: used == sum(process used) <= core use <= assigned <= limit"
           + ("".join("\n    | " + b for b in bad)))

    # Devices: assigned and used are the sums over the containers.
    for dev in devices:
        cs = [c for c in ps if c["device"] == dev["index"]]
        sa, su = sum(c["assigned"] for c in cs), sum(c["used"] for c in cs)
        expect(dev["assigned"] == sa and dev["used"] == su and dev["containers"] == len(cs),
               "device %d: assigned %d == sum %d, used %d == sum %d, containers %d == %d"
               % (dev["index"], dev["assigned"], sa, dev["used"], su, dev["containers"], len(cs)))
        expect(dev["free"] == dev["capacity"] - dev["assigned"],
               "device %d: free %d == capacity - assigned" % (dev["index"], dev["free"]))

    # Processes: the daemon's per-process use is what each process says it holds (+ the context
    # charge once it was granted anything), and what the emulated GPU's NVML says it uses.
    byname = {}
    for name, c in insp.items():
        for p in c["process_list"]:
            byname[p["pid"]] = (name, p)
    pending = {}
    for name, c in insp.items():
        for r in c["pending_requests"]:
            pending.setdefault(r["pid"], []).append(r["bytes"])
    bad, nproc, npend = [], 0, 0
    for pid, name, stf in procs:
        st = captured.get(pid) if captured is not None else read_status(stf)
        if st is None:
            bad.append("pid %d (%s): no status" % (pid, name))
            continue
        if st.get("state") == "done":
            continue
        nproc += 1
        held, granted = int(st["held"]), st["granted"] == "1"
        want = held + (ctx if granted else 0)
        if pid not in byname:
            if want or st["state"] == "alloc":
                bad.append("pid %d (%s): holds %d (state %s) but the daemon lists no such process"
                           % (pid, name, want, st["state"]))
            continue
        cname, p = byname[pid]
        if cname != name:
            bad.append("pid %d: daemon has it in %s, it runs in %s" % (pid, cname, name))
        if p["used"] != want:
            bad.append("pid %d (%s): daemon used %d, process holds %d + context %d"
                       % (pid, name, p["used"], held, ctx if granted else 0))
        nv = nvml_procs.get(pid, 0)
        if nv != p["used"]:
            bad.append("pid %d (%s): NVML says %d, daemon %d" % (pid, name, nv, p["used"]))
        if st["state"] == "alloc":
            npend += 1
            if pid not in pending:
                bad.append("pid %d (%s): waits in an allocation but has no pending request"
                           % (pid, name))
    expect(not bad, "%d live processes (%d waiting): daemon per-process used == held by the process "
           "== NVML per-process" % (nproc, npend) + "".join("\n    | " + b for b in bad))
    tracked = {pid for pid, _, _ in procs}
    strays = sorted(set(byname) - tracked)
    expect(not strays, "the daemon lists no process the test did not start %s" % (strays or ""))
    dev_used = sum(x["used"] for x in devices)
    expect(nvml_dev == dev_used, "NVML device used %s == daemon device used %d" % (nvml_dev, dev_used))

    snap = {
        "devices": {str(x["index"]): {k: x[k] for k in ("assigned", "used", "containers", "capacity")}
                    for x in devices},
        "containers": {n: {k: c[k] for k in ("id", "limit", "assigned", "used", "device", "state")}
                       for n, c in insp.items()},
        "processes": {str(p["pid"]): {"container": byname[p["pid"]][0], "used": p["used"],
                                      "slot": p["slot"]}
                      for c in insp.values() for p in c["process_list"]},
        "pending": {str(pid): sorted(b) for pid, b in pending.items()},
    }
    json.dump(snap, open(os.path.join(d, "snapshot.json"), "w"), indent=1, sort_keys=True)


def compare(a, b):
    sa, sb = json.load(open(a)), json.load(open(b))
    for key, what in (("containers", "containers (id, limit, assignment, use, device, state)"),
                      ("devices", "devices (assigned, used, containers)"),
                      ("processes", "processes (container, use, ledger slot)"),
                      ("pending", "pending requests (pid, bytes)")):
        if sa[key] == sb[key]:
            ok("after the restart, %s identical: %d entries" % (what, len(sa[key])))
        else:
            diff = []
            for k in sorted(set(sa[key]) | set(sb[key])):
                if sa[key].get(k) != sb[key].get(k):
                    diff.append("%s: before %s, after %s" % (k, sa[key].get(k), sb[key].get(k)))
            fail("after the restart, %s differ:" % what + "".join("\n    | " + x for x in diff))


def digest(d):
    devices, ps, insp = load(d)
    view = {
        "devices": [{k: x.get(k) for k in ("index", "assigned", "used", "free", "containers")}
                    for x in devices],
        "ps": [{k: c.get(k) for k in ("id", "limit", "assigned", "used", "device", "pending")}
               for c in ps],
        "containers": {n: {"head": {k: c.get(k) for k in ("id", "limit", "assigned", "used",
                                                            "committed", "device", "state")},
                           "processes": sorted((p["pid"], p["used"], p["slot"])
                                               for p in c["process_list"]),
                           "pending": sorted((r["pid"], r["bytes"])
                                             for r in c["pending_requests"])}
                       for n, c in insp.items()},
    }
    print(json.dumps(view, sort_keys=True))


def pending_list(d):
    _, _, insp = load(d)
    for c in insp.values():
        for r in c["pending_requests"]:
            print(r["pid"], r["bytes"])


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "check":
        check(sys.argv[2])
    elif cmd == "compare":
        compare(sys.argv[2], sys.argv[3])
    elif cmd == "pending":
        pending_list(sys.argv[2])
    elif cmd == "digest":
        digest(sys.argv[2])
    sys.exit(1 if fails else 0)

#!/usr/bin/env python3
"""test_extender.py — convgpu-scheduler-extender answering requests in kube-scheduler's JSON.

kube-scheduler cannot run here (Debian ships no Kubernetes), so the test sends what it sends:
ExtenderArgs {"Pod": v1.Pod, "Nodes": v1.NodeList, "NodeNames": null} to /filter and
/prioritize, ExtenderBindingArgs to /bind, and checks the answers against kube-scheduler's types
(ExtenderFilterResult, HostPriorityList, ExtenderBindingResult). Extenders run on private UNIX
sockets (one per policy) and one on TCP port 0, in a temporary directory; all are stopped in a
finally block whatever happens.

Usage: test_extender.py PATH/TO/convgpu-scheduler-extender
"""
import copy
import http.client
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

EXT = sys.argv[1]
TMP = tempfile.mkdtemp(prefix="convgpu-k8sext.")
PROCS = []
FAILS = 0
WAIT_S = 60  # bounds a hang only

UNIT = 256 << 20


def check(what, cond, detail=""):
    global FAILS
    if cond:
        print("ok:", what)
    else:
        FAILS += 1
        print("FAIL:", what, detail)


class UnixConnection(http.client.HTTPConnection):
    def __init__(self, path):
        super().__init__("localhost", timeout=WAIT_S)
        self.path = path

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(WAIT_S)
        self.sock.connect(self.path)


def start(*args, sock=None):
    """Starts an extender; returns (process, how to connect). Its umask lets everyone in, so
    that the socket's mode shows whether the extender sets its own."""
    out = open(os.path.join(TMP, "ext%d.log" % len(PROCS)), "w+")
    argv = [EXT] + (["--socket", sock] if sock else []) + list(args)
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=out, text=True,
                         preexec_fn=lambda: os.umask(0))
    PROCS.append(p)
    line = p.stdout.readline()  # printed once it listens: nothing to poll for
    if "listening on" not in line:
        raise RuntimeError("extender did not start: %r" % line)
    where = line.split("listening on ")[1].split(" ")[0]
    return p, where


def request(where, method, path, body=None, raw=None):
    if where.startswith("unix:"):
        conn = UnixConnection(where[5:])
    else:
        host, port = where.rsplit(":", 1)
        conn = http.client.HTTPConnection(host, int(port), timeout=WAIT_S)
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    conn.request(method, path, body=data, headers={"Content-Type": "application/json"})
    r = conn.getresponse()
    text = r.read()
    conn.close()
    try:
        return r.status, json.loads(text)
    except ValueError:
        return r.status, text


# ---- kube-scheduler's objects ----------------------------------------------------------------

def gpu(index, mem_total, mem_free, cmp_total=100, cmp_free=100):
    return {"index": index, "uuid": "GPU-%08d" % index,
            "memory_units": {"total": mem_total, "free": mem_free},
            "compute_units": {"total": cmp_total, "free": cmp_free}, "unit_bytes": UNIT}


def node(name, gpus=None, raw=None):
    """A v1.Node as the API server serves it; gpus: the annotation's list, raw: its text."""
    ann = {"node.alpha.kubernetes.io/ttl": "0"}
    if gpus is not None:
        ann["convgpu.io/gpus"] = json.dumps(gpus)
    if raw is not None:
        ann["convgpu.io/gpus"] = raw
    total = sum(g["memory_units"]["total"] for g in gpus or [])
    free = sum(g["memory_units"]["free"] for g in gpus or [])
    return {"kind": "Node", "apiVersion": "v1",
            "metadata": {"name": name, "uid": "uid-" + name, "resourceVersion": "1",
                         "labels": {"kubernetes.io/hostname": name}, "annotations": ann},
            "spec": {"podCIDR": "10.0.0.0/24"},
            "status": {"capacity": {"convgpu.io/gpu-memory": str(total), "cpu": "8"},
                       "allocatable": {"convgpu.io/gpu-memory": str(free), "cpu": "8"}}}


def container(name, mem=None, cmp=None, where="limits", restart=None, gpus=None):
    res = {}
    if mem is not None:
        res["convgpu.io/gpu-memory"] = str(mem)
    if cmp is not None:
        res["convgpu.io/gpu-compute"] = str(cmp)
    if gpus is not None:
        res["convgpu.io/gpu"] = str(gpus)
    c = {"name": name, "image": "debian:12", "resources": {where: res, "requests": {"cpu": "1"}}}
    if where == "requests":
        c["resources"] = {"requests": dict(res, cpu="1")}
    if restart:
        c["restartPolicy"] = restart
    return c


def pod(containers, init=None):
    spec = {"containers": containers, "schedulerName": "default-scheduler"}
    if init:
        spec["initContainers"] = init
    return {"kind": "Pod", "apiVersion": "v1",
            "metadata": {"name": "p", "namespace": "default", "uid": "u-1"}, "spec": spec}


def args(p, nodes):
    return {"Pod": p, "Nodes": {"metadata": {"resourceVersion": "7"}, "items": nodes},
            "NodeNames": None}


def filter_sets(ans):
    kept = [n["metadata"]["name"] for n in (ans.get("Nodes") or {}).get("items") or []]
    return kept, ans.get("FailedNodes") or {}, ans.get("FailedAndUnresolvableNodes") or {}


def scores(ans):
    return {h["Host"]: h["Score"] for h in ans}


# ---- the tests -------------------------------------------------------------------------------

def test_filter(where):
    nodes = [
        node("half", [gpu(0, 16, 8), gpu(1, 16, 8)]),   # 16 free in sum, 8 on each GPU
        node("roomy", [gpu(0, 16, 14)]),
        node("bare"),                                   # no annotation
        node("broken", raw="[{\"index\": 0,"),          # not JSON
        node("liar", [gpu(0, 16, 20)]),                 # free > total
        node("small", [gpu(0, 8, 8), gpu(1, 8, 8)]),    # no GPU has 12 units at all
        node("busy", [gpu(0, 16, 16, 100, 10)]),        # memory, but compute taken
    ]
    p = pod([container("main", mem=12, cmp=20)])
    st, ans = request(where, "POST", "/filter", args(p, nodes))
    check("filter answers 200", st == 200, ans)
    kept, failed, unres = filter_sets(ans)
    check("only the node one GPU of which holds the pod is kept", kept == ["roomy"], kept)
    check("the kept Node comes back unchanged",
          ans["Nodes"]["items"][0] == nodes[1], ans["Nodes"]["items"])
    check("the NodeList's own fields are kept", ans["Nodes"].get("metadata") ==
          {"resourceVersion": "7"}, ans["Nodes"])
    check("NodeNames is null and Error empty (nodeCacheCapable: false)",
          ans.get("NodeNames") is None and ans.get("Error") == "", ans)
    every = sorted(kept + list(failed) + list(unres))
    check("every node is kept or failed, exactly once", every == sorted(n["metadata"]["name"]
                                                                        for n in nodes), every)
    check("no node is both failed and unresolvable", not set(failed) & set(unres))
    # Two half-full GPUs: the stock scheduler counts the node's 16 free units and admits the
    # pod; the extender knows no GPU has 12.
    stock_free = int(nodes[0]["status"]["allocatable"]["convgpu.io/gpu-memory"])
    check("the stock scheduler would admit the pod on 'half' (16 >= 12)", stock_free >= 12)
    check("'half' is failed (preemption could help), with the numbers",
          "half" in failed and "no single GPU" in failed["half"] and "8 memory" in failed["half"],
          failed)
    check("'busy' is failed: memory free but not compute", "busy" in failed and
          "10 compute" in failed["busy"], failed)
    check("'bare' is unresolvable: no annotation", "no convgpu.io/gpus annotation" in
          unres.get("bare", ""), unres)
    check("'broken' is unresolvable: not JSON", "malformed" in unres.get("broken", ""), unres)
    check("'liar' is unresolvable: free > total", "out of bounds" in unres.get("liar", ""), unres)
    check("'small' is unresolvable: no GPU that large", "that large" in unres.get("small", ""),
          unres)

    # Prioritize on the same nodes: a node that cannot hold the pod scores 0.
    st, ans = request(where, "POST", "/prioritize", args(p, nodes))
    check("prioritize answers 200 with a HostPriorityList", st == 200 and isinstance(ans, list)
          and [h["Host"] for h in ans] == [n["metadata"]["name"] for n in nodes], ans)
    s = scores(ans)
    check("every score is in 0..10", all(0 <= v <= 10 for v in s.values()), s)
    check("nodes that cannot hold the pod score 0",
          all(s[n] == 0 for n in ("half", "bare", "broken", "liar", "small", "busy")), s)


def test_ranking(binpack, spread):
    nodes = [node("full-ish", [gpu(0, 16, 4)]),
             node("middle", [gpu(0, 16, 16), gpu(1, 16, 12)]),
             node("empty", [gpu(0, 16, 16)])]
    p = pod([container("main", mem=4)])
    _, b = request(binpack, "POST", "/prioritize", args(p, nodes))
    _, s = request(spread, "POST", "/prioritize", args(p, nodes))
    b, s = scores(b), scores(s)
    # binpack: full-ish is filled exactly (10); middle's best GPU leaves 8/16 (5); empty 12/16.
    check("binpack ranks the fullest fit first", b == {"full-ish": 10, "middle": 5, "empty": 3},
          b)
    # spread: the emptiest GPU: empty and middle leave 12/16 (8), full-ish nothing (0).
    check("spread ranks the emptiest GPU first", s == {"full-ish": 0, "middle": 8, "empty": 8},
          s)
    _, f = request(binpack, "POST", "/filter", args(p, nodes))
    check("all three are kept", filter_sets(f)[0] == ["full-ish", "middle", "empty"], f)
    # The answer is the same whatever the order of the nodes (ties included).
    _, rev = request(binpack, "POST", "/prioritize", args(p, list(reversed(nodes))))
    check("scores do not depend on the nodes' order", scores(rev) == b, rev)


GiB = 1 << 30


def pressed(g, free, waiting=0, since=0, swap=0, load=0, apps=None, capacity=4 * GiB):
    """g with the publisher's live state (annotation.h) and, optionally, seed 003's weights."""
    g = dict(g, pressure={"capacity": capacity, "free": free, "waiting": waiting,
                          "waiting_since": since, "swap_left": swap, "compute_load_pct": load})
    if apps is not None:
        g["apps"] = apps
    return g


def test_pressure(binpack, spread):
    """Nodes with the same free units rank by their GPUs' pressure (src/core/pressure.h): a pod
    of 8 units (2GiB) that fills a 16-unit GPU's 8 free units exactly scores 10 under binpack on
    a calm GPU, less the weighted penalty elsewhere; pressure never fails a node."""
    now = int(time.time())
    base = gpu(0, 16, 8)
    nodes = [node("calm", [pressed(base, 4 * GiB)]),
             node("unpublished", [base]),
             node("swap-covers", [pressed(base, 0, swap=8 * GiB)]),
             node("no-swap", [pressed(base, 0)]),
             node("queued", [pressed(base, 0, waiting=3, since=now - 200)]),
             node("busy", [pressed(base, 4 * GiB, load=90)]),
             node("noisy", [pressed(base, 4 * GiB, apps={"infer": 1.5, "other": 3.0})]),
             node("mixed", [pressed(gpu(0, 16, 8), 0, waiting=3, since=now - 200),
                            pressed(gpu(1, 16, 8), 4 * GiB)]),
             node("future", [pressed(base, 4 * GiB, waiting=1, since=now + 3600)])]
    p = pod([container("main", mem=8)])
    _, b = request(binpack, "POST", "/prioritize", args(p, nodes))
    b = scores(b)
    # Penalties (pressure.h): swap-covers memory 500 -> 200; no-swap memory 1000 -> 400; queued
    # memory 1000 and waiting 3x200 + 200/300 s -> 1000: 700; busy compute 900 -> 90; noisy
    # without an app: 0; future: one waiting, its wait not begun: waiting 200 -> 60.
    want = {"calm": 10, "unpublished": 10, "swap-covers": 8, "no-swap": 6, "queued": 3,
            "busy": 9, "noisy": 10, "mixed": 10, "future": 9}
    check("binpack: equal units, scores by pressure", b == want, b)
    infer = copy.deepcopy(p)
    infer["metadata"]["annotations"] = {"convgpu.io/app": "infer"}
    _, bi = request(binpack, "POST", "/prioritize", args(infer, nodes))
    bi = scores(bi)
    # An "infer" pod on noisy: slowdown 1.5 -> interference 500 -> penalty 100: 9.
    check("an app the node's matrix slows down 1.5x ranks that node lower",
          bi["noisy"] == 9 and bi["calm"] == 10 and bi["queued"] == 3, bi)
    _, f = request(binpack, "POST", "/filter", args(p, nodes))
    check("pressure fails no node (the pod waits or is swapped there, never dies)",
          filter_sets(f)[0] == [n["metadata"]["name"] for n in nodes], f)
    # Spread: a pod of 4 units leaves 4 of 16 free (score 3 calm); a queue lowers it to 1.
    q = pod([container("main", mem=4)])
    _, sp = request(spread, "POST", "/prioritize", args(q, nodes[:5]))
    sp = scores(sp)
    check("spread: pressure lowers the score too",
          sp["calm"] == 3 and sp["unpublished"] == 3 and sp["queued"] == 1 and
          sp["no-swap"] == 2, sp)
    # A bad pressure is the node's fault (unresolvable), a bad app the request's (400).
    bad = [node("liar", [dict(pressed(base, 8 * GiB), pressure={"capacity": 1, "free": 2})]),
           node("slow", [pressed(base, 0, apps={"x": -1})]),
           node("loaded", [pressed(base, 0, load=101)])]
    _, f = request(binpack, "POST", "/filter", args(p, bad))
    kept, _, unres = filter_sets(f)
    check("a pressure with free > capacity, a negative slowdown, a load over 100 are refused",
          kept == [] and "pressure must be" in unres.get("liar", "") and
          "slowdowns must be" in unres.get("slow", "") and
          "pressure must be" in unres.get("loaded", ""), f)
    badapp = copy.deepcopy(p)
    badapp["metadata"]["annotations"] = {"convgpu.io/app": "has space"}
    st, ans = request(binpack, "POST", "/filter", args(badapp, nodes))
    check("a pod whose convgpu.io/app is not a profile key is refused (400)",
          st == 400 and "convgpu.io/app" in ans.get("error", ""), (st, ans))


def test_pod_requests(where):
    nodes = [node("six", [gpu(0, 16, 6)]), node("eight", [gpu(0, 16, 8)])]

    def kept(p):
        st, ans = request(where, "POST", "/filter", args(p, nodes))
        return filter_sets(ans)[0] if st == 200 else ("status", st, ans)
    # Containers are summed: 2 + 3 = 5 fits both.
    check("containers are summed", kept(pod([container("a", 2), container("b", 3)])) ==
          ["six", "eight"])
    check("a sum of 7 fits only 'eight'", kept(pod([container("a", 3), container("b", 4)])) ==
          ["eight"])
    # An init container runs alone: the pod asks for max(sum, init) = 8.
    check("init containers count by their max",
          kept(pod([container("a", 2)], init=[container("i", 8)])) == ["eight"])
    # A sidecar (restartPolicy Always) runs beside the containers: 4 + 3 = 7.
    check("sidecars are added to the containers",
          kept(pod([container("a", 4)], init=[container("s", 3, restart="Always")])) ==
          ["eight"])
    # requests win over limits; a quantity may carry a suffix ("1k" = 1000).
    check("requests are read when limits are absent",
          kept(pod([container("a", 7, where="requests")])) == ["eight"])
    check("a quantity with a suffix", kept(pod([container("a", "1k")])) == [])
    # Sums saturate instead of wrapping round: 4294967295 + 2 units must not become 1.
    check("a sum past 2^32 units fits nowhere",
          kept(pod([container("a", 4294967295), container("b", 2)])) == [])
    st, ans = request(where, "POST", "/filter", args(pod([container("a", "4E")]), nodes))
    check("an absurd quantity (4E) fails every node as unresolvable",
          st == 200 and sorted(ans["FailedAndUnresolvableNodes"]) == ["eight", "six"], ans)
    # A pod that asks for no convgpu unit keeps every node, even one without the annotation.
    p = pod([{"name": "plain", "image": "debian:12"}])
    st, ans = request(where, "POST", "/filter", args(p, nodes + [node("bare")]))
    check("a pod without GPU units keeps every node",
          filter_sets(ans)[0] == ["six", "eight", "bare"], ans)
    st, ans = request(where, "POST", "/prioritize", args(p, nodes + [node("bare")]))
    check("... and scores 0 everywhere", all(h["Score"] == 0 for h in ans), ans)


def test_several_gpus(binpack, spread):
    """A container that asks for convgpu.io/gpu: 2 gets two GPUs of one node, each holding half
    its (total) units: the node must have two GPUs with that half free."""
    p = pod([container("train", mem=12, cmp=20, gpus=2)])   # 6 memory + 10 compute on each
    nodes = [
        node("pair", [gpu(0, 16, 8), gpu(1, 16, 8)]),         # 6 free on both
        node("one-free", [gpu(0, 16, 16), gpu(1, 16, 4)]),    # only one has 6 free now
        node("busy", [gpu(0, 16, 16, 100, 5), gpu(1, 16, 16)]),  # compute taken on one
        node("single", [gpu(0, 16, 16)]),                     # one GPU only
        node("small", [gpu(0, 4, 4), gpu(1, 16, 16)]),        # one GPU too small for 6
        node("bare"),
    ]
    st, ans = request(binpack, "POST", "/filter", args(p, nodes))
    check("2 GPUs: filter answers 200", st == 200, ans)
    kept, failed, unres = filter_sets(ans)
    check("2 GPUs: only the node two GPUs of which hold half each is kept", kept == ["pair"],
          (kept, failed, unres))
    check("2 GPUs: every node is kept or failed, exactly once",
          sorted(kept + list(failed) + list(unres)) == sorted(n["metadata"]["name"]
                                                              for n in nodes), ans)
    check("2 GPUs: 'one-free' is failed (preemption could help), with the counts",
          "not enough GPUs have that much free" in failed.get("one-free", "") and
          "asks 2 GPUs for 6 memory and 10 compute units each" in failed["one-free"] and
          "of the node's 2 GPU(s), 1 has that much free and 2 are that large" in
          failed["one-free"], failed)
    check("2 GPUs: 'busy' is failed: compute free on one GPU only",
          "busy" in failed and "1 has that much free" in failed["busy"], failed)
    check("2 GPUs: 'single' is unresolvable: fewer GPUs than asked",
          "not enough of the node's GPUs are that large" in unres.get("single", "") and
          "of the node's 1 GPU(s), 1 has that much free and 1 is that large" in unres["single"],
          unres)
    check("2 GPUs: 'small' is unresolvable: one GPU too small",
          "not enough of the node's GPUs are that large" in unres.get("small", "") and
          "1 is that large" in unres["small"], unres)
    check("2 GPUs: 'bare' is unresolvable: no annotation",
          "no convgpu.io/gpus annotation" in unres.get("bare", ""), unres)
    # The same node 'pair' cannot hold the 12 units on one GPU: the one-GPU pod fails it.
    _, one = request(binpack, "POST", "/filter", args(pod([container("main", mem=12, cmp=20)]),
                                                      nodes[:1]))
    check("... while a one-GPU pod of 12 units is failed on 'pair'",
          filter_sets(one)[0] == [] and "no single GPU" in one["FailedNodes"].get("pair", ""),
          one)
    st, ans = request(binpack, "POST", "/prioritize", args(p, nodes))
    s = scores(ans)
    check("2 GPUs: nodes that cannot hold the pod score 0, 'pair' more",
          st == 200 and s["pair"] > 0 and all(s[n] == 0 for n in s if n != "pair"), s)

    # Ranking: 4 memory units on each of 2 GPUs. binpack takes the two fullest that fit and
    # scores round(10 x (1 - their mean left-over)); spread the two emptiest, round(10 x mean).
    p = pod([container("train", mem=8, gpus=2)])
    nodes = [node("pair", [gpu(0, 16, 8), gpu(1, 16, 8)]),        # left 4/16, 4/16
             node("four", [gpu(0, 16, 16), gpu(1, 16, 6), gpu(2, 16, 12), gpu(3, 16, 4)]),
             node("roomy", [gpu(0, 16, 16), gpu(1, 16, 16)]),     # left 12/16, 12/16
             node("single", [gpu(0, 16, 16)])]
    _, b = request(binpack, "POST", "/prioritize", args(p, nodes))
    _, sp = request(spread, "POST", "/prioritize", args(p, nodes))
    b, sp = scores(b), scores(sp)
    # binpack: four's fullest two leave 0 and 2/16 (mean 1/16: 9.375 -> 9), pair 4/16 (7.5 ->
    # 8), roomy 12/16 (2.5 -> 3).
    check("2 GPUs: binpack ranks the fullest pair of GPUs first",
          b == {"pair": 8, "four": 9, "roomy": 3, "single": 0}, b)
    # spread: four's emptiest two leave 12/16 and 8/16 (mean 10/16: 6.25 -> 6), roomy 12/16
    # (7.5 -> 8), pair 4/16 (2.5 -> 3).
    check("2 GPUs: spread ranks the emptiest pair of GPUs first",
          sp == {"pair": 3, "four": 6, "roomy": 8, "single": 0}, sp)
    _, f = request(spread, "POST", "/filter", args(p, nodes))
    check("2 GPUs: the three nodes with two GPUs are kept",
          filter_sets(f)[0] == ["pair", "four", "roomy"] and
          list(filter_sets(f)[2]) == ["single"], f)
    _, rev = request(binpack, "POST", "/prioritize", args(p, list(reversed(nodes))))
    check("2 GPUs: scores do not depend on the nodes' order", scores(rev) == b, rev)

    # convgpu.io/gpu is read like the other resources: requests, else limits.
    p = pod([container("train", mem=8, gpus=2, where="requests")])
    _, f = request(binpack, "POST", "/filter", args(p, nodes))
    check("2 GPUs: convgpu.io/gpu under requests", filter_sets(f)[0] == ["pair", "four", "roomy"],
          f)
    # More GPUs than any node has, or an absurd amount: every node fails, none is an error.
    _, f = request(binpack, "POST", "/filter", args(pod([container("t", mem=100, gpus=100)]),
                                                    nodes))
    check("100 GPUs: every node is unresolvable",
          sorted(f["FailedAndUnresolvableNodes"]) == sorted(n["metadata"]["name"] for n in nodes)
          and "not enough of the node's GPUs" in f["FailedAndUnresolvableNodes"]["four"], f)
    st, f = request(binpack, "POST", "/filter", args(pod([container("t", mem="4E", gpus=2)]),
                                                     nodes))
    check("2 GPUs of an absurd quantity (4E): every node is unresolvable, no error",
          st == 200 and len(f["FailedAndUnresolvableNodes"]) == len(nodes), f)
    # convgpu.io/gpu: 1 is an ordinary one-GPU container, summed with the others as before.
    six_eight = [node("six", [gpu(0, 16, 6)]), node("eight", [gpu(0, 16, 8)])]
    _, f = request(binpack, "POST", "/filter",
                   args(pod([container("a", 3, gpus=1), container("b", 4)]), six_eight))
    check("convgpu.io/gpu: 1 beside another container: summed on one GPU (3 + 4 = 7)",
          filter_sets(f)[0] == ["eight"], f)


def test_several_gpus_refused(where):
    """Pod shapes the contract does not allow: a 400 that names the container and the rule,
    and no node kept (nothing is decided)."""
    def c(*a, **k):
        return container(*a, **k)
    sidecar = c("s", 1, restart="Always")
    cases = [
        ("convgpu.io/gpu without memory", pod([c("t", gpus=2)]),
         'Pod.spec.containers[0] ("t") asks for convgpu.io/gpu: 2 without convgpu.io/gpu-memory'),
        ("compute and convgpu.io/gpu without memory", pod([c("t", cmp=20, gpus=2)]),
         "without convgpu.io/gpu-memory"),
        ("convgpu.io/gpu: 1 without memory", pod([c("t", gpus=1)]),
         "convgpu.io/gpu: 1 without convgpu.io/gpu-memory"),
        ("convgpu.io/gpu: 0 with memory", pod([c("t", 4, gpus=0)]),
         'Pod.spec.containers[0] ("t") asks for convgpu.io/gpu: 0'),
        ("convgpu.io/gpu: 0 alone", pod([c("t", gpus=0)]), "convgpu.io/gpu: 0"),
        ("memory not a multiple of the GPUs", pod([c("t", 5, gpus=2)]),
         "asks for 5 convgpu.io/gpu-memory units on convgpu.io/gpu: 2: the units are totals "
         "over its GPUs, so they must be a multiple of 2"),
        ("compute not a multiple of the GPUs", pod([c("t", 6, 10, gpus=3)]),
         "10 convgpu.io/gpu-compute units on convgpu.io/gpu: 3"),
        ("convgpu.io/gpu not a whole number", pod([c("t", 4, gpus="1.5")]),
         'resources.limits["convgpu.io/gpu"] is not a whole number'),
        ("two containers on several GPUs", pod([c("a", 4, gpus=2), c("b", 4, gpus=2)]),
         'Pod.spec.containers[0] ("a") and Pod.spec.containers[1] ("b") both ask for several '
         "GPUs"),
        ("several GPUs beside a one-GPU container", pod([c("a", 4), c("b", 4, gpus=2)]),
         'Pod.spec.containers[1] ("b") asks for 2 GPUs (convgpu.io/gpu) and '
         'Pod.spec.containers[0] ("a") asks for convgpu units too: a container on several GPUs '
         "must be the pod's only container with convgpu units"),
        ("several GPUs beside convgpu.io/gpu: 1", pod([c("a", 4, gpus=2), c("b", 2, gpus=1)]),
         'Pod.spec.containers[1] ("b") asks for convgpu units too'),
        ("several GPUs beside compute only", pod([c("a", 4, gpus=2), c("b", cmp=5)]),
         "only container with convgpu units"),
        ("several GPUs beside an init container with units",
         pod([c("a", 4, gpus=2)], init=[c("i", 2)]),
         'Pod.spec.initContainers[0] ("i") asks for convgpu units too'),
        ("several GPUs beside a sidecar with units", pod([c("a", 4, gpus=2)], init=[sidecar]),
         'Pod.spec.initContainers[0] ("s") asks for convgpu units too'),
        ("several GPUs in an init container", pod([c("a", 2)], init=[c("i", 4, gpus=2)]),
         'Pod.spec.initContainers[0] ("i") asks for convgpu.io/gpu: 2: only a regular '
         "container may ask for several GPUs"),
    ]
    nodes = [node("roomy", [gpu(i, 64, 64) for i in range(4)])]
    for what, p, needle in cases:
        for verb in ("filter", "prioritize"):
            st, ans = request(where, "POST", "/" + verb, args(p, nodes))
            check("%s: %s is a 400 naming the container and the rule" % (verb, what),
                  st == 400 and isinstance(ans, dict) and set(ans) == {"error"} and
                  ans["error"].startswith("malformed ExtenderArgs: ") and needle in ans["error"],
                  (st, ans))
    # Containers without convgpu units beside the one on several GPUs are fine.
    p = pod([c("a", 4, gpus=2), {"name": "plain", "image": "debian:12"}],
            init=[{"name": "setup", "image": "debian:12"}])
    st, ans = request(where, "POST", "/filter", args(p, nodes))
    check("several GPUs beside containers without convgpu units is accepted",
          st == 200 and filter_sets(ans)[0] == ["roomy"], (st, ans))


def test_node_names(where):
    """nodeCacheCapable: true sends names only: a GPU pod cannot be placed without the
    annotations, so every node is unresolvable with the reason; other pods pass."""
    gpu_pod = pod([container("a", 1)])
    st, ans = request(where, "POST", "/filter",
                      {"Pod": gpu_pod, "Nodes": None, "NodeNames": ["n1", "n2"]})
    kept, failed, unres = filter_sets(ans)
    check("NodeNames: a GPU pod keeps nothing", st == 200 and kept == [] and
          ans.get("NodeNames") == [] and sorted(unres) == ["n1", "n2"], ans)
    check("... and says how to configure it", "nodeCacheCapable: false" in unres.get("n1", ""),
          unres)
    plain = pod([{"name": "plain", "image": "debian:12"}])
    st, ans = request(where, "POST", "/filter", {"Pod": plain, "NodeNames": ["n1", "n2"]})
    check("NodeNames: a plain pod keeps every name", ans.get("NodeNames") == ["n1", "n2"], ans)
    # Go's decoder matches the top-level keys in any case; so does the extender.
    lower = {"pod": gpu_pod, "nodes": {"items": [node("roomy", [gpu(0, 4, 4)])]}}
    st, ans = request(where, "POST", "/filter", lower)
    check("lower-case top-level keys are read as Go reads them",
          st == 200 and filter_sets(ans)[0] == ["roomy"], ans)


def test_bind(where):
    st, ans = request(where, "POST", "/bind", {"PodName": "p", "PodNamespace": "default",
                                                "PodUID": "u-1", "Node": "roomy"})
    check("bind answers an ExtenderBindingResult with an Error (it does not bind)",
          st == 200 and "does not bind" in ans.get("Error", "") and
          "without bindVerb" in ans["Error"], ans)


def test_malformed(where, small):
    good = args(pod([container("main", mem=12)]),
                [node("half", [gpu(0, 16, 8), gpu(1, 16, 8)]), node("roomy", [gpu(0, 16, 14)])])
    st, before = request(where, "POST", "/filter", good)
    _, before_p = request(where, "POST", "/prioritize", good)

    def with_pod(mutate):
        b = copy.deepcopy(good)
        mutate(b)
        return json.dumps(b).encode()

    cases = [
        ("not JSON", b"{\"Pod\": ", "not JSON"),
        ("a JSON array", b"[]", "not a JSON object"),
        ("an empty body", b"", "not JSON"),
        ("duplicate keys", b"{\"Pod\": {}, \"Pod\": {}}", "not JSON"),
        ("no Pod", with_pod(lambda b: b.pop("Pod")), "Pod is missing"),
        ("Pod a string", with_pod(lambda b: b.update(Pod="p")), "Pod is missing or not an object"),
        ("no containers", with_pod(lambda b: b["Pod"]["spec"].pop("containers")),
         "containers is missing"),
        ("containers not an array",
         with_pod(lambda b: b["Pod"]["spec"].update(containers={})), "not an array"),
        ("a fractional quantity", with_pod(lambda b: b["Pod"]["spec"]["containers"][0]
                                           ["resources"]["limits"].update(
                                               {"convgpu.io/gpu-memory": "1.5"})),
         "whole number"),
        ("a negative quantity", with_pod(lambda b: b["Pod"]["spec"]["containers"][0]
                                         ["resources"]["limits"].update(
                                             {"convgpu.io/gpu-memory": -1})), "whole number"),
        ("a quantity of the wrong type", with_pod(lambda b: b["Pod"]["spec"]["containers"][0]
                                                  ["resources"]["limits"].update(
                                                      {"convgpu.io/gpu-memory": [1]})),
         "whole number"),
        ("limits not an object", with_pod(lambda b: b["Pod"]["spec"]["containers"][0]
                                          ["resources"].update(limits="12")), "not an object"),
        ("neither Nodes nor NodeNames", with_pod(lambda b: b.pop("Nodes")),
         "neither Nodes nor NodeNames"),
        ("Nodes without items", with_pod(lambda b: b.update(Nodes={"items": 5})),
         "v1.NodeList"),
        ("a node without a name", with_pod(lambda b: b["Nodes"]["items"][0]["metadata"]
                                           .pop("name")), "metadata.name"),
        ("an annotation that is not a string",
         with_pod(lambda b: b["Nodes"]["items"][0]["metadata"]["annotations"].update(
             {"convgpu.io/gpus": [1]})), "not a string"),
        ("NodeNames of numbers", with_pod(lambda b: b.update(Nodes=None, NodeNames=[1])),
         "NodeNames[0]"),
    ]
    for what, raw, needle in cases:
        for verb in ("filter", "prioritize"):
            st, ans = request(where, "POST", "/" + verb, raw=raw)
            check("%s: %s is a 400 saying why" % (verb, what),
                  st == 400 and isinstance(ans, dict) and needle in ans.get("error", ""),
                  (st, ans))
    for what, body, needle in [("bind without Node", {"PodName": "p"}, "Node is missing"),
                               ("bind with a number", {"PodName": 5, "Node": "n"}, "PodName"),
                               ("bind with an empty Node", {"PodName": "p", "Node": ""},
                                "non-empty")]:
        st, ans = request(where, "POST", "/bind", body)
        check("%s is a 400 saying why" % what, st == 400 and needle in ans.get("error", ""),
              (st, ans))
    st, ans = request(where, "GET", "/filter")
    check("GET /filter is a 405", st == 405, (st, ans))
    st, ans = request(where, "POST", "/preempt", {})
    check("an unknown verb is a 404", st == 404, (st, ans))
    # A body over --max-body (4KiB on this instance) is refused whole.
    huge = json.dumps(args(pod([container("main", mem=1)]),
                           [node("n%d" % i, [gpu(0, 16, 16)]) for i in range(100)])).encode()
    st, ans = request(small, "POST", "/filter", raw=huge)
    check("a body over --max-body is a 413 saying so (%d bytes)" % len(huge),
          st == 413 and "--max-body" in ans.get("error", ""), (st, ans))
    st, ans = request(small, "POST", "/filter", good)
    check("... and the next request is answered as usual", st == 200 and ans == before, ans)
    # Nothing else changed: the same good request gets the same answers as before.
    st, after = request(where, "POST", "/filter", good)
    _, after_p = request(where, "POST", "/prioritize", good)
    check("after all that, the same request gets the same answers",
          after == before and after_p == before_p, (after, after_p))


def test_flags():
    for argv, needle in [(["--policy", "densest"], "binpack or spread"),
                         (["--listen", "nohost"], "HOST:PORT"),
                         (["--max-body", "12"], "1KiB"),
                         (["--body-budget", "12"], "1KiB"),
                         (["--max-body", "2MiB", "--body-budget", "1MiB"], "larger than"),
                         (["--max-connections", "8"], "16 to"),
                         (["--max-connections", "1x"], "16 to"),
                         (["--request-timeout", "0"], "1 to 600"),
                         (["--request-timeout", "-5"], "1 to 600"),
                         (["--socket", "relative.sock"], "absolute"),
                         (["--bogus"], "unknown")]:
        r = subprocess.run([EXT] + argv, capture_output=True, text=True, timeout=WAIT_S)
        check("%s is refused (exit 2) saying why" % " ".join(argv),
              r.returncode == 2 and needle in r.stderr, r.stderr)
    r = subprocess.run([EXT, "--help"], capture_output=True, text=True, timeout=WAIT_S)
    check("--help names the flags", r.returncode == 0 and all(
        f in r.stdout for f in ("--listen", "--socket", "--policy", "--max-body", "--body-budget",
                                "--max-connections", "--request-timeout")), r.stdout)


def main():
    try:
        _, binpack = start(sock=os.path.join(TMP, "binpack.sock"))
        _, spread = start("--policy", "spread", sock=os.path.join(TMP, "spread.sock"))
        _, small = start("--max-body", "4KiB", sock=os.path.join(TMP, "small.sock"))
        _, tcp = start("--listen", "127.0.0.1:0")
        mode = os.stat(binpack[5:]).st_mode & 0o7777
        check("the UNIX socket is 0660 though the extender started with umask 0",
              mode == 0o660, "%o" % mode)
        check("a TCP extender says where it listens", tcp.startswith("127.0.0.1:") and
              not tcp.endswith(":0"), tcp)
        st, ans = request(tcp, "GET", "/healthz")
        check("GET /healthz over TCP", st == 200 and ans.get("policy") == "binpack", ans)
        test_filter(binpack)
        test_filter(tcp)  # the same over TCP, with a URL prefix below
        st, ans = request(tcp, "POST", "/scheduler/filter",
                          args(pod([container("main", mem=1)]), [node("x", [gpu(0, 1, 1)])]))
        check("a urlPrefix with a path works", st == 200 and filter_sets(ans)[0] == ["x"], ans)
        test_ranking(binpack, spread)
        test_pressure(binpack, spread)
        test_pod_requests(binpack)
        test_several_gpus(binpack, spread)
        test_several_gpus_refused(binpack)
        test_node_names(binpack)
        test_bind(binpack)
        test_malformed(binpack, small)
        test_flags()
        for p in PROCS:
            check("extender pid %d still serves" % p.pid, p.poll() is None)
        p = PROCS[0]
        p.terminate()
        check("SIGTERM stops it cleanly (exit 0)", p.wait(timeout=WAIT_S) == 0)
        check("... and removes its socket", not os.path.exists(binpack[5:]))
    finally:
        for p in PROCS:
            if p.poll() is None:
                p.kill()
                p.wait()
        if FAILS:
            for f in sorted(os.listdir(TMP)):
                if f.endswith(".log"):
                    print("---", f, "---")
                    print(open(os.path.join(TMP, f)).read()[-3000:])
        shutil.rmtree(TMP, ignore_errors=True)
    print("%d failure(s)" % FAILS)
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())

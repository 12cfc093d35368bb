#!/usr/bin/env python3
"""extender_hostile.py — the attacks of issue #35 (item 6) on the scheduler extender, and the
legitimate client they must not keep out; for test_extender_flood.sh. Python stdlib only.

ADDR is HOST:PORT (TCP) or unix:PATH.

    extender_hostile.py ADDR trickle N EVERY_S STOPFILE
        N connections, each sending a request's headers one byte every EVERY_S seconds (the
        headers never end); one that is closed is opened again. Prints connected=N once all N
        are open, then closed=K slow=S each time the extender closes one: K closed so far, S of
        them after trickling for at least EVERY_S (closed at a deadline, not refused at once);
        stops when STOPFILE exists.
    extender_hostile.py ADDR bigbodies N MIB STOPFILE
        N connections at once, each POSTing /filter with a Content-Length of MIB MiB + 1 and
        sending MIB MiB of it (the last byte never comes). Prints sent_I=BYTES closed=yes|no
        per connection, then bodies_done=N; holds the connections until STOPFILE exists.
    extender_hostile.py ADDR filter COUNT
        COUNT filter requests one after another, each one attempt on its own connection, as
        kube-scheduler sends them, up to the first that fails. Prints filter_ok=K (answered 200,
        the right node kept), filter_max_ms=... and, for one that failed, filter_error=WHY.
"""
import json
import os
import selectors
import socket
import sys
import threading
import time

HANG_S = 60  # bounds a hang only


def connect(addr):
    if addr.startswith("unix:"):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(addr[5:])
    else:
        host, port = addr.rsplit(":", 1)
        s = socket.create_connection((host, int(port)))
    return s


def say(line):
    print(line, flush=True)


def trickle(addr, n, every_s, stopfile):
    head = b"POST /filter HTTP/1.1\r\nHost: extender\r\nX-Slow: "
    socks = {}  # socket -> bytes of `head` sent (then the pad, forever)
    opened = {}  # socket -> when

    def open_one():
        try:
            s = connect(addr)
        except OSError:
            return False
        s.setblocking(False)
        socks[s] = 0
        opened[s] = time.monotonic()
        return True

    while len(socks) < n:
        if not open_one():
            time.sleep(0.05)  # a backlog that is full for a moment
    say("connected=%d" % n)
    closed = slow = 0
    sel = selectors.DefaultSelector()
    for s in socks:
        sel.register(s, selectors.EVENT_READ)
    next_byte = time.monotonic()
    while not os.path.exists(stopfile):
        now = time.monotonic()
        if now >= next_byte:
            for s in list(socks):
                i = socks[s]
                try:
                    s.send(head[i:i + 1] if i < len(head) else b"a")
                    socks[s] = i + 1
                except (BlockingIOError, InterruptedError):
                    pass
                except OSError:
                    pass  # the read side below sees the close
            next_byte = now + every_s
        for key, _ in sel.select(timeout=min(0.5, max(0.0, next_byte - time.monotonic()))):
            s = key.fileobj
            try:
                data = s.recv(4096)
            except (BlockingIOError, InterruptedError):
                continue
            except OSError:
                data = b""
            if data:
                continue  # an answer (408/400): the close follows
            sel.unregister(s)
            del socks[s]
            s.close()
            closed += 1
            lived = time.monotonic() - opened.pop(s)
            slow += lived >= every_s
            say("closed=%d slow=%d" % (closed, slow))
            if lived < every_s:
                time.sleep(0.05)  # no busy loop against a server that refuses at once
            while len(socks) < n:
                if open_one():
                    s2 = list(socks)[-1]
                    sel.register(s2, selectors.EVENT_READ)
                else:
                    time.sleep(0.05)


def bigbodies(addr, n, mib, stopfile):
    size = mib << 20
    chunk = b"x" * (1 << 20)
    socks = [connect(addr) for _ in range(n)]
    results = [None] * n

    def send(i, s):
        sent = 0
        try:
            s.sendall(b"POST /filter HTTP/1.1\r\nHost: extender\r\nContent-Type: application/json"
                      b"\r\nContent-Length: %d\r\n\r\n" % (size + 1))
            while sent < size:
                s.sendall(chunk)
                sent += len(chunk)
            closed = "no"
        except OSError:
            closed = "yes"
        results[i] = "sent_%d=%d closed=%s" % (i, sent, closed)

    threads = [threading.Thread(target=send, args=(i, s)) for i, s in enumerate(socks)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for r in results:
        say(r)
    say("bodies_done=%d" % n)
    while not os.path.exists(stopfile):
        time.sleep(0.1)  # holds the connections, and whatever the extender kept of them


def filter_body():
    gpus = [{"index": 0, "uuid": "GPU-0", "memory_units": {"total": 16, "free": 14},
             "compute_units": {"total": 100, "free": 100}, "unit_bytes": 256 << 20}]

    def node(name, ann):
        meta = {"name": name, "annotations": {"convgpu.io/gpus": json.dumps(ann)} if ann else {}}
        return {"kind": "Node", "apiVersion": "v1", "metadata": meta}

    pod = {"kind": "Pod", "apiVersion": "v1",
           "metadata": {"name": "p", "namespace": "default", "uid": "u-1"},
           "spec": {"containers": [{"name": "main", "image": "debian:12", "resources": {
               "limits": {"convgpu.io/gpu-memory": "12"}}}]}}
    return json.dumps({"Pod": pod, "Nodes": {"items": [node("roomy", gpus), node("bare", None)]},
                       "NodeNames": None}).encode()


def one_filter(addr, body):
    s = connect(addr)
    s.settimeout(HANG_S)
    try:
        s.sendall(b"POST /filter HTTP/1.1\r\nHost: extender\r\nContent-Type: application/json\r\n"
                  b"Content-Length: %d\r\nConnection: close\r\n\r\n" % len(body) + body)
        data = b""
        while True:
            part = s.recv(65536)
            if not part:
                break
            data += part
    except OSError as e:
        return "no answer: %s" % e
    finally:
        s.close()
    if not data.startswith(b"HTTP/1.1 200"):
        return "answered %r" % data[:80] if data else "closed without an answer"
    ans = json.loads(data.partition(b"\r\n\r\n")[2])
    kept = [n["metadata"]["name"] for n in (ans.get("Nodes") or {}).get("items") or []]
    return None if kept == ["roomy"] else "kept %r" % kept


def filters(addr, count):
    body = filter_body()
    ok, worst, error = 0, 0.0, None
    for _ in range(count):
        t0 = time.monotonic()
        why = one_filter(addr, body)
        worst = max(worst, time.monotonic() - t0)
        if why is None:
            ok += 1
        else:
            error = why
            break  # one is enough to fail, and each may take HANG_S
    say("filter_ok=%d" % ok)
    say("filter_max_ms=%.1f" % (worst * 1000))
    if error:
        say("filter_error=%s" % error.replace(" ", "_"))


def main():
    addr, what = sys.argv[1], sys.argv[2]
    if what == "trickle":
        trickle(addr, int(sys.argv[3]), float(sys.argv[4]), sys.argv[5])
    elif what == "bigbodies":
        bigbodies(addr, int(sys.argv[3]), int(sys.argv[4]), sys.argv[5])
    elif what == "filter":
        filters(addr, int(sys.argv[3]))
    else:
        sys.exit("unknown attack %s" % what)


if __name__ == "__main__":
    main()

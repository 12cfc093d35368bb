#!/usr/bin/env python3
"""http_hostile.py — raw HTTP abuse of the control socket, for test_hostile.sh.

    http_hostile.py SOCKET bigbody MB          POST an MB-megabyte body to /v1/containers
    http_hostile.py SOCKET longline KB         GET with a KB-kilobyte request target
    http_hostile.py SOCKET halfopen N HOLDFILE open N connections, each sending half a request,
                                               hold them until HOLDFILE exists (max 30 s)
    http_hostile.py SOCKET garbage N SEED      N connections sending random bytes then closing

Prints key=value lines: status=CODE (or status=closed when the daemon hung up without an
answer), body=... (first line of the answer's body), opened=N."""
import os
import random
import socket
import sys
import time


def connect(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)  # blocking: a full backlog makes it wait for the daemon's accept
    s.settimeout(10)
    return s


def answer(s):
    data = b""
    try:
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
            if b"\r\n\r\n" in data:
                head, _, rest = data.partition(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n")[1:]:
                    k, _, v = line.partition(b":")
                    if k.strip().lower() == b"content-length":
                        length = int(v.strip())
                if len(rest) >= length:
                    break
    except (ConnectionResetError, BrokenPipeError, socket.timeout):
        pass
    if not data.startswith(b"HTTP/"):
        print("status=closed")
        return
    head, _, body = data.partition(b"\r\n\r\n")
    print("status=%s" % head.split(b" ")[1].decode())
    print("body=%s" % body.decode(errors="replace").strip().replace("\n", " ")[:300])


def send_all(s, data):
    try:
        s.sendall(data)
    except (ConnectionResetError, BrokenPipeError):
        pass  # the daemon may hang up before taking it all; answer() reports what it said


def main():
    path, what = sys.argv[1], sys.argv[2]
    if what == "bigbody":
        n = int(sys.argv[3]) * 1024 * 1024
        s = connect(path)
        send_all(s, b"POST /v1/containers HTTP/1.1\r\nHost: convgpu\r\nContent-Type: application/json\r\n"
                 b"Content-Length: %d\r\n\r\n" % n)
        chunk = b'{"gpu_memory":"1GiB","name":"' + b"x" * 65000
        sent = 0
        while sent < n:
            part = chunk[: min(len(chunk), n - sent)]
            try:
                s.sendall(part)
            except (ConnectionResetError, BrokenPipeError):
                break
            sent += len(part)
        print("sent=%d" % sent)
        answer(s)
    elif what == "longline":
        n = int(sys.argv[3]) * 1024
        s = connect(path)
        send_all(s, b"GET /v1/containers/" + b"a" * n + b" HTTP/1.1\r\nHost: convgpu\r\n\r\n")
        answer(s)
    elif what == "halfopen":
        n, hold = int(sys.argv[3]), sys.argv[4]
        socks = []
        for i in range(n):
            s = connect(path)
            s.sendall(b"POST /v1/containers HTTP/1.1\r\nHost: convgpu\r\nContent-Length: 100\r\n\r\n{\"gpu")
            socks.append(s)
        print("opened=%d" % len(socks), flush=True)
        deadline = time.time() + 30
        while not os.path.exists(hold) and time.time() < deadline:
            time.sleep(0.02)
        for s in socks:
            s.close()
        print("released=%d" % len(socks))
    elif what == "garbage":
        n, rng = int(sys.argv[3]), random.Random(int(sys.argv[4]))
        answered = closed = 0
        for i in range(n):
            s = connect(path)
            send_all(s, bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 2000))) + b"\r\n\r\n")
            try:
                s.shutdown(socket.SHUT_WR)
                data = s.recv(65536)
            except (ConnectionResetError, BrokenPipeError, socket.timeout):
                data = b""
            if data.startswith(b"HTTP/1.1 4") or data.startswith(b"HTTP/1.0 4"):
                answered += 1
            elif not data:
                closed += 1
            else:
                print("unexpected=%r" % data[:80])
            s.close()
        print("garbage_4xx=%d garbage_closed=%d" % (answered, closed))
    else:
        sys.exit("unknown action " + what)


main()

#!/usr/bin/env python3
"""api_flood.py — a hostile client of an HTTP server on a UNIX socket or TCP port: opens many
connections and holds them silent, trickles a request a byte at a time, or asks each for an event
stream, until a release file exists. It reports what the server did to its connections on stdout,
a line whenever a count changes (`open= answered= refused= closed= failed=`), so a shell test can
wait for a condition instead of a duration.

    api_flood.py MODE SOCKET N RELEASE [INTERVAL]

MODE: hold (connect and send nothing), trickle (send one byte of a request on every connection
each INTERVAL seconds: the attack itself is paced, the test's checks are not), follow (ask each
for GET /v1/events?follow=1), body (send headers for a 60 MiB body, then trickle the body in
64 KiB pieces each INTERVAL). SOCKET is a path or HOST:PORT.
refused counts answers 429/503 (the server's refusal), answered counts any other answer, closed
counts connections the server ended without an answer. Stops by itself after an hour."""
import os
import select
import socket
import sys
import time

REQUEST = b"GET /v1/containers HTTP/1.1\r\nHost: convgpu\r\n\r\n"
FOLLOW = b"GET /v1/events?follow=1 HTTP/1.1\r\nHost: convgpu\r\n\r\n"
BODY_HEAD = (b"POST /v1/containers HTTP/1.1\r\nHost: convgpu\r\nContent-Type: application/json\r\n"
             b"Content-Length: 62914560\r\n\r\n")


def connect(where):
    if where.startswith("/"):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(where)
    else:
        host, port = where.rsplit(":", 1)
        s = socket.create_connection((host, int(port)))
    return s


def main():
    mode, where, n, release = sys.argv[1:5]
    interval = float(sys.argv[5]) if len(sys.argv) > 5 else 1.0
    n = int(n)
    conns = {}  # fd -> [socket, bytes of the request sent, state]
    failed = 0
    for _ in range(n):
        try:
            s = connect(where)
        except OSError:
            failed += 1
            continue
        s.setblocking(False)
        conns[s.fileno()] = [s, 0, "open"]
        if mode == "follow":
            try:
                s.send(FOLLOW)
            except OSError:
                pass
        elif mode == "body":
            try:
                s.send(BODY_HEAD)
            except OSError:
                pass
    counts = {"open": 0, "answered": 0, "refused": 0, "closed": 0}
    last = None
    next_byte = time.monotonic()
    chunk = b"x" * 65536
    deadline = time.monotonic() + 3600
    while time.monotonic() < deadline and not os.path.exists(release):
        live = [c[0] for c in conns.values() if c[2] == "open"]
        readable = select.select(live, [], [], 0.1)[0] if live else (time.sleep(0.1) or [])
        for s in readable:
            c = conns[s.fileno()]
            try:
                data = s.recv(65536)
            except OSError:
                data = b""
            if not data:
                c[2] = "closed"
            elif data.startswith(b"HTTP/1.1 429") or data.startswith(b"HTTP/1.1 503"):
                c[2] = "refused"
            elif c[2] == "open":
                c[2] = "answered"
        if mode in ("trickle", "body") and time.monotonic() >= next_byte:
            next_byte = time.monotonic() + interval
            for c in conns.values():
                if c[2] not in ("open", "answered"):
                    continue
                try:
                    if mode == "trickle":
                        c[0].send(REQUEST[c[1] % len(REQUEST):c[1] % len(REQUEST) + 1])
                        c[1] += 1
                    else:
                        c[0].send(chunk)
                except OSError:
                    pass
        for k in counts:
            counts[k] = sum(1 for c in conns.values() if c[2] == k)
        now = " ".join("%s=%d" % kv for kv in counts.items()) + " failed=%d" % failed
        if now != last:
            print(now, flush=True)
            last = now
    for c in conns.values():
        c[0].close()


if __name__ == "__main__":
    main()

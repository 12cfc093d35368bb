#!/usr/bin/env python3
"""apiserver_standin.py — a Kubernetes API server stand-in for `convgpu k8s publish`: it serves
one Node and accepts what the real API server accepts for a Node annotation change: PATCH
/api/v1/nodes/NAME with Content-Type application/merge-patch+json (RFC 7386 applied to its
Node) and, when --token is given, Authorization: Bearer TOKEN. It answers the patched Node (200),
or a v1.Status with the real codes (401, 404, 405, 415, 422) and message otherwise, and records
every request (method, path, headers, body) as a JSON line in --log.

Usage: apiserver_standin.py --node NAME --port-file F --log F [--token T] [--cert C --key K]
The port is written to --port-file (atomically) once it listens; it runs until killed.
"""
import argparse
import http.server
import json
import os
import ssl
import threading

ap = argparse.ArgumentParser()
ap.add_argument("--node", required=True)
ap.add_argument("--port-file", required=True)
ap.add_argument("--log", required=True)
ap.add_argument("--token")
ap.add_argument("--cert")
ap.add_argument("--key")
opt = ap.parse_args()

NODE = {"kind": "Node", "apiVersion": "v1",
        "metadata": {"name": opt.node, "uid": "0d0e", "resourceVersion": "1",
                     "labels": {"kubernetes.io/hostname": opt.node},
                     "annotations": {"node.alpha.kubernetes.io/ttl": "0"}},
        "spec": {}, "status": {}}
LOCK = threading.Lock()


def merge_patch(target, patch):
    """RFC 7386."""
    if not isinstance(patch, dict):
        return patch
    if not isinstance(target, dict):
        target = {}
    for k, v in patch.items():
        if v is None:
            target.pop(k, None)
        else:
            target[k] = merge_patch(target.get(k), v)
    return target


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def answer(self, code, obj):
        data = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def status(self, code, reason, message):
        self.answer(code, {"kind": "Status", "apiVersion": "v1", "status": "Failure",
                           "message": message, "reason": reason, "code": code})

    def handle_any(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n).decode("utf-8", "replace") if n else ""
        with LOCK, open(opt.log, "a") as f:
            f.write(json.dumps({"method": self.command, "path": self.path,
                                "headers": {k.lower(): v for k, v in self.headers.items()},
                                "body": body}) + "\n")
        if opt.token and self.headers.get("Authorization") != "Bearer " + opt.token:
            return self.status(401, "Unauthorized", "Unauthorized")
        if self.path != "/api/v1/nodes/" + opt.node:
            return self.status(404, "NotFound", 'nodes "%s" not found' %
                               self.path.rsplit("/", 1)[-1])
        if self.command == "GET":
            return self.answer(200, NODE)
        if self.command != "PATCH":
            return self.status(405, "MethodNotAllowed", "the server does not allow this method")
        ctype = (self.headers.get("Content-Type") or "").split(";")[0].strip()
        if ctype != "application/merge-patch+json":
            return self.status(415, "UnsupportedMediaType",
                               "the body of the request was in an unknown format")
        try:
            patch = json.loads(body)
        except ValueError as e:
            return self.status(400, "BadRequest", "error decoding patch: %s" % e)
        with LOCK:
            merged = merge_patch(json.loads(json.dumps(NODE)), patch)
            ann = merged.get("metadata", {}).get("annotations", {})
            if any(not isinstance(v, str) for v in ann.values()):
                return self.status(422, "Invalid", "metadata.annotations: values must be strings")
            NODE.clear()
            NODE.update(merged)
            NODE["metadata"]["resourceVersion"] = str(int(NODE["metadata"]["resourceVersion"]) + 1)
            self.answer(200, NODE)

    do_GET = do_PATCH = do_POST = do_PUT = handle_any


srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
if opt.cert:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(opt.cert, opt.key)
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
tmp = opt.port_file + ".tmp"
with open(tmp, "w") as f:
    f.write(str(srv.server_address[1]))
os.rename(tmp, opt.port_file)
srv.serve_forever()

#!/usr/bin/env python3
"""apiserver_standin.py — a Kubernetes API server stand-in for `convgpu k8s publish`: it serves
one Node and accepts what the real API server accepts for a Node annotation change: PATCH
/api/v1/nodes/NAME with Content-Type application/merge-patch+json (RFC 7386 applied to its
Node) and, when --token is given, Authorization: Bearer TOKEN. It answers the patched Node (200),
or a v1.Status with the real codes (401, 404, 405, 415, 422) and message otherwise, and records
every request (method, path, headers, body) as a JSON line in --log.

It also serves what convgpu-dra-driver uses of resource.k8s.io/v1, with --dra-schema FILE (a
subset of the published OpenAPI definitions, tests/k8s/dra_openapi_v1.json): ResourceSlices
(POST, GET one or the list, PUT at the current resourceVersion, DELETE) and ResourceClaims in a
namespace (POST, GET, PUT .../status as the scheduler writes an allocation, DELETE). Every object
written is checked against the schema as the API server checks with strict field validation: an
unknown field or a wrong type is 422 with the field's path; a PUT at an old resourceVersion is 409.

Pods, as convgpu-dra-driver reads them for --priority-map: POST /api/v1/namespaces/NS/pods, GET
and DELETE .../pods/NAME, in the real v1.Pod shape, through the Priority admission plugin's rule:
spec.priorityClassName names a PriorityClass (POST /apis/scheduling.k8s.io/v1/priorityclasses;
system-node-critical and system-cluster-critical exist) and admission writes its value into
spec.priority (none named: the globalDefault class's, else 0); a class that does not exist, or a
spec.priority the pod's author wrote that is not the class's value, is 403 Forbidden with the
real message. So a pod's author cannot choose its priority, only the administrators' classes.

Usage: apiserver_standin.py --node NAME --port-file F --log F [--token T] [--cert C --key K]
                            [--dra-schema FILE]
The port is written to --port-file (atomically) once it listens; it runs until killed.
"""
import argparse
import http.server
import json
import os
import ssl
import re
import threading
import uuid

ap = argparse.ArgumentParser()
ap.add_argument("--node", required=True)
ap.add_argument("--port-file", required=True)
ap.add_argument("--log", required=True)
ap.add_argument("--token")
ap.add_argument("--cert")
ap.add_argument("--key")
ap.add_argument("--dra-schema")
opt = ap.parse_args()
SCHEMA = json.load(open(opt.dra_schema))["definitions"] if opt.dra_schema else None
SLICES = {}  # name -> ResourceSlice
CLAIMS = {}  # (namespace, name) -> ResourceClaim
VERSION = [100]
DRA = "/apis/resource.k8s.io/v1"
PODS = {}  # (namespace, name) -> Pod
CLASSES = {  # name -> PriorityClass (the two the API server creates itself)
    n: {"kind": "PriorityClass", "apiVersion": "scheduling.k8s.io/v1",
        "metadata": {"name": n, "uid": str(uuid.uuid4()), "resourceVersion": "1"},
        "value": v, "preemptionPolicy": "PreemptLowerPriority"}
    for n, v in (("system-node-critical", 2000001000), ("system-cluster-critical", 2000000000))}


def schema_errors(obj, ref, path):
    """The fields of obj that the definition ref does not allow (strict validation)."""
    d = SCHEMA[ref] if isinstance(ref, str) else ref
    if "$ref" in d:
        return schema_errors(obj, d["$ref"], path)
    want = d.get("type")
    kinds = {"string": str, "integer": int, "boolean": bool, "object": dict, "array": list}
    if want and (not isinstance(obj, kinds[want]) or (want == "integer" and isinstance(obj, bool))):
        return ['%s: Invalid value: expected %s' % (path, want)]
    errs = []
    if want == "object":
        props = d.get("properties")
        for k in d.get("required", []):
            if k not in obj:
                errs.append("%s.%s: Required value" % (path, k))
        for k, v in obj.items():
            if props is not None and k in props:
                errs += schema_errors(v, props[k], "%s.%s" % (path, k))
            elif "additionalProperties" in d:
                errs += schema_errors(v, d["additionalProperties"], "%s[%s]" % (path, k))
            elif props is not None:
                errs.append('unknown field "%s.%s"' % (path, k))
    if want == "array" and "items" in d:
        for i, v in enumerate(obj):
            errs += schema_errors(v, d["items"], "%s[%d]" % (path, i))
    return errs


def next_version():
    VERSION[0] += 1
    return str(VERSION[0])

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
    # As the API server does (Go sets TCP_NODELAY): an answer's headers and body go out at once,
    # not 40 ms apart on a kept-alive connection (Nagle against the client's delayed ACK).
    disable_nagle_algorithm = True

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
        if SCHEMA is not None and self.path.startswith(DRA + "/"):
            return self.dra(body)
        pods = re.fullmatch(r"/api/v1/namespaces/([a-z0-9-]+)/pods(?:/([a-z0-9.-]+))?",
                            self.path.split("?")[0])
        if pods:
            with LOCK:
                return self.pod(pods.group(1), pods.group(2), body)
        if self.path.split("?")[0] == "/apis/scheduling.k8s.io/v1/priorityclasses":
            with LOCK:
                return self.priority_class(body)
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

    def priority_class(self, body):
        if self.command == "GET":
            return self.answer(200, {"kind": "PriorityClassList", "apiVersion": "scheduling.k8s.io/v1",
                                     "metadata": {}, "items": list(CLASSES.values())})
        if self.command != "POST":
            return self.status(405, "MethodNotAllowed", "the server does not allow this method")
        try:
            pc = json.loads(body)
        except ValueError as e:
            return self.status(400, "BadRequest", "error decoding body: %s" % e)
        name = pc.get("metadata", {}).get("name", "")
        v = pc.get("value")
        if not isinstance(v, int) or isinstance(v, bool) or not -2147483648 <= v <= 1000000000:
            return self.status(422, "Invalid", 'PriorityClass.scheduling.k8s.io "%s" is invalid: '
                               "value: Forbidden: maximum allowed value of a user defined priority "
                               "is 1000000000" % name)
        if name in CLASSES:
            return self.status(409, "AlreadyExists", 'priorityclasses.scheduling.k8s.io "%s" '
                               "already exists" % name)
        pc["metadata"]["uid"] = str(uuid.uuid4())
        pc["metadata"]["resourceVersion"] = next_version()
        CLASSES[name] = pc
        return self.answer(201, pc)

    def pod(self, ns, name, body):
        m = self.command
        if m == "GET" and name:
            if (ns, name) not in PODS:
                return self.status(404, "NotFound", 'pods "%s" not found' % name)
            return self.answer(200, PODS[(ns, name)])
        if m == "DELETE" and name:
            if (ns, name) not in PODS:
                return self.status(404, "NotFound", 'pods "%s" not found' % name)
            return self.answer(200, PODS.pop((ns, name)))
        if m != "POST" or name:
            return self.status(405, "MethodNotAllowed", "the server does not allow this method")
        try:
            pod = json.loads(body)
        except ValueError as e:
            return self.status(400, "BadRequest", "error decoding body: %s" % e)
        if not isinstance(pod, dict) or pod.get("kind") != "Pod" or pod.get("apiVersion") != "v1":
            return self.status(400, "BadRequest", "the body is not a Pod of v1")
        meta = pod.setdefault("metadata", {})
        pname = meta.get("name", "")
        if not re.fullmatch(r"[a-z0-9]([a-z0-9.-]*[a-z0-9])?", pname):
            return self.status(422, "Invalid", "metadata.name: Invalid value: %r" % pname)
        if (ns, pname) in PODS:
            return self.status(409, "AlreadyExists", 'pods "%s" already exists' % pname)
        spec = pod.setdefault("spec", {})
        # The Priority admission plugin: the value comes from the class, never from the author.
        cls = spec.get("priorityClassName")
        if cls:
            if cls not in CLASSES:
                return self.status(403, "Forbidden", 'pods "%s" is forbidden: no PriorityClass '
                                   "with name %s was found" % (pname, cls))
            value = CLASSES[cls]["value"]
        else:
            default = [c for c in CLASSES.values() if c.get("globalDefault")]
            value = default[0]["value"] if default else 0
            if default:
                spec["priorityClassName"] = default[0]["metadata"]["name"]
        if "priority" in spec and spec["priority"] != value:
            return self.status(403, "Forbidden", 'pods "%s" is forbidden: the integer value of '
                               "priority (%s) must not be provided in pod spec; priority admission "
                               "controller computed %d from the given PriorityClass name"
                               % (pname, spec["priority"], value))
        spec["priority"] = value
        meta.update({"namespace": ns, "uid": str(uuid.uuid4()), "resourceVersion": next_version(),
                     "creationTimestamp": "2026-01-01T00:00:00Z"})
        pod["status"] = {"phase": "Pending", "qosClass": "BestEffort"}
        PODS[(ns, pname)] = pod
        return self.answer(201, pod)

    def dra(self, body):
        m = self.command
        path = self.path.split("?")[0][len(DRA):]
        obj = None
        if m in ("POST", "PUT"):
            try:
                obj = json.loads(body)
            except ValueError as e:
                return self.status(400, "BadRequest", "error decoding body: %s" % e)
        rs = re.fullmatch(r"/resourceslices(?:/([a-z0-9.-]+))?", path)
        rc = re.fullmatch(r"/namespaces/([a-z0-9-]+)/resourceclaims(?:/([a-z0-9.-]+)(/status)?)?", path)
        with LOCK:
            if rs:
                return self.dra_object(SLICES, rs.group(1), "ResourceSlice", m, obj, None, False)
            if rc:
                key = (rc.group(1), rc.group(2)) if rc.group(2) else None
                return self.dra_object(CLAIMS, key, "ResourceClaim", m, obj, rc.group(1),
                                       bool(rc.group(3)))
        return self.status(404, "NotFound", "the server could not find the requested resource")

    def dra_object(self, store, key, kind, m, obj, ns, status_only):
        resource = kind.lower() + "s"
        if m == "GET" and key is None:
            items = [v for k, v in sorted(store.items(), key=lambda kv: str(kv[0]))
                     if ns is None or k[0] == ns]
            return self.answer(200, {"kind": kind + "List", "apiVersion": "resource.k8s.io/v1",
                                     "metadata": {"resourceVersion": str(VERSION[0])},
                                     "items": items})
        if m in ("POST", "PUT"):
            if not isinstance(obj, dict) or obj.get("kind") != kind or \
                    obj.get("apiVersion") != "resource.k8s.io/v1":
                return self.status(400, "BadRequest", "the body is not a %s of resource.k8s.io/v1"
                                   % kind)
            errs = schema_errors(obj, "io.k8s.api.resource.v1." + kind, kind)
            if errs:
                return self.status(422, "Invalid", "%s is invalid: %s" % (kind, "; ".join(errs)))
        if m == "POST" and key is None:
            meta = obj.setdefault("metadata", {})
            name = meta.get("name", "")
            if not re.fullmatch(r"[a-z0-9]([a-z0-9.-]*[a-z0-9])?", name) or len(name) > 253:
                return self.status(422, "Invalid", "metadata.name: Invalid value: %r" % name)
            k = (ns, name) if ns else name
            if k in store:
                return self.status(409, "AlreadyExists", '%s "%s" already exists' % (resource, name))
            if ns:
                meta["namespace"] = ns
            meta["uid"] = str(uuid.uuid4())
            meta["resourceVersion"] = next_version()
            meta["creationTimestamp"] = "2026-01-01T00:00:00Z"
            if kind == "ResourceClaim":
                obj.pop("status", None)  # status is only written through /status
            store[k] = obj
            return self.answer(201, obj)
        if key is None or key not in store:
            return self.status(404, "NotFound", '%s "%s" not found' % (resource, key if ns is None else key[1]))
        cur = store[key]
        if m == "GET":
            return self.answer(200, cur)
        if m == "DELETE":
            del store[key]
            return self.answer(200, cur)
        if m != "PUT":
            return self.status(405, "MethodNotAllowed", "the server does not allow this method")
        meta = obj.get("metadata", {})
        if meta.get("resourceVersion") != cur["metadata"]["resourceVersion"]:
            return self.status(409, "Conflict", "the object has been modified; please apply your "
                               "changes to the latest version and try again")
        if status_only:
            new = json.loads(json.dumps(cur))
            new["status"] = obj.get("status", {})
        else:
            new = obj
            new["metadata"] = dict(cur["metadata"], **{k: v for k, v in meta.items()
                                                       if k in ("labels", "annotations")})
            if kind == "ResourceClaim":
                new["status"] = cur.get("status", {})
        new["metadata"]["resourceVersion"] = next_version()
        store[key] = new
        return self.answer(200, new)

    do_GET = do_PATCH = do_POST = do_PUT = do_DELETE = handle_any


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

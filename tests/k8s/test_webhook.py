#!/usr/bin/env python3
"""test_webhook.py — convgpu-webhook over real TLS with real AdmissionReview v1 JSON, as the API
server sends it (k8s.webhook). The certificates and the webhook configuration come from
packaging/k8s/dra/webhook-certs.sh, as an operator makes them. Checks: a pod asking for
convgpu.io/* resources (in a container or an init container) gets a JSONPatch adding
runtimeClassName convgpu and the site's scheduler, which applied gives the pod what it needs; a pod
naming its own scheduler keeps it; pods already right, pods without convgpu resources, DRA pods,
other kinds and updates pass unchanged; a malformed review is 400 (the API server then applies
failurePolicy), a wrong content type 415, a wrong method 405, a huge body 413; a client that
trusts another CA, or speaks plain HTTP, gets nothing; the generated webhook.yaml carries the CA
and the failure policy asked for (Ignore or Fail), and a bad policy is refused.

Usage: test_webhook.py   (CONVGPU_BUILD_DIR, CONVGPU_SOURCE_DIR from CTest)
"""
import base64
import copy
import http.client
import json
import os
import socket
import ssl
import subprocess
import sys
import tempfile
import time

BUILD = os.environ["CONVGPU_BUILD_DIR"]
SRC = os.environ.get("CONVGPU_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
WEBHOOK = os.path.join(BUILD, "bin", "convgpu-webhook")
CERTS = os.path.join(SRC, "packaging", "k8s", "dra", "webhook-certs.sh")
passes = fails = 0


def check(what, ok):
    global passes, fails
    print(("ok: " if ok else "FAIL: ") + what)
    passes += bool(ok)
    fails += not ok


def pod(containers, init=None, **spec):
    s = {"containers": containers, "restartPolicy": "Always", "schedulerName": "default-scheduler",
         "dnsPolicy": "ClusterFirst", "terminationGracePeriodSeconds": 30}
    if init:
        s["initContainers"] = init
    s.update(spec)
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "p", "namespace": "team-a", "labels": {"app": "x"}}, "spec": s}


def container(resources=None):
    c = {"name": "app", "image": "cuda:12", "imagePullPolicy": "IfNotPresent",
         "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File"}
    if resources is not None:
        c["resources"] = resources
    return c


def review(obj, kind="Pod", group="", op="CREATE", uid="705ab4f5-6393-11e8-b7cc-42010a800002"):
    resource = kind.lower() + "s"
    gvk = {"group": group, "version": "v1", "kind": kind}
    gvr = {"group": group, "version": "v1", "resource": resource}
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {
        "uid": uid, "kind": gvk, "resource": gvr, "requestKind": gvk, "requestResource": gvr,
        "name": obj.get("metadata", {}).get("name", ""), "namespace": "team-a", "operation": op,
        "userInfo": {"username": "admin", "uid": "014fbff9a07c", "groups": ["system:authenticated"]},
        "object": obj, "oldObject": None, "dryRun": False,
        "options": {"apiVersion": "meta.k8s.io/v1", "kind": "CreateOptions"}}}


def apply_patch(obj, ops):
    """JSON Patch (RFC 6902) add/replace on object members: all this webhook sends."""
    obj = copy.deepcopy(obj)
    for op in ops:
        assert op["op"] in ("add", "replace"), op
        parts = op["path"].lstrip("/").split("/")
        cur = obj
        for p in parts[:-1]:
            cur = cur[p]
        cur[parts[-1]] = op["value"]
    return obj


with tempfile.TemporaryDirectory() as tmp:
    env = dict(os.environ, FAILURE_POLICY="Fail")
    r = subprocess.run(["sh", CERTS, tmp + "/certs", "IP:127.0.0.1"], env=env, capture_output=True,
                       text=True)
    check("webhook-certs.sh made the certificates", r.returncode == 0)
    gen = open(tmp + "/certs/webhook.yaml").read()
    ca_b64 = base64.b64encode(open(tmp + "/certs/ca.crt", "rb").read()).decode()
    check("the generated webhook.yaml carries the CA as caBundle and failurePolicy Fail",
          "caBundle: " + ca_b64 in gen and "failurePolicy: Fail" in gen and "${" not in gen)
    r2 = subprocess.run(["sh", CERTS, tmp + "/c2"], env=dict(os.environ, FAILURE_POLICY="Maybe"),
                        capture_output=True, text=True)
    check("FAILURE_POLICY=Maybe: refused", r2.returncode != 0 and "Ignore or Fail" in r2.stderr)
    r3 = subprocess.run(["sh", CERTS, tmp + "/c3"], capture_output=True, text=True)
    check("the default failure policy is Ignore (fail open)",
          r3.returncode == 0 and "failurePolicy: Ignore" in open(tmp + "/c3/webhook.yaml").read())

    proc = subprocess.Popen([WEBHOOK, "--cert", tmp + "/certs/tls.crt", "--key",
                             tmp + "/certs/tls.key", "--listen", "127.0.0.1:0", "--port-file",
                             tmp + "/port", "--scheduler-name", "convgpu-scheduler",
                             "--max-body", "65536"], stderr=open(tmp + "/webhook.log", "w"))
    try:
        deadline = time.monotonic() + 60  # only bounds a hang
        while not os.path.exists(tmp + "/port") and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        port = int(open(tmp + "/port").read())
        ctx = ssl.create_default_context(cafile=tmp + "/certs/ca.crt")

        def post(body, ctype="application/json", method="POST", path="/mutate", context=ctx):
            c = http.client.HTTPSConnection("127.0.0.1", port, context=context, timeout=30)
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
            c.request(method, path, data, {"Content-Type": ctype})
            r = c.getresponse()
            text = r.read()
            c.close()
            return r.status, text

        def mutate(obj, **kw):
            st, text = post(review(obj, **kw))
            ans = json.loads(text)
            resp = ans["response"]
            ops = json.loads(base64.b64decode(resp["patch"])) if "patch" in resp else None
            return st, ans, resp, ops

        p = pod([container({"limits": {"convgpu.io/gpu-memory": "8", "cpu": "1"},
                            "requests": {"convgpu.io/gpu-memory": "8"}})])
        st, ans, resp, ops = mutate(p)
        check("a pod asking for convgpu.io/gpu-memory: 200, an AdmissionReview v1 answer for its uid",
              st == 200 and ans["apiVersion"] == "admission.k8s.io/v1" and
              ans["kind"] == "AdmissionReview" and resp["uid"] == "705ab4f5-6393-11e8-b7cc-42010a800002")
        check("... allowed, with a JSONPatch", resp["allowed"] is True and resp.get("patchType") == "JSONPatch")
        got = apply_patch(p, ops or [])
        check("... which gives it runtimeClassName convgpu and the site's scheduler",
              got["spec"]["runtimeClassName"] == "convgpu" and
              got["spec"]["schedulerName"] == "convgpu-scheduler")
        check("... and changes nothing else", {k: v for k, v in got["spec"].items()
                                               if k not in ("runtimeClassName", "schedulerName")}
              == {k: v for k, v in p["spec"].items() if k != "schedulerName"})
        p = pod([container()], init=[container({"limits": {"convgpu.io/gpu": "1"}})])
        _, _, resp, ops = mutate(p)
        check("an init container asking for convgpu.io/gpu: patched too",
              ops is not None and apply_patch(p, ops)["spec"]["runtimeClassName"] == "convgpu")
        p = pod([container({"limits": {"convgpu.io/gpu-compute": "30"}})], schedulerName="my-sched")
        _, _, resp, ops = mutate(p)
        got = apply_patch(p, ops or [])
        check("a pod naming its own scheduler keeps it (the RuntimeClass is still added)",
              got["spec"]["schedulerName"] == "my-sched" and got["spec"]["runtimeClassName"] == "convgpu")
        p = pod([container({"limits": {"convgpu.io/gpu-memory": "4"}})], runtimeClassName="convgpu",
                schedulerName="convgpu-scheduler")
        _, _, resp, ops = mutate(p)
        check("a pod that already has both: allowed, no patch", resp["allowed"] is True and ops is None)
        p = pod([container({"limits": {"convgpu.io/gpu-memory": "4"}})], runtimeClassName="runc")
        _, _, resp, ops = mutate(p)
        check("a pod naming another RuntimeClass gets convgpu's (the shim claims its allocation)",
              apply_patch(p, ops or [])["spec"]["runtimeClassName"] == "convgpu")
        for what, obj, kw in [
                ("a pod without convgpu resources", pod([container({"limits": {"nvidia.com/gpu": "1"}})]), {}),
                ("a DRA pod (resourceClaims; its claim's CDI device carries everything)",
                 pod([dict(container(), resources={"claims": [{"name": "gpu"}]})],
                     resourceClaims=[{"name": "gpu", "resourceClaimTemplateName": "convgpu-4g"}]), {}),
                ("a ConfigMap", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"},
                                 "data": {"convgpu.io/gpu-memory": "8"}}, {"kind": "ConfigMap"}),
                ("an UPDATE of a convgpu pod", pod([container({"limits": {"convgpu.io/gpu-memory": "8"}})]),
                 {"op": "UPDATE"})]:
            st, _, resp, ops = mutate(obj, **kw)
            check(what + ": allowed, unchanged", st == 200 and resp["allowed"] is True and ops is None)

        bad = [("not JSON", b"{\"apiVersion\": "),
               ("an AdmissionReview v1beta1", dict(review(pod([container()])), apiVersion="admission.k8s.io/v1beta1")),
               ("a review without a request uid", {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                                                   "request": {"kind": {"group": "", "kind": "Pod"}}}),
               ("a pod whose containers are not a list",
                review({"kind": "Pod", "spec": {"containers": {"name": "x"}}}))]
        for what, body in bad:
            st, text = post(body)
            check(what + ": 400 with the reason", st == 400 and "error" in json.loads(text))
        st, _ = post(review(pod([container()])), ctype="text/plain")
        check("a body that is not application/json: 415", st == 415)
        st, _ = post(b"", method="GET")
        check("GET /mutate: 405", st == 405)
        big = review(pod([container({"limits": {"convgpu.io/gpu-memory": "8"}})]))
        big["request"]["object"]["metadata"]["annotations"] = {"x": "y" * 70000}
        st, _ = post(big)
        check("a review over --max-body: 413", st == 413)
        st, text = post(b"", method="GET", path="/healthz")
        check("GET /healthz: ok", st == 200 and text == b"ok")

        other = tempfile.mkdtemp(dir=tmp)
        subprocess.run(["sh", CERTS, other], capture_output=True)
        try:
            post(review(pod([container()])), context=ssl.create_default_context(cafile=other + "/ca.crt"))
            check("a client trusting another CA is refused the handshake", False)
        except ssl.SSLError:
            check("a client trusting another CA is refused the handshake", True)
        s = socket.create_connection(("127.0.0.1", port), timeout=30)
        s.sendall(b"POST /mutate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                  b"Content-Length: 2\r\n\r\n{}")
        try:
            data = s.recv(4096)
        except (ConnectionResetError, socket.timeout):
            data = b""
        s.close()
        check("plain HTTP gets no HTTP answer (TLS only)", not data.startswith(b"HTTP/"))
        check("the webhook still serves after all that", post(b"", method="GET", path="/healthz")[0] == 200)
    finally:
        proc.terminate()
        proc.wait()
print("%d passed, %d failed" % (passes, fails))
sys.exit(1 if fails or not passes else 0)

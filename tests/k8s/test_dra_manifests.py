#!/usr/bin/env python3
"""test_dra_manifests.py — the manifests of packaging/k8s/dra parse and say what the built
programs expect (k8s.dra_manifests): the DeviceClass selects driver gpu.convgpu.io; the RBAC lets
the driver's service account publish ResourceSlices and read ResourceClaims; the DaemonSet runs
/usr/bin/convgpu-dra-driver with flags the built driver accepts, as root, NODE_NAME from the node,
and mounts kubelet's plugin and registry directories, /var/run/cdi and /run/convgpu; the example
ResourceClaimTemplate asks for memory 4Gi and compute 30 of that class, and its pod uses the claim
and names no RuntimeClass; webhook.yaml runs /usr/bin/convgpu-webhook with flags it accepts,
mutates pod CREATE with admissionReviewVersions v1, and leaves the failure policy and the CA to
webhook-certs.sh.

Usage: test_dra_manifests.py DIR   (CONVGPU_BUILD_DIR from CTest). 77 without python3-yaml.
"""
import os
import subprocess
import sys

try:
    import yaml
except ImportError:
    print("SKIP: python3-yaml is not installed")
    sys.exit(77)

DIR = sys.argv[1]
BUILD = os.environ["CONVGPU_BUILD_DIR"]
passes = fails = 0


def check(what, ok):
    global passes, fails
    print(("ok: " if ok else "FAIL: ") + what)
    passes += bool(ok)
    fails += not ok


def docs(name):
    return [d for d in yaml.safe_load_all(open(os.path.join(DIR, name))) if d]


def flags_of(cmd, binary):
    helptext = subprocess.run([binary, "--help"], capture_output=True, text=True).stdout
    return [a for a in cmd if a.startswith("--") and a not in helptext]


dc = docs("deviceclass.yaml")[0]
check("DeviceClass gpu.convgpu.io of resource.k8s.io/v1 selecting the driver",
      dc["apiVersion"] == "resource.k8s.io/v1" and dc["kind"] == "DeviceClass" and
      dc["metadata"]["name"] == "gpu.convgpu.io" and
      dc["spec"]["selectors"][0]["cel"]["expression"] == 'device.driver == "gpu.convgpu.io"')
rbac = {d["kind"]: d for d in docs("rbac.yaml")}
rules = rbac["ClusterRole"]["rules"]
can = lambda res, verb: any(res in r["resources"] and verb in r["verbs"] for r in rules)
check("RBAC: ResourceSlices created and updated, ResourceClaims read, pods read (--priority-map)",
      can("resourceslices", "create") and can("resourceslices", "update") and
      can("resourceclaims", "get") and can("pods", "get"))
check("RBAC: the binding names the service account",
      rbac["ClusterRoleBinding"]["subjects"][0]["name"] == rbac["ServiceAccount"]["metadata"]["name"])
ds = docs("daemonset.yaml")[0]
pod = ds["spec"]["template"]["spec"]
c = pod["containers"][0]
check("DaemonSet: /usr/bin/convgpu-dra-driver as root under the driver's service account",
      c["command"][0] == "/usr/bin/convgpu-dra-driver" and c["securityContext"]["runAsUser"] == 0 and
      pod["serviceAccountName"] == rbac["ServiceAccount"]["metadata"]["name"])
check("DaemonSet: every flag is one the built driver accepts",
      flags_of(c["command"], os.path.join(BUILD, "bin", "convgpu-dra-driver")) == [])
check("DaemonSet: NODE_NAME from spec.nodeName",
      any(e["name"] == "NODE_NAME" and e["valueFrom"]["fieldRef"]["fieldPath"] == "spec.nodeName"
          for e in c["env"]))
vols = {v["name"]: v["hostPath"]["path"] for v in pod["volumes"]}
mounts = {m["mountPath"] for m in c["volumeMounts"]}
check("DaemonSet: kubelet's plugins and registry, /var/run/cdi, /run/convgpu mounted from the host",
      {"/var/lib/kubelet/plugins", "/var/lib/kubelet/plugins_registry", "/var/run/cdi",
       "/run/convgpu"} <= mounts and all(m["name"] in vols for m in c["volumeMounts"]) and
      all(vols[m["name"]] == m["mountPath"] for m in c["volumeMounts"]))
tmpl, example = docs("claim-template.yaml")
req = tmpl["spec"]["spec"]["devices"]["requests"][0]["exactly"]
check("ResourceClaimTemplate: memory 4Gi and compute 30 of gpu.convgpu.io",
      tmpl["kind"] == "ResourceClaimTemplate" and req["deviceClassName"] == "gpu.convgpu.io" and
      req["capacity"]["requests"] == {"memory": "4Gi", "compute": "30"})
check("the example pod uses the template's claim and names no RuntimeClass",
      example["spec"]["resourceClaims"][0]["resourceClaimTemplateName"] == tmpl["metadata"]["name"] and
      example["spec"]["containers"][0]["resources"]["claims"][0]["name"] == "gpu" and
      "runtimeClassName" not in example["spec"])
text = open(os.path.join(DIR, "webhook.yaml")).read()
wh = {d["kind"]: d for d in yaml.safe_load_all(text) if d}
hook = wh["MutatingWebhookConfiguration"]["webhooks"][0]
wc = wh["Deployment"]["spec"]["template"]["spec"]["containers"][0]
check("webhook: /usr/bin/convgpu-webhook with flags it accepts",
      wc["command"][0] == "/usr/bin/convgpu-webhook" and
      flags_of(wc["command"], os.path.join(BUILD, "bin", "convgpu-webhook")) == [])
check("webhook: pod CREATE, AdmissionReview v1, path /mutate, no side effects",
      hook["rules"][0]["resources"] == ["pods"] and hook["rules"][0]["operations"] == ["CREATE"] and
      hook["admissionReviewVersions"] == ["v1"] and hook["clientConfig"]["service"]["path"] == "/mutate"
      and hook["sideEffects"] == "None")
check("webhook: failurePolicy and caBundle left to webhook-certs.sh",
      hook["failurePolicy"] == "${FAILURE_POLICY}" and hook["clientConfig"]["caBundle"] == "${CA_BUNDLE}")
print("%d passed, %d failed" % (passes, fails))
sys.exit(1 if fails or not passes else 0)

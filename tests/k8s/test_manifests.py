#!/usr/bin/env python3
"""test_manifests.py — the test k8s.manifests: packaging/k8s/*.yaml and the containerd snippet
parse, and say what the rest of convgpu expects, field by field. No cluster can run here
(Debian ships no kubelet or API server), so this is what keeps the manifests from rotting:

  runtimeclass.yaml       RuntimeClass convgpu, handler convgpu
  containerd-convgpu.toml a runtimes.<that handler> entry: io.containerd.runc.v2 running
                          BinaryName = /usr/bin/convgpu-runtime, the path the package installs
  containerd-convgpu.conf a systemd drop-in for containerd: [Service] Environment=
                          CONVGPU_SHIM_MODE=kubernetes, the mode the built shim reads (its
                          binary names the variable and the value)
  containerd-convgpu-nvidia.conf
                          a systemd drop-in for containerd: [Service] Environment=
                          CONVGPU_RUNC=/usr/bin/nvidia-container-runtime, the variable the
                          built shim's --help names as its next runtime
  daemonset.yaml          convgpud and /usr/bin/convgpu-device-plugin from the node image of this
                          version; hostPath /run/convgpu in both, /var/lib/kubelet/device-plugins
                          in the plugin; hostPID; every mount names a volume; every convgpud
                          flag and config key, and the readiness probe's command, is one the
                          built programs accept; the service account exists with node access
  example-pod.yaml        runtimeClassName convgpu; convgpu.io/gpu-memory 8 (2 GiB of 256 MiB
                          units) in limits and requests; its command's flags exist

Usage: test_manifests.py DIR   (CONVGPU_BUILD_DIR, CONVGPU_SOURCE_DIR from CTest). Exit 0, or 1
with every problem printed; 77 when python3-yaml is missing.
"""
import os
import re
import subprocess
import sys
import tomllib

try:
    import yaml
except ImportError:
    print("SKIP: python3-yaml is not installed (apt-get install python3-yaml)")
    sys.exit(77)

DIR = sys.argv[1]
SRC = os.environ.get("CONVGPU_SOURCE_DIR", os.path.join(DIR, "..", ".."))
BUILD = os.environ.get("CONVGPU_BUILD_DIR")
UNIT_BYTES = 256 << 20  # the device plugin's default --memory-unit
problems = []
checks = 0


def check(ok, what):
    global checks
    checks += 1
    if not ok:
        problems.append(what)


def docs(name):
    with open(os.path.join(DIR, name), encoding="utf-8") as f:
        return [d for d in yaml.safe_load_all(f) if d is not None]


def one(documents, kind, name=None):
    found = [d for d in documents if d.get("kind") == kind and
             (name is None or d.get("metadata", {}).get("name") == name)]
    check(len(found) == 1, f"expected one {kind} {name or ''}, found {len(found)}")
    return found[0] if found else {}


def help_options(*argv):
    """The long options a built program's --help names (None without a build tree)."""
    if not BUILD:
        return None
    out = subprocess.run([os.path.join(BUILD, "bin", argv[0]), *argv[1:], "--help"],
                         capture_output=True, text=True, timeout=60)
    return set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", out.stdout + out.stderr))


with open(os.path.join(SRC, "CMakeLists.txt"), encoding="utf-8") as f:
    VERSION = re.search(r"project\(convgpu VERSION ([0-9.]+)", f.read()).group(1)
IMAGE = f"convgpu-node:{VERSION}"
with open(os.path.join(SRC, "debian", "convgpu.install"), encoding="utf-8") as f:
    INSTALLED = {"/" + line.strip() for line in f if line.strip()}

# The RuntimeClass and containerd's entry for its handler.
rc = one(docs("runtimeclass.yaml"), "RuntimeClass", "convgpu")
check(rc.get("apiVersion") == "node.k8s.io/v1", "RuntimeClass: apiVersion node.k8s.io/v1")
handler = rc.get("handler")
check(handler == "convgpu", f"RuntimeClass handler is {handler!r}, not 'convgpu'")
with open(os.path.join(DIR, "containerd-convgpu.toml"), "rb") as f:
    toml = tomllib.load(f)
check(toml.get("version") == 2, "containerd snippet: config version 2 (containerd 1.6)")
runtimes = toml.get("plugins", {}).get("io.containerd.grpc.v1.cri", {}).get(
    "containerd", {}).get("runtimes", {})
entry = runtimes.get(handler or "convgpu", {})
check(entry.get("runtime_type") == "io.containerd.runc.v2",
      f"containerd runtimes.{handler}: runtime_type {entry.get('runtime_type')!r}")
binary = entry.get("options", {}).get("BinaryName")
check(binary == "/usr/bin/convgpu-runtime", f"containerd BinaryName is {binary!r}")
check(binary in INSTALLED, f"BinaryName {binary} is not what debian/convgpu.install installs")

def drop_in(name):
    """A systemd drop-in's Environment= values; its first section must be [Service]."""
    with open(os.path.join(DIR, name), encoding="utf-8") as f:
        unit = [l.strip() for l in f if l.strip() and not l.lstrip().startswith("#")]
    check(unit[:1] == ["[Service]"], f"{name}: its first section is {unit[:1]}, not [Service]")
    return [l.split("=", 1)[1] for l in unit if l.startswith("Environment=")]


# The drop-in that puts the shim in Kubernetes mode on every node: limits only from the device
# plugin's allocations. Its variable and value must be the ones the built shim compares.
envs = drop_in("containerd-convgpu.conf")
check(envs == ["CONVGPU_SHIM_MODE=kubernetes"], f"convgpu drop-in: Environment= lines {envs}")
if BUILD:
    with open(os.path.join(BUILD, "bin", "convgpu-runtime"), "rb") as f:
        shim = f.read()
    check(b"CONVGPU_SHIM_MODE\0" in shim and b"kubernetes\0" in shim,
          "convgpu drop-in: the built convgpu-runtime reads no CONVGPU_SHIM_MODE=kubernetes")

# The drop-in that puts NVIDIA's runtime after the shim on a GPU node: systemd's syntax (a
# [Service] section, Environment= with one NAME=VALUE) and the variable the shim reads.
envs = drop_in("containerd-convgpu-nvidia.conf")
check(envs == ["CONVGPU_RUNC=/usr/bin/nvidia-container-runtime"],
      f"nvidia drop-in: Environment= lines {envs}")
if BUILD:
    out = subprocess.run([os.path.join(BUILD, "bin", "convgpu-runtime"), "--help"],
                         capture_output=True, text=True, timeout=60).stdout
    check("$CONVGPU_RUNC" in out, "nvidia drop-in: convgpu-runtime --help names no $CONVGPU_RUNC")

# The DaemonSet and what it relies on.
node = docs("daemonset.yaml")
ds = one(node, "DaemonSet", "convgpu-node")
check(ds.get("apiVersion") == "apps/v1", "DaemonSet: apiVersion apps/v1")
spec = ds.get("spec", {})
pod = spec.get("template", {}).get("spec", {})
labels = spec.get("template", {}).get("metadata", {}).get("labels", {})
selector = spec.get("selector", {}).get("matchLabels", {})
check(selector and all(labels.get(k) == v for k, v in selector.items()),
      "DaemonSet: the selector does not match the template's labels")
check(pod.get("hostPID") is True, "DaemonSet: hostPID (the daemon watches host pids)")
volumes = {v["name"]: v for v in pod.get("volumes", [])}
containers = {c["name"]: c for c in pod.get("containers", [])}
check(set(containers) == {"convgpud", "device-plugin"},
      f"DaemonSet containers are {sorted(containers)}")


def host_mounts(c):
    """{mountPath: hostPath} of a container's hostPath mounts; every mount must name a volume."""
    out = {}
    for m in c.get("volumeMounts", []):
        v = volumes.get(m.get("name"))
        check(v is not None, f"{c['name']}: mount {m.get('mountPath')} names no volume")
        if v and "hostPath" in v:
            out[m["mountPath"]] = v["hostPath"]["path"]
    return out


daemon = containers.get("convgpud", {})
plugin = containers.get("device-plugin", {})
for c in (daemon, plugin):
    check(c.get("image") == IMAGE, f"{c.get('name')}: image {c.get('image')!r}, not {IMAGE}")
check(daemon.get("command", [None])[0] in ("convgpud", "/usr/bin/convgpud"),
      "convgpud container: does not run convgpud")
check("/usr/bin/convgpud" in INSTALLED, "convgpud is not installed in /usr/bin")
check("--foreground" in daemon.get("command", []), "convgpud must not detach in a container")
check(daemon.get("securityContext", {}).get("privileged") is True,
      "convgpud: privileged (NVML, pidfds of host processes)")
check(host_mounts(daemon).get("/run/convgpu") == "/run/convgpu",
      "convgpud: hostPath /run/convgpu at /run/convgpu")
check(plugin.get("command", [None])[0] == "/usr/bin/convgpu-device-plugin",
      f"device-plugin: command {plugin.get('command')}")
pm = host_mounts(plugin)
check(pm.get("/run/convgpu") == "/run/convgpu", "device-plugin: hostPath /run/convgpu")
check(pm.get("/var/lib/kubelet/device-plugins") == "/var/lib/kubelet/device-plugins",
      "device-plugin: hostPath /var/lib/kubelet/device-plugins")
env = {e["name"]: e for e in plugin.get("env", [])}
check(env.get("CONVGPU_RUNTIME_DIR", {}).get("value") == "/run/convgpu",
      "device-plugin: CONVGPU_RUNTIME_DIR=/run/convgpu")
check(env.get("NODE_NAME", {}).get("valueFrom", {}).get("fieldRef", {}).get("fieldPath")
      == "spec.nodeName", "device-plugin: NODE_NAME from the downward API")
unit = plugin.get("command", [])
if "--memory-unit" in unit:
    check(unit[unit.index("--memory-unit") + 1] == "256MiB",
          "device-plugin: --memory-unit differs from the 256MiB the example pod assumes")

# The service account, its access to Nodes, the configuration map.
sa = pod.get("serviceAccountName")
one(node, "ServiceAccount", sa)
role = one(node, "ClusterRole", "convgpu-node")
check(any("nodes" in r.get("resources", []) and "patch" in r.get("verbs", [])
          for r in role.get("rules", [])), "ClusterRole: may patch nodes (the annotation)")
binding = one(node, "ClusterRoleBinding", "convgpu-node")
check(binding.get("roleRef", {}).get("name") == "convgpu-node" and
      any(s.get("name") == sa and s.get("kind") == "ServiceAccount"
          for s in binding.get("subjects", [])), "ClusterRoleBinding: role to the service account")
cm_name = volumes.get("config", {}).get("configMap", {}).get("name")
cm = one(node, "ConfigMap", cm_name)
conf = cm.get("data", {}).get("convgpud.conf", "")
keys = re.findall(r"^\s*([a-z][a-z0-9-]*)\s*=", conf, re.M)
check("runtime-dir" in keys and re.search(r"^runtime-dir = /run/convgpu$", conf, re.M),
      "convgpud.conf: runtime-dir = /run/convgpu")
config_mount = [m for m in daemon.get("volumeMounts", []) if m.get("name") == "config"]
check(config_mount and os.path.join(config_mount[0]["mountPath"], "convgpud.conf")
      in daemon.get("command", []), "convgpud: --config names the ConfigMap's file")

opts = help_options("convgpud")
if opts is not None:
    for flag in [a for a in daemon.get("command", []) if a.startswith("--")]:
        check(flag in opts, f"convgpud has no option {flag}")
    for key in keys:
        check("--" + key in opts, f"convgpud.conf: convgpud has no key {key}")
probe = daemon.get("readinessProbe", {}).get("exec", {}).get("command", [])
check(probe[:1] == ["convgpu"], "convgpud: readiness probe runs convgpu")
if BUILD and probe[:1] == ["convgpu"]:
    out = subprocess.run([os.path.join(BUILD, "bin", "convgpu"), "--help"], capture_output=True,
                         text=True, timeout=60).stdout
    words = [a for a in probe[1:] if not a.startswith("-") and not a.startswith("/")]
    check(words and re.search(rf"^  {words[0]}\s", out, re.M),
          f"readiness probe: convgpu has no command {words[:1]}")

# The example pod.
ex = one(docs("example-pod.yaml"), "Pod")
espec = ex.get("spec", {})
check(espec.get("runtimeClassName") == rc.get("metadata", {}).get("name", "convgpu"),
      "example pod: runtimeClassName convgpu")
for c in espec.get("containers", []):
    res = c.get("resources", {})
    lim = res.get("limits", {}).get("convgpu.io/gpu-memory")
    check(lim == 8, f"example pod: limits convgpu.io/gpu-memory is {lim!r}, not 8")
    check(lim is not None and lim * UNIT_BYTES == 2 << 30, "example pod: 8 units are 2 GiB")
    req = res.get("requests", {}).get("convgpu.io/gpu-memory", lim)
    check(req == lim, "example pod: an extended resource's request must equal its limit")
    check(c.get("image") == IMAGE, f"example pod: image {c.get('image')!r}")
    cmd = c.get("command", [])
    sample = help_options("convgpu-sample")
    if sample is not None and cmd[:1] == ["convgpu-sample"]:
        for flag in [a for a in cmd if a.startswith("--")]:
            check(flag in sample, f"example pod: convgpu-sample has no option {flag}")

for p in problems:
    print("FAIL:", p)
print(f"k8s.manifests: {checks} checks, {len(problems)} problem(s)")
sys.exit(1 if problems else 0)

#!/usr/bin/env bash
# test_options.sh — the container-option table (src/client/container_options.h) walked through
# every door against a daemon: for each row and each door that offers it, a valid value is given
# and what the daemon recorded is read back over the API (inspect); an invalid value is refused
# and leaves no container behind. Doors: convgpu run, create, set (changeable rows), the OCI
# shim (process.env, then the annotation) through convgpu-runtime with a stand-in runtime,
# convgpu docker run (what it hands docker, with a stand-in docker client), the API, and the
# device plugin's own flags (the node operator's: priority, swap refusal, exclusivity), started
# against the kubelet stand-in, its Allocate's token claimed as the shim claims it. The
# SPANK door needs a Slurm cluster: slurm.spank gives its options the same way.
source "$(dirname "$0")/lib.sh"
start_daemon --emulate 2x2GiB --swap yes

"$BUILD/bin/test_options" --dump >"$TMP/table.json"
printf '#!/bin/sh\nexit 0\n' >"$TMP/fake-runc"
printf '#!/bin/sh\nprintf "%%s\\n" "$@" >"%s/docker.args"\n' "$TMP" >"$TMP/fake-docker"
chmod +x "$TMP/fake-runc" "$TMP/fake-docker"

walk_rc=0
python3 - "$TMP" "$BUILD" "$RUNDIR" >"$TMP/walk.out" 2>&1 <<'PY' || walk_rc=$?
import json, os, socket, subprocess, sys
tmp, build, rundir = sys.argv[1:4]
cg = [f"{build}/bin/convgpu", "--runtime-dir", rundir]
shim = f"{build}/bin/convgpu-runtime"
rows = json.load(open(f"{tmp}/table.json"))
RUN, CREATE, SET, DOCKER, OCI, SPANK, API, K8S = (1 << i for i in range(8))
MiB = 1 << 20

def api(method, path, body=None):
    s = socket.socket(socket.AF_UNIX); s.connect(f"{rundir}/control.sock")
    data = json.dumps(body).encode() if body is not None else b""
    s.sendall(f"{method} {path} HTTP/1.1\r\nHost: c\r\nConnection: close\r\n"
              f"Content-Length: {len(data)}\r\n\r\n".encode() + data)
    out = b""
    while (chunk := s.recv(65536)):
        out += chunk
    head, _, body = out.partition(b"\r\n\r\n")
    return int(head.split()[1]), (json.loads(body) if body.strip() else None)

def say(ok, what):
    print(("ok: " if ok else "FAIL: ") + what)

def containers():
    return api("GET", "/v1/containers")[1]

def clean():
    for c in containers():
        api("DELETE", f"/v1/containers/{c['id']}")

# What the daemon records for each row's valid value (the table's valid_of), and what the row
# needs beside it to make a container at all.
expect = {
    "gpu-memory": ("limit", 96 * MiB), "gpu-compute": ("gpu_compute", 30),
    "compute-mode": ("compute_mode", "hard"), "priority": ("priority", 1),
    "no-swap": ("swap_allowed", False), "exclusive": ("exclusive", True),
    "tenant": ("tenant", "team-a"), "device": ("devices", [1]), "gpus": ("gpus", 2),
    "devices": ("devices", [0, 1]), "name": ("name", "team-a"),
}
def beside(flag):
    b = [] if flag == "gpu-memory" else [("gpu-memory", "64MiB")]
    if flag == "compute-mode":
        b.append(("gpu-compute", "30"))
    return b

def cli_args(row, value):
    return [f"--{row['flag']}"] + ([] if row["type"] == 4 else [value])

def recorded(c, row):
    field, want = expect[row["flag"]]
    got = c.get(field)
    return got == want, f"{field}={got!r}, want {want!r}"

# docs/OPERATIONS.md's table says what the table says: each row's spellings on one line.
doc = open(os.path.join(os.environ.get("CONVGPU_SOURCE_DIR", f"{build}/.."), "docs/OPERATIONS.md")).read()
for row in rows:
    line = next((l for l in doc.splitlines() if l.startswith("|") and f"`--{row['flag']}" in l), "")
    names = [row[k] for k in ("env", "annotation") if row[k]] + ([f"--{row['spank']}"] if row["spank"] else [])
    say(line and all(f"`{n}`" in line for n in names),
        f"OPERATIONS.md's option table has --{row['flag']} with {names}")

for row in rows:
    flag = row["flag"]
    if flag not in expect:
        print(f"# --{flag}: its valid value needs a recorded profile (e2e.profile); invalid only")
    base = [a for k, v in beside(flag) for a in (f"--{k}", v)]
    # --- convgpu run: the command lists the containers while it runs in one.
    if row["doors"] & RUN:
        if flag in expect:
            p = subprocess.run(cg + ["run", "--quiet"] + base + cli_args(row, row["valid"]) +
                               ["--", "curl", "-s", "--unix-socket", f"{rundir}/control.sock",
                                "http://convgpu/v1/containers"], capture_output=True, text=True)
            lst = json.loads(p.stdout) if p.returncode == 0 and p.stdout else []
            ok, why = recorded(lst[0], row) if len(lst) == 1 else (False, p.stderr)
            say(ok, f"run --{flag} {row['valid']}: {why}")
        p = subprocess.run(cg + ["run", "--quiet"] + base + [f"--{flag}", row["invalid"]] +
                           ["--", "true"], capture_output=True, text=True)
        bad_ok = p.returncode != 0 and row["invalid"] in p.stderr and not containers()
        say(bad_ok, f"run --{flag} {row['invalid']}: refused ({p.returncode}), nothing made: {p.stderr.strip()}")
        clean()
    # --- convgpu create
    if row["doors"] & CREATE:
        if flag in expect:
            p = subprocess.run(cg + ["create"] + base + cli_args(row, row["valid"]),
                               capture_output=True, text=True)
            cid = p.stdout.split("\n")[0] if p.returncode == 0 else None
            ok, why = recorded(api("GET", f"/v1/containers/{cid}")[1], row) if cid else (False, p.stderr)
            say(ok, f"create --{flag} {row['valid']}: {why}")
            clean()
        p = subprocess.run(cg + ["create"] + base + [f"--{flag}", row["invalid"]],
                           capture_output=True, text=True)
        say(p.returncode == 2 and row["invalid"] in p.stderr and not containers(),
            f"create --{flag} {row['invalid']}: refused ({p.returncode}), nothing made")
        clean()
    # --- convgpu set: on a container made with a limit and a share
    if row["doors"] & SET:
        p = subprocess.run(cg + ["create", "--gpu-memory", "64MiB", "--gpu-compute", "20"],
                           capture_output=True, text=True)
        cid = p.stdout.split("\n")[0]
        before = api("GET", f"/v1/containers/{cid}")[1]
        p = subprocess.run(cg + ["set", cid, f"--{flag}", row["valid"]], capture_output=True, text=True)
        ok, why = recorded(api("GET", f"/v1/containers/{cid}")[1], row)
        say(p.returncode == 0 and ok, f"set --{flag} {row['valid']}: {why} {p.stderr.strip()}")
        subprocess.run(cg + ["set", cid, "--gpu-memory", "64MiB", "--gpu-compute", "20",
                             "--compute-mode", "elastic", "--priority", "0"], capture_output=True)
        p = subprocess.run(cg + ["set", cid, f"--{flag}", row["invalid"]], capture_output=True, text=True)
        after = api("GET", f"/v1/containers/{cid}")[1]
        field = expect[flag][0]
        say(p.returncode == 2 and after.get(field) == before.get(field),
            f"set --{flag} {row['invalid']}: refused ({p.returncode}), {field} unchanged")
        clean()
    # --- the OCI shim: the variable, then the annotation alone
    if row["doors"] & OCI:
        for how in ("env", "annotation"):
            name = row[how]
            for value, good in ((row["valid"], True), (row["invalid"], False)):
                if good and flag not in expect:
                    continue
                env = ["PATH=/bin"] + [f"CONVGPU_{k.upper().replace('-', '_')}={v}"
                                       for k, v in beside(flag)]
                ann = {}
                if how == "env":
                    env.append(f"{name}={value}")
                else:
                    ann[name] = value
                b = f"{tmp}/bundle-{flag}-{how}-{good}"
                os.makedirs(b, exist_ok=True)
                json.dump({"ociVersion": "1.0.2", "process": {"args": ["/bin/true"], "env": env},
                           "root": {"path": "rootfs"}, "annotations": ann},
                          open(f"{b}/config.json", "w"))
                cid = f"opt-{flag}-{how}-{int(good)}"
                p = subprocess.run([shim, "--runtime", f"{tmp}/fake-runc", "--runtime-dir", rundir,
                                    "create", "--bundle", b, cid], capture_output=True, text=True)
                if good:
                    st, c = api("GET", f"/v1/containers/{cid}")
                    ok, why = recorded(c, row) if st == 200 else (False, p.stderr)
                    say(p.returncode == 0 and ok, f"shim {name}={value}: {why}")
                else:
                    say(p.returncode != 0 and value in p.stderr and not containers(),
                        f"shim {name}={value}: refused ({p.returncode}), nothing made")
                subprocess.run([shim, "--runtime", f"{tmp}/fake-runc", "--runtime-dir", rundir,
                                "delete", cid], capture_output=True)
                clean()
    # --- convgpu docker run: our flags become the row's variable for the shim (above)
    if row["doors"] & DOCKER and flag in ("gpu-memory", "gpu-compute", "compute-mode",
                                          "priority", "no-swap", "exclusive"):
        value = "yes" if row["type"] == 4 else row["valid"]
        p = subprocess.run(cg + ["docker", "run"] + cli_args(row, row["valid"]) +
                           (["--gpu-compute", "30"] if flag == "compute-mode" else []) + ["img"],
                           capture_output=True, text=True,
                           env=dict(os.environ, CONVGPU_DOCKER=f"{tmp}/fake-docker"))
        args = open(f"{tmp}/docker.args").read().split("\n") if p.returncode == 0 else []
        want = f"{row['env']}={value}" if flag != "gpu-compute" else f"{row['env']}=30"
        say(want in args, f"docker run --{flag}: docker gets -e {want} ({p.stderr.strip()})")
        os.path.exists(f"{tmp}/docker.args") and os.remove(f"{tmp}/docker.args")
        # With a size given, docker run reads no image labels (no docker call of its own).
        sized = [] if flag == "gpu-memory" else ["--gpu-memory", "64MiB"]
        p = subprocess.run(cg + ["docker", "run"] + sized + [f"--{flag}", row["invalid"], "img"],
                           capture_output=True, text=True,
                           env=dict(os.environ, CONVGPU_DOCKER=f"{tmp}/fake-docker"))
        if row["type"] != 4:  # a flag's "invalid" is docker's next argument, not a value
            say(p.returncode != 0 and not os.path.exists(f"{tmp}/docker.args"),
                f"docker run --{flag} {row['invalid']}: refused ({p.returncode}), docker not run")
    # --- the API
    if row["doors"] & API and flag in expect:
        body = {"gpu_memory": "64MiB"} if flag != "gpu-memory" else {}
        if flag == "compute-mode":
            body["gpu_compute"] = 30
        t = row["type"]
        val = (row["valid"] if t in (0, 3, 5) else int(row["valid"]) if t in (1, 2)
               else [int(x) for x in row["valid"].split(",")] if t == 6 else True)
        key = row["api_key"]
        if flag == "no-swap":
            val = False
        body[key] = val
        st, c = api("POST", "/v1/containers", body)
        ok, why = recorded(c, row) if st in (200, 201) else (False, f"HTTP {st} {c}")
        say(ok, f"API {key}={val!r}: {why}")
        clean()

# --- the device plugin: its own flags, the node operator's (the pod writes nothing it reads)
plugin, standin = f"{build}/bin/convgpu-device-plugin", f"{build}/bin/kubelet-standin"
k8s_rows = [r for r in rows if r["doors"] & K8S]
say(sorted(r["flag"] for r in k8s_rows) == ["exclusive", "no-swap", "priority"],
    f"the device plugin's door: {[r['flag'] for r in k8s_rows]}")
if not (os.access(plugin, os.X_OK) and os.access(standin, os.X_OK)):
    print("# the device plugin is not built (grpc++ missing): its door is not walked here")
    k8s_rows = []
import time
def until(cond, what, limit=120):
    end = time.monotonic() + limit
    while not cond():
        if time.monotonic() > end:
            raise SystemExit(f"timed out waiting for {what}")
        time.sleep(0.05)
if k8s_rows:
    dp, kst = f"{tmp}/dp", f"{tmp}/kubelet"
    os.makedirs(dp, exist_ok=True); os.makedirs(kst, exist_ok=True)
    kubelet = subprocess.Popen([standin, "serve", "--dir", dp, "--state", kst],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    until(lambda: os.path.exists(f"{kst}/ready"), "the kubelet stand-in")
    mem = f"{dp}/convgpu-memory.sock"
for row in k8s_rows:
    flag = row["flag"]
    args = [f"--{flag}"] + ([] if row["type"] == 4 else [row["valid"]])
    p = subprocess.Popen([plugin, "--plugin-dir", dp, "--runtime-dir", rundir, "--poll-ms", "100"]
                         + args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    until(lambda: os.path.exists(mem), "the plugin's memory socket")
    a = subprocess.run([standin, "allocate", "--socket", mem, "gpu0-mem-0"],
                       capture_output=True, text=True)
    token = a.stdout.strip().partition("CONVGPU_ALLOCATION=")[2]
    st, c = api("POST", "/v1/containers", {"id": f"k8s-{flag}", "allocation": [token],
                                            "allocation_pod": f"pod-{flag}"})
    ok, why = recorded(c, row) if st == 201 else (False, f"HTTP {st} {c} {a.stderr}")
    say(ok, f"device plugin {' '.join(args)}: {why}")
    p.terminate(); p.wait()
    until(lambda: not os.path.exists(mem), "the plugin's sockets removed")
    clean()
    if row["type"] != 4:
        b = subprocess.run([plugin, "--plugin-dir", dp, "--runtime-dir", rundir, f"--{flag}",
                            row["invalid"]], capture_output=True, text=True)
        say(b.returncode == 2 and row["invalid"] in b.stderr and not containers(),
            f"device plugin --{flag} {row['invalid']}: refused ({b.returncode}): {b.stderr.strip()}")
if k8s_rows:
    kubelet.terminate(); kubelet.wait()
PY
while IFS= read -r line; do
    case $line in
    "ok: "*) pass "${line#ok: }" ;;
    "FAIL: "*) fail "${line#FAIL: }" ;;
    *) echo "$line" ;;
    esac
done <"$TMP/walk.out"
check "the walk went through every row to its end (python exit $walk_rc)" test "$walk_rc" = 0
finish

#!/usr/bin/env python3
"""doc_blocks.py — the test docs.blocks: every command block of README.md and docs/*.md that a
reader is meant to type runs as written, against a private convgpud on the emulated GPU.

How a block is chosen. Every fenced block is one of:
  run            typed by a reader: run
  skip (REASON)  typed by a reader, but needs what this test cannot have here (root changes to
                 the system, Docker, Podman, Slurm, containerd, a GPU, minutes of benchmarks);
                 the reason is printed, and says which test runs it where one does
  illustration   not commands: a diagram, a transcript with made-up values, an excerpt of output
  options PROG   a synopsis: its --options must be exactly those of `PROG --help`
given by an HTML comment on the line before the block: `<!-- doc-test: skip (needs docker) -->`.
Blocks tagged json, yaml or toml are data and need no marker. Any other block without a marker
fails the test: whoever adds a block says what it is. Files this test's owner may not edit get
their markers from EXTERNAL below, keyed by the block's first line (a changed block falls back
to "unmarked", so it is looked at again).

How a block runs. In a scratch directory holding `build`, `bench`, `tests`, `packaging` and
`docs` (links to the build and source trees), with the build's bin/ first on PATH, as one bash
script under `set -e`: the first failing command fails the block, with its output. Where a block
is a transcript (`$ ` prompts), only the prompted lines run. The runtime directories a reader
would use are substituted: `/tmp/cg` becomes the block's own directory, `/run/convgpu` the
private daemon's (also in CONVGPU_RUNTIME_DIR, so `convgpu ps` without --runtime-dir finds it).
`make ...` lines are not run (the test runs inside a build; CI runs the targets themselves). A
line that starts a daemon in the background is followed by a wait until its control socket
answers (a reader types slower than a daemon starts): a wait for a condition, bounded only
against a hang, like every bound here.

Exit status: 0 when every run block passed and every block is marked, 1 otherwise.
"""
import glob
import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import time

BUILD = os.environ["CONVGPU_BUILD_DIR"]
SRC = os.environ["CONVGPU_SOURCE_DIR"]
HANG_S = 180  # bounds a hung block only; the slowest block takes a few seconds
MARKER = re.compile(r"^<!--\s*doc-test:\s*(run|skip|illustration|options)\b\s*(.*?)\s*-->\s*$")
FENCE = re.compile(r"^(\s*)```\s*([A-Za-z0-9_-]*)\s*$")
DATA = {"json", "yaml", "toml"}

# Markers for blocks in files this test's owner may not edit (docs/KUBERNETES.md and the others
# listed): (file, first line of the block) -> (kind, reason). Their owners may move them into
# the files as comments.
EXTERNAL = {
    ("docs/DESIGN.md", "application process (in a container)            host"):
        ("illustration", "the components' diagram"),
    ("docs/GPU-VALIDATION.md", "tests/gpu/run.sh                              # results in build-gpu/results/"):
        ("skip", "needs a GPU; gpu.emulate runs the suite on the emulator"),
    ("docs/GPU-VALIDATION.md", "make build && tests/gpu/bundle.sh   # -> .gpu-bundle/ (~20 MiB): binaries, their non-glibc"):
        ("skip", "builds a bundle into the source tree; gpu.bundle runs it"),
    ("docs/GPU-VALIDATION.md", "run(command='tests/gpu/run.sh --out \"$OUT/gpu-results.md\"', carry=['.gpu-bundle'], timeout_s=600)"):
        ("illustration", "a call of the session's device tool, not a shell command"),
    ("docs/GPU-VALIDATION.md", "run(command='cp docs/BENCHMARKS.md \"$OUT/\" && BENCH_OUT=\"$OUT/BENCHMARKS.md\" bench/run-all.sh --real-gpu .gpu-bundle',"):
        ("illustration", "a call of the session's device tool, not a shell command"),
    ("docs/GPU-VALIDATION.md", "run(command='cp docs/BENCHMARKS.md \"$OUT/\" && BENCH_OUT=\"$OUT/BENCHMARKS.md\" bench/compute.sh --real-gpu .gpu-bundle',"):
        ("illustration", "a call of the session's device tool, not a shell command"),
    ("docs/GPU-VALIDATION.md", "build/bench/bench_swap --rounds 20                 # bandwidth: swap-out/in against plain copies"):
        ("skip", "on a GPU host (the driver's libcuda); docs/SWAP.md's block runs bench_swap on the emulator"),
    ("docs/KUBERNETES.md", "kubectl apply pod (convgpu.io/gpu-memory: 8)"):
        ("illustration", "the flow of one pod"),
    ("docs/KUBERNETES.md", "apt install ./convgpu_*.deb ./libconvgpu_*.deb     # ./convgpu-emu_*.deb too on a test node without GPUs"):
        ("skip", "root changes to a Kubernetes node; package.install and k8s.containerd run the pieces"),
    ("docs/KUBERNETES.md", "kubectl apply -f packaging/k8s/runtimeclass.yaml -f packaging/k8s/daemonset.yaml"):
        ("skip", "needs a Kubernetes cluster (none in Debian); k8s.* run the pieces against stand-ins"),
    ("docs/KUBERNETES.md", "convgpu-device-plugin [--plugin-dir /var/lib/kubelet/device-plugins] [--runtime-dir /run/convgpu]"):
        ("illustration", "a synopsis; package.manpages checks the plugin's options"),
    ("docs/KUBERNETES.md", "convgpu cdi generate --output /etc/cdi/convgpu.json"):
        ("skip", "root (/etc/cdi) and Podman; k8s.cdi runs it"),
    ("docs/PACKAGING.md", "make deb                  # = packaging/build-deb.sh build-deb $(JOBS)"):
        ("skip", "builds the packages (minutes); make package runs it"),
    ("docs/PACKAGING.md", "make package              # make deb, make build, then ctest -L package (as root)"):
        ("skip", "root and a debootstrap root; the package stage of make check runs it"),
    ("docs/PACKAGING.md", "make image                # make deb, then packaging/image/build-image.sh build-deb build-deb/image"):
        ("skip", "needs Docker and the packages; package.image runs it"),
    ("docs/SLURM.md", "sbatch --gpu-mem=2GiB job.sh"):
        ("illustration", "the path of one job"),
    ("docs/SLURM.md", "srun --gpu-mem=2GiB ./md_run                   # one step, 2 GiB on each of its nodes"):
        ("skip", "needs a Slurm cluster; slurm.jobs runs these options on one"),
    ("docs/SLURM.md", "required /usr/local/lib/convgpu/convgpu_spank.so"):
        ("illustration", "a line of plugstack.conf"),
    ("docs/SLURM.md", "$ convgpu slurm gres-conf            # --node NAME when the Slurm name is not hostname -s"):
        ("run", ""),
    ("docs/SLURM.md", "the test (PID 1 of new pid+net+mount+uts namespaces, hostname ctl)"):
        ("illustration", "the test cluster's layout"),
    ("docs/TESTING.md", "==== make check: every stage"):
        ("illustration", "an excerpt of make check's output"),
}


def blocks(path):
    """Yields (line, lang, marker, lines) for every fenced block of a Markdown file."""
    with open(path, encoding="utf-8") as f:
        text = f.read().split("\n")
    i = 0
    while i < len(text):
        m = FENCE.match(text[i])
        if not m:
            i += 1
            continue
        indent, lang, start = m.group(1), m.group(2).lower(), i
        j = start - 1
        while j >= 0 and not text[j].strip():
            j -= 1
        marker = MARKER.match(text[j].strip()) if j >= 0 else None
        body = []
        i += 1
        while i < len(text) and not re.match(r"^\s*```\s*$", text[i]):
            line = text[i]
            body.append(line[len(indent):] if line.startswith(indent) else line.lstrip())
            i += 1
        i += 1
        yield start + 1, lang, marker, body


def commands(body):
    """The lines a reader types: the prompted ones of a transcript, else every line."""
    if any(l.startswith("$ ") for l in body):
        return [l[2:] for l in body if l.startswith("$ ")]
    return body


def first_line(body):
    return next((l.strip() for l in body if l.strip()), "")


def script(body, rundir, work):
    out = ["set -e -o pipefail"]
    for line in commands(body):
        stripped = line.strip()
        if re.match(r"make(\s|$)", stripped):
            out.append(f"echo {shlex.quote('doc-test: not run (a make target): ' + stripped)}")
            continue
        line = line.replace("/tmp/cg", f"{work}/cg").replace("/run/convgpu", rundir)
        out.append(line)
        words = line.split("#")[0].split()
        if words and words[-1] == "&" and os.path.basename(words[0]) == "convgpud":
            d = words[words.index("--runtime-dir") + 1] if "--runtime-dir" in words else rundir
            out.append(f"__doc_wait_daemon {shlex.quote(d)}")
    return "\n".join(out) + "\n"


PRELUDE = r"""
__doc_wait_daemon() { # the daemon a line just started answers on its control socket
    local deadline=$(( $(date +%s) + 60 ))
    until curl -sf -o /dev/null --unix-socket "$1/control.sock" http://convgpu/v1/version; do
        [ "$(date +%s)" -lt "$deadline" ] || { echo "doc-test: no daemon answered on $1"; return 1; }
        sleep 0.02
    done
}
"""


def run_block(name, body, rundir, scratch, n):
    work = os.path.join(scratch, f"b{n}")
    os.makedirs(work)
    for link, target in (("build", BUILD), ("bench", f"{SRC}/bench"), ("tests", f"{SRC}/tests"),
                         ("packaging", f"{SRC}/packaging"), ("docs", f"{SRC}/docs")):
        os.symlink(target, os.path.join(work, link))
    path = os.path.join(work, "block.sh")
    with open(path, "w") as f:
        f.write(PRELUDE + script(body, rundir, work))
    env = dict(os.environ, PATH=f"{BUILD}/bin:{os.environ.get('PATH', '/usr/bin:/bin')}",
               CONVGPU_RUNTIME_DIR=rundir, CONVGPU_EMU_STATE=f"{work}/emu-state")
    env.pop("CONVGPU_SOCKET", None)
    env.pop("LD_PRELOAD", None)
    # Output to a file, not a pipe: a daemon the block leaves in the background keeps a pipe
    # open, and the block is over when bash exits, not when every writer has gone.
    log = os.path.join(work, "output")
    with open(log, "w") as f:
        p = subprocess.Popen(["bash", path], cwd=work, env=env, stdout=f,
                             stderr=subprocess.STDOUT, start_new_session=True)
    try:
        rc = p.wait(timeout=HANG_S)
    except subprocess.TimeoutExpired:
        rc = f"timeout after {HANG_S} s"
    finally:
        try:  # what the block left running (a daemon it started) goes with it
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        p.wait()
    return rc, open(log).read(), open(path).read()


def check_options(name, prog, body):
    """A synopsis block's options against the program's --help."""
    opt = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")
    out = subprocess.run([os.path.join(BUILD, "bin", prog), "--help"], capture_output=True,
                         text=True, timeout=60)
    in_help = set(opt.findall(out.stdout + out.stderr)) - {"--help", "--unix-socket"}
    in_doc = set(opt.findall("\n".join(body))) - {"--help"}
    return ([f"{name}: --help of {prog} has {o}, the synopsis does not"
             for o in sorted(in_help - in_doc)] +
            [f"{name}: the synopsis has {o}, --help of {prog} does not"
             for o in sorted(in_doc - in_help)])


def settings_table():
    """docs/OPERATIONS.md's settings table against convgpud --help: one row per option that
    the configuration file takes, which are all but those its sentence "Every option except
    ... can also be set in the configuration file" names."""
    rows = set()
    with open(os.path.join(SRC, "docs", "OPERATIONS.md"), encoding="utf-8") as f:
        text = f.read()
    m = re.search(r"Every option except (.*?) can\s+also be set", text, re.S)
    not_settings = set(re.findall(r"`(--[a-z][a-z0-9-]*)`", m.group(1))) if m else set()
    with open(os.path.join(SRC, "docs", "OPERATIONS.md"), encoding="utf-8") as f:
        inside = False
        for line in f:
            if line.startswith("| setting | default |"):
                inside = True
            elif inside and not line.startswith("|"):
                break
            elif inside:
                m = re.match(r"\| `([a-z][a-z0-9-]*)` \|", line)
                if m:
                    rows.add("--" + m.group(1))
    out = subprocess.run([os.path.join(BUILD, "bin", "convgpud"), "--help"], capture_output=True,
                         text=True, timeout=60)
    opts = set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", out.stdout)) - not_settings - {
        "--help", "--unix-socket"}
    return ([f"docs/OPERATIONS.md settings table: no row for {o} (convgpud --help has it)"
             for o in sorted(opts - rows)] +
            [f"docs/OPERATIONS.md settings table: row {o[2:]} is no option of convgpud"
             for o in sorted(rows - opts)])


def main():
    files = [os.path.join(SRC, "README.md")] + sorted(glob.glob(os.path.join(SRC, "docs", "*.md")))
    only = sys.argv[1:]  # names of files to run, for a person fixing one
    scratch = tempfile.mkdtemp(prefix="convgpu-docs.")
    rundir = os.path.join(scratch, "run")
    problems, ran, skipped = [], 0, 0
    os.makedirs(rundir)
    daemon_log = open(os.path.join(scratch, "daemon.log"), "w")
    daemon = subprocess.Popen([os.path.join(BUILD, "bin", "convgpud"), "--runtime-dir", rundir,
                               "--emulate", "5GiB", "--foreground"], stdout=daemon_log,
                              stderr=subprocess.STDOUT, start_new_session=True,
                              env=dict(os.environ, CONVGPU_EMU_STATE=f"{rundir}/emu/state"))
    try:
        deadline = time.monotonic() + 60
        while subprocess.run(["curl", "-sf", "-o", "/dev/null", "--unix-socket",
                              f"{rundir}/control.sock", "http://convgpu/v1/version"]).returncode:
            if time.monotonic() > deadline or daemon.poll() is not None:
                print(open(daemon_log.name).read())
                print("FAIL: the private daemon did not answer")
                return 1
            time.sleep(0.02)
        # A new state.db is created, not "upgraded" (issue 43).
        if "upgraded" in open(daemon_log.name).read():
            problems.append("a new state.db logs schema upgrades: "
                            + open(daemon_log.name).read())
        for path in files:
            rel = os.path.relpath(path, SRC)
            if only and rel not in only and os.path.basename(rel) not in only:
                continue
            for n, (line, lang, marker, body) in enumerate(blocks(path)):
                name = f"{rel}:{line}"
                if marker:
                    kind, arg = marker.group(1), marker.group(2)
                else:
                    kind, arg = EXTERNAL.get((rel, first_line(body)), (None, ""))
                if kind is None and lang in DATA:
                    continue
                if kind is None:
                    problems.append(f"{name}: a block without a doc-test marker (run, skip "
                                    f"(REASON), illustration, options PROG): {first_line(body)}")
                    continue
                if kind == "skip":
                    if not arg.strip("() "):
                        problems.append(f"{name}: skip without a reason")
                    print(f"skip: {name} {arg}")
                    skipped += 1
                elif kind == "illustration":
                    continue
                elif kind == "options":
                    problems += check_options(name, arg.strip(), body)
                else:
                    t0 = time.monotonic()
                    rc, out, text = run_block(name, body, rundir, scratch, f"{len(problems)}-{ran}-{line}")
                    ran += 1
                    if rc != 0:
                        problems.append(f"{name}: exit {rc}\n--- as run:\n{text}--- output:\n{out}")
                    else:
                        print(f"ok: {name} ({time.monotonic() - t0:.1f} s)")
        if not only:
            problems += settings_table()
    finally:
        daemon.terminate()
        try:
            daemon.wait(timeout=60)
        except subprocess.TimeoutExpired:
            daemon.kill()
        if problems:
            print("--- private daemon's log (last lines) ---")
            print("".join(open(daemon_log.name).readlines()[-30:]))
        subprocess.run(["rm", "-rf", scratch])
    for p in problems:
        print("FAIL:", p)
    print(f"docs.blocks: {ran} blocks run, {skipped} skipped, {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

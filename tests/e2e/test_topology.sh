#!/usr/bin/env bash
# test_topology.sh — topology end to end (issue 22 item 2): a daemon on eight emulated GPUs wired
# like a DGX (tests/emu/topo/dgx8.topo) reads the wiring back through the emulated NVML, shows
# it on `convgpu topo` (the matrix equals the file, read here by an independent reading of the
# format), and hands it to its containers, whose NVML (probed through dlopen, as tools do)
# answers the common-ancestor and NVLink calls as the file says. Bad input — a file that does
# not parse (flag or configuration key), one naming a GPU the node lacks, --topology without
# --emulate — stops the daemon with exit 2, a message naming file and line, nothing left running.
. "$(dirname "$0")/lib.sh"
SRC=${CONVGPU_SOURCE_DIR:?}
DGX=$SRC/tests/emu/topo/dgx8.topo
PROBE=$BUILD/bin/nvml_topo_probe

# What the file says, pair by pair: "a b level nvlinks" for a < b (the format of
# tests/emu/nvml_topo_probe.c matrix), read by a parser written for this test alone.
expected() {
    python3 - "$1" "$2" <<'PY'
import sys
path, n = sys.argv[1], int(sys.argv[2])
rank = {"switch": "single", "multiswitch": "multiple", "hostbridge": "hostbridge", "socket": "node"}
order = ["single", "multiple", "hostbridge", "node", "system"]
level = {(a, b): "system" for a in range(n) for b in range(n)}
links = {}
for line in open(path):
    w = line.split("#")[0].split()
    if not w:
        continue
    if w[0] == "nvlink":
        a, b = int(w[1]), int(w[2])
        links[(a, b)] = links[(b, a)] = int(w[3]) if len(w) > 3 else 1
    else:
        g = [int(x) for x in w[1:]]
        for a in g:
            for b in g:
                if order.index(rank[w[0]]) < order.index(level[(a, b)]):
                    level[(a, b)] = rank[w[0]]
for a in range(n):
    for b in range(a + 1, n):
        print(a, b, level[(a, b)], links.get((a, b), 0))
PY
}

# The same pairs from `convgpu topo --json`, with NVLinked pairs shown as their PCIe path is
# not (the daemon's level is nvlink there): "a b LEVEL nvlinks", LEVEL nvlink or the path.
from_cli() {
    python3 -c '
import json, sys
j = json.load(sys.stdin); t, l = j["topology"], j["nvlinks"]
n = len(t)
for a in range(n):
    for b in range(a + 1, n):
        print(a, b, t[str(a)][str(b)], l[str(a)].get(str(b), 0))'
}

# --- bad input: exit 2, the file and line named, nothing started --------------------------
no_daemon_left() { ! pgrep -f -- "--runtime-dir $RUNDIR" >/dev/null; }
refused() { # refused WHAT PATTERN convgpud-args...
    local what=$1 pattern=$2; shift 2
    local rc=0
    "$BUILD/bin/convgpud" --runtime-dir "$RUNDIR" --foreground "$@" >"$TMP/bad.out" 2>&1 || rc=$?
    if [ "$rc" = 2 ] && grep -q -- "$pattern" "$TMP/bad.out" && no_daemon_left &&
        [ ! -S "$RUNDIR/control.sock" ]; then
        pass "$what"
    else
        fail "$what: exit $rc, $(cat "$TMP/bad.out")"
    fi
}
mkdir -p "$RUNDIR"
printf 'nvlink 0 1\nswitch 0 1 2 3\nswitch 4 5 x\n' >"$TMP/bad.topo"
refused "a file that does not parse: exit 2 naming file and line" \
    "$TMP/bad.topo:3: 'x' is not a GPU index" --emulate 8x1GiB --topology "$TMP/bad.topo"
printf 'switch 0 8\n' >"$TMP/nine.topo"
refused "a file naming a GPU the node lacks: exit 2" "names GPU 8, but --emulate 8x1GiB gives 8" \
    --emulate 8x1GiB --topology "$TMP/nine.topo"
refused "--topology without --emulate: exit 2" "needs --emulate" --topology "$DGX"
refused "a missing file: exit 2" "$TMP/none.topo: No such file" --emulate 8x1GiB \
    --topology "$TMP/none.topo"
printf 'emulate = 8x1GiB\ntopology = %s\n' "$TMP/bad.topo" >"$TMP/convgpud.conf"
refused "the configuration key with a bad file: exit 2 naming file and line" \
    "bad.topo:3:" --config "$TMP/convgpud.conf"

# --- a DGX-like node ----------------------------------------------------------------------
start_daemon --emulate 8x1GiB --topology "$DGX" --context-charge 66MiB
expected "$DGX" 8 >"$TMP/want"
check "the file says 4 NVLinked pairs and 16 across the sockets" \
    test "$(grep -c ' 2$' "$TMP/want")/$(grep -c ' system ' "$TMP/want")" = 4/16

cg topo --json >"$TMP/cli.json"
from_cli <"$TMP/cli.json" >"$TMP/cli"
# The daemon reports NVLink for NVLinked pairs, the file's PCIe path for the others.
awk '{ print $1, $2, ($4 > 0 ? "nvlink" : $3), $4 }' "$TMP/want" >"$TMP/want.cli"
check "convgpu topo --json equals the file" diff "$TMP/want.cli" "$TMP/cli"
cg topo >"$TMP/cli.txt"
check "convgpu topo: GPU0-GPU1 NV2, GPU0-GPU2 PIX, GPU0-GPU4 SYS" \
    grep -Eq '^GPU0 +X +NV2 +PIX +PIX +SYS +SYS +SYS +SYS$' "$TMP/cli.txt"
check "convgpu topo: the legend" grep -q 'NV#  = Connection traversing a bonded set' "$TMP/cli.txt"
# What the daemon read back from NVML, as convgpu topo --json (the daemon's GET /v1/topology)
# gives it: 8 GPUs, 4 NVLinked pairs.
read_back="$(awk '{ print $1; print $2 }' "$TMP/cli" | sort -u | wc -l) GPUs, $(awk '$4 > 0' "$TMP/cli" | wc -l) NVLinked pairs"
check "the daemon read 8 GPUs, 4 NVLinked pairs from NVML ($read_back)" \
    test "$read_back" = "8 GPUs, 4 NVLinked pairs"

# The containers' environment carries the file; NVML there answers as the file says.
api GET /v1/version >"$TMP/version"
check "node_env exports CONVGPU_EMU_TOPOLOGY" grep -q "\"CONVGPU_EMU_TOPOLOGY\": *\"$DGX\"" \
    "$TMP/version"
LD_LIBRARY_PATH=$BUILD/lib/emu CONVGPU_EMU_DEVICES=8x1GiB CONVGPU_EMU_TOPOLOGY=$DGX \
    "$PROBE" matrix >"$TMP/probe" 2>&1
check "NVML's common ancestor and NVLinks through dlopen equal the file" \
    diff "$TMP/want" "$TMP/probe"
rc=0
LD_LIBRARY_PATH=$BUILD/lib/emu CONVGPU_EMU_DEVICES=8x1GiB CONVGPU_EMU_TOPOLOGY=$TMP/bad.topo \
    "$PROBE" matrix >"$TMP/probe.bad" 2>&1 || rc=$?
check "NVML with a bad file: nvmlInit fails naming file and line" \
    eval '[ "$rc" = 1 ] && grep -q "bad.topo:3:" "$TMP/probe.bad"'

# --- containers on several GPUs go where the GPUs talk fastest -------------------------------
# First-fit alone would take GPUs 1 and 2 once GPU 0 is taken; the topology says 2 and 3.
devs() { api POST /v1/containers "$1" | cut -d' ' -f2- | json_get devices; }
check "a single container takes GPU 0" \
    test "$(devs '{"name":"one","device":0,"gpu_memory":"768MiB"}')" = "[0]"
check "2 GPUs with GPU 0 taken: an NVLinked pair (2,3), not the first fitting (1,2)" \
    test "$(devs '{"name":"p2","gpus":2,"gpu_memory":"768MiB"}')" = "[2, 3]"
check "4 GPUs: one socket's four, NVLinked in pairs (4-7), not 1,4,5,6" \
    test "$(devs '{"name":"q","gpus":4,"gpu_memory":"768MiB"}')" = "[4, 5, 6, 7]"
cg rm one >/dev/null
check "GPU 0 free again: 2 GPUs go to the NVLinked 0,1" \
    test "$(devs '{"name":"p3","gpus":2,"gpu_memory":"768MiB"}')" = "[0, 1]"

echo "$PASSES passed, $FAILS failed"
[ "$FAILS" -eq 0 ]
